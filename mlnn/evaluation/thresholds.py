"""From scores to label sets: the learned per-document threshold predictor (Sec. 3.3, Eq. 5).

A label is predicted **strictly** above the threshold: ŷ_l = 1 iff o_l > T(x).

1. For every training document m, :func:`optimal_thresholds` finds the threshold t_m that
   maximises its F1 (or, ``criterion="hamming"``, minimises its wrong decisions, BP-MLL's
   published target): the midpoint of the best cut between successive distinct sorted scores.
2. T(x; θ) = θᵀx is fitted to those targets by ℓ2-regularised linear regression (Eq. 5),

       min_θ  Σ_m (θᵀx_m − t_m)²  +  λ ‖θ‖²,

   λ against the **summed** squared error, **every** coefficient penalised, by LSQR with X
   sparse. By default (ours) x carries a constant feature 1, penalised like the rest
   (``intercept="penalised"``; without it, ``"none"``, Delicious NN_AD's micro-F1 falls from
   0.39 to 0.18). ``features="scores"`` regresses on the outputs o (as BP-MLL implementations
   do). λ is chosen on validation data (:func:`select_lambda`).

Not the paper's: ``intercept="free"`` (an unpenalised intercept, :func:`ridge_with_intercept`;
the thresholds then sit near the mean target whatever λ is) and ``fixed`` thresholds.
"""

import numpy as np
import scipy.sparse as sp

from mlnn.base.errors import MLNNError
from mlnn.base.validation import (check_choice, check_finite_float, check_fitted,
                                  check_nonnegative_float, check_positive_float, check_scores,
                                  check_X, check_Y)
from mlnn.evaluation import metrics

#: The grid of λ searched by :func:`select_lambda` (against the summed squared error, so the
#: useful values grow with the number of training documents).
DEFAULT_LAMBDAS = tuple(float(f"{10 ** (k / 2):.3g}") for k in range(-4, 13))   # 0.01 … 1e6

#: Half-distance used beyond the extreme score when a document's scores are all equal.
ALL_TIED_MARGIN = 0.5

FEATURES = ("input", "scores")

#: Per-document targets: the F1-optimal cut (the paper's) or the Hamming-optimal cut.
TARGETS = ("f1", "hamming")

#: The constant feature of T (ours: Eq. 5 is θᵀx with none): penalised like the rest, absent
#: (Eq. 5 as written), or unpenalised.
INTERCEPTS = ("penalised", "none", "free")


def _cut_quality(rel, criterion):
    """Quality of predicting the top k labels, k = 0 … L, from ``rel`` (n, L) in decreasing
    score order: F1 = 2 TP_k / (k + |y|) (1 if both are 0), or −(|y| + k − 2 TP_k)."""
    n, L = rel.shape
    tp = np.column_stack([np.zeros(n), np.cumsum(rel, axis=1)])    # tp[:, k] = TP of the top k
    k = np.arange(L + 1)
    n_rel = tp[:, -1:]
    if criterion == "hamming":
        return -(n_rel + k - 2.0 * tp)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(k + n_rel > 0, 2.0 * tp / (k + n_rel), 1.0)


def _cut_thresholds(s, best_k):
    """The threshold of the cut after the top ``best_k`` of the descending scores ``s``: the
    midpoint of the k-th and (k+1)-th, beyond the ends the nearest gap mirrored (or
    ``ALL_TIED_MARGIN``), always s_{k+1} ≤ t < s_k, so ``o > t`` predicts exactly the top k."""
    n, L = s.shape
    top, bottom = s[:, 0], s[:, -1]
    all_tied = top == bottom
    below_top = np.where(s < top[:, None], s, -np.inf).max(axis=1)
    above_bottom = np.where(s > bottom[:, None], s, np.inf).min(axis=1)
    margin_top = np.where(all_tied, ALL_TIED_MARGIN, (top - below_top) / 2)   # tied: ±∞ gaps
    margin_bottom = np.where(all_tied, ALL_TIED_MARGIN, (above_bottom - bottom) / 2)
    rows = np.arange(n)
    inner = np.clip(best_k, 1, L - 1)                  # with L = 1 no midpoint is used
    upper, lower = s[rows, inner - 1], s[rows, inner]
    midpoint = (upper + lower) / 2.0
    # for adjacent floating-point scores the midpoint can round up to the upper one
    midpoint = np.where(midpoint >= upper, lower, midpoint)
    below_all = bottom - margin_bottom
    below_all = np.where(below_all >= bottom, np.nextafter(bottom, -np.inf), below_all)
    return np.where(best_k == 0, top + margin_top, np.where(best_k == L, below_all, midpoint))


