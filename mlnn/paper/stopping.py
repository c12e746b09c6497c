"""The stopping rules side by side, read from stored run files (README, "Stopping rule").

A network's run record holds the main rule's result, each other rule's under ``rules``, every
η0's validation curve (``curves``) and where each rule stops on it (``stops``).
:func:`rule_markdown` tabulates them beside the paper's Table 3; :func:`plot_curves` draws the
curves with each rule's stop.
"""

import json
import time

import numpy as np
from matplotlib.figure import Figure

from mlnn.base.fileio import write_text
from mlnn.base.validation import validation_split
from mlnn.evaluation.metrics import LOWER_IS_BETTER, MEASURES
from mlnn.model.params import DEFAULT
from mlnn.paper.methods import resolve
from mlnn.paper.reproduce import evaluate_on_test
from mlnn.paper.results import OLD_RUNS_STOPPING, load_runs
from mlnn.paper.selection import refit, rule_record, select_learning_rate, selection_model

#: Our tolerances against the paper (figures/README.md): ("abs", difference) or ("rel", share).
TOLERANCES = {"rankloss": ("abs", 0.0004), "oneError": ("abs", 0.006),
              "coverage": ("rel", 0.01), "MAP": ("abs", 0.004),
              **{m: ("abs", 0.012) for m in ("miP", "miR", "miF", "maP", "maR", "maF")}}

#: Measures :func:`plot_curves` draws on a log scale (their η0 curves differ by decades).
LOG_SCALE = ("rankloss", "coverage", "hamming")

#: Marker of each stopping rule in :func:`plot_curves`.
RULE_MARKERS = {"rankloss": "o", "meanF": "s", "meanF_best": "*", "fixed": "x"}


def within_tolerance(measure, value, paper):
    """Whether the paper's value lies within our tolerance of ``value`` for ``measure``."""
    kind, size = TOLERANCES[measure]
    bound = size * abs(paper) if kind == "rel" else size
    return bool(abs(value - paper) <= bound)


def rule_entries(record):
    """``{rule: entry}`` of one network's run record, the main rule first."""
    return {record.get("stopping", OLD_RUNS_STOPPING): record, **record.get("rules", {})}


def rule_values(runs, dataset, method, rule, key):
    """``{seed: value}`` of ``key`` (a test measure, ``"best_epoch"``, ...) of ``method`` under
    ``rule`` on ``dataset``."""
    values = {}
    for run in runs:
        record = run["methods"].get(method) if run["dataset"] == dataset else None
        entry = rule_entries(record).get(rule) if record else None
        if entry is not None and "test" in entry:
            values[run["seed"]] = entry["test"][key] if key in entry["test"] else entry[key]
    return values


def _cell(values, paper, measure):
    """"mean ± std ✓" (✓: the paper's value within tolerance of the mean, ✗: not)."""
    v = np.array(list(values), dtype=float)
    text = f"{v.mean():.4f}" + (f" ± {v.std(ddof=1):.4f}" if v.size > 1 else "")
    if paper is None or np.isnan(paper):
        return text
    return text + (" ✓" if within_tolerance(measure, v.mean(), paper) else " ✗")


def rule_markdown(runs, dataset, methods, rules, paper):
    """Methods × rules × measures of ``dataset``: mean ± std over the seeds (✓: the paper's
    value, ``paper[method][measure]``, within tolerance), n and each seed's epochs."""
    lines = ["| method | stopping rule | n | epochs (by seed) | " + " | ".join(MEASURES) + " |",
             "|---|---|---:|---|" + "---:|" * len(MEASURES)]
    for method in methods:
        reference = paper.get(method, {})
        for rule in rules:
            epochs = rule_values(runs, dataset, method, rule, "best_epoch")
            if not epochs:
                continue
            cells = [_cell(rule_values(runs, dataset, method, rule, m).values(),
                           reference.get(m), m) for m in MEASURES]
            seeds = ", ".join(str(epochs[s]) for s in sorted(epochs))
            lines.append(f"| {method} | {rule} | {len(epochs)} | {seeds} | "
                         + " | ".join(cells) + " |")
        if reference:
            lines.append(f"| {method} | paper | | | "
                         + " | ".join(f"{reference[m]:.4f}" for m in MEASURES) + " |")
    return "\n".join(lines) + "\n"


#: The networks of the stopping-rule study and the rules their tables show.
STUDY = (("NN_A NN_AD".split(), ("meanF_best", "rankloss", "meanF", "fixed")),
         ("BP-MLL_TA BP-MLL_TAD BP-MLL_RA BP-MLL_RAD".split(), ("meanF_best", "rankloss")))


def stored_runs(figures):
    """The run records of ``figures/stopping/`` (the rank-loss rule's), then of ``figures``."""
    return load_runs(figures / "stopping") + load_runs(figures)


