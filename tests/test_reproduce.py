"""The reproduction: the paper's table as package data, model selection on validation, tables;
and a real ``reproduce`` process killed (SIGKILL, SIGINT) during training, during each write and
between the run file and the tables, then run again: no finished method lost, nothing
half-written, no lock left behind."""

import errno
import json
import os
import re
import resource
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mlnn.base.errors import MLNNError
from mlnn.base.validation import validation_split
from mlnn.baselines.svm import DEFAULT_C_VALUES
from mlnn.cli import main
from mlnn.datasets import load
from mlnn.evaluation.metrics import MEASURES
from mlnn.paper.methods import C_VALUES, METHODS, network_params
from mlnn.paper.reproduce import (comparison_rows, markdown_table, merge_runs, paper_table3,
                                  reproduce, write_results)
from mlnn.paper.results import read_run, run_path, tables_current
from mlnn.paper.study import run_study

ROOT = Path(__file__).resolve().parents[1]


def test_paper_table3_holds_all_rows_of_the_paper():
    table = paper_table3()
    assert len(table) == 44
    assert table["Reuters-21578", "NN_AD"]["rankloss"] == 0.0031
    assert table["Delicious", "BR_R"]["maF"] == 0.1152
    assert set(table["Delicious", "NN_A"]) == set(MEASURES)


def test_validation_split_is_seeded_disjoint_and_complete():
    fit, val = validation_split(1000, fraction=0.1, random_state=3)
    assert len(val) == 100 and len(fit) == 900
    assert np.intersect1d(fit, val).size == 0
    np.testing.assert_array_equal(np.sort(np.concatenate([fit, val])), np.arange(1000))
    np.testing.assert_array_equal(validation_split(1000, fraction=0.1, random_state=3)[1], val)
    assert not np.array_equal(validation_split(1000, fraction=0.1, random_state=4)[1], val)


def test_network_methods_match_the_paper():
    assert network_params("NN_AD") == {"hidden_activation": "relu", "loss": "ce", "dropout": 0.5,
                                       "optimizer": "adagrad"}
    assert network_params("bpmll-ta")["loss"] == "pwe"
    assert network_params("bpmll-ta")["hidden_activation"] == "tanh"
    assert network_params("bpmll-rad")["hidden_activation"] == "relu"
    assert sum(spec["kind"] == "br" for spec in METHODS.values()) == 2


def test_the_svm_grid_is_the_papers_and_defined_once():
    assert C_VALUES is DEFAULT_C_VALUES
    np.testing.assert_allclose(C_VALUES, [1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3])


@pytest.fixture(scope="module")
def quick_run():
    data = load("synthetic", n_train=300, n_test=120, n_features=150, n_labels=10)
    return reproduce(data, methods=["nn-a", "bpmll-ta", "br-b", "br-r"], quick=True,
                     log=lambda message: None)


def test_quick_reproduce_records_selection_and_results(quick_run):
    rows, run = quick_run
    assert [row["method"] for row in rows[::10]] == ["NN_A", "BP-MLL_TA", "BR_B", "BR_R"]
    assert all(np.isnan(row["paper"]) for row in rows)          # synthetic is not in the paper
    nn = run["methods"]["NN_A"]
    assert set(nn["validation_rankloss"]) == {0.1}
    assert nn["learning_rate"] == 0.1 and nn["best_epoch"] >= 1
    assert nn["test"]["rankloss"] < 0.25
    assert run["methods"]["BR_B"]["C"] == 1.0
    assert run["settings"]["hidden_units"] == 64


def test_progress_lines_per_method_and_per_grid_value_go_to_stderr(capsys):
    data = load("synthetic", n_train=200, n_test=60, n_features=80, n_labels=6)
    _, run = reproduce(data, methods=["nn-a", "br-r"], quick=True, learning_rates=[0.1, 0.01],
                       C_values=[0.1, 1.0, 10.0], log=lambda message: None, progress=True)
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert [line.split("  elapsed")[0].split(":")[0] for line in lines] == [
        "[1/2] NN_A η0=0.1", "[2/2] NN_A η0=0.01", "[1/2] NN_A on synthetic (seed 0)",
        "[1/3] BR_R C=0.1", "[2/3] BR_R C=1", "[3/3] BR_R C=10",
        "[2/2] BR_R on synthetic (seed 0)"]
    assert all(", about " in line for line in (lines[0], lines[2], lines[3]))
    assert lines[-1].endswith(", done")
    rankloss = run["methods"]["BR_R"]["test"]["rankloss"]
    assert lines[-1].split(": test rank loss ")[1].startswith(f"{rankloss:.4f}")
    reproduce(data, methods=["br-b"], quick=True, log=lambda message: None)
    assert capsys.readouterr().err == ""                        # off by default


