"""Matplotlib helpers that draw the paper's figures (Figs. 2-4) and the notebooks' other plots.

Every function returns a :class:`matplotlib.figure.Figure` (no ``pyplot`` state).
"""

from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

from mlnn.base.errors import MLNNError
from mlnn.base.fileio import atomic_write
from mlnn.figures.curves import UPDATE_RULES
from mlnn.figures.environment import figures_dir
from mlnn.figures.landscapes import surface_gradient
from mlnn.nn.activations import get_activation
from mlnn.nn.losses import get_loss

#: The one palette: a colour stands for one value of one concept in every figure. AdaGrad is red
#: as in the paper's Fig. 3; η 0.01 blue as its Fig. 4's PWE at 0.01 (we draw PWE and CE apart,
#: so colour shows η alone). Hidden-layer sizes are greens (:func:`hidden_units_colour`), other
#: series :data:`OTHER_SERIES`.
COLOURS = {
    # update rule (Fig. 3 left)
    "adagrad": "tab:red", "momentum": "tab:purple", "sgd": "tab:brown",
    # base learning rate η (Fig. 4, notebook 7's validation curves)
    "η=0.01": "tab:blue", "η=0.1": "tab:orange", "η=0.001": "tab:cyan",
    # thresholds (notebook 6)
    "fixed 0.5": "#d6616b", "tuned constant": "tab:olive", "learned T(x)": "tab:pink",
    "oracle": "#6b6ecf",
    # the methods of Table 3 (notebook 7's charts): CE networks in navy, BP-MLL with tanh hidden
    # units in gold, with ReLU hidden units in plum, BR in greys; dark without dropout, light with
    "NN_A": "#393b79", "NN_AD": "#9c9ede", "BP-MLL_TA": "#8c6d31", "BP-MLL_TAD": "#e7cb94",
    "BP-MLL_RA": "#7b4173", "BP-MLL_RAD": "#de9ed6", "BR_B": "#4d4d4d", "BR_R": "#a6a6a6",
}

#: Line styles, one per value of a concept, never shared between concepts.
LINE_STYLES = {"dropout": "--", "no dropout": "-", "relu": "-", "tanh": "-.", "sigmoid": ":"}

#: Colours of series that stand for no concept (timings, example words, ...), outside the palette.
OTHER_SERIES = ("#843c39", "#5254a3", "#e7ba52", "#a55194")


def colour(key):
    """The palette's colour of a concept value (``"adagrad"``, ``"η=0.1"``, ``"NN_A"``, ...)."""
    if key not in COLOURS:
        raise MLNNError(f"no colour for {key!r}; the palette knows {sorted(COLOURS)}")
    return COLOURS[key]


def hidden_units_colour(F):
    """A green for F hidden units, darker the larger F (by the square of log2 F, 8 to 1,024)."""
    position = np.clip((np.log2(float(F)) - 3.0) / 7.0, 0.0, 1.0)
    return matplotlib.colormaps["YlGn"](0.25 + 0.75 * position ** 2)


def eta_key(learning_rate):
    """The palette key of a base learning rate: ``"η=0.01"`` for 0.01."""
    return f"η={learning_rate:g}"


def series_colour(name, index):
    """The palette colour of ``name``, else the ``index``-th of :data:`OTHER_SERIES`."""
    return COLOURS.get(name, OTHER_SERIES[index % len(OTHER_SERIES)])


MEASURE_NAMES = {"rankloss": "rank loss (validation)", "MAP": "MAP (validation)",
                 "train_loss": "training loss J (minibatches, masks on)",
                 "train_rankloss": "rank loss (training documents, no masks)"}


def save_figure(fig, name, directory=None, dpi=110):
    """Save ``fig`` as the PNG ``directory/name`` (default :func:`figures_dir`); the path."""
    if dpi < 100:
        raise MLNNError(f"figures are saved at 100 dpi or more, not {dpi}")
    directory = figures_dir() if directory is None else Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / (name if name.endswith(".png") else f"{name}.png")
    with atomic_write(path, "wb") as handle:
        fig.savefig(handle, format="png", dpi=dpi, bbox_inches="tight")
    return path


