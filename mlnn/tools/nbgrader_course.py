"""The course in nbgrader's format: metadata in the notebooks, the instructor's source version.

The student notebooks and the worked solutions (``notebooks/solutions/``) are canonical; the
source version nbgrader starts from is generated from them (``python -m mlnn course metadata``,
``python -m mlnn course source COURSE``). An exercise is an answer cell (a ``...   # your code``
stub in a ``def`` or ``class``) followed by its grader cell (calling ``check_*``): a solution cell
and an autograded test cell worth the exercise's points in the registry
(:mod:`mlnn.course.registry`). A written answer is a markdown cell opening with
``**Your answer** (N points)``: a manually graded solution cell of N points. A cell an instructor
marked otherwise (manually graded, hidden tests, a task) keeps its metadata; every other cell is
locked. In the source version each answer cell ends with the worked solution between nbgrader's
solution markers, and each assignment folder holds the stored results its notebook reads
(:data:`STORED`, under ``figures/``).

Everything is read and checked before anything is written, and every file goes through the
atomic writer: a bad notebook or solution file, Ctrl-C or SIGTERM leaves the files as they were.
"""

import ast
import json
import re
from pathlib import Path

from mlnn.base.errors import MLNNError
from mlnn.base.fileio import check_output_directory, write_files
from mlnn.course.registry import EXERCISES

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"

#: A student's stub line, the name a cell defines, a grader call, a written answer's prompt.
STUB = re.compile(r"^\s*\.\.\.\s+# your code", re.M)
DEFINES = re.compile(r"^(?:def|class) (\w+)", re.M)
GRADER = re.compile(r"^[^#\n]*\bcheck_\w+\(", re.M)
PROMPT = re.compile(r"^\*\*Your answer\*\* \((\d+) points?\)")

#: The stored results (under the project's ``figures/``) each notebook reads: ``course source``
#: copies them into the assignment's folder, which ``generate_assignment`` releases with it.
STORED = {
    "03": ("fig3_left_convergence.csv",),
    "04": ("fig3_right_dropout.csv", "fig3_right_dropout_eta0.1.csv", "table3_delicious.csv"),
    "05": ("fig4_learning_rates.csv",),
    "06": ("table3_reuters21578.csv",),
    "06b": ("run_delicious.json", "run_reuters21578.json", "stopping/run_delicious*.json"),
    "07": ("table3_*.csv", "run_*.json", "stopping/run_*.json"),
    "08": ("run_*.json", "stopping/run_*.json"),
}

#: The course's nbgrader configuration, written into the course directory by ``source``.
CONFIG = '''c = get_config()  # noqa: F821 (nbgrader's configuration file)
c.CourseDirectory.course_id = "mlnn"
# The student's stub stays in an answer cell; the worked solution under it is removed.
c.ClearSolutions.code_stub = {"python": ""}
c.ClearSolutions.text_stub = ""
# Points come from `python -m mlnn course grade .`, not from `nbgrader autograde`.
# Validate runs a whole notebook in full mode: its longest cells take a few minutes.
c.Execute.timeout = 600
'''

#: The written answers' keys for the instructor (one section ``## <grade id>`` each), put into
#: the source version's solution region of each written answer and never released.
KEYS = "written_answers.md"


class CourseError(MLNNError):
    """A notebook or solution file that does not have the course's shape."""


def read_text(path):
    """The UTF-8 text of ``path``; :class:`CourseError` naming it otherwise."""
    try:
        return Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise CourseError(f"{path}: not UTF-8 text (byte {error.start}); save it as UTF-8") \
            from None


def read(path):
    """The notebook at ``path``, checked to be nbformat 4.5 or later (every cell has an id);
    :class:`CourseError` naming the file otherwise."""
    try:
        notebook = json.loads(read_text(path))
    except json.JSONDecodeError as error:
        raise CourseError(f"{path}: not a notebook (invalid JSON at line {error.lineno}: "
                          f"{error.msg}; cut short?)") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise CourseError(f"{path}: not a notebook (no list of cells)")
    for i, cell in enumerate(notebook["cells"]):
        if not isinstance(cell, dict) or not {"cell_type", "source", "metadata"} <= cell.keys():
            raise CourseError(f"{path}: cell {i} is not a notebook cell")
        if "id" not in cell:
            raise CourseError(f"{path}: cell {i} has no id (nbformat "
                              f"{notebook.get('nbformat')}.{notebook.get('nbformat_minor')}); "
                              "open and save it in Jupyter, or run `jupyter nbconvert --to "
                              "notebook --inplace` on it, to give its cells ids")
    return notebook


