"""Execute every teaching notebook top to bottom in fast mode (MLNN_FAST=1), failing on any error.

Fast mode shrinks the experiments and sends figures to ``MLNN_FIGURES`` (a temporary directory
here), so the committed figures in ``figures/`` must come out untouched.
"""

import hashlib
import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXPECTED = [f"{k:02d}" for k in range(1, 8)]

#: Figures each notebook must save (in fast mode, to MLNN_FIGURES).
FIGURES = {
    "01": ["nb1_pwe_timings.png"],
    "02": ["fig2a_ce_vs_pwe.png", "fig2b_tanh_vs_relu.png", "fig2_gradient_norms.png"],
    "03": ["fig3_left_convergence.png", "fig3_left_convergence.csv"],
    "04": ["fig3_right_dropout.png", "fig3_right_dropout.csv", "fig3_right_dropout_eta0.1.png",
           "fig3_right_dropout_eta0.1.csv"],
    "05": ["fig4_learning_rates.png", "fig4_learning_rates.csv"],
    "06": ["nb6_thresholds.png", "nb6_threshold_targets.png"],
    "07": [],
}
NEEDS_DATA = {"03", "04", "05", "06"}


def _digest(directory):
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(directory.glob("*")) if path.is_file()}


def test_all_seven_notebooks_exist_in_reading_order():
    assert [path.name[:2] for path in NOTEBOOKS] == EXPECTED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_stored_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, \
                f"{path.name} holds outputs; store notebooks cleared"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_in_fast_mode(path, tmp_path, monkeypatch, request):
    number = path.name[:2]
    if number in NEEDS_DATA:
        request.getfixturevalue("data_dir")
    figures = ROOT / "figures"
    before = _digest(figures) if figures.is_dir() else {}
    out = tmp_path / "figures"
    monkeypatch.setenv("MLNN_FAST", "1")
    monkeypatch.setenv("MLNN_FIGURES", str(out))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()       # raises CellExecutionError on the first failing cell
    for name in FIGURES[number]:
        assert (out / name).is_file(), f"{path.name} did not save {name}"
    assert (_digest(figures) if figures.is_dir() else {}) == before, \
        f"{path.name} changed the committed figures in fast mode"
