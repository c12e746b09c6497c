"""Plot helpers: every figure carries labels, legends and titles, and saves as PNG."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from mlnn.base.errors import MLNNError  # noqa: E402
from mlnn.figures import landscapes, plots  # noqa: E402
from mlnn.figures.curves import UPDATE_RULES, load_csv  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _curves(**fixed):
    curves = []
    for k, (optimizer, hidden) in enumerate([("adagrad", "relu"), ("momentum", "tanh")]):
        curve = dict(label=f"c{k}", loss="ce", hidden_activation=hidden, optimizer=optimizer,
                     learning_rate=0.01, momentum=0.9, dropout=0.5 * k, hidden_units=8 * (k + 1),
                     dataset="demo", updates=[10.0, 20.0, 30.0], rankloss=[0.3, 0.2, 0.1 + k / 10],
                     MAP=[0.1, 0.2, 0.3], train_loss=[3.0, 2.0, 1.0], epoch=[1.0, 1.0, 2.0],
                     elapsed=[1.0, 2.0, 3.0])
        curve.update(fixed)
        curves.append(curve)
    return curves


def _texts(fig):
    axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    return axes, fig._suptitle.get_text() if fig._suptitle else ""


def test_save_figure_writes_a_png(tmp_path):
    fig = plots.plot_timings([8, 16], {"a": [1e-3, 2e-3], "b": [1e-4, 1e-4]}, "timings")
    path = plots.save_figure(fig, "t", tmp_path)
    assert path == tmp_path / "t.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_curve_figures_are_labelled():
    for make, n_axes in ((plots.plot_convergence, 1), (plots.plot_dropout, 2),
                         (plots.plot_learning_rates, 2)):
        fig = make(_curves())
        axes, suptitle = _texts(fig)
        assert len(axes) == n_axes
        for ax in axes:
            assert ax.get_xlabel().startswith("number of parameter updates")
            assert ax.get_ylabel()
            assert ax.get_legend() is not None
            assert len(ax.get_lines()) == 2
        title = suptitle or axes[0].get_title()
        assert "demo" in title and "Fig." in title
    fig = plots.plot_learning_rates(_curves())
    assert all(ax.get_xscale() == "log" for ax in _texts(fig)[0])


def test_plot_curves_rejects_unknown_measures_and_empty_input():
    with pytest.raises(MLNNError, match="no measure"):
        plots.plot_curves(_curves(), "coverage")
    with pytest.raises(MLNNError, match="no curves"):
        plots.plot_curves([], "rankloss")


def test_landscape_figures_are_labelled():
    surfaces = landscapes.figure2_surfaces(n_points=7)
    fig = plots.plot_landscape_pair(surfaces[("ce", "tanh")], surfaces[("pwe", "tanh")], "Fig. 2")
    axes, suptitle = _texts(fig)
    assert "Fig. 2" in suptitle and "c = 0" in suptitle
    assert {ax.get_xlabel().split()[0] for ax in axes if ax.get_xlabel()} == {"W1"}
    assert any("PWE" in ax.get_title() for ax in axes)
    fig = plots.plot_gradient_norms(list(surfaces.values()), "norms")
    assert len(_texts(fig)[0]) == 3


def test_bars_and_histograms():
    fig = plots.plot_bars(["miF", "maF"], [[0.5, 0.4], [0.6, 0.5]], ["a", "b"], "score", "t")
    ax = fig.axes[0]
    assert len(ax.patches) == 4 and ax.get_legend() is not None
    fig = plots.plot_histograms({"t": np.linspace(0, 1, 50)}, 10, "threshold", "h")
    assert fig.axes[0].get_xlabel() == "threshold"


def _lines(fig):
    return {line.get_label(): line for ax in fig.axes for line in ax.get_lines()}


def test_every_colour_of_the_palette_stands_for_one_concept_value():
    import matplotlib.colors as mcolors

    named = [mcolors.to_hex(c) for c in plots.COLOURS.values()]
    greens = [mcolors.to_hex(plots.hidden_units_colour(F)) for F in (8, 16, 32, 64, 256, 1024)]
    others = [mcolors.to_hex(c) for c in plots.OTHER_SERIES]
    every = named + greens + others
    assert len(set(every)) == len(every), "a colour is used for two things"
    assert plots.colour("η=0.01") == "tab:blue"         # as in the paper's Fig. 4
    assert plots.colour(plots.eta_key(0.1)) != plots.colour("η=0.01")
    with pytest.raises(MLNNError, match="no colour for 'rmsprop'"):
        plots.colour("rmsprop")
    assert len(set(plots.LINE_STYLES[k] for k in ("dropout", "tanh", "sigmoid"))) == 3


def test_fig3_left_colours_the_update_rule_and_styles_the_activation():
    import matplotlib.colors as mcolors

    curves = [dict(c, label=f"{c['optimizer']}/{c['hidden_activation']}")
              for c in _curves() + _curves(hidden_activation="sigmoid")]
    lines = _lines(plots.plot_convergence(curves))
    for curve in curves:
        line = lines[curve["label"]]
        assert mcolors.same_color(line.get_color(), plots.colour(curve["optimizer"]))
        assert line.get_linestyle() == plots.LINE_STYLES[curve["hidden_activation"]]
    assert not mcolors.same_color(plots.colour("adagrad"), plots.colour("momentum"))
    assert "AdaGrad (red)" in plots.plot_convergence(curves).axes[0].get_title()


def test_fig3_right_gives_one_size_one_shade_in_every_figure():
    import matplotlib.colors as mcolors

    first = _lines(plots.plot_dropout(_curves()))
    second = _lines(plots.plot_dropout(_curves(hidden_units=16)))
    assert mcolors.same_color(first["c1"].get_color(), plots.hidden_units_colour(16))
    assert mcolors.same_color(second["c0"].get_color(), first["c1"].get_color())
    assert not mcolors.same_color(first["c0"].get_color(), first["c1"].get_color())
    assert first["c0"].get_linestyle() == "-" and first["c1"].get_linestyle() == "--"
    fig = plots.plot_dropout(_curves(train_rankloss=[0.2, 0.1, 0.05]),
                             panels=("rankloss", "train_rankloss"))
    assert "training documents" in fig.axes[1].get_ylabel()


def test_fig4_colours_the_learning_rate_as_the_paper_and_splits_the_losses():
    import matplotlib.colors as mcolors

    curves = [dict(c, loss=loss, learning_rate=eta, label=f"{loss}{eta}{c['dropout']}")
              for loss in ("pwe", "ce") for eta in (0.01, 0.1) for c in _curves()]
    fig = plots.plot_learning_rates(curves)
    axes, _ = _texts(fig)
    assert len(axes) == 4
    assert [ax.get_title().split(":")[0] for ax in axes] == ["PWE", "CE", "PWE", "CE"]
    for ax in axes:
        for line in ax.get_lines():
            eta = 0.01 if "0.01" in line.get_label() else 0.1
            assert mcolors.same_color(line.get_color(), plots.colour(plots.eta_key(eta)))
            assert line.get_linestyle() == ("--" if line.get_label().endswith("0.5") else "-")
    assert axes[0].get_ylim() == axes[1].get_ylim()          # one y-scale per row


def test_fig2_panels_share_one_z_scale():
    surfaces = landscapes.figure2_surfaces(n_points=9)
    fig = plots.plot_landscape_pair(surfaces[("ce", "tanh")], surfaces[("pwe", "tanh")], "Fig. 2")
    three_d = [ax for ax in fig.axes if hasattr(ax, "get_zlim")]
    assert len(three_d) == 2 and three_d[0].get_zlim() == three_d[1].get_zlim()
    low = min(s.J.min() for s in surfaces.values() if s.loss == "pwe")
    assert three_d[0].get_zlim()[0] <= low


def test_bars_of_methods_take_the_palette_colours():
    import matplotlib.colors as mcolors

    fig = plots.plot_bars(["miF"], [[0.5], [0.4]], ["NN_A", "BR_B"], "score", "t")
    colours = [patch.get_facecolor() for patch in fig.axes[0].patches]
    assert mcolors.same_color(colours[0], plots.colour("NN_A"))
    assert mcolors.same_color(colours[1], plots.colour("BR_B"))


def test_effective_rates_figure_shows_each_feature_and_the_single_sgd_rate():
    updates = [1, 2, 3]
    rates = {"rare word": [0.5, 0.4, 0.35], "frequent word": [0.05, 0.02, 0.01]}
    fig = plots.plot_effective_rates(updates, rates, document_frequency=[1, 10, 100],
                                     final_rates=[0.3, 0.03, 0.003], eta=0.1, title="AdaGrad")
    left, right = fig.axes[:2]
    labels = [line.get_label() for line in left.get_lines()]
    assert labels[:2] == ["rare word", "frequent word"]
    sgd = [line for line in left.get_lines() if line.get_label().startswith("SGD")]
    assert len(sgd) == 1 and set(sgd[0].get_ydata()) == {0.1}
    np.testing.assert_array_equal(left.get_lines()[0].get_ydata(), rates["rare word"])
    assert left.get_yscale() == "log" and right.get_xscale() == "log"
    points = right.get_lines()[0]
    np.testing.assert_array_equal(points.get_xdata(), [1, 10, 100])
    np.testing.assert_array_equal(points.get_ydata(), [0.3, 0.03, 0.003])
    assert fig._suptitle.get_text() == "AdaGrad"


def test_figures_are_saved_at_100_dpi_or_more(tmp_path):
    from mlnn.base.errors import MLNNError
    fig = plots.plot_bars(["miF"], [[0.5]], ["NN_A"], "score", "t")
    with pytest.raises(MLNNError, match="100 dpi or more, not 70"):
        plots.save_figure(fig, "low", tmp_path, dpi=70)
    assert not (tmp_path / "low.png").exists()


def test_green_means_a_hidden_layer_size_and_nothing_else():
    """No concept value of the palette but the hidden-layer sizes is green, and the two sizes of
    Fig. 3 (right) differ clearly in lightness."""
    import colorsys

    import matplotlib.colors as mcolors
    for key, value in [*plots.COLOURS.items(), *enumerate(plots.OTHER_SERIES)]:
        hue, lightness, saturation = colorsys.rgb_to_hls(*mcolors.to_rgb(value))
        assert not (70 / 360 < hue < 170 / 360 and saturation > 0.2), f"{key} is green"
    light = [colorsys.rgb_to_hls(*mcolors.to_rgb(plots.hidden_units_colour(F)))[1]
             for F in (256, 1024)]
    assert light[0] - light[1] > 0.2


def test_fig4_names_dashed_lines_only_when_it_draws_them():
    def curve(loss, eta, dropout):
        return {"loss": loss, "learning_rate": eta, "dropout": dropout, "hidden_units": 16,
                "hidden_activation": "relu", "optimizer": "adagrad", "dataset": "d",
                "label": f"{loss} {eta} {dropout}", "updates": [10, 20, 400],
                "rankloss": [0.3, 0.2, 0.1], "MAP": [0.5, 0.6, 0.7]}
    plain = [curve(loss, eta, 0.0) for loss in ("pwe", "ce") for eta in (0.01, 0.1)]
    assert "dashed" not in plots.plot_learning_rates(plain)._suptitle.get_text()
    with_dropout = plain + [curve("ce", 0.1, 0.5)]
    assert "dashed = dropout" in plots.plot_learning_rates(with_dropout)._suptitle.get_text()


def test_the_course_index_lists_every_colour_of_the_palette_once():
    """notebooks/README.md, "Colours and line styles", names every value the palette colours."""
    from pathlib import Path
    index = (Path(__file__).resolve().parents[1] / "notebooks" / "README.md").read_text()
    section = index.split("## Colours and line styles")[1].split("\n## ")[0].lower()
    assert index.count("## Colours and line styles") == 1
    for key in plots.COLOURS:
        name = key.replace("η=", "").lower()
        assert name in section, f"the course index does not name the colour of {key!r}"


def _png_dpi(path):
    """The resolution a PNG records in its pHYs chunk, in dots per inch (None if it has none)."""
    import struct
    data, at = path.read_bytes(), 8
    while at < len(data):
        (size,), kind = struct.unpack(">I", data[at:at + 4]), data[at + 4:at + 8]
        if kind == b"pHYs":
            x, _, unit = struct.unpack(">IIB", data[at + 8:at + 17])
            return x * 0.0254 if unit == 1 else None
        at += 12 + size
    return None


def test_every_committed_figure_is_saved_at_100_dpi_or_more():
    from pathlib import Path
    figures = sorted((Path(__file__).resolve().parents[1] / "figures").glob("*.png"))
    assert figures
    low = {path.name: _png_dpi(path) for path in figures if (_png_dpi(path) or 0) < 99.5}
    assert not low, f"figures below 100 dpi: {low}"


@pytest.mark.parametrize("every, last", [(10, 30), (20, 400), (10, 1000)])
def test_fig4s_log_axis_labels_do_not_overlap(every, last):
    """The x tick labels of Fig. 4's log axes (evaluations every 10 or 20 updates, runs of 30 to
    1,000 updates, as in notebook 05) never overlap."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    updates = list(range(every, last + 1, every))
    curves = [{"loss": loss, "learning_rate": eta, "dropout": 0.0, "hidden_units": 64,
               "hidden_activation": "relu", "optimizer": "adagrad", "dataset": "d",
               "label": f"{loss} {eta}", "updates": updates,
               "rankloss": list(np.linspace(0.3, 0.01, len(updates))),
               "MAP": list(np.linspace(0.5, 0.9, len(updates)))}
              for loss in ("pwe", "ce") for eta in (0.01, 0.1)]
    fig = plots.plot_learning_rates(curves)
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    for ax in fig.axes:
        boxes = [label.get_window_extent(renderer) for label in ax.get_xticklabels(which="both")
                 if label.get_visible() and label.get_text()
                 and ax.get_xlim()[0] <= label.get_position()[0] <= ax.get_xlim()[1]]
        assert len(boxes) >= 2
        boxes.sort(key=lambda box: box.x0)
        assert all(left.x1 < right.x0 for left, right in zip(boxes, boxes[1:]))


def test_update_rules_are_named_once_for_every_legend_and_title():
    """"AdaGrad" in Fig. 3 (left) and in every other legend or title, from one table."""
    assert UPDATE_RULES["adagrad"] == "AdaGrad"
    dropout = plots.plot_dropout(_curves(optimizer="adagrad"))
    rates = plots.plot_learning_rates(_curves(optimizer="adagrad"))
    for fig in (dropout, rates):
        axes, suptitle = _texts(fig)
        title = suptitle or axes[0].get_title()
        assert "AdaGrad" in title and "adagrad" not in title, title
    stored = load_csv(ROOT / "figures" / "fig3_left_convergence.csv")
    assert {c["label"].split(",")[0] for c in stored} == {"AdaGrad", "momentum"}
