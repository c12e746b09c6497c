"""The instructor's audit of an nbgrader course: what each submitted answer cell reaches.

A grader runs in the student's kernel, so Python cannot stop an answer cell from tampering with
it: reading a grader's reference from its closure, loading the worked solutions by path,
replacing ``mlnn.course`` functions, or calling the library routine the exercise asks the student
to write. The grade cannot see that; this audit can. It reads each submission under
``submitted/<student>/<assignment>/`` beside the release (``release/<assignment>/``) and flags,
per student and exercise:

* ``files`` -- reading or running code from files (``open``, ``exec``, ``eval``, ``compile``,
  ``runpy``, ``subprocess``, ``%run`` and ``!`` lines, ``Path.read_text``, ...), or naming the
  worked solutions (``solutions``);
* ``grader`` -- anything under ``mlnn.course`` (graders, their references, ``yours_if``) or the
  course tools;
* ``internals`` -- a function's or the interpreter's insides (``__closure__``, ``__code__``,
  ``__globals__``, ``gc``, ``inspect``, ``sys.modules``, ``importlib``, ``builtins``,
  ``globals()``, ``setattr``, ``getattr`` with a computed name, ``get_ipython``, ...);
* ``environment`` -- ``os.environ``, ``os.putenv``, ``os.getenv``, ...;
* ``library`` -- a routine of a ``reaches`` list (:mod:`mlnn.course.registry`) of the cell's
  exercise or of one after it in the notebook (an added cell: of any): the library code that
  solves it (the detail names that exercise if it is another one);
* ``answer`` -- a cell that defines the answer of another exercise (an answer put where that
  exercise's own cell would not show it);
* ``locked`` -- a locked cell (text, setup, grader) changed or deleted (autograde restores it;
  the flag says someone tried);
* ``unreadable`` -- an answer cell that is not Python (IPython's magics are translated first),
  or a whole submission the audit cannot read (malformed cells, code nested too deep): one flag,
  never a crash;
* ``scored without a PASS line`` -- a grader cell of ``autograded/<student>/<assignment>/`` that
  scored above 0 while its output holds no ``PASS     <title>:`` line: however the failure was
  switched off in the kernel, the grader did not pass it.

Some names are flagged whatever they resolve to (:data:`NAMES`: ``mlnn``, ``course``,
``AUTOGRADE``, ``_getframe``, ``_ip``, ``attrgetter``, ...), as are strings naming the graders and
any attribute assigned or deleted on an imported module or on a base that is not a plain local
name (``np.max = ...``); a routine of any exercise's ``reaches`` is matched also by its final
name, in every cell of the notebook.

Names are resolved through the notebook's imports and assignments in every cell, so
``from mlnn.paper import ranks as r; r.friedman_test``, ``import mlnn.paper.ranks``,
``__import__("mlnn.course")``, ``getattr(m, "name")`` and ``sys.modules["..."]`` all count.
What it cannot see: code whose names are built at run time (a computed ``getattr`` or
``__import__`` is flagged as such, but not what it reaches), and answers copied by hand from
elsewhere. Every flag is a reason to read the cell, not a verdict.
"""

import ast
import builtins
import csv
import io
import json
import re
from pathlib import Path
from typing import NamedTuple

from mlnn.base.errors import MLNNError
from mlnn.base.fileio import write_text
from mlnn.course.registry import EXERCISES

#: (dotted prefix, kind) of what an answer cell must not reach; a name matches a prefix when it
#: equals it or continues it with a dot.
FORBIDDEN = (
    *((name, "files") for name in (
        "builtins.open", "builtins.exec", "builtins.eval", "builtins.compile", "io.open",
        "os.open", "os.system", "os.popen", "os.execv", "os.execve", "os.spawnv", "subprocess",
        "runpy", "pathlib", "shutil", "codecs.open", "zipimport", "pickle", "marshal",
        "get_ipython.run_line_magic", "get_ipython.system", "get_ipython.run_cell_magic")),
    *((name, "grader") for name in ("mlnn.course", "mlnn.tools", "nbgrader")),
    *((name, "internals") for name in (
        "gc", "inspect", "importlib", "builtins.__import__", "builtins.globals",
        "builtins.locals", "builtins.vars", "builtins.setattr", "builtins.delattr",
        "builtins.__builtins__", "builtins.get_ipython", "builtins.breakpoint", "sys.modules",
        "sys._getframe", "sys.settrace", "sys.setprofile", "sys.meta_path", "sys.path_hooks",
        "sys.path", "sys.exc_info", "sys.audit", "sys.addaudithook", "ctypes", "types",
        "dis", "IPython", "site", "__builtins__")),
    *((name, "environment") for name in (
        "os.environ", "os.environb", "os.putenv", "os.unsetenv", "os.getenv", "posix", "nt")),
)

