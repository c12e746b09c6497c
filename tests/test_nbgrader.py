"""The course as an nbgrader course (``python -m mlnn course``, the ``instructor`` extra).

The metadata in the committed notebooks are those the tool writes, and writing them twice changes
nothing. The nbgrader test builds a course from the notebooks as ``notebooks/README.md`` says:
the source version, ``generate_assignment`` (which must give back the student's answer cells),
``autograde`` of three submissions of every notebook — the worked solutions (full marks), the
stubs as released (zero) and the worked solutions with one known wrong answer per notebook
(exactly that exercise's points lost) — and ``export``, whose grades.csv is checked.

Fast path: nbgrader runs every cell of a submission, and most cells are demonstrations no grader
needs. The course here keeps, of each notebook's code cells, the exercise cells and the cells
defining a name they use (transitively); ``test_notebooks`` runs the full notebooks in fast mode.
"""

import ast
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from mlnn import course as graders
from mlnn.tools import nbgrader_course as tool

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
STEMS = [path.stem for path in NOTEBOOKS]

#: One known wrong answer per notebook: (exercise, the answer cell's source). Most are a mistake
#: of the grader's own table; 01b's and 06b's graders keep theirs inside, so these are written out.
WRONG = {
    "01": ("delta1_tanh", "delta1_tanh = course.check_delta1.mistakes[0].answer"),
    "01b": ("pwe_delta2_pairs", "def pwe_delta2_pairs(z2, o, Y):\n    return o - Y"),
    "02": ("ce_dJ_dW2_1", "ce_dJ_dW2_1 = course.check_ce_slope.mistakes[0].answer"),
    "02b": ("rmsprop_step", "rmsprop_step = course.check_rmsprop.mistakes[0].answer"),
    "03": ("rank_loss_one", "rank_loss_one = course.check_rank_loss.mistakes[0].answer"),
    "04": ("best_update", "best_update = course.check_best_update.mistakes[0].answer"),
    "05": ("excluded", "excluded = course.check_pwe_excluded.mistakes[0].answer"),
    "06": ("ridge_solve", "ridge_solve = course.check_ridge.mistakes[0].answer"),
    "06b": ("one_error_by_hand", "def one_error_by_hand(Y, scores):\n"
                                 "    top = np.argmin(scores, axis=1)   # the lowest score\n"
                                 "    return 1.0 - np.asarray(Y, float)[np.arange(len(Y)), top]"),
    "07": ("better_than_paper", "better_than_paper = course.check_better_than_paper."
                                "mistakes[0].answer"),
    "08": ("average_ranks_by_hand", "average_ranks_by_hand = course.check_average_ranks."
                                    "mistakes[0].answer"),
}


def test_the_committed_notebooks_carry_the_tools_metadata():
    for path in NOTEBOOKS:
        notebook = tool.read(path)
        before = json.dumps(notebook, sort_keys=True)
        tool.mark(notebook, path.stem)
        assert json.dumps(notebook, sort_keys=True) == before, \
            f"{path.name}: run `python -m mlnn course metadata`"


def test_metadata_are_written_once_and_name_each_exercise(tmp_path):
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    for path in (tmp_path / "notebooks").glob("*.ipynb"):
        notebook = tool.read(path)
        for cell in notebook["cells"]:
            cell["metadata"].pop("nbgrader", None)
        tool.write(path, notebook)
    assert len(tool.write_metadata(tmp_path / "notebooks")) == len(NOTEBOOKS)
    assert tool.write_metadata(tmp_path / "notebooks") == []
    for path in NOTEBOOKS:
        written = tool.read(tmp_path / "notebooks" / path.name)
        assert written == tool.read(path)
        ids = [c["metadata"]["nbgrader"]["grade_id"] for c in written["cells"]]
        assert len(set(ids)) == len(ids)


def test_an_answer_cell_without_its_grader_is_one_clear_error():
    notebook = tool.read(NOTEBOOKS[0])
    first, _ = tool.exercises(notebook, NOTEBOOKS[0].stem)[0]
    del notebook["cells"][first + 1]
    with pytest.raises(tool.CourseError, match="not a definition followed by its grader"):
        tool.exercises(notebook, NOTEBOOKS[0].stem)


# -- the nbgrader course -------------------------------------------------------------------------