def optimal_thresholds(scores, Y, criterion="f1"):
    """Per-document optimal thresholds t_m (Sec. 3.3, the regression targets of Eq. 5), (n,):
    t_m = (s_k + s_{k+1}) / 2 for the best cut after the top k (the smallest k on ties)."""
    check_choice(criterion, "criterion", TARGETS)
    scores = check_scores(scores)
    Y = check_Y(Y, "Y", shape=scores.shape).toarray().astype(bool)
    n, L = scores.shape
    if n == 0 or L == 0:
        return np.zeros(n)
    order = np.argsort(-scores, axis=1)
    s = np.take_along_axis(scores, order, axis=1)          # descending
    quality = _cut_quality(np.take_along_axis(Y, order, axis=1), criterion)
    cut_allowed = np.ones((n, L + 1), dtype=bool)           # no cut inside a run of equal scores
    cut_allowed[:, 1:L] = s[:, :-1] != s[:, 1:]
    best_k = np.argmax(np.where(cut_allowed, quality, -np.inf), axis=1)   # first: smallest k
    return _cut_thresholds(s, best_k)


def ridge(Z, t, lam, tol=1e-10):
    """Solve Eq. 5, min_w ‖Z w − t‖² + lam ‖w‖², by LSQR with damp = √lam: (w, n_iter)."""
    from scipy.sparse.linalg import lsqr         # here: a prediction loads no solver
    result = lsqr(Z, np.asarray(t, dtype=np.float64), damp=np.sqrt(lam), atol=tol, btol=tol,
                  iter_lim=max(2 * Z.shape[1], 1000))
    return result[0], result[2]


def with_constant(Z):
    """[Z, 1], sparse if Z is."""
    ones = np.ones((Z.shape[0], 1))
    if sp.issparse(Z):
        return sp.hstack([Z, sp.csr_matrix(ones)], format="csr")
    return np.hstack([Z, ones])


def _centred_operator(Z, mean):
    """Z − 1 meanᵀ as a linear operator, without forming it."""
    from scipy.sparse.linalg import LinearOperator
    n, d = Z.shape

    def matvec(v):
        v = np.ravel(v)
        return np.asarray(Z @ v).ravel() - mean @ v

    def rmatvec(u):
        u = np.ravel(u)
        return np.asarray(Z.T @ u).ravel() - mean * u.sum()

    return LinearOperator((n, d), matvec=matvec, rmatvec=rmatvec, dtype=np.float64)


def ridge_with_intercept(Z, t, lam, tol=1e-10):
    """Solve min_{w,b} ‖Z w + b·1 − t‖² + lam ‖w‖² (b not regularised; not Eq. 5): w by
    :func:`ridge` on the centred Z − 1μᵀ (Z kept sparse), b = t̄ − μᵀw. Returns (w, b, n_iter)."""
    mean = np.asarray(Z.mean(axis=0)).ravel()
    t_mean = float(t.mean())
    w, n_iter = ridge(_centred_operator(Z, mean), t - t_mean, lam, tol)
    return w, t_mean - float(mean @ w), n_iter


