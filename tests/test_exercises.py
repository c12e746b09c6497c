"""The course's registry and its graders as a notebook calls them (``from mlnn import course``):
every exercise of :data:`mlnn.course.registry.EXERCISES` has its grader, the worked solution in
notebooks/solutions/ passes it, an answer left open or raising is reported, every mistake of its
table is rejected with its own hint, a grader decides nothing, every name the registry lists
resolves, and a correct student's worked solution raises no flag."""

import ast
import importlib
import importlib.util
import inspect
import json
import re
from pathlib import Path

import pytest

from mlnn import course
from mlnn.course.grading import DRAWS, drawing
from mlnn.course.registry import EXERCISES as REGISTRY
from mlnn.course.registry import SOLUTIONS as SOLUTION_STEMS
from mlnn.course.registry import Exercise, exercise
from mlnn.course.standins import STAND_INS
from mlnn.tools import course_audit, nbgrader_course
from tests.across import judged
from tests.shown import shown

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


#: The exercises no library routine of mlnn's does for the student (nothing to flag).
NOTHING_TO_REACH = {"rmsprop_step", "RMSProp", "best_update", "better_than_paper"}


def test_the_registry_lists_each_exercise_once_with_points_by_effort():
    answer_cells = sum(len(nbgrader_course.exercises(nbgrader_course.read(path), path.stem))
                       for path in sorted((ROOT / "notebooks").glob("*.ipynb")))
    assert len(REGISTRY) == answer_cells
    assert {e.name for e in REGISTRY if not e.reaches} == NOTHING_TO_REACH
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
    assert shown(capsys).startswith("PASS")


@pytest.mark.parametrize("draw", [1000, 244926778035266, 7, 31337])
@pytest.mark.parametrize("grader, stem, name", [e for e in EXERCISES if "dropout" in e[0].__name__],
                         ids=[i for i in IDS if "dropout" in i])
def test_a_random_answer_done_right_passes_on_every_draw(grader, stem, name, draw, capsys):
    """Judged by its distribution, a right answer must not fail by chance on the grading draws
    (the first two once did: four calls at rate 0.0151 keeping counts too even, and three chance
    agreements of dropped coins at a distance of few pairs)."""
    token = drawing(draw, draw + 1)
    try:
        assert grader(getattr(solutions(stem), name)), shown(capsys)
    finally:
        DRAWS.reset(token)


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
    assert shown(capsys).startswith("NOT YET")


def test_a_failing_function_is_reported_not_raised(capsys):
    def broken(*args):
        raise ZeroDivisionError("oops")
    assert not course.check_delta1(broken)
    assert "ZeroDivisionError" in shown(capsys)


#: Every grader with a table of mistakes: each mistake is also a wrong answer.
TABLES = [(grader, mistake) for grader, _, _ in EXERCISES
          for mistake in getattr(grader, "mistakes", ())]


@pytest.mark.parametrize("grader, mistake", TABLES,
                         ids=[f"{g.__name__}-{i}" for i, (g, _) in enumerate(TABLES)])
def test_every_mistake_of_a_table_is_rejected_with_its_own_hint(grader, mistake, capsys):
    assert not judged(grader, mistake.answer)      # as the grading command judges an answer
    out = shown(capsys)
    assert out.startswith("NOT YET") and mistake.hint in out, out


def test_a_grader_decides_nothing_and_never_raises(monkeypatch, capsys):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    mistake = course.derivatives.DELTA1_MISTAKES[1]
    assert not course.check_delta1(mistake.answer)
    out = shown(capsys)
    assert out.startswith("NOT YET") and mistake.hint in out
    assert course.check_delta1(solutions("ex01_derivatives").delta1_tanh)
    assert shown(capsys).startswith("PASS")


def test_nothing_of_the_course_reads_the_environment():
    for path in sorted((ROOT / "mlnn" / "course").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"os\.environ|getenv|NBGRADER|AUTOGRADE", text), path.name


def _resolves(name):
    """Whether the dotted ``name`` is a module, or an attribute of one, that exists."""
    module, attribute = name, None
    while module:
        try:
            found = importlib.import_module(module)
        except ImportError:
            module, _, last = module.rpartition(".")
            attribute = last if attribute is None else f"{last}.{attribute}"
            continue
        for part in (attribute or "").split(".") if attribute else []:
            if not hasattr(found, part):
                return False
            found = getattr(found, part)
        return True
    return False


@pytest.mark.parametrize("entry", REGISTRY, ids=IDS)
def test_every_name_the_registry_lists_resolves(entry):
    for name in entry.reaches + entry.allows:
        assert _resolves(name), (entry.name, name)
    assert set(entry.uses) <= set(STAND_INS), entry.uses


@pytest.mark.parametrize("entry", REGISTRY, ids=IDS)
def test_a_correct_students_worked_solution_raises_no_flag(entry):
    source = nbgrader_course.worked(ROOT / "notebooks" / "solutions" / f"{entry.solution}.py",
                                    entry.name)
    assert course_audit.answer_flags(source, entry.reaches) == []


def test_a_library_routine_used_or_copied_is_flagged():
    reaches = ("mlnn.paper.ranks.friedman_test",)
    assert course_audit.answer_flags("from mlnn.paper import ranks as r\n"
                                     "f = lambda R, N: r.friedman_test(R, N)", reaches) == [
        ("library", "mlnn.paper.ranks.friedman_test")]
    assert course_audit.answer_flags("import mlnn.paper as p\nf = p.friedman_test", reaches) == [
        ("library", "mlnn.paper.ranks.friedman_test")]      # by its final name, another path
    copied = inspect.getsource(importlib.import_module("mlnn.paper.ranks").friedman_test)
    copied = copied.replace("friedman_test", "friedman_chi2").replace("chi2 =", "statistic =")
    assert [kind for kind, _ in course_audit.answer_flags(copied, reaches)] == ["copied"]
    assert course_audit.locked_flags({"a": "x", "b": "y"}, {"a": "x", "b": "z"}) == [
        ("locked", "b changed")]
    assert course_audit.locked_flags({"a": "x"}, {}) == [("locked", "a deleted")]


@pytest.mark.parametrize("source, names", [
    ("AdaGrad = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'AdaGrad'][0]",
     ["__base__", "__subclasses__"]),
    ("AdaGrad = drive_adagrad.__globals__['np']", ["__globals__"]),
    ("import sys\nAdaGrad = sys.modules['mlnn.nn.optimizers'].AdaGrad", ["sys"]),
    ("import gc as g\nAdaGrad = [o for o in g.get_objects()][0]", ["gc"]),
    ("AdaGrad = getattr(drive_adagrad, '__glob' + 'als__')", ["getattr"]),
    ("f = lambda: eval('1')", ["eval"]),
    ("x = '__subclasses__'", ["__subclasses__"])])
def test_reaching_objects_through_pythons_internals_is_flagged(source, names):
    assert course_audit.answer_flags(source, ()) == [("introspection", n) for n in names]


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
