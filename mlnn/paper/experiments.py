"""The convergence experiments behind the paper's Figs. 3 and 4, as plain functions.

Each experiment trains a handful of networks that differ in one or two settings (a
:class:`Setting`) on the same data, evaluates them on a *validation split carved from the training
data* (never the test split) every ``eval_every`` parameter updates, and returns the learning
curves as plain data: a list of dicts, one per setting, with the setting's fields and the arrays
``updates``, ``rankloss``, ``MAP``, ``train_loss`` and ``elapsed``. :func:`save_csv` and
:func:`load_csv` store curves in a long CSV table (one row per evaluation).

=================================  ==========================  ================================
function                           paper                       here
=================================  ==========================  ================================
:func:`convergence_experiment`     Fig. 3 left, Reuters-21578  AdaGrad vs momentum × ReLU /
                                                               tanh / sigmoid hidden units, CE
:func:`dropout_experiment`         Fig. 3 right, EUR-Lex       Delicious (EUR-Lex is not
                                                               available): dropout 0.5 vs none
                                                               × two hidden-layer sizes
:func:`learning_rate_experiment`   Fig. 4, German Education    Reuters-21578 (the German
                                   Index                       Education Index is not
                                                               available): PWE vs CE ×
                                                               η ∈ {0.01, 0.1} × dropout
=================================  ==========================  ================================

Every experiment is seeded (the validation split, the initial weights — the same for all settings
of one experiment — and the minibatch order and dropout masks). ``fast=True`` shrinks everything
(a subsample of the training documents, few hidden units, a few dozen updates) so that the whole
pipeline can be exercised in seconds; its curves show nothing about the paper's claims.

Full-mode sizes (:data:`FULL`) are smaller than the paper's, which trains 1,000 hidden units for
many more updates. Wall times of the committed runs, on two cores shared with other jobs (load
average 4-8): convergence 18 min, dropout 36 min (the 1,024-unit networks dominate), learning
rates 8 min, and the dropout experiment with ``learning_rate=0.1, max_updates=1600`` 13 min.
On an idle machine expect roughly half of that.
"""

import csv
import time
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import numpy as np

from mlnn.errors import MLNNError
from mlnn.losses import get_loss
from mlnn.network import Network
from mlnn.optimizers import get_optimizer
from mlnn.training import train
from mlnn.validation import check_X, check_Y


@dataclass(frozen=True)
class Setting:
    """One network configuration of a convergence experiment.

    ``loss`` "ce" (sigmoid outputs) or "pwe" (tanh outputs); ``hidden`` the hidden activation;
    ``optimizer`` "adagrad", "momentum" or "sgd" with ``learning_rate`` η (and ``momentum`` μ for
    momentum); ``dropout`` the rate on the hidden units; ``hidden_units`` F.
    """

    label: str
    loss: str = "ce"
    hidden: str = "relu"
    optimizer: str = "adagrad"
    learning_rate: float = 0.01
    momentum: float = 0.9
    dropout: float = 0.0
    hidden_units: int = 256

    def make_optimizer(self):
        if self.optimizer == "momentum":
            return get_optimizer("momentum", self.learning_rate, momentum=self.momentum)
        return get_optimizer(self.optimizer, self.learning_rate)


#: Run lengths per experiment and mode: training documents kept (None = all), hidden units,
#: updates, updates between evaluations, validation documents kept (None = all).
FULL = {
    "convergence": dict(max_train=None, hidden_units=256, max_updates=1500, eval_every=50,
                        max_val=None),
    "dropout": dict(max_train=None, hidden_units=(256, 1024), max_updates=2400, eval_every=100,
                    max_val=None),
    "learning_rate": dict(max_train=None, hidden_units=256, max_updates=1000, eval_every=10,
                          max_val=None),
}
FAST = {
    "convergence": dict(max_train=1200, hidden_units=16, max_updates=30, eval_every=10,
                        max_val=300),
    "dropout": dict(max_train=1200, hidden_units=(8, 32), max_updates=30, eval_every=10,
                    max_val=300),
    "learning_rate": dict(max_train=1200, hidden_units=16, max_updates=30, eval_every=5,
                          max_val=300),
}

#: The columns of the CSV written by :func:`save_csv`: the setting, then one evaluation.
SETTING_COLUMNS = tuple(f.name for f in fields(Setting))
CURVE_COLUMNS = ("updates", "epoch", "rankloss", "MAP", "train_loss", "elapsed")
CSV_COLUMNS = ("experiment", "dataset") + SETTING_COLUMNS + CURVE_COLUMNS


