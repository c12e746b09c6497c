"""Reproduce the paper's Table 3 on one dataset: model selection on validation data, test results.

For every method of :mod:`mlnn.methods`:

* A validation split is carved from the *training* documents once (seeded,
  ``validation_fraction``) and shared by all methods; the test split is used only for the final
  numbers.
* Networks: for each η0 in the grid a :class:`~mlnn.estimator.MultiLabelNN` is trained with early
  stopping on validation rank loss; the η0 with the lowest validation rank loss wins. With
  ``refit`` (default), the winner is trained again on all training documents for the selected
  number of epochs, with the threshold λ selected on validation.
* Binary relevance: C from the paper's grid by mean micro/macro F1 (BR_B) or rank loss (BR_R), see
  :func:`mlnn.svm.fit_br`.

:func:`reproduce` returns the rows of the comparison (method, measure, ours, paper, difference)
and a record of the run (seeds, chosen hyper-parameters, validation scores, wall times), and
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
from mlnn.estimator import MultiLabelNN
from mlnn.methods import C_VALUES, LEARNING_RATES, METHODS, network_params, resolve
from mlnn.metrics import MEASURES, evaluate

#: Names of the datasets in the paper's Table 3, by registry name.
PAPER_DATASETS = {"reuters21578": "Reuters-21578", "delicious": "Delicious"}

#: The full-budget settings, and the small-budget ones of ``--quick`` (used in CI).
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


def validation_split(n, fraction, random_state):
    """Seeded (fit, validation) index arrays over n training documents."""
    order = np.random.default_rng(random_state).permutation(n)
    n_val = int(round(fraction * n))
    return np.sort(order[n_val:]), np.sort(order[:n_val])


def select_network(method, X_fit, Y_fit, X_val, Y_val, budget, seed, batch_size, log):
    """Train one network per η0; return (best estimator, {η0: best validation rank loss})."""
    scores, best = {}, None
    for eta in budget["learning_rates"]:
        model = MultiLabelNN(**network_params(method), learning_rate=eta,
                             hidden_units=budget["hidden_units"], max_epochs=budget["max_epochs"],
                             patience=budget["patience"], batch_size=batch_size,
                             random_state=seed)
        model.fit(X_fit, Y_fit, X_val, Y_val)
        scores[eta] = model.history_.best["rankloss"]
        log(f"  {method} η0={eta}: validation rank loss {scores[eta]:.5f} after "
            f"{model.best_updates_} updates ({model.fit_time_:.0f}s)")
        if best is None or scores[eta] < scores[best.learning_rate]:
            best = model
    return best, scores


def run_network(method, dataset, fit, val, budget, seed, batch_size, refit, log):
    """Model selection and final training for one network method; (model, record)."""
    X, Y = dataset.X_train, dataset.Y_train
    started = time.perf_counter()
    model, scores = select_network(method, X[fit], Y[fit], X[val], Y[val], budget, seed,
                                   batch_size, log)
    record = {"learning_rate": model.learning_rate, "validation_rankloss": scores,
              "best_epoch": int(model.history_.best["epoch"]),
              "best_updates": model.best_updates_, "threshold_lambda": model.threshold_lambda_}
    if refit:
        model = MultiLabelNN(**model.get_params()).set_params(
            max_epochs=record["best_epoch"], validation_fraction=0.0,
            threshold_lambda=model.threshold_lambda_)
        model.fit(X, Y)
        record["refit_updates"] = model.n_updates_
    record["params"] = {k: v for k, v in model.get_params().items() if k != "verbose"}
    record["seconds"] = time.perf_counter() - started
    return model, record


def run_br(method, dataset, fit, val, budget, seed, log):
    """Model selection (C) and final training for BR_B / BR_R; (scores, predictions, record)."""
    from mlnn.svm import fit_br
    started = time.perf_counter()
    variant = METHODS[method]["variant"]
    result = fit_br(dataset.X_train, dataset.Y_train, variant=variant,
                    C_grid=budget["C_values"], validation=(fit, val), random_state=seed)
    scores = result.model.decision_function(dataset.X_test)
    Y_pred = result.predict(dataset.X_test, scores)
    record = {"C": result.C, "validation": result.validation_scores,
              "seconds": time.perf_counter() - started}
    log(f"  {method}: C={result.C}")
    return scores, Y_pred, record


def reproduce(dataset, methods=None, seed=0, quick=False, refit=True, batch_size=64,
              validation_fraction=0.1, learning_rates=None, C_values=None, log=print,
              after_each=None):
    """Run ``methods`` (default: all eight) on a loaded dataset; returns (rows, run record).

    ``learning_rates`` and ``C_values`` replace the budget's grids (each method's record says
    which grid it searched). ``after_each(rows, run)``, if given, is called after every method
    with the results so far (the command line uses it to write the tables as each method ends).
    """
    methods = [resolve(m) for m in (methods or list(METHODS))]
    budget = dict(BUDGETS["quick" if quick else "full"])
    for key, grid in (("learning_rates", learning_rates), ("C_values", C_values)):
        if grid is not None:
            budget[key] = tuple(_positive_grid(grid, key))
    fit, val = validation_split(dataset.X_train.shape[0], validation_fraction, seed)
    paper = paper_table3()
    paper_name = PAPER_DATASETS.get(dataset.name)
    rows, run = [], {"dataset": dataset.name, "seed": seed, "budget": "quick" if quick else "full",
                     "settings": {**budget, "batch_size": batch_size, "refit": refit,
                                  "validation_fraction": validation_fraction},
                     "statistics": dataset.statistics(), "methods": {},
                     "versions": {"mlnn": __version__, "numpy": np.__version__,
                                  "scipy": scipy.__version__, "python": platform.python_version()}}
    for method in methods:
        log(f"{method} on {dataset.name}")
        if METHODS[method]["kind"] == "nn":
            model, record = run_network(method, dataset, fit, val, budget, seed, batch_size,
                                        refit, log)
            scores = model.decision_function(dataset.X_test)
            Y_pred = model.thresholds_.predict(dataset.X_test, scores)
        else:
            scores, Y_pred, record = run_br(method, dataset, fit, val, budget, seed, log)
        ours = evaluate(dataset.Y_test, scores, Y_pred)
        record["grid"] = list(budget["learning_rates" if METHODS[method]["kind"] == "nn"
                                     else "C_values"])
        record["test"] = ours
        run["methods"][method] = record
        reference = paper.get((paper_name, method), {})
        for measure in MEASURES:
            theirs = reference.get(measure, float("nan"))
            rows.append({"dataset": dataset.name, "method": method, "measure": measure,
                         "ours": ours[measure], "paper": theirs,
                         "difference": ours[measure] - theirs})
        log(f"  {method}: " + "  ".join(f"{m} {ours[m]:.4f}" for m in MEASURES)
            + f"  ({record['seconds']:.0f}s)")
        if after_each is not None:
            after_each(rows, run)
    return rows, run


def _positive_grid(values, name):
    values = list(values)
    if not values or any(not np.isfinite(v) or v <= 0 for v in values):
        raise MLNNError(f"{name} must be a non-empty list of positive numbers, got {values}")
    return values


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
    def experiment(record):   # what must agree; the grids are recorded per method
        settings = {k: v for k, v in record.get("settings", {}).items()
                    if k not in ("learning_rates", "C_values")}
        return json.loads(json.dumps([record.get("seed"), record.get("budget"), settings]))
    if experiment(previous) != experiment(run):
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
    (out / f"table3_{name}.md").write_text(header + markdown_table(rows))
    (out / f"run_{name}.json").write_text(json.dumps(run, indent=2, default=_plain) + "\n")
    return out


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def register(subparsers):
    parser = subparsers.add_parser(
        "reproduce", help="run the paper's methods on a dataset and compare with Table 3",
        description="Runs the methods with model selection on a validation split of the training "
                    "data, evaluates on the test split, and writes CSV, Markdown and JSON results "
                    "next to the paper's numbers.")
    parser.add_argument("--dataset", required=True, help="dataset name (see 'data info')")
    parser.add_argument("--methods", nargs="+", metavar="METHOD",
                        help="methods to run (default: all eight)")
    parser.add_argument("--out", default="figures",
                        help="output directory (default: figures); results of other methods from "
                             "an earlier run with the same seed and budget there are kept")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--quick", action="store_true",
                        help="small budget: 64 hidden units, 3 epochs, one η0 and one C")
    parser.add_argument("--learning-rates", nargs="+", type=float, metavar="ETA",
                        help="grid for η0 (default: the paper's 0.001 0.01 0.1)")
    parser.add_argument("--C-values", nargs="+", type=float, metavar="C",
                        help="grid for the SVMs' C (default: the paper's 0.001 ... 1000)")
    parser.add_argument("--no-refit", action="store_true",
                        help="keep the model trained without the validation documents")
    parser.set_defaults(func=_command)


def _command(args):
    from mlnn.datasets import load
    if args.methods:
        [resolve(m) for m in args.methods]       # fail fast on unknown names
    dataset = load(args.dataset)
    started = time.perf_counter()

    def save(rows, run):
        run["seconds"] = time.perf_counter() - started
        return write_results(*merge_previous(rows, run, args.out), args.out)

    rows, run = reproduce(dataset, methods=args.methods, seed=args.seed, quick=args.quick,
                          refit=not args.no_refit, learning_rates=args.learning_rates,
                          C_values=args.C_values, after_each=save)
    out = save(rows, run)
    print((out / f"table3_{dataset.name}.md").read_text())
    print(f"wrote {out / f'table3_{dataset.name}.csv'}, .md and run_{dataset.name}.json "
          f"({run['seconds']:.0f}s)")
    return 0

