"""The reproduction: the paper's table as package data, model selection on validation, tables."""

import json

import numpy as np
import pytest

from mlnn.datasets import load
from mlnn.paper.methods import C_VALUES, METHODS, network_params
from mlnn.metrics import MEASURES
from mlnn.paper.reproduce import (markdown_table, merge_previous, paper_table3, reproduce,
                                  write_results)
from mlnn.svm import DEFAULT_C_VALUES
from mlnn.validation import validation_split


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


def test_tables_are_written_and_merged(quick_run, tmp_path):
    rows, run = quick_run
    first = [r for r in rows if r["method"] == "NN_A"]
    write_results(first, {**run, "methods": {"NN_A": run["methods"]["NN_A"]}}, tmp_path)
    later = [r for r in rows if r["method"] != "NN_A"]
    later_run = {**run, "methods": {m: v for m, v in run["methods"].items() if m != "NN_A"}}
    merged_rows, merged_run = merge_previous(later, later_run, tmp_path)
    assert list(merged_run["methods"]) == ["NN_A", "BP-MLL_TA", "BR_B", "BR_R"]
    assert len(merged_rows) == 40
    write_results(merged_rows, merged_run, tmp_path)
    stored = json.loads((tmp_path / "run_synthetic.json").read_text())
    assert stored["methods"]["NN_A"]["test"] == pytest.approx(run["methods"]["NN_A"]["test"])
    # another seed is another experiment: nothing is merged
    other_rows, other_run = merge_previous(later, {**later_run, "seed": 1}, tmp_path)
    assert other_rows == later and list(other_run["methods"]) == ["BP-MLL_TA", "BR_B", "BR_R"]


def test_markdown_table_shows_ours_paper_and_difference():
    rows = [{"dataset": "d", "method": "NN_A", "measure": m, "ours": 0.5, "paper": 0.25,
             "difference": 0.25} for m in MEASURES]
    lines = markdown_table(rows).splitlines()
    assert lines[0].startswith("| method | | rankloss")
    assert lines[2] == "| NN_A | ours | " + " | ".join(["0.5000"] * 10) + " |"
    assert lines[3] == "|  | paper | " + " | ".join(["0.2500"] * 10) + " |"
    assert lines[4] == "|  | Δ | " + " | ".join(["+0.2500"] * 10) + " |"
