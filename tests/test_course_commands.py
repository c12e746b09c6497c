"""``course metadata`` and ``course source`` with bad input and interrupted: one clear line naming
the file, a non-zero exit, nothing written or half-written (every file through the atomic
writer), and the cells an instructor adds kept with their metadata."""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mlnn.cli import main
from mlnn.course.registry import EXERCISES
from mlnn.tools import nbgrader_course as tool

ROOT = Path(__file__).resolve().parents[1]
STEMS = [path.stem for path in sorted((ROOT / "notebooks").glob("*.ipynb"))]


@pytest.fixture
def project(tmp_path):
    """A copy of the notebooks and solutions, beside the project's stored results."""
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    (tmp_path / "figures").symlink_to(ROOT / "figures")
    return tmp_path


def digests(directory):
    return {str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(directory).rglob("*")) if p.is_file()}


def notebook(project, stem):
    return project / "notebooks" / f"{stem}.ipynb"


def strip_metadata(path):
    """Remove the nbgrader metadata of a notebook, so that ``course metadata`` rewrites it."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for cell in data["cells"]:
        cell["metadata"].pop("nbgrader", None)
    path.write_text(json.dumps(data), encoding="utf-8")


def cut_short(path):
    path.write_bytes(path.read_bytes()[:len(path.read_bytes()) // 2])


def empty_list(path):
    path.write_text("[]", encoding="utf-8")


def without_ids(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    data["nbformat_minor"] = 4
    for cell in data["cells"]:
        cell.pop("id")
    path.write_text(json.dumps(data), encoding="utf-8")


def latin1(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    data["cells"][0]["source"] = ["Übung: é\n"]
    path.write_bytes(json.dumps(data, ensure_ascii=False).encode("latin-1", "replace"))


def without_first_answer(path):
    """Notebook 03 with its first answer cell deleted: its grader cell is left alone."""
    data = json.loads(path.read_text(encoding="utf-8"))
    first, _ = tool.exercises(data, path.stem)[0]
    del data["cells"][first]
    path.write_text(json.dumps(data), encoding="utf-8")


DAMAGE = {"cut short": (cut_short, "not a notebook (invalid JSON"),
          "a list": (empty_list, "not a notebook (no list of cells)"),
          "nbformat 4.4": (without_ids, "has no id (nbformat 4.4)"),
          "Latin-1": (latin1, "not UTF-8 text"),
          "03 without its first answer": (without_first_answer, "does not follow an answer cell")}


def run(args, capsys):
    code = main(args)
    err = capsys.readouterr().err.strip().splitlines()
    return code, err


@pytest.mark.parametrize("damage", DAMAGE)
def test_course_metadata_refuses_a_bad_notebook_and_writes_nothing(project, damage, capsys):
    spoil, message = DAMAGE[damage]
    stem = "03_convergence" if damage.startswith("03") else "02_loss_landscapes"
    strip_metadata(notebook(project, "01_network_and_derivatives"))    # would be rewritten
    spoil(notebook(project, stem))
    before = digests(project / "notebooks")
    code, err = run(["course", "metadata", "--notebooks", str(project / "notebooks")], capsys)
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith("mlnn: error: ") and message in err[0], err
    assert stem in err[0], err
    assert digests(project / "notebooks") == before


@pytest.mark.parametrize("damage", DAMAGE)
def test_course_source_refuses_a_bad_notebook_and_writes_nothing(project, damage, capsys):
    spoil, message = DAMAGE[damage]
    stem = "03_convergence" if damage.startswith("03") else STEMS[-1]    # the last one read
    spoil(notebook(project, stem))
    course = project / "course"
    course.mkdir()
    code, err = run(["course", "source", str(course), "--notebooks",
                     str(project / "notebooks")], capsys)
    assert code == 2 and len(err) == 1 and message in err[0] and stem in err[0], err
    assert list(course.iterdir()) == []


def test_a_solution_file_that_does_not_parse_writes_no_assignment(project, capsys):
    solution = tool.solution_file(STEMS[-1], project / "notebooks")
    solution.write_text(solution.read_text(encoding="utf-8") + "\ndef broken(:\n",
                        encoding="utf-8")
    course = project / "course"
    course.mkdir()
    code, err = run(["course", "source", str(course), "--notebooks",
                     str(project / "notebooks")], capsys)
    assert code == 2 and len(err) == 1, err
    assert solution.name in err[0] and "fix the solution file" in err[0], err
    assert list(course.iterdir()) == []


def test_course_source_refuses_an_empty_directory_name(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, err = run(["course", "source", ""], capsys)
    assert code == 2 and len(err) == 1 and "course directory is empty" in err[0], err
    assert list(tmp_path.iterdir()) == []


def test_a_grader_cell_without_its_answer_cell_is_refused_not_demoted():
    path = ROOT / "notebooks" / "03_convergence.ipynb"
    data = tool.read(path)
    first, name = tool.exercises(data, path.stem)[0]
    del data["cells"][first]
    with pytest.raises(tool.CourseError, match="does not follow an answer cell"):
        tool.mark(data, path.stem)


def test_an_exercise_missing_from_the_notebook_or_the_registry_is_named():
    path = ROOT / "notebooks" / "03_convergence.ipynb"
    data = tool.read(path)
    first, name = tool.exercises(data, path.stem)[0]
    del data["cells"][first:first + 2]
    with pytest.raises(tool.CourseError, match=f"no answer cell for \\['{name}'\\]"):
        tool.mark(data, path.stem)


SIGNALLED = textwrap.dedent('''
    import os, signal, sys
    from mlnn.base import fileio
    from mlnn.cli import main
    signal.signal(signal.SIGINT, signal.default_int_handler)   # as python -m mlnn does, even
    seal = fileio._seal                                        # where started with SIGINT ignored
    def interrupted(handle, temporary, path):
        handle.write(b"" if "b" in handle.mode else "")
        os.kill(os.getpid(), signal.{signal})       # in the middle of the first write
        seal(handle, temporary, path)
    fileio._seal = interrupted
    sys.exit(main(sys.argv[1:]))
''')


def interrupted(project, signum, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH",
                                                                                  "")]))
    script = SIGNALLED.replace("{signal}", signal.Signals(signum).name)
    return subprocess.run([sys.executable, "-c", script, *args], cwd=project, env=env,
                          capture_output=True, text=True)


def test_sigterm_during_course_metadata_leaves_the_notebooks_as_they_were(project):
    for stem in STEMS:
        strip_metadata(notebook(project, stem))
    before = digests(project / "notebooks")
    done = interrupted(project, signal.SIGTERM, "course", "metadata", "--notebooks",
                       str(project / "notebooks"))
    assert done.returncode == 143 and done.stderr.strip() == "mlnn: terminated", done.stderr
    assert digests(project / "notebooks") == before           # no notebook at 0 bytes
    assert not list((project / "notebooks").glob(".*.part"))


def test_sigint_during_course_source_leaves_the_earlier_source_as_it_was(project, capsys):
    course = project / "course"
    assert main(["course", "source", str(course), "--notebooks", str(project / "notebooks")]) \
        == 0
    source = notebook(project, "01b_build_it_from_zero")
    data = json.loads(source.read_text(encoding="utf-8"))
    data["cells"][0]["source"] = ["# Changed since the last source version\n"]
    source.write_text(json.dumps(data), encoding="utf-8")
    before = digests(course)
    done = interrupted(project, signal.SIGINT, "course", "source", str(course), "--notebooks",
                       str(project / "notebooks"))
    assert done.returncode == 130 and done.stderr.strip() == "mlnn: interrupted", done.stderr
    assert digests(course) == before
    assert not [p for p in course.rglob(".*.part")]


def test_points_come_from_the_registry_and_written_answers_from_their_prompt():
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        data = tool.read(path)
        tool.mark(data, path.stem)
        graded = {c["metadata"]["nbgrader"]["grade_id"]: c["metadata"]["nbgrader"]
                  for c in data["cells"] if c["metadata"]["nbgrader"]["grade"]}
        for e in EXERCISES:
            if e.notebook == tool.key(path.stem):
                assert graded.pop(f"{e.notebook}-{e.name}-test")["points"] == e.points
        for grade_id, meta in graded.items():         # the written answers left
            assert "-answer-" in grade_id and meta["solution"] and meta["points"] >= 1


def test_cells_an_instructor_adds_keep_their_metadata(project):
    path = notebook(project, "02_loss_landscapes")
    data = tool.read(path)
    added = {"essay": dict(cell_type="markdown", source=["Discuss the surfaces.\n"]),
             "hidden": dict(cell_type="code", source=["assert True\n"], outputs=[],
                            execution_count=None),
             "task": dict(cell_type="markdown", source=["Plot it yourself.\n"])}
    meta = {"essay": dict(solution=True, grade=True, points=3, locked=False, task=False),
            "hidden": dict(solution=False, grade=True, points=2, locked=True, task=False),
            "task": dict(solution=False, grade=False, points=1, locked=True, task=True)}
    for name in added:
        added[name].update(id=f"inst-{name}", metadata={"nbgrader": dict(
            meta[name], grade_id=f"inst-{name}", schema_version=3)})
        data["cells"].insert(3, added[name])
    tool.write(path, data)
    tool.write_metadata(project / "notebooks")
    for cell in tool.read(path)["cells"]:
        if cell["id"].startswith("inst-"):
            assert cell["metadata"] == added[cell["id"][5:]]["metadata"], cell["id"]
    source = tool.source_version(path, project / "notebooks")
    kept = {c["id"]: c["metadata"]["nbgrader"] for c in source["cells"]
            if c["id"].startswith("inst-")}
    assert kept == {f"inst-{n}": added[n]["metadata"]["nbgrader"] for n in added}


def test_course_source_copies_the_stored_results_each_notebook_reads(project):
    course = project / "course"
    tool.write_source(course, project / "notebooks")
    for stem in STEMS:
        for pattern in tool.STORED.get(tool.key(stem), ()):
            copied = sorted(p.relative_to(course / "source" / stem / "figures")
                            for p in (course / "source" / stem / "figures").glob(pattern))
            assert copied == sorted(p.relative_to(ROOT / "figures")
                                    for p in (ROOT / "figures").glob(pattern)), (stem, pattern)
    config = (course / "nbgrader_config.py").read_text(encoding="utf-8")
    assert "course grade" in config and "plugin" not in config


def test_each_written_answer_gets_its_key_in_the_source_and_a_missing_key_is_named(project):
    keys = tool.written_keys(project / "notebooks" / "solutions" / tool.KEYS)
    for stem in STEMS:
        source = tool.source_version(project / "notebooks" / f"{stem}.ipynb",
                                     project / "notebooks")
        for cell in source["cells"]:
            if cell["cell_type"] == "markdown" and tool.PROMPT.match(tool.source_of(cell)):
                gid = cell["metadata"]["nbgrader"]["grade_id"]
                assert keys[gid] in tool.source_of(cell), gid
                assert "### BEGIN SOLUTION" in tool.source_of(cell)
    path = project / "notebooks" / "solutions" / tool.KEYS
    first = next(iter(keys))
    path.write_text(path.read_text(encoding="utf-8").replace(f"## {first}\n", "## gone\n"),
                    encoding="utf-8")
    stem = next(s for s in STEMS if first.startswith(tool.key(s) + "-"))
    with pytest.raises(tool.CourseError, match=f"{first} has no key"):
        tool.source_version(project / "notebooks" / f"{stem}.ipynb", project / "notebooks")


def test_grading_submissions_at_once_gives_the_grades_of_one_at_a_time(tmp_path):
    """``course grade --jobs``: several graders' processes at once change no row of the report
    (the source version stands in for the release; one student leaves an answer open)."""
    from mlnn.tools import course_grade
    for stem in tool.write_source(tmp_path):
        if not stem.startswith(("04", "06_")):
            continue
        source = tool.read(tmp_path / "source" / stem / f"{stem}.ipynb")
        for folder in ("release", "submitted/done", "submitted/open"):
            (tmp_path / folder / stem).mkdir(parents=True)
            tool.write(tmp_path / folder / stem / f"{stem}.ipynb", source)
        opened = tmp_path / "submitted/open" / stem / f"{stem}.ipynb"
        notebook = tool.read(opened)
        first = next(c for c in notebook["cells"]
                     if c["metadata"].get("nbgrader", {}).get("solution")
                     and c["cell_type"] == "code")
        first["source"] = "def unused():\n    pass\n"
        tool.write(opened, notebook)
    one, _, books, limits = course_grade.grade_course(tmp_path, draw=3, jobs=1)
    two, _, again, same = course_grade.grade_course(tmp_path, draw=3, jobs=2)
    assert one == two and books == again and limits == same
    graded = [row for row in one if row[5] in ("PASS", "NOT YET", "ERROR")]
    assert {row[5] for row in graded if row[0] == "done"} == {"PASS"}
    assert "NOT YET" in {row[5] for row in one if row[0] == "open"}


def _killed(task, draw):
    os._exit(9)


def test_a_grader_process_that_dies_is_one_line_and_writes_nothing(tmp_path, monkeypatch):
    """A grader's process killed under ``course grade`` (the kernel's OOM killer, say) ends the
    command with one named line, before any file is written."""
    from mlnn.base.errors import MLNNError
    from mlnn.tools import course_grade
    stem = next(s for s in tool.write_source(tmp_path) if s.startswith("06_"))
    source = tool.read(tmp_path / "source" / stem / f"{stem}.ipynb")
    for folder in ("release", "submitted/a"):
        (tmp_path / folder / stem).mkdir(parents=True)
        tool.write(tmp_path / folder / stem / f"{stem}.ipynb", source)
    monkeypatch.setattr(course_grade, "judge_answer", _killed)
    with pytest.raises(MLNNError, match="ended without an answer"):
        course_grade.main(tmp_path, draw=3, jobs=2)
    assert not (tmp_path / "mlnn-report.csv").exists()


def test_course_grade_refuses_no_jobs_in_one_line(tmp_path, capsys):
    assert main(["course", "grade", str(tmp_path), "--jobs", "0"]) == 2
    assert capsys.readouterr().err.strip() == \
        "mlnn: error: course grade: --jobs must be at least 1, not 0"
