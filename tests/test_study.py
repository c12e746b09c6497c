"""``reproduce`` over datasets × seeds: resuming, the output lock, Ctrl-C, bad --out."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mlnn.base.errors import MLNNError
from mlnn.base.lock import LOCK_NAME, directory_lock, lock_holder
from mlnn.cli import main
from mlnn.paper import reproduce as reproduce_module
from mlnn.paper.study import plan, run_study

ROOT = Path(__file__).resolve().parents[1]

DATA = ["--dataset", "synthetic", "-o", "n_train=150", "-o", "n_test=60", "-o",
        "n_features=40", "-o", "n_labels=5"]


def reproduce(out, *extra):
    return main(["reproduce", *DATA, "--quick", "--out", str(out), *extra])


def stored_methods(path):
    return list(json.loads(path.read_text())["methods"])


def files(directory):
    return {p.name: p.read_bytes() for p in directory.iterdir()}


@pytest.fixture
def calls(monkeypatch):
    """The methods actually trained, in order (the real run functions still run)."""
    seen, real = [], reproduce_module.run_method

    def spy(method, *args, **kwargs):
        seen.append(method)
        return real(method, *args, **kwargs)
    monkeypatch.setattr(reproduce_module, "run_method", spy)
    return seen


def test_seeds_get_their_own_files_and_a_second_run_resumes(tmp_path, calls, capsys):
    assert reproduce(tmp_path, "--methods", "nn-a", "br-b", "--seeds", "0", "1") == 0
    assert calls == ["NN_A", "BR_B", "NN_A", "BR_B"]
    assert stored_methods(tmp_path / "run_synthetic.json") == ["NN_A", "BR_B"]
    assert stored_methods(tmp_path / "run_synthetic_seed1.json") == ["NN_A", "BR_B"]
    assert json.loads((tmp_path / "run_synthetic_seed1.json").read_text())["seed"] == 1
    calls.clear()
    assert reproduce(tmp_path, "--methods", "nn-a", "br-b", "br-r", "--seeds", "0", "1") == 0
    assert calls == ["BR_R", "BR_R"]                      # only what was missing
    assert stored_methods(tmp_path / "run_synthetic_seed1.json") == ["NN_A", "BR_B", "BR_R"]
    calls.clear()
    assert reproduce(tmp_path, "--methods", "br-b", "--seed", "1") == 0
    assert calls == []
    assert "already stored" in capsys.readouterr().out
    assert reproduce(tmp_path, "--methods", "br-b", "--seed", "1", "--force") == 0
    assert calls == ["BR_B"]


def test_every_method_records_its_settings_scores_time_and_versions(tmp_path):
    assert reproduce(tmp_path, "--methods", "nn-ad", "br-r", "--seed", "2") == 0
    run = json.loads((tmp_path / "run_synthetic_seed2.json").read_text())
    assert run["seed"] == 2 and run["budget"] == "quick"
    assert run["settings"]["hidden_units"] == 64 and run["settings"]["select_by"] == "rankloss"
    for record in run["methods"].values():
        assert record["seconds"] >= 0 and record["finished"].endswith("+00:00")
        assert set(record["versions"]) == {"mlnn", "numpy", "scipy", "python"}
        assert record["validation"]
    assert set(run["methods"]["NN_AD"]["validation"]["rankloss"]) == {"0.1"}
    assert run["methods"]["BR_R"]["C"] == 1.0


def test_ctrl_c_keeps_the_completed_methods_and_exits_130(tmp_path, monkeypatch, capsys):
    real = reproduce_module.run_method

    def interrupt(method, *args, **kwargs):
        if method == "BR_B":
            raise KeyboardInterrupt
        return real(method, *args, **kwargs)
    monkeypatch.setattr(reproduce_module, "run_method", interrupt)
    assert reproduce(tmp_path, "--methods", "nn-a", "bpmll-ta", "br-b", "nn-ad") == 130
    error = capsys.readouterr().err.strip().splitlines()
    assert error == [f"mlnn: interrupted; the methods completed so far are stored in {tmp_path}"]
    assert stored_methods(tmp_path / "run_synthetic.json") == ["NN_A", "BP-MLL_TA"]
    markdown = (tmp_path / "table3_synthetic.md").read_text()
    assert "| NN_A | ours |" in markdown and "| BP-MLL_TA | ours |" in markdown
    assert sorted(files(tmp_path)) == ["run_synthetic.json", "table3_synthetic.csv",
                                       "table3_synthetic.md"]    # no lock, no partial file
    monkeypatch.undo()
    assert reproduce(tmp_path, "--methods", "nn-a", "bpmll-ta", "br-b", "nn-ad") == 0
    assert stored_methods(tmp_path / "run_synthetic.json") == ["NN_A", "NN_AD", "BP-MLL_TA",
                                                               "BR_B"]


def test_a_damaged_run_file_stops_the_run_before_any_work(tmp_path, calls, capsys):
    assert reproduce(tmp_path, "--methods", "br-b") == 0
    path = tmp_path / "run_synthetic.json"
    path.write_bytes(path.read_bytes()[:100])
    before = files(tmp_path)
    calls.clear()
    assert reproduce(tmp_path, "--methods", "nn-a") == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "run_synthetic.json is damaged" in error[0]
    assert calls == [] and files(tmp_path) == before


def test_other_settings_in_the_same_out_are_refused_before_any_work(tmp_path, calls, capsys):
    assert reproduce(tmp_path, "--methods", "br-b") == 0
    before = files(tmp_path)
    calls.clear()
    assert main(["reproduce", *DATA, "--out", str(tmp_path), "--methods", "nn-a"]) == 2
    assert "holds a quick-budget run with other settings" in capsys.readouterr().err
    assert calls == [] and files(tmp_path) == before


@pytest.mark.parametrize("kind", ["file", "missing parent", "empty"])
def test_a_bad_out_is_reported_before_the_data_is_loaded(tmp_path, monkeypatch, capsys, kind):
    out = {"file": tmp_path / "taken", "missing parent": tmp_path / "no" / "such",
           "empty": ""}[kind]
    (tmp_path / "taken").write_text("x")

    def never(*args, **kwargs):
        raise AssertionError("the dataset was loaded")
    monkeypatch.setattr("mlnn.cli.reproduce.load_dataset", never)
    assert main(["reproduce", *DATA, "--quick", "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and error[0].startswith("mlnn: error: --out")


def test_negative_seed_and_no_dataset_are_refused(tmp_path, capsys):
    assert main(["reproduce", *DATA, "--out", str(tmp_path), "--seeds", "0", "-1"]) == 2
    assert "--seed must be an integer >= 0, got -1" in capsys.readouterr().err
    assert main(["reproduce", "--out", str(tmp_path)]) == 2
    assert "--dataset" in capsys.readouterr().err


@pytest.fixture
def holder():
    """A live process other than this one."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield process.pid
    process.kill()
    process.wait()


