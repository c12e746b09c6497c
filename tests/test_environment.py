"""The notebooks' environment policy: fast mode, reruns, and where figures go."""

from pathlib import Path

from mlnn.figures import environment

ROOT = Path(__file__).resolve().parents[1]


def test_figures_dir_fast_mode_never_points_at_the_project(monkeypatch, tmp_path):
    monkeypatch.delenv("MLNN_FIGURES", raising=False)
    monkeypatch.setenv("MLNN_FAST", "1")
    assert environment.fast_mode()
    fast_dir = environment.figures_dir()
    assert fast_dir.is_dir() and ROOT / "figures" not in (fast_dir, *fast_dir.parents)
    monkeypatch.setenv("MLNN_FIGURES", str(tmp_path / "out"))
    assert environment.figures_dir() == tmp_path / "out" and (tmp_path / "out").is_dir()
    monkeypatch.delenv("MLNN_FIGURES")
    monkeypatch.setenv("MLNN_FAST", "0")
    monkeypatch.chdir(ROOT / "tests")
    assert not environment.fast_mode()
    assert environment.figures_dir() == ROOT / "figures"


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
