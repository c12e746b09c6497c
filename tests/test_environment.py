"""The notebooks' environment policy: fast mode, reruns, and where figures go."""

from pathlib import Path

import pytest

from mlnn.base.errors import MLNNError
from mlnn.figures import environment

ROOT = Path(__file__).resolve().parents[1]


def _outside_the_project(directory):
    return directory.is_dir() and ROOT / "figures" not in (directory, *directory.parents)


def test_figures_dir_fast_mode_never_points_at_the_project(monkeypatch, tmp_path):
    monkeypatch.delenv("MLNN_FIGURES", raising=False)
    monkeypatch.setenv("MLNN_FAST", "1")
    monkeypatch.chdir(ROOT / "tests")
    assert environment.fast_mode()
    for refresh in ("0", "1"):                 # fast runs never refresh the committed figures
        monkeypatch.setenv("MLNN_REFRESH_FIGURES", refresh)
        assert _outside_the_project(environment.figures_dir())
    monkeypatch.setenv("MLNN_FIGURES", str(tmp_path / "out"))
    assert environment.figures_dir() == tmp_path / "out" and (tmp_path / "out").is_dir()


def test_full_mode_writes_to_scratch_unless_a_refresh_is_asked_for(monkeypatch, tmp_path):
    monkeypatch.delenv("MLNN_FIGURES", raising=False)
    monkeypatch.delenv("MLNN_REFRESH_FIGURES", raising=False)
    monkeypatch.setenv("MLNN_FAST", "0")
    monkeypatch.chdir(ROOT / "tests")
    assert not environment.fast_mode()
    first, second = environment.figures_dir(), environment.figures_dir()
    assert _outside_the_project(first) and _outside_the_project(second) and first != second
    monkeypatch.setenv("MLNN_REFRESH_FIGURES", "0")
    assert _outside_the_project(environment.figures_dir())
    monkeypatch.setenv("MLNN_REFRESH_FIGURES", "1")
    assert environment.figures_dir() == ROOT / "figures"
    monkeypatch.setenv("MLNN_FIGURES", str(tmp_path / "chosen"))     # MLNN_FIGURES still wins
    assert environment.figures_dir() == tmp_path / "chosen"


def test_rerun_mode_follows_the_environment(monkeypatch):
    monkeypatch.setenv("MLNN_RERUN", "1")
    assert environment.rerun_mode()
    monkeypatch.setenv("MLNN_RERUN", "0")
    assert not environment.rerun_mode()
    monkeypatch.delenv("MLNN_RERUN")
    assert not environment.rerun_mode()


def test_project_root_is_found_from_inside_the_project_only(tmp_path):
    assert environment.project_root(ROOT / "tests") == ROOT
    assert environment.project_root(tmp_path) is None


def test_a_false_claim_stops_a_full_run_and_is_reported_in_fast_mode(monkeypatch, capsys):
    monkeypatch.setenv("MLNN_FAST", "0")
    environment.claim(1 < 2, "one is below two")
    assert capsys.readouterr().out == "checked: one is below two\n"
    with pytest.raises(MLNNError, match="the text claims that two is below one"):
        environment.claim(2 < 1, "two is below one")
    monkeypatch.setenv("MLNN_FAST", "1")
    environment.claim(2 < 1, "two is below one")
    assert capsys.readouterr().out == "not so in this fast run: two is below one\n"


# -- nothing about grading -----------------------------------------------------------------------

def test_nothing_the_notebooks_run_reads_whether_they_are_graded(monkeypatch):
    """Grades are decided outside the student's kernel: fast mode is MLNN_FAST alone, whatever
    nbgrader's variables say, and no notebook skips a cell of its own accord."""
    monkeypatch.delenv("MLNN_FAST", raising=False)
    for variable in ("NBGRADER_EXECUTION", "NBGRADER_VALIDATING"):
        monkeypatch.setenv(variable, "autograde")
    assert not environment.fast_mode()
    source = Path(environment.__file__).read_text(encoding="utf-8")
    assert "NBGRADER" not in source and "AUTOGRADE" not in source.upper()
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        text = path.read_text(encoding="utf-8")
        assert "NBGRADER" not in text and "skip_demonstrations" not in text, path.name
        assert "skipped when autograded" not in text, path.name


def test_stored_results_are_read_from_the_notebooks_folder_first(monkeypatch, tmp_path):
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "fig4_learning_rates.csv").write_text("mine", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert environment.stored("fig4_learning_rates.csv").read_text(encoding="utf-8") == "mine"
    assert environment.stored_figures() == tmp_path / "figures"
    monkeypatch.chdir(ROOT / "notebooks")
    assert environment.stored_figures() == ROOT / "figures"