def _only(run, methods):
    return {**run, "methods": {m: run["methods"][m] for m in methods}}


def test_tables_are_written_and_merged(quick_run, tmp_path):
    rows, run = quick_run
    write_results(_only(run, ["NN_A"]), tmp_path)
    later = _only(run, ["BP-MLL_TA", "BR_B", "BR_R"])
    merged = merge_runs(read_run(run_path(tmp_path, "synthetic", 0)), later, tmp_path)
    assert list(merged["methods"]) == ["NN_A", "BP-MLL_TA", "BR_B", "BR_R"]
    write_results(merged, tmp_path)
    stored = json.loads((tmp_path / "run_synthetic.json").read_text())
    assert stored["methods"]["NN_A"]["test"] == pytest.approx(run["methods"]["NN_A"]["test"])
    csv_rows = (tmp_path / "table3_synthetic.csv").read_text().splitlines()
    assert len(csv_rows) == 1 + len(merged["methods"]) * len(MEASURES)
    again = comparison_rows(stored)
    assert [(r["method"], r["measure"]) for r in again] == [(r["method"], r["measure"])
                                                             for r in rows]
    np.testing.assert_allclose([r["ours"] for r in again], [r["ours"] for r in rows])
    assert not list(tmp_path.glob("*.part"))


def test_a_repeated_method_takes_the_new_record_and_keeps_the_others(quick_run, tmp_path):
    _, run = quick_run
    stored = {**_only(run, ["NN_A", "BR_B"]), "methods": {
        **_only(run, ["NN_A", "BR_B"])["methods"], "NEWER_METHOD": {"test": {"x": 1}}}}
    new_record = {**run["methods"]["BR_B"], "seconds": -1.0}
    later = {**_only(run, ["BR_B"]), "methods": {"BR_B": new_record}}
    merged = merge_runs(stored, later, tmp_path)
    assert list(merged["methods"]) == ["NN_A", "BR_B", "NEWER_METHOD"]
    assert merged["methods"]["BR_B"] is new_record
    assert merged["methods"]["NN_A"] is stored["methods"]["NN_A"]
    assert merge_runs(None, later, tmp_path) is later


def test_another_seed_is_stored_under_its_own_name(quick_run, tmp_path):
    _, run = quick_run
    write_results(_only(run, ["NN_A"]), tmp_path)
    write_results({**_only(run, ["BR_B"]), "seed": 2}, tmp_path)
    assert list(read_run(run_path(tmp_path, "synthetic", 0))["methods"]) == ["NN_A"]
    assert list(read_run(run_path(tmp_path, "synthetic", 2))["methods"]) == ["BR_B"]
    assert (tmp_path / "table3_synthetic_seed2.md").read_text().startswith(
        "Table 3 on synthetic (seed 2, quick budget)")


def test_a_stored_run_with_other_settings_is_never_dropped(quick_run, tmp_path):
    _, run = quick_run
    write_results(_only(run, ["NN_A"]), tmp_path)
    before = (tmp_path / "run_synthetic.json").read_bytes()
    other = {**_only(run, ["BR_B"]), "settings": {**run["settings"], "hidden_units": 32}}
    with pytest.raises(MLNNError, match=r"run_synthetic.json holds .*hidden_units=64"):
        merge_runs(read_run(run_path(tmp_path, "synthetic", 0)), other, tmp_path)
    assert (tmp_path / "run_synthetic.json").read_bytes() == before


