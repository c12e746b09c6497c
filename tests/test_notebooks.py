"""The teaching notebooks: stored with the outputs of a full run, and executable in fast mode.

The committed notebooks carry the outputs of one top-to-bottom run in the default (full) mode, so
they read on the web without running; :func:`test_stored_outputs_are_a_complete_full_run` fails
if a cell's output is an error, or missing where the cell prints or draws something.

The suite executes every notebook again in fast mode (MLNN_FAST=1), with the real data if
MLNN_DATA names it and also with an empty data directory (the notebooks then fall back to the
stored curves and the synthetic collection). Fast mode sends figures to ``MLNN_FIGURES`` (a
temporary directory here), so the committed figures in ``figures/`` must come out untouched.
"""

import hashlib
import importlib.util
import json
import math
import os
import re
from pathlib import Path

import pytest

from mlnn.base.errors import MLNNError
from mlnn.figures import environment
from mlnn.figures.curves import load_csv
from mlnn.paper.ranks import Q_ALPHA

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

#: The course, in reading order.
COURSE = ["01_network_and_derivatives", "01b_build_it_from_zero", "02_loss_landscapes",
          "02b_optimizers_and_dropout",
          "03_convergence", "04_dropout", "05_learning_rates", "06_thresholds",
          "06b_measures_and_baseline", "07_paper_table",
          "08_beyond_the_paper"]

#: Notebooks stored with the outputs of a full run.
WITH_OUTPUTS = COURSE

#: Figures (and tables) each notebook must save (in fast mode, to MLNN_FIGURES).
FIGURES = {
    "01_network_and_derivatives": ["nb1_pwe_timings.png"],
    "01b_build_it_from_zero": ["nb1b_yours_vs_mlnn.png"],
    "02_loss_landscapes": ["fig2a_ce_vs_pwe.png", "fig2b_tanh_vs_relu.png",
                           "fig2_gradient_norms.png"],
    "02b_optimizers_and_dropout": ["nb2b_adagrad_rates.png"],
    "03_convergence": ["fig3_left_convergence.png", "nb3_live_convergence.png"],
    "04_dropout": ["fig3_right_dropout.png", "fig3_right_dropout_eta0.1.png",
                   "nb4_live_dropout.png"],
    "05_learning_rates": ["fig4_learning_rates.png", "nb5_live_learning_rates.png"],
    "06_thresholds": ["nb6_thresholds.png", "nb6_threshold_targets.png"],
    "06b_measures_and_baseline": ["nb6b_label_frequencies.png", "nb6b_C_selection.png"],
    "07_paper_table": ["fig7_table3_delicious.png", "fig7_table3_reuters21578.png",
                       "nb7_curves_reuters21578_NN_A.png", "nb7_curves_reuters21578_NN_AD.png",
                       "nb7_curves_delicious_NN_A.png", "nb7_curves_delicious_NN_AD.png"],
    "08_beyond_the_paper": ["fig8_cd_diagrams.png", "fig8_seeds.png", "table2_beyond.md"],
}

#: Notebooks that read a real dataset and fall back to synthetic data without it.
READS_DATA = {"01b_build_it_from_zero",
              "03_convergence", "04_dropout", "05_learning_rates", "06_thresholds",
              "06b_measures_and_baseline"}

#: Notebooks whose text states no result it does not print: every number of the markdown with
#: three or more decimals appears in the stored outputs, which hold the ``environment.claim``
#: checks of a full run.
TEXT_FROM_OUTPUTS = ["01_network_and_derivatives", "01b_build_it_from_zero", "02_loss_landscapes",
                     "02b_optimizers_and_dropout", "03_convergence",
                     "04_dropout", "05_learning_rates", "06_thresholds",
                     "06b_measures_and_baseline", "07_paper_table", "08_beyond_the_paper"]

#: A number with three or more decimals, as the text quotes a result.
DECIMAL = re.compile(r"(?<![\w.])\d+\.\d{3,}(?!\d)")

