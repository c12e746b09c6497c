"""The instructor's audit (``python -m mlnn course audit``): every trick that reaches past an
exercise is flagged, through any alias; the worked solutions and the stubs raise no flag."""

import copy
import json
from pathlib import Path

import pytest

from mlnn.cli import main
from mlnn.tools import course_audit as audit
from mlnn.tools import nbgrader_course as tool

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

#: Tricks: (notebook, exercise, answer cell, a flag (kind, part of the detail) it must raise).
TRICKS = [
    ("01b", "forward", 'import os\nos.environ.pop("NBGRADER_EXECUTION")\n'
                       "def forward(X, W1, b1, W2, b2, f_o=None):\n    return None",
     ("environment", "os.environ")),
    ("01b", "forward", 'from os import environ as e\ne["NBGRADER_EXECUTION"] = ""',
     ("environment", "os.environ")),
    ("01b", "ce_delta2", 'ce_delta2 = course.pieces.STAND_INS["ce_delta2"]',
     ("grader", "mlnn.course.pieces.STAND_INS")),
    ("01b", "ce_delta2", 'ce_delta2 = course.yours_if(None, None, "ce_delta2")',
     ("grader", "mlnn.course.yours_if")),
    ("01", "delta1_tanh", "delta1_tanh = course.check_delta1.__closure__[0].cell_contents",
     ("internals", "__closure__")),
    ("01", "delta1_tanh", "g = course.check_delta1\nref = g.__globals__['_delta1']",
     ("internals", "__globals__")),
    ("02b", "momentum_skip", "from mlnn.course import update_rules\n"
                             "momentum_skip = update_rules._momentum_skipped",
     ("grader", "mlnn.course.update_rules._momentum_skipped")),
    ("01b", "backward", "from mlnn.course.pieces import mlnn_backward as backward",
     ("grader", "mlnn.course.pieces.mlnn_backward")),
    ("06b", "select_C", "from mlnn.course import bipartition as m\nselect_C = m.select",
     ("grader", "mlnn.course.bipartition.select")),
    ("01", "delta1_tanh", 'exec(open("../../notebooks/solutions/ex01_derivatives.py").read())',
     ("files", "builtins.exec")),
    ("01", "delta1_tanh", 'import runpy\nns = runpy.run_path("ex01_derivatives.py")\n'
                          'delta1_tanh = ns["delta1_tanh"]', ("files", "runpy")),
    ("01", "delta1_tanh", "from pathlib import Path\n"
                          "code = Path('ex01_derivatives.py').read_text()", ("files", "read_text")),
    ("08", "friedman_chi2", "%run ../solutions/ex08_beyond_the_paper.py",
     ("internals", "get_ipython")),
    ("08", "friedman_chi2", "from mlnn.paper import ranks as r\n"
                            "def friedman_chi2(R, N):\n    return r.friedman_test(R, N)",
     ("library", "mlnn.paper.ranks.friedman_test")),
    ("08", "average_ranks_by_hand", "import mlnn.paper.ranks\n"
                                    "average_ranks_by_hand = mlnn.paper.ranks.average_ranks",
     ("library", "mlnn.paper.ranks.average_ranks")),
    ("08", "average_ranks_by_hand", "from mlnn.paper.ranks import average_ranks as mine\n"
                                    "average_ranks_by_hand = mine",
     ("library", "mlnn.paper.ranks.average_ranks")),
    ("08", "friedman_chi2", 'm = __import__("mlnn.paper.ranks", fromlist=["x"])\n'
                            'friedman_chi2 = getattr(m, "friedman_test")',
     ("library", "mlnn.paper.ranks.friedman_test")),
    ("08", "friedman_chi2", 'name = "friedman" + "_test"\n'
                            'friedman_chi2 = getattr(__import__("mlnn.paper.ranks"), name)',
     ("internals", "computed name")),
    ("01", "delta1_tanh", 'c = __import__("mlnn.course")', ("grader", "mlnn.course")),
    ("01", "delta1_tanh", 'import importlib\nc = importlib.import_module("mlnn.course.grading")',
     ("grader", "mlnn.course.grading")),
    ("01", "delta1_tanh", 'import sys\nsys.modules["mlnn.course.grading"].AUTOGRADE = False',
     ("grader", "mlnn.course.grading.AUTOGRADE")),
    ("01", "delta1_tanh", "import gc\nrefs = gc.get_referents(course.check_delta1)",
     ("internals", "gc")),
    ("01", "delta1_tanh", "import inspect\nsrc = inspect.getclosurevars(course.check_delta1)",
     ("internals", "inspect")),
    ("01", "delta1_tanh", "import builtins\nbuiltins.print = lambda *a: None",
     ("internals", "import builtins")),
    ("01", "delta1_tanh", "course.check_delta1 = lambda answer: True",
     ("grader", "mlnn.course.check_delta1")),
    ("01", "delta1_tanh", "setattr(course, 'check_delta1', print)", ("internals", "setattr")),
    # switch-offs through bases the resolver cannot follow: flagged by name
    ("01", "delta1_tanh", "import mlnn\n(mlnn,)[0].course.grading.AUTOGRADE = False",
     ("internals", "assigns (mlnn,)[0].course.grading.AUTOGRADE")),
    ("01", "delta1_tanh", "import mlnn\ndef off(m):\n    m.course.grading.AUTOGRADE = False\n"
                          "off(mlnn)", ("grader", "the name AUTOGRADE")),
    ("01", "delta1_tanh", "import mlnn\ndef f(x=[mlnn][0].course.grading):\n"
                          "    x.AUTOGRADE = False\nf()", ("grader", "the name grading")),
    ("01", "delta1_tanh", "import mlnn\nif (m := mlnn):\n    m.AUTOGRADE = False",
     ("grader", "the name mlnn")),
    ("01", "delta1_tanh", "import contextlib\nwith contextlib.nullcontext(mlnn) as m:\n"
                          "    m.course.grading.AUTOGRADE = False", ("grader", "the name course")),
    ("01", "delta1_tanh", "for m in [mlnn]:\n    m.grading.AUTOGRADE = False",
     ("grader", "the name grading")),
    ("01", "delta1_tanh", "m: object = mlnn\nm.course.grading.AUTOGRADE = False",
     ("grader", "the name AUTOGRADE")),
    ("01", "delta1_tanh", "object.__setattr__([mlnn][0], 'x', False)",
     ("internals", "the name __setattr__")),
    ("01", "delta1_tanh", "c, = map(getattr, [mlnn], ['cour' + 'se'])",
     ("grader", "the name mlnn")),
    ("01", "delta1_tanh", 'g = os.sys.modules["mlnn.course.grading"]',
     ("internals", "the name modules")),
    ("01", "delta1_tanh", "import pkgutil\npkgutil.resolve_name('mlnn.course.grading')",
     ("internals", "import pkgutil")),
    ("01", "delta1_tanh", "__builtin__.exec('import mlnn.course.grading as g')",
     ("internals", "the name __builtin__")),
    ("01", "delta1_tanh", "f = os.sys._getframe(1)", ("internals", "the name _getframe")),
    ("01", "delta1_tanh", "environment.os.environ.get('X')", ("environment", "the name environ")),
    ("01", "delta1_tanh", "exit._ip.input_transformers_cleanup.append(lambda lines: lines)",
     ("internals", "the name _ip")),
    ("01", "delta1_tanh", "quit._ip.set_custom_exc((AssertionError,), lambda *a, **k: None)",
     ("internals", "the name quit")),
    ("01", "delta1_tanh", "import operator\nf = operator.attrgetter('f_locals')",
     ("internals", "import operator")),
    ("01", "delta1_tanh", "from operator import attrgetter\nc = attrgetter('__closure__')",
     ("internals", "the name attrgetter")),
    ("01", "delta1_tanh", "f = o.attrgetter('f_locals')", ("internals", "the string 'f_locals'")),
    ("01", "delta1_tanh", "f = o.attrgetter('__closure__')",
     ("internals", "the string '__closure__'")),
    ("01", "delta1_tanh", "np.max = lambda *a, **k: 0.0",
     ("internals", "assigns np.max")),
    ("01", "delta1_tanh", "del np.testing", ("internals", "assigns np.testing")),
    ("01", "delta1_tanh", "name = 'AUTO' + 'GRADE'\nwhere = 'mlnn.course'",
     ("grader", "'mlnn.course'")),
    # library routines: by final name, under any path, in any exercise's cell
    ("08", "average_ranks_by_hand", "from mlnn.paper import ranks as r\n"
                                    "def friedman_chi2(R, N):\n    return r.friedman_test(R, N)",
     ("library", "friedman_test (the routine of friedman_chi2)")),
    ("08", "friedman_chi2", "from mlnn.paper import ranks as r\n"
                            "def friedman_chi2(R, N):\n    return (r,)[0].friedman_test(R, N)",
     ("library", "mlnn.paper.ranks.friedman_test")),
    ("08", "friedman_chi2", "def pick(m):\n    return m.friedman_test",
     ("library", "mlnn.paper.ranks.friedman_test")),
    ("08", "average_ranks_by_hand", "import scipy.stats.mstats as ms\nr = ms.rankdata([1, 2])",
     ("library", "scipy.stats.rankdata")),
    ("08", "average_ranks_by_hand", "def friedman_chi2(R, N):\n    return 0.0",
     ("answer", "defines friedman_chi2, the answer of another exercise")),
    ("06b", "coverage_by_hand", "import numpy as np\nselect_C = np.argmin",
     ("answer", "defines select_C, the answer of another exercise")),
]


