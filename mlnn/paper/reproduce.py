"""Reproduce the paper's Table 3 on one dataset: every method, then the result files.

For every method of :mod:`mlnn.paper.methods`:

* A validation split is carved from the *training* documents once
  (:func:`mlnn.validation.validation_split`, seeded, ``validation_fraction``) and shared by all
  methods; the test split is used only for the final numbers.
* Networks: η0 and the number of epochs are chosen on the validation split, then the winner is
  refitted on all training documents (:func:`mlnn.paper.selection.fit_network_method`). η0 is
  selected by validation rank loss unless ``select_by="meanF"``; with ``sensitivity`` the η0
  that the other criterion picks is refitted and evaluated too, and recorded beside the method
  (``record["alternative"]``).
* BP-MLL as published (not in the paper's table; run only when asked): its fixed protocol on all
  training documents (:func:`mlnn.paper.selection.fit_published_method`).
* Binary relevance: C from the paper's grid by mean micro/macro F1 (BR_B) or rank loss (BR_R), see
  :func:`mlnn.paper.selection.fit_br`.

:func:`reproduce` returns the rows of the comparison (method, measure, ours, paper, difference)
and a record of the run (seed, chosen hyper-parameters, validation scores, wall times), and
:func:`write_results` stores them as CSV, Markdown and JSON.
"""

import csv
import json
import platform
import time
from importlib import resources
from pathlib import Path

import numpy as np
import scipy

from mlnn import __version__
from mlnn.errors import MLNNError
from mlnn.metrics import MEASURES, evaluate
from mlnn.paper.methods import C_VALUES, LEARNING_RATES, METHODS, PAPER_METHODS, resolve
from mlnn.paper.selection import fit_br, fit_network_method, fit_published_method
from mlnn.validation import validation_split

#: Names of the datasets in the paper's Table 3, by registry name.
PAPER_DATASETS = {"reuters21578": "Reuters-21578", "delicious": "Delicious"}

#: The full-budget settings, and the small-budget ones of ``quick`` (used in CI).
BUDGETS = {
    "full": {"hidden_units": 1000, "max_epochs": 100, "patience": 5,
             "learning_rates": LEARNING_RATES, "C_values": C_VALUES},
    "quick": {"hidden_units": 64, "max_epochs": 3, "patience": 2,
              "learning_rates": (0.1,), "C_values": (1.0,)},
}


def paper_table3():
    """The paper's Table 3 as ``{(dataset, method): {measure: value}}`` (from the package data)."""
    text = resources.files("mlnn").joinpath("data/paper_table3.csv").read_text()
    rows = csv.DictReader(text.splitlines())
    return {(row["dataset"], row["method"]): {m: float(row[m]) for m in MEASURES} for row in rows}


def _test_predictions(model, dataset):
    scores = model.decision_function(dataset.X_test)
    return scores, model.thresholds_.predict(dataset.X_test, scores)


def run_network(method, dataset, fit_rows, val_rows, budget, random_state, batch_size, refit,
                log, select_by="rankloss", sensitivity=False):
    """A network method on ``dataset``: (test scores, test label sets, record).

    With ``sensitivity``, ``record["alternative"]["test"]`` holds the test measures of the η0
    chosen by the other criterion (those of the selected model when both agree).
    """
    model, record = fit_network_method(method, dataset.X_train, dataset.Y_train, fit_rows,
                                       val_rows, budget, random_state, batch_size, refit,
                                       select_by=select_by, alternative=sensitivity, log=log)
    scores, Y_pred = _test_predictions(model, dataset)
    alternative = record.get("alternative")
    if alternative is not None:
        other = alternative.pop("model", model)
        alternative["test"] = evaluate(dataset.Y_test, *_test_predictions(other, dataset))
    return scores, Y_pred, record


def run_published(method, dataset, random_state, log):
    """BP-MLL as published on ``dataset``: (test scores, test label sets, record)."""
    model, record = fit_published_method(method, dataset.X_train, dataset.Y_train,
                                         random_state, log)
    return (*_test_predictions(model, dataset), record)


