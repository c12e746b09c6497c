"""What ``python -m mlnn`` imports as it starts: ``--help`` no NumPy, the model commands nothing
of the course or of nbgrader (counted with ``python -X importtime``, not timed); and the
start-up benchmark ``bench --startup``."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mlnn.cli import COMMANDS, build_parser, main
from mlnn.tools.startup import COURSE_MODULES, format_startup, imported_modules, text_model

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "scipy", "matplotlib")


def _of(modules, prefixes):
    return sorted(m for m in modules if any(m == p or m.startswith(p if p.endswith("_") else
                                                                     p + ".") for p in prefixes))


def test_the_module_finder_sees_what_a_command_imports():
    modules = imported_modules(["data", "list"], cwd=ROOT)
    assert "mlnn.cli.data" in modules and "numpy" in modules and "mlnn.cli.model" not in modules
    assert _of(["mlnn.course.x", "mlnn.tools.course_audit", "mlnn.tools.bench", "nbgrader"],
               COURSE_MODULES) == ["mlnn.course.x", "mlnn.tools.course_audit", "nbgrader"]


def test_help_imports_no_command_module_and_no_heavy_library():
    modules = imported_modules(["--help"], cwd=ROOT)
    assert _of(modules, HEAVY + COURSE_MODULES) == []
    assert {m for m in modules if m.startswith("mlnn.")} <= {
        "mlnn.base", "mlnn.base.errors", "mlnn.base.interrupts", "mlnn.cli"}


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("startup")
    (folder / "sentence.txt").write_text("Oil prices fell as the bank cut rates.\n")
    return text_model(folder / "text.npz"), folder / "sentence.txt"


@pytest.mark.parametrize("command", ["train", "evaluate", "predict"])
def test_the_model_commands_import_nothing_of_the_course_nbgrader_or_the_figures(model,
                                                                                command):
    path, sentence = model
    args = {"predict": ["predict", "--model", str(path), "--text", str(sentence)]}.get(
        command, [command, "--help"])
    modules = imported_modules(args, cwd=ROOT)
    assert "mlnn.cli.model" in modules
    assert _of(modules, COURSE_MODULES + ("matplotlib", "mlnn.figures")) == []


def test_each_command_is_listed_with_the_help_line_its_module_gives():
    listed = {action.dest: action.help
              for action in build_parser()._subparsers._group_actions[0]._choices_actions}
    assert listed == {name: line for name, (_, line) in COMMANDS.items()}
    lazy = build_parser(["--help"])._subparsers._group_actions[0]._choices_actions
    assert [(a.dest, a.help) for a in lazy] == [(n, line) for n, (_, line) in COMMANDS.items()]


def test_help_lists_every_command_in_order():
    result = subprocess.run([sys.executable, "-m", "mlnn", "--help"], capture_output=True,
                            text=True, cwd=ROOT, timeout=120)
    listed = [line.split()[0] for line in result.stdout.splitlines()
              if line.startswith("    ") and line[4:5].strip()]     # not a wrapped help line
    assert listed == list(COMMANDS), result.stdout


def test_bench_startup_times_each_command_in_fresh_processes(model, capsys):
    path, _ = model
    assert main(["bench", "--startup", "--repeats", "2", "--model", str(path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["seconds"]) == {"help", "predict_text", "pip_version"}
    for entry in result["seconds"].values():
        assert len(entry["runs"]) == 2 and min(entry["runs"]) <= entry["median"] > 0
    assert result["repeats"] == 2 and len(result["load_average"]) == 3
    assert result["model"] == f"text.npz, {path.stat().st_size:,} bytes"
    report = format_startup(result).splitlines()
    assert "median of 2 runs, predict with text.npz" in report[0]
    assert [line.split()[:2] for line in report[1:]] == [
        [name, f"{entry['median']:.3f}"] for name, entry in result["seconds"].items()]


@pytest.mark.parametrize("extra, message", [
    (["--repeats", "0"], "--repeats must be a positive integer, got 0"),
    (["--model", "missing.npz"], "--model: missing.npz does not exist"),
])
def test_bench_startup_refuses_bad_options_in_one_line(tmp_path, monkeypatch, capsys, extra,
                                                       message):
    monkeypatch.chdir(tmp_path)
    assert main(["bench", "--startup", *extra]) == 2
    assert message in capsys.readouterr().err
