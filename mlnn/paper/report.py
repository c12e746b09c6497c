"""Markdown tables of a study, computed from its stored runs (:class:`mlnn.paper.results.Summary`):
mean ± std per dataset, average ranks beside the paper's Table 2, Friedman tests, paired
differences over seeds."""

import numpy as np
from matplotlib.figure import Figure

from mlnn.evaluation.metrics import LOWER_IS_BETTER
from mlnn.paper.cdplot import plot_cd_diagram


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
        cells = [_cell(means[i, j], stds[i, j], best[j] == i)
                 for j in range(len(summary.measures))]
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def rank_markdown(summary, R, paper):
    """Average ranks (``R``, methods × measures) beside the paper's Table 2 (``paper``, from
    :func:`mlnn.paper.ranks.paper_table2`): one row "ours" and one row "paper" per method."""
    lines = ["| method | | " + " | ".join(summary.measures) + " | mean |",
             "|---|---|" + "---:|" * (len(summary.measures) + 1)]
    for i, method in enumerate(summary.methods):
        ours = list(R[i])
        theirs = [paper[method][m] for m in summary.measures]
        for label, values in (("ours", ours), ("paper", theirs)):
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


def plot_cd_grid(R, methods, measures, cd, ncols=2):
    """One CD diagram (:func:`mlnn.paper.cdplot.plot_cd_diagram`) per measure, in a grid."""
    nrows = -(-len(measures) // ncols)
    fig = Figure(figsize=(7.0 * ncols, 2.6 * nrows), constrained_layout=True)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax, j in zip(axes, range(len(measures))):
        plot_cd_diagram(R[:, j], methods, cd, title=measures[j], ax=ax)
    for ax in axes[len(measures):]:
        ax.axis("off")
    return fig


def paired_differences(runs, dataset, better, worse, measure):
    """``{seed: difference}``: how much ``better`` beats ``worse`` on ``measure`` (positive:
    better), over the seeds of ``dataset`` that hold both."""
    sign = -1.0 if measure in LOWER_IS_BETTER else 1.0
    return {run["seed"]: sign * (run["methods"][better]["test"][measure]
                                 - run["methods"][worse]["test"][measure])
            for run in runs
            if run["dataset"] == dataset and better in run["methods"]
            and worse in run["methods"]}


def seed_values(runs, dataset, method, measure):
    """``{seed: test value}`` of ``method`` on ``dataset`` over the stored seeds that ran it."""
    return {run["seed"]: run["methods"][method]["test"][measure] for run in runs
            if run["dataset"] == dataset and method in run["methods"]}


def seed_markdown(runs, dataset, methods, measures):
    """Methods × measures of ``dataset``: mean ± std (ddof 1) over each method's seeds, and n."""
    lines = ["| method | n | " + " | ".join(measures) + " |",
             "|---|---:|" + "---:|" * len(measures)]
    for method in methods:
        columns = [np.array(list(seed_values(runs, dataset, method, m).values()))
                   for m in measures]
        if columns[0].size == 0:
            continue
        cells = [_cell(v.mean(), v.std(ddof=1) if v.size > 1 else np.nan, False)
                 for v in columns]
        lines.append(f"| {method} | {columns[0].size} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def significant_pairs(R, methods, cd):
    """(better, worse, difference) of the pairs whose average ranks differ by at least ``cd``
    (Nemenyi), the largest first."""
    R = np.asarray(R, dtype=float)
    pairs = [(methods[i], methods[j], R[j] - R[i]) for i in range(len(R))
             for j in range(len(R)) if R[j] - R[i] >= cd]
    return sorted(pairs, key=lambda pair: -pair[2])