class ThresholdPredictor:
    """Per-document thresholds T(x) = θ_0 + θᵀz (Eq. 5's T = θᵀx, with our constant θ_0), z the
    input features or the scores; ŷ = 1 iff o > T(x).

    lam : λ of Eq. 5 against the summed squared error (the paper's λ is this / M); features :
    "input" or "scores"; fixed : None or a constant T; intercept : "penalised", "none" or
    "free"; target : "f1" or "hamming". After ``fit``: ``coef_`` = θ, ``intercept_`` = θ_0.
    """

    def __init__(self, lam=1.0, features="input", fixed=None, tol=1e-10, intercept="penalised",
                 target="f1"):
        self.features = check_choice(features, "features", FEATURES)
        self.target = check_choice(target, "target", TARGETS)
        self.intercept = check_choice(intercept, "intercept", INTERCEPTS)
        self.lam = check_nonnegative_float(lam, "lam")
        self.fixed = None if fixed is None else check_finite_float(fixed, "fixed")
        self.tol = check_positive_float(tol, "tol")

    def _design(self, X, scores, fitting):
        """Return (validated scores, regression inputs Z)."""
        scores = check_scores(scores)
        if self.fixed is not None:
            return scores, None
        if self.features == "scores":
            return scores, scores
        if X is None:
            raise MLNNError('X is required with features="input" (the threshold is T(x))')
        n_features = None if fitting else self.n_features_in_
        return scores, check_X(X, "X", n_samples=scores.shape[0], n_features=n_features)

    def fit(self, X, scores, Y, targets=None):
        """Fit T on X (n, D; None unless ``features="input"``), scores (n, L) and Y (n, L), with
        the ``targets`` (n,) of :func:`optimal_thresholds` if already computed; returns self."""
        scores, Z = self._design(X, scores, fitting=True)
        Y = check_Y(Y, "Y", shape=scores.shape)
        if self.fixed is not None:
            self.coef_, self.intercept_, self.n_iter_ = np.zeros(0), self.fixed, 0
            self.n_features_in_ = None
            return self
        if targets is None:
            targets = optimal_thresholds(scores, Y, criterion=self.target)
        elif np.shape(targets) != (scores.shape[0],):
            raise MLNNError(f"targets has shape {np.shape(targets)}, expected "
                            f"({scores.shape[0]},): one threshold per document")
        if self.intercept == "free":
            self.coef_, self.intercept_, self.n_iter_ = ridge_with_intercept(
                Z, targets, self.lam, self.tol)
        elif self.intercept == "penalised":
            theta, self.n_iter_ = ridge(with_constant(Z), targets, self.lam, self.tol)
            self.coef_, self.intercept_ = theta[:-1], float(theta[-1])
        else:
            self.coef_, self.n_iter_ = ridge(Z, targets, self.lam, self.tol)
            self.intercept_ = 0.0
        self.n_features_in_ = Z.shape[1]
        return self

    def predict_threshold(self, X, scores):
        """T(x) for each document: (n,) float array. X (n, D) CSR or None, scores (n, L)."""
        check_fitted(self, "coef_")
        scores, Z = self._design(X, scores, fitting=False)
        if self.fixed is not None:
            return np.full(scores.shape[0], self.fixed)
        if self.features == "scores" and Z.shape[1] != self.n_features_in_:
            raise MLNNError(f"scores has {Z.shape[1]} labels, expected {self.n_features_in_}")
        return np.asarray(Z @ self.coef_).ravel() + self.intercept_

    def predict(self, X, scores, dense=False):
        """The label sets ŷ_kl = 1 iff o_kl > T(x_k) (strictly): (n, L) int8, CSR unless
        ``dense``."""
        t = self.predict_threshold(X, scores)
        Y_pred = (np.asarray(scores, dtype=np.float64) > t[:, None]).astype(np.int8)
        return Y_pred if dense else sp.csr_matrix(Y_pred)


def select_lambda(X_train, scores_train, Y_train, X_val, scores_val, Y_val,
                  lams=DEFAULT_LAMBDAS, features="input", **kwargs):
    """Choose λ of ``lams`` by the validation ``selection_score``, ties to the **largest** λ
    (``nan`` the worst): (the fitted predictor, λ, {λ: validation value})."""
    lams = sorted({check_nonnegative_float(lam, "each λ in lams") for lam in lams})
    if not lams:
        raise MLNNError("lams must contain at least one value")
    best, table, targets = None, {}, None
    for lam in lams:                                   # ascending: on ties, a later λ replaces
        predictor = ThresholdPredictor(lam=lam, features=features, **kwargs)
        if targets is None:                            # the same for every λ: compute once
            targets = optimal_thresholds(scores_train, Y_train, criterion=predictor.target)
        predictor.fit(X_train, scores_train, Y_train, targets=targets)
        value = metrics.selection_score(Y_val, predictor.predict(X_val, scores_val))
        table[lam] = value
        comparable = -np.inf if np.isnan(value) else value
        if best is None or comparable >= best[0]:
            best = (comparable, lam, predictor)
    return best[2], best[1], table