def _names(source):
    """(names a cell defines, names it uses); None when it is not plain Python."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    defined, used = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else defined).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.alias):
            defined.add((node.asname or node.name).split(".")[0])
    return defined, used


def graded_cells(notebook):
    """The ids of the cells the exercises need: every markdown cell, the exercise cells and the
    code cells defining a name they use, transitively (the fast path)."""
    needed, keep = set(), set()
    for cell in reversed(notebook["cells"]):
        names = _names(tool.source_of(cell)) if cell["cell_type"] == "code" else None
        meta = cell["metadata"]["nbgrader"]
        if names is None or meta["solution"] or meta["grade"] or names[0] & needed:
            keep.add(cell["id"])
            needed |= names[1] if names else set()
    return keep


def only(notebook, ids):
    notebook["cells"] = [cell for cell in notebook["cells"] if cell["id"] in ids]
    return notebook


def nbgrader(course, *args):
    env = dict(os.environ, MLNN_FAST="1", MPLBACKEND="Agg",
               MLNN_FIGURES=str(course / "figures"),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def submit(course, student, stem, notebook):
    folder = course / "submitted" / student / stem
    folder.mkdir(parents=True)
    tool.write(folder / f"{stem}.ipynb", notebook)


@pytest.fixture
def course():
    """An nbgrader course directory inside the checkout (the notebooks find the project's
    figures/ and solutions/ from where they run), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix=".nbgrader-test-", dir=ROOT))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.slow
def test_nbgrader_grades_solutions_stubs_and_wrong_answers(course):
    pytest.importorskip("nbgrader")
    stems = tool.write_source(course)
    assert stems == STEMS
    students = {}
    for stem in stems:
        students[stem] = tool.read(ROOT / "notebooks" / f"{stem}.ipynb")
        tool.mark(students[stem], stem)
        keep = graded_cells(students[stem])
        only(students[stem], keep)
        path = course / "source" / stem / f"{stem}.ipynb"
        tool.write(path, only(tool.read(path), keep))
    nbgrader(course, "generate_assignment", "*")
    points = {}
    for stem in stems:
        released = tool.read(course / "release" / stem / f"{stem}.ipynb")
        assert [tool.source_of(c).rstrip("\n") for c in released["cells"]] == \
            [tool.source_of(c).rstrip("\n") for c in students[stem]["cells"]], stem
        points[stem] = sum(c["metadata"]["nbgrader"].get("points", 0) for c in released["cells"])
        assert points[stem] == len(tool.exercises(students[stem], stem)) * tool.POINTS > 0
        solved = tool.read(course / "source" / stem / f"{stem}.ipynb")
        submit(course, "solved", stem, solved)
        submit(course, "stubs", stem, released)
        name, wrong = WRONG[tool.key(stem)]
        for cell in solved["cells"]:
            if cell["metadata"]["nbgrader"]["grade_id"] == f"{tool.key(stem)}-{name}":
                cell["source"] = wrong
        submit(course, "wrong", stem, solved)
    nbgrader(course, "autograde", "*", "--create")
    nbgrader(course, "export")
    nbgrader(course, "generate_feedback", STEMS[0], "--student", "wrong")
    page = (course / "feedback" / "wrong" / STEMS[0] / f"{STEMS[0]}.html").read_text("utf-8")
    assert "NOT YET" in page and graders.check_delta1.mistakes[0].hint in page   # as in Jupyter
    with open(course / "grades.csv", newline="") as handle:
        grades = {(row["student_id"], row["assignment"]): (float(row["score"]),
                                                            float(row["max_score"]))
                  for row in csv.DictReader(handle)}
    for stem in stems:
        assert grades["solved", stem] == (points[stem], points[stem]), stem
        assert grades["stubs", stem] == (0.0, points[stem]), stem
        assert grades["wrong", stem] == (points[stem] - tool.POINTS, points[stem]), stem
        graded = tool.read(course / "autograded" / "wrong" / stem / f"{stem}.ipynb")
        failed = [c["metadata"]["nbgrader"]["grade_id"] for c in graded["cells"]
                  if any(o["output_type"] == "error" for o in c.get("outputs", []))]
        assert failed == [f"{tool.key(stem)}-{WRONG[tool.key(stem)][0]}-test"], (stem, failed)
