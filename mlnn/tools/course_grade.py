"""The instructor's grading: ``python -m mlnn course grade COURSE_DIR``.

Every submission under ``submitted/<student>/<assignment>/<assignment>.ipynb`` of an nbgrader
course is read here, as data: no cell of it runs in this process. Each answer cell, found by
the grade id its release gives it, runs in a confined process of its own with the notebook's
imports before it, and is judged by the exercise's grader here, on cases drawn here from a
seed the students never see (:func:`mlnn.course.answers.run_cell`). The points go into
nbgrader's ``gradebook.db`` (auto scores of the grader cells; written answers keep the manual
score an instructor entered, and count nothing until one does), and into
``autograded/<student>/<assignment>/`` for formgrade and feedback: the release with the
student's answers in its answer cells and each grader's line as its output. Without nbgrader,
``grades.csv``. Always ``mlnn-report.csv``: a row per exercise, written answer left untouched,
flag (:mod:`mlnn.tools.course_audit`) and submission that could not be graded (one named line,
never a silent 0).
"""

import contextlib
import csv
import functools
import io
import json
import multiprocessing
import os
import secrets
import stat
import sys
import threading
import warnings
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from mlnn.base.errors import MLNNError
from mlnn.base.fileio import write_files
from mlnn.course import raw_grader
from mlnn.course.answers import preamble, run_cell
from mlnn.course.grading import DRAWS, drawing
from mlnn.course.registry import EXERCISES
from mlnn.sandbox.client import Answer, forget_zygote
from mlnn.tools import course_audit

#: The largest notebook read, in bytes.
LARGEST = 20 << 20

COLUMNS = ("student", "assignment", "item", "points", "max_points", "status", "detail")


class Unreadable(Exception):
    """A submission this command cannot grade; the message says why, in one line."""


def read_notebook(path):
    """The notebook at ``path`` as a dict, checked to be a regular file of nbformat 4 whose
    cells are cells; :class:`Unreadable` naming the fault otherwise."""
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError as error:
        raise Unreadable(f"{path.name}: cannot be read ({error.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise Unreadable(f"{path.name}: not a regular file")
    if info.st_size > LARGEST:
        raise Unreadable(f"{path.name}: {info.st_size} bytes, more than a notebook")
    try:
        notebook = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise Unreadable(f"{path.name}: not a notebook ({type(error).__name__})") from None
    if not isinstance(notebook, dict) or notebook.get("nbformat") != 4 or \
            not isinstance(notebook.get("cells"), list):
        raise Unreadable(f"{path.name}: not an nbformat 4 notebook (nbformat "
                         f"{notebook.get('nbformat') if isinstance(notebook, dict) else '?'}); "
                         "open it in Jupyter and save it again")
    for i, cell in enumerate(notebook["cells"]):
        if not isinstance(cell, dict) or not isinstance(cell.get("metadata", {}), dict) or \
                not isinstance(source_of(cell), str):
            raise Unreadable(f"{path.name}: cell {i} is not a notebook cell")
    return notebook


def source_of(cell):
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(s, str) for s in source):
        return "".join(source)
    return source if isinstance(source, str) else None


def grade_id(cell):
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta.get("grade_id") if isinstance(meta, dict) else None


def by_grade_id(notebook):
    """{grade id: cell} of a notebook's cells; :class:`Unreadable` if a grade id repeats."""
    cells = {}
    for cell in notebook["cells"]:
        key = grade_id(cell)
        if isinstance(key, str):
            if key in cells:
                raise Unreadable(f"two cells carry the grade id {key}")
            cells[key] = cell
    return cells


def judge_answer(task, draw):
    """(status, detail, flags) of one answer: ``task`` = (index of its exercise in the
    registry, the answer cell's source, the imports it runs after), on ``draw``'s cases."""
    index, source, imports = task
    exercise = EXERCISES[index]
    token = drawing(draw, draw + 1)               # two draws of the cases, neither the students'
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            report = run_cell(exercise, raw_grader(exercise.grader), source, imports)
    finally:
        DRAWS.reset(token)
    return report.status, report.detail, course_audit.answer_flags(source, exercise.reaches)


