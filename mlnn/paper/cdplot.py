"""The critical-difference diagram of Demšar (2006, Fig. 1): methods at their average ranks, a
bar of length CD, and thick lines joining the groups not significantly different by the Nemenyi
test (:func:`mlnn.paper.ranks.cliques`).
"""

import numpy as np
from matplotlib.figure import Figure

from mlnn.paper.ranks import cliques


def plot_cd_diagram(R, names, cd, title="", ax=None):
    """Draw the CD diagram of average ranks ``R`` (k,) of ``names`` into ``ax`` (default a new
    figure); returns the figure."""
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
    _label_methods(ax, R, names, order)
    for row, group in enumerate(cliques(R, cd)):
        ax.hlines(-0.35 - 0.3 * row, R[group[0]] - 0.05, R[group[-1]] + 0.05, color="black",
                  linewidth=3)
    if title:
        ax.set_title(title, fontsize=9)
    return ax.figure


def _label_methods(ax, R, names, order):
    """Each method's name on the left (better half) or right, with a line to its rank."""
    k = len(R)
    half = (k + 1) // 2
    for position, method in enumerate(order):
        left = position < half
        row = position if left else k - 1 - position
        y = -(row + 1.5) * 0.9 * max(1.0, 4.0 / k)
        x_text = 0.6 if left else k + 0.4
        ax.plot([R[method], R[method], x_text], [0, y, y], color="0.35", linewidth=0.8)
        ax.text(x_text, y, f"{names[method]} ({R[method]:.2f})", ha="right" if left else "left",
                va="center", fontsize=8)
