"""How long nbgrader's autograde takes for one student (``python -m mlnn course bench-autograde``).

Builds the course in a directory (``course source``, ``nbgrader generate_assignment``), submits
the worked solutions of every notebook for one student and times ``nbgrader autograde`` of each
assignment, then of all eleven in one call, as an instructor runs it. Nothing else is set: the
notebooks find out from nbgrader that they are autograded (fast mode, demonstrations skipped).
Needs nbgrader (the ``instructor`` extra).
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mlnn.base.errors import MLNNError
from mlnn.tools import nbgrader_course as tool


def nbgrader(course, *args, env=None):
    """Run ``nbgrader *args`` in ``course``; :class:`MLNNError` with the end of its log if it
    fails."""
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course,
                          env=env or environment(), capture_output=True, text=True)
    if done.returncode != 0:
        raise MLNNError(f"nbgrader {' '.join(args)} failed: {done.stderr[-2000:]}")
    return done


def environment():
    """The environment nbgrader runs in: ours, with matplotlib drawing off screen and the
    interpreter's directory first on PATH (its jupyter kernel)."""
    return dict(os.environ, MPLBACKEND="Agg",
                PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))


def build(course, student="solved"):
    """Write the source version and the release into ``course`` and submit the worked
    solutions as ``student``; returns the assignment names."""
    stems = tool.write_source(course)
    nbgrader(course, "generate_assignment", "*")
    for stem in stems:
        folder = Path(course) / "submitted" / student / stem
        folder.mkdir(parents=True, exist_ok=True)
        tool.write(folder / f"{stem}.ipynb", tool.read(Path(course) / "source" / stem /
                                                       f"{stem}.ipynb"))
    return stems


def timed(course, *args):
    start = time.perf_counter()
    nbgrader(course, "autograde", *args)
    return time.perf_counter() - start


def bench(course):
    """``({assignment: seconds}, seconds for all in one call)``."""
    stems = build(course)
    each = {stem: timed(course, stem, "--create", "--force") for stem in stems}
    return each, timed(course, "*", "--create", "--force")


def main(course=None):
    with tempfile.TemporaryDirectory(prefix="mlnn-bench-autograde-") as scratch:
        each, total = bench(Path(course or scratch))
    for stem, seconds in each.items():
        print(f"{stem:<32} {seconds:6.1f} s")
    print(f"{'sum of the eleven calls':<32} {sum(each.values()):6.1f} s")
    print(f"{'autograde of one student, one call':<32} {total:6.1f} s")
    return 0
