"""What the stopping rules watch (:class:`mlnn.model.estimator.MultiLabelNN` with ``stopping`` and
``rules``): the mean F1 of fixed thresholds is macro-averaged over the labels present in the
validation documents, as the learned thresholds' is; and rules watched beside rank loss get every
measure, not only the ranking ones."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlnn.evaluation.metrics import MEASURES
from mlnn.model.estimator import MultiLabelNN

ABSENT = 4          # the label without a positive validation document


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = sp.random(150, 20, density=0.3, random_state=1, format="csr")
    Y = (X @ rng.normal(size=(20, 5)) > 0.3).astype(np.int8)
    Y[:120, ABSENT] = rng.random(120) < 0.5
    Y[120:, ABSENT] = 0
    assert Y[120:].sum(axis=0).min() == 0 and (Y[120:].sum(axis=0) > 0).sum() == 4
    return X[:120], Y[:120], X[120:], Y[120:]


def _f1(tp, fp, fn):
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0     # MULAN's 0/0 convention


def _mean_f1(Y_true, Y_pred, labels):
    """(micro-F1 over every label + macro-F1 over ``labels``) / 2, counted by hand."""
    tp = (Y_true & Y_pred).sum(axis=0)
    fp = (~Y_true & Y_pred).sum(axis=0)
    fn = (Y_true & ~Y_pred).sum(axis=0)
    macro = np.mean([_f1(tp[j], fp[j], fn[j]) for j in labels])
    return (_f1(tp.sum(), fp.sum(), fn.sum()) + macro) / 2


def test_the_fixed_thresholds_mean_f1_is_macro_averaged_over_the_present_labels(data):
    X, Y, X_val, Y_val = data
    model = MultiLabelNN(hidden_units=8, max_epochs=1, threshold="fixed", stopping="meanF",
                         random_state=0).fit(X, Y, X_val, Y_val)
    Y_true, Y_pred = Y_val.astype(bool), np.asarray(model.predict(X_val)).astype(bool)
    present = np.flatnonzero(Y_true.any(axis=0))
    expected = _mean_f1(Y_true, Y_pred, present)
    assert model.history_.records[-1]["meanF"] == pytest.approx(expected, rel=1e-12)
    everything = _mean_f1(Y_true, Y_pred, range(Y.shape[1]))
    assert everything != pytest.approx(expected), "the absent label must change the average"


@pytest.mark.parametrize("rules", [("meanF",), ("meanF_best", "fixed")])
def test_the_rules_watched_beside_rank_loss_get_every_measure(data, rules):
    X, Y, X_val, Y_val = data
    model = MultiLabelNN(hidden_units=8, max_epochs=3, stopping="rankloss", patience=5,
                         random_state=0).fit(X, Y, X_val, Y_val, rules=rules)
    for record in model.history_.records:
        assert set(MEASURES) | {"hamming", "meanF"} <= set(record)
        assert np.isfinite([record[m] for m in ("miF", "maF", "meanF", "hamming")]).all()
    assert set(model.rule_stops_) == set(rules)
    for rule in rules:
        best, params = model.rule_stops_[rule]
        assert "meanF" in best and set(params) == {"W1", "b1", "W2", "b2"}


@pytest.mark.parametrize("loss, threshold", [("ce", 0.5), ("pwe", 0.0)])
def test_validation_with_a_fixed_threshold_uses_it_even_when_it_is_0(data, loss, threshold):
    """PWE's tanh outputs are cut at 0, a falsy threshold: validation must still use it, not
    fit learned thresholds (the record's λ is None and its label sets are o > T)."""
    X, Y, X_val, Y_val = data
    model = MultiLabelNN(hidden_units=8, max_epochs=1, loss=loss, threshold="fixed",
                         stopping="meanF", random_state=0).fit(X, Y, X_val, Y_val)
    assert model.thresholds_.fixed == threshold
    record = model.history_.records[-1]
    assert record["threshold_lambda"] is None
    Y_true = Y_val.astype(bool)
    Y_pred = model.decision_function(X_val) > threshold
    np.testing.assert_array_equal(np.asarray(model.predict(X_val)).astype(bool), Y_pred)
    present = np.flatnonzero(Y_true.any(axis=0))
    assert record["meanF"] == pytest.approx(_mean_f1(Y_true, Y_pred, present), rel=1e-12)
