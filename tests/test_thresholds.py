"""Tests of mlnn.evaluation.thresholds: optimal per-document cuts and the regression T(x) of
Eq. 5."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mlnn.base.errors import MLNNError
from mlnn.evaluation import metrics, thresholds
from mlnn.evaluation.thresholds import (ThresholdPredictor, optimal_thresholds, ridge,
                                        ridge_with_intercept, select_lambda)


def f1_of_set(y, predicted):
    """F1 of one document; nothing to find and nothing predicted counts as 1."""
    tp = int(np.sum(y & predicted))
    denominator = int(y.sum() + predicted.sum())
    return 1.0 if denominator == 0 else 2.0 * tp / denominator


def minus_hamming_errors(y, predicted):
    """Minus the number of wrong label decisions (so that higher is better, like F1)."""
    return -float(np.sum(y != predicted))


QUALITY = {"f1": f1_of_set, "hamming": minus_hamming_errors}


def brute_force_best(y, o, quality):
    """The best quality over every cut of the sorted scores, with the number of labels it
    predicts (the fewest among the optimal cuts)."""
    values = np.unique(o)
    cuts = [values[-1] + 1.0] + list((values[1:] + values[:-1]) / 2) + [values[0] - 1.0]
    results = [(quality(y, o > t), int(np.sum(o > t))) for t in cuts]
    best = max(q for q, _ in results)
    return best, min(size for q, size in results if q == best)


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


@pytest.mark.parametrize("criterion", ["f1", "hamming"])
@given(problem=score_label_matrices())
def test_optimal_thresholds_reach_the_brute_force_optimum(criterion, problem):
    S, Y = problem
    t = optimal_thresholds(S, Y, criterion=criterion)
    assert t.shape == (S.shape[0],)
    for m in range(S.shape[0]):
        y, o = Y[m].astype(bool), S[m]
        predicted = o > t[m]
        best, smallest = brute_force_best(y, o, QUALITY[criterion])
        assert QUALITY[criterion](y, predicted) == pytest.approx(best, abs=1e-12)
        # of several optimal cuts, the one predicting the fewest labels (highest threshold)
        assert predicted.sum() == smallest
        # the threshold is the midpoint of its cut: equidistant from the nearest scores either side
        above, below = o[o > t[m]], o[o <= t[m]]
        if above.size and below.size:
            assert t[m] - below.max() == pytest.approx(above.min() - t[m], abs=1e-12)


def test_optimal_thresholds_default_is_f1():
    S, Y = np.array([[0.9, 0.6, 0.2, 0.1]]), np.array([[1, 0, 1, 0]])
    np.testing.assert_array_equal(optimal_thresholds(S, Y), optimal_thresholds(S, Y, "f1"))


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
    # Hamming: row 3 top-1 makes 1 error, top-3 makes 1 error (label 1), top-0 makes 2
    # -> the fewest labels on ties, top-1, cut between 0.9 and 0.6; row 5: nothing (1 error)
    # beats everything (3 errors)
    t = optimal_thresholds(S, Y, criterion="hamming")
    np.testing.assert_allclose(t, [0.9 + 0.15, 0.1 - 0.05, 0.75, 0.3 + 0.5, 0.3 + 0.5])


def test_a_score_equal_to_the_threshold_is_not_predicted():
    # adjacent floating-point scores: the midpoint rounds to one of them; the threshold is then
    # the lower score itself, and only the strict o > t predicts exactly the top label
    upper = 1.0
    lower = np.nextafter(upper, 0.0)
    S = np.array([[upper, lower, 0.0]])
    t = optimal_thresholds(S, np.array([[1, 0, 0]]))
    assert t[0] == lower
    np.testing.assert_array_equal(S[0] > t[0], [True, False, False])


@pytest.mark.parametrize("criterion", ["f1", "hamming"])
def test_the_every_label_threshold_stays_strictly_below_the_bottom_score(criterion):
    # all labels relevant: k = L, t = s_L − (s'' − s_L)/2. With s_L = 1 + 2u and s'' = 1 + 3u
    # (u = 2⁻⁵², adjacent floats) the half gap rounds back to s_L (a tie, to even); the target
    # must still lie below s_L, or o > t would drop the bottom label
    u = 2.0 ** -52
    top, bottom = 1 + 3 * u, 1 + 2 * u
    assert bottom - (top - bottom) / 2 == bottom                       # the construction
    S = np.array([[top, bottom], [0.9, 0.1]])
    t = optimal_thresholds(S, np.ones((2, 2)), criterion=criterion)
    assert t[0] == np.nextafter(bottom, -np.inf)
    assert t[1] == pytest.approx(0.1 - 0.4, abs=1e-15)
    assert (S > t[:, None]).all()


def closed_form(Z, t, lam, intercept):
    """The coefficients from the normal equations: of ‖Zw − t‖² + lam‖w‖² (every coefficient
    penalised), or with intercept of ‖Zw + b − t‖² + lam‖w‖² (b unpenalised)."""
    if not intercept:
        return np.linalg.solve(Z.T @ Z + lam * np.eye(Z.shape[1]), Z.T @ t), 0.0
    A = np.column_stack([Z, np.ones(len(Z))])
    penalty = np.diag(np.r_[np.full(Z.shape[1], lam), 0.0])
    solution = np.linalg.solve(A.T @ A + penalty, A.T @ t)
    return solution[:-1], solution[-1]


@pytest.mark.parametrize("lam", [1e-3, 0.5, 10.0, 1e4])
@pytest.mark.parametrize("sparse", [False, True])
def test_ridge_solves_eq5_without_intercept(lam, sparse):
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(40, 7)) * (rng.random((40, 7)) < 0.5)
    t = rng.normal(size=40) + 3.0
    w, _ = ridge(sp.csr_matrix(Z) if sparse else Z, t, lam, tol=1e-14)
    w_ref, _ = closed_form(Z, t, lam, intercept=False)
    np.testing.assert_allclose(w, w_ref, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("lam", [1e-3, 0.5, 10.0])
@pytest.mark.parametrize("sparse", [False, True])
def test_ridge_with_intercept_matches_the_closed_form(lam, sparse):
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(40, 7)) * (rng.random((40, 7)) < 0.5)
    t = rng.normal(size=40)
    w, b, _ = ridge_with_intercept(sp.csr_matrix(Z) if sparse else Z, t, lam, tol=1e-14)
    w_ref, b_ref = closed_form(Z, t, lam, intercept=True)
    np.testing.assert_allclose(w, w_ref, rtol=1e-8, atol=1e-10)
    assert b == pytest.approx(b_ref, rel=1e-8, abs=1e-10)


@pytest.mark.parametrize("features", ["input", "scores"])
@pytest.mark.parametrize("intercept", ["penalised", "none", "free"])
def test_fitting_and_predicting_never_densify_X(monkeypatch, intercept, features):
    D = 500
    for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        for method in ("toarray", "todense"):
            original = getattr(cls, method)

            def guarded(self, *args, _original=original, **kwargs):
                if self.shape[1] == D:     # X; the n × L label matrices may be densified
                    raise AssertionError("X was densified")
                return _original(self, *args, **kwargs)
            monkeypatch.setattr(cls, method, guarded)
    rng = np.random.default_rng(1)
    X = sp.random(60, D, density=0.02, format="csr", random_state=2)
    scores = rng.random((60, 4))
    Y = (rng.random((60, 4)) < 0.3).astype(np.int8)
    tp = ThresholdPredictor(lam=1.0, intercept=intercept, features=features)
    tp.fit(X, scores, Y)
    assert tp.predict(X, scores).shape == (60, 4)
    w, _, _ = ridge_with_intercept(X, scores[:, 0], 1.0)
    assert w.shape == (D,)
    w, _ = ridge(X, scores[:, 0], 1.0)
    assert w.shape == (D,)


def _small_problem(seed=0, n=50, D=12, L=6):
    rng = np.random.default_rng(seed)
    X = sp.random(n, D, density=0.4, format="csr", random_state=seed)
    scores = rng.random((n, L))
    Y = (rng.random((n, L)) < 0.3).astype(np.int8)
    return X, scores, Y


def with_ones(Z):
    return np.column_stack([Z, np.ones(len(Z))])


@pytest.mark.parametrize("target", ["f1", "hamming"])
def test_threshold_predictor_fits_eq5_on_the_optimal_targets(target):
    # default: x with a constant feature 1 appended, every coefficient penalised
    X, scores, Y = _small_problem()
    tp = ThresholdPredictor(lam=0.3, tol=1e-14, target=target).fit(X, scores, Y)
    theta, _ = closed_form(with_ones(X.toarray()), optimal_thresholds(scores, Y, target), 0.3,
                           intercept=False)
    np.testing.assert_allclose(tp.coef_, theta[:-1], rtol=1e-8, atol=1e-10)
    assert tp.intercept_ == pytest.approx(theta[-1], rel=1e-8)
    T = tp.predict_threshold(X, scores)
    np.testing.assert_allclose(T, with_ones(X.toarray()) @ theta, rtol=1e-8, atol=1e-12)
    Y_pred = tp.predict(X, scores)
    assert sp.issparse(Y_pred)
    np.testing.assert_array_equal(Y_pred.toarray(), (scores > T[:, None]).astype(np.int8))
    np.testing.assert_array_equal(tp.predict(X, scores, dense=True), Y_pred.toarray())


@pytest.mark.parametrize("target", ["f1", "hamming"])
def test_precomputed_targets_give_the_same_fit(target):
    X, scores, Y = _small_problem()
    tp = ThresholdPredictor(lam=0.3, target=target)
    targets = optimal_thresholds(scores, Y, target)
    given = ThresholdPredictor(lam=0.3, target=target).fit(X, scores, Y, targets=targets)
    computed = ThresholdPredictor(lam=0.3, target=target).fit(X, scores, Y)
    np.testing.assert_array_equal(given.coef_, computed.coef_)
    assert given.intercept_ == computed.intercept_
    with pytest.raises(MLNNError, match="one threshold per document"):
        tp.fit(X, scores, Y, targets=targets[:-1])


def test_select_lambda_uses_the_predictors_target():
    Xt, St, Yt, Xv, Sv, Yv = _split()
    _, _, table = select_lambda(Xt, St, Yt, Xv, Sv, Yv, lams=[1.0], target="hamming")
    refit = ThresholdPredictor(lam=1.0, target="hamming").fit(Xt, St, Yt)
    assert table[1.0] == pytest.approx(metrics.selection_score(Yv, refit.predict(Xv, Sv)))


def test_the_targets_differ_between_f1_and_hamming_here():
    # guards the previous test against a target option that is silently ignored
    _, scores, Y = _small_problem()
    assert not np.allclose(optimal_thresholds(scores, Y, "f1"),
                           optimal_thresholds(scores, Y, "hamming"))


def test_without_a_constant_the_threshold_is_theta_x():
    X, scores, Y = _small_problem(seed=6)
    targets = optimal_thresholds(scores, Y)
    for lam in (0.1, 10.0, 1e3):
        tp = ThresholdPredictor(lam=lam, tol=1e-14, intercept="none").fit(X, scores, Y)
        w_ref, _ = closed_form(X.toarray(), targets, lam, intercept=False)
        np.testing.assert_allclose(tp.coef_, w_ref, rtol=1e-8, atol=1e-10)
        assert tp.intercept_ == 0.0
        np.testing.assert_allclose(tp.predict_threshold(X, scores), X.toarray() @ w_ref,
                                   rtol=1e-8, atol=1e-12)


def test_the_constant_is_penalised_like_the_rest():
    # a constant column in X with intercept="none" is the same model as the default
    X, scores, Y = _small_problem(seed=6)
    X1 = sp.hstack([X, sp.csr_matrix(np.ones((X.shape[0], 1)))], format="csr")
    for lam in (0.1, 1e3):
        default = ThresholdPredictor(lam=lam, tol=1e-14).fit(X, scores, Y)
        explicit = ThresholdPredictor(lam=lam, tol=1e-14, intercept="none").fit(X1, scores, Y)
        np.testing.assert_allclose(np.r_[default.coef_, default.intercept_], explicit.coef_,
                                   rtol=1e-8, atol=1e-10)
    # the constant's coefficient shrinks towards 0 as λ grows (it would not if unpenalised)
    small = ThresholdPredictor(lam=1e-3).fit(X, scores, Y).intercept_
    large = ThresholdPredictor(lam=1e4).fit(X, scores, Y).intercept_
    assert abs(large) < 0.1 * abs(small)


def test_free_intercept_option_fits_the_unpenalised_form():
    X, scores, Y = _small_problem(seed=2)
    tp = ThresholdPredictor(lam=0.3, tol=1e-14, intercept="free").fit(X, scores, Y)
    w_ref, b_ref = closed_form(X.toarray(), optimal_thresholds(scores, Y), 0.3, True)
    np.testing.assert_allclose(tp.coef_, w_ref, rtol=1e-8, atol=1e-10)
    assert tp.intercept_ == pytest.approx(b_ref, rel=1e-8)
    np.testing.assert_allclose(tp.predict_threshold(X, scores), X.toarray() @ w_ref + b_ref,
                               rtol=1e-8)


@pytest.mark.parametrize("intercept", ["penalised", "none"])
def test_large_lambda_shrinks_eq5_thresholds_to_zero_but_not_the_free_intercept(intercept):
    X, scores, Y = _small_problem(seed=7)
    targets = optimal_thresholds(scores, Y)
    eq5 = ThresholdPredictor(lam=1e8, intercept=intercept).fit(X, scores, Y)
    with_b = ThresholdPredictor(lam=1e8, intercept="free").fit(X, scores, Y)
    np.testing.assert_allclose(eq5.predict_threshold(X, scores), 0.0, atol=1e-5)
    np.testing.assert_allclose(with_b.predict_threshold(X, scores), targets.mean(), atol=1e-6)
    # the free intercept is the mean target whatever λ: nothing shrinks it
    assert with_b.intercept_ == pytest.approx(targets.mean(), abs=1e-6)


@pytest.mark.parametrize("intercept", ["penalised", "none", "free"])
def test_threshold_predictor_on_scores(intercept):
    X, scores, Y = _small_problem(seed=3)
    tp = ThresholdPredictor(lam=0.1, features="scores", tol=1e-14, intercept=intercept)
    tp.fit(None, scores, Y)
    targets = optimal_thresholds(scores, Y)
    if intercept == "penalised":
        theta, _ = closed_form(with_ones(scores), targets, 0.1, intercept=False)
        w_ref, b_ref = theta[:-1], theta[-1]
    else:
        w_ref, b_ref = closed_form(scores, targets, 0.1, intercept == "free")
    np.testing.assert_allclose(tp.coef_, w_ref, rtol=1e-8, atol=1e-10)
    assert tp.intercept_ == pytest.approx(b_ref, rel=1e-8, abs=1e-12)
    np.testing.assert_allclose(tp.predict_threshold(None, scores), scores @ w_ref + b_ref,
                               rtol=1e-8)


def test_an_almost_unregularised_predictor_recovers_a_linear_threshold():
    # each document's labels are exactly those scoring above 0.2 + 0.5 x_1: the optimal
    # per-document cuts are then close to that line and T(x) = θ_0 + θᵀx recovers it
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


@pytest.mark.parametrize("fixed", [0.5, 0.0])      # sigmoid outputs, tanh outputs (PWE)
def test_fixed_threshold_is_strict(fixed):
    X, scores, Y = _small_problem()
    scores = scores.copy() if fixed else 2 * scores - 1
    scores[0, :3] = fixed                     # exactly on the threshold: not predicted
    tp = ThresholdPredictor(fixed=fixed).fit(None, scores, Y)
    assert tp.coef_.size == 0 and tp.intercept_ == fixed       # a threshold of 0 is fixed too
    np.testing.assert_array_equal(tp.predict_threshold(None, scores), np.full(len(scores), fixed))
    np.testing.assert_array_equal(tp.predict(None, scores).toarray(), scores > fixed)
    assert tp.predict(None, scores, dense=True)[0, :3].sum() == 0
    learned = ThresholdPredictor(features="scores").fit(None, scores, Y)
    tp.coef_, tp.intercept_ = learned.coef_, learned.intercept_    # fixed wins in predict too
    np.testing.assert_array_equal(tp.predict_threshold(None, scores), np.full(len(scores), fixed))


def test_a_learned_threshold_equal_to_a_score_does_not_predict_it():
    X, scores, Y = _small_problem(seed=8)
    tp = ThresholdPredictor(features="scores").fit(None, scores, Y)
    tp.coef_ = np.eye(scores.shape[1])[0]     # T = o_0 exactly (adding zeros is exact)
    tp.intercept_ = 0.0
    np.testing.assert_array_equal(tp.predict_threshold(None, scores), scores[:, 0])
    Y_pred = tp.predict(None, scores, dense=True)
    assert Y_pred[:, 0].sum() == 0
    np.testing.assert_array_equal(Y_pred, scores > scores[:, :1])


def _split(seed=5, n=160, L=8):
    X, scores, Y = _small_problem(seed=seed, n=n, L=L)
    Y = Y.copy()
    Y[100:, -2:] = 0                          # two labels with no validation positive
    return X[:100], scores[:100], Y[:100], X[100:], scores[100:], Y[100:]


def test_select_lambda_keeps_the_best_validation_value_with_present_labels():
    Xt, St, Yt, Xv, Sv, Yv = _split()
    lams = [1e-2, 1.0, 100.0, 1e4]
    predictor, lam, table = select_lambda(Xt, St, Yt, Xv, Sv, Yv, lams=lams)
    assert list(table) == lams
    differs = False
    for value in lams:
        refit = ThresholdPredictor(lam=value).fit(Xt, St, Yt)
        P = refit.predict(Xv, Sv)
        m = metrics.bipartition_measures(Yv, P)
        present = Yv.sum(axis=0) > 0
        per_label_f1 = [metrics.bipartition_measures(Yv[:, [l]], P[:, [l]])["miF"]
                        for l in np.flatnonzero(present)]
        expected = (m["miF"] + np.mean(per_label_f1)) / 2
        assert table[value] == pytest.approx(expected)
        differs |= abs(expected - (m["miF"] + m["maF"]) / 2) > 1e-9
    assert differs                            # the two conventions disagree on this data
    assert table[lam] == max(table.values())
    assert predictor.lam == lam and predictor.intercept == "penalised"


def test_select_lambda_ties_go_to_the_largest_lambda():
    Xt, St, Yt, Xv, Sv, Yv = _split()
    # a fixed threshold makes every λ predict the same: all tie
    predictor, lam, table = select_lambda(Xt, St, Yt, Xv, Sv, Yv, lams=[10.0, 0.1, 1.0],
                                          fixed=0.5)
    assert len(set(table.values())) == 1
    assert lam == 10.0 and predictor.lam == 10.0


def test_select_lambda_tie_at_the_top_and_nan(monkeypatch):
    Xt, St, Yt, Xv, Sv, Yv = _split()
    values = iter([float("nan"), 0.7, 0.7, 0.6, float("nan")])   # in ascending λ order
    monkeypatch.setattr(metrics, "selection_score", lambda *args, **kwargs: next(values))
    _, lam, table = select_lambda(Xt, St, Yt, Xv, Sv, Yv, lams=[1e3, 1e-2, 1.0, 10.0, 1e2])
    assert list(table) == [1e-2, 1.0, 10.0, 1e2, 1e3]
    assert lam == 10.0


def test_select_lambda_all_nan_picks_the_largest():
    Xt, St, Yt, Xv, Sv, Yv = _split()
    Yv = np.zeros_like(Yv)                    # no validation positive: macro-F1 undefined
    _, lam, table = select_lambda(Xt, St, Yt, Xv, Sv, Yv, lams=[0.1, 1.0])
    assert all(np.isnan(v) for v in table.values())
    assert lam == 1.0


def test_default_grid_reaches_where_the_penalty_matters():
    # λ multiplies ‖θ‖² against the summed error over n documents: at the grid's smallest λ
    # the fit is that of least squares, at its largest even the constant's coefficient is
    # shrunk to almost 0 (for n in the thousands, as on Reuters-21578 and Delicious)
    lams = np.array(thresholds.DEFAULT_LAMBDAS)
    assert np.all(np.diff(lams) > 0)
    X, scores, Y = _small_problem(seed=11, n=3000, D=20, L=10)
    X = sp.csr_matrix(X.multiply(1 / np.sqrt(X.multiply(X).sum(axis=1) + 1e-300)))  # unit rows
    targets = optimal_thresholds(scores, Y)
    least_squares, *_ = np.linalg.lstsq(with_ones(X.toarray()), targets, rcond=None)
    smallest = ThresholdPredictor(lam=lams[0], tol=1e-14).fit(X, scores, Y)
    np.testing.assert_allclose(np.r_[smallest.coef_, smallest.intercept_], least_squares,
                               rtol=1e-3, atol=1e-4)
    largest = ThresholdPredictor(lam=lams[-1]).fit(X, scores, Y)
    assert abs(largest.intercept_) < 0.01 * abs(least_squares[-1])
    assert np.abs(largest.predict_threshold(X, scores)).max() < 0.01 * targets.mean()


@pytest.mark.parametrize("make, message", [
    (lambda: ThresholdPredictor(features="hidden"), "features"),
    (lambda: ThresholdPredictor(lam=-1.0), "lam"),
    (lambda: ThresholdPredictor(lam=float("nan")), "lam"),
    (lambda: ThresholdPredictor(fixed="half"), "fixed"),
    (lambda: ThresholdPredictor(target="accuracy"), "target"),
    (lambda: ThresholdPredictor(intercept="yes"), "intercept"),
    (lambda: ThresholdPredictor(intercept=True), "intercept"),
    (lambda: optimal_thresholds(np.ones((1, 2)), np.ones((1, 2)), criterion="f2"), "criterion"),
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
    with pytest.raises(MLNNError, match="lams"):
        select_lambda(X, scores, Y, X, scores, Y, lams=[1.0, -2.0])
    with pytest.raises(MLNNError, match="lams"):
        select_lambda(X, scores, Y, X, scores, Y, lams=[])


@pytest.mark.parametrize("criterion", ["f1", "hamming"])
@pytest.mark.parametrize("L", [1, 2, 3, 4, 5, 6, 7])
def test_optimal_thresholds_on_every_relevance_pattern(criterion, L):
    """Exhaustively, every 0/1 label vector of length L under distinct scores: the threshold
    reaches the brute-force optimum (rare patterns, like y = 11001 in score order, decide
    between F1 and near-F1 criteria and are easily missed by random examples)."""
    Y = np.array(list(np.ndindex(*(2,) * L)), dtype=np.int8)
    S = np.tile(np.linspace(1.0, 0.0, L), (len(Y), 1))
    S = S[:, np.random.default_rng(L).permutation(L)]        # scores not in label order
    t = optimal_thresholds(S, Y, criterion=criterion)
    for m in range(len(Y)):
        y, o = Y[m].astype(bool), S[m]
        best, _ = brute_force_best(y, o, QUALITY[criterion])
        assert QUALITY[criterion](y, o > t[m]) == pytest.approx(best, abs=1e-12)
