"""Model selection (Sec. 4) and BP-MLL as published.

The networks' η0, early-stopped epoch, threshold λ and refit, and the BR baselines' C, λ and
refit, each tested on a small problem whose right answer is known by construction (a validation
curve whose best epoch is not the last, exact ties, labels absent from the validation split), so
that the wrong rule fails (tests/mutation/catalogue.py plants them).
"""

import inspect
import math

import numpy as np
import pytest
import scipy.sparse as sp

from mlnn.base.errors import MLNNError
from mlnn.base.validation import validation_split
from mlnn.baselines.svm import DEFAULT_C_VALUES, LinearSVMBR
from mlnn.datasets import load
from mlnn.evaluation import metrics
from mlnn.evaluation.thresholds import DEFAULT_LAMBDAS, ThresholdPredictor, select_lambda
from mlnn.model.estimator import MultiLabelNN
from mlnn.paper.methods import (ALIASES, BPMLL_COST, LEARNING_RATES, METHODS, PAPER_METHODS,
                                network_params, resolve)
from mlnn.paper.reproduce import reproduce
from mlnn.paper.selection import (CRITERIA, choose, fit_br, fit_network_method,
                                  select_learning_rate, warm_start)

BUDGET = {"hidden_units": 16, "max_epochs": 3, "patience": 2, "learning_rates": (0.01, 0.3),
          "batch_size": 32, "refit": True, "select_by": "rankloss", "stopping": "rankloss"}


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


def test_the_grids_are_the_papers():
    # Sec. 4: η0 of AdaGrad from {0.001, 0.01, 0.1}; C of the SVMs from {10⁻³, …, 10³}
    assert LEARNING_RATES == (0.001, 0.01, 0.1)
    np.testing.assert_allclose(DEFAULT_C_VALUES, [1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3])
    assert inspect.signature(fit_br).parameters["C_values"].default is DEFAULT_C_VALUES


def test_the_paper_has_eight_methods_and_bpmll_as_published_is_a_ninth():
    assert PAPER_METHODS == ("NN_A", "NN_AD", "BP-MLL_TA", "BP-MLL_TAD", "BP-MLL_RA",
                             "BP-MLL_RAD", "BR_B", "BR_R")
    assert resolve("bpmll-original") == "BP-MLL" and ALIASES["bpmll-original"] == "BP-MLL"
    assert METHODS["BP-MLL"]["kind"] == "published"


def test_bpmll_as_published_is_sized_by_the_data():
    params = network_params("bpmll-original", n_features=18110, n_documents=7770)
    assert params["hidden_units"] == math.ceil(0.2 * 18110) == 3622
    # Σ_i E_i + cost‖θ‖² over N documents is, per document, E_i + (γ/2)‖θ‖² with γ = 2 cost / N
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
    model, record = fit_network_method("nn-a", data.X_train, data.Y_train, fit, val,
                                       {**BUDGET, "select_by": "meanF"}, random_state=0,
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
                                       random_state=1, log=lambda m: None)
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


# --- The protocol of the network methods: η0, the early-stopped epoch and the refit ----------

def quiet(message):
    """A log that drops its messages."""


def contrary(n_fit=50, n_val=16, n_features=6, n_labels=2, seed=0):
    """Documents whose validation labels contradict the training labels.

    With random scores S = XV, a training document's relevant label is its highest-scoring one,
    a validation document's its lowest-scoring one. Learning the training rule makes the
    validation rank loss worse, so rank loss with patience keeps an early evaluation and stops
    ``patience`` evaluations later: the best epoch is not the last one run. Returns X (CSR),
    Y and the row indices (fit_rows, val_rows).
    """
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_fit + n_val, n_features))
    S = X @ rng.normal(size=(n_features, n_labels))
    Y = (S == S.max(axis=1, keepdims=True)).astype(np.int8)
    Y[n_fit:] = (S == S.min(axis=1, keepdims=True))[n_fit:]
    return sp.csr_matrix(X), Y, np.arange(n_fit), np.arange(n_fit, n_fit + n_val)