def marked(stem):
    notebook = tool.read(ROOT / "notebooks" / f"{stem}.ipynb")
    tool.mark(notebook, stem)
    return notebook


def stem_of(k):
    return next(p.stem for p in NOTEBOOKS if tool.key(p.stem) == k)


def with_answer(notebook, k, name, source):
    submitted = copy.deepcopy(notebook)
    for cell in submitted["cells"]:
        if cell["metadata"]["nbgrader"]["grade_id"] == f"{k}-{name}":
            cell["source"] = source
    return submitted


@pytest.mark.parametrize("k, name, source, expected", TRICKS,
                         ids=[f"{t[0]}-{t[3][0]}-{i}" for i, t in enumerate(TRICKS)])
def test_each_trick_is_flagged_beside_its_exercise(k, name, source, expected):
    stem = stem_of(k)
    released = marked(stem)
    flags = audit.audit_notebook(with_answer(released, k, name, source), released, "s", stem)
    kind, detail = expected
    assert any(f.kind == kind and detail in f.detail and f.exercise == name for f in flags), \
        flags


#: Worked solutions that use a routine the registry lists as solving their exercise: the
#: registry and the solution disagree, and the audit says so.
DISAGREE = {("select_C", "mlnn.evaluation.metrics.selection_score"),
            ("average_ranks_by_hand", "scipy.stats.rankdata")}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_worked_solutions_and_the_stubs_raise_no_flag(path):
    released = marked(path.stem)
    assert audit.audit_notebook(released, released, "s", path.stem) == []
    solved = tool.source_version(path)
    flags = audit.audit_notebook(solved, released, "s", path.stem)
    assert [f for f in flags if (f.exercise, f.detail) not in DISAGREE] == []


