"""Stored runs of the reproduction: where each (dataset, seed) lives and how it is read back.

Seed 0 is stored as ``run_<dataset>.json``, ``table3_<dataset>.csv`` and ``.md``; seed k > 0 as
``run_<dataset>_seed<k>.json`` and so on. The JSON run file is the only source of truth; the
tables are regenerated from it (:func:`tables_current`). A damaged run file is never ignored.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mlnn.base.errors import MLNNError, describe_os_error
from mlnn.base.fileio import read_json
from mlnn.evaluation.metrics import MEASURES

#: The stopping rule of the run files written before the rule was recorded in them.
OLD_RUNS_STOPPING = "rankloss"


def stem(dataset, seed):
    """The name shared by a run's files: ``<dataset>`` for seed 0, else ``<dataset>_seed<k>``."""
    return dataset if seed == 0 else f"{dataset}_seed{seed}"


def run_path(out_dir, dataset, seed):
    """The run file of ``dataset`` and ``seed`` in ``out_dir``."""
    return Path(out_dir) / f"run_{stem(dataset, seed)}.json"


def read_run(path):
    """The run record stored at ``path``, or None; :class:`MLNNError` if it is damaged."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as error:
        raise MLNNError(f"cannot read {path}: {describe_os_error(error)}") from None
    except UnicodeDecodeError:
        _damaged(path, "not UTF-8 text")
    try:
        run = read_json(text)
    except ValueError as error:
        _damaged(path, f"not valid JSON: {error}")
    _check_run(path, run)
    return run


def _damaged(path, reason):
    raise MLNNError(f"{path} is damaged ({reason}); it may hold earlier results, so it is left "
                    "as it is: move it aside or delete it, then run again")


def _check_run(path, run):
    if not isinstance(run, dict):
        _damaged(path, "not a JSON object")
    for key in ("dataset", "seed", "methods"):
        if key not in run:
            _damaged(path, f"no {key!r} entry")
    if not isinstance(run["methods"], dict):
        _damaged(path, "'methods' is not an object")
    seed = run["seed"]
    if not isinstance(run["dataset"], str) or isinstance(seed, bool) or \
            not isinstance(seed, int) or seed < 0:
        _damaged(path, f"its dataset {run['dataset']!r} and seed {seed!r} are not a name and an "
                       "integer >= 0")
    if run_path(path.parent, run["dataset"], seed).name != path.name:
        _damaged(path, f"it records dataset {run['dataset']!r} with seed {seed}, which are "
                       f"stored as {run_path(path.parent, run['dataset'], seed).name}")
    for method, record in run["methods"].items():
        test = record.get("test") if isinstance(record, dict) else None
        if not isinstance(test, dict) or any(m not in test for m in MEASURES):
            _damaged(path, f"method {method} has no test measures")
        for measure in MEASURES:
            value = test[measure]
            if value is None:                   # an undefined measure written as null
                test[measure] = float("nan")
            elif isinstance(value, bool) or not isinstance(value, (int, float)):
                _damaged(path, f"the test {measure} of method {method} is {value!r}, not a number")


def table_paths(out_dir, dataset, seed):
    """The CSV and Markdown tables made from the run file of ``dataset`` and ``seed``."""
    name = stem(dataset, seed)
    return Path(out_dir) / f"table3_{name}.csv", Path(out_dir) / f"table3_{name}.md"


def tables_current(run, out_dir):
    """Whether both tables of ``run`` exist, are not older than its run file, name its methods."""
    run_file = run_path(out_dir, run["dataset"], run["seed"])
    csv_path, md_path = table_paths(out_dir, run["dataset"], run["seed"])
    try:
        newest = run_file.stat().st_mtime_ns
        if min(csv_path.stat().st_mtime_ns, md_path.stat().st_mtime_ns) < newest:
            return False
        csv_text = csv_path.read_text(encoding="utf-8")
        md_text = md_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    csv_methods = {line.split(",")[1] for line in csv_text.splitlines()[1:] if "," in line}
    return csv_methods == set(run["methods"]) and \
        all(f"| {method} |" in md_text for method in run["methods"])


def load_runs(directory):
    """Every run file ``run_*.json`` of ``directory`` (:func:`read_run`), by (dataset, seed)."""
    runs = [read_run(path) for path in sorted(Path(directory).glob("run_*.json"))]
    return sorted((run for run in runs if run is not None),
                  key=lambda run: (run["dataset"], run["seed"]))


def rank_loss_runs(figures):
    """The runs stopped on validation rank loss: those of ``figures/stopping/``, else the main
    run files of ``figures``, by (dataset, seed)."""
    moved = load_runs(Path(figures) / "stopping")
    kept = {(run["dataset"], run["seed"]) for run in moved}
    runs = moved + [run for run in load_runs(figures) if (run["dataset"], run["seed"]) not in kept]
    return sorted(runs, key=lambda run: (run["dataset"], run["seed"]))


def _mean_std(by_seed):
    """Mean and standard deviation (ddof 1; NaN for one seed) over the seeds."""
    stacked = np.stack([by_seed[seed] for seed in sorted(by_seed)])
    if len(stacked) == 1:
        return stacked[0], np.full(stacked.shape[1:], np.nan)
    return stacked.mean(axis=0), stacked.std(axis=0, ddof=1)


@dataclass(frozen=True)
class Summary:
    """Means and stds over seeds (N datasets × k methods × m measures; std NaN for one seed)."""

    datasets: tuple
    methods: tuple
    measures: tuple
    means: np.ndarray
    stds: np.ndarray
    seeds: tuple


def summarise(runs, methods, measures=MEASURES, datasets=None):
    """A :class:`Summary` of the ``runs`` that hold all ``methods``; ``datasets`` restricts and
    orders the datasets (default: all, sorted)."""
    scores = {}                 # {dataset: {seed: array (methods × measures)}}
    for run in runs:
        if all(method in run["methods"] for method in methods):
            scores.setdefault(run["dataset"], {})[run["seed"]] = np.array(
                [[float(run["methods"][method]["test"][m]) for m in measures]
                 for method in methods])
    datasets = tuple(sorted(scores) if datasets is None else (d for d in datasets if d in scores))
    if not datasets:
        raise MLNNError(f"no stored run holds all of the methods {list(methods)}")
    means, stds = zip(*(_mean_std(scores[d]) for d in datasets))
    return Summary(datasets=datasets, methods=tuple(methods), measures=tuple(measures),
                   means=np.stack(means), stds=np.stack(stds),
                   seeds=tuple(tuple(sorted(scores[d])) for d in datasets))