BATCH = 10
CONTRARY = {"hidden_units": 8, "max_epochs": 30, "patience": 2,
            "learning_rates": (0.3, 0.03, 0.003), "batch_size": BATCH, "refit": True,
            "select_by": "rankloss", "stopping": "rankloss"}


def early_stopped(values, patience):
    """(best, stop): the indices of the evaluation rank loss with patience keeps and of the one
    it stops at (the last if it never stops). An evaluation improves on the best so far only if
    it is strictly lower; the run stops after ``patience`` evaluations without improvement."""
    best, bad = 0, 0
    for i in range(1, len(values)):
        if values[i] < values[best]:
            best, bad = i, 0
        else:
            bad += 1
            if bad == patience:
                return best, i
    return best, len(values) - 1


@pytest.fixture(scope="module")
def contrary_run():
    """The selection runs of each η0 on ``contrary`` data and fit_network_method's result."""
    X, Y, fit, val = contrary()
    models, _ = select_learning_rate("nn-a", X[fit], Y[fit], X[val], Y[val], CONTRARY,
                                     random_state=0, log=quiet)
    model, record = fit_network_method("nn-a", X, Y, fit, val, CONTRARY, random_state=0,
                                       log=quiet)
    stops = {}
    for eta, run in models.items():
        curve, epochs = run.history_.column("rankloss"), run.history_.column("epoch")
        best, stop = early_stopped(curve, CONTRARY["patience"])
        stops[eta] = {"rankloss": curve[best], "epoch": int(epochs[best]),
                      "last_rankloss": curve[stop], "last_epoch": int(epochs[stop])}
    return X, Y, fit, stops, model, record


def test_each_eta_is_scored_by_its_early_stopped_best_validation_rank_loss(contrary_run):
    X, Y, fit, stops, model, record = contrary_run
    # the construction: a run whose last evaluation is worse than its best
    assert any(s["last_rankloss"] > s["rankloss"] for s in stops.values())
    assert record["validation"]["rankloss"] == {eta: s["rankloss"] for eta, s in stops.items()}
    lowest = min(stops, key=lambda eta: stops[eta]["rankloss"])        # the first on ties
    assert record["learning_rate"] == lowest
    assert record["best_epoch"] == stops[lowest]["epoch"]
    # the selection runs train on the fit rows only: ⌈|fit| / batch⌉ updates an epoch
    assert record["best_updates"] == stops[lowest]["epoch"] * math.ceil(len(fit) / BATCH)


def test_the_refit_trains_on_every_row_for_the_best_epochs_count(contrary_run):
    X, Y, fit, stops, model, record = contrary_run
    best, last = stops[record["learning_rate"]]["epoch"], \
        stops[record["learning_rate"]]["last_epoch"]
    assert best < last                                   # the construction
    assert model.max_epochs == best and model.validation_fraction == 0.0
    assert model.n_updates_ == record["refit_updates"] == best * math.ceil(X.shape[0] / BATCH)
    assert model.history_.column("epoch")[-1] == best
    # the threshold λ chosen on the validation split, not the default λ = n of a fit without one
    assert model.threshold_lambda_ == record["threshold_lambda"] != float(X.shape[0])
    for name in ("learning_rate", "hidden_units", "batch_size", "random_state", "loss",
                 "dropout", "patience"):
        assert getattr(model, name) == record["params"][name]
    assert (model.learning_rate, model.hidden_units) == \
        (record["learning_rate"], CONTRARY["hidden_units"])


