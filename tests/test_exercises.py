"""The course's registry and its graders as a notebook calls them (``from mlnn import course``):
every exercise of :data:`mlnn.course.registry.EXERCISES` has its grader, the worked solution in
notebooks/solutions/ passes it, an answer left open or raising is reported, every mistake of its
table is rejected with its own hint, and autograde is decided once, at import."""

import ast
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mlnn import course
from mlnn.course import grading
from mlnn.course.registry import EXERCISES as REGISTRY
from mlnn.course.registry import SOLUTIONS as SOLUTION_STEMS
from mlnn.course.registry import Exercise, exercise

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "notebooks" / "solutions"


def solutions(stem):
    """The worked solutions of one notebook (the instructor's file), as a module."""
    spec = importlib.util.spec_from_file_location(stem, SOLUTIONS / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: (grader, solution file, answer name) for every exercise of the registry.
EXERCISES = [(getattr(course, e.grader), e.solution, e.name) for e in REGISTRY]
IDS = [e.grader for e in REGISTRY]


def test_the_registry_lists_each_exercise_once_with_points_by_effort():
    assert len(REGISTRY) == 39
    assert len({(e.notebook, e.name) for e in REGISTRY}) == len(REGISTRY)
    assert len({e.grader for e in REGISTRY}) == len(REGISTRY)
    assert {e.notebook for e in REGISTRY} == set(SOLUTION_STEMS)
    assert all(isinstance(e.points, int) and 1 <= e.points <= 4 for e in REGISTRY)
    assert exercise("01b", "train").points > exercise("01b", "ce_delta2").points == 1
    assert all(isinstance(e.reaches, tuple) and all(isinstance(r, str) for r in e.reaches)
               for e in REGISTRY)
    assert "mlnn.paper.ranks.friedman_test" in exercise("08", "friedman_chi2").reaches
    assert exercise("06b", "select_C") == Exercise(*exercise("06b", "select_C"))
    with pytest.raises(KeyError, match="its exercises: delta1_tanh"):
        exercise("01", "nothing")


@pytest.mark.parametrize("entry", REGISTRY, ids=IDS)
def test_every_grader_is_reached_as_mlnn_course_and_the_solution_defines_the_answer(entry):
    grader = getattr(course, entry.grader)
    assert callable(grader) and grader.__name__ == entry.grader
    assert hasattr(solutions(entry.solution), entry.name)


@pytest.mark.parametrize("grader, stem, name", EXERCISES, ids=IDS)
def test_worked_solution_passes(grader, stem, name, capsys):
    assert grader(getattr(solutions(stem), name))
    assert capsys.readouterr().out.startswith("PASS")


def _answer_cell(entry):
    """The notebook's cells and the index of the answer cell of ``entry``."""
    (path,) = (ROOT / "notebooks").glob(f"{entry.notebook}_*.ipynb")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    (index,) = [i for i, cell in enumerate(cells)
                if cell["metadata"].get("nbgrader", {}).get("grade_id")
                == f"{entry.notebook}-{entry.name}"]
    return cells, index


def _notebook_imports(entry):
    """The import statements of the notebook's code cells above the answer cell."""
    cells, index = _answer_cell(entry)
    lines = []
    for cell in cells[:index]:
        if cell["cell_type"] == "code":
            source = "".join(cell["source"])
            lines += [ast.get_source_segment(source, node) for node in ast.parse(source).body
                      if isinstance(node, (ast.Import, ast.ImportFrom))]
    return "\n".join(lines)


def _pasted(entry):
    """What a student pastes into the answer cell: the solution file's definition of the answer,
    after the private helpers (``_name``) it calls, as written there, without the file's imports."""
    source = (SOLUTIONS / f"{entry.solution}.py").read_text(encoding="utf-8")
    defined = {node.name: node for node in ast.parse(source).body
               if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    answer = defined[entry.name]
    used = {node.id for node in ast.walk(answer) if isinstance(node, ast.Name)}
    nodes = [defined[h] for h in sorted(used) if h.startswith("_") and h in defined] + [answer]
    return "\n\n\n".join(ast.get_source_segment(source, node) for node in nodes)


@pytest.mark.parametrize("entry", REGISTRY, ids=IDS)
def test_worked_solution_passes_pasted_as_is_into_its_answer_cell(entry, capsys):
    """The definition of the solution file, pasted into the answer cell, needs nothing but what
    the notebook imports above that cell and the earlier answers of the notebook, pasted the same
    way (the solution file's own imports stay behind)."""
    namespace = {}
    exec(compile(_notebook_imports(entry), "imports above the answer cell", "exec"), namespace)
    earlier = [e for e in REGISTRY if e.notebook == entry.notebook
               and _answer_cell(e)[1] < _answer_cell(entry)[1]]
    for answer in earlier + [entry]:
        exec(compile(_pasted(answer), f"{answer.solution}.py pasted", "exec"), namespace)
    assert getattr(course, entry.grader)(namespace[entry.name])
    assert capsys.readouterr().out.startswith("PASS")


def _parameters(source, name):
    """The parameters of ``name`` in ``source``, of the function or of each method of the class:
    {function: (the names, how many of them have no default)}."""
    node = next(n for n in ast.parse(source).body
                if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name)
    functions = [node] if isinstance(node, ast.FunctionDef) else [
        n for n in node.body if isinstance(n, ast.FunctionDef)]
    return {f.name: ([a.arg for a in f.args.args], len(f.args.args) - len(f.args.defaults))
            for f in functions}


@pytest.mark.parametrize("entry", REGISTRY, ids=IDS)
def test_the_stub_of_each_answer_cell_takes_what_the_grader_passes(entry):
    """The stub's parameters are the worked solution's (which the grader calls), but for
    trailing ones that have a default there."""
    (path,) = (ROOT / "notebooks").glob(f"{entry.notebook}_*.ipynb")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    (stub,) = ["".join(cell["source"]) for cell in cells
               if cell["metadata"].get("nbgrader", {}).get("grade_id")
               == f"{entry.notebook}-{entry.name}"]
    solution = (SOLUTIONS / f"{entry.solution}.py").read_text(encoding="utf-8")
    worked = _parameters(solution, entry.name)
    for function, (names, _) in _parameters(stub, entry.name).items():
        solved, required = worked[function]
        assert names == solved[:max(len(names), required)], f"{path.name}: {function}"


@pytest.mark.parametrize("grader", [g for g, _, _ in EXERCISES], ids=IDS)
def test_an_exercise_left_open_is_reported_not_raised(grader, capsys):
    def not_done(*args):
        ...
    assert not grader(not_done)
    assert capsys.readouterr().out.startswith("NOT YET")


def test_a_failing_function_is_reported_not_raised(capsys):
    def broken(*args):
        raise ZeroDivisionError("oops")
    assert course.check_delta1(broken) is False
    assert "ZeroDivisionError" in capsys.readouterr().out


#: Every grader with a table of mistakes: each mistake is also a wrong answer.
TABLES = [(grader, mistake) for grader, _, _ in EXERCISES
          for mistake in getattr(grader, "mistakes", ())]


@pytest.mark.parametrize("grader, mistake", TABLES,
                         ids=[f"{g.__name__}-{i}" for i, (g, _) in enumerate(TABLES)])
def test_every_mistake_of_a_table_is_rejected_with_its_own_hint(grader, mistake, capsys):
    assert not grader(mistake.answer)
    out = capsys.readouterr().out
    assert out.startswith("NOT YET") and mistake.hint in out, out


def test_without_autograde_a_wrong_answer_prints_and_the_notebook_goes_on(monkeypatch, capsys):
    monkeypatch.setitem(grading.grade.__kwdefaults__, "_autograde", False)
    assert course.check_delta1(course.derivatives.DELTA1_MISTAKES[0].answer) is False
    assert capsys.readouterr().out.startswith("NOT YET")


def test_under_autograde_a_wrong_answer_fails_the_cell_with_the_same_message(monkeypatch, capsys):
    monkeypatch.setitem(grading.grade.__kwdefaults__, "_autograde", True)
    mistake = course.derivatives.DELTA1_MISTAKES[1]
    with pytest.raises(AssertionError) as failure:
        course.check_delta1(mistake.answer)
    out = capsys.readouterr().out
    assert out.startswith("NOT YET") and str(failure.value) == out.strip()
    assert mistake.hint in str(failure.value)
    with pytest.raises(AssertionError, match="no answer yet"):
        course.check_delta1(lambda *args: None)


def test_under_autograde_a_right_answer_passes_quietly(monkeypatch, capsys):
    monkeypatch.setitem(grading.grade.__kwdefaults__, "_autograde", True)
    assert course.check_delta1(solutions("ex01_derivatives").delta1_tanh) is True
    assert capsys.readouterr().out.startswith("PASS")


def test_unsetting_the_variable_after_import_does_not_turn_autograde_off(monkeypatch, capsys):
    monkeypatch.setitem(grading.grade.__kwdefaults__, "_autograde", True)  # as under nbgrader
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    with pytest.raises(AssertionError, match="NOT YET"):
        course.check_delta1(lambda *args: None)
    monkeypatch.setenv("NBGRADER_EXECUTION", "")
    with pytest.raises(AssertionError, match="NOT YET"):
        course.check_delta1(lambda *args: None)


#: A student's first answer cell that tries to switch the grade off, then a wrong answer.
TAMPERING = textwrap.dedent("""
    import os
    from mlnn import course
    os.environ.pop("NBGRADER_EXECUTION")
    os.environ["NBGRADER_EXECUTION"] = ""
    try:
        course.check_delta1(lambda delta2, W2, h: None)
    except AssertionError:
        print("cell failed")
""")


@pytest.mark.parametrize("value, failed", [("autograde", True), ("validate", True), ("", False)])
def test_autograde_is_decided_by_the_variable_at_import_in_a_fresh_kernel(value, failed):
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "NBGRADER_EXECUTION": value}
    done = subprocess.run([sys.executable, "-c", TAMPERING], env=environ, capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("NOT YET") and ("cell failed" in done.stdout) is failed


def _top_level_names(path):
    """The names a module of mlnn/course defines at its top level."""
    names = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [target.id for target in node.targets if isinstance(target, ast.Name)]
    return names


COURSE = sorted((ROOT / "mlnn" / "course").glob("*.py"))


def test_no_name_is_defined_twice_across_the_course_modules():
    defined = [name for path in COURSE if path.stem != "__init__"
               for name in _top_level_names(path)]
    assert sorted({name for name in defined if defined.count(name) > 1}) == []


#: The modules holding graders, one per concept; the helpers they share are the others.
GRADER_MODULES = ("derivatives", "pwe", "loss_landscapes", "update_rules", "dropout_masks",
                  "training_loop", "ranking_measures", "bipartition", "comparison")


def test_every_grader_of_the_registry_is_defined_in_a_grader_module():
    defined = {name for module in GRADER_MODULES
               for name in _top_level_names(ROOT / "mlnn" / "course" / f"{module}.py")}
    assert {e.grader for e in REGISTRY} <= defined


@pytest.mark.parametrize("module", GRADER_MODULES)
def test_no_grader_module_imports_another(module):
    path = ROOT / "mlnn" / "course" / f"{module}.py"
    imported = {node.module for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.ImportFrom)}
    others = {f"mlnn.course.{name}" for name in GRADER_MODULES}
    assert not imported & others, imported


def test_assigning_autograde_after_import_leaves_a_failing_grader_raising(monkeypatch, capsys):
    monkeypatch.setitem(grading.grade.__kwdefaults__, "_autograde", True)   # as under nbgrader
    monkeypatch.setattr(grading, "AUTOGRADE", False)
    with pytest.raises(AssertionError, match="NOT YET"):
        course.check_delta1(lambda *args: None)
    assert capsys.readouterr().out.startswith("NOT YET")
