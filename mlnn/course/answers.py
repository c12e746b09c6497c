"""An answer judged where it cannot reach its grader: the answer cell's code runs in a confined
process of its own (:mod:`mlnn.sandbox`), the grader here calls it with data.

:func:`judge_cell` is the one path: the instructor's ``course grade`` takes the cell from a
submitted notebook, a notebook's grader cell from the kernel's own cell (:func:`feedback`), the
same checks, cases and hints either way. The process may import the standard library's common
modules, NumPy, SciPy, matplotlib, and the mlnn modules its exercise ``allows``; nothing of the
graders. It runs the notebook's imports (:func:`preamble`) before the cell; in 01b mlnn's own
pieces stand in for the student's others that the piece ``uses``, and a class answer's driver
is there (:data:`~mlnn.course.drivers.DRIVERS`), so that its state stays where it lives.
"""

import ast
import functools
import linecache
import sys

from mlnn.course.drivers import DRIVERS
from mlnn.course.grading import NO_ANSWER, Report
from mlnn.course.registry import EXERCISES
from mlnn.course.standins import STAND_INS
from mlnn.sandbox.client import Answer, Ended
from mlnn.sandbox.worker import PRELOADED

#: The packages whose imports the notebook's preamble may repeat in an answer's process.
IMPORTABLE = {module.split(".")[0] for module in PRELOADED}


def preamble(sources, allows=()):
    """The import statements of the code ``sources`` (a notebook's cells before the answer)
    that an answer's process can run: those of :data:`IMPORTABLE` and of ``allows``."""
    lines = []
    for source in sources:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in tree.body:
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            if all(n.split(".")[0] in IMPORTABLE or n in allows for n in names):
                lines.append(ast.unparse(node))
    return "\n".join(dict.fromkeys(lines))


def run_cell(exercise, grader, source, imports=""):
    """The :class:`~mlnn.course.grading.Report` of ``grader`` on what the cell ``source``
    defines as the exercise's answer, run in a process of its own."""
    stand_ins = {name: ("mlnn.course.standins", STAND_INS[name].__name__)
                 for name in exercise.uses}
    if exercise.name in DRIVERS:
        stand_ins[DRIVERS[exercise.name][1]] = DRIVERS[exercise.name]
    try:
        with Answer(source, imports, allow=exercise.allows, stand_ins=stand_ins) as answer:
            if answer.error:
                return said(exercise, f"the answer cell raised {answer.error}")
            value = answer.get(exercise.name)
            if value is None:
                return said(exercise, NO_ANSWER)
            return grader(value)
    except Ended as ended:
        return said(exercise, f"the answer's process was stopped: {ended}")


def said(exercise, detail):
    """A NOT YET report about the cell itself, printed as a grader prints its line."""
    report = Report("NOT YET", exercise.name, detail)
    print(f"{report.status:<8} {report.title}: {report.detail}", file=sys.stderr)
    return report


def cell_of(answer):
    """The source of the notebook cell that defined ``answer`` (a function or a class), or None
    if it was not defined in a notebook cell."""
    code = getattr(answer, "__code__", None)
    if code is None and isinstance(answer, type):
        code = next((getattr(v, "__code__", None) for v in vars(answer).values()
                     if getattr(v, "__code__", None) is not None), None)
    name = getattr(code, "co_filename", "")
    if "ipykernel_" not in name and not name.startswith("<ipython-input"):
        return None
    source = "".join(linecache.getlines(name))
    return source or None


def kernel_cells():
    """The cells run so far in this IPython kernel (none outside IPython)."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return list(getattr(shell, "user_ns", {}).get("In", [])) if shell is not None else []


def feedback(grader):
    """``grader`` as a notebook's grader cell calls it: an answer defined in a notebook cell is
    judged in a process of its own, from that cell's source (as the grading command judges
    it); any other answer (a test's function, say) here, without the limits on its work."""
    exercise = next(e for e in EXERCISES if e.grader == grader.__name__)

    @functools.wraps(grader)
    def check(answer):
        source = cell_of(answer) if answer is not None else None
        if source is None:
            return grader(answer)
        return run_cell(exercise, grader, source, preamble(kernel_cells(), exercise.allows))
    return check