#: The largest notebook file we store (outputs included).
MAX_BYTES = 1_500_000

#: A code cell that calls one of these at its top level is expected to have an output.
SHOWS_SOMETHING = re.compile(r"^(print|show|display|summary|course\.check_\w+)\(", re.M)


def _digest(directory):
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(directory.glob("*")) if path.is_file()}


def _code_cells(path):
    return [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]


def _text(output):
    if output.output_type == "stream":
        return output.text
    return output.get("data", {}).get("text/plain", "")


def test_the_course_notebooks_exist_in_reading_order():
    stems = [path.stem for path in NOTEBOOKS]
    assert [stem for stem in stems if stem in COURSE] == COURSE
    assert all(re.match(r"\d\d[a-z]?_", stem) for stem in stems), stems


@pytest.mark.parametrize("stem", WITH_OUTPUTS)
def test_stored_outputs_are_a_complete_full_run(stem):
    path = ROOT / "notebooks" / f"{stem}.ipynb"
    assert path.stat().st_size < MAX_BYTES, f"{path.name} is larger than {MAX_BYTES} bytes"
    cells = _code_cells(path)
    counts = [cell.execution_count for cell in cells]
    assert counts == list(range(1, len(cells) + 1)), \
        f"{path.name}: execution counts {counts} are not one top-to-bottom run"
    for number, cell in enumerate(cells, start=1):
        errors = [o for o in cell.outputs if o.output_type == "error"
                  or (o.output_type == "stream" and o.name == "stderr" and "Traceback" in o.text)]
        assert not errors, f"{path.name}, code cell {number} stores an error: {errors[0]}"
        if SHOWS_SOMETHING.search(cell.source):
            assert cell.outputs, f"{path.name}, code cell {number} should have an output"
    first = "".join(_text(o) for o in cells[0].outputs)
    assert "full mode" in first and "FAST MODE" not in first, \
        f"{path.name} stores the outputs of a fast run: {first[:200]!r}"


@pytest.mark.parametrize("stem", WITH_OUTPUTS)
def test_stored_figures_are_png(stem):
    path = ROOT / "notebooks" / f"{stem}.ipynb"
    kinds = {kind for cell in _code_cells(path) for o in cell.outputs
             for kind in o.get("data", {}) if kind.startswith("image/")}
    assert kinds <= {"image/png"}, f"{path.name} stores {kinds}"
    assert ("image/png" in kinds) == bool(FIGURES.get(stem)), path.name
    json.loads(path.read_text(encoding="utf-8"))             # valid JSON


@pytest.mark.parametrize("stem", TEXT_FROM_OUTPUTS)
def test_numbers_in_the_text_are_printed_and_its_claims_checked(stem):
    cells = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4).cells
    printed = "".join(_text(o) for cell in cells if cell.cell_type == "code" for o in cell.outputs)
    text = "\n".join(cell.source for cell in cells if cell.cell_type == "markdown")
    missing = [number for number in DECIMAL.findall(text) if number not in printed]
    assert not missing, f"{stem}: the text quotes {missing}, which no output prints"
    assert "checked: " in printed and "not so in this fast run" not in printed, stem


#: A markdown link or image, ``[text](target)`` or ``![alt](target)``, or an HTML src/href.
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)|(?:src|href)=[\"']([^\"']+)")


def _links(text):
    """The local targets of the links and images of a markdown text (no URL, no anchor)."""
    targets = [a or b for a, b in LINK.findall(text)]
    return [t.split("#")[0] for t in targets
            if not re.match(r"[a-z][a-z0-9+.-]*:", t, re.I) and not t.startswith("#")]


def _unserved(target, folder, root):
    """Why ``jupyter lab notebooks/`` would not serve ``target`` linked from ``folder``, or None:
    the server refuses whatever resolves outside its root, and a file that is not there."""
    path = (folder / target).resolve()
    if not path.is_relative_to(root.resolve()):
        return f"{target} lies outside {root.name}/, which the server refuses (403)"
    return None if path.exists() else f"{target} does not exist"