@pytest.mark.parametrize("damage", [lambda text: text[: len(text) // 2], lambda text: "",
                                    lambda text: "[1, 2]", lambda text: text.replace(
                                        '"test"', '"tset"')])
def test_a_damaged_run_file_is_refused_and_left_alone(quick_run, tmp_path, damage):
    _, run = quick_run
    write_results(_only(run, ["NN_A"]), tmp_path)
    path = tmp_path / "run_synthetic.json"
    path.write_text(damage(path.read_text()))
    before = path.read_bytes()
    with pytest.raises(MLNNError, match=r"run_synthetic.json is damaged .* move it aside"):
        read_run(run_path(tmp_path, "synthetic", 0))
    assert path.read_bytes() == before


def test_an_interrupted_write_leaves_the_previous_files(quick_run, tmp_path, monkeypatch):
    _, run = quick_run
    write_results(_only(run, ["NN_A"]), tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def interrupt(rows):
        raise KeyboardInterrupt
    monkeypatch.setattr("mlnn.paper.reproduce.markdown_table", interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_results(run, tmp_path)
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert set(after) == set(before)                     # no partial file left behind
    assert after["table3_synthetic.md"] == before["table3_synthetic.md"]
    # the record is written first, and the tables follow from it on the next write
    assert list(json.loads(after["run_synthetic.json"])["methods"]) == list(run["methods"])


def test_markdown_table_shows_ours_paper_and_difference():
    rows = [{"dataset": "d", "method": "NN_A", "measure": m, "ours": 0.5, "paper": 0.25,
             "difference": 0.25} for m in MEASURES]
    lines = markdown_table(rows).splitlines()
    assert lines[0].startswith("| method | | rankloss")
    assert lines[2] == "| NN_A | ours | " + " | ".join(["0.5000"] * 10) + " |"
    assert lines[3] == "|  | paper | " + " | ".join(["0.2500"] * 10) + " |"
    assert lines[4] == "|  | Δ | " + " | ".join(["+0.2500"] * 10) + " |"


# ------------------------------------------------------------------------------------------
# a real process killed at the wrong moment (SIGKILL, SIGINT), then run again

#: Runs the command line with a fault planted: FAULT="<signal> <point> <n>" sends the signal to
#: the process itself at the n-th call of the point: "fit" (training of a network), "fsync" (a
#: result file written but not yet in place) or "replaced" (just after a file is put in place).
DRIVER = """
import os, signal, sys
import mlnn.model.estimator
from mlnn.cli import main

name, point, n = os.environ["FAULT"].split()
calls = []

def planted(original, after):
    def call(*args, **kwargs):
        calls.append(point)
        if not after and len(calls) == int(n):
            os.kill(os.getpid(), getattr(signal, name))
        result = original(*args, **kwargs)
        if after and len(calls) == int(n):
            os.kill(os.getpid(), getattr(signal, name))
        return result
    return call

if point == "fit":
    cls = mlnn.model.estimator.MultiLabelNN
    cls.fit = planted(cls.fit, False)
else:
    target = {"fsync": "fsync", "replaced": "replace"}[point]
    setattr(os, target, planted(getattr(os, target), point == "replaced"))
sys.exit(main(sys.argv[1:]))
"""

REPRODUCE = ["reproduce", "--dataset", "synthetic", "-o", "n_train=120", "-o", "n_test=40", "-o",
             "n_features=30", "-o", "n_labels=4", "--quick", "--methods", "br-b", "nn-a",
             "--quiet"]
FAULT_METHODS = ("BR_B", "NN_A")

#: (signal, point, n): the writes of one method are its run file, then its CSV and Markdown
#: tables (fsync 1-3 and replace 1-3 for BR_B, 4-6 for NN_A).
FAULTS = [(sig, point, n) for sig in ("SIGKILL", "SIGINT")
          for point, n in (("fit", 1), ("fsync", 1), ("fsync", 2), ("fsync", 3), ("fsync", 4),
                           ("replaced", 1), ("replaced", 4))]


def _stored_everywhere(out):
    """The set of methods of the run file, after checking that both tables hold exactly them and
    that no partial or lock file is left."""
    run = json.loads((out / "run_synthetic.json").read_text())
    csv_methods = {line.split(",")[1] for line in
                   (out / "table3_synthetic.csv").read_text().splitlines()[1:]}
    markdown = (out / "table3_synthetic.md").read_text()
    assert csv_methods == set(run["methods"])
    assert all(f"| {method} |" in markdown for method in run["methods"])
    return set(run["methods"])


@pytest.mark.parametrize("fault", FAULTS, ids=["-".join(map(str, f)) for f in FAULTS])
def test_a_killed_reproduce_loses_no_finished_method_and_the_rerun_completes_every_file(
        fault, tmp_path, capsys, monkeypatch):
    sig, point, n = fault
    env = dict(os.environ, FAULT=f"{sig} {point} {n}", PYTHONPATH=str(ROOT),
               OPENBLAS_NUM_THREADS="1", MLNN_CACHE=str(tmp_path / "cache"))
    process = subprocess.run([sys.executable, "-c", DRIVER, *REPRODUCE, "--out", "out"],
                             cwd=tmp_path, env=env, capture_output=True, timeout=300)
    err = process.stderr.decode()
    assert "Traceback" not in err, err
    out = tmp_path / "out"
    if sig == "SIGKILL":
        assert process.returncode == -signal.SIGKILL
    else:
        assert process.returncode == 130 and err.endswith(
            "mlnn: interrupted; the methods completed so far are stored in out\n"), err
        # Ctrl-C during a method's writes is held back until all three are written
        finished = {"fit": 0, "fsync": 1 + (n > 3), "replaced": 1 + (n > 3)}[point]
        if finished:
            assert _stored_everywhere(out) == set(FAULT_METHODS[:finished])
    stored_before = list(json.loads((out / "run_synthetic.json").read_text())["methods"]) \
        if (out / "run_synthetic.json").exists() else []
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLNN_CACHE", str(tmp_path / "cache"))
    assert main([*REPRODUCE, "--out", "out"]) == 0, capsys.readouterr().err
    log = capsys.readouterr().out
    assert _stored_everywhere(out) == set(FAULT_METHODS)
    if len(stored_before) == len(FAULT_METHODS):
        assert "all 2 methods already stored" in log
    elif stored_before:
        assert f"{len(stored_before)} methods already stored, running" in log
    assert sorted(p.name for p in out.iterdir()) == [
        "run_synthetic.json", "table3_synthetic.csv", "table3_synthetic.md"]


def test_tables_older_than_their_run_file_or_incomplete_are_rebuilt(quick_run, tmp_path):
    _, run = quick_run
    write_results(_only(run, ["NN_A", "BR_B"]), tmp_path)
    assert tables_current(read_run(run_path(tmp_path, "synthetic", 0)), tmp_path)
    md, csv_path = tmp_path / "table3_synthetic.md", tmp_path / "table3_synthetic.csv"
    complete = {path: path.read_text() for path in (md, csv_path)}
    for damage in (lambda: md.unlink(), lambda: csv_path.write_text(complete[csv_path][:200]),
                   lambda: md.write_text(complete[md].replace("| BR_B |", "| BR_X |")),
                   lambda: os.utime(csv_path, ns=(0, 0))):
        damage()
        assert not tables_current(read_run(run_path(tmp_path, "synthetic", 0)), tmp_path)
        messages = []
        run_study(["synthetic"], [0], tmp_path, load=None, methods=["nn-a", "br-b"],
                  quick=True, log=messages.append)
        assert messages[0] == ("synthetic seed 0: rebuilt table3_synthetic.csv, "
                               "table3_synthetic.md from run_synthetic.json")
        assert {path: path.read_text() for path in (md, csv_path)} == complete


def _limited(limit):
    def start():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    return start


@pytest.mark.parametrize("limit, message", [
    (0, "--out: cannot lock out: cannot write the lock file out/.mlnn-reproduce.lock: "
        "file too large"),
    (3000, "mlnn: error: cannot write out/run_synthetic.json: file too large"),
])
def test_a_file_size_limit_names_the_file_and_leaves_no_lock(tmp_path, capsys, monkeypatch,
                                                            limit, message):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1",
               MLNN_CACHE=str(tmp_path / "cache"))
    (tmp_path / "out").mkdir()
    process = subprocess.run([sys.executable, "-m", "mlnn", *REPRODUCE, "--out", "out"],
                             cwd=tmp_path, env=env, capture_output=True, timeout=300,
                             preexec_fn=_limited(limit))
    err = process.stderr.decode()
    assert process.returncode == 2 and err.count("\n") == 1 and message in err, err
    assert list((tmp_path / "out").iterdir()) == []           # no lock, no partial file
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLNN_CACHE", str(tmp_path / "cache"))
    assert main([*REPRODUCE, "--out", "out"]) == 0, capsys.readouterr().err
    assert _stored_everywhere(tmp_path / "out") == set(FAULT_METHODS)


@pytest.mark.parametrize("edit, message", [
    (lambda run: run["methods"]["NN_A"]["test"].update(rankloss="0.1"),
     "the test rankloss of method NN_A is '0.1', not a number"),
    (lambda run: run["methods"]["NN_A"]["test"].update(MAP=True), "the test MAP of method NN_A"),
    (lambda run: run.update(seed="0"), "its dataset 'synthetic' and seed '0' are not"),
    (lambda run: run.update(seed=-1), "seed -1 are not a name and an integer"),
    (lambda run: run.update(dataset="other"),
     "it records dataset 'other' with seed 0, which are stored as run_other.json"),
])
def test_a_run_file_with_values_of_the_wrong_kind_is_damaged(quick_run, tmp_path, edit,
                                                             message):
    _, run = quick_run
    write_results(_only(run, ["NN_A"]), tmp_path)
    path = tmp_path / "run_synthetic.json"
    stored = json.loads(path.read_text())
    edit(stored)
    path.write_text(json.dumps(stored))
    with pytest.raises(MLNNError, match=re.escape(message)):
        read_run(run_path(tmp_path, "synthetic", 0))


def test_an_undefined_measure_stored_as_null_is_read_as_nan(quick_run, tmp_path):
    _, run = quick_run
    write_results(_only(run, ["NN_A"]), tmp_path)
    path = tmp_path / "run_synthetic.json"
    stored = json.loads(path.read_text())
    stored["methods"]["NN_A"]["test"]["rankloss"] = None
    path.write_text(json.dumps(stored))
    stored = read_run(run_path(tmp_path, "synthetic", 0))
    assert np.isnan(stored["methods"]["NN_A"]["test"]["rankloss"])


def test_a_full_disk_while_the_tables_are_written_names_the_table_and_blocks_nothing(
        tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLNN_CACHE", str(tmp_path / "cache"))
    calls, fsync = [], os.fsync

    def full_at_the_csv(descriptor):
        calls.append(descriptor)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        fsync(descriptor)
    monkeypatch.setattr(os, "fsync", full_at_the_csv)
    assert main([*REPRODUCE, "--out", "out"]) == 2
    assert capsys.readouterr().err == ("mlnn: error: cannot write out/table3_synthetic.csv: "
                                       "no space left on device\n")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["run_synthetic.json"]
    monkeypatch.setattr(os, "fsync", fsync)
    assert main([*REPRODUCE, "--out", "out"]) == 0
    assert "rebuilt table3_synthetic.csv, table3_synthetic.md" in capsys.readouterr().out
    assert _stored_everywhere(tmp_path / "out") == set(FAULT_METHODS)


def _mlnn(args, cwd, tmp_path):
    """``python -m mlnn ARGS`` in ``cwd`` (this checkout's mlnn, its own cache)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1",
               MLNN_CACHE=str(tmp_path / "cache"))
    return subprocess.run([sys.executable, "-m", "mlnn", *args], cwd=cwd, env=env,
                          capture_output=True, timeout=300)


def test_a_run_file_of_a_newer_version_keeps_what_this_version_does_not_know(tmp_path):
    """A newer mlnn stored a method (NN_FUTURE) and a record entry this version does not know;
    the next ``reproduce --methods br-r`` adds BR_R and keeps them, as git keeps unknown
    configuration."""
    small = [arg for arg in REPRODUCE if arg not in ("--methods", "br-b", "nn-a")]
    first = _mlnn([*small, "--methods", "br-b", "--out", "out"], tmp_path, tmp_path)
    assert first.returncode == 0, first.stderr.decode()
    path = tmp_path / "out" / "run_synthetic.json"
    newer = json.loads(path.read_text())
    future = {**newer["methods"]["BR_B"], "calibration": {"kind": "isotonic", "bins": 15},
              "alternative": {"criterion": "AUC"}, "rules": {"plateau": {"epochs": 7}}}
    newer["methods"]["NN_FUTURE"] = future
    newer["provenance"] = {"host": "lab-7", "commit": "f00ba4"}
    path.write_text(json.dumps(newer, indent=2))
    second = _mlnn([*small, "--methods", "br-r", "--out", "out"], tmp_path, tmp_path)
    assert second.returncode == 0, second.stderr.decode()
    stored = json.loads(path.read_text())
    assert list(stored["methods"]) == ["BR_B", "BR_R", "NN_FUTURE"]
    assert stored["methods"]["NN_FUTURE"] == future
    assert stored["methods"]["BR_B"] == newer["methods"]["BR_B"]
    assert stored["provenance"] == newer["provenance"]
    assert _stored_everywhere(tmp_path / "out") == {"BR_B", "BR_R", "NN_FUTURE"}