def plan_notebook(release, submission, student, assignment):
    """The rows of one submission as far as reading it gives them, the notebook nbgrader keeps
    as autograded (grader outputs still to come), and the answers to judge: a list of
    (row index, grader cell, task of :func:`judge_answer`)."""
    key, rows, tasks = assignment.split("_", 1)[0], [], []
    theirs = by_grade_id(submission)
    graded = json.loads(json.dumps(release))
    code = []
    for cell in graded["cells"]:
        meta, source = cell.get("metadata", {}).get("nbgrader") or {}, source_of(cell)
        gid = meta.get("grade_id")
        if meta.get("solution") and gid in theirs:
            cell["source"] = source_of(theirs[gid]) or ""
        if cell["cell_type"] != "code":
            if meta.get("solution") and gid in theirs and source_of(theirs[gid]) == source:
                rows.append((student, assignment, gid, "", meta.get("points", ""),
                             "untouched", "written answer left as released"))
            continue
        name = gid[len(key) + 1:-len("-test")] if gid and gid.endswith("-test") else None
        index = next((i for i, e in enumerate(EXERCISES) if e.notebook == key and e.name == name),
                     None)
        if index is not None:
            answer = theirs.get(f"{key}-{name}")
            rows.append((student, assignment, f"{key}-{name}", 0, EXERCISES[index].points,
                         "NOT YET", f"no answer cell {key}-{name} in the submission"))
            if answer is not None and source_of(answer) is not None:
                tasks.append((len(rows) - 1, cell, (index, source_of(answer),
                                                     preamble(code, EXERCISES[index].allows))))
            cell["outputs"] = [output(*rows[-1][5:])]
        code.append(source)
    locked = {grade_id(c): source_of(c) for c in release["cells"]
              if (c.get("metadata", {}).get("nbgrader") or {}).get("locked")}
    mine = {k: source_of(c) for k, c in theirs.items()}
    rows += [(student, assignment, "-", "", "", f"flag: {kind}", what)
             for kind, what in course_audit.locked_flags(locked, mine)]
    return rows, graded, tasks


def output(status, detail):
    """A grader cell's output in the autograded notebook: the grader's line."""
    return {"name": "stdout", "output_type": "stream", "text": f"{status:<8} {detail}\n"}


def judged(rows, tasks, results):
    """``rows`` with each task's row replaced by its result, the flags before it; the grader
    cells' outputs set."""
    done = {at: (cell, result) for (at, cell, _), result in zip(tasks, results)}
    out = []
    for at, row in enumerate(rows):
        if at in done:
            cell, (status, detail, flags) = done[at]
            out += [(*row[:3], "", "", f"flag: {kind}", what) for kind, what in flags]
            row = (*row[:3], row[4] if status == "PASS" else 0, row[4], status, detail)
            cell["outputs"] = [output(status, detail)]
        out.append(row)
    return out


def submissions(course):
    """``[(student, assignment, path or None, problem or None), ...]``: every folder under
    ``submitted/``, with what is wrong where it is not a submission of a released notebook."""
    release, found = course / "release", []
    assignments = sorted(p.name for p in release.iterdir() if p.is_dir()) \
        if release.is_dir() else []
    if not assignments:
        raise MLNNError(f"{release}: no released assignments; run `nbgrader "
                        "generate_assignment` first")
    for student in sorted(p for p in (course / "submitted").glob("*") if p.is_dir()):
        for folder in sorted(p for p in student.iterdir() if p.is_dir()):
            path = folder / f"{folder.name}.ipynb"
            problem = None
            if folder.name not in assignments:
                problem = f"{folder.name} is not a released assignment"
            elif not os.path.lexists(path):
                others = sorted(p.name for p in folder.glob("*.ipynb"))
                problem = (f"no {path.name} (the notebook must keep its name; found: "
                           f"{', '.join(others) or 'none'})")
            found.append((student.name, folder.name, path, problem))
    return assignments, found


def grade_course(course, draw=None, jobs=None):
    """Grade every submission of the nbgrader course in ``course``, ``jobs`` answers at a
    time (default: one per core; each grader in a process of its own, with its own answers'
    processes); returns (rows, the draw of the cases, {(student, assignment): autograded
    notebook}, what was enforced on the answers' processes)."""
    course = Path(course)
    if not course.is_dir():
        raise MLNNError(f"course grade: {course} is not a directory")
    if jobs is not None and jobs < 1:
        raise MLNNError(f"course grade: --jobs must be at least 1, not {jobs}")
    draw = secrets.randbits(48) + 2 if draw is None else draw
    planned, notebooks = [], {}
    for student, assignment, path, problem in submissions(course)[1]:
        try:
            if problem:
                raise Unreadable(problem)
            release = read_notebook(course / "release" / assignment / f"{assignment}.ipynb")
            rows, notebooks[student, assignment], tasks = plan_notebook(
                release, read_notebook(path), student, assignment)
        except Unreadable as error:
            rows, tasks = [(student, assignment, "-", 0, "", "not graded", str(error))], []
        planned.append((rows, tasks))
    every = [task for _, tasks in planned for _, _, task in tasks]
    for index in {task[0] for task in every}:    # loaded once, before the graders' processes
        raw_grader(EXERCISES[index].grader)
    judge = functools.partial(judge_answer, draw=draw)
    jobs = min(len(every), jobs or os.cpu_count() or 1)
    if jobs > 1:           # the exercises of most points (the longest work) start first
        first = sorted(range(len(every)), key=lambda i: -EXERCISES[every[i][0]].points)
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"),
                                 initializer=forget_zygote) as pool:
            probe = pool.submit(enforced)        # every grader process is forked by now
            threading.Thread(target=nbgrader_api, daemon=True).start()
            try:
                done = dict(zip(first, pool.map(judge, [every[i] for i in first])))
                results, limits = iter([done[i] for i in range(len(every))]), probe.result()
            except BrokenProcessPool:
                raise MLNNError("course grade: a grader's process ended without an answer (out "
                                "of memory?); nothing was written") from None
    else:
        results, limits = map(judge, every), enforced()
    rows = [row for rows, tasks in planned
            for row in judged(rows, tasks, [next(results) for _ in tasks])]
    return rows, draw, notebooks, limits


