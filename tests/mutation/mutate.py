"""Mutation testing for mlnn: plant one plausible bug at a time and check that the tests notice.

Each entry of :data:`catalogue.MUTANTS` names a library module, an exact snippet of its source, a
replacement (the bug: a sign flip, an off-by-one, a wrong normaliser, a derivative off by 1 %, ...),
the test files that own the module and a one-line description. For each mutant the runner copies
the project (``mlnn/``, ``tests/``, the notebooks, figures and READMEs) into a temporary
directory, replaces the snippet (which must occur exactly once, so the catalogue cannot
silently rot as the code changes), and runs ``python -m pytest -x -q -p no:cacheprovider <owning
test files>`` there with a timeout. A mutant is *caught* if the tests fail (or crash), *survived*
if they pass, *error* if the snippet is missing or ambiguous or pytest times out or cannot run.
First each set of test files runs once on the unchanged copy, and must pass: otherwise a failure
would not be the mutant's. The working tree is never modified.

Usage (from the repository root)::

    python tests/mutation/mutate.py                      # every mutant
    python tests/mutation/mutate.py --module losses      # the mutants of mlnn/nn/losses.py only
    python tests/mutation/mutate.py --id pwe-norm-ybar   # chosen mutants by id
    python tests/mutation/mutate.py --list               # print the catalogue and exit

Recommended environment: ``OPENBLAS_NUM_THREADS=1 HYPOTHESIS_PROFILE=default``. Prints a table and
the summary line "N caught, M survived"; exits 1 if any mutant survived (or errored).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from catalogue import MUTANTS  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
#: What of the project a mutant's copy does without.
LEFT_OUT = (".git", ".hypothesis", ".pytest_cache", "mlnn.egg-info")


def apply(source, original, replacement, where):
    """``source`` with the single occurrence of ``original`` replaced; raises if not exactly one."""
    count = source.count(original)
    if count != 1:
        raise ValueError(f"{where}: snippet found {count} times, expected exactly once: "
                         f"{original!r}")
    return source.replace(original, replacement)


def check_catalogue(mutants, every_id=None):
    """Raise on duplicate ids (among ``every_id``, default ``mutants``), or on missing modules or
    test files or snippets not found exactly once among ``mutants``."""
    ids = [m["id"] for m in (every_id or mutants)]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"duplicate mutant ids: {duplicates}")
    for m in mutants:
        apply((ROOT / m["path"]).read_text(), m["original"], m["replacement"], m["id"])
        missing = [t for t in m["tests"] if not (ROOT / t).is_file()]
        if missing:
            raise ValueError(f"{m['id']}: test files not found: {missing}")


def copy_tree(destination):
    """Copy the project (the library, its tests, the notebooks, the figures, the READMEs, ...)
    into ``destination``, without its history, caches and virtual environments: a test that
    reads any of it must fail for the mutant, not for its absence."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", "venv")
    for path in ROOT.iterdir():
        if path.name in LEFT_OUT:
            continue
        if path.is_dir():
            shutil.copytree(path, destination / path.name, ignore=ignore, symlinks=True)
        else:
            shutil.copy2(path, destination / path.name)


def run_mutant(mutant, timeout):
    """(status, seconds, last line of pytest's output) for one mutant, in a fresh copy; the
    mutant None runs the tests on the unchanged copy (the control: "survived" there means the
    tests pass without a bug, so a failure with one is the bug's)."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mlnn-mutant-") as tmp:
        tmp = Path(tmp)
        copy_tree(tmp)
        target = tmp / mutant["path"]
        try:
            if mutant["original"] is not None:
                target.write_text(apply(target.read_text(), mutant["original"],
                                        mutant["replacement"], mutant["id"]))
        except ValueError as error:
            return "error", time.perf_counter() - started, str(error)
        env = dict(os.environ, PYTHONPATH=str(tmp), PYTHONDONTWRITEBYTECODE="1")
        command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                   *mutant["tests"]]
        try:
            done = subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            return "error", time.perf_counter() - started, f"timeout after {timeout} s"
    lines = (done.stdout.strip().splitlines() or [""])
    # killed by a signal: the mutant crashed the test process (memory read through a bad index,
    # say), which no passing suite does
    status = {0: "survived", 1: "caught"}.get(done.returncode,
                                              "caught" if done.returncode < 0 else "error")
    return status, time.perf_counter() - started, lines[-1]


def select(mutants, modules, ids):
    """The mutants of the given modules (names like ``losses``) and/or ids; all if neither."""
    chosen = [m for m in mutants
              if (not modules or Path(m["path"]).stem in modules) and (not ids or m["id"] in ids)]
    if not chosen:
        raise SystemExit(f"no mutant matches --module {modules} --id {ids}")
    return chosen


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="append", default=[],
                        help="run only the mutants of mlnn/NAME.py (repeatable)")
    parser.add_argument("--id", action="append", default=[],
                        help="run only this mutant (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the catalogue and exit")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per mutant (900)")
    args = parser.parse_args(argv)
    mutants = select(MUTANTS, args.module, args.id)
    check_catalogue(mutants, every_id=MUTANTS)
    if args.list:
        for m in mutants:
            print(f"{m['id']:28s} {m['path']:22s} {m['description']}")
        print(f"{len(mutants)} mutants")
        return 0
    for tests in sorted({tuple(m["tests"]) for m in mutants}):
        control = {"id": "control", "path": mutants[0]["path"], "original": None,
                   "tests": list(tests)}
        status, _, last = run_mutant(control, args.timeout)
        if status != "survived":
            print(f"the unchanged tests {' '.join(tests)} do not pass ({last}): no mutant of "
                  "theirs can be judged")
            return 1
    counts = {"caught": 0, "survived": 0, "error": 0}
    print(f"{'mutant':28s} {'module':22s} {'status':9s} {'time':>6s}  last line of pytest")
    for m in mutants:
        status, seconds, last = run_mutant(m, args.timeout)
        counts[status] += 1
        print(f"{m['id']:28s} {m['path']:22s} {status:9s} {seconds:5.0f}s  {last}", flush=True)
    print(f"{counts['caught']} caught, {counts['survived']} survived"
          + (f", {counts['error']} errors" if counts["error"] else ""))
    return 0 if counts["survived"] == 0 and counts["error"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