def _new_figure(nrows=1, ncols=1, width=6.0, height=4.2, **kwargs):
    fig = Figure(figsize=(width * ncols, height * nrows), constrained_layout=True)
    return fig, fig.subplots(nrows, ncols, squeeze=False, **kwargs)


def _finish(ax, title, legend=8, **grid):
    """The legend, a light grid and the title of a one-panel plot; returns its figure."""
    ax.legend(fontsize=legend)
    ax.grid(True, alpha=0.3, **grid)
    if title:
        ax.set_title(title, fontsize=10)
    return ax.figure


# -- Fig. 2: loss landscapes ----------------------------------------------------------------------

def _surface_title(surface):
    """"CE (sigmoid outputs), tanh hidden unit": the titles the loss and activations carry."""
    loss, hidden = get_loss(surface.loss), get_activation(surface.hidden_activation)
    return f"{loss.title} ({loss.output.title} outputs), {hidden.title} hidden unit"


def plot_landscape_pair(left, right, title):
    """Two :class:`~mlnn.figures.landscapes.Surface` side by side, 3-D above contours, on one
    z-scale and one colour scale."""
    fig = Figure(figsize=(11, 9), constrained_layout=True)
    low, high = min(left.J.min(), right.J.min()), max(left.J.max(), right.J.max())
    levels = np.linspace(low, high, 25)
    for column, surface in enumerate((left, right)):
        W1, W2_1 = np.meshgrid(surface.W1, surface.W2_1)
        ax = fig.add_subplot(2, 2, column + 1, projection="3d")
        ax.plot_surface(W1, W2_1, surface.J, cmap="viridis", vmin=low, vmax=high, linewidth=0,
                        antialiased=True)
        ax.set_zlim(low, high)
        ax.set(xlabel="W1", ylabel="W2_1", zlabel="loss J (shared scale)")
        ax.set_title(_surface_title(surface))
        ax = fig.add_subplot(2, 2, column + 3)
        filled = ax.contourf(W1, W2_1, surface.J, levels=levels, cmap="viridis")
        ax.contour(W1, W2_1, surface.J, levels=levels[::3], colors="k", linewidths=0.4)
        ax.set(xlabel="W1 (input → hidden)", ylabel="W2_1 (hidden → output 1)")
        ax.set_title(f"contours: {_surface_title(surface)}")
        fig.colorbar(filled, ax=ax, label="loss J (shared scale)")
    fig.suptitle(f"{title}\nx = {left.x:g}, y = {left.y}, W2_2..4 = c = {left.c:g}, no biases; "
                 "both panels on one z-scale and one colour scale")
    return fig


def plot_gradient_norms(surfaces, title):
    """Contour maps of log10 ‖∇J‖ for several surfaces (flat regions are dark)."""
    fig, axes = _new_figure(1, len(surfaces), width=4.6, height=4.0)
    for ax, surface in zip(axes[0], surfaces):
        norm = np.hypot(*surface_gradient(surface))
        W1, W2_1 = np.meshgrid(surface.W1, surface.W2_1)
        filled = ax.contourf(W1, W2_1, np.log10(norm + 1e-12), levels=np.linspace(-6, 1.5, 16),
                             cmap="magma", extend="both")
        ax.set(xlabel="W1", ylabel="W2_1")
        ax.set_title(_surface_title(surface), fontsize=9)
        fig.colorbar(filled, ax=ax, label="log10 ‖∇J‖")
    fig.suptitle(title)
    return fig


# -- Figs. 3-4: learning curves -------------------------------------------------------------------

def _size_note(curves):
    sizes = sorted({c["hidden_units"] for c in curves})
    return f"{'/'.join(str(s) for s in sizes)} hidden units"


#: A curve's colour by the concept :func:`plot_curves` colours by, and its line style likewise.
CURVE_COLOURS = {"optimizer": lambda curve: colour(curve["optimizer"]),
                 "learning_rate": lambda curve: colour(eta_key(curve["learning_rate"])),
                 "hidden_units": lambda curve: hidden_units_colour(curve["hidden_units"])}
CURVE_STYLES = {"dropout": lambda curve: LINE_STYLES["dropout" if float(curve["dropout"]) > 0
                                                     else "no dropout"],
                "hidden_activation": lambda curve: LINE_STYLES[curve["hidden_activation"]]}