def enforced():
    """What the kernel enforces on an answer's process, in words."""
    with Answer("") as probe:
        return "; ".join(probe.enforced)


def nbgrader_api():
    """nbgrader's (Gradebook, MissingEntry), or None without nbgrader."""
    blocked = sys.modules.setdefault("rfc3987_syntax", None) is None
    try:                       # (jsonschema compiles its IRI grammar on import: seconds unused)
        from nbgrader.api import Gradebook, MissingEntry
        return Gradebook, MissingEntry
    except ImportError:
        return None
    finally:
        if blocked:
            sys.modules.pop("rfc3987_syntax", None)


def write_gradebook(course, rows):
    """The auto scores into nbgrader's gradebook; False if there is none (or no nbgrader)."""
    database = Path(course) / "gradebook.db"
    api = nbgrader_api()
    if api is None or not database.is_file():
        return False
    Gradebook, MissingEntry = api
    scored = {}
    for student, assignment, item, points, _, status, _ in rows:
        if status in ("PASS", "NOT YET", "ERROR"):
            scored.setdefault((student, assignment), {})[f"{item}-test"] = points
    try:
        with warnings.catch_warnings(), Gradebook(f"sqlite:///{database}") as gb:
            warnings.simplefilter("ignore")          # SQLAlchemy's, about nbgrader's own code
            for (student, assignment), points in scored.items():
                gb.update_or_create_student(student)
                submission = gb.update_or_create_submission(assignment, student)
                for grade in (g for notebook in submission.notebooks for g in notebook.grades):
                    if grade.cell.name in points:
                        grade.auto_score, grade.needs_manual_grade = points[grade.cell.name], False
                    elif grade.manual_score is None:
                        grade.auto_score, grade.needs_manual_grade = None, True
                gb.db.commit()
    except MissingEntry as error:
        raise MLNNError(f"{database}: {error}; run `nbgrader generate_assignment` first") \
            from None
    except Exception as error:               # a damaged database, nbgrader's own errors
        raise MLNNError(f"{database}: cannot be updated ({type(error).__name__}: "
                        f"{' '.join(str(error).split())[:200]})") from None
    return True


def totals(rows):
    """{(student, assignment): auto points} of the graded rows."""
    found = {}
    for student, assignment, _, points, _, status, _ in rows:
        if status in ("PASS", "NOT YET", "ERROR", "not graded"):
            found[student, assignment] = found.get((student, assignment), 0) + (points or 0)
    return found


def csv_text(header, rows):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def main(course, draw=None, jobs=None):
    """Grade, write the gradebook (or grades.csv), the autograded notebooks and the report;
    print one line per student and notebook."""
    course = Path(course)
    rows, draw, notebooks, limits = grade_course(course, draw, jobs)
    rows.insert(0, ("-", "-", "answers' processes", "", "", "enforced", limits))
    files = {course / "mlnn-report.csv": csv_text(COLUMNS, rows)}
    for (student, assignment), notebook in notebooks.items():
        folder = course / "autograded" / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        files[folder / f"{assignment}.ipynb"] = (json.dumps(
            notebook, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    in_gradebook = write_gradebook(course, rows)
    if not in_gradebook:
        files[course / "grades.csv"] = csv_text(("student", "assignment", "auto_points"), [
            (s, a, p) for (s, a), p in sorted(totals(rows).items())])
    write_files(files)
    flags = {}
    for student, assignment, item, _, _, status, detail in rows:
        if status.startswith("flag") or status in ("not graded", "untouched"):
            flags.setdefault((student, assignment), []).append(f"{status} {item}: {detail}")
    for (student, assignment), points in sorted(totals(rows).items()):
        print(f"{student:<16} {assignment:<32} {points:>3} auto points")
        for line in flags.get((student, assignment), []):
            print(f"    {line}")
    print(f"each answer ran in a process of its own: {limits}")
    print(f"cases drawn with seed {draw} (`--draw {draw}` grades again with the same cases); "
          f"{'gradebook.db' if in_gradebook else 'grades.csv'} and mlnn-report.csv written")
    return 0
