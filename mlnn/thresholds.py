"""From scores to label sets: the learned per-document threshold predictor (paper Sec. 3.3).

A ranking f(x) becomes a label set by a threshold: ŷ_l = 1 iff o_l > T(x). The paper learns the
threshold as a function of the document:

1. For every training document m, :func:`optimal_thresholds` finds the threshold t_m that
   maximises that document's F1 given its scores o_m and true labels y_m. Only cuts between
   successive scores of the sorted list can change the label set, so the candidates are the
   midpoints between successive distinct sorted scores (plus one cut above the top score and one
   below the bottom score).
2. T(x; θ) = θᵀx + b is fitted to those targets by ℓ2-regularised linear regression (Eq. 5),

       min_{θ, b}  Σ_m (θᵀx_m + b − t_m)²  +  λ ‖θ‖²,

   on the input features x (the paper's choice; X stays sparse — the problem is solved with
   :func:`scipy.sparse.linalg.lsqr` on an implicitly centred operator, never forming a dense X),
   or, with ``features="scores"``, on the network's output scores o (what BP-MLL implementations
   do). The intercept b is not regularised. λ is chosen on validation data by
   :func:`select_lambda`.

A fixed threshold (``ThresholdPredictor(fixed=0.5)``, or ``fixed=0.0`` for tanh outputs and
SVM margins) is available for comparison.

Typical use::

    tp = ThresholdPredictor(lam=1.0).fit(X_train, scores_train, Y_train)
    Y_pred = tp.predict(X_test, scores_test)          # 0/1 CSR matrix
"""

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, lsqr

from mlnn import metrics
from mlnn.errors import MLNNError
from mlnn.validation import check_scores, check_X, check_Y

#: Default grid of regularisation strengths λ searched by :func:`select_lambda`.
DEFAULT_LAMBDAS = (1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0)

#: Half-distance used beyond the extreme score when a document's scores are all equal.
ALL_TIED_MARGIN = 0.5

FEATURES = ("input", "scores")


def optimal_thresholds(scores, Y):
    """Per-document F1-optimal thresholds t_m (Sec. 3.3, the regression targets of Eq. 5).

    Parameters
    ----------
    scores : (n, L) dense float array — the outputs o_m.
    Y : (n, L) 0/1 array or sparse matrix — the true label sets y_m.

    Returns
    -------
    t : (n,) float array such that predicting {l : o_ml > t_m} maximises document m's F1.

    With the scores of a document sorted in decreasing order, s_1 ≥ … ≥ s_L, predicting the top
    k labels (k = 0 … L, only at boundaries between distinct scores) gives F1 = 2 TP_k / (k + |y|).
    The best k is chosen — the smallest such k on ties, i.e. the highest threshold — and
    t_m = (s_k + s_{k+1}) / 2, the midpoint of the cut. Conventions at the ends:

    - No relevant label: the empty prediction is perfect (F1 = 1), so k = 0 and the threshold is
      placed above the top score, t = s_1 + (s_1 − s')/2 where s' is the next lower distinct
      score (the cut mirrored above s_1).
    - All labels relevant: k = L, t = s_L − (s'' − s_L)/2 with s'' the next higher distinct score.
    - If all of a document's scores are equal, these margins are ``ALL_TIED_MARGIN`` (0.5).
    """
    scores = check_scores(scores)
    Y = check_Y(Y, "Y", shape=scores.shape).toarray().astype(bool)
    n, L = scores.shape
    order = np.argsort(-scores, axis=1)
    s = np.take_along_axis(scores, order, axis=1)          # descending
    rel = np.take_along_axis(Y, order, axis=1)
    n_rel = rel.sum(axis=1)

    tp = np.cumsum(rel, axis=1)                             # tp[:, k-1] = TP of the top-k cut
    k = np.arange(1, L + 1)
    f1 = 2.0 * tp / (k + n_rel[:, None])
    cut_allowed = np.ones((n, L), dtype=bool)               # no cut inside a run of equal scores
    cut_allowed[:, :-1] = s[:, :-1] != s[:, 1:]
    f1 = np.where(cut_allowed, f1, -1.0)
    f1_empty = np.where(n_rel == 0, 1.0, 0.0)
    best_k = np.argmax(np.column_stack([f1_empty, f1]), axis=1)   # first maximum: smallest k

    top, bottom = s[:, 0], s[:, -1]
    below_top = np.where(s < top[:, None], s, -np.inf).max(axis=1)
    above_bottom = np.where(s > bottom[:, None], s, np.inf).min(axis=1)
    all_tied = top == bottom
    margin_top = np.where(all_tied, ALL_TIED_MARGIN, (top - np.where(all_tied, top, below_top)) / 2)
    margin_bottom = np.where(all_tied, ALL_TIED_MARGIN,
                             (np.where(all_tied, bottom, above_bottom) - bottom) / 2)

    inner = np.clip(best_k, 1, L - 1) if L > 1 else np.ones_like(best_k)
    rows = np.arange(n)
    if L > 1:
        upper, lower = s[rows, inner - 1], s[rows, inner]
        midpoint = (upper + lower) / 2.0
        # for adjacent floating-point scores the midpoint can round up to the upper one
        midpoint = np.where(midpoint >= upper, lower, midpoint)
    else:
        midpoint = top
    below_all = bottom - margin_bottom
    below_all = np.where(below_all >= bottom, np.nextafter(bottom, -np.inf), below_all)
    return np.where(best_k == 0, top + margin_top, np.where(best_k == L, below_all, midpoint))