def test_a_concurrent_run_on_the_same_out_is_refused(tmp_path, holder, calls, capsys):
    (tmp_path / LOCK_NAME).write_text(f"{holder}\n")
    assert reproduce(tmp_path, "--methods", "br-b") == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert error == [f"mlnn: error: --out: another reproduce (pid {holder}) is writing to "
                     f"{tmp_path}; wait for it to finish or choose another --out (if no such run "
                     f"is going on, delete {tmp_path / LOCK_NAME})"]
    assert calls == [] and sorted(files(tmp_path)) == [LOCK_NAME]
    assert lock_holder(tmp_path / LOCK_NAME) == holder      # the holder's lock is untouched


def test_a_real_concurrent_holder_excludes_a_second_one(tmp_path):
    code = ("import sys, time; from mlnn.base.lock import directory_lock\n"
            "with directory_lock(sys.argv[1]):\n    print('held', flush=True); time.sleep(60)")
    process = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "held"
        with pytest.raises(MLNNError, match=f"pid {process.pid}"):
            with directory_lock(tmp_path):
                pass
    finally:
        process.kill()
        process.wait()
    with directory_lock(tmp_path) as path:                   # the holder died: stale lock
        assert lock_holder(path) == os.getpid()
    assert not (tmp_path / LOCK_NAME).exists()


def test_a_stale_lock_is_taken_over(tmp_path, calls):
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)
    (tmp_path / LOCK_NAME).write_text(finished.stdout)
    assert reproduce(tmp_path, "--methods", "br-b") == 0
    assert calls == ["BR_B"] and not (tmp_path / LOCK_NAME).exists()


def test_a_lock_being_written_is_respected(tmp_path):
    (tmp_path / LOCK_NAME).write_text("")                   # created, pid not yet written
    with pytest.raises(MLNNError, match="another reproduce is starting"):
        with directory_lock(tmp_path):
            pass


def test_plan_lists_what_is_left_per_dataset_and_seed(tmp_path):
    assert reproduce(tmp_path, "--methods", "br-b", "--seeds", "1") == 0
    jobs = plan(["synthetic"], [0, 1], tmp_path, methods=["br-b", "br-r"], quick=True)
    assert [(job.seed, job.methods, job.stored) for job in jobs] == [
        (0, ("BR_B", "BR_R"), ()), (1, ("BR_R",), ("BR_B",))]
    forced = plan(["synthetic"], [1], tmp_path, methods=["br-b"], force=True, quick=True)
    assert forced[0].methods == ("BR_B",)


