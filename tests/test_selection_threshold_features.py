"""The selection runs choose λ with the model's own threshold predictor (:mod:`mlnn.paper.selection`):
a network whose T regresses on its scores o (``threshold_features="scores"``) is scored with T(o),
exactly as a live run of it chooses, not with T(x)."""

import pytest

from mlnn.base.validation import validation_split
from mlnn.datasets import load
from mlnn.evaluation.thresholds import DEFAULT_LAMBDAS, select_lambda
from mlnn.model.estimator import MultiLabelNN
from mlnn.paper.methods import network_params
from mlnn.paper.selection import selection_run


@pytest.fixture(scope="module")
def split():
    data = load("synthetic", n_train=300, n_test=10, n_features=120, n_labels=8)
    fit, val = validation_split(data.X_train.shape[0], 0.2, 0)
    return (data.X_train[fit], data.Y_train[fit], data.X_train[val], data.Y_train[val])


@pytest.mark.parametrize("features", ["scores", "input"])
def test_the_selection_run_chooses_lambda_with_the_models_threshold_features(split, features):
    X_fit, Y_fit, X_val, Y_val = split
    settings = dict(network_params("nn-a"), learning_rate=0.3, hidden_units=16, max_epochs=3,
                    batch_size=32, random_state=0, threshold_features=features)
    chosen = selection_run(MultiLabelNN(**settings), X_fit, Y_fit, X_val, Y_val, ("fixed",))
    live = MultiLabelNN(**settings, stopping="fixed").fit(X_fit, Y_fit, X_val, Y_val)
    assert chosen["fixed"]["threshold_lambda"] == live.threshold_lambda_
    assert chosen["fixed"]["meanF"] == live.threshold_scores_[live.threshold_lambda_]
    other = "input" if features == "scores" else "scores"
    o_fit, o_val = live.decision_function(X_fit), live.decision_function(X_val)
    _, _, table = select_lambda(X_fit, o_fit, Y_fit, X_val, o_val, Y_val, lams=DEFAULT_LAMBDAS,
                                  features=other, intercept=live.threshold_intercept,
                                  target=live.threshold_target)
    assert table != live.threshold_scores_, "the other features must choose differently"
