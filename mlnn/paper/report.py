"""A study's tables, computed from its stored runs (:class:`mlnn.paper.results.Summary`): mean ±
std per dataset, average ranks beside the paper's Table 2, Friedman tests, paired differences
over seeds; and the critical-difference diagram of Demšar (2006, Fig. 1): methods at their
average ranks, a bar of length CD, and thick lines joining the groups the Nemenyi test does not
tell apart (:func:`mlnn.paper.ranks.cliques`)."""

import numpy as np
from matplotlib.figure import Figure

from mlnn.evaluation.metrics import LOWER_IS_BETTER
from mlnn.paper.ranks import cliques


def _cell(mean, std, bold):
    text = f"{mean:.4f}" if np.isnan(std) else f"{mean:.4f} ± {std:.4f}"
    return f"**{text}**" if bold else text


def dataset_markdown(summary, index):
    """Methods × measures of dataset ``index``: mean ± std over its seeds, the best in bold."""
    means, stds = summary.means[index], summary.stds[index]
    best = [np.nanargmin(means[:, j]) if m in LOWER_IS_BETTER else np.nanargmax(means[:, j])
            for j, m in enumerate(summary.measures)]
    lines = ["| method | " + " | ".join(summary.measures) + " |",
             "|---|" + "---:|" * len(summary.measures)]
    for i, method in enumerate(summary.methods):
        cells = [_cell(means[i, j], stds[i, j], best[j] == i) for j in range(len(best))]
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def rank_markdown(summary, R, paper):
    """Average ranks (``R``, methods × measures): a row "ours" and a row "paper" (``paper``:
    :func:`mlnn.paper.ranks.paper_table2`) per method."""
    lines = ["| method | | " + " | ".join(summary.measures) + " | mean |",
             "|---|---|" + "---:|" * (len(summary.measures) + 1)]
    for i, method in enumerate(summary.methods):
        for label, values in (("ours", list(R[i])),
                              ("paper", [paper[method][m] for m in summary.measures])):
            lines.append(f"| {method if label == 'ours' else ''} | {label} | "
                         + " | ".join(f"{v:.2f}" for v in values)
                         + f" | {np.mean(values):.2f} |")
    return "\n".join(lines) + "\n"


def friedman_markdown(summary, tests, cd):
    """One row per measure: χ²_F and its p-value, F_F and its p-value, and Nemenyi's CD."""
    lines = ["| measure | χ²_F | p | F_F | p | CD (α = 0.05) |", "|---|---:|---:|---:|---:|---:|"]
    for measure, test in zip(summary.measures, tests):
        lines.append(f"| {measure} | {test.chi2:.2f} | {test.p_chi2:.3g} | {test.F:.2f} | "
                     f"{test.p_F:.3g} | {cd:.2f} |")
    return "\n".join(lines) + "\n"


def plot_cd_diagram(R, names, cd, title="", ax=None):
    """The CD diagram of average ranks ``R`` (k,) of ``names`` in ``ax`` (or a new figure)."""
    if ax is None:
        ax = Figure(figsize=(7.0, 3.0), constrained_layout=True).subplots()
    R = np.asarray(R, dtype=float)
    k = len(R)
    order = np.argsort(R, kind="stable")
    ax.set_xlim(0.5, k + 0.5)
    ax.set_ylim(-((k + 1) // 2 + 0.5) * 0.9 * max(1.0, 4.0 / k) - 0.7, 2.2)
    ax.axis("off")
    ax.hlines(0, 1, k, color="black", linewidth=1)
    for tick in range(1, k + 1):
        ax.vlines(tick, 0, 0.25, color="black", linewidth=1)
        ax.text(tick, 0.4, str(tick), ha="center", va="bottom", fontsize=8)
    ax.hlines(1.5, 1, 1 + cd, color="black", linewidth=1.5)
    ax.text(1 + cd / 2, 1.6, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=8)
    for position, method in enumerate(order):     # the better half named on the left
        left = position < (k + 1) // 2
        y = -((position if left else k - 1 - position) + 1.5) * 0.9 * max(1.0, 4.0 / k)
        x_text = 0.6 if left else k + 0.4
        ax.plot([R[method], R[method], x_text], [0, y, y], color="0.35", linewidth=0.8)
        ax.text(x_text, y, f"{names[method]} ({R[method]:.2f})", ha="right" if left else "left",
                va="center", fontsize=8)
    for row, group in enumerate(cliques(R, cd)):
        ax.hlines(-0.35 - 0.3 * row, R[group[0]] - 0.05, R[group[-1]] + 0.05, color="black",
                  linewidth=3)
    ax.set_title(title, fontsize=9)
    return ax.figure


def plot_cd_grid(R, methods, measures, cd):
    """One CD diagram (:func:`plot_cd_diagram`) per measure, in a grid of two columns."""
    nrows = -(-len(measures) // 2)
    fig = Figure(figsize=(14.0, 2.6 * nrows), constrained_layout=True)
    axes = fig.subplots(nrows, 2, squeeze=False).ravel()
    for j, measure in enumerate(measures):
        plot_cd_diagram(R[:, j], methods, cd, title=measure, ax=axes[j])
    for ax in axes[len(measures):]:
        ax.axis("off")
    return fig


def paired_differences(runs, dataset, better, worse, measure):
    """``{seed: difference}``: how much ``better`` beats ``worse`` on ``measure`` (positive:
    better) on each seed of ``dataset`` that holds both."""
    sign = -1.0 if measure in LOWER_IS_BETTER else 1.0
    ours, theirs = (seed_values(runs, dataset, method, measure) for method in (better, worse))
    return {seed: sign * (ours[seed] - theirs[seed]) for seed in ours if seed in theirs}


def seed_values(runs, dataset, method, measure):
    """``{seed: test value}`` of ``method`` on ``dataset``."""
    return {run["seed"]: run["methods"][method]["test"][measure] for run in runs
            if run["dataset"] == dataset and method in run["methods"]}


def seed_markdown(runs, dataset, methods, measures):
    """Methods × measures of ``dataset``: mean ± std (ddof 1) over each method's seeds, and n."""
    lines = ["| method | n | " + " | ".join(measures) + " |",
             "|---|---:|" + "---:|" * len(measures)]
    for method in methods:
        columns = [np.array(list(seed_values(runs, dataset, method, m).values())) for m in measures]
        if columns[0].size == 0:
            continue
        cells = [_cell(v.mean(), v.std(ddof=1) if v.size > 1 else np.nan, False) for v in columns]
        lines.append(f"| {method} | {columns[0].size} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def significant_pairs(R, methods, cd):
    """(better, worse, difference) of the pairs whose ranks differ by ``cd`` or more, largest
    first."""
    R = np.asarray(R, dtype=float)
    pairs = [(methods[i], methods[j], R[j] - R[i]) for i in range(len(R))
             for j in range(len(R)) if R[j] - R[i] >= cd]
    return sorted(pairs, key=lambda pair: -pair[2])