def test_lambda_and_mean_F_come_from_the_best_epochs_network_on_the_validation_split(
        contrary_run):
    X, Y, fit, stops, model, record = contrary_run
    val = np.setdiff1d(np.arange(X.shape[0]), fit)
    for eta, stop in stops.items():
        # the first e epochs of a selection run are the updates of a run of e epochs
        network = MultiLabelNN(**network_params("nn-a"), learning_rate=eta,
                               hidden_units=CONTRARY["hidden_units"], max_epochs=stop["epoch"],
                               batch_size=BATCH, random_state=0, validation_fraction=0.0)
        network.fit(X[fit], Y[fit])
        o_fit, o_val = network.decision_function(X[fit]), network.decision_function(X[val])
        options = dict(lams=DEFAULT_LAMBDAS, features=network.threshold_features,
                       intercept=network.threshold_intercept, target=network.threshold_target)
        _, lam, table = select_lambda(X[fit], o_fit, Y[fit], X[val], o_val, Y[val], **options)
        assert record["validation"]["meanF"][eta] == pytest.approx(table[lam], rel=1e-12)
        if eta == record["learning_rate"]:
            _, on_fit_rows, _ = select_lambda(X[fit], o_fit, Y[fit], X[fit], o_fit, Y[fit],
                                              **options)
            assert record["threshold_lambda"] == lam != on_fit_rows

@pytest.mark.parametrize("grid", [(1e-7, 1e-6), (1e-6, 1e-7)])
def test_equal_validation_rank_losses_go_to_the_first_eta_of_the_grid(grid):
    # steps this small leave every validation ranking as the initial network's: an exact tie
    X, Y, fit, val = contrary()
    budget = {**CONTRARY, "max_epochs": 4, "learning_rates": grid}
    _, record = fit_network_method("nn-a", X, Y, fit, val, budget, random_state=0, log=quiet)
    values = record["validation"]["rankloss"]
    assert values[grid[0]] == values[grid[1]]
    assert record["learning_rate"] == grid[0]



def test_the_budget_patience_decides_which_evaluation_is_kept():
    # seed 1: η0 = 0.3 does not improve at its second evaluation but does at its third, so
    # patience 1 keeps the first evaluation and patience 2 the third
    X, Y, fit, val = contrary(seed=1)
    kept = {}
    for patience in (1, 2):
        budget = {**CONTRARY, "patience": patience, "learning_rates": (0.3,)}
        models, _ = select_learning_rate("nn-a", X[fit], Y[fit], X[val], Y[val], budget,
                                         random_state=0, log=quiet)
        history = models[0.3].history_
        best = early_stopped(history.column("rankloss"), patience)[0]
        _, record = fit_network_method("nn-a", X, Y, fit, val, budget, random_state=0,
                                       log=quiet)
        assert record["best_epoch"] == history.column("epoch")[best]
        assert record["validation"]["rankloss"][0.3] == history.column("rankloss")[best]
        kept[patience] = record["best_epoch"]
    assert kept[1] < kept[2]                                           # the construction


def test_select_by_mean_F_and_the_alternative_rank_loss_choice_are_both_refitted():
    X, Y, fit, val = contrary(seed=1)          # here the two criteria choose different η0
    model, record = fit_network_method("nn-a", X, Y, fit, val, {**CONTRARY, "select_by": "meanF"},
                                       random_state=0, alternative=True, log=quiet)
    by_F = choose(record["validation"]["meanF"], "meanF")
    by_rankloss = choose(record["validation"]["rankloss"], "rankloss")
    assert by_F != by_rankloss
    assert record["learning_rate"] == model.learning_rate == by_F
    alternative = record["alternative"]
    assert alternative["learning_rate"] == by_rankloss
    assert alternative["selected_by"] == "rankloss"
    for final, entry in ((model, record), (alternative["model"], alternative)):
        assert final.learning_rate == entry["learning_rate"]
        assert final.max_epochs == entry["best_epoch"] and final.validation_fraction == 0.0
        assert final.n_updates_ == entry["best_epoch"] * math.ceil(X.shape[0] / BATCH)
        assert final.threshold_lambda_ == entry["threshold_lambda"]


# --- The protocol of the BR baselines (fit_br): small problems whose answer is known ---------

def separable(n_labels=4, copies=5):
    """One feature per label; training documents repeat each feature ``copies`` times with
    value 2, the validation split holds each once with value 1 (explicit split). Every C of a
    moderate grid classifies and ranks the validation split perfectly: exact ties."""
    X = np.vstack([np.repeat(2 * np.eye(n_labels), copies, axis=0), np.eye(n_labels)])
    Y = (X > 0).astype(np.int8)
    n_fit = n_labels * copies
    return sp.csr_matrix(X), Y, (np.arange(n_fit), np.arange(n_fit, n_fit + n_labels))