def _centred_operator(Z, mean):
    """The linear operator of Z − 1 meanᵀ (n × d) without forming it (Z may be sparse)."""
    n, d = Z.shape

    def matvec(v):
        v = np.ravel(v)
        return np.asarray(Z @ v).ravel() - mean @ v

    def rmatvec(u):
        u = np.ravel(u)
        return np.asarray(Z.T @ u).ravel() - mean * u.sum()

    return LinearOperator((n, d), matvec=matvec, rmatvec=rmatvec, dtype=np.float64)


def ridge_with_intercept(Z, t, lam, tol=1e-10, max_iter=None):
    """Solve min_{w,b} ‖Z w + b·1 − t‖² + lam ‖w‖² (intercept b not regularised).

    Centring removes b: with column means μ and mean target t̄, w solves the damped least-squares
    problem on Z − 1μᵀ (solved by LSQR with damp = √lam, Z kept sparse) and b = t̄ − μᵀw.

    Parameters
    ----------
    Z : (n, d) CSR matrix or dense array; t : (n,) targets; lam : float ≥ 0.

    Returns
    -------
    (w, b, n_iter): (d,) coefficients, the intercept, and LSQR's iteration count.
    """
    n, d = Z.shape
    mean = np.asarray(Z.mean(axis=0)).ravel()
    t_mean = float(t.mean())
    limit = max_iter if max_iter is not None else max(2 * d, 1000)
    result = lsqr(_centred_operator(Z, mean), t - t_mean, damp=np.sqrt(lam),
                  atol=tol, btol=tol, iter_lim=limit)
    w, n_iter = result[0], result[2]
    return w, t_mean - float(mean @ w), n_iter