def test_every_markdown_link_and_image_is_served_by_jupyter_lab_notebooks():
    """What ``jupyter lab notebooks/`` serves: the notebooks' links stay inside their own folder
    too (a released assignment is one notebook's folder), the course index's inside notebooks/."""
    root = ROOT / "notebooks"
    broken = []
    for path in NOTEBOOKS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown":
                broken += [f"{path.name}: {why}" for target in _links(cell.source)
                           if (why := _unserved(target, path.parent, path.parent))]
    for path in sorted(root.rglob("*.md")):
        broken += [f"{path.relative_to(root)}: {why}"
                   for target in _links(path.read_text(encoding="utf-8"))
                   if (why := _unserved(target, path.parent, root))]
    assert not broken, "\n".join(broken)


def test_the_link_check_refuses_a_link_above_the_root_and_a_missing_file(tmp_path):
    (tmp_path / "a.png").write_bytes(b"")
    assert _links("![x](../figures/a.png) [y](https://e.org) [z](#top) <img src='b.png'>") == \
        ["../figures/a.png", "b.png"]
    assert "outside" in _unserved("../a.png", tmp_path / "sub", tmp_path / "sub")
    assert "does not exist" in _unserved("b.png", tmp_path, tmp_path)
    assert _unserved("a.png", tmp_path, tmp_path) is None


def _execute(path, tmp_path, monkeypatch, data=None, fast=True):
    figures = ROOT / "figures"
    before = _digest(figures) if figures.is_dir() else {}
    out = tmp_path / "figures"
    if fast:
        monkeypatch.setenv("MLNN_FAST", "1")
    else:
        monkeypatch.delenv("MLNN_FAST", raising=False)
    monkeypatch.setenv("MLNN_FIGURES", str(out))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.delenv("MLNN_RERUN", raising=False)
    if data is not None:
        monkeypatch.setenv("MLNN_DATA", str(data))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()       # raises CellExecutionError on the first failing cell
    for name in FIGURES.get(path.stem, []):
        assert (out / name).is_file(), f"{path.name} did not save {name}"
    assert (_digest(figures) if figures.is_dir() else {}) == before, \
        f"{path.name} changed the committed figures"
    first = "".join(_text(o) for o in notebook.cells[1].outputs) if len(notebook.cells) > 1 else ""
    return notebook, first


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_in_fast_mode(path, tmp_path, monkeypatch):
    _, first = _execute(path, tmp_path, monkeypatch)
    if path.stem in COURSE:
        assert "FAST MODE" in first and "smoke test" in first, first


@pytest.mark.slow
@pytest.mark.parametrize("fast", [True, False], ids=["fast", "full"])
@pytest.mark.parametrize("stem", sorted(READS_DATA))
def test_notebook_runs_without_the_data(stem, fast, tmp_path, monkeypatch):
    empty = tmp_path / "no-data"
    empty.mkdir()
    notebook, first = _execute(ROOT / "notebooks" / f"{stem}.ipynb", tmp_path, monkeypatch,
                               empty, fast)
    printed = "".join(_text(o) for cell in notebook.cells if cell.cell_type == "code"
                      for o in cell.outputs)
    assert "Falling back to the synthetic collection" in printed
    assert ("FAST MODE" in first) == fast, first


# -- what the notebooks read from the environment ------------------------------------------------

def test_the_banner_marks_fast_mode_as_a_smoke_test(monkeypatch):
    monkeypatch.setenv("MLNN_FAST", "1")
    assert "smoke test" in environment.banner() and "NOT the results" in environment.banner()
    monkeypatch.delenv("MLNN_FAST")
    assert environment.banner().startswith("full mode")