#: Attributes that open a function, frame or class to its insides.
DUNDERS = {"__closure__", "__code__", "__globals__", "__defaults__", "__kwdefaults__",
           "__dict__", "__builtins__", "__wrapped__", "__subclasses__", "__self__", "__func__",
           "__getattribute__", "__loader__", "__spec__", "cell_contents", "f_globals", "f_locals",
           "f_back", "f_builtins", "gi_frame", "cr_frame", "tb_frame", "co_consts", "co_code"}

#: Methods that read a file's contents.
READERS = {"read_text", "read_bytes", "exec_module", "load_module", "get_source", "get_code",
           "get_data"}

#: A string that names the worked solutions.
SOLUTIONS = re.compile(r"solution", re.I)

#: A string that names the graders or their switch.
GRADER_STRINGS = re.compile(r"mlnn\.course|grading|AUTOGRADE")

#: Names (identifiers or attributes) flagged whatever they resolve to: the grader's package and
#: switch, the interpreter's module table and frames, IPython's shell and history, the generic
#: attribute setters and getters, the process environment.
NAMES = {"mlnn": "grader", "course": "grader", "grading": "grader", "AUTOGRADE": "grader",
         "modules": "internals", "_getframe": "internals", "f_locals": "internals",
         "f_globals": "internals", "f_back": "internals", "_ip": "internals",
         "__builtin__": "internals", "__builtins__": "internals", "get_ipython": "internals",
         "In": "internals", "Out": "internals", "_ih": "internals", "_oh": "internals",
         "__setattr__": "internals", "__getattribute__": "internals", "__dict__": "internals",
         "attrgetter": "internals", "methodcaller": "internals", "pkgutil": "internals",
         "exit": "internals", "quit": "internals", "operator": "internals",
         "environ": "environment", "environb": "environment", "putenv": "environment",
         "unsetenv": "environment", "getenv": "environment"}

#: Of :data:`NAMES`, those an answer may call by name (``exit()``) but not use as an object.
CALLABLE = {"exit", "quit"}


class Flag(NamedTuple):
    """One finding: the ``cell`` (grade id or cell id) of ``exercise`` in ``assignment``, its
    ``kind`` and what was reached (``detail``)."""

    student: str
    assignment: str
    exercise: str
    cell: str
    kind: str
    detail: str


def python(source):
    """``source`` as plain Python (IPython's ``%magic`` and ``!shell`` lines translated)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return source
    try:
        return TransformerManager().transform_cell(source)
    except Exception:                       # IPython's transformer fails on broken input
        return source


def bound(tree):
    """Names a cell binds itself (assignments, parameters, definitions, imports)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


