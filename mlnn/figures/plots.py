"""Matplotlib helpers that draw the paper's figures (Figs. 2-4) and the notebooks' other plots.

Every function returns a :class:`matplotlib.figure.Figure` with labelled axes, a legend and a
title naming the dataset and settings; :func:`save_figure` writes it as PNG, by default into
:func:`mlnn.figures.environment.figures_dir`.

Only matplotlib's object-oriented API is used (no global ``pyplot`` state), so the helpers work
under any backend, including ``Agg``.
"""

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from mlnn.base.errors import MLNNError
from mlnn.base.fileio import atomic_write
from mlnn.figures.environment import figures_dir
from mlnn.figures.landscapes import surface_gradient

#: Line colours by update rule, loss (and loss with learning rate, Fig. 4) or hidden activation,
#: fixed so figures agree. AdaGrad is red and momentum blue, as in the paper's Fig. 3 (left);
#: in Fig. 4 CE is red/orange and PWE blue/cyan (the larger η the darker).
COLOURS = {"adagrad": "tab:red", "momentum": "tab:blue", "sgd": "tab:green",
           "ce": "tab:red", "pwe": "tab:blue",
           "ce0.1": "tab:red", "ce0.01": "tab:orange", "pwe0.1": "tab:blue", "pwe0.01": "tab:cyan",
           "relu": "tab:red", "tanh": "tab:blue", "sigmoid": "tab:green"}

#: Line styles by hidden activation in Fig. 3 (left).
ACTIVATION_STYLES = {"relu": "-", "tanh": "--", "sigmoid": ":"}
PALETTE = ("tab:red", "tab:blue", "tab:green", "tab:purple", "tab:orange", "tab:brown",
           "tab:gray", "tab:olive")

MEASURE_NAMES = {"rankloss": "rank loss (validation)", "MAP": "MAP (validation)",
                 "train_loss": "training loss (minibatch mean)"}


def save_figure(fig, name, directory=None, dpi=110):
    """Save ``fig`` as ``directory/name`` (PNG; ``.png`` is appended if missing); return the path."""
    directory = figures_dir() if directory is None else Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / (name if name.endswith(".png") else f"{name}.png")
    with atomic_write(path, "wb") as handle:
        fig.savefig(handle, format="png", dpi=dpi, bbox_inches="tight")
    return path


def _new_figure(nrows=1, ncols=1, width=6.0, height=4.2, **kwargs):
    fig = Figure(figsize=(width * ncols, height * nrows), constrained_layout=True)
    axes = fig.subplots(nrows, ncols, squeeze=False, **kwargs)
    return fig, axes


# ---------------------------------------------------------------------------------------------
# Fig. 2: loss landscapes

_LOSS_TITLES = {"ce": "cross-entropy (sigmoid outputs)", "pwe": "PWE (tanh outputs)"}


def _surface_title(surface):
    loss = _LOSS_TITLES.get(surface.loss, surface.loss)
    return f"{loss}, {surface.hidden_activation} hidden unit"


def plot_landscape_pair(left, right, title):
    """Two loss landscapes side by side: 3-D surfaces on top, contour maps below.

    ``left`` and ``right`` are :class:`mlnn.figures.landscapes.Surface` objects. The contour maps share
    their colour levels so the two panels can be compared directly.
    """
    fig = Figure(figsize=(11, 9), constrained_layout=True)
    levels = np.linspace(min(left.J.min(), right.J.min()), max(left.J.max(), right.J.max()), 25)
    for column, surface in enumerate((left, right)):
        W1, W2_1 = np.meshgrid(surface.W1, surface.W2_1)
        ax = fig.add_subplot(2, 2, column + 1, projection="3d")
        ax.plot_surface(W1, W2_1, surface.J, cmap="viridis", linewidth=0, antialiased=True)
        ax.set_xlabel("W1")
        ax.set_ylabel("W2_1")
        ax.set_zlabel("loss J")
        ax.set_title(_surface_title(surface))
        ax = fig.add_subplot(2, 2, column + 3)
        filled = ax.contourf(W1, W2_1, surface.J, levels=levels, cmap="viridis")
        ax.contour(W1, W2_1, surface.J, levels=levels[::3], colors="k", linewidths=0.4)
        ax.set_xlabel("W1 (input → hidden)")
        ax.set_ylabel("W2_1 (hidden → output 1)")
        ax.set_title(f"contours: {_surface_title(surface)}")
        fig.colorbar(filled, ax=ax, label="loss J")
    fig.suptitle(f"{title}\nx = {left.x:g}, y = {left.y}, W2_2..4 = c = {left.c:g}, no biases")
    return fig