def run_br(method, dataset, fit_rows, val_rows, budget, random_state, log):
    """BR_B / BR_R on ``dataset``, C chosen on the validation split: (scores, labels, record)."""
    started = time.perf_counter()
    result = fit_br(dataset.X_train, dataset.Y_train, variant=METHODS[method]["variant"],
                    C_values=budget["C_values"], validation=(fit_rows, val_rows),
                    random_state=random_state)
    scores = result.model.decision_function(dataset.X_test)
    Y_pred = result.predict(dataset.X_test, scores)
    record = {"C": result.C, "solver": result.model.solver, "tol": result.model.tol,
              "validation": result.validation_scores,
              "seconds": time.perf_counter() - started}
    log(f"  {method}: C={result.C}")
    return scores, Y_pred, record


def _budget(quick, learning_rates, C_values):
    budget = dict(BUDGETS["quick" if quick else "full"])
    for key, grid in (("learning_rates", learning_rates), ("C_values", C_values)):
        if grid is not None:
            budget[key] = tuple(_positive_grid(grid, key))
    return budget


def _positive_grid(values, name):
    values = list(values)
    if not values or any(not np.isfinite(v) or v <= 0 for v in values):
        raise MLNNError(f"{name} must be a non-empty list of positive numbers, got {values}")
    return values


def _run_record(dataset, random_state, quick, budget, batch_size, refit, validation_fraction):
    return {"dataset": dataset.name, "seed": random_state, "budget": "quick" if quick else "full",
            "settings": {**budget, "batch_size": batch_size, "refit": refit,
                         "validation_fraction": validation_fraction},
            "statistics": dataset.statistics(), "methods": {},
            "versions": {"mlnn": __version__, "numpy": np.__version__,
                         "scipy": scipy.__version__, "python": platform.python_version()}}


def _comparison_rows(dataset_name, method, ours, reference):
    return [{"dataset": dataset_name, "method": method, "measure": measure,
             "ours": ours[measure], "paper": reference.get(measure, float("nan")),
             "difference": ours[measure] - reference.get(measure, float("nan"))}
            for measure in MEASURES]


def reproduce(dataset, methods=None, random_state=0, quick=False, refit=True, batch_size=64,
              validation_fraction=0.1, learning_rates=None, C_values=None, select_by="rankloss",
              sensitivity=False, log=print, after_each=None):
    """Run ``methods`` (default: the paper's eight) on a loaded dataset; returns (rows, run record).

    ``learning_rates`` and ``C_values`` replace the budget's grids (each method's record says
    which grid it searched). ``after_each(rows, run)``, if given, is called after every method
    with the results so far (the command line uses it to write the tables as each method ends).
    The run record stores ``random_state`` under the key ``seed``.
    """
    methods = [resolve(m) for m in (methods or PAPER_METHODS)]
    budget = _budget(quick, learning_rates, C_values)
    fit_rows, val_rows = validation_split(dataset.X_train.shape[0], fraction=validation_fraction,
                                          random_state=random_state)
    reference = paper_table3()
    paper_name = PAPER_DATASETS.get(dataset.name)
    rows = []
    run = _run_record(dataset, random_state, quick, budget, batch_size, refit,
                      validation_fraction)
    run["settings"]["select_by"] = select_by
    for method in methods:
        log(f"{method} on {dataset.name}")
        kind = METHODS[method]["kind"]
        if kind == "nn":
            scores, Y_pred, record = run_network(method, dataset, fit_rows, val_rows, budget,
                                                 random_state, batch_size, refit, log,
                                                 select_by, sensitivity)
        elif kind == "published":
            scores, Y_pred, record = run_published(method, dataset, random_state, log)
        else:
            scores, Y_pred, record = run_br(method, dataset, fit_rows, val_rows, budget,
                                            random_state, log)
        ours = evaluate(dataset.Y_test, scores, Y_pred)
        if kind != "published":
            record["grid"] = list(budget["learning_rates" if kind == "nn" else "C_values"])
        record["test"] = ours
        run["methods"][method] = record
        rows += _comparison_rows(dataset.name, method, ours,
                                 reference.get((paper_name, method), {}))
        log(f"  {method}: " + "  ".join(f"{m} {ours[m]:.4f}" for m in MEASURES)
            + f"  ({record['seconds']:.0f}s)")
        if after_each is not None:
            after_each(rows, run)
    return rows, run


