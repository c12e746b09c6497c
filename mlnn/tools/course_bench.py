"""How long grading one student takes (``python -m mlnn course bench``).

Builds the course in a temporary directory (``course source``, ``nbgrader generate_assignment``),
submits the worked solutions of every notebook for one student and times ``python -m mlnn
course grade`` on it, as an instructor runs it: a new process, every answer cell in a confined
process of its own. Needs nbgrader (the ``instructor`` extra). Prints the seconds and the auto
points, which must be every point of the registry.
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mlnn.base.errors import MLNNError
from mlnn.course.registry import EXERCISES
from mlnn.tools import nbgrader_course as tool


def run(course, *args):
    """Run ``python *args`` in ``course`` in a session of its own (ended with this one);
    :class:`MLNNError` with the end of its output if it fails."""
    env = dict(os.environ, MPLBACKEND="Agg")
    with subprocess.Popen([sys.executable, *args], cwd=course, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          start_new_session=True) as process:
        try:
            out, _ = process.communicate()
        finally:
            if process.poll() is None:
                os.killpg(process.pid, 9)
    if process.returncode != 0:
        raise MLNNError(f"{' '.join(args[:4])} failed: {out[-2000:]}")
    return out


def build(course, student="solved"):
    """The source version, the release, and the worked solutions submitted as ``student``."""
    stems = tool.write_source(course)
    run(course, "-m", "nbgrader", "generate_assignment", "*")
    for stem in stems:
        folder = Path(course) / "submitted" / student / stem
        folder.mkdir(parents=True, exist_ok=True)
        tool.write(folder / f"{stem}.ipynb", tool.read(Path(course) / "source" / stem /
                                                       f"{stem}.ipynb"))
    return stems


def main():
    with tempfile.TemporaryDirectory(prefix="mlnn-bench-grade-") as course:
        stems = build(course)
        start = time.perf_counter()
        out = run(course, "-m", "mlnn", "course", "grade", ".")
        seconds = time.perf_counter() - start
    points = sum(int(line.split()[2]) for line in out.splitlines()
                 if line.endswith("auto points"))
    total = sum(e.points for e in EXERCISES)
    print(f"course grade of one student's {len(stems)} notebooks: {seconds:.1f} s on "
          f"{os.cpu_count()} cores; {points} of {total} auto points")
    return 0 if points == total else 1