def absent_from_validation():
    """Labels 1-3 absent from the validation split but predicted there for a large C.

    Training: 4 documents with feature 0 and all four labels, 12 with feature 1 and none.
    Validation: 2 documents with feature 0 and label 0 only. At C = 10 the SVMs predict all four
    labels for them (TP = 2, FP = 6: miF = 4/10; macro-F1 over the present label 0: 1); at
    C = 10⁻³ the weights are nearly 0 and the majority class (no label) wins the bias: nothing
    is predicted (miF = 0, present label 0: F1 = 0).
    Macro over present labels: C = 10 scores (0.4 + 1)/2 = 0.7, C = 10⁻³ scores 0.
    Macro over all labels: C = 10 scores (0.4 + 1/4)/2 = 0.325, C = 10⁻³ (0 + 3/4)/2 = 0.375
    (labels 1-3 absent and not predicted count as F1 = 1), so that rule would choose 10⁻³.
    """
    X = np.array([[1.0, 0.0]] * 4 + [[0.0, 1.0]] * 12 + [[1.0, 0.0]] * 2)
    Y = np.zeros((18, 4), dtype=np.int8)
    Y[:4] = 1
    Y[16:, 0] = 1
    return sp.csr_matrix(X), Y, (np.arange(16), np.arange(16, 18))


