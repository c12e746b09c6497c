"""The reproduction: the paper's table as package data, model selection on validation, tables."""

import json

import numpy as np
import pytest

from mlnn.base.errors import MLNNError
from mlnn.base.validation import validation_split
from mlnn.baselines.svm import DEFAULT_C_VALUES
from mlnn.datasets import load
from mlnn.evaluation.metrics import MEASURES
from mlnn.paper.methods import C_VALUES, METHODS, network_params
from mlnn.paper.reproduce import (comparison_rows, markdown_table, merge_runs, paper_table3,
                                  read_stored, reproduce, write_results)


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
    merged = merge_runs(read_stored(tmp_path, "synthetic", 0), later, tmp_path)
    assert list(merged["methods"]) == ["NN_A", "BP-MLL_TA", "BR_B", "BR_R"]
    write_results(merged, tmp_path)
    stored = json.loads((tmp_path / "run_synthetic.json").read_text())
    assert stored["methods"]["NN_A"]["test"] == pytest.approx(run["methods"]["NN_A"]["test"])
    csv_rows = (tmp_path / "table3_synthetic.csv").read_text().splitlines()
    assert len(csv_rows) == 1 + 40
    again = comparison_rows(stored)
    assert [(r["method"], r["measure"]) for r in again] == [(r["method"], r["measure"])
                                                             for r in rows]
    np.testing.assert_allclose([r["ours"] for r in again], [r["ours"] for r in rows])
    assert not list(tmp_path.glob("*.part"))


def test_another_seed_is_stored_under_its_own_name(quick_run, tmp_path):
    _, run = quick_run
    write_results(_only(run, ["NN_A"]), tmp_path)
    write_results({**_only(run, ["BR_B"]), "seed": 2}, tmp_path)
    assert list(read_stored(tmp_path, "synthetic", 0)["methods"]) == ["NN_A"]
    assert list(read_stored(tmp_path, "synthetic", 2)["methods"]) == ["BR_B"]
    assert (tmp_path / "table3_synthetic_seed2.md").read_text().startswith(
        "Table 3 on synthetic (seed 2, quick budget)")


def test_a_stored_run_with_other_settings_is_never_dropped(quick_run, tmp_path):
    _, run = quick_run
    write_results(_only(run, ["NN_A"]), tmp_path)
    before = (tmp_path / "run_synthetic.json").read_bytes()
    other = {**_only(run, ["BR_B"]), "settings": {**run["settings"], "hidden_units": 32}}
    with pytest.raises(MLNNError, match=r"run_synthetic.json holds .*hidden_units=64"):
        merge_runs(read_stored(tmp_path, "synthetic", 0), other, tmp_path)
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
        read_stored(tmp_path, "synthetic", 0)
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
