"""Binary relevance with L2-regularised linear SVMs, trained by dual coordinate descent.

The paper's BR baselines (Sec. 4, "Algorithms") train one linear SVM per label. For label l with
signs y_il ∈ {−1, +1} (+1 iff document i has label l) and inputs x_i (augmented by a constant
feature ``bias`` as liblinear's ``-B``, so the intercept is regularised like the weights), the
primal problems are

    squared hinge (L2-loss, the default; liblinear -s 1):
        min_w  ½‖w‖² + C Σ_i max(0, 1 − y_il wᵀx_i)²
    hinge (L1-loss; liblinear -s 3):
        min_w  ½‖w‖² + C Σ_i max(0, 1 − y_il wᵀx_i)

and their duals (Hsieh et al., "A dual coordinate descent method for large-scale linear SVM",
ICML 2008)

    min_α  f(α) = ½ αᵀ Q̄ α − eᵀα   s.t.  0 ≤ α_i ≤ U,      Q̄ = Q + diag(D_ii),
    Q_ij = y_i y_j x_iᵀx_j;  squared hinge: U = ∞, D_ii = 1/(2C);  hinge: U = C, D_ii = 0,

with w = Σ_i y_i α_i x_i. Coordinate descent visits the documents in a random order each epoch;
for document i the partial derivative is G = y_i wᵀx_i − 1 + D_ii α_i and the exact minimiser
along α_i is α_i ← min(max(α_i − G/Q̄_ii, 0), U), after which w ← w + (Δα_i) y_i x_i.

Vectorised across labels: the labels share the documents x_i, so one visit to document i
updates all L problems at once — W is D × L, a row of α is L values, and the gather W[idx] /
scatter W[idx] += x_i (Δα ⊙ y_i) touch only the features present in x_i. A label stops when its
projected gradients PG (G, clipped at the bounds) span at most ``tol`` over an epoch (liblinear's
criterion: max PG − min PG ≤ eps); converged labels are dropped from the working set.

KKT conditions at the optimum: PG_i = 0 for every i, where PG = G if 0 < α_i < U,
min(G, 0) if α_i = 0 and max(G, 0) if α_i = U.

Model selection (:func:`fit_br`) gives the paper's two baselines: C from {10⁻³, …, 10³} on a
validation split of the training data, chosen by

- BR_B: the mean of micro- and macro-F1 of the sign predictions (ŷ_l = 1 iff wᵀx + b > 0);
- BR_R: the rank loss of the margins; label sets then come from the threshold predictor of
  Sec. 3.3 (:class:`mlnn.thresholds.ThresholdPredictor`) fitted to the SVM margins, with its λ
  chosen on the same validation split.
"""

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from mlnn import metrics
from mlnn.errors import MLNNError
from mlnn.thresholds import DEFAULT_LAMBDAS, ThresholdPredictor, select_lambda
from mlnn.validation import check_X, check_Y

LOSSES = ("squared_hinge", "hinge")

#: The C grid of the paper's BR baselines, 10^-3 … 10^3.
DEFAULT_C_GRID = tuple(10.0 ** k for k in range(-3, 4))


class ConvergenceWarning(UserWarning):
    """Dual coordinate descent stopped at ``max_iter`` before reaching ``tol`` for some labels."""


def _check_positive(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) \
            or not np.isfinite(value) or value <= 0:
        raise MLNNError(f"{name} must be a positive finite number, got {value!r}")
    return float(value)


def _augment(X, bias):
    """[X, bias·1] as CSR (n × (D+1)), or X itself when bias is 0."""
    if bias == 0:
        return X
    column = sp.csr_matrix(np.full((X.shape[0], 1), float(bias)))
    return sp.hstack([X, column], format="csr")


