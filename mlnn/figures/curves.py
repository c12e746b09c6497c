"""Learning curves stored as CSV: one row per evaluation, the setting's fields repeated.

A curve is a dict: the fields of a :class:`Setting`, ``experiment``, ``dataset`` and the lists
of :data:`CURVE_COLUMNS` (one entry per evaluation).
"""

import csv
from dataclasses import dataclass, fields
from pathlib import Path

from mlnn.base.errors import MLNNError
from mlnn.base.fileio import atomic_write
from mlnn.model.params import DEFAULT

#: How each update rule is named in a legend or a title, the same in every figure.
UPDATE_RULES = {"adagrad": "AdaGrad", "momentum": "momentum", "sgd": "SGD"}


@dataclass(frozen=True)
class Setting:
    """One network of a convergence experiment: a ``label`` and the hyper-parameters varied."""

    label: str
    loss: str = DEFAULT.loss
    hidden_activation: str = DEFAULT.hidden_activation
    optimizer: str = DEFAULT.optimizer
    learning_rate: float = DEFAULT.learning_rate
    momentum: float = DEFAULT.momentum
    dropout: float = DEFAULT.dropout
    hidden_units: int = DEFAULT.hidden_units


#: The columns of the CSV (:func:`save_csv`): a curve's key (its setting), then one evaluation.
SETTING_COLUMNS = tuple(f.name for f in fields(Setting))
KEY_COLUMNS = ("experiment", "dataset") + SETTING_COLUMNS
CURVE_COLUMNS = ("updates", "epoch", "rankloss", "MAP", "train_loss", "elapsed")
CSV_COLUMNS = KEY_COLUMNS + CURVE_COLUMNS

_TYPES = {"experiment": str, "dataset": str, **{f.name: f.type for f in fields(Setting)}}


def save_csv(curves, path):
    """Write curves with the columns :data:`CSV_COLUMNS`, one row per evaluation."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, "w") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        for curve in curves:
            head = [curve[name] for name in KEY_COLUMNS]
            for row in zip(*(curve[name] for name in CURVE_COLUMNS)):
                writer.writerow(head + [repr(float(v)) for v in row])
    return path


def _convert(name, text):
    """A key column's value from its CSV text (an int may be written as "256.0")."""
    return int(float(text)) if _TYPES[name] is int else _TYPES[name](text)


def load_csv(path):
    """Read curves written by :func:`save_csv` (one dict per setting, in file order)."""
    path = Path(path)
    if not path.exists():
        raise MLNNError(f"no curves file {path}")
    curves = {}                 # by the row's experiment, dataset and setting
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = sorted(set(CSV_COLUMNS) - set(reader.fieldnames or ()))
        if missing:
            raise MLNNError(f"{path} lacks the column(s) {missing}")
        for row in reader:
            key = tuple(row[name] for name in KEY_COLUMNS)
            try:
                if key not in curves:
                    curves[key] = {**{name: _convert(name, row[name]) for name in KEY_COLUMNS},
                                   **{name: [] for name in CURVE_COLUMNS}}
                for name in CURVE_COLUMNS:
                    curves[key][name].append(float(row[name]))
            except (ValueError, TypeError) as error:     # TypeError: a short row's None
                raise MLNNError(f"{path}, line {reader.line_num}: {error}") from None
    return list(curves.values())