def noisy_problem(seed=0, n=80, n_features=20, n_labels=5):
    """Sparse documents whose labels depend noisily on a few features; a seeded 25 % split."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, n_features, density=0.3, format="csr", random_state=seed)
    X.data = rng.normal(size=X.data.size)
    Y = ((X @ rng.normal(size=(n_features, n_labels)) + 0.5 * rng.normal(size=(n, n_labels)))
         > 0.3).astype(np.int8)
    return X, Y, validation_split(n, 0.25, 0)


@pytest.mark.parametrize("variant", ["B", "R"])
def test_br_equal_validation_values_go_to_the_first_C_of_the_grid(variant):
    X, Y, split = separable()
    result = fit_br(X, Y, variant, C_values=(1.0, 10.0, 100.0), validation=split, refit=False)
    criteria = [row["criterion"] for row in result.validation_scores]
    assert criteria == [1.0] * 3 if variant == "B" else [0.0] * 3     # an exact three-way tie
    assert result.C == 1.0
    # the grid is fitted in increasing order whatever order it is given in
    again = fit_br(X, Y, variant, C_values=(100.0, 1.0, 10.0), validation=split, refit=False)
    assert [row["C"] for row in again.validation_scores] == [1.0, 10.0, 100.0]
    assert again.C == 1.0


def test_brb_chooses_C_by_macro_F1_over_the_labels_present_in_the_validation_split():
    X, Y, split = absent_from_validation()
    result = fit_br(X, Y, "B", C_values=(1e-3, 10.0), validation=split, refit=False)
    small, large = result.validation_scores
    assert small["criterion"] == 0.0 and large["criterion"] == pytest.approx(0.7)
    # the table keeps the paper's measures, macro over all labels: by those, 10⁻³ would win
    assert (small["miF"] + small["maF"]) / 2 == pytest.approx(0.375)
    assert (large["miF"] + large["maF"]) / 2 == pytest.approx(0.325)
    assert result.C == 10.0
    val = split[1]
    assert large["criterion"] == metrics.selection_score(
        Y[val], result.model.decision_function(X[val]) > 0, macro_labels="present")


def test_brr_chooses_C_by_the_lowest_validation_rank_loss():
    X, Y, split = noisy_problem()
    result = fit_br(X, Y, "R", C_values=(1e-3, 0.1, 10.0), validation=split, refit=False)
    ranklosses = [row["rankloss"] for row in result.validation_scores]
    assert [row["criterion"] for row in result.validation_scores] == ranklosses
    assert len(set(ranklosses)) == 3
    assert result.C == result.validation_scores[int(np.argmin(ranklosses))]["C"]
    fit, val = split
    assert ranklosses[[1e-3, 0.1, 10.0].index(result.C)] == metrics.rank_loss(
        Y[val], result.model.decision_function(X[val]))


def test_brr_chooses_lambda_on_the_validation_split_not_on_the_rows_it_was_fitted_on():
    X, Y, (fit, val) = noisy_problem()
    result = fit_br(X, Y, "R", C_values=(0.1, 1.0), validation=(fit, val), refit=False)
    margins = result.model.decision_function(X)          # the chosen C's SVMs on the fit rows
    args = dict(lams=DEFAULT_LAMBDAS, features="input")
    expected, lam, table = select_lambda(X[fit], margins[fit], Y[fit], X[val], margins[val],
                                         Y[val], **args)
    _, lam_on_fit, table_on_fit = select_lambda(X[fit], margins[fit], Y[fit], X[fit],
                                                margins[fit], Y[fit], **args)
    assert lam_on_fit != lam                              # the two rules disagree here
    assert result.lam == lam and result.lambda_scores == table
    assert result.thresholds.features == "input"
    np.testing.assert_array_equal(result.predict(X[val]).toarray(),
                                  expected.predict(X[val], margins[val], dense=True))


def test_brr_refit_keeps_C_lambda_and_the_svm_options():
    X, Y, (fit, val) = noisy_problem()
    options = dict(C_values=(0.1, 1.0), validation=(fit, val), bias=0.5, tol=1e-6, max_iter=5000)
    chosen = fit_br(X, Y, "R", refit=False, **options)
    result = fit_br(X, Y, "R", **options)
    assert (result.C, result.lam, result.lambda_scores) == \
        (chosen.C, chosen.lam, chosen.lambda_scores)
    model = result.model                                 # retrained on every training document
    assert (model.C, model.bias, model.tol, model.max_iter) == (result.C, 0.5, 1e-6, 5000)
    assert model.dual_coef_.shape == (X.shape[0], Y.shape[1])
    cold = LinearSVMBR(C=result.C, bias=0.5, tol=1e-6, max_iter=5000).fit(X, Y)
    np.testing.assert_allclose(model.decision_function(X), cold.decision_function(X),
                               atol=1e-3)
    margins = model.decision_function(X)
    thresholds = ThresholdPredictor(lam=result.lam).fit(X, margins, Y)
    assert (result.thresholds.features, result.thresholds.lam) == ("input", result.lam)
    assert result.thresholds.n_features_in_ == X.shape[1]
    np.testing.assert_allclose(result.thresholds.predict_threshold(X, margins),
                               thresholds.predict_threshold(X, margins), rtol=1e-10)


def test_brb_predicts_the_sign_of_the_margins_of_the_refitted_svms():
    X, Y, (fit, val) = noisy_problem()
    result = fit_br(X, Y, "B", C_values=(0.1, 1.0), validation=(fit, val))
    assert result.lam is None and result.lambda_scores == {}
    assert result.model.C == result.C and result.model.dual_coef_.shape[0] == X.shape[0]
    np.testing.assert_array_equal(result.predict(X).toarray(),
                                  (result.decision_function(X) > 0).astype(np.int8))


def test_the_default_validation_split_is_the_seeded_one():
    X, Y, _ = noisy_problem()
    seeded = fit_br(X, Y, "R", C_values=(0.1, 1.0), validation_fraction=0.25, random_state=3,
                    refit=False)
    explicit = fit_br(X, Y, "R", C_values=(0.1, 1.0), refit=False,
                      validation=validation_split(X.shape[0], 0.25, 3))
    assert seeded.validation_scores[0]["rankloss"] == explicit.validation_scores[0]["rankloss"]
    assert (seeded.C, seeded.lam) == (explicit.C, explicit.lam)


def test_a_warm_start_passes_the_weights():
    X, Y, (fit, val) = noisy_problem()
    assert warm_start(None) == {}
    tron = LinearSVMBR(C=0.1).fit(X[fit], Y[fit])
    start = warm_start(tron)
    assert start["coef"] is tron.coef_ and start["intercept"] is tron.intercept_


@pytest.mark.parametrize("rule", ["rankloss", "meanF", "meanF_best", "fixed"])
def test_each_rule_chooses_on_one_long_run_what_a_live_run_of_it_chooses(data, rule):
    from mlnn import MultiLabelNN
    from mlnn.paper.selection import selection_run
    fit, val = validation_split(data.X_train.shape[0], 0.2, 0)
    X_fit, Y_fit = data.X_train[fit], data.Y_train[fit]
    X_val, Y_val = data.X_train[val], data.Y_train[val]
    settings = dict(network_params("nn-ad"), learning_rate=0.3, hidden_units=16, max_epochs=12,
                    patience=2, batch_size=32, random_state=0)
    long = MultiLabelNN(**settings)
    chosen = selection_run(long, X_fit, Y_fit, X_val, Y_val,
                           ("rankloss", "meanF", "meanF_best", "fixed"))
    assert len(long.history_.records) == 12 and long.stopping == "fixed"
    live = MultiLabelNN(**settings, stopping=rule).fit(X_fit, Y_fit, X_val, Y_val)
    best = live.history_.best or live.history_.records[-1]
    assert chosen[rule]["epoch"] == best["epoch"] and chosen[rule]["updates"] == best["updates"]
    assert chosen[rule]["rankloss"] == best["rankloss"]
    assert chosen[rule]["threshold_lambda"] == live.threshold_lambda_
    assert chosen[rule]["meanF"] == live.threshold_scores_[live.threshold_lambda_]
    if rule == "meanF":
        assert chosen[rule]["epoch"] < 12, "the test needs a rule that stops early"


def test_reproduce_refits_every_rule_and_declares_the_main_one(data):
    from mlnn.paper.reproduce import DECLARED_RULE, stopping_table
    _, run = reproduce(data, methods=["nn-a"], learning_rates=(0.01, 0.3), quick=True,
                       stopping="meanF", other_rules=("rankloss", "fixed", "meanF"),
                       log=lambda m: None)
    record = run["methods"]["NN_A"]
    assert run["settings"]["stopping"] == record["stopping"] == "meanF"
    assert run["stopping_rules"] == {"main": "meanF", "sensitivity": ["rankloss", "fixed"],
                                     "declared": DECLARED_RULE}
    assert set(record["rules"]) == {"rankloss", "fixed"}
    assert record["rules"]["fixed"]["best_epoch"] == 3 == run["settings"]["max_epochs"]
    for entry in record["rules"].values():
        assert "model" not in entry and set(entry["test"]) >= {"rankloss", "maF"}
    assert set(record["curves"]) == {0.01, 0.3}
    assert len(record["curves"][0.3]["maF"]) == 3                 # every epoch, every measure
    table = stopping_table(run).splitlines()
    assert [line.split(" | ")[1] for line in table[2:]] == ["meanF", "rankloss", "fixed"]
    assert f"{record['test']['maF']:.4f}" in table[2]


def test_rules_that_choose_the_same_refit_share_one_training_run(data, monkeypatch):
    import mlnn.paper.selection as selection
    calls = []
    original = selection.refit

    def counting(model, X, Y, outcome=None, stopping=None):
        calls.append((model.learning_rate, outcome["epoch"], outcome["threshold_lambda"]))
        return original(model, X, Y, outcome, stopping)

    monkeypatch.setattr(selection, "refit", counting)
    fit, val = validation_split(data.X_train.shape[0], 0.1, 0)
    model, record = fit_network_method("nn-a", data.X_train, data.Y_train, fit, val,
                                       {**BUDGET, "stopping": "fixed"}, random_state=0,
                                       other_rules=("rankloss", "meanF", "meanF_best"),
                                       log=lambda m: None)
    chosen = {(e["learning_rate"], e["best_epoch"], e["threshold_lambda"])
              for e in (record, *record["rules"].values())}
    assert len(calls) == len(set(calls)) == len(chosen)          # one run per distinct choice
    assert model.stopping == "fixed" and model.max_epochs == BUDGET["max_epochs"]
    for rule, entry in record["rules"].items():
        assert entry["model"].stopping == rule
        assert entry["model"].max_epochs == entry["best_epoch"]