# ---------------------------------------------------------------------------------------------
# data

def validation_split(X, Y, fraction=0.2, random_state=0):
    """Split training data into (X_fit, Y_fit, X_val, Y_val) by a seeded random permutation.

    The last ``round(fraction · n)`` documents of the permutation form the validation set. Rows
    keep their original order within each part. X is CSR (n × D), Y 0/1 (n × L, CSR or dense).
    """
    X = check_X(X, "X")
    Y = check_Y(Y, "Y", n_samples=X.shape[0])
    if not 0 < fraction < 1:
        raise MLNNError(f"fraction must be in (0, 1), got {fraction!r}")
    n = X.shape[0]
    n_val = int(round(fraction * n))
    if n_val < 1 or n_val >= n:
        raise MLNNError(f"a validation fraction of {fraction} leaves no documents on one side "
                        f"of the split of {n} documents")
    order = np.random.default_rng(random_state).permutation(n)
    fit, val = np.sort(order[:n - n_val]), np.sort(order[n - n_val:])
    return X[fit], Y[fit], X[val], Y[val]


def prepare_data(dataset, val_fraction=0.2, max_train=None, max_val=None, random_state=0):
    """Training and validation matrices for an experiment.

    ``dataset`` is a registered name (loaded with :func:`mlnn.datasets.load`) or an object with
    ``X_train`` and ``Y_train``. Only the training split is used: the validation documents are
    carved from it by :func:`validation_split`. ``max_train`` / ``max_val`` keep a seeded subset
    (fast mode). Returns a dict with ``name``, ``X_train``, ``Y_train``, ``X_val``, ``Y_val``.
    """
    if isinstance(dataset, str):
        from mlnn import datasets
        name, data = dataset, datasets.load(dataset)
    else:
        name, data = getattr(dataset, "name", "data"), dataset
    X_fit, Y_fit, X_val, Y_val = validation_split(data.X_train, data.Y_train, val_fraction,
                                                  random_state)
    rng = np.random.default_rng(random_state + 1)
    if max_train is not None and max_train < X_fit.shape[0]:
        keep = np.sort(rng.choice(X_fit.shape[0], max_train, replace=False))
        X_fit, Y_fit = X_fit[keep], Y_fit[keep]
    if max_val is not None and max_val < X_val.shape[0]:
        keep = np.sort(rng.choice(X_val.shape[0], max_val, replace=False))
        X_val, Y_val = X_val[keep], Y_val[keep]
    return {"name": name, "X_train": X_fit, "Y_train": Y_fit, "X_val": X_val, "Y_val": Y_val}


# ---------------------------------------------------------------------------------------------
# running

