"""Tests of mlnn.thresholds: optimal per-document cuts and the regression T(x) of Eq. 5."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mlnn import metrics, thresholds
from mlnn.errors import MLNNError
from mlnn.thresholds import ThresholdPredictor, optimal_thresholds, ridge_with_intercept


def f1_of_set(y, predicted):
    """F1 of one document; nothing to find and nothing predicted counts as 1."""
    tp = int(np.sum(y & predicted))
    denominator = int(y.sum() + predicted.sum())
    return 1.0 if denominator == 0 else 2.0 * tp / denominator


def brute_force_best_f1(y, o):
    """The best F1 over every cut of the sorted scores, with the number of labels it predicts."""
    values = np.unique(o)
    cuts = [values[-1] + 1.0] + list((values[1:] + values[:-1]) / 2) + [values[0] - 1.0]
    results = [(f1_of_set(y, o > t), int(np.sum(o > t))) for t in cuts]
    best = max(f for f, _ in results)
    return best, min(size for f, size in results if f == best)


@st.composite
def score_label_matrices(draw):
    n = draw(st.integers(1, 6))
    L = draw(st.integers(1, 8))
    if draw(st.booleans()):
        S = draw(arrays(np.float64, (n, L), elements=st.sampled_from([0.0, 0.2, 0.5, 0.7, 1.0])))
    else:
        S = draw(arrays(np.float64, (n, L), elements=st.floats(-5, 5, allow_subnormal=False)))
    Y = draw(arrays(np.int8, (n, L), elements=st.integers(0, 1)))
    return S, Y


@given(score_label_matrices())
def test_optimal_thresholds_reach_the_brute_force_optimum(problem):
    S, Y = problem
    t = optimal_thresholds(S, Y)
    assert t.shape == (S.shape[0],)
    for m in range(S.shape[0]):
        y, o = Y[m].astype(bool), S[m]
        predicted = o > t[m]
        best, smallest = brute_force_best_f1(y, o)
        assert f1_of_set(y, predicted) == pytest.approx(best, abs=1e-12)
        # of several optimal cuts, the one predicting the fewest labels (highest threshold)
        assert predicted.sum() == smallest
        # the threshold is the midpoint of its cut: equidistant from the nearest scores either side
        above, below = o[o > t[m]], o[o <= t[m]]
        if above.size and below.size:
            assert t[m] - below.max() == pytest.approx(above.min() - t[m], abs=1e-12)


def test_optimal_threshold_edge_cases():
    S = np.array([[0.9, 0.6, 0.2, 0.1],
                  [0.9, 0.6, 0.2, 0.1],
                  [0.9, 0.6, 0.2, 0.1],
                  [0.3, 0.3, 0.3, 0.3],
                  [0.3, 0.3, 0.3, 0.3]])
    Y = np.array([[0, 0, 0, 0],     # none relevant: above the top, mirrored first gap
                  [1, 1, 1, 1],     # all relevant: below the bottom, mirrored last gap
                  [1, 0, 1, 0],     # F1: top-1 2/3, top-3 4/5 -> cut between 0.2 and 0.1
                  [0, 0, 0, 0],     # all tied, none relevant
                  [1, 0, 0, 0]])    # all tied, one relevant: all or nothing -> all (F1 2/5)
    t = optimal_thresholds(S, Y)
    np.testing.assert_allclose(t, [0.9 + 0.15, 0.1 - 0.05, 0.15, 0.3 + 0.5, 0.3 - 0.5])


def closed_form_ridge(Z, t, lam):
    """[w; b] from the normal equations of ‖Zw + b − t‖² + lam‖w‖² (b unpenalised)."""
    A = np.column_stack([Z, np.ones(len(Z))])
    penalty = np.diag(np.r_[np.full(Z.shape[1], lam), 0.0])
    solution = np.linalg.solve(A.T @ A + penalty, A.T @ t)
    return solution[:-1], solution[-1]


@pytest.mark.parametrize("lam", [1e-3, 0.5, 10.0])
@pytest.mark.parametrize("sparse", [False, True])
def test_ridge_matches_the_closed_form(lam, sparse):
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(40, 7)) * (rng.random((40, 7)) < 0.5)
    t = rng.normal(size=40)
    w, b, _ = ridge_with_intercept(sp.csr_matrix(Z) if sparse else Z, t, lam, tol=1e-14)
    w_ref, b_ref = closed_form_ridge(Z, t, lam)
    np.testing.assert_allclose(w, w_ref, rtol=1e-8, atol=1e-10)
    assert b == pytest.approx(b_ref, rel=1e-8, abs=1e-10)


def test_ridge_never_densifies_X(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("X was densified")

    for cls in (sp.csr_matrix, sp.csc_matrix):
        monkeypatch.setattr(cls, "toarray", refuse)
        monkeypatch.setattr(cls, "todense", refuse)
    rng = np.random.default_rng(1)
    X = sp.random(60, 500, density=0.02, format="csr", random_state=2)
    t = rng.normal(size=60)
    w, b, _ = ridge_with_intercept(X, t, 1.0)
    assert w.shape == (500,) and np.isfinite(b)


def _small_problem(seed=0, n=50, D=12, L=6):
    rng = np.random.default_rng(seed)
    X = sp.random(n, D, density=0.4, format="csr", random_state=seed)
    scores = rng.random((n, L))
    Y = (rng.random((n, L)) < 0.3).astype(np.int8)
    return X, scores, Y


def test_threshold_predictor_fits_eq5_on_the_optimal_targets():
    X, scores, Y = _small_problem()
    tp = ThresholdPredictor(lam=0.3, tol=1e-14).fit(X, scores, Y)
    w_ref, b_ref = closed_form_ridge(X.toarray(), optimal_thresholds(scores, Y), 0.3)
    np.testing.assert_allclose(tp.coef_, w_ref, rtol=1e-8, atol=1e-10)
    assert tp.intercept_ == pytest.approx(b_ref, rel=1e-8)
    T = tp.predict_threshold(X, scores)
    np.testing.assert_allclose(T, X.toarray() @ w_ref + b_ref, rtol=1e-8)
    Y_pred = tp.predict(X, scores)
    assert sp.issparse(Y_pred)
    np.testing.assert_array_equal(Y_pred.toarray(), (scores > T[:, None]).astype(np.int8))
    np.testing.assert_array_equal(tp.predict(X, scores, dense=True), Y_pred.toarray())


def test_threshold_predictor_on_scores():
    X, scores, Y = _small_problem(seed=3)
    tp = ThresholdPredictor(lam=0.1, features="scores", tol=1e-14).fit(None, scores, Y)
    w_ref, b_ref = closed_form_ridge(scores, optimal_thresholds(scores, Y), 0.1)
    np.testing.assert_allclose(tp.coef_, w_ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(tp.predict_threshold(None, scores), scores @ w_ref + b_ref,
                               rtol=1e-8)


def test_an_almost_unregularised_predictor_recovers_a_linear_threshold():
    # each document's labels are exactly those scoring above 0.2 + 0.5 x_1: the optimal
    # per-document cuts are then close to that line and T(x) recovers the labels
    rng = np.random.default_rng(4)
    n, L = 400, 20
    x1 = rng.random(n)
    X = sp.csr_matrix(np.column_stack([x1, np.zeros(n)]))
    scores = rng.random((n, L))
    Y = (scores > (0.2 + 0.5 * x1)[:, None]).astype(np.int8)
    tp = ThresholdPredictor(lam=1e-6).fit(X, scores, Y)
    assert tp.coef_[0] == pytest.approx(0.5, abs=0.05)
    assert tp.intercept_ == pytest.approx(0.2, abs=0.05)
    result = metrics.bipartition_measures(Y, tp.predict(X, scores))
    assert result["miF"] > 0.95


def test_fixed_threshold():
    X, scores, Y = _small_problem()
    tp = ThresholdPredictor(fixed=0.5).fit(None, scores, Y)
    np.testing.assert_array_equal(tp.predict_threshold(None, scores), np.full(len(scores), 0.5))
    np.testing.assert_array_equal(tp.predict(None, scores).toarray(), scores > 0.5)


def test_select_lambda_keeps_the_best_validation_value():
    X, scores, Y = _small_problem(seed=5, n=120)
    Xt, St, Yt, Xv, Sv, Yv = X[:80], scores[:80], Y[:80], X[80:], scores[80:], Y[80:]
    lams = [1e-2, 1.0, 100.0]
    predictor, lam, table = thresholds.select_lambda(Xt, St, Yt, Xv, Sv, Yv, lams=lams,
                                                     criterion="miF")
    assert sorted(table) == lams
    for value in lams:
        refit = ThresholdPredictor(lam=value).fit(Xt, St, Yt)
        expected = metrics.bipartition_measures(Yv, refit.predict(Xv, Sv))["miF"]
        assert table[value] == pytest.approx(expected)
    assert table[lam] == max(table.values())
    assert predictor.lam == lam


@pytest.mark.parametrize("make, message", [
    (lambda: ThresholdPredictor(features="hidden"), "features"),
    (lambda: ThresholdPredictor(lam=-1.0), "lam"),
    (lambda: ThresholdPredictor(lam=float("nan")), "lam"),
    (lambda: ThresholdPredictor(fixed="half"), "fixed"),
])
def test_bad_options_raise(make, message):
    with pytest.raises(MLNNError, match=message):
        make()


def test_bad_data_raises():
    X, scores, Y = _small_problem()
    with pytest.raises(MLNNError, match="X is required"):
        ThresholdPredictor().fit(None, scores, Y)
    with pytest.raises(MLNNError, match="rows"):
        ThresholdPredictor().fit(X[:10], scores, Y)
    with pytest.raises(MLNNError, match="shape"):
        ThresholdPredictor().fit(X, scores, Y[:, :3])
    with pytest.raises(MLNNError, match="0/1"):
        ThresholdPredictor().fit(X, scores, Y * 2)
    bad = scores.copy()
    bad[3, 1] = np.nan
    with pytest.raises(MLNNError, match="NaN"):
        ThresholdPredictor().fit(X, bad, Y)
    with pytest.raises(MLNNError, match="not fitted"):
        ThresholdPredictor().predict(X, scores)
    tp = ThresholdPredictor().fit(X, scores, Y)
    with pytest.raises(MLNNError, match="features"):
        tp.predict(X[:, :5], scores)
    with pytest.raises(MLNNError, match="criterion"):
        thresholds.select_lambda(X, scores, Y, X, scores, Y, criterion="accuracy")