def plot_curves(curves, measure="rankloss", ax=None, logx=False, colour_by="optimizer",
                style_by="dropout", title=None, logy=False):
    """One line per curve: ``measure`` against the number of parameter updates, coloured by
    ``colour_by`` (:data:`CURVE_COLOURS`) and styled by ``style_by`` (:data:`CURVE_STYLES`)."""
    if not curves:
        raise MLNNError("no curves to plot")
    if measure not in curves[0]:
        raise MLNNError(f"curves have no measure {measure!r}; they have "
                        f"{sorted(k for k, v in curves[0].items() if isinstance(v, list))}")
    ax = _new_figure()[1][0, 0] if ax is None else ax
    for curve in curves:
        ax.plot(curve["updates"], curve[measure], CURVE_STYLES[style_by](curve),
                color=CURVE_COLOURS[colour_by](curve), label=curve["label"], linewidth=1.6)
    if logx:
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())     # no crowded minor labels
    if logy:
        ax.set_yscale("log")
    ax.set(xlabel="number of parameter updates" + (" (log scale)" if logx else ""),
           ylabel=MEASURE_NAMES.get(measure, measure) + (" (log scale)" if logy else ""))
    return _finish(ax, title, which="both" if logx or logy else "major")


def plot_convergence(curves, measure="rankloss", title_prefix="Fig. 3 (left)"):
    """Fig. 3 (left): AdaGrad (red) vs momentum (purple) × ReLU (solid) / tanh (dash-dot) /
    sigmoid (dotted) hidden units."""
    order = ("relu", "tanh", "sigmoid")
    curves = sorted(curves, key=lambda c: (c["optimizer"] != "adagrad",
                                           order.index(c["hidden_activation"])))
    c = curves[0]
    title = (f"{title_prefix} — {c['dataset']}: {c['loss'].upper()} loss, {_size_note(curves)}, "
             f"η = {c['learning_rate']:g}\nAdaGrad (red) vs momentum μ = {c['momentum']:g} "
             "(purple); ReLU solid, tanh dash-dot, sigmoid dotted")
    return plot_curves(curves, measure, colour_by="optimizer", style_by="hidden_activation",
                       title=title, logy=measure == "rankloss")


def plot_dropout(curves, measure="rankloss", title_prefix="Fig. 3 (right)",
                 panels=None):
    """Fig. 3 (right): dropout (dashed) vs none (solid) for hidden layers of several sizes
    (greens); ``panels`` default to ``measure`` and ``train_loss`` (minibatch loss, masks on)."""
    panels = (measure, "train_loss") if panels is None else tuple(panels)
    c = curves[0]
    rates = sorted({float(curve["dropout"]) for curve in curves if float(curve["dropout"]) > 0})
    title = (f"{title_prefix} — {c['dataset']}: {c['loss'].upper()}, "
             f"{c['hidden_activation']} hidden units, "
             f"{UPDATE_RULES.get(c['optimizer'], c['optimizer'])} η = {c['learning_rate']:g}\n"
             f"no dropout (solid) vs dropout {'/'.join(f'{r:g}' for r in rates)} (dashed); "
             "hidden-layer sizes in shades of green (darker = larger)")
    fig, axes = _new_figure(1, len(panels), width=6.0, height=4.4)
    for ax, shown in zip(axes[0], panels):
        plot_curves(sorted(curves, key=lambda c: (c["hidden_units"], c["dropout"])), shown,
                    ax=ax, colour_by="hidden_units", style_by="dropout",
                    title=MEASURE_NAMES.get(shown, shown), logy=shown == "train_loss")
    fig.suptitle(title)
    return fig