def test_stored_files_are_the_committed_ones_whatever_mlnn_figures_says(monkeypatch, tmp_path):
    monkeypatch.setenv("MLNN_FIGURES", str(tmp_path))
    monkeypatch.chdir(ROOT / "notebooks")
    expected = ROOT / "figures" / "fig4_learning_rates.csv"
    assert environment.stored("fig4_learning_rates.csv") == expected
    with pytest.raises(MLNNError, match="no_such_file.csv"):
        environment.stored("no_such_file.csv")


def test_a_missing_dataset_falls_back_to_the_synthetic_collection(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("MLNN_DATA", str(tmp_path))
    data, real = environment.load_or_synthetic("reuters21578", n_train=50, n_test=5)
    assert not real and data.name == "synthetic" and data.X_train.shape[0] == 50
    printed = capsys.readouterr().out
    assert "reuters21578 is not available" in printed and "NOT reuters21578's" in printed


def test_paths_inside_the_project_are_printed_relative_to_it(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT / "notebooks")
    assert str(environment.relative(ROOT / "figures")) == "figures"
    assert environment.relative(tmp_path) == tmp_path.resolve()


def test_every_written_answer_cell_says_that_the_answer_goes_into_it():
    prompts = [cell.source for path in NOTEBOOKS
               for cell in nbformat.read(path, as_version=4).cells
               if cell.cell_type == "markdown" and cell.source.startswith("**Your answer**")]
    assert len(prompts) == 12
    assert all(re.match(r"\*\*Your answer\*\* \(\d+ points?\)", p) for p in prompts)
    assert all("Write your answer in this cell, below this line" in p for p in prompts)


KEYS = ROOT / "notebooks" / "solutions" / "written_answers.md"


def test_every_written_answer_has_a_key_with_its_question_and_points():
    """notebooks/solutions/written_answers.md: one section per written answer, headed by its
    grade id, then the question as the cell asks it, then bullets whose points add up to the
    cell's."""
    expected = {}
    for path in NOTEBOOKS:
        for cell in nbformat.read(path, as_version=4).cells:
            prompt = re.match(r"\*\*Your answer\*\* \((\d+) points?\): (.+)", cell.source)
            if cell.cell_type == "markdown" and prompt:
                gid = f"{path.stem.split('_')[0]}-answer-{cell.id}"
                expected[gid] = (int(prompt.group(1)), prompt.group(2))
    sections = re.split(r"^## ", KEYS.read_text(encoding="utf-8"), flags=re.M)[1:]
    assert [s.split("\n")[0] for s in sections] == list(expected)
    for section in sections:
        gid, _, question, *body = section.split("\n")
        points, asked = expected[gid]
        assert question == asked[0].upper() + asked[1:], gid
        given = [int(n) for n in re.findall(r"^- \*\*(\d+) points?", "\n".join(body), re.M)]
        assert sum(given) == points, (gid, given, points)


def test_the_keys_quote_the_numbers_the_stored_results_give():
    spec = importlib.util.spec_from_file_location(
        "ex04", ROOT / "notebooks" / "solutions" / "ex04_dropout.py")
    ex04 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex04)
    keys = KEYS.read_text(encoding="utf-8")
    for curve in load_csv(ROOT / "figures" / "fig3_right_dropout_eta0.1.csv"):
        update, rise = ex04.best_update(curve)
        assert f"{update:,.0f}" in keys and f"{rise:.4f}".rstrip("0").rstrip(".") in keys, \
            curve["label"]
    for alpha, k, datasets in ((0.05, 8, 28), (0.05, 5, 10), (0.1, 8, 24), (0.1, 5, 8)):
        q = Q_ALPHA[alpha][k - 2]
        assert min(N for N in range(1, 100) if q * math.sqrt(k * (k + 1) / (6 * N)) < 2) == datasets
        assert f"{q:g}" in keys or f"{q:.3f}" in keys
        if alpha == 0.05:
            assert f"**{datasets} datasets**" in keys
    assert f"{Q_ALPHA[0.05][6] * math.sqrt(72 / 42):.2f}" in keys          # the study's 7