def text(notebook):
    """A notebook as nbformat writes it (so an unchanged notebook keeps its bytes)."""
    return json.dumps(notebook, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def write(path, notebook):
    """Write ``notebook`` to ``path`` atomically."""
    write_files({path: text(notebook).encode("utf-8")})


def source_of(cell):
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else source


def key(stem):
    """The notebook's number: ``01b`` for ``01b_build_it_from_zero``."""
    return stem.split("_", 1)[0]


def registered(stem):
    """``{name: Exercise}`` of the notebook's exercises in the registry, in its order."""
    return {e.name: e for e in EXERCISES if e.notebook == key(stem)}


def exercises(notebook, stem):
    """``[(answer index, name), ...]``: the answer cells, each checked to precede its grader;
    every grader cell follows an answer cell, and the exercises are the registry's."""
    cells, found = notebook["cells"], []
    for i, cell in enumerate(cells):
        code = cell["cell_type"] == "code"
        if code and STUB.search(source_of(cell)):
            name = DEFINES.search(source_of(cell))
            after = cells[i + 1] if i + 1 < len(cells) else None
            if name is None or after is None or after["cell_type"] != "code" \
                    or not GRADER.search(source_of(after)):
                raise CourseError(f"{stem}: the answer cell {i} is not a definition followed by "
                                  "its grader cell (a code cell calling check_*)")
            found.append((i, name.group(1)))
        elif code and GRADER.search(source_of(cell)) and (not found or found[-1][0] != i - 1):
            raise CourseError(f"{stem}: the grader cell {i} does not follow an answer cell (a "
                              "definition whose body is `...   # your code`); restore it")
    names, expected = [name for _, name in found], registered(stem)
    for i, name in found:
        grader = expected.get(name)
        if grader is not None and not re.search(rf"\b{grader.grader}\(", source_of(cells[i + 1])):
            raise CourseError(f"{stem}: the grader cell {i + 1} does not call {grader.grader} "
                              f"(the registry's grader of {name})")
    expected = list(expected)
    if names != expected:
        missing = [name for name in expected if name not in names]
        raise CourseError(f"{stem}: the answer cells define {names}, the registry "
                          f"(mlnn/course/registry.py) lists {expected}" +
                          (f"; no answer cell for {missing}" if missing else ""))
    return found


def nbgrader(grade_id, solution=False, grade=False, points=0):
    meta = {"grade": grade, "grade_id": grade_id, "locked": not solution, "schema_version": 3,
            "solution": solution, "task": False}
    return dict(meta, points=points) if grade else meta


def instructors(cell, ours):
    """Whether ``cell`` carries nbgrader metadata an instructor set (a manually graded cell,
    hidden tests, a task) under a grade id the tool does not write."""
    meta = cell["metadata"].get("nbgrader") or {}
    return any(meta.get(flag) for flag in ("solution", "grade", "task")) \
        and meta.get("grade_id") not in ours


def mark(notebook, stem):
    """Set every cell's nbgrader metadata in place; returns the exercises."""
    found, k = exercises(notebook, stem), key(stem)
    points = {name: exercise.points for name, exercise in registered(stem).items()}
    roles = {i: nbgrader(f"{k}-{name}", solution=True) for i, name in found}
    roles.update({i + 1: nbgrader(f"{k}-{name}-test", grade=True, points=points[name])
                  for i, name in found})
    cells = notebook["cells"]
    ours = {meta["grade_id"] for meta in roles.values()} | \
        {f"{k}-{kind}-{cell['id']}" for cell in cells for kind in ("cell", "answer")}
    for i, cell in enumerate(cells):
        prompt = PROMPT.match(source_of(cell)) if cell["cell_type"] == "markdown" else None
        if i in roles:
            cell["metadata"]["nbgrader"] = roles[i]
        elif prompt:
            cell["metadata"]["nbgrader"] = nbgrader(f"{k}-answer-{cell['id']}", solution=True,
                                                    grade=True, points=int(prompt.group(1)))
        elif not instructors(cell, ours):
            cell["metadata"]["nbgrader"] = nbgrader(f"{k}-cell-{cell['id']}")
    return found


def notebook_paths(notebooks):
    paths = sorted(Path(notebooks).glob("*.ipynb"))
    if not paths:
        raise CourseError(f"no notebooks in {notebooks}: the course tools work on the project's "
                          "checkout (pip install -e .)")
    return paths


def write_metadata(notebooks=NOTEBOOKS):
    """Write the metadata into every notebook that lacks them, all or none, once every notebook
    has been read and checked; returns the names rewritten."""
    changed = {}
    for path in notebook_paths(notebooks):
        notebook = read(path)
        before = json.dumps(notebook, sort_keys=True)
        mark(notebook, path.stem)
        if json.dumps(notebook, sort_keys=True) != before:
            changed[path] = text(notebook).encode("utf-8")
    write_files(changed)
    return [path.name for path in changed]


def worked(path, name):
    """The worked solution of ``name`` in ``path``: its imports, helpers and definition."""
    source = read_text(path)
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        raise CourseError(f"{path}: line {error.lineno}: {error.msg}; fix the solution file") \
            from None
    defined = {node.name: node for node in tree.body
               if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    if name not in defined:
        raise CourseError(f"{path.name} has no worked solution {name}")
    nodes = [defined[name]]
    used = {n.id for n in ast.walk(nodes[0]) if isinstance(n, ast.Name)}
    nodes[:0] = [defined[h] for h in sorted(used) if h.startswith("_") and h in defined]
    used |= {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}
    imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
               and any((a.asname or a.name).split(".")[0] in used for a in node.names)]
    return "\n".join(ast.get_source_segment(source, n) for n in imports) + "\n\n\n" + \
        "\n\n\n".join(ast.get_source_segment(source, n) for n in nodes)


def solution_file(stem, notebooks=NOTEBOOKS):
    files = sorted((Path(notebooks) / "solutions").glob(f"ex{key(stem)}_*.py"))
    if len(files) != 1:
        raise CourseError(f"{stem}: expected one solution file ex{key(stem)}_*.py, found "
                          f"{[str(f) for f in files]}")
    return files[0]


def source_version(path, notebooks=NOTEBOOKS):
    """The notebook at ``path`` with its metadata, each worked solution in its answer cell and
    a solution region (removed in the release) in each written answer."""
    notebook, stem = read(path), Path(path).stem
    for i, name in mark(notebook, stem):
        cell = notebook["cells"][i]
        source = source_of(cell).rstrip("\n") + "\n### BEGIN SOLUTION\n" + \
            worked(solution_file(stem, notebooks), name) + "\n### END SOLUTION"
        cell["source"] = source.splitlines(True)
    keys = written_keys(Path(notebooks) / "solutions" / KEYS)
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown" and PROMPT.match(source_of(cell)):
            gid = cell["metadata"]["nbgrader"]["grade_id"]
            if gid not in keys:
                raise CourseError(f"{stem}: the written answer {gid} has no key in "
                                  f"solutions/{KEYS} (a section headed `## {gid}`)")
            cell["source"] = (source_of(cell).rstrip("\n") + "\n\n### BEGIN SOLUTION\n" +
                              keys[gid] + "\n### END SOLUTION").splitlines(True)
    return notebook


def written_keys(path):
    """{grade id: key text} of the keys file (empty if there is none)."""
    if not Path(path).is_file():
        return {}
    keys, current = {}, None
    for line in read_text(path).splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            keys[current] = []
        elif current is not None:
            keys[current].append(line)
    return {k: "\n".join(v).strip() or "(no key written)" for k, v in keys.items()}


def stored_files(stem, figures):
    """``{path under figures/: path}`` of the stored results the notebook reads."""
    found = {}
    for pattern in STORED.get(key(stem), ()):
        matches = sorted(Path(figures).glob(pattern))
        if not matches:
            raise CourseError(f"{stem}: no stored result {pattern} under {figures}")
        found.update({str(p.relative_to(figures)): p for p in matches})
    return found


def write_source(course, notebooks=NOTEBOOKS):
    """``course/source/<stem>/<stem>.ipynb`` for every notebook (one assignment each), beside it
    the stored results it reads (``figures/...``), and the course's ``nbgrader_config.py``
    unless one is there; returns the assignment names. Every notebook and solution file is read
    and checked first; then the files are written, each atomically."""
    if course is None or str(course).strip() == "":
        raise CourseError("course source: the course directory is empty; give one, e.g. `.`")
    course = check_output_directory(course, "course source")
    notebooks = Path(notebooks)
    files, stems = {}, []
    for path in notebook_paths(notebooks):
        folder = course / "source" / path.stem
        files[folder / path.name] = text(source_version(path, notebooks)).encode("utf-8")
        for name, stored in stored_files(path.stem, notebooks.parent / "figures").items():
            files[folder / "figures" / name] = stored.read_bytes()
        stems.append(path.stem)
    config = course / "nbgrader_config.py"
    if not config.exists():
        files[config] = CONFIG.encode("utf-8")
    for path in files:
        path.parent.mkdir(parents=True, exist_ok=True)
    write_files(files)
    return stems