class Resolver:
    """The dotted names a notebook's expressions refer to, through its imports and simple
    assignments (``r = mlnn.paper.ranks``), cell after cell."""

    def __init__(self):
        self.names = {}

    def dotted(self, node, local=frozenset()):
        """The dotted name ``node`` refers to (``mlnn.paper.ranks.friedman_test``), or None."""
        if isinstance(node, ast.Name):
            if node.id in self.names:
                return self.names[node.id]
            if node.id == "__builtins__":
                return "__builtins__"
            builtin = node.id in dir(builtins) or node.id == "get_ipython"
            return f"builtins.{node.id}" if builtin and node.id not in local else None
        if isinstance(node, ast.Attribute):
            attrs = []
            while isinstance(node, ast.Attribute):      # iterative: chains of any length
                attrs.append(node.attr)
                node = node.value
            base = self.dotted(node, local)
            return base and ".".join([base, *reversed(attrs)])
        if isinstance(node, ast.Subscript):
            key = node.slice
            if self.dotted(node.value, local) == "sys.modules" and _string(key):
                return key.value
        if isinstance(node, ast.Call):
            return self.called(node, local)
        return None

    def called(self, node, local):
        """What a call returns by name: ``__import__("a.b")``, ``import_module("a.b")``,
        ``getattr(x, "y")``; else None."""
        function = self.dotted(node.func, local)
        args = node.args
        if function in ("builtins.__import__", "importlib.import_module") and args \
                and _string(args[0]):
            return args[0].value
        if function == "builtins.getattr" and len(args) >= 2 and _string(args[1]):
            base = self.dotted(args[0], local)
            return base and f"{base}.{args[1].value}"
        return None

    def learn(self, tree):
        """Record the names ``tree`` (one cell) binds by import or simple assignment."""
        local = bound(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.names[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        self.names[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    self.names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.Assign):
                target = self.dotted(node.value, local)
                for name in node.targets:
                    if isinstance(name, ast.Name) and target:
                        self.names[name.id] = target


def _string(node):
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _matches(name, prefix):
    return name == prefix or name.startswith(prefix + ".")


def _named(node, calls):
    """``(kind, detail)`` of a name of :data:`NAMES` that ``node`` uses, or None; ``calls``
    the ids of nodes that are called (``exit()`` is allowed, ``exit._ip`` is not)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        name = node.id
    elif isinstance(node, ast.Attribute):
        name = node.attr
    elif isinstance(node, ast.alias) and node.name.split(".")[0] in ("operator", "pkgutil"):
        return NAMES[node.name.split(".")[0]], f"import {node.name}"
    else:
        return None
    if name not in NAMES or (name in CALLABLE and id(node) in calls):
        return None
    return NAMES[name], f"the name {name}"


def _root(target):
    """The innermost node under an attribute target's chain of attributes, subscripts and
    calls, and whether the chain passes through a subscript or a call."""
    node, indirect = target.value, False
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        indirect |= not isinstance(node, ast.Attribute)
        node = node.func if isinstance(node, ast.Call) else node.value
    return node, indirect


def _assigned(tree, resolver, local):
    """``(kind, detail)`` of each attribute assigned or deleted on a base other than a plain
    local name: an imported module or builtin, a subscript, a call, a tuple (``self.x = ...``
    and ``array.data = ...`` on a local are not)."""
    targets = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets += node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets.append(node.target)
        elif isinstance(node, ast.Delete):
            targets += node.targets
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            targets.append(node.target)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            targets.append(node.optional_vars)
    found = []
    while targets:
        target = targets.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            targets += target.elts
        elif isinstance(target, ast.Starred):
            targets.append(target.value)
        elif isinstance(target, ast.Attribute):
            root, indirect = _root(target)
            named = isinstance(root, ast.Name)
            if not named or indirect or resolver.dotted(root, local):
                found.append(("internals", f"assigns {ast.unparse(target)} (an attribute of "
                              "something other than a local name)"))
    return found


def _routines(node, resolver, local, reaches):
    """``(exercise, routine)`` of each ``reaches`` entry that ``node`` names, by its resolved
    dotted name or by its final name under any path."""
    name = resolver.dotted(node, local) if isinstance(
        node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) else None
    last = node.attr if isinstance(node, ast.Attribute) else \
        node.id if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) else \
        node.name.split(".")[-1] if isinstance(node, ast.alias) else None
    return [(exercise, name if name and _matches(name, reach) else reach)
            for exercise, routines in reaches.items() for reach in routines
            if (name and _matches(name, reach)) or last == reach.rsplit(".", 1)[-1]]


def findings(tree, resolver, reaches=None, exercise=""):
    """``[(kind, detail), ...]`` of one answer cell (``tree``), names resolved by
    ``resolver``; ``reaches`` ``{exercise: library routines that solve it}`` of the notebook
    (a tuple: those of ``exercise``), checked for every exercise by resolved and final name."""
    if not isinstance(reaches, dict):
        reaches = {exercise: tuple(reaches or ())}
    local, found = bound(tree), _assigned(tree, resolver, bound(tree))
    calls = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    for node in ast.walk(tree):
        named = _named(node, calls)
        if named:
            found.append(named)
        for owner, routine in _routines(node, resolver, local, reaches):
            found.append(("library", routine if owner == exercise
                          else f"{routine} (the routine of {owner})"))
        if _string(node) and GRADER_STRINGS.search(node.value):
            found.append(("grader", repr(node.value)))
        if _string(node) and node.value in DUNDERS | {n for n in NAMES if n.startswith("_")}:
            found.append(("internals", f"the string {node.value!r}"))
        if isinstance(node, ast.Attribute) and node.attr in DUNDERS:
            found.append(("internals", f".{node.attr}"))
        if isinstance(node, ast.Attribute) and node.attr in READERS:
            found.append(("files", f".{node.attr}()"))
        if _string(node) and SOLUTIONS.search(node.value):
            found.append(("files", repr(node.value)))
        if isinstance(node, ast.Call) and resolver.dotted(node.func, local) in (
                "builtins.getattr", "builtins.__import__", "importlib.import_module") \
                and resolver.called(node, local) is None:
            found.append(("internals", f"{ast.unparse(node.func)}() with a computed name"))
        names = []
        if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
            names = [resolver.dotted(node, local)]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        if any(_matches(name, "builtins") for name in names if isinstance(node, ast.stmt)):
            found.append(("internals", "import builtins"))
        for name in filter(None, names):
            found += [(kind, name) for prefix, kind in FORBIDDEN if _matches(name, prefix)]
    found = list(dict.fromkeys(found))
    return [(kind, detail) for kind, detail in found      # os.environ.pop, not os.environ too
            if not any(k == kind and d.startswith(detail + ".") for k, d in found)]


def _cells(notebook):
    """The notebook's cells; ValueError if they are not a list of cells."""
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list) or not all(isinstance(cell, dict) for cell in cells):
        raise ValueError("its cells are not a list of cells")
    return cells


def _source(cell):
    """A cell's source as one string; ValueError if it is neither a string nor strings."""
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        return "".join(source)
    if isinstance(source, str):
        return source
    raise ValueError(f"cell {cell.get('id', '?')}: its source is not text")


def _meta(cell):
    """A cell's nbgrader metadata (empty if none); ValueError if malformed."""
    metadata = cell.get("metadata", {})
    meta = metadata.get("nbgrader", {}) if isinstance(metadata, dict) else None
    if not isinstance(meta, dict):
        raise ValueError(f"cell {cell.get('id', '?')}: its metadata are not a mapping")
    if not isinstance(meta.get("grade_id", ""), str):
        raise ValueError(f"cell {cell.get('id', '?')}: its grade_id is not text")
    return meta


def reaches_of(assignment):
    """``{exercise name: reaches}`` of the assignment's notebook (registry)."""
    k = assignment.split("_", 1)[0]
    return {e.name: tuple(e.reaches) for e in EXERCISES if e.notebook == k}


def audit_notebook(submitted, released, student="", assignment=""):
    """The :class:`Flag` list of one submitted notebook against its release (both dicts); a
    submission the audit cannot read (malformed cells, code nested too deep) gives one
    ``unreadable`` flag."""
    try:
        return _audit_notebook(submitted, released, student, assignment)
    except (ValueError, TypeError, AttributeError, RecursionError, MemoryError) as error:
        why = "nested too deep to analyse" if isinstance(error, (RecursionError, MemoryError)) \
            else str(error)
        return [Flag(student, assignment, "-", "-", "unreadable", why)]


def _audit_notebook(submitted, released, student, assignment):
    k = assignment.split("_", 1)[0]
    reaches = reaches_of(assignment)
    locked = {_meta(c)["grade_id"]: c for c in _cells(released)
              if _meta(c).get("locked") and not _meta(c).get("solution")}
    flags, seen, resolver = [], set(), Resolver()

    def flag(exercise, cell, kind, detail):
        flags.append(Flag(student, assignment, exercise, cell, kind, detail))

    for cell in _cells(submitted):
        grade_id = _meta(cell).get("grade_id") or f"added cell {cell.get('id', '?')}"
        seen.add(grade_id)
        if cell.get("cell_type") != "code":
            if grade_id in locked and _source(cell).strip() != _source(locked[grade_id]).strip():
                flag("-", grade_id, "locked", "a locked cell changed")
            continue
        try:
            tree = ast.parse(python(_source(cell)))
        except SyntaxError as error:
            if grade_id not in locked:
                flag(_exercise(grade_id, k), grade_id, "unreadable",
                     f"not Python (line {error.lineno}: {error.msg})")
            continue
        if grade_id in locked and _source(cell).strip() == _source(locked[grade_id]).strip():
            resolver.learn(tree)
            continue
        if grade_id in locked:
            flag("-", grade_id, "locked", "a locked cell changed")
        exercise = _exercise(grade_id, k)
        resolver.learn(tree)
        for kind, detail in findings(tree, resolver, _from(reaches, exercise), exercise):
            flag(exercise, grade_id, kind, detail)
        for name in sorted(_defined(tree) & reaches.keys() - {exercise}):
            flag(exercise, grade_id, "answer", f"defines {name}, the answer of another exercise")
    for grade_id in locked.keys() - seen:
        flag("-", grade_id, "locked", "a locked cell deleted")
    return flags


def _from(reaches, exercise):
    """The ``reaches`` of ``exercise`` and of the exercises after it in the notebook: a routine
    of an exercise done earlier may serve a later answer (06b's ``select_C`` scores with the
    measures written by hand before it); an added cell is checked against all of them."""
    names = list(reaches)
    return {name: reaches[name] for name in names[names.index(exercise):]} \
        if exercise in reaches else reaches


def _defined(tree):
    """The names a cell binds at its top level (definitions, assignments, imports)."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def _exercise(grade_id, k):
    """The exercise a grade id belongs to (``03-rank_loss_one`` -> ``rank_loss_one``)."""
    if grade_id.startswith(f"{k}-") and not grade_id.startswith(f"{k}-cell-"):
        return grade_id[len(k) + 1:].removesuffix("-test")
    return grade_id


def load(path):
    """A notebook's JSON; :class:`MLNNError` naming ``path`` if it is not one."""
    try:
        notebook = json.loads(Path(path).read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise MLNNError(f"{path}: not a notebook ({error})") from None
    if not isinstance(notebook, dict):
        raise MLNNError(f"{path}: not a notebook (no cells)")
    return notebook


def audit(course):
    """Every :class:`Flag` of every submission under ``course/submitted``, by student and
    assignment, and of every grader cell that scored in ``course/autograded`` without its PASS
    line (:func:`unearned`); :class:`MLNNError` if ``course`` has no release to compare with."""
    course = Path(course)
    if not (course / "release").is_dir():
        raise MLNNError(f"{course}: no release/ directory; run the audit in an nbgrader course "
                        "directory after `nbgrader generate_assignment`")
    flags = []
    for path in sorted(course.glob("submitted/*/*/*.ipynb")):
        student, assignment = path.parts[-3], path.parts[-2]
        released = course / "release" / assignment / path.name
        if not released.is_file():
            continue
        try:
            submitted = load(path)
        except MLNNError as error:
            flags.append(Flag(student, assignment, "-", path.name, "unreadable", str(error)))
            continue
        flags += audit_notebook(submitted, load(released), student, assignment)
    return flags + unearned(course)


#: The line :func:`mlnn.course.grading.grade` prints for a passed check (``PASS     title: ``).
PASS_LINE = re.compile(r"^PASS {5}\S[^\n]*?: ", re.M)

#: The kind of flag of a grader cell that scored without printing its PASS line.
UNEARNED = "scored without a PASS line"


def _stdout(cell):
    """The text a code cell printed to stdout, as stored in the notebook."""
    texts = [out.get("text", "") for out in cell.get("outputs", []) or []
             if isinstance(out, dict) and out.get("output_type") == "stream"
             and out.get("name", "stdout") == "stdout"]
    return "".join("".join(t) if isinstance(t, list) else str(t) for t in texts)


def unearned_notebook(notebook, points, student="", assignment=""):
    """The :class:`Flag` of each grader cell of one autograded ``notebook`` that scored above 0
    while its output holds no PASS line: the grader did not pass it, so something in the
    kernel switched the failure off (whatever way it was done). ``points`` maps grade ids to
    the gradebook's scores; a cell missing there scored its points if it shows no error (as
    nbgrader scores it)."""
    k = assignment.split("_", 1)[0]
    flags = []
    for cell in _cells(notebook):
        meta = _meta(cell)
        if cell.get("cell_type") != "code" or not meta.get("grade") or meta.get("solution"):
            continue
        failed = any(isinstance(out, dict) and out.get("output_type") == "error"
                     for out in cell.get("outputs", []) or [])
        score = points.get(meta.get("grade_id"), 0 if failed else meta.get("points", 0))
        if score and float(score) > 0 and not PASS_LINE.search(_stdout(cell)):
            flags.append(Flag(student, assignment, _exercise(meta["grade_id"], k),
                              meta["grade_id"], UNEARNED,
                              f"scored {score}, but its output holds no `PASS     <title>:` "
                              "line: the grader did not pass it"))
    return flags


def unearned(course):
    """:func:`unearned_notebook` of every notebook under ``course/autograded``, the scores
    read from the gradebook where there is one; one ``unreadable`` flag per notebook that
    cannot be read."""
    course, flags = Path(course), []
    points = grade_points(course)
    for path in sorted(course.glob("autograded/*/*/*.ipynb")):
        student, assignment = path.parts[-3], path.parts[-2]
        ids = {grade_id: score for (s, a, grade_id), score in points.items()
               if (s, a) == (student, assignment)}
        try:
            flags += unearned_notebook(load(path), ids, student, assignment)
        except (MLNNError, ValueError, TypeError, AttributeError) as error:
            flags.append(Flag(student, assignment, "-", path.name, "unreadable",
                              f"autograded notebook: {error}"))
    return flags


def _grades(course):
    """``(student, assignment, grade id, score, max score)`` of every graded cell in the
    course's gradebook, if nbgrader and ``gradebook.db`` are there; else nothing."""
    database = Path(course) / "gradebook.db"
    try:
        from nbgrader.api import Gradebook
    except ImportError:
        return []
    if not database.is_file():
        return []
    with Gradebook(f"sqlite:///{database}") as gradebook:
        return [(submission.student.id, assignment.name, grade.name, grade.score,
                 grade.max_score)
                for assignment in gradebook.assignments
                for submission in gradebook.assignment_submissions(assignment.name)
                for notebook in submission.notebooks for grade in notebook.grades]


def grade_points(course):
    """``{(student, assignment, grade id): score}`` from the gradebook (empty without one)."""
    return {(student, assignment, grade_id): score
            for student, assignment, grade_id, score, _ in _grades(course)}


def scores(course):
    """``{(student, assignment, exercise): (score, max score)}`` from the gradebook (empty
    without one)."""
    return {(student, assignment, _exercise(grade_id, assignment.split("_", 1)[0])):
            (score, most) for student, assignment, grade_id, score, most in _grades(course)}


COLUMNS = ("student_id", "assignment", "exercise", "score", "max_score", "cell", "flag",
           "detail")


def rows(flags, grades):
    """The report's rows: each flag beside the exercise's score in the gradebook."""
    out = []
    for f in flags:
        score, most = grades.get((f.student, f.assignment, f.exercise), ("", ""))
        out.append(dict(zip(COLUMNS, (f.student, f.assignment, f.exercise, score, most, f.cell,
                                      f.kind, f.detail))))
    return out


def csv_text(report):
    handle = io.StringIO()
    writer = csv.DictWriter(handle, COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(report)
    return handle.getvalue()


def table(report):
    """The report as a readable table, one line per flag."""
    if not report:
        return "no flags: no answer cell reaches a solution, a grader, the environment or the " \
               "library routine of its exercise, and no locked cell changed"
    widths = {c: max(len(c), *(len(str(r[c])) for r in report)) for c in COLUMNS[:-1]}
    line = "  ".join(f"{{{c}:<{widths[c]}}}" for c in COLUMNS[:-1]) + "  {detail}"
    return "\n".join([line.format(**{c: c for c in COLUMNS})] +
                     [line.format(**{c: str(v) for c, v in r.items()}) for r in report])


def write_report(course, out=None):
    """Audit ``course``, write the CSV (``out``, default ``course/audit.csv``); the rows."""
    report = rows(audit(course), scores(course))
    write_text(Path(out) if out else Path(course) / "audit.csv", csv_text(report))
    return report


def flags_by_submission(course):
    """``{(student, assignment): "exercise: flag detail; ..."}`` for the export."""
    summary = {}
    for f in audit(course):
        summary.setdefault((f.student, f.assignment), []).append(
            f"{f.exercise}: {f.kind} {f.detail}")
    return {key: "; ".join(items) for key, items in summary.items()}


try:
    from nbgrader.plugins.export import CsvExportPlugin
except ImportError:                             # nbgrader is the instructor's extra
    CsvExportPlugin = object


class FlagsExportPlugin(CsvExportPlugin):
    """``nbgrader export`` as nbgrader writes it, with a ``flags`` column: the audit's flags of
    each submission (the course's ``nbgrader_config.py`` sets it as the export plugin)."""

    def export(self, gradebook):
        super().export(gradebook)
        dest = Path(self.to or "grades.csv")
        with open(dest, newline="", encoding="utf-8") as handle:
            graded = list(csv.DictReader(handle))
        flags = flags_by_submission(Path.cwd())
        handle = io.StringIO()
        writer = csv.DictWriter(handle, [*graded[0].keys(), "flags"] if graded else ["flags"],
                                lineterminator="\n")
        writer.writeheader()
        for row in graded:
            writer.writerow(dict(row, flags=flags.get((row["student_id"], row["assignment"]),
                                                      "")))
        write_text(dest, handle.getvalue())