def plot_gradient_norms(surfaces, title):
    """Contour maps of log10 ‖∇J‖ for several surfaces (flat regions are dark)."""
    fig, axes = _new_figure(1, len(surfaces), width=4.6, height=4.0)
    for ax, surface in zip(axes[0], surfaces):
        norm = np.hypot(*surface_gradient(surface))
        W1, W2_1 = np.meshgrid(surface.W1, surface.W2_1)
        filled = ax.contourf(W1, W2_1, np.log10(norm + 1e-12), levels=np.linspace(-6, 1.5, 16),
                             cmap="magma", extend="both")
        ax.set_xlabel("W1")
        ax.set_ylabel("W2_1")
        ax.set_title(_surface_title(surface), fontsize=9)
        fig.colorbar(filled, ax=ax, label="log10 ‖∇J‖")
    fig.suptitle(title)
    return fig


# ---------------------------------------------------------------------------------------------
# Figs. 3-4: learning curves

def _size_note(curves):
    sizes = sorted({c["hidden_units"] for c in curves})
    return f"{'/'.join(str(s) for s in sizes)} hidden units"


def plot_curves(curves, measure="rankloss", ax=None, logx=False, colour_by=None, style_by=None,
                title=None, logy=False):
    """One line per curve: ``measure`` against the number of parameter updates.

    ``colour_by`` / ``style_by`` name a setting field (e.g. "hidden_activation", "optimizer",
    "dropout");
    curves sharing a value share the colour / line style. Returns the figure.
    """
    if not curves:
        raise MLNNError("no curves to plot")
    if measure not in curves[0]:
        raise MLNNError(f"curves have no measure {measure!r}; they have "
                        f"{sorted(k for k, v in curves[0].items() if isinstance(v, list))}")
    if ax is None:
        fig, axes = _new_figure()
        ax = axes[0, 0]
    fig = ax.figure
    styles = ("-", "--", ":", "-.")
    colour_values = sorted({str(c[colour_by]) for c in curves}) if colour_by else []
    style_values = sorted({str(c[style_by]) for c in curves}) if style_by else []
    for index, curve in enumerate(curves):
        key = str(curve[colour_by]) if colour_by else None
        colour = COLOURS.get(key) if key in COLOURS else PALETTE[
            (colour_values.index(key) if colour_by else index) % len(PALETTE)]
        style = styles[style_values.index(str(curve[style_by])) % len(styles)] if style_by else "-"
        ax.plot(curve["updates"], curve[measure], style, color=colour, label=curve["label"],
                linewidth=1.6)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel("number of parameter updates" + (" (log scale)" if logx else ""))
    ax.set_ylabel(MEASURE_NAMES.get(measure, measure) + (" (log scale)" if logy else ""))
    ax.grid(True, alpha=0.3, which="both" if logx or logy else "major")
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title, fontsize=10)
    return fig


def plot_convergence(curves, measure="rankloss", title_prefix="Fig. 3 (left)"):
    """Fig. 3 (left): AdaGrad (red) vs momentum (blue) × ReLU (solid) / tanh (dashed) / sigmoid
    (dotted) hidden units."""
    order = list(ACTIVATION_STYLES)
    curves = sorted(curves, key=lambda c: (c["optimizer"] != "adagrad",
                                           order.index(c["hidden_activation"])))
    c = curves[0]
    title = (f"{title_prefix} — {c['dataset']}: {c['loss'].upper()} loss, {_size_note(curves)}, "
             f"η = {c['learning_rate']:g}\nAdaGrad (red) vs momentum μ = {c['momentum']:g} "
             "(blue); ReLU solid, tanh dashed, sigmoid dotted")
    fig, axes = _new_figure()
    ax = axes[0, 0]
    for curve in curves:
        ax.plot(curve["updates"], curve[measure], ACTIVATION_STYLES[curve["hidden_activation"]],
                color=COLOURS[curve["optimizer"]], label=curve["label"], linewidth=1.6)
    if measure == "rankloss":
        ax.set_yscale("log")
    ax.set_xlabel("number of parameter updates")
    ax.set_ylabel(MEASURE_NAMES.get(measure, measure) + (" (log scale)" if measure == "rankloss"
                                                          else ""))
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10)
    return fig


def plot_dropout(curves, measure="rankloss", title_prefix="Fig. 3 (right)"):
    """Fig. 3 (right): dropout vs none (dashed = no dropout) for two hidden-layer sizes."""
    c = curves[0]
    title = (f"{title_prefix} — {c['dataset']}: {c['loss'].upper()}, "
             f"{c['hidden_activation']} hidden units, "
             f"{c['optimizer']} η = {c['learning_rate']:g}\n"
             "no dropout (solid) vs dropout 0.5 (dashed), two hidden-layer sizes")
    fig, axes = _new_figure(1, 2, width=6.0, height=4.4)
    for ax, (m, shown) in zip(axes[0], ((measure, "validation"), ("train_loss", "training"))):
        plot_curves(sorted(curves, key=lambda c: (c["hidden_units"], -c["dropout"])), m, ax=ax,
                    colour_by="hidden_units", style_by="dropout",
                    title=f"{MEASURE_NAMES.get(m, m)}")
    axes[0, 1].set_yscale("log")
    fig.suptitle(title)
    return fig