def test_a_changed_or_deleted_locked_cell_and_an_added_cell_are_flagged():
    stem = stem_of("03")
    released = marked(stem)
    submitted = copy.deepcopy(released)
    grader = next(c for c in submitted["cells"] if c["metadata"]["nbgrader"]["grade"])
    grader["source"] = 'print("PASS")'
    deleted = submitted["cells"].pop(2)
    submitted["cells"].insert(3, {"cell_type": "code", "id": "mine", "metadata": {},
                                  "source": "import os\nos.environ.clear()", "outputs": []})
    flags = audit.audit_notebook(submitted, released, "s", stem)
    found = {(f.cell, f.kind, f.detail) for f in flags}
    assert (grader["metadata"]["nbgrader"]["grade_id"], "locked", "a locked cell changed") \
        in found
    assert (deleted["metadata"]["nbgrader"]["grade_id"], "locked", "a locked cell deleted") \
        in found
    assert ("added cell mine", "environment", "os.environ.clear") in found


def test_the_audit_command_writes_a_csv_and_a_table_per_student_and_exercise(tmp_path,
                                                                             capsys):
    stem = stem_of("08")
    released = marked(stem)
    for student, source in (("honest", None), ("copier", TRICKS[13][2])):
        folder = tmp_path / "submitted" / student / stem
        folder.mkdir(parents=True)
        submitted = with_answer(released, "08", "friedman_chi2", source) if source else released
        tool.write(folder / f"{stem}.ipynb", submitted)
    (tmp_path / "release" / stem).mkdir(parents=True)
    tool.write(tmp_path / "release" / stem / f"{stem}.ipynb", released)
    assert main(["course", "audit", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "copier" in out and "honest" not in out and "friedman_test" in out
    rows = (tmp_path / "audit.csv").read_text(encoding="utf-8").splitlines()
    assert rows[0] == ",".join(audit.COLUMNS)
    assert all(row.startswith(f"copier,{stem},friedman_chi2,") for row in rows[1:]) and rows[1:]


def test_the_audit_needs_a_release(tmp_path, capsys):
    assert main(["course", "audit", str(tmp_path)]) == 2
    assert "no release/ directory" in capsys.readouterr().err


def test_a_submission_that_is_not_a_notebook_is_flagged_not_a_crash(tmp_path):
    stem = stem_of("03")
    (tmp_path / "release" / stem).mkdir(parents=True)
    tool.write(tmp_path / "release" / stem / f"{stem}.ipynb", marked(stem))
    (tmp_path / "submitted" / "s" / stem).mkdir(parents=True)
    (tmp_path / "submitted" / "s" / stem / f"{stem}.ipynb").write_text("{", encoding="utf-8")
    assert [f.kind for f in audit.audit(tmp_path)] == ["unreadable"]
    json.loads((tmp_path / "release" / stem / f"{stem}.ipynb").read_text(encoding="utf-8"))


def graded_cell(cell, text, error=False):
    """``cell`` with the outputs of a run that printed ``text`` (and failed if ``error``)."""
    cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": text}]
    if error:
        cell["outputs"].append({"output_type": "error", "ename": "AssertionError",
                                "evalue": text, "traceback": []})
    return cell


def test_a_grader_cell_that_scored_without_its_pass_line_is_flagged(tmp_path):
    """However the failure was switched off, a scored grader cell without PASS is flagged."""
    stem = stem_of("01")
    released = marked(stem)
    graders = [c for c in released["cells"] if c["metadata"]["nbgrader"]["grade"]
               and not c["metadata"]["nbgrader"]["solution"]]
    switched, passed, failed = graders[:3]
    for other in graders[3:]:
        graded_cell(other, "NOT YET  other: no answer yet\n", error=True)
    graded_cell(switched, "NOT YET  δ1 for tanh hidden units: no answer yet\n")
    graded_cell(passed, "PASS     ∂L/∂W1: matches the reference on 4 cases\n")
    graded_cell(failed, "NOT YET  δ for PWE: no answer yet\n", error=True)
    flags = audit.unearned_notebook(released, {}, "s", stem)
    assert [(f.cell, f.kind) for f in flags] == [
        (switched["metadata"]["nbgrader"]["grade_id"], "scored without a PASS line")]
    assert audit.unearned_notebook(released, {passed["metadata"]["nbgrader"]["grade_id"]: 0.0,
                                              switched["metadata"]["nbgrader"]["grade_id"]: 0.0},
                                   "s", stem) == []         # the gradebook says: no points
    folder = tmp_path / "autograded" / "s" / stem
    folder.mkdir(parents=True)
    tool.write(folder / f"{stem}.ipynb", released)
    (tmp_path / "release" / stem).mkdir(parents=True)
    tool.write(tmp_path / "release" / stem / f"{stem}.ipynb", marked(stem))
    assert [f.kind for f in audit.audit(tmp_path)] == ["scored without a PASS line"]


def answer_cell(notebook):
    return next(c for c in notebook["cells"] if c["metadata"]["nbgrader"]["solution"])


@pytest.mark.parametrize("why, mutate", [
    ("not text", lambda nb: answer_cell(nb).__setitem__("source", ["x = 1\n", 2])),
    ("not a mapping", lambda nb: answer_cell(nb)["metadata"].__setitem__("nbgrader", "x")),
    ("not a mapping", lambda nb: answer_cell(nb).__setitem__("metadata", [])),
    ("grade_id is not text", lambda nb: answer_cell(nb)["metadata"]["nbgrader"].__setitem__(
        "grade_id", 5)),
    ("not a list of cells", lambda nb: nb.__setitem__("cells", {"a": 1})),
    ("too deep", lambda nb: answer_cell(nb).__setitem__("source", "x = y" + ".a" * 1500 +
                                                        "\nz = " + "-" * 100000 + "1")),
])
def test_a_malformed_submission_is_one_unreadable_flag_not_a_crash(why, mutate):
    stem = stem_of("01")
    released = marked(stem)
    submitted = copy.deepcopy(released)
    mutate(submitted)
    flags = audit.audit_notebook(submitted, released, "s", stem)
    assert [f.kind for f in flags] == ["unreadable"] and why in flags[0].detail, flags


def test_a_long_attribute_chain_is_analysed_and_its_names_flagged():
    stem = stem_of("01")
    released = marked(stem)
    source = "import mlnn\nx = mlnn" + ".a" * 1500 + "\nmlnn.course.grading.AUTOGRADE = False"
    flags = audit.audit_notebook(with_answer(released, "01", "delta1_tanh", source), released,
                                 "s", stem)
    assert ("grader", "mlnn.course.grading.AUTOGRADE") in {(f.kind, f.detail) for f in flags}


def test_a_routine_of_an_earlier_exercise_may_serve_a_later_answer():
    """06b's select_C scores with the measures the student wrote by hand before it (a library
    measure there is no flag), while the same measure in an earlier exercise's cell is."""
    stem = stem_of("06b")
    released = marked(stem)
    use = "from mlnn.evaluation.metrics import rank_loss\nscore = rank_loss"
    flags = {}
    for name in ("select_C", "one_error_by_hand"):
        submitted = copy.deepcopy(released)
        cell = next(c for c in submitted["cells"]
                    if c["metadata"]["nbgrader"]["grade_id"] == f"06b-{name}")
        cell["source"] = use
        flags[name] = [f.detail for f in audit.audit_notebook(submitted, released, "s", stem)
                       if f.kind == "library"]
    assert flags["select_C"] == []
    assert any("the routine of rank_loss_by_hand" in d for d in flags["one_error_by_hand"])