class LinearSVMBR:
    """One L2-regularised linear SVM per label (binary relevance), by dual coordinate descent.

    Parameters
    ----------
    C : float > 0 — the cost of margin violations.
    loss : "squared_hinge" (default; liblinear's default dual L2-loss SVM) or "hinge".
    bias : float ≥ 0 — value of the constant feature appended to every document (0: no
        intercept). Its weight is regularised, as with liblinear's ``-B``.
    tol : float > 0 — stop a label when max PG − min PG ≤ tol over an epoch (liblinear: 0.1).
    max_iter : int — maximal number of epochs (passes over the documents).
    random_state : int or None — seeds the order in which documents are visited.

    Cost: one Python-level step per document per epoch (all labels at once). Epochs grow with
    C; on Reuters-21578 (7,770 × 18,110, 90 labels) C ≤ 1 needs a few to ~20 epochs (seconds),
    while C = 100 or 1000 leaves some labels at ``max_iter`` (a :class:`ConvergenceWarning`,
    as liblinear's "reaching max number of iterations") and takes minutes.

    Attributes after ``fit``
    ------------------------
    coef_ : (D, L) dense weights; intercept_ : (L,) = bias · weight of the constant feature;
    dual_coef_ : (n, L) the dual variables α; n_iter_ : (L,) epochs used per label;
    converged_ : (L,) bool.
    """

    def __init__(self, C=1.0, loss="squared_hinge", bias=1.0, tol=0.1, max_iter=1000,
                 random_state=0):
        self.C = _check_positive(C, "C")
        if loss not in LOSSES:
            raise MLNNError(f"unknown loss {loss!r}; choose one of {list(LOSSES)}")
        self.loss = loss
        if isinstance(bias, bool) or not isinstance(bias, (int, float, np.number)) \
                or not np.isfinite(bias) or bias < 0:
            raise MLNNError(f"bias must be a finite number >= 0, got {bias!r}")
        self.bias = float(bias)
        self.tol = _check_positive(tol, "tol")
        if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) \
                or max_iter < 1:
            raise MLNNError(f"max_iter must be a positive integer, got {max_iter!r}")
        self.max_iter = int(max_iter)
        self.random_state = random_state

    # -- the dual problem's constants ----------------------------------------------------------
    def _diag_and_bound(self):
        """(D_ii, U): 1/(2C) and ∞ for the squared hinge, 0 and C for the hinge."""
        if self.loss == "squared_hinge":
            return 1.0 / (2.0 * self.C), np.inf
        return 0.0, self.C

    def fit(self, X, Y, dual_coef=None):
        """Train the L SVMs.

        X : (n, D) CSR (dense is converted); Y : (n, L) 0/1 dense or CSR.
        dual_coef : optional (n, L) starting α (warm start, e.g. from a fit with another C;
        values are clipped to the new bounds). Returns self.
        """
        X = check_X(X, "X")
        X.sum_duplicates()
        Y = check_Y(Y, "Y")
        if Y.shape[0] != X.shape[0]:
            raise MLNNError(f"Y has {Y.shape[0]} rows but X has {X.shape[0]} documents")
        n, L = Y.shape
        Xa = _augment(X, self.bias)
        signs = 2.0 * Y.toarray() - 1.0                      # y_il ∈ {−1, +1}
        Dii, U = self._diag_and_bound()
        if dual_coef is None:
            alpha = np.zeros((n, L))
        else:
            alpha = np.asarray(dual_coef, dtype=np.float64)
            if alpha.shape != (n, L) or not np.all(np.isfinite(alpha)):
                raise MLNNError(f"dual_coef must be a finite array of shape {(n, L)}")
            alpha = np.clip(alpha, 0.0, U)
        W = np.asarray(Xa.T @ (alpha * signs))               # w = Σ_i y_i α_i x_i, (D+1) × L
        self.n_iter_, self.converged_ = _dual_coordinate_descent(
            Xa, signs, alpha, W, Dii, U, self.tol, self.max_iter,
            np.random.default_rng(self.random_state))
        if not self.converged_.all():
            warnings.warn(f"dual coordinate descent reached max_iter={self.max_iter} for "
                          f"{int((~self.converged_).sum())} of {L} labels (C={self.C})",
                          ConvergenceWarning, stacklevel=2)
        self.dual_coef_ = alpha
        self.coef_ = W[:X.shape[1]] if self.bias else W
        self.intercept_ = self.bias * W[-1] if self.bias else np.zeros(L)
        self.n_features_in_ = X.shape[1]
        return self

    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            raise MLNNError("this LinearSVMBR is not fitted yet; call fit first")

    def decision_function(self, X):
        """The margins wᵀx + b: (n, L) dense. X : (n, D) CSR."""
        self._check_fitted()
        X = check_X(X, "X", n_features=self.n_features_in_)
        return np.asarray(X @ self.coef_) + self.intercept_

    def predict(self, X):
        """Label sets by sign: ŷ_l = 1 iff wᵀx + b > 0; (n, L) int8 CSR."""
        return sp.csr_matrix((self.decision_function(X) > 0).astype(np.int8))

    # -- objectives and optimality, for checking a solution -----------------------------------
    def primal_objective(self, X, Y):
        """Per label ½‖w‖² + C Σ_i loss(y_i wᵀx_i) (w includes the bias weight): (L,)."""
        self._check_fitted()
        X = check_X(X, "X", n_features=self.n_features_in_)
        signs = 2.0 * check_Y(Y, "Y", shape=(X.shape[0], self.coef_.shape[1])).toarray() - 1
        slack = np.maximum(0.0, 1.0 - signs * self.decision_function(X))
        losses = slack ** 2 if self.loss == "squared_hinge" else slack
        return 0.5 * self._squared_norm() + self.C * losses.sum(axis=0)

    def dual_objective(self):
        """Per label −f(α) = Σ_i α_i − ½‖w‖² − ½ D_ii Σ_i α_i²: (L,). Equals the primal at the
        optimum (strong duality)."""
        self._check_fitted()
        Dii, _ = self._diag_and_bound()
        alpha = self.dual_coef_
        return alpha.sum(axis=0) - 0.5 * self._squared_norm() - 0.5 * Dii * (alpha ** 2).sum(0)

    def projected_gradient(self, X, Y):
        """The dual's projected gradient PG (n, L), recomputed from scratch; 0 at the optimum."""
        self._check_fitted()
        X = check_X(X, "X", n_features=self.n_features_in_)
        signs = 2.0 * check_Y(Y, "Y", shape=self.dual_coef_.shape).toarray() - 1
        Dii, U = self._diag_and_bound()
        alpha = self.dual_coef_
        G = signs * self.decision_function(X) - 1.0 + Dii * alpha
        return np.where(alpha <= 0, np.minimum(G, 0.0), np.where(alpha >= U, np.maximum(G, 0.0), G))

    def _squared_norm(self):
        norm = (self.coef_ ** 2).sum(axis=0)
        if self.bias:
            norm = norm + (self.intercept_ / self.bias) ** 2
        return norm