def plot_learning_rates(curves, title_prefix="Fig. 4"):
    """Fig. 4: PWE vs CE at two learning rates, ± dropout; rank loss and MAP on a log x-axis."""
    c = curves[0]
    curves = [{**curve, "group": f"{curve['loss']}{curve['learning_rate']:g}"}     # copies
              for curve in sorted(curves, key=lambda c: (c["loss"], c["learning_rate"],
                                                         c["dropout"]))]
    fig, axes = _new_figure(1, 2, width=6.0, height=4.6)
    for ax, measure in zip(axes[0], ("rankloss", "MAP")):
        plot_curves(curves, measure, ax=ax, logx=True, colour_by="group", style_by="dropout",
                    title=MEASURE_NAMES[measure], logy=measure == "rankloss")
    fig.suptitle(f"{title_prefix} — {c['dataset']}: PWE (blue, cyan) vs CE (red, orange), "
                 f"η ∈ {{0.01, 0.1}} ({c['optimizer']}), {c['hidden_activation']} hidden, "
                 f"{_size_note(curves)}; solid = no dropout, dashed = dropout 0.5")
    return fig


# ---------------------------------------------------------------------------------------------
# notebooks 1, 6, 7

def plot_timings(n_labels, seconds, title):
    """Log-log timings: ``seconds`` maps a method name to one time per entry of ``n_labels``."""
    fig, axes = _new_figure()
    ax = axes[0, 0]
    for index, (name, values) in enumerate(seconds.items()):
        ax.loglog(n_labels, values, "o-", color=PALETTE[index % len(PALETTE)], label=name)
    ax.set_xlabel("number of labels L")
    ax.set_ylabel("seconds per δ2 computation")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    ax.set_title(title, fontsize=10)
    return fig


def plot_bars(groups, values, series, ylabel, title):
    """Grouped bars: ``values[s][g]`` for series s (legend) and group g (x tick labels)."""
    fig, axes = _new_figure(width=7.0)
    ax = axes[0, 0]
    x = np.arange(len(groups))
    width = 0.8 / max(len(series), 1)
    for index, name in enumerate(series):
        ax.bar(x + (index - (len(series) - 1) / 2) * width, values[index], width, label=name,
               color=PALETTE[index % len(PALETTE)])
    ax.set_xticks(x)
    ax.set_xticklabels(groups, rotation=30, ha="right")
    ax.set_ylabel(ylabel)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10)
    return fig


def plot_histograms(samples, bins, xlabel, title):
    """Overlaid step histograms: ``samples`` maps a legend name to a 1-d array."""
    fig, axes = _new_figure()
    ax = axes[0, 0]
    for index, (name, values) in enumerate(samples.items()):
        ax.hist(np.asarray(values), bins=bins, histtype="step", linewidth=1.6,
                color=PALETTE[index % len(PALETTE)], label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("number of documents")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    ax.set_title(title, fontsize=10)
    return fig


# ---------------------------------------------------------------------------------------------
# notebook 2b: AdaGrad's per-feature learning rates

def plot_effective_rates(updates, rates, document_frequency, final_rates, eta, title):
    """AdaGrad's effective learning rate η0 / (√G + ε), mean over a row of W1.

    Left: ``rates`` maps a feature's name to its rate after each of ``updates``. Right: the
    final rate of every feature against its ``document_frequency`` (log-log), with the single
    rate ``eta`` that SGD and momentum give every feature drawn as a line.
    """
    fig, axes = _new_figure(1, 2, width=5.6, height=4.2)
    left, right = axes[0]
    for index, (name, values) in enumerate(rates.items()):
        left.plot(updates, values, color=PALETTE[index % len(PALETTE)], label=name, linewidth=1.6)
    left.axhline(eta, color="k", linestyle="--", linewidth=1, label=f"SGD / momentum: η = {eta:g}")
    left.set_yscale("log")
    left.set_xlabel("number of parameter updates")
    left.set_ylabel("effective learning rate η0 / (√G + ε)")
    left.set_title("during training", fontsize=10)
    left.legend(fontsize=8)
    left.grid(True, which="both", alpha=0.3)
    right.loglog(document_frequency, final_rates, ".", color=PALETTE[0], alpha=0.5,
                 label="one feature (row of W1)")
    right.axhline(eta, color="k", linestyle="--", linewidth=1, label=f"SGD / momentum: η = {eta:g}")
    right.set_xlabel("documents containing the feature (training split)")
    right.set_ylabel("effective learning rate at the end")
    right.set_title("at the end, against the feature's frequency", fontsize=10)
    right.legend(fontsize=8)
    right.grid(True, which="both", alpha=0.3)
    fig.suptitle(title)
    return fig
