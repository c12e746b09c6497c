"""How fast the BR linear SVMs train, side by side with liblinear on the same problem.

Solvers: ``"tron"`` (:mod:`mlnn.baselines.svm`, warm-started along the C grid as
:func:`mlnn.paper.selection.fit_br`), ``"tron-cold"`` (from w = 0), and when scikit-learn is
installed liblinear's ``LinearSVC`` (same squared hinge, regularised constant feature):
``"liblinear-primal"`` (``-s 2``, the same stopping rule), ``"liblinear-dual"`` (``-s 1``).
Labels of one sign only are left out of every objective (``skipped``).
"""

import importlib.util
import time
import warnings

import numpy as np

from mlnn.base.errors import MLNNError
from mlnn.base.validation import (check_choice, check_positive_float, check_positive_int,
                                  check_X, check_Y)
from mlnn.baselines.svm import (DEFAULT_C_VALUES, DEFAULT_TOL, ConvergenceWarning, LinearSVMBR,
                                 _primal_value, augment_bias)

SOLVERS = ("tron", "tron-cold", "liblinear-primal", "liblinear-dual")
LIBLINEAR = ("liblinear-primal", "liblinear-dual")

#: liblinear's default tolerance of its dual coordinate descent (-s 1), "liblinear-dual".
LIBLINEAR_DUAL_TOL = 0.1


def liblinear_available():
    return importlib.util.find_spec("sklearn") is not None