def plot_learning_rates(curves, title_prefix="Fig. 4"):
    """Fig. 4: one column per loss, in the order of ``curves`` (ours: the paper draws both losses
    in each panel, rank loss left and MAP right), at several η (:data:`COLOURS`), dropout dashed;
    rank loss and MAP against updates on a log axis."""
    c = curves[0]
    losses = list(dict.fromkeys(curve["loss"] for curve in curves))
    titles = [get_loss(loss).title for loss in losses]
    fig, axes = _new_figure(2, len(losses), width=6.0, height=4.0, sharey="row")
    for column, loss in enumerate(losses):
        mine = sorted((curve for curve in curves if curve["loss"] == loss),
                      key=lambda c: (c["learning_rate"], c["dropout"]))
        for row, measure in enumerate(("rankloss", "MAP")):
            plot_curves(mine, measure, ax=axes[row, column], logx=True, colour_by="learning_rate",
                        style_by="dropout", title=f"{titles[column]}: {MEASURE_NAMES[measure]}",
                        logy=measure == "rankloss")
    etas = sorted({curve["learning_rate"] for curve in curves})
    eta_list = ", ".join(f"{eta:g}" for eta in etas)
    fig.suptitle(f"{title_prefix} — {c['dataset']}: {' vs '.join(titles)} (left to right), "
                 f"{c['hidden_activation']} hidden, {_size_note(curves)}, "
                 f"{UPDATE_RULES.get(c['optimizer'], c['optimizer'])}\n"
                 f"η ∈ {{{eta_list}}} (η = 0.01 blue, 0.1 orange)"
                 + ("; solid = no dropout, dashed = dropout"
                    if any(float(curve["dropout"]) > 0 for curve in curves) else ", no dropout"))
    return fig


# -- notebooks 1, 6, 7 ----------------------------------------------------------------------------

def plot_timings(n_labels, seconds, title):
    """Log-log timings: ``seconds`` maps a method name to one time per entry of ``n_labels``."""
    ax = _new_figure()[1][0, 0]
    for index, (name, values) in enumerate(seconds.items()):
        ax.loglog(n_labels, values, "o-", color=series_colour(name, index), label=name)
    ax.set(xlabel="number of labels L", ylabel="seconds per δ2 computation")
    return _finish(ax, title, legend=None, which="both")


def plot_bars(groups, values, series, ylabel, title):
    """Grouped bars: ``values[s][g]`` for series s (legend) and group g (x tick labels)."""
    ax = _new_figure(width=7.0)[1][0, 0]
    x = np.arange(len(groups))
    width = 0.8 / max(len(series), 1)
    for index, name in enumerate(series):
        ax.bar(x + (index - (len(series) - 1) / 2) * width, values[index], width, label=name,
               color=series_colour(name, index))
    ax.set_xticks(x, groups, rotation=30, ha="right")
    ax.set_ylabel(ylabel)
    return _finish(ax, title, axis="y")


def plot_histograms(samples, bins, xlabel, title):
    """Overlaid step histograms: ``samples`` maps a legend name to a 1-d array."""
    ax = _new_figure()[1][0, 0]
    for index, (name, values) in enumerate(samples.items()):
        ax.hist(np.asarray(values), bins=bins, histtype="step", linewidth=1.6,
                color=series_colour(name, index), label=name)
    ax.set(xlabel=xlabel, ylabel="number of documents")
    return _finish(ax, title)


# -- notebook 2b: AdaGrad's per-feature learning rates --------------------------------------------

def plot_effective_rates(updates, rates, document_frequency, final_rates, eta, title):
    """AdaGrad's effective learning rate η0 / (√G + ε) (mean over a row of W1) during training
    (left) and at the end against ``document_frequency`` (right), beside SGD's ``eta``."""
    fig, axes = _new_figure(1, 2, width=5.6, height=4.2)
    left, right = axes[0]
    for index, (name, values) in enumerate(rates.items()):
        left.plot(updates, values, color=series_colour(name, index), label=name, linewidth=1.6)
    left.set_yscale("log")
    right.loglog(document_frequency, final_rates, ".", color=OTHER_SERIES[0], alpha=0.5,
                 label="one feature (row of W1)")
    for ax, xlabel, ylabel, panel in (
            (left, "number of parameter updates", "effective learning rate η0 / (√G + ε)",
             "during training"),
            (right, "documents containing the feature (training split)",
             "effective learning rate at the end", "at the end, against the feature's frequency")):
        ax.axhline(eta, color="k", linestyle="-", linewidth=0.8,
                   label=f"SGD / momentum: η = {eta:g}")
        ax.set(xlabel=xlabel, ylabel=ylabel)
        ax.set_title(panel, fontsize=10)
        ax.legend(fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(title)
    return fig