def _dual_coordinate_descent(X, signs, alpha, W, Dii, U, tol, max_iter, rng):
    """Run dual CD for all labels at once, updating ``alpha`` (n × L) and ``W`` (D × L) in place.

    X : CSR (n × D) with unique column indices per row; signs : (n × L) float ±1.
    Returns (n_iter, converged), both of length L.

    Shrinking (Hsieh et al. 2008, Sec. 3.2, as in liblinear): a variable at a bound whose
    gradient points out of the box by more than last epoch's extreme projected gradient
    (α = 0 with G > max PG, or α = U with G < min PG) is unlikely to move. A document is skipped
    in later epochs once this holds for all labels still being optimised. Labels are declared
    converged only after an epoch over *all* documents; if the criterion is met on the shrunk
    set, the next epoch visits every document again with shrinking switched off.
    """
    n, L = signs.shape
    indptr, indices, data = X.indptr, X.indices, X.data
    rows = [(indices[indptr[i]:indptr[i + 1]], data[indptr[i]:indptr[i + 1]]) for i in range(n)]
    Qbar = np.asarray(X.multiply(X).sum(axis=1)).ravel() + Dii   # Q̄_ii = ‖x_i‖² + D_ii
    n_iter = np.full(L, max_iter)
    converged = np.zeros(L, dtype=bool)
    hinge = np.isfinite(U)

    active = np.arange(L)                                     # labels still being optimised
    Wa, Aa, Ya = W, alpha, signs                              # their columns (views while all)
    live = np.arange(n)                                       # documents not shrunk
    PGmax_old = np.full(L, np.inf)
    PGmin_old = np.full(L, -np.inf)
    for epoch in range(1, max_iter + 1):
        La = active.size
        PGmax = np.full(La, -np.inf)
        PGmin = np.full(La, np.inf)
        kept = []
        for i in rng.permutation(live):
            idx, v = rows[i]
            a = Aa[i]
            y = Ya[i]
            G = v @ Wa[idx]
            G *= y
            G += Dii * a - 1.0 if Dii else -1.0
            at_lower = a <= 0
            shrinkable = at_lower & (G > PGmax_old)
            if hinge:
                at_upper = a >= U
                shrinkable |= at_upper & (G < PGmin_old)
                PG = np.where(at_lower, np.minimum(G, 0.0),
                              np.where(at_upper, np.maximum(G, 0.0), G))
            else:
                PG = np.where(at_lower, np.minimum(G, 0.0), G)
            if shrinkable.all():
                continue                                      # PG = 0 for every label: no move
            kept.append(i)
            np.maximum(PGmax, PG, out=PGmax)
            np.minimum(PGmin, PG, out=PGmin)
            if Qbar[i] > 0:
                a_new = np.maximum(a - G / Qbar[i], 0.0)
                if hinge:
                    np.minimum(a_new, U, out=a_new)
            else:  # an empty document without bias (hinge loss only): f is linear in α_i
                a_new = np.where(G < 0, U, np.where(G > 0, 0.0, a))
            delta = (a_new - a) * y
            Aa[i] = a_new
            moved = np.flatnonzero(delta)
            if moved.size == 0 or idx.size == 0:
                continue
            if 4 * moved.size < La:                           # few labels move: touch only them
                Wa[np.ix_(idx, moved)] += np.outer(v, delta[moved])
            else:
                Wa[idx] += v[:, None] * delta
        met = PGmax - PGmin <= tol
        if live.size < n:                                     # the shrunk set met the criterion:
            if met.any():                                     # recheck on all documents
                live = np.arange(n)
                PGmax_old.fill(np.inf)
                PGmin_old.fill(-np.inf)
                continue
            live = np.sort(np.asarray(kept, dtype=np.intp))
        else:
            live = np.sort(np.asarray(kept, dtype=np.intp))
        PGmax_old = np.where(PGmax <= 0, np.inf, PGmax)       # liblinear's reset rule
        PGmin_old = np.where(PGmin >= 0, -np.inf, PGmin)
        if not met.any():
            continue
        finished = active[met]
        n_iter[finished] = epoch
        converged[finished] = True
        if Wa is not W:                                       # write the working copies back
            W[:, active] = Wa
            alpha[:, active] = Aa
        active = active[~met]
        PGmax_old, PGmin_old = PGmax_old[~met], PGmin_old[~met]
        if active.size == 0:
            return n_iter, converged
        Wa, Aa, Ya = W[:, active], alpha[:, active], signs[:, active]
    if Wa is not W:
        W[:, active] = Wa
        alpha[:, active] = Aa
    return n_iter, converged