def study_tables(runs, paper, datasets):
    """``{dataset: [markdown, ...]}``: :func:`rule_markdown` of each :data:`STUDY` group held on
    the dataset (``datasets``: {name: the paper's name})."""
    tables = {}
    for dataset, paper_name in datasets.items():
        for methods, rules in STUDY:
            held = [m for m in methods if rule_values(runs, dataset, m, rules[0], "best_epoch")]
            if held:
                reference = {m: paper[(paper_name, m)] for m in held if (paper_name, m) in paper}
                tables.setdefault(dataset, []).append(
                    rule_markdown(runs, dataset, held, rules, reference))
    return tables


def rule_stops(record):
    """``{rule: {η0: epoch}}``: where each rule stops on each η0's validation curve."""
    return {rule: {float(eta): stop["epoch"] for eta, stop in entry["stops"].items()}
            for rule, entry in rule_entries(record).items()}


def validation_curves(record):
    """``{η0: {measure: array over the evaluations}}`` of a network's run record."""
    return {float(eta): {key: np.asarray(values, dtype=float) for key, values in curve.items()}
            for eta, curve in record["curves"].items()}


def plot_curves(record, title, measures=MEASURES + ("hamming", "meanF"), colours=None):
    """Per measure, the validation curve of each η0 (``colours``: {η0: colour}) against epochs,
    a marker where each rule stops (filled on the η0 it chose)."""
    curves, stops = validation_curves(record), rule_stops(record)
    chosen = {rule: float(entry["learning_rate"]) for rule, entry in rule_entries(record).items()}
    rows = -(-len(measures) // 4)
    fig = Figure(figsize=(13, 2.6 * rows))
    axes = fig.subplots(rows, 4, squeeze=False).ravel()
    for ax, measure in zip(axes, measures):
        for position, (eta, curve) in enumerate(sorted(curves.items())):
            colour = colours[eta] if colours else f"C{position}"
            line, = ax.plot(curve["epoch"], curve[measure], color=colour, lw=1,
                            label=f"η0 = {eta:g}")
            for rule, by_eta in stops.items():
                index = int(np.flatnonzero(curve["epoch"] == by_eta[eta])[0])
                ax.plot(by_eta[eta], curve[measure][index], RULE_MARKERS[rule], ms=7,
                        color=line.get_color(),
                        fillstyle="full" if chosen[rule] == eta else "none")
        arrow = "↓" if measure in LOWER_IS_BETTER else "↑"
        log = " (log)" if measure in LOG_SCALE else ""
        ax.set_title(f"validation {measure} {arrow}{log}", fontsize=9)
        ax.set_yscale("log" if log else "linear")
        ax.set_xlabel("epoch", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes[len(measures):]:
        ax.axis("off")
    handles = axes[0].get_legend_handles_labels()[0] + [
        axes[0].plot([], [], RULE_MARKERS[rule], color="grey", label=rule)[0] for rule in stops]
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.legend(handles=handles, loc="lower center", fontsize=8, ncol=len(handles))
    return fig


def validation_run(dataset, method, budget, rules, random_state=0, out=None,
                   select_by="rankloss"):
    """The selection runs of ``method`` as ``reproduce`` makes them, without refits or test
    numbers: a ``"validation_only"`` run record, written to ``out`` (JSON) if given."""
    method, started = resolve(method), time.perf_counter()
    budget = {"batch_size": DEFAULT.batch_size, **budget}
    fit, val = validation_split(dataset.X_train.shape[0], DEFAULT.validation_fraction,
                                random_state=random_state)
    X, Y = dataset.X_train, dataset.Y_train
    models, outcomes = select_learning_rate(method, X[fit], Y[fit], X[val], Y[val], budget,
                                            random_state, log=lambda m: None, rules=rules)
    entries = [rule_record(outcomes[rule], rule, select_by) for rule in rules]
    record = {**entries[0], "rules": {e["stopping"]: e for e in entries[1:]},
              "curves": {e: m.history_.as_dict() for e, m in models.items()},
              "seconds": time.perf_counter() - started}
    run = {"dataset": dataset.name, "seed": random_state, "validation_only": True,
           "methods": {method: record}}
    if out is not None:
        write_text(out, json.dumps(run, indent=1) + "\n")
    return run


def refit_validation_run(dataset, run, budget, out=None, rules=None):
    """The refits of a :func:`validation_run` (as ``reproduce`` makes them) with their test
    measures, for ``rules`` (default all), the run written to ``out`` after each."""
    run, budget = {**run, "validation_only": False}, {"batch_size": DEFAULT.batch_size, **budget}
    (method, record), = run["methods"].items()
    entries = rule_entries(record)
    done = {}
    for rule in rules or entries:
        entry = entries[rule]
        key = (float(entry["learning_rate"]), entry["best_epoch"], entry["threshold_lambda"])
        if key not in done:
            model = refit(selection_model(method, key[0], budget, run["seed"]),
                          dataset.X_train, dataset.Y_train,
                          {"epoch": key[1], "threshold_lambda": key[2]}, stopping=rule)
            done[key] = evaluate_on_test(model, model.thresholds_, dataset)
        entry["test"] = done[key]
        if out is not None:
            write_text(out, json.dumps(run, indent=1) + "\n")
    return run
