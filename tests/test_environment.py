"""The notebooks' environment policy: fast mode, reruns, and where figures go."""

import os
import subprocess
import sys
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


# -- under autograde -----------------------------------------------------------------------------

@pytest.fixture
def autograded(monkeypatch):
    monkeypatch.setattr(environment, "AUTOGRADE", True)
    monkeypatch.delenv("MLNN_FAST", raising=False)
    monkeypatch.delenv("MLNN_FIGURES", raising=False)


def test_autograde_is_fast_mode_decided_at_import_as_the_graders_decide(autograded,
                                                                         monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)      # a student's unset changes nothing
    assert environment.autograde() and environment.fast_mode()
    script = ("from mlnn.course import grading\nfrom mlnn.figures import environment\n"
              "print(grading.AUTOGRADE, environment.AUTOGRADE)")
    for value, expected in (("", "False False"), ("autograde", "True True")):
        env = dict(os.environ, NBGRADER_EXECUTION=value, PYTHONPATH=str(ROOT))
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, check=True)
        assert done.stdout.strip() == expected


def test_autograde_leaves_no_scratch_folder_behind(tmp_path):
    script = "from mlnn.figures import environment\nprint(environment.figures_dir())\n"
    env = dict(os.environ, TMPDIR=str(tmp_path), PYTHONPATH=str(ROOT),
               NBGRADER_EXECUTION="autograde")
    env.pop("MLNN_FIGURES", None)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip().startswith(str(tmp_path / "mlnn-figures-"))
    assert list(tmp_path.iterdir()) == []


class Shell:
    def __init__(self):
        self.input_transformers_cleanup = []


def test_demonstration_cells_are_skipped_under_autograde_only(autograded, monkeypatch):
    shell = Shell()
    assert environment.skip_demonstrations(shell) and environment.skip_demonstrations(shell)
    (skip,) = shell.input_transformers_cleanup                  # registered once
    cell = [environment.DEMONSTRATION + "\n", "train_for_minutes()\n"]
    assert skip(cell) == [] and skip(["course.check_forward(forward)\n"]) != []
    monkeypatch.setattr(environment, "AUTOGRADE", False)
    assert not environment.skip_demonstrations(Shell())


def test_stored_results_are_read_from_the_notebooks_folder_first(monkeypatch, tmp_path):
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "fig4_learning_rates.csv").write_text("mine", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert environment.stored("fig4_learning_rates.csv").read_text(encoding="utf-8") == "mine"
    assert environment.stored_figures() == tmp_path / "figures"
    monkeypatch.chdir(ROOT / "notebooks")
    assert environment.stored_figures() == ROOT / "figures"