VARIANTS = ("B", "R")


@dataclass
class BRResult:
    """The outcome of :func:`fit_br`.

    model : the :class:`LinearSVMBR` with the chosen C (refitted on all training documents
        unless ``refit=False``); C : the chosen C; variant : "B" or "R";
    thresholds : the :class:`~mlnn.thresholds.ThresholdPredictor` that turns margins into label
        sets (fixed at 0 for BR_B, learned for BR_R); lam : its λ (None for BR_B);
    validation_scores : one dict per C tried, in grid order, with ``C``, the ten measures of
        the validation split (bipartition measures with sign predictions), ``criterion`` (the
        value C was chosen by) and ``fit_seconds``; lambda_scores : λ → validation criterion of
        the threshold predictor (BR_R only).
    """

    model: "LinearSVMBR"
    C: float
    variant: str
    thresholds: ThresholdPredictor
    lam: object = None
    validation_scores: list = field(default_factory=list)
    lambda_scores: dict = field(default_factory=dict)

    def decision_function(self, X):
        """The SVM margins (n, L) for X (n, D) CSR."""
        return self.model.decision_function(X)

    def predict(self, X, scores=None):
        """Label sets (n, L) 0/1 CSR: sign for BR_B, learned thresholds T(x) for BR_R.

        ``scores`` may pass the margins of X if already computed."""
        if scores is None:
            scores = self.model.decision_function(X)
        return self.thresholds.predict(X, scores)


def _validation_split(n, validation, validation_fraction, random_state):
    if validation is not None:
        try:
            fit_rows, val_rows = (np.asarray(part, dtype=np.intp).ravel() for part in validation)
        except (TypeError, ValueError):
            raise MLNNError("validation must be a pair (fit_indices, validation_indices)") from None
        if fit_rows.size == 0 or val_rows.size == 0:
            raise MLNNError("validation: both index sets must be non-empty")
        if min(fit_rows.min(), val_rows.min()) < 0 or max(fit_rows.max(), val_rows.max()) >= n:
            raise MLNNError(f"validation: indices must lie in [0, {n})")
        if np.intersect1d(fit_rows, val_rows).size:
            raise MLNNError("validation: the fit and validation indices overlap")
        return fit_rows, val_rows
    if isinstance(validation_fraction, bool) or not isinstance(
            validation_fraction, (int, float, np.number)) or not 0 < validation_fraction < 1:
        raise MLNNError(f"validation_fraction must be in (0, 1), got {validation_fraction!r}")
    n_val = int(round(validation_fraction * n))
    if n_val < 1 or n_val >= n:
        raise MLNNError(f"validation_fraction={validation_fraction} leaves no documents for "
                        f"fitting or validation out of {n}")
    order = np.random.default_rng(random_state).permutation(n)
    return np.sort(order[n_val:]), np.sort(order[:n_val])