@pytest.mark.parametrize("arguments, message", [
    ({"seeds": [-1]}, "seed must be an integer >= 0, got -1"),
    ({"seeds": [1.5]}, "seed must be an integer >= 0, got 1.5"),
    ({"seeds": [True]}, "seed must be an integer >= 0, got True"),
    ({"seeds": 0}, "seeds must be a list, got 0; write [0] for one"),
    ({"select_by": "nope"}, "unknown select_by 'nope'; choose one of ['rankloss', 'meanF']"),
    ({"datasets": "synthetic"}, "datasets must be a list, got 'synthetic'; write ['synthetic']"),
    ({"datasets": []}, "datasets is empty: give at least one"),
    ({"datasets": [""]}, "datasets: each must be a dataset name, got ''"),
    ({"methods": "br-b"}, "methods must be a list, got 'br-b'"),
    ({"stopping": "never"}, "unknown stopping 'never'"),
    ({"other_rules": "meanF"}, "other_rules must be a list, got 'meanF'"),
    ({"other_rules": ["sometimes"]}, "unknown other stopping rule 'sometimes'"),
    ({"quick": "yes"}, "quick must be True or False, got 'yes'"),
    ({"force": 1}, "force must be True or False, got 1"),
    ({"learning_rates": 0.1}, "learning_rates must be a non-empty list of positive numbers, "
                              "got 0.1"),
    ({"C_values": "1"}, "C_values must be a non-empty list of positive numbers, got '1'"),
    ({"patience": 3}, "unknown option(s) ['patience']"),
    ({"out_dir": None}, "out_dir must be the path of a directory, got None"),
    ({"out_dir": ""}, "out_dir must be the path of a directory, got ''"),
    ({"out_dir": 3}, "out_dir must be the path of a directory, got 3"),
])
def test_plan_and_run_study_refuse_a_bad_argument_in_one_line_before_any_work(
        tmp_path, calls, arguments, message):
    assert reproduce(tmp_path, "--methods", "br-b") == 0
    before = files(tmp_path)
    calls.clear()

    def never(name):
        raise AssertionError("the dataset was loaded")
    given = {"datasets": ["synthetic"], "seeds": [0], "methods": ["br-b", "br-r"],
             "quick": True, **arguments}
    for call in (plan, lambda **kwargs: run_study(load=never, log=print, **kwargs)):
        with pytest.raises(MLNNError) as error:
            call(**{"out_dir": tmp_path, **given})
        assert "\n" not in str(error.value) and message in str(error.value)
    assert calls == [] and files(tmp_path) == before


@pytest.mark.parametrize("text, reason", [
    ("[" * 100_000 + "]" * 100_000, "it nests deeper than 100 levels"),
    ('{"dataset": "synthetic", "seed": ' + "7" * 5000 + "}",
     "it holds an integer of 5000 digits"),
])
def test_plan_calls_a_run_file_too_deep_or_too_long_damaged_and_keeps_it(tmp_path, text,
                                                                         reason):
    path = tmp_path / "run_synthetic.json"
    path.write_text(text)
    with pytest.raises(MLNNError) as error:
        plan(["synthetic"], [0], tmp_path, methods=["br-b"], quick=True)
    message = str(error.value)
    assert "\n" not in message and f"{path} is damaged (not valid JSON: {reason}" in message
    assert "left as it is" in message and path.read_text() == text


def _mlnn(args, cwd, **env):
    return subprocess.run([sys.executable, "-m", "mlnn", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1",
                                   MLNN_CACHE=str(cwd / "cache"), **env))


@pytest.mark.parametrize("args, message", [
    (["--dataset", "nosuch"], "mlnn: error: unknown dataset 'nosuch'; valid names: "),
    (["--dataset", "synthetic", "-o", "n_docs=5"],
     "mlnn: error: dataset 'synthetic' does not take option(s) ['n_docs']"),
    (["--dataset", "delicious"], "delicious"),             # its files are not in MLNN_DATA
])
def test_a_reproduce_that_fails_before_storing_anything_leaves_no_out_directory(
        tmp_path, args, message):
    data = tmp_path / "data"
    data.mkdir()
    process = _mlnn(["reproduce", *args, "--quick", "--methods", "br-b", "--out", "new"],
                    tmp_path, MLNN_DATA=str(data), MLNN_OFFLINE="1")
    assert process.returncode == 2, process.stderr
    assert process.stderr.count("\n") == 1 and message in process.stderr, process.stderr
    assert not (tmp_path / "new").exists()


def test_a_failed_export_leaves_no_out_directory(tmp_path):
    process = _mlnn(["data", "export", "nosuch", "--format", "svmlight", "--out", "new"],
                    tmp_path)
    assert process.returncode == 2 and "unknown dataset 'nosuch'" in process.stderr
    assert not (tmp_path / "new").exists()
