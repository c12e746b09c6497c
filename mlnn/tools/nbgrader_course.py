"""The course in nbgrader's format: metadata in the notebooks, the instructor's source version.

The student notebooks and the worked solutions (``notebooks/solutions/``) are canonical; the
source version nbgrader starts from is generated from them (``python -m mlnn course metadata``,
``python -m mlnn course source COURSE``). An exercise is an answer cell (a ``...   # your code``
stub in a ``def`` or ``class``) followed by its grader cell (calling ``check_*``): a solution cell
and an autograded test cell of :data:`POINTS` points; every other cell is locked. In the source
version each answer cell ends with the worked solution between nbgrader's solution markers.
"""

import ast
import json
import re
from pathlib import Path

from mlnn.base.errors import MLNNError

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"

#: Points of every autograded grader cell.
POINTS = 1

#: A student's stub line, and the name a cell defines.
STUB = re.compile(r"^\s*\.\.\.\s+# your code", re.M)
DEFINES = re.compile(r"^(?:def|class) (\w+)", re.M)

#: The course's nbgrader configuration, written into the course directory by ``source``.
CONFIG = '''c = get_config()  # noqa: F821 (nbgrader's configuration file)
c.CourseDirectory.course_id = "mlnn"
# The student's stub stays in the answer cell; the worked solution under it is removed.
c.ClearSolutions.code_stub = {"python": ""}
# A notebook's cells run for up to a few minutes in full mode; autograde in fast mode (MLNN_FAST=1).
c.Execute.timeout = 600
'''


class CourseError(MLNNError):
    """A notebook or solution file that does not have the course's shape."""


def read(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def write(path, notebook):
    """Write as nbformat does (so an unchanged notebook keeps its bytes)."""
    text = json.dumps(notebook, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    Path(path).write_text(text, encoding="utf-8")


def source_of(cell):
    return "".join(cell["source"])


def key(stem):
    """The notebook's number: ``01b`` for ``01b_build_it_from_zero``."""
    return stem.split("_", 1)[0]


def exercises(notebook, stem):
    """``[(answer index, name), ...]``: the answer cells, each checked to precede its grader."""
    cells, found = notebook["cells"], []
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "code" and STUB.search(source_of(cell)):
            name = DEFINES.search(source_of(cell))
            after = cells[i + 1] if i + 1 < len(cells) else None
            if name is None or after is None or after["cell_type"] != "code" \
                    or "check_" not in source_of(after):
                raise CourseError(f"{stem}: the answer cell {i} is not a definition followed by "
                                  "its grader cell (a code cell calling check_*)")
            found.append((i, name.group(1)))
    return found


def nbgrader(grade_id, solution=False, grade=False):
    meta = {"grade": grade, "grade_id": grade_id, "locked": not solution, "schema_version": 3,
            "solution": solution, "task": False}
    return dict(meta, points=POINTS) if grade else meta


def mark(notebook, stem):
    """Set every cell's nbgrader metadata in place; returns the exercises."""
    found = exercises(notebook, stem)
    roles = {i: nbgrader(f"{key(stem)}-{name}", solution=True) for i, name in found}
    roles.update({i + 1: nbgrader(f"{key(stem)}-{name}-test", grade=True) for i, name in found})
    for i, cell in enumerate(notebook["cells"]):
        cell["metadata"]["nbgrader"] = roles.get(i) or nbgrader(f"{key(stem)}-cell-{cell['id']}")
    return found


def notebook_paths(notebooks):
    paths = sorted(Path(notebooks).glob("*.ipynb"))
    if not paths:
        raise CourseError(f"no notebooks in {notebooks}: the course tools work on the project's "
                          "checkout (pip install -e .)")
    return paths


def write_metadata(notebooks=NOTEBOOKS):
    """Write the metadata into every notebook that lacks them; returns the names rewritten."""
    changed = []
    for path in notebook_paths(notebooks):
        notebook = read(path)
        before = json.dumps(notebook, sort_keys=True)
        mark(notebook, path.stem)
        if json.dumps(notebook, sort_keys=True) != before:
            write(path, notebook)
            changed.append(path.name)
    return changed


def worked(path, name):
    """The worked solution of ``name`` in ``path``: its imports, helpers and definition."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
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
    return "\n".join(ast.get_source_segment(text, n) for n in imports) + "\n\n\n" + \
        "\n\n\n".join(ast.get_source_segment(text, n) for n in nodes)


def solution_file(stem):
    files = sorted((NOTEBOOKS / "solutions").glob(f"ex{key(stem)}_*.py"))
    if len(files) != 1:
        raise CourseError(f"{stem}: expected one solution file ex{key(stem)}_*.py, found {files}")
    return files[0]


def source_version(path):
    """The notebook at ``path`` with its metadata and each worked solution in its answer cell."""
    notebook, stem = read(path), Path(path).stem
    for i, name in mark(notebook, stem):
        cell = notebook["cells"][i]
        text = source_of(cell).rstrip("\n") + "\n### BEGIN SOLUTION\n" + \
            worked(solution_file(stem), name) + "\n### END SOLUTION"
        cell["source"] = text.splitlines(True)
    return notebook


def write_source(course):
    """``course/source/<stem>/<stem>.ipynb`` for every notebook (one assignment each), and the
    course's ``nbgrader_config.py`` unless one is there; returns the assignment names."""
    course = Path(course)
    stems = []
    for path in notebook_paths(NOTEBOOKS):
        folder = course / "source" / path.stem
        folder.mkdir(parents=True, exist_ok=True)
        write(folder / path.name, source_version(path))
        stems.append(path.stem)
    config = course / "nbgrader_config.py"
    if not config.exists():
        config.write_text(CONFIG, encoding="utf-8")
    return stems
