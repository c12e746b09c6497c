"""How long ``python -m mlnn`` takes to start, and what it imports on the way.

:func:`benchmark_startup` times ``--help`` and ``predict --text`` on one sentence in fresh
processes (median of ``repeats``, wall time) beside ``pip --version``, the yardstick of a Python
command line; :func:`imported_modules` lists what a command imports: a count a test can hold.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mlnn.base.errors import MLNNError
from mlnn.base.fileio import write_text
from mlnn.datasets.text import TfidfVectorizer
from mlnn.model.estimator import MultiLabelNN
from mlnn.tools.machine import machine_info

#: The sentence ``predict --text`` labels (one document, in a file of its own).
SENTENCE = "The central bank raised interest rates as oil prices fell."

#: Modules no command but ``course`` may import: the course, its tools and nbgrader.
COURSE_MODULES = ("mlnn.course", "mlnn.tools.course_", "mlnn.tools.nbgrader_course", "nbgrader")


def text_model(path):
    """Write a small model trained on text (so that it has a vectorizer) to ``path``."""
    documents = ["oil prices rose", "the bank cut rates", "oil and gas output fell",
                 "rates rose at the central bank"] * 5
    vectorizer = TfidfVectorizer()
    X = vectorizer.fit_transform(documents)
    model = MultiLabelNN(hidden_units=4, max_epochs=2, random_state=0)
    model.fit(X, [[1, 0], [0, 1]] * 10, label_names=["crude", "interest"], vectorizer=vectorizer)
    model.save(path)
    return path


def _seconds(argv):
    started = time.perf_counter()
    process = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - started
    if process.returncode != 0:
        last = (process.stderr.strip().splitlines() or ["no message"])[-1]
        raise MLNNError(f"'{' '.join(argv[1:])}' failed (exit code {process.returncode}): {last}")
    return seconds


def benchmark_startup(repeats=5, model=None):
    """{command: {"runs": seconds of each run, "median": ...}} with ``predict`` on ``model``
    (default: :func:`text_model`'s), the machine and its load average."""
    described = "a small text model made for the run (text_model)" if model is None else \
        f"{Path(model).name}, {Path(model).stat().st_size:,} bytes"
    mlnn = [sys.executable, "-m", "mlnn"]
    with tempfile.TemporaryDirectory() as folder:
        model = model or text_model(Path(folder) / "text_model.npz")
        text = Path(folder) / "sentence.txt"
        write_text(text, SENTENCE + "\n")
        timed = {}
        for name, argv in {"help": [*mlnn, "--help"],
                           "predict_text": [*mlnn, "predict", "--model", str(model), "--text",
                                            str(text)],
                           "pip_version": [sys.executable, "-m", "pip", "--version"]}.items():
            _seconds(argv)                                  # warm the file cache
            runs = [_seconds(argv) for _ in range(repeats)]
            timed[name] = {"runs": runs, "median": statistics.median(runs)}
    return {"seconds": timed, "repeats": repeats, "model": described,
            "machine": machine_info(), "load_average": list(os.getloadavg())}


#: A child that runs ``python -m mlnn`` and, as it exits, writes the names in ``sys.modules``.
_LIST_MODULES = ("import atexit, json, runpy, sys\n"
                 "out = sys.argv.pop(1)\n"
                 "atexit.register(lambda: open(out, 'w').write(json.dumps(sorted(sys.modules))))\n"
                 "sys.argv[0] = 'mlnn'\n"
                 "runpy.run_module('mlnn', run_name='__main__', alter_sys=True)\n")


def imported_modules(args, cwd=None):
    """The names of the modules ``python -m mlnn ARGS`` has imported when it exits."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "modules.json"
        subprocess.run([sys.executable, "-c", _LIST_MODULES, str(out), *args],
                       capture_output=True, cwd=cwd, timeout=600)
        return json.loads(out.read_text())


def format_startup(result):
    """The report of a :func:`benchmark_startup` result."""
    machine = result["machine"]
    lines = [f"start-up of python -m mlnn, wall time, median of {result['repeats']} runs, "
             f"predict with {result['model']} (load average "
             f"{', '.join(map(str, result['load_average']))}; "
             f"{machine['cores']} cores, {machine['cpu']}, Python {machine['python']}):"]
    lines += [f"  {name:14s} {entry['median']:7.3f} s   (runs: "
              + " ".join(f"{s:.3f}" for s in entry["runs"]) + ")"
              for name, entry in result["seconds"].items()]
    return "\n".join(lines)