class ThresholdPredictor:
    """Per-document thresholds T(x) = θᵀz + b, with z the input features or the scores.

    Parameters
    ----------
    lam : float ≥ 0 — λ of Eq. 5 (ℓ2 penalty on θ, not on the intercept).
    features : "input" (z = x, the paper's choice) or "scores" (z = o).
    fixed : None, or a number — then no regression is fitted and T(x) = fixed for every document
        (0.5 for sigmoid outputs, 0 for tanh outputs or SVM margins).
    tol, max_iter : LSQR's stopping tolerance (atol = btol) and iteration limit.

    Attributes after ``fit``: ``coef_`` (d,), ``intercept_`` (float), ``n_iter_`` (LSQR
    iterations), ``n_features_in_`` (d).
    """

    def __init__(self, lam=1.0, features="input", fixed=None, tol=1e-10, max_iter=None):
        if features not in FEATURES:
            raise MLNNError(f"unknown features {features!r}; choose one of {list(FEATURES)}")
        if isinstance(lam, bool) or not isinstance(lam, (int, float, np.number)) \
                or not np.isfinite(lam) or lam < 0:
            raise MLNNError(f"lam must be a finite number >= 0, got {lam!r}")
        if fixed is not None and (isinstance(fixed, bool) or not isinstance(
                fixed, (int, float, np.number)) or not np.isfinite(fixed)):
            raise MLNNError(f"fixed must be None or a finite number, got {fixed!r}")
        if not (isinstance(tol, (int, float)) and tol > 0):
            raise MLNNError(f"tol must be a positive number, got {tol!r}")
        self.lam = float(lam)
        self.features = features
        self.fixed = None if fixed is None else float(fixed)
        self.tol = tol
        self.max_iter = max_iter

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
        return scores, check_X(X, "X", n_rows=scores.shape[0], n_features=n_features)

    def fit(self, X, scores, Y):
        """Fit T on training documents.

        X : (n, D) CSR input features (may be None unless ``features="input"``);
        scores : (n, L) dense outputs o on the same documents; Y : (n, L) 0/1 true labels.
        Returns self.
        """
        scores, Z = self._design(X, scores, fitting=True)
        Y = check_Y(Y, "Y", shape=scores.shape)
        if self.fixed is not None:
            self.coef_, self.intercept_, self.n_iter_ = np.zeros(0), self.fixed, 0
            self.n_features_in_ = None
            return self
        targets = optimal_thresholds(scores, Y)
        self.coef_, self.intercept_, self.n_iter_ = ridge_with_intercept(
            Z, targets, self.lam, tol=self.tol, max_iter=self.max_iter)
        self.n_features_in_ = Z.shape[1]
        return self

    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            raise MLNNError("this ThresholdPredictor is not fitted yet; call fit first")

    def predict_threshold(self, X, scores):
        """T(x) for each document: (n,) float array. X (n, D) CSR or None, scores (n, L)."""
        self._check_fitted()
        scores, Z = self._design(X, scores, fitting=False)
        if self.fixed is not None:
            return np.full(scores.shape[0], self.fixed)
        if self.features == "scores" and Z.shape[1] != self.n_features_in_:
            raise MLNNError(f"scores has {Z.shape[1]} labels, expected {self.n_features_in_}")
        return np.asarray(Z @ self.coef_).ravel() + self.intercept_

    def predict(self, X, scores, dense=False):
        """The label sets ŷ_kl = 1 iff o_kl > T(x_k): (n, L) int8, CSR unless ``dense``."""
        t = self.predict_threshold(X, scores)
        Y_pred = (np.asarray(scores, dtype=np.float64) > t[:, None]).astype(np.int8)
        return Y_pred if dense else sp.csr_matrix(Y_pred)


def _criterion_value(result, criterion):
    if criterion == "meanF":
        return (result["miF"] + result["maF"]) / 2.0
    return result[criterion]


CRITERIA = ("meanF", "miF", "maF", "miP", "miR", "maP", "maR")


def select_lambda(X_train, scores_train, Y_train, X_val, scores_val, Y_val,
                  lams=DEFAULT_LAMBDAS, features="input", criterion="meanF", **kwargs):
    """Choose λ on validation documents; return the predictor fitted with it.

    Fits a :class:`ThresholdPredictor` on the training documents for each λ in ``lams``, predicts
    label sets for the validation documents and keeps the λ with the highest ``criterion``
    ("meanF" = mean of micro- and macro-F1, or one of the bipartition measures of
    :func:`mlnn.metrics.bipartition_measures`). The first λ wins ties.

    X_* : CSR features (None allowed with ``features="scores"``); scores_* : dense (n, L);
    Y_* : 0/1 (n, L). Extra keyword arguments go to :class:`ThresholdPredictor`.

    Returns
    -------
    (predictor, lam, table): the fitted predictor with the chosen λ, that λ, and a dict
    λ → validation value of the criterion.
    """
    if criterion not in CRITERIA:
        raise MLNNError(f"unknown criterion {criterion!r}; choose one of {list(CRITERIA)}")
    lams = list(lams)
    if not lams:
        raise MLNNError("lams must contain at least one value")
    best, table = None, {}
    for lam in lams:
        predictor = ThresholdPredictor(lam=lam, features=features, **kwargs)
        predictor.fit(X_train, scores_train, Y_train)
        Y_pred = predictor.predict(X_val, scores_val)
        value = _criterion_value(metrics.bipartition_measures(Y_val, Y_pred), criterion)
        table[float(lam)] = value
        if best is None or value > best[0]:
            best = (value, float(lam), predictor)
    return best[2], best[1], table