def markdown_table(rows):
    """Methods × measures: our value, the paper's below it, and the difference."""
    methods = list(dict.fromkeys(row["method"] for row in rows))
    cell = {(row["method"], row["measure"]): row for row in rows}
    lines = ["| method | | " + " | ".join(MEASURES) + " |",
             "|---|---|" + "---:|" * len(MEASURES)]
    for method in methods:
        for label, key, fmt in (("ours", "ours", "{:.4f}"), ("paper", "paper", "{:.4f}"),
                                ("Δ", "difference", "{:+.4f}")):
            values = [cell[method, m][key] for m in MEASURES]
            text = ["–" if np.isnan(v) else fmt.format(v) for v in values]
            lines.append(f"| {method if label == 'ours' else ''} | {label} | "
                         + " | ".join(text) + " |")
    return "\n".join(lines) + "\n"


def sensitivity_table(run):
    """η0 by each selection criterion → the ten test measures, for the networks of ``run`` that
    were run with ``sensitivity`` (Markdown; empty if none was)."""
    lines = []
    for method, record in run["methods"].items():
        alternative = record.get("alternative")
        if alternative is None:
            continue
        for entry in (record, alternative):
            values = " | ".join(f"{entry['test'][m]:.4f}" for m in MEASURES)
            lines.append(f"| {method} | {entry['selected_by']} | {entry['learning_rate']} | "
                         f"{entry['best_epoch']} | {values} |")
    if not lines:
        return ""
    header = ["| method | selected by | η0 | epochs | " + " | ".join(MEASURES) + " |",
              "|---|---|---:|---:|" + "---:|" * len(MEASURES)]
    return "\n".join(header + lines) + "\n"


def _experiment_key(record):
    """What two runs must share to be merged: seed, budget and settings apart from the grids."""
    settings = {k: v for k, v in record.get("settings", {}).items()
                if k not in ("learning_rates", "C_values")}
    return json.loads(json.dumps([record.get("seed"), record.get("budget"), settings]))


def merge_previous(rows, run, out_dir):
    """Add the methods of an earlier run in ``out_dir`` that this run did not repeat.

    Only an earlier run of the same dataset, seed, budget and settings (apart from the grids,
    which each method records) is merged, so a long comparison can be run one method at a time;
    rerunning a method replaces its results.
    """
    out = Path(out_dir)
    name = run["dataset"]
    try:
        previous = json.loads((out / f"run_{name}.json").read_text())
        with open(out / f"table3_{name}.csv", newline="") as handle:
            previous_rows = list(csv.DictReader(handle))
    except (OSError, ValueError):
        return rows, run
    if _experiment_key(previous) != _experiment_key(run):
        return rows, run
    done = set(run["methods"])
    kept = {m: r for m, r in previous.get("methods", {}).items() if m not in done}
    old_rows = [{**row, **{k: float(row[k]) for k in ("ours", "paper", "difference")}}
                for row in previous_rows if row["method"] in kept]
    order = list(METHODS)
    merged = sorted(old_rows + rows, key=lambda row: order.index(row["method"]))
    methods = {m: {**kept, **run["methods"]}[m] for m in order if m in kept or m in done}
    return merged, {**run, "methods": methods}


def write_results(rows, run, out_dir):
    """Write ``table3_<dataset>.csv``, ``.md`` and ``run_<dataset>.json`` into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    name = run["dataset"]
    with open(out / f"table3_{name}.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["dataset", "method", "measure", "ours",
                                                    "paper", "difference"])
        writer.writeheader()
        writer.writerows(rows)
    header = (f"Table 3 on {name} (seed {run['seed']}, {run['budget']} budget). "
              "Lower is better for rankloss, oneError, coverage; higher for the rest.\n\n")
    sensitivity = sensitivity_table(run)
    if sensitivity:
        sensitivity = ("\n\nη0 selected by validation rank loss or by validation mean F1, and "
                       "the test measures of each choice:\n\n" + sensitivity)
    (out / f"table3_{name}.md").write_text(header + markdown_table(rows) + sensitivity)
    (out / f"run_{name}.json").write_text(json.dumps(run, indent=2, default=_plain) + "\n")
    return out


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")