def run_setting(setting, data, max_updates, eval_every, batch_size=64, random_state=0,
                verbose=False):
    """Train one network for ``max_updates`` updates; return its curve as a plain dict.

    The initial weights depend only on ``random_state`` and the shapes, so settings with the same
    ``hidden_units`` start from the same point. The dict holds the setting's fields, ``dataset``,
    and lists ``updates``, ``epoch``, ``rankloss``, ``MAP``, ``train_loss``, ``elapsed``.
    """
    loss = get_loss(setting.loss)
    X, Y = data["X_train"], data["Y_train"]
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=setting.hidden_units,
                                 hidden=setting.hidden, output=loss.output.name,
                                 random_state=random_state)
    batches_per_epoch = -(-X.shape[0] // batch_size)
    max_epochs = -(-max_updates // batches_per_epoch)
    start = time.perf_counter()
    history = train(network, loss, setting.make_optimizer(), X, Y, batch_size=batch_size,
                    max_epochs=max_epochs, max_updates=max_updates, dropout=setting.dropout,
                    X_val=data["X_val"], Y_val=data["Y_val"], eval_every=eval_every,
                    random_state=random_state)
    if verbose:
        print(f"{setting.label:>32s}: {history.records[-1]['updates']} updates, "
              f"rank loss {history.records[-1]['rankloss']:.4f}, "
              f"MAP {history.records[-1]['MAP']:.4f}, {time.perf_counter() - start:.0f} s",
              flush=True)
    curve = asdict(setting)
    curve["dataset"] = data["name"]
    for key in CURVE_COLUMNS:
        curve[key] = history.column(key).tolist()
    return curve


def run_settings(settings, data, max_updates, eval_every, batch_size=64, random_state=0,
                 experiment="custom", csv_path=None, verbose=False):
    """:func:`run_setting` for each setting on the same data; optionally save to ``csv_path``."""
    curves = []
    for setting in settings:
        curve = run_setting(setting, data, max_updates, eval_every, batch_size, random_state,
                            verbose)
        curve["experiment"] = experiment
        curves.append(curve)
    if csv_path is not None:
        save_csv(curves, csv_path)
    return curves


def _sizes(experiment, fast, overrides):
    sizes = dict((FAST if fast else FULL)[experiment])
    unknown = sorted(set(overrides) - set(sizes))
    if unknown:
        raise MLNNError(f"unknown size option(s) {unknown}; the {experiment} experiment takes "
                        f"{sorted(sizes)}")
    sizes.update({k: v for k, v in overrides.items() if v is not None})
    return sizes


def _run(experiment, settings, dataset, sizes, random_state, csv_path, verbose):
    data = prepare_data(dataset, max_train=sizes["max_train"], max_val=sizes["max_val"],
                        random_state=random_state)
    return run_settings(settings, data, sizes["max_updates"], sizes["eval_every"],
                        random_state=random_state, experiment=experiment, csv_path=csv_path,
                        verbose=verbose)


def convergence_experiment(dataset="reuters21578", fast=False, random_state=0, csv_path=None,
                           verbose=False, **sizes):
    """Fig. 3 (left): CE loss; AdaGrad (η0 = 0.01) vs momentum (η = 0.01, μ = 0.9), each with
    ReLU, tanh and sigmoid hidden units; validation rank loss and MAP against updates.

    ``sizes`` override :data:`FULL` / :data:`FAST` ``["convergence"]`` (e.g. ``max_updates``).
    """
    sizes = _sizes("convergence", fast, sizes)
    settings = [Setting(f"{opt_name}, {hidden}", loss="ce", hidden=hidden, optimizer=opt,
                        learning_rate=0.01, hidden_units=sizes["hidden_units"])
                for opt, opt_name in (("adagrad", "AdaGrad"), ("momentum", "momentum"))
                for hidden in ("relu", "tanh", "sigmoid")]
    return _run("convergence", settings, dataset, sizes, random_state, csv_path, verbose)


def dropout_experiment(dataset="delicious", fast=False, random_state=0, csv_path=None,
                       verbose=False, learning_rate=0.01, **sizes):
    """Fig. 3 (right): CE, ReLU, AdaGrad (η0 = ``learning_rate``); dropout 0.5 on the hidden units
    vs none, for two hidden-layer sizes; validation rank loss against updates (the paper: EUR-Lex).
    """
    sizes = _sizes("dropout", fast, sizes)
    settings = [Setting(f"{F} hidden, {'dropout 0.5' if rate else 'no dropout'}", loss="ce",
                        hidden="relu", optimizer="adagrad", learning_rate=learning_rate,
                        dropout=rate, hidden_units=F)
                for F in sizes["hidden_units"] for rate in (0.0, 0.5)]
    return _run("dropout", settings, dataset, sizes, random_state, csv_path, verbose)


def learning_rate_experiment(dataset="reuters21578", fast=False, random_state=0, csv_path=None,
                             verbose=False, **sizes):
    """Fig. 4: PWE (tanh outputs) vs CE (sigmoid outputs) with ReLU hidden units and AdaGrad at
    η0 ∈ {0.01, 0.1}, with and without dropout 0.5; validation rank loss and MAP against updates
    (drawn on a log axis). The paper uses the German Education Index.
    """
    sizes = _sizes("learning_rate", fast, sizes)
    settings = [Setting(f"{loss.upper()}, η={eta}{', dropout' if rate else ''}", loss=loss,
                        hidden="relu", optimizer="adagrad", learning_rate=eta, dropout=rate,
                        hidden_units=sizes["hidden_units"])
                for loss in ("pwe", "ce") for eta in (0.01, 0.1) for rate in (0.0, 0.5)]
    return _run("learning_rate", settings, dataset, sizes, random_state, csv_path, verbose)


EXPERIMENTS = {
    "convergence": convergence_experiment,
    "dropout": dropout_experiment,
    "learning_rate": learning_rate_experiment,
}


def run_or_load(name, csv_path, fast=False, rerun=False, **kwargs):
    """Curves of experiment ``name``: read from ``csv_path`` if it exists (full mode, not
    ``rerun``), else run the experiment and save them there.

    This lets a notebook redraw a figure from the committed curves in seconds; pass
    ``rerun=True`` (or delete the file) to train the networks again. Fast runs never read the
    stored curves: they always run (and save to ``csv_path``, which should then be a scratch path).
    """
    if name not in EXPERIMENTS:
        raise MLNNError(f"unknown experiment {name!r}; choose one of {sorted(EXPERIMENTS)}")
    path = Path(csv_path)
    if not fast and not rerun and path.exists():
        return load_csv(path)
    return EXPERIMENTS[name](fast=fast, csv_path=path, **kwargs)


# ---------------------------------------------------------------------------------------------
# storage

def save_csv(curves, path):
    """Write curves as a long table with the columns :data:`CSV_COLUMNS`, one row per evaluation."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        for curve in curves:
            head = [curve.get("experiment", "custom"), curve.get("dataset", "")]
            head += [curve[name] for name in SETTING_COLUMNS]
            for row in zip(*(curve[name] for name in CURVE_COLUMNS)):
                writer.writerow(head + [repr(float(v)) for v in row])
    return path


_TYPES = {f.name: f.type for f in fields(Setting)}


def _convert(name, text):
    kind = {"str": str, "float": float, "int": int}.get(getattr(_TYPES[name], "__name__",
                                                                 str(_TYPES[name])), str)
    return kind(text) if kind is not int else int(float(text))


def load_csv(path):
    """Read curves written by :func:`save_csv` (one dict per setting, in file order)."""
    path = Path(path)
    if not path.exists():
        raise MLNNError(f"no curves file {path}")
    curves, index = [], {}
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = sorted(set(CSV_COLUMNS) - set(reader.fieldnames or ()))
        if missing:
            raise MLNNError(f"{path} lacks the column(s) {missing}")
        for line_number, row in enumerate(reader, start=2):
            key = tuple(row[name] for name in ("experiment", "dataset") + SETTING_COLUMNS)
            if key not in index:
                curve = {"experiment": row["experiment"], "dataset": row["dataset"]}
                try:
                    curve.update({name: _convert(name, row[name]) for name in SETTING_COLUMNS})
                except ValueError as error:
                    raise MLNNError(f"{path}, line {line_number}: {error}") from None
                curve.update({name: [] for name in CURVE_COLUMNS})
                index[key] = curve
                curves.append(curve)
            try:
                for name in CURVE_COLUMNS:
                    index[key][name].append(float(row[name]))
            except ValueError as error:
                raise MLNNError(f"{path}, line {line_number}: {error}") from None
    return curves


def setting_of(curve):
    """The :class:`Setting` a curve was made with."""
    return Setting(**{name: curve[name] for name in SETTING_COLUMNS})


def with_label(setting, label):
    """A copy of ``setting`` under another label."""
    return replace(setting, label=label)


# ---------------------------------------------------------------------------------------------
# command line

def register(subparsers):
    """``python -m mlnn experiment NAME [--fast] --out CSV``: run one convergence experiment."""
    parser = subparsers.add_parser(
        "experiment", help="run a convergence experiment behind Figs. 3-4 and save its curves",
        description="Train the networks of one convergence experiment (Figs. 3-4) and write the "
                    "validation curves as CSV.")
    parser.add_argument("name", choices=sorted(EXPERIMENTS))
    parser.add_argument("--dataset", default=None, help="dataset name (default: the figure's)")
    parser.add_argument("--fast", action="store_true", help="tiny run to check the pipeline")
    parser.add_argument("--max-updates", type=int, default=None)
    parser.add_argument("--learning-rate", type=float, default=None,
                        help="AdaGrad's η0 (dropout experiment only; default 0.01)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="CSV file to write")
    parser.set_defaults(func=_main)


def _main(args):
    kwargs = {"fast": args.fast, "random_state": args.seed, "csv_path": args.out,
              "verbose": True, "max_updates": args.max_updates}
    if args.dataset is not None:
        kwargs["dataset"] = args.dataset
    if args.learning_rate is not None:
        if args.name != "dropout":
            raise MLNNError("--learning-rate applies to the dropout experiment only; the others "
                            "compare fixed learning rates")
        kwargs["learning_rate"] = args.learning_rate
    EXPERIMENTS[args.name](**kwargs)
    print(f"wrote {args.out}")
    return 0