def _fit(solver, X, Y, C, tol, dual_tol, bias, max_iter, compared, previous):
    """One solver at one C: (W (D+1) × L, the model to warm-start the next C from or None);
    liblinear fits each label of ``compared`` in turn (zero columns elsewhere)."""
    if solver in LIBLINEAR:
        from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
        from sklearn.svm import LinearSVC

        dual = solver == "liblinear-dual"
        W = np.zeros((X.shape[1] + 1, Y.shape[1]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SklearnConvergenceWarning)
            for label in compared:
                model = LinearSVC(C=C, loss="squared_hinge", penalty="l2", dual=dual,
                                  tol=dual_tol if dual else tol, fit_intercept=True,
                                  intercept_scaling=bias, max_iter=max_iter).fit(X, Y[:, label])
                W[:-1, label] = model.coef_.ravel()
                W[-1, label] = model.intercept_[0] / bias
        return W, None
    start = {} if previous is None or solver == "tron-cold" else \
        {"coef": previous.coef_, "intercept": previous.intercept_}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = LinearSVMBR(C=C, tol=tol, bias=bias, max_iter=max_iter).fit(X, Y, **start)
    return model.weights(), model


def _check_options(C_values, tol, dual_tol, bias, repeats, max_iter, solvers):
    C_values = sorted(check_positive_float(C, "C_values entry") for C in C_values)
    if not C_values:
        raise MLNNError("C_values must contain at least one value")
    for solver in solvers:
        check_choice(solver, "solver", SOLVERS)
    if not solvers:
        raise MLNNError("solvers must name at least one solver")
    for value, name in ((tol, "tol"), (dual_tol, "dual_tol"), (bias, "bias")):
        check_positive_float(value, name)
    return (C_values, check_positive_int(repeats, "repeats"),
            check_positive_int(max_iter, "max_iter"))


def benchmark_svm(X, Y, C_values=DEFAULT_C_VALUES, tol=DEFAULT_TOL,
                  dual_tol=LIBLINEAR_DUAL_TOL, bias=1.0, repeats=3, max_iter=1000,
                  solvers=SOLVERS, log=None):
    """Time every solver at every C: ``rows`` of (solver, C) with ``seconds`` (median),
    ``all_seconds`` and ``objective``; ``ratios`` and ``cold_ratios`` (:func:`_ratios`); the sizes,
    ``skipped`` labels and settings. ``log`` receives a line per solver and C."""
    C_values, repeats, max_iter = _check_options(C_values, tol, dual_tol, bias, repeats, max_iter,
                                                 tuple(solvers))
    X = check_X(X, "X")
    Y = check_Y(Y, "Y", n_samples=X.shape[0]).toarray()
    has_liblinear = liblinear_available()
    solvers = [s for s in solvers if has_liblinear or s not in LIBLINEAR]
    positives = Y.sum(axis=0)
    compared = np.flatnonzero((positives > 0) & (positives < Y.shape[0]))
    Xa, signs = augment_bias(X, bias), 2.0 * Y[:, compared] - 1.0
    times = {(solver, C): [] for solver in solvers for C in C_values}
    objectives = {}
    for _ in range(repeats):
        previous = dict.fromkeys(solvers)             # warm starts along the grid
        for C in C_values:                            # the solvers of one C run back to back
            for solver in solvers:
                started = time.perf_counter()
                W, previous[solver] = _fit(solver, X, Y, C, tol, dual_tol, bias, max_iter,
                                           compared, previous[solver])
                times[solver, C].append(time.perf_counter() - started)
                W = W[:, compared]      # ½‖w_l‖² + C Σ_i max(0, 1 − y_il w_lᵀx_i)² per label
                objectives[solver, C] = float(_primal_value(W, signs * np.asarray(Xa @ W), C).sum())
                if log is not None:
                    log(f"{solver:>16}  C={C:<8g} {times[solver, C][-1]:8.2f} s  "
                        f"objective {objectives[solver, C]:.6g}")
    rows = [{"solver": solver, "C": C, "seconds": float(np.median(times[solver, C])),
             "all_seconds": times[solver, C], "objective": objectives[solver, C]}
            for solver in solvers for C in C_values]
    return {"n_documents": X.shape[0], "n_features": X.shape[1], "n_labels": Y.shape[1],
            "compared_labels": int(compared.size),
            "skipped": [int(label) for label in np.setdiff1d(np.arange(Y.shape[1]), compared)],
            "tol": tol, "dual_tol": dual_tol, "bias": bias, "repeats": repeats,
            "liblinear": has_liblinear, "rows": rows, "ratios": _ratios(rows),
            "cold_ratios": _ratios(rows, "tron-cold")}


def _ratios(rows, solver="tron"):
    """{C: median over the repeats of solver's / liblinear-primal's seconds in that repeat}."""
    seconds = {(row["solver"], row["C"]): np.asarray(row["all_seconds"]) for row in rows}
    return {C: float(np.median(seconds[solver, C] / seconds["liblinear-primal", C]))
            for (name, C) in seconds if name == solver and ("liblinear-primal", C) in seconds}


def format_svm_report(result):
    """A Markdown table of :func:`benchmark_svm`'s result: a line per C, seconds and objective
    per solver, and the ratios."""
    solvers = list(dict.fromkeys(row["solver"] for row in result["rows"]))
    cells = {(row["solver"], row["C"]): row for row in result["rows"]}
    C_values = sorted({row["C"] for row in result["rows"]})
    header = ["C"] + [f"{solver} {what}" for solver in solvers for what in ("s", "objective")]
    ratios = {name: result[key] for name, key in (("tron", "ratios"), ("tron-cold", "cold_ratios"))
              if result.get(key)}
    header += [f"{name} / liblinear-primal" for name in ratios]
    lines = [f"{result['n_documents']:,} documents × {result['n_features']:,} features, "
             f"{result['n_labels']} labels ({result['compared_labels']} compared); tol "
             f"{result['tol']} (tron, liblinear-primal), {result['dual_tol']} (dual solvers); "
             f"bias {result['bias']}; median of {result['repeats']} runs",
             "", "| " + " | ".join(header) + " |",
             "|" + "---|" * len(header)]
    for C in C_values:
        row = [f"{C:g}", *(f"{cells[s, C]['seconds']:.2f} | {cells[s, C]['objective']:.6g}"
                           for s in solvers), *(f"{ratio[C]:.2f}×" for ratio in ratios.values())]
        lines.append("| " + " | ".join(row) + " |")
    if not result["liblinear"]:
        lines.append("(scikit-learn is not installed: liblinear was not timed)")
    return "\n".join(lines)
