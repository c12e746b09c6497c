"""The course as an nbgrader course, graded by ``python -m mlnn course grade`` (the
``instructor`` extra).

The metadata in the committed notebooks are those the tool writes, and writing them twice changes
nothing. The workflow runs as ``notebooks/README.md`` says, in a course directory outside the
clone: ``course source``, ``nbgrader generate_assignment`` (the student's cells, no worked
solution), submissions, ``course grade``, ``nbgrader export`` and ``generate_feedback``. The
students: the worked solutions (every auto point), the stubs as released (none), one wrong
answer per notebook (exactly that exercise's points lost), a student who writes nothing but
tricks (each trick of this and earlier rounds: none of them scores, whatever the flags say),
and submissions the command cannot grade (each one named line). Everything runs in the Python
environment the tests run in: nothing from the system's site-packages.
"""

import base64
import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlnn.course.registry import EXERCISES
from mlnn.tools import nbgrader_course as tool

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
STEMS = [path.stem for path in NOTEBOOKS]

#: One wrong answer per notebook: (exercise, the answer cell's source).
WRONG = {
    "01": ("delta1_tanh", "def delta1_tanh(delta2, W2, h):\n    return (delta2 @ W2.T) * (1 - h)"),
    "01b": ("ce_delta2", "def ce_delta2(z2, o, Y):\n    return (Y - o) / len(Y)"),
    "02": ("ce_dJ_dW2_1", "def ce_dJ_dW2_1(W1, W2_1):\n    return W1 * 0 + 1.0"),
    "02b": ("rmsprop_step", "def rmsprop_step(theta, G, grads, eta, rho, eps):\n"
                            "    G = rho * G + (1 - rho) * grads ** 2\n"
                            "    return theta - eta * grads / (G + eps), G"),
    "03": ("rank_loss_one", "def rank_loss_one(scores, y):\n    return 0.0"),
    "04": ("best_update", "def best_update(curve):\n    return curve['updates'][0], 0.0"),
    "05": ("excluded", "import numpy as np\n\ndef excluded(Y):\n"
                       "    return np.zeros(len(Y), dtype=bool)"),
    "06": ("ridge_solve", "import numpy as np\n\ndef ridge_solve(Z, t, lam):\n"
                          "    return np.linalg.lstsq(Z, t, rcond=None)[0]"),
    "06b": ("one_error_by_hand", "def one_error_by_hand(Y, scores):\n"
                                 "    top = np.argmin(scores, axis=1)   # the lowest score\n"
                                 "    return 1.0 - np.asarray(Y, float)[np.arange(len(Y)), top]"),
    "07": ("better_than_paper", "def better_than_paper(measure, ours, paper):\n"
                                "    return ours > paper"),
    "08": ("average_ranks_by_hand", "import numpy as np\n\n"
                                    "def average_ranks_by_hand(values, lower_is_better):\n"
                                    "    return np.argsort(values, axis=1).mean(axis=0) + 1.0"),
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


def test_grader_cells_take_only_the_answer_and_no_notebook_loads_a_worked_solution():
    for path in NOTEBOOKS:
        notebook, k = tool.read(path), tool.key(path.stem)
        for i, name in tool.exercises(notebook, path.stem):
            grader = next(e.grader for e in EXERCISES if e.notebook == k and e.name == name)
            expected = (f'report = course.{grader}({name})\n'
                        f'{name} = course.yours_if(report, {name}, "{name}")' if k == "01b"
                        else f"course.{grader}({name});")
            assert tool.source_of(notebook["cells"][i + 1]).strip() == expected, (k, name)
        text = "".join(tool.source_of(cell) for cell in notebook["cells"])
        assert "load_worked_solution" not in text and "solutions/" not in text, path.name


# -- the workflow, in a course outside the clone ----------------------------------------------------

def trick_source(course):
    """The tricks of a student who writes nothing: {notebook: [(exercise, answer cell)]}. Each
    must score nothing for its exercise, by itself (no flag needed)."""
    hidden = base64.b64encode(b"import mlnn.course.derivatives as d\n"
                              b"grad_W1_dense = d.check_input_gradient").decode()
    encoded = ("from mlnn.evaluation import metrics\n"
               "one_error_by_hand = lambda Y, scores: metrics.one_error(Y, scores)").encode().hex()
    source = course / "source" / "06_thresholds" / "06_thresholds.ipynb"
    stub = "\n    ...   # your code"
    return {
        "01": [("delta1_tanh",                          # the kernel's own shell
                "from ipykernel.kernelapp import IPKernelApp\n"
                "shell = IPKernelApp.instance().shell\n"
                "shell.set_custom_exc((Exception,), lambda *a, **k: print('PASS'))\n\n"
                "def delta1_tanh(delta2, W2, h):" + stub),
               ("grad_W1_dense",                         # a string runner, encoded
                f"import base64, timeit\ntimeit.timeit(base64.b64decode('{hidden}').decode(), "
                "number=1)")],
        "02b": [("momentum_skip", "from mlnn.course import update_rules\n"
                                  "momentum_skip = update_rules._momentum_skipped")],
        "03": [("rank_loss_one", "print('PASS     the rank loss of one document: 51 random "
                                 "cases, inputs unchanged')\n\ndef rank_loss_one(scores, y):"
                + stub)],
        "04": [("input_dropout", "exit._ip.input_transformers_cleanup.append(\n    lambda lines:"
                                 " ['pass\\n'])\n\ndef input_dropout(X, rate, rng):" + stub)],
        "05": [("excluded", "import numpy as np\nnp.allclose = lambda *a, **k: True\n"
                            "np.array_equal = lambda *a, **k: True\n\n"
                            "def excluded(Y):\n    return np.zeros(len(Y), dtype=bool)")],
        "06": [("ridge_solve",                           # the instructor's folder
                f"import io\nsolved = io.FileIO({str(source)!r}).read()\n\n"
                "def ridge_solve(Z, t, lam):" + stub),
               ("best_threshold_one",
                "import sqlite3\n"
                f"sqlite3.connect({str(course / 'gradebook.db')!r}).execute("
                "'update grade set manual_score = 9')\n\n"
                "def best_threshold_one(scores, y):" + stub)],
        "06b": [("one_error_by_hand", f"exec(bytes.fromhex('{encoded}').decode())")],
        "07": [("better_than_paper", "raise SystemExit(0)")],
        "08": [("average_ranks_by_hand",                 # an array whose == always holds
                "import numpy as np\n\nclass Always(np.ndarray):\n"
                "    def __eq__(self, other):\n        return np.ones(np.shape(other), bool)\n\n"
                "def average_ranks_by_hand(values, lower_is_better):\n"
                "    return np.zeros(values.shape[1]).view(Always)"),
               ("friedman_chi2", "import sys\nsys.modules['mlnn.course.grading'] = sys\n"
                                 "from mlnn.paper import ranks as r\n"
                                 "friedman_chi2 = lambda R, N: r.friedman_test(R, N).chi2")],
    }


def submit(course, student, stem, notebook):
    folder = course / "submitted" / student / stem
    folder.mkdir(parents=True, exist_ok=True)
    tool.write(folder / f"{stem}.ipynb", notebook)


def released_path(course, stem):
    return course / "release" / stem / f"{stem}.ipynb"


def with_answer(notebook, k, name, source):
    notebook = json.loads(json.dumps(notebook))
    for cell in notebook["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == f"{k}-{name}":
            cell["source"] = source
    return notebook


def tampered(notebook, k):
    """The grader cells' metadata edited (100 points each) and a cell above the first."""
    notebook = json.loads(json.dumps(notebook))
    for cell in notebook["cells"]:
        meta = cell["metadata"]["nbgrader"]
        if meta.get("grade"):
            meta["points"] = 100
    notebook["cells"].insert(0, {"cell_type": "code", "id": "mine", "metadata": {},
                                 "execution_count": None, "outputs": [], "source":
                                 "import os\nos.environ.pop('NBGRADER_EXECUTION', None)"})
    return notebook


def mlnn_command(course, *args, timeout=1800):
    done = subprocess.run([sys.executable, "-m", "mlnn", *args], cwd=course, capture_output=True,
                          text=True, timeout=timeout, env=dict(os.environ, MPLBACKEND="Agg"))
    return done


def nbgrader(course, *args):
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course,
                          capture_output=True, text=True, env=dict(os.environ, MPLBACKEND="Agg"))
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One course outside the clone: built, released, submitted, graded and exported once."""
    pytest.importorskip("nbgrader")
    course = tmp_path_factory.mktemp("course")
    assert not course.resolve().is_relative_to(ROOT)
    assert tool.write_source(course) == STEMS
    nbgrader(course, "generate_assignment", "*")
    tricks = trick_source(course)
    for stem in STEMS:
        k = tool.key(stem)
        solved = tool.read(course / "source" / stem / f"{stem}.ipynb")
        released = tool.read(released_path(course, stem))
        submit(course, "solved", stem, solved)
        submit(course, "stubs", stem, released)
        submit(course, "wrong", stem, with_answer(solved, k, *WRONG[k]))
        tricked = tampered(released, k)
        for name, source in tricks.get(k, []):
            tricked = with_answer(tricked, k, name, source)
        submit(course, "tricks", stem, tricked)
    broken = course / "submitted" / "broken"
    submit(course, "broken", STEMS[0], tool.read(released_path(course, STEMS[0])))
    (broken / STEMS[0] / f"{STEMS[0]}.ipynb").rename(broken / STEMS[0] / "mine.ipynb")
    (broken / STEMS[1]).mkdir()
    (broken / STEMS[1] / f"{STEMS[1]}.ipynb").write_text(
        json.dumps({"nbformat": 3, "nbformat_minor": 0, "worksheets": [], "metadata": {}}))
    (broken / STEMS[2]).mkdir()
    os.mkfifo(broken / STEMS[2] / f"{STEMS[2]}.ipynb")
    (broken / STEMS[3]).mkdir()
    os.symlink("/dev/zero", broken / STEMS[3] / f"{STEMS[3]}.ipynb")
    (broken / "99_not_released").mkdir()
    done = mlnn_command(course, "course", "grade", ".", "--draw", "11")
    assert done.returncode == 0, done.stderr[-3000:]
    nbgrader(course, "export")
    nbgrader(course, "generate_feedback", STEMS[0], "--student", "wrong")
    with open(course / "grades.csv", newline="") as handle:
        grades = {(row["student_id"], row["assignment"]): row for row in csv.DictReader(handle)}
    with open(course / "mlnn-report.csv", newline="") as handle:
        report = list(csv.DictReader(handle))
    return course, grades, report, done.stdout


def points(report, student, stem):
    """{exercise: points} of one graded notebook."""
    return {row["item"].split("-", 1)[1]: int(row["points"]) for row in report
            if row["student"] == student and row["assignment"] == stem
            and row["status"] in ("PASS", "NOT YET", "ERROR")}


def auto_points(stem):
    return {e.name: e.points for e in EXERCISES if e.notebook == tool.key(stem)}


@pytest.mark.slow
def test_the_release_ships_no_worked_solution_and_the_students_cells(graded):
    course = graded[0]
    for stem in STEMS:
        released = tool.read(released_path(course, stem))
        student = tool.read(ROOT / "notebooks" / f"{stem}.ipynb")
        assert [tool.source_of(c).rstrip("\n") for c in released["cells"]] == \
            [tool.source_of(c).rstrip("\n") for c in student["cells"]], stem
        files = [p for p in (course / "release" / stem).rglob("*") if p.is_file()]
        assert not [p for p in files if p.suffix == ".py" or "solution" in p.name], files
        text = (course / "release" / stem / f"{stem}.ipynb").read_text(encoding="utf-8")
        assert "BEGIN SOLUTION" not in text and "## " + tool.key(stem) + "-answer" not in text


@pytest.mark.slow
def test_points_by_effort_and_one_mistake_costs_one_exercise(graded):
    course, grades, report, _ = graded
    for stem in STEMS:
        full = auto_points(stem)
        assert points(report, "solved", stem) == full, stem
        assert points(report, "stubs", stem) == dict.fromkeys(full, 0), stem
        name = WRONG[tool.key(stem)][0]
        assert points(report, "wrong", stem) == {**full, name: 0}, stem
        released = tool.read(released_path(course, stem))
        manual = sum(c["metadata"]["nbgrader"].get("points", 0) for c in released["cells"]
                     if c["cell_type"] == "markdown")
        score = {s: (float(grades[s, stem]["score"]), float(grades[s, stem]["max_score"]))
                 for s in ("solved", "stubs", "wrong")}
        most = float(sum(full.values()) + manual)
        assert score == {"solved": (sum(full.values()), most), "stubs": (0.0, most),
                         "wrong": (sum(full.values()) - full[name], most)}, stem


@pytest.mark.slow
def test_every_trick_scores_nothing_for_its_exercise_without_a_flag(graded):
    course, grades, report, _ = graded
    tricks = trick_source(course)
    for stem in STEMS:
        assert set(points(report, "tricks", stem).values()) == {0}, stem
        assert float(grades["tricks", stem]["score"]) == 0.0, stem
        for name, _ in tricks.get(tool.key(stem), []):
            assert points(report, "tricks", stem)[name] == 0, (stem, name)


@pytest.mark.slow
def test_a_manual_score_counts_only_once_an_instructor_enters_it(graded):
    from nbgrader.api import Gradebook
    course = graded[0]
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in ("solved", "tricks"):
            for stem in STEMS:
                notebook = gb.find_submission_notebook(stem, stem, student)
                written = [g for g in notebook.grades if "-answer-" in g.cell.name]
                assert all(g.manual_score is None and g.needs_manual_grade for g in written)


@pytest.mark.slow
def test_what_cannot_be_graded_is_one_named_line_each(graded):
    report = graded[2]
    lines = {row["assignment"]: row["detail"] for row in report
             if row["student"] == "broken" and row["status"] == "not graded"}
    assert "mine.ipynb" in lines[STEMS[0]] and "keep its name" in lines[STEMS[0]]
    assert "nbformat 3" in lines[STEMS[1]]
    assert "not a regular file" in lines[STEMS[2]] and "not a regular file" in lines[STEMS[3]]
    assert "not a released assignment" in lines["99_not_released"]


@pytest.mark.slow
def test_the_worked_solutions_raise_no_flag_and_written_answers_left_are_listed(graded):
    report = graded[2]
    assert not [row for row in report if row["student"] == "solved"
                and row["status"].startswith("flag")]
    untouched = {row["item"] for row in report
                 if row["student"] == "stubs" and row["status"] == "untouched"}
    assert len(untouched) == 12 and all("-answer-" in item for item in untouched)
    assert not [row for row in report if row["student"] == "solved"
                and row["status"] == "untouched"]


@pytest.mark.slow
def test_formgrade_and_feedback_read_the_graded_notebooks(graded):
    course = graded[0]
    graded_notebook = tool.read(course / "autograded" / "wrong" / STEMS[0] / f"{STEMS[0]}.ipynb")
    lines = ["".join(o["text"]) for c in graded_notebook["cells"] for o in c.get("outputs", [])
             if o.get("output_type") == "stream"]
    assert sum(line.startswith("NOT YET") for line in lines) == 1
    page = (course / "feedback" / "wrong" / STEMS[0] / f"{STEMS[0]}.html").read_text("utf-8")
    assert "NOT YET" in page


#: Run each released notebook as a student does in Jupyter, in fast mode, from its own folder;
#: print each notebook's grader lines.
STUDENT_RUN = '''import sys
from pathlib import Path
import nbclient, nbformat
for folder in map(Path, sys.argv[1:]):
    notebook = nbformat.read(folder / f"{folder.name}.ipynb", as_version=4)
    nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}}).execute()
    lines = "".join(o.get("text", "") for c in notebook.cells if c.cell_type == "code"
                    for o in c.get("outputs", []) if o.get("output_type") == "stream")
    lines = lines.splitlines()
    print(folder.name, sum(line.startswith("NOT YET") for line in lines), sum(
        line.startswith("PASS") for line in lines))
'''


@pytest.mark.slow
def test_a_students_release_runs_whole_outside_the_clone(graded, tmp_path):
    """The release copied into a student's home, every cell run: nothing crashes and each
    stub's grader line says NOT YET."""
    course = graded[0]
    for stem in STEMS:
        shutil.copytree(course / "release" / stem, tmp_path / stem)
    done = subprocess.run([sys.executable, "-c", STUDENT_RUN, *(str(tmp_path / s) for s in STEMS)],
                          cwd=tmp_path, env=dict(os.environ, MLNN_FAST="1", MPLBACKEND="Agg"),
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    counts = {line.split()[0]: tuple(map(int, line.split()[1:]))
              for line in done.stdout.splitlines()}
    for stem in STEMS:
        assert counts[stem] == (len(auto_points(stem)), 0), (stem, counts[stem])