def fit_br(X_train, Y_train, variant="B", C_grid=DEFAULT_C_GRID, validation_fraction=0.1,
           validation=None, random_state=0, refit=True, lams=DEFAULT_LAMBDAS,
           threshold_features="input", **svm_options):
    """Binary relevance with linear SVMs and C chosen on validation data: BR_B or BR_R.

    Parameters
    ----------
    X_train : (n, D) CSR; Y_train : (n, L) 0/1 dense or CSR.
    variant : "B" — C maximising (miF + maF)/2 of sign predictions on the validation split;
        "R" — C minimising the validation rank loss, then a threshold predictor on the margins
        (λ from ``lams`` chosen on the validation split by mean F1).
    C_grid : the C values tried (default 10⁻³ … 10³). They are fitted in increasing order, each
        warm-started from the previous dual solution (α ≥ 0 stays feasible when C grows).
    validation_fraction : share of the training documents held out (seeded by random_state),
        unless ``validation`` = (fit_indices, validation_indices) gives the split explicitly.
    refit : retrain the chosen C (and for BR_R the threshold predictor, same λ) on all of
        X_train, warm-started from the validation-split solution.
    threshold_features : "input" (T(x), the paper) or "scores" (T(o)) for BR_R.
    svm_options : passed to :class:`LinearSVMBR` (loss, bias, tol, max_iter).

    Returns
    -------
    :class:`BRResult` (the model, the chosen C, the threshold predictor, validation scores).
    The first C of the grid wins ties.
    """
    if variant not in VARIANTS:
        raise MLNNError(f"unknown variant {variant!r}; choose one of {list(VARIANTS)}")
    C_values = sorted(_check_positive(C, "C_grid value") for C in C_grid)
    if not C_values:
        raise MLNNError("C_grid must contain at least one value")
    X = check_X(X_train, "X_train")
    Y = check_Y(Y_train, "Y_train")
    if Y.shape[0] != X.shape[0]:
        raise MLNNError(f"Y_train has {Y.shape[0]} rows but X_train has {X.shape[0]} documents")
    fit_rows, val_rows = _validation_split(X.shape[0], validation, validation_fraction,
                                           random_state)
    X_fit, Y_fit, X_val, Y_val = X[fit_rows], Y[fit_rows], X[val_rows], Y[val_rows]

    table, best, alpha = [], None, None
    for C in C_values:
        started = time.perf_counter()
        model = LinearSVMBR(C=C, random_state=random_state, **svm_options)
        model.fit(X_fit, Y_fit, dual_coef=alpha)
        seconds = time.perf_counter() - started
        alpha = model.dual_coef_
        scores = model.decision_function(X_val)
        result = metrics.evaluate(Y_val, scores, scores > 0)
        value = (result["miF"] + result["maF"]) / 2.0 if variant == "B" else result["rankloss"]
        table.append({"C": C, **result, "criterion": value, "fit_seconds": seconds})
        if best is None or (value > best[0] if variant == "B" else value < best[0]):
            best = (value, C, model)
    _, C, model = best

    lam, lambda_scores = None, {}
    if variant == "B":
        thresholds = ThresholdPredictor(fixed=0.0).fit(None, model.decision_function(X_val), Y_val)
    else:
        thresholds, lam, lambda_scores = select_lambda(
            X_fit, model.decision_function(X_fit), Y_fit,
            X_val, model.decision_function(X_val), Y_val,
            lams=lams, features=threshold_features)
    if refit:
        start = np.zeros((X.shape[0], Y.shape[1]))
        start[fit_rows] = model.dual_coef_
        model = LinearSVMBR(C=C, random_state=random_state, **svm_options).fit(
            X, Y, dual_coef=start)
        if variant == "R":
            thresholds = ThresholdPredictor(lam=lam, features=threshold_features).fit(
                X, model.decision_function(X), Y)
    return BRResult(model=model, C=C, variant=variant, thresholds=thresholds, lam=lam,
                    validation_scores=table, lambda_scores=lambda_scores)
