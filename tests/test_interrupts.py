"""SIGTERM stops a command as Ctrl-C does (:mod:`mlnn.base.interrupts`): ``kill``, ``timeout``, a
scheduler or a container stopping ``python -m mlnn`` get one line and exit code 143, and a file
being written is left as it was, without its temporary ``.part`` file. Each signal is sent to a
child process, each child bounded in time."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mlnn.base import interrupts
from mlnn.cli import main

ROOT = Path(__file__).resolve().parents[1]
TRAIN = ["train", "--dataset", "synthetic", "-o", "n_train=300", "--hidden-units", "8",
         "--epochs", "2", "--out", "model.npz", "--quiet"]


def _env(tmp_path, *path):
    return dict(os.environ, PYTHONPATH=os.pathsep.join([*map(str, path), str(ROOT)]),
                OPENBLAS_NUM_THREADS="1", MLNN_CACHE=str(tmp_path / "cache"))


def _default_signals():
    """SIGINT and SIGTERM at their defaults in the child, as in a terminal or a batch job,
    whatever the test runner inherited."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


#: The child: ``python -m mlnn ARGS`` (run as ``-m`` runs it) whose model file write sends
#: the process SIGTERM when half the file is written, then waits for it, then writes the rest.
TERMINATED_MID_WRITE = """
import os, runpy, signal, sys, time
import numpy as np

savez = np.savez

def half_then_sigterm(handle, **entries):
    handle.write(b"PK\\x03\\x04 half of a model file")
    handle.flush()
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(5)                                  # the signal arrives during the write
    savez(handle, **entries)

np.savez = half_then_sigterm
sys.argv = ["mlnn", *sys.argv[1:]]
runpy.run_module("mlnn", run_name="__main__", alter_sys=True)
"""


def _listing(directory):
    return sorted(p.name for p in directory.iterdir())


def test_sigterm_while_train_writes_the_model_file_keeps_the_old_one_and_no_part(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    first = subprocess.run([sys.executable, "-m", "mlnn", *TRAIN], cwd=work,
                           env=_env(tmp_path), capture_output=True, timeout=300)
    assert first.returncode == 0, first.stderr
    old = (work / "model.npz").read_bytes()
    again = subprocess.run([sys.executable, "-c", TERMINATED_MID_WRITE, *TRAIN, "--seed", "1"],
                           cwd=work, env=_env(tmp_path), capture_output=True, timeout=300,
                           preexec_fn=_default_signals)
    assert (again.returncode, again.stderr) == (143, b"mlnn: terminated\n")
    assert again.stdout.startswith(b"training NN_AD on synthetic") and b"saved" not in again.stdout
    assert _listing(work) == ["model.npz"]                  # no .part file left beside it
    assert (work / "model.npz").read_bytes() == old


def _mlnn(*args, cwd, env):
    return subprocess.Popen([sys.executable, "-m", "mlnn", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_default_signals)


def test_sigterm_during_training_is_one_line_exit_143_and_no_model(tmp_path):
    """As Ctrl-C is (tests/test_cli_faults.py)."""
    process = _mlnn("train", "--dataset", "synthetic", "-o", "n_train=20000", "--hidden-units",
                    "64", "--epochs", "100", "--out", "model.npz", cwd=tmp_path,
                    env=_env(tmp_path / "elsewhere"))
    try:
        assert process.stdout.readline().startswith(b"training NN_AD on synthetic")
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert (process.returncode, err) == (143, b"mlnn: terminated\n")
    assert _listing(tmp_path) == []


@pytest.mark.parametrize("module", ["numpy", "mlnn.paper.study"])
def test_sigterm_while_the_modules_load_is_one_line_and_exit_143(tmp_path, signal_at_import,
                                                                  module):
    process = subprocess.run([sys.executable, "-m", "mlnn", "reproduce", "--help"],
                             env=signal_at_import(module, "SIGTERM"),
                             cwd=tmp_path, capture_output=True, timeout=120,
                             preexec_fn=_default_signals)
    assert (process.returncode, process.stdout, process.stderr) == (
        143, b"", b"mlnn: terminated\n")


#: The child: SIGTERM inside deferred() (under sigterm_stops, as in a command) takes effect
#: after the body, as Terminated; outside a command SIGTERM keeps its default action.
DEFERRED = """
import os, signal
from mlnn.base import interrupts

done = []
with interrupts.sigterm_stops():
    try:
        with interrupts.deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            done.append("body finished")
    except interrupts.Terminated:
        done.append("then terminated")
    print(done, signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL, flush=True)
print(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL, flush=True)
with interrupts.deferred():
    os.kill(os.getpid(), signal.SIGTERM)
print("not reached", flush=True)
"""


def test_sigterm_is_held_back_by_deferred_only_inside_a_command(tmp_path):
    process = subprocess.run([sys.executable, "-c", DEFERRED], env=_env(tmp_path),
                             capture_output=True, timeout=120, preexec_fn=_default_signals)
    assert process.stdout.decode().splitlines() == [
        "['body finished', 'then terminated'] True", "True"]
    assert process.returncode == -signal.SIGTERM            # the default action: killed


def test_the_reproduce_command_stopped_by_sigterm_keeps_what_is_done(tmp_path, monkeypatch,
                                                                     capsys):
    def terminated(*args, **kwargs):
        raise interrupts.Terminated

    monkeypatch.setattr("mlnn.cli.reproduce.run_study", terminated)
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "--dataset", "synthetic", "--out", "results"]) == 143
    assert capsys.readouterr().err == ("mlnn: terminated; the methods completed so far are "
                                       "stored in results\n")


@pytest.mark.parametrize("stop, expected", [(interrupts.Terminated(), ("mlnn: terminated", 143)),
                                            (KeyboardInterrupt(), ("mlnn: interrupted", 130))])
def test_report_gives_128_plus_the_signal_number(stop, expected):
    assert interrupts.report(stop) == expected
