"""Model selection of the network methods (η0 by a validation criterion) and BP-MLL as published."""

import math

import numpy as np
import pytest

from mlnn.base.errors import MLNNError
from mlnn.base.validation import validation_split
from mlnn.datasets import load
from mlnn.paper.methods import (ALIASES, BPMLL_COST, METHODS, PAPER_METHODS, network_params,
                                resolve)
from mlnn.paper.reproduce import reproduce
from mlnn.paper.selection import CRITERIA, choose, fit_network_method, refit

BUDGET = {"hidden_units": 16, "max_epochs": 3, "patience": 2, "learning_rates": (0.01, 0.3)}


@pytest.fixture(scope="module")
def data():
    return load("synthetic", n_train=300, n_test=100, n_features=120, n_labels=8)


def test_choose_takes_the_best_by_direction_and_the_first_on_ties():
    scores = {0.001: 0.5, 0.01: 0.2, 0.1: 0.2}
    assert choose(scores, "rankloss") == 0.01                 # lowest; the first of a tie
    assert choose(scores, "meanF") == 0.001                   # highest
    assert choose({0.1: 0.7, 0.01: 0.7}, "meanF") == 0.1      # the first in the grid's order
    with pytest.raises(MLNNError, match="unknown selection criterion"):
        choose(scores, "MAP")
    assert set(CRITERIA) == {"rankloss", "meanF"}


def test_the_paper_has_eight_methods_and_bpmll_as_published_is_a_ninth():
    assert PAPER_METHODS == ("NN_A", "NN_AD", "BP-MLL_TA", "BP-MLL_TAD", "BP-MLL_RA",
                             "BP-MLL_RAD", "BR_B", "BR_R")
    assert resolve("bpmll-original") == "BP-MLL" and ALIASES["bpmll-original"] == "BP-MLL"
    assert METHODS["BP-MLL"]["kind"] == "published"


def test_bpmll_as_published_is_sized_by_the_data():
    params = network_params("bpmll-original", n_features=18110, n_documents=7770)
    assert params["hidden_units"] == math.ceil(0.2 * 18110) == 3622
    # Σ_i E_i + cost‖θ‖² over N documents is, per document, E_i + (λ/2)‖θ‖² with λ = 2 cost / N
    assert params["weight_decay"] == pytest.approx(2 * BPMLL_COST / 7770)
    assert params["decay_biases"] is True
    assert (params["optimizer"], params["learning_rate"], params["batch_size"]) == ("sgd", 0.05, 1)
    assert (params["hidden_activation"], params["loss"]) == ("tanh", "pwe")
    assert params["max_epochs"] == 100 and params["validation_fraction"] == 0.0
    assert (params["threshold_features"], params["threshold_target"],
            params["threshold_intercept"], params["threshold_lambda"]) == \
        ("scores", "hamming", "free", 0.0)
    with pytest.raises(MLNNError, match="number of features"):
        network_params("bpmll-original")
    with pytest.raises(MLNNError, match="not a neural-network method"):
        network_params("br-r")


def test_selection_records_both_criteria_and_refits_the_choice(data):
    fit, val = validation_split(data.X_train.shape[0], 0.1, 0)
    logged = []
    model, record = fit_network_method("nn-a", data.X_train, data.Y_train, fit, val, BUDGET,
                                       random_state=0, batch_size=32, select_by="meanF",
                                       alternative=True, log=logged.append)
    validation = record["validation"]
    assert set(validation) == set(CRITERIA)
    assert set(validation["rankloss"]) == set(validation["meanF"]) == {0.01, 0.3}
    assert record["learning_rate"] == choose(validation["meanF"], "meanF")
    assert record["selected_by"] == "meanF"
    assert record["alternative"]["selected_by"] == "rankloss"
    assert record["alternative"]["learning_rate"] == choose(validation["rankloss"], "rankloss")
    differs = record["alternative"]["learning_rate"] != record["learning_rate"]
    assert ("model" in record["alternative"]) == differs
    # the refit trains on every training document for the selected number of epochs
    assert model.validation_fraction == 0.0 and model.max_epochs == record["best_epoch"]
    assert model.threshold_lambda_ == record["threshold_lambda"]
    batches = math.ceil(data.X_train.shape[0] / 32)
    assert record["refit_updates"] == record["best_epoch"] * batches
    assert len(logged) == 2 + differs


def test_refit_equals_a_fresh_fit_with_the_selected_settings(data):
    fit, val = validation_split(data.X_train.shape[0], 0.1, 0)
    model, record = fit_network_method("nn-ad", data.X_train, data.Y_train, fit, val, BUDGET,
                                       random_state=1, batch_size=32, log=lambda m: None)
    from mlnn import MultiLabelNN
    again = MultiLabelNN(**record["params"]).fit(data.X_train, data.Y_train)
    np.testing.assert_array_equal(again.decision_function(data.X_test),
                                  model.decision_function(data.X_test))


def test_sensitivity_run_records_the_other_choice_with_test_measures(data):
    rows, run = reproduce(data, methods=["nn-a"], learning_rates=(0.01, 0.3), quick=True,
                          sensitivity=True, log=lambda m: None)
    record = run["methods"]["NN_A"]
    assert run["settings"]["select_by"] == "rankloss"
    assert "model" not in record["alternative"]
    assert set(record["alternative"]["test"]) >= {"rankloss", "maF"}
    if record["alternative"]["learning_rate"] == record["learning_rate"]:
        assert record["alternative"]["test"] == record["test"]


def test_bpmll_as_published_runs_in_reproduce(data):
    small = load("synthetic", n_train=60, n_test=30, n_features=40, n_labels=5)
    rows, run = reproduce(small, methods=["bpmll-original"], quick=True, log=lambda m: None)
    record = run["methods"]["BP-MLL"]
    assert record["params"]["hidden_units"] == 8 and record["params"]["max_epochs"] == 100
    assert record["n_updates"] == 100 * 60
    assert {row["method"] for row in rows} == {"BP-MLL"}


def test_sensitivity_table_lists_both_choices_per_network(data):
    from mlnn.paper.reproduce import sensitivity_table
    _, run = reproduce(data, methods=["nn-a", "br-r"], learning_rates=(0.01, 0.3), quick=True,
                       sensitivity=True, log=lambda m: None)
    table = sensitivity_table(run).splitlines()
    assert len(table) == 2 + 2                            # header, rule, one row per criterion
    assert table[2].startswith("| NN_A | rankloss |") and table[3].startswith("| NN_A | meanF |")
    assert f"{run['methods']['NN_A']['test']['maF']:.4f}" in table[2]
    assert sensitivity_table({"methods": {}}) == ""
