"""The course as an nbgrader course (``python -m mlnn course``, the ``instructor`` extra).

The metadata in the committed notebooks are those the tool writes, and writing them twice changes
nothing. The nbgrader test builds a course as ``notebooks/README.md`` says, where nbgrader puts
it: OUTSIDE the clone, with mlnn installed from a wheel of the clone into a virtual environment
(an audit hook records any file of the clone that a process opens: none may be). The source
version, ``generate_assignment`` (which must give back the student's answer cells and ship no
worked solution), ``autograde`` of the whole notebooks of five students — the worked solutions
(every autograded point), the stubs as released (zero, nothing but the graders fails), one known
wrong answer per notebook (exactly that exercise's points lost; 01b's is in an early piece that
later pieces use), the tricks of a student who writes nothing (zero) and a grader cell replaced
by ``print("PASS")`` (restored, zero) — then ``export`` with the audit's flags beside the
grades, and ``course audit``.
"""

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlnn import course as graders
from mlnn.course.registry import EXERCISES
from mlnn.tools import nbgrader_course as tool
from tests.test_course_audit import DISAGREE

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
STEMS = [path.stem for path in NOTEBOOKS]

#: One known wrong answer per notebook: (exercise, the answer cell's source). Most are a mistake
#: of the grader's own table; 01b's and 06b's graders keep theirs inside, so these are written out.
WRONG = {
    "01": ("delta1_tanh", "delta1_tanh = course.check_delta1.mistakes[0].answer"),
    "01b": ("ce_delta2", "def ce_delta2(z2, o, Y):\n    return (Y - o) / len(Y)"),
    "02": ("ce_dJ_dW2_1", "ce_dJ_dW2_1 = course.check_ce_slope.mistakes[0].answer"),
    "02b": ("rmsprop_step", "rmsprop_step = course.check_rmsprop.mistakes[0].answer"),
    "03": ("rank_loss_one", "rank_loss_one = course.check_rank_loss_one.mistakes[0].answer"),
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


# -- the nbgrader course, outside the clone --------------------------------------------------------

#: Tricks of a student who writes nothing: (notebook, exercise, answer cell). Each scores nothing
#: (AUTOGRADE is decided at import, graders hold no reference a notebook can reach) or is flagged.
TRICKS = {
    "01": ("delta1_tanh", 'import os\nos.environ.pop("NBGRADER_EXECUTION", None)\n'
                          'os.environ["NBGRADER_EXECUTION"] = ""\n\n'
                          "def delta1_tanh(delta2, W2, h):\n    ...   # your code"),
    "02b": ("momentum_skip", "from mlnn.course import update_rules\n"
                             "momentum_skip = getattr(update_rules, '_momentum_skipped', None)"),
    "04": ("input_dropout", "exit._ip.input_transformers_cleanup.append(\n    lambda lines: "
                            "['pass\\n'] if any('course.check' in l for l in lines) else lines)"
                            "\n\n\ndef input_dropout(X, rate, rng):\n    ...   # your code"),
    "08": ("friedman_chi2", "from mlnn.paper import ranks as r\n\n\n"
                            "def friedman_chi2(R, N):\n"
                            "    return r.friedman_test(R[:, None].repeat(2, 1), N).chi2"),
}

#: What a process may not open: any file under the clone (written by the audit hook below),
#: except those of the Python environment the tests run in, wherever it lies (CI makes its
#: virtual environment inside the clone).
HOOK = '''import os, sys
_root, _log, _busy = os.environ["MLNN_CLONE"] + os.sep, os.environ["MLNN_OPENED"], []
_environment = os.environ["MLNN_ENVIRONMENT"] + os.sep
def _hook(event, args):
    if event != "open" or _busy or not args or not isinstance(args[0], (str, bytes, os.PathLike)):
        return
    _busy.append(1)
    try:
        path = os.path.abspath(os.fsdecode(args[0]))
        if path.startswith(_root) and not path.startswith(_environment):
            with open(_log, "a") as handle:
                handle.write(path + "\\n")
    finally:
        _busy.pop()
sys.addaudithook(_hook)
'''


def submit(course, student, stem, notebook):
    folder = course / "submitted" / student / stem
    folder.mkdir(parents=True)
    tool.write(folder / f"{stem}.ipynb", notebook)


def released_path(course, stem):
    return course / "release" / stem / f"{stem}.ipynb"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A virtual environment outside the clone with mlnn installed from a wheel of the clone
    (no other package: the rest comes from the system's site-packages), and an audit hook
    that records every file of the clone a process opens."""
    pytest.importorskip("nbgrader")
    base = tmp_path_factory.mktemp("outside")
    assert not base.resolve().is_relative_to(ROOT)
    wheels, source = base / "wheels", base / "source"      # built from a copy: nothing written
    shutil.copytree(ROOT / "mlnn", source / "mlnn",          # into the clone
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                    "-q", "-w", str(wheels), str(source)], check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(base / "venv")],
                   check=True)
    python = base / "venv" / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    "--ignore-installed",
                    *map(str, wheels.glob("*.whl"))], check=True, capture_output=True)
    (base / "hook").mkdir()
    (base / "tmp").mkdir()
    (base / "hook" / "sitecustomize.py").write_text(HOOK, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLNN_", "NBGRADER"))}
    env.update(PYTHONPATH=str(base / "hook"), MLNN_CLONE=str(ROOT), MPLBACKEND="Agg",
               MLNN_ENVIRONMENT=os.path.abspath(sys.prefix),
               MLNN_OPENED=str(base / "opened.txt"), OPENBLAS_NUM_THREADS="1",
               TMPDIR=str(base / "tmp"),
               JUPYTER_PATH=str(Path(sys.prefix) / "share" / "jupyter"),   # nbconvert's templates
               PATH=os.pathsep.join([str(python.parent), os.environ["PATH"]]))
    where = subprocess.run([str(python), "-c", "import mlnn; print(mlnn.__file__)"], env=env,
                           cwd=base, capture_output=True, text=True, check=True).stdout
    assert Path(where.strip()).is_relative_to(base / "venv"), where
    opened = base / "opened.txt"                  # the hook sees a file of the clone opened
    subprocess.run([str(python), "-c", f"open({str(ROOT / 'setup.cfg')!r}).close()"], env=env,
                   cwd=base, check=True)
    assert opened.read_text(encoding="utf-8").strip() == str(ROOT / "setup.cfg")
    opened.unlink()
    return python, env, base


def run_nbgrader(installed, course, *args):
    python, env, _ = installed
    done = subprocess.run([str(python), "-m", "nbgrader", *args], cwd=course, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def with_answer(notebook, k, name, source):
    notebook = json.loads(json.dumps(notebook))
    for cell in notebook["cells"]:
        if cell["metadata"]["nbgrader"]["grade_id"] == f"{k}-{name}":
            cell["source"] = source
    return notebook


@pytest.fixture(scope="module")
def graded(installed):
    """One course outside the clone, built, released, five students submitted, autograded and
    exported once for every test below."""
    base = installed[2]
    course = base / "course"
    stems = tool.write_source(course)
    assert stems == STEMS
    run_nbgrader(installed, course, "generate_assignment", "*")
    for stem in stems:
        k = tool.key(stem)
        solved = tool.read(course / "source" / stem / f"{stem}.ipynb")
        released = tool.read(released_path(course, stem))
        submit(course, "solved", stem, solved)
        submit(course, "stubs", stem, released)
        submit(course, "wrong", stem, with_answer(solved, k, *WRONG[k]))
        if k in TRICKS:
            submit(course, "tricks", stem, with_answer(released, k, *TRICKS[k]))
        if k == "03":
            tampered = with_answer(released, k, "rank_loss_one-test", 'print("PASS")')
            submit(course, "tampered", stem, tampered)
    run_nbgrader(installed, course, "autograde", "*", "--create")
    run_nbgrader(installed, course, "export")
    run_nbgrader(installed, course, "generate_feedback", STEMS[0], "--student", "wrong")
    with open(course / "grades.csv", newline="") as handle:
        grades = {(row["student_id"], row["assignment"]): row for row in csv.DictReader(handle)}
    return course, grades


def autograded_points(stem):
    return sum(e.points for e in EXERCISES if e.notebook == tool.key(stem))


def failed_cells(course, student, stem):
    graded = tool.read(course / "autograded" / student / stem / f"{stem}.ipynb")
    return [c["metadata"].get("nbgrader", {}).get("grade_id", c["id"]) for c in graded["cells"]
            if any(o["output_type"] == "error" for o in c.get("outputs", []))]


@pytest.mark.slow
def test_the_release_ships_no_worked_solution_and_the_students_cells(graded):
    course, _ = graded
    for stem in STEMS:
        released = tool.read(released_path(course, stem))
        student = tool.read(ROOT / "notebooks" / f"{stem}.ipynb")
        assert [tool.source_of(c).rstrip("\n") for c in released["cells"]] == \
            [tool.source_of(c).rstrip("\n") for c in student["cells"]], stem
        files = [p for p in (course / "release" / stem).rglob("*") if p.is_file()]
        assert not [p for p in files if p.suffix == ".py" or "solution" in p.name], files
        text = (course / "release" / stem / f"{stem}.ipynb").read_text(encoding="utf-8")
        assert "BEGIN SOLUTION" not in text and "load_worked_solution" not in text


@pytest.mark.slow
def test_the_gradebook_gives_points_by_effort_and_one_mistake_costs_one_exercise(graded):
    course, grades = graded
    for stem in STEMS:
        released = tool.read(released_path(course, stem))
        manual = sum(c["metadata"]["nbgrader"].get("points", 0) for c in released["cells"]
                     if c["cell_type"] == "markdown")
        auto = autograded_points(stem)
        most = float(auto + manual)
        score = {s: (float(grades[s, stem]["score"]), float(grades[s, stem]["max_score"]))
                 for s in ("solved", "stubs", "wrong")}
        assert score["solved"] == (auto, most), stem
        assert score["stubs"] == (0.0, most), stem
        name = WRONG[tool.key(stem)][0]
        lost = next(e.points for e in EXERCISES if e.notebook == tool.key(stem) and e.name == name)
        assert score["wrong"] == (auto - lost, most), stem
        assert failed_cells(course, "wrong", stem) == [f"{tool.key(stem)}-{name}-test"], stem
        assert failed_cells(course, "solved", stem) == [], stem
        graders_only = {f"{tool.key(stem)}-{e.name}-test" for e in EXERCISES
                        if e.notebook == tool.key(stem)}
        assert set(failed_cells(course, "stubs", stem)) == graders_only, stem  # nothing crashes
    page = (course / "feedback" / "wrong" / STEMS[0] / f"{STEMS[0]}.html").read_text("utf-8")
    assert "NOT YET" in page and graders.check_delta1.mistakes[0].hint in page


@pytest.mark.slow
def test_tricks_score_nothing_and_are_flagged_beside_the_grade(graded):
    course, grades = graded
    flags = {(row["student_id"], row["assignment"]): row["flags"] for row in grades.values()}
    for stem in STEMS:                  # a reference a grader imports may pass: it is flagged
        if tool.key(stem) in TRICKS:
            assert float(grades["tricks", stem]["score"]) == 0.0 or flags["tricks", stem], stem
    assert float(grades["tricks", "01_network_and_derivatives"]["score"]) == 0.0  # no switch
    assert float(grades["tampered", "03_convergence"]["score"]) == 0.0
    assert "environment os.environ" in flags["tricks", "01_network_and_derivatives"]
    assert "grader mlnn.course.update_rules" in flags["tricks", "02b_optimizers_and_dropout"]
    assert "library mlnn.paper.ranks.friedman_test" in flags["tricks", "08_beyond_the_paper"]
    assert "scored without a PASS line" in flags["tricks", "04_dropout"]   # switched off: caught
    assert "locked" in flags["tampered", "03_convergence"]
    for student in ("solved", "stubs"):      # the worked solutions: only where the registry's
        for stem in STEMS:                  # list and the solution disagree (test_course_audit)
            found = set(filter(None, flags.get((student, stem), "").split("; ")))
            assert found <= {f"{name}: library {detail}" for name, detail in DISAGREE}, found


@pytest.mark.slow
def test_the_audit_command_reports_per_student_and_exercise_with_the_score(graded, installed):
    course, _ = graded
    python, env, _ = installed
    done = subprocess.run([str(python), "-m", "mlnn", "course", "audit", "."], cwd=course,
                          env=env, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    with open(course / "audit.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    students = {row["student_id"] for row in rows}
    assert {"tricks", "tampered"} <= students and "stubs" not in students
    assert {(r["exercise"], r["detail"]) for r in rows if r["student_id"] == "solved"} <= DISAGREE
    row = next(r for r in rows if r["exercise"] == "friedman_chi2")
    assert (row["flag"], float(row["score"]), float(row["max_score"])) == ("library", 0.0, 3.0)


@pytest.mark.slow
def test_no_file_of_the_clone_is_read_and_no_scratch_folder_is_left(graded, installed):
    opened = installed[2] / "opened.txt"
    assert not opened.exists(), opened.read_text(encoding="utf-8")[:2000]
    assert not list((installed[2] / "tmp").glob("mlnn-figures-*"))


#: Run each released notebook as a student does in Jupyter (not autograded: every demonstration
#: runs), in fast mode, from its own folder; print each notebook's grader lines.
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
def test_a_students_release_runs_whole_outside_the_clone(graded, installed):
    """The release copied into a student's home, every cell run (demonstrations reading the
    stored results that travel with the assignment included): nothing crashes, the stubs say
    NOT YET, and no file of the clone is opened."""
    course, _ = graded
    python, env, base = installed
    home = base / "home"
    for stem in STEMS:
        shutil.copytree(course / "release" / stem, home / stem)
    done = subprocess.run([str(python), "-c", STUDENT_RUN, *(str(home / s) for s in STEMS)],
                          cwd=home, env=dict(env, MLNN_FAST="1"), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    counts = {line.split()[0]: tuple(map(int, line.split()[1:]))
              for line in done.stdout.splitlines()}
    for stem in STEMS:
        exercises = sum(1 for e in EXERCISES if e.notebook == tool.key(stem))
        assert counts[stem] == (exercises, 0), (stem, counts[stem])
    assert not (base / "opened.txt").exists(), (base / "opened.txt").read_text("utf-8")[:2000]
