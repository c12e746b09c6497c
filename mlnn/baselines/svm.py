"""Binary relevance with L2-regularised linear SVMs: a trust-region Newton method in the primal
and dual coordinate descent.

The paper's BR baselines (Sec. 4, "Algorithms") train one linear SVM per label with Liblinear.
For label l with signs y_il ∈ {−1, +1} (+1 iff document i has label l) and inputs x_i (augmented
by a constant feature ``bias`` as liblinear's ``-B``, so the intercept is regularised like the
weights), the primal problems are

    squared hinge (L2-loss, the default; liblinear -s 2 / -s 1):
        min_w  f(w) = ½‖w‖² + C Σ_i max(0, 1 − y_il wᵀx_i)²
    hinge (L1-loss; liblinear -s 3):
        min_w  ½‖w‖² + C Σ_i max(0, 1 − y_il wᵀx_i)

Two solvers, both vectorised across labels (the labels share the documents x_i, so W is D × L):

* ``solver="tron"`` (the default for the squared hinge; liblinear ``-s 2``): trust-region
  Newton on the primal (Lin, Weng & Keerthi, JMLR 2008), :func:`_tron`, with the conjugate
  gradient run per group of labels on the rows of their active sets, :func:`_group_cg`;
* ``solver="dual_cd"`` (the only choice for the hinge; liblinear ``-s 1`` / ``-s 3``): dual
  coordinate descent (Hsieh et al., ICML 2008), :func:`_dual_coordinate_descent`. It is the
  readable solver, but its Python loop over documents makes it slow for large C.

Model selection over C (the paper's BR_B and BR_R) is :func:`mlnn.paper.selection.fit_br`; the
reproduction uses ``solver="tron"`` with ``tol=0.01`` (liblinear's default for ``-s 2``),
warm-started along the ascending C grid. Its time beside liblinear's, and what ``tol=0.01``
means at large C, are measured in the Performance section of ``figures/README.md``
(``python -m mlnn bench --svm``).
"""
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from mlnn.base.errors import MLNNError
from mlnn.base.validation import (check_choice, check_nonnegative_float, check_positive_float,
                                  check_positive_int, check_X, check_Y)

LOSSES = ("squared_hinge", "hinge")
SOLVERS = ("auto", "tron", "dual_cd")

#: The default stopping tolerance of each solver (liblinear's defaults for -s 2 and -s 1).
DEFAULT_TOL = {"tron": 0.01, "dual_cd": 0.1}

#: The C grid of the paper's BR baselines, 10^-3 … 10^3.
DEFAULT_C_VALUES = tuple(10.0 ** k for k in range(-3, 4))


class ConvergenceWarning(UserWarning):
    """A solver stopped at ``max_iter`` (or at the limit of floating-point precision) before
    reaching ``tol`` for some labels."""


def augment_bias(X, bias):
    """[X, bias·1] as CSR (n × (D+1)), or X itself when bias is 0."""
    if bias == 0:
        return X
    column = sp.csr_matrix(np.full((X.shape[0], 1), float(bias)))
    return sp.hstack([X, column], format="csr")


def _column_dot(A, B):
    """Σ_i A_ij B_ij for every column j: (k,)."""
    return np.einsum("ij,ij->j", A, B)


def _columns(A, mask):
    """The columns of A (or entries of a vector) where ``mask`` is True, as a C-ordered copy
    (``A[:, mask]`` would be Fortran-ordered, which slows every later row-wise product)."""
    return np.compress(mask, A, axis=-1)


class LinearSVMBR:
    """One L2-regularised linear SVM per label (binary relevance).

    Parameters
    ----------
    C : float > 0 — the cost of margin violations.
    loss : "squared_hinge" (default) or "hinge".
    bias : float ≥ 0 — value of the constant feature appended to every document (0: no
        intercept). Its weight is regularised, as with liblinear's ``-B``.
    solver : "tron" (trust-region Newton on the primal; squared hinge only), "dual_cd" (dual
        coordinate descent) or "auto" (the default: "tron" for the squared hinge, "dual_cd" for
        the hinge).
    tol : float > 0 or None — "tron": stop a label when ‖∇f(w)‖ ≤ tol·max(min(#pos, #neg), 1)/n
        ·‖∇f(0)‖; "dual_cd": when max PG − min PG ≤ tol over an epoch. None: liblinear's
        defaults, 0.01 and 0.1 (:data:`DEFAULT_TOL`).
    max_iter : int — maximal number of trust-region iterations ("tron") or epochs ("dual_cd").
    random_state : int or None — seeds the order in which "dual_cd" visits documents.

    Cost: "tron" does a few dozen sparse products X̃V, X̃ᵀR, each shared by a group of labels;
    its time next to liblinear's -s 2 is in ``figures/README.md``. "dual_cd" takes one
    Python-level step per document per epoch; epochs grow with C, and C ≥ 10 takes minutes on
    Reuters-21578.

    Attributes after ``fit``
    ------------------------
    coef_ : (D, L) dense weights; intercept_ : (L,) = bias · weight of the constant feature;
    dual_coef_ : (n, L) the dual variables α (for "tron" recovered from the margins);
    n_iter_ : (L,) iterations or epochs used per label; converged_ : (L,) bool.
    """

    def __init__(self, C=1.0, loss="squared_hinge", bias=1.0, tol=None, max_iter=1000,
                 solver="auto", random_state=0):
        self.C = check_positive_float(C, "C")
        self.loss = check_choice(loss, "loss", LOSSES)
        check_choice(solver, "solver", SOLVERS)
        if solver == "auto":
            solver = "tron" if loss == "squared_hinge" else "dual_cd"
        if solver == "tron" and loss == "hinge":
            raise MLNNError("solver 'tron' needs the twice-differentiable squared hinge; "
                            "use solver='dual_cd' for loss='hinge'")
        self.solver = solver
        self.bias = check_nonnegative_float(bias, "bias")
        self.tol = DEFAULT_TOL[solver] if tol is None else check_positive_float(tol, "tol")
        self.max_iter = check_positive_int(max_iter, "max_iter")
        self.random_state = random_state

    # -- the dual problem's constants ----------------------------------------------------------
    def _diag_and_bound(self):
        """(D_ii, U): 1/(2C) and ∞ for the squared hinge, 0 and C for the hinge."""
        if self.loss == "squared_hinge":
            return 1.0 / (2.0 * self.C), np.inf
        return 0.0, self.C

    def fit(self, X, Y, coef=None, intercept=None, dual_coef=None):
        """Train the L SVMs.

        X : (n, D) CSR (dense is converted); Y : (n, L) 0/1 dense or CSR.
        Warm start (e.g. from a fit with another C): ``coef`` (D, L) and ``intercept`` (L,)
        start "tron" (e.g. ``coef=m.coef_, intercept=m.intercept_``); ``dual_coef`` (n, L)
        starts "dual_cd" (values are clipped to the new bounds). Returns self.
        """
        X = check_X(X, "X")
        X.sum_duplicates()
        Y = check_Y(Y, "Y")
        if Y.shape[0] != X.shape[0]:
            raise MLNNError(f"Y has {Y.shape[0]} rows but X has {X.shape[0]} documents")
        Xa = augment_bias(X, self.bias)
        signs = 2.0 * Y.toarray() - 1.0                      # y_il ∈ {−1, +1}
        if self.solver == "tron":
            if dual_coef is not None:
                raise MLNNError("dual_coef starts solver 'dual_cd'; start 'tron' with coef "
                                "and intercept")
            W = self._initial_weights(coef, intercept, X.shape[1], Y.shape[1])
            W, Q, self.n_iter_, self.converged_ = _tron(Xa, signs, W, self.C, self.tol,
                                                        self.max_iter)
            alpha = 2.0 * self.C * np.maximum(1.0 - Q, 0.0)           # α_i = 2C ξ_i
        else:
            if coef is not None or intercept is not None:
                raise MLNNError("coef and intercept start solver 'tron'; start 'dual_cd' "
                                "with dual_coef")
            alpha, W = self._fit_dual(Xa, signs, dual_coef)
        self.dual_coef_ = alpha
        self.coef_ = W[:X.shape[1]] if self.bias else W
        self.intercept_ = self.bias * W[-1] if self.bias else np.zeros(Y.shape[1])
        self.n_features_in_ = X.shape[1]
        if not self.converged_.all():
            warnings.warn(f"solver {self.solver!r} did not reach tol={self.tol} for "
                          f"{int((~self.converged_).sum())} of {Y.shape[1]} labels "
                          f"(C={self.C}, max_iter={self.max_iter})",
                          ConvergenceWarning, stacklevel=2)
        return self

    def _initial_weights(self, coef, intercept, D, L):
        """The starting w of "tron", (D[+1]) × L: zeros, or [coef; intercept/bias]."""
        if coef is None:
            if intercept is not None:
                raise MLNNError("intercept was given without coef")
            return np.zeros((D + (self.bias > 0), L))
        coef = np.asarray(coef, dtype=np.float64)
        if coef.shape != (D, L) or not np.all(np.isfinite(coef)):
            raise MLNNError(f"coef must be a finite array of shape {(D, L)}")
        if not self.bias:
            if intercept is not None and np.any(np.asarray(intercept) != 0):
                raise MLNNError("intercept must be None or 0 when bias is 0")
            return coef.copy()
        intercept = np.zeros(L) if intercept is None else np.asarray(intercept, np.float64)
        if intercept.shape != (L,) or not np.all(np.isfinite(intercept)):
            raise MLNNError(f"intercept must be a finite array of shape {(L,)}")
        return np.vstack([coef, intercept / self.bias])

    def _fit_dual(self, Xa, signs, dual_coef):
        """Dual coordinate descent from ``dual_coef`` (or 0): (α (n × L), W (D+1) × L)."""
        n, L = signs.shape
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
        return alpha, W

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

    def weights(self):
        """w including the weight of the constant feature: (D+1, L), or coef_ if bias is 0."""
        self._check_fitted()
        if self.bias:
            return np.vstack([self.coef_, self.intercept_ / self.bias])
        return self.coef_


# -- the primal of the squared hinge for all labels at once (Lin, Weng & Keerthi 2008) ----------
# X̃ is the augmented n × (D+1) CSR matrix and W the (D+1) × k weights of k labels; S holds their
# signs y ∈ {−1, +1} and Q = S ⊙ X̃W the signed margins y_i z_i (n × k). The active set of a
# label is I = {i : y_i z_i < 1}, where the slack ξ_i = max(0, 1 − y_i z_i) is positive.

def _slack(Q):
    """The slacks ξ = max(0, 1 − y_i z_i) of the signed margins Q: n × k."""
    slack = 1.0 - Q
    np.maximum(slack, 0.0, out=slack)
    return slack


def _primal_value(W, Q, C, slack=None):
    """f(w) = ½‖w‖² + C Σ_i max(0, 1 − y_i z_i)² for every column: (k,). ``slack`` may pass
    ξ = :func:`_slack` (Q) when already computed."""
    slack = _slack(Q) if slack is None else slack
    return 0.5 * _column_dot(W, W) + C * _column_dot(slack, slack)


def _derivatives(X, W, Q, S, C, slack=None):
    """The active sets A = [y_i z_i < 1] (n × k bool; the generalised Hessian's weights are
    D = 2C·A) and the gradient ∇f = w + 2C X_Iᵀ(z_I − y_I) = W − 2C X̃ᵀ(S ⊙ ξ) ((D+1) × k), as
    z_i − y_i = −y_i ξ_i on I. ``slack`` may pass ξ = :func:`_slack` (Q)."""
    slack = _slack(Q) if slack is None else slack
    return slack > 0, W - 2.0 * C * np.asarray(X.T @ (S * slack))


def _hessian_product(X, V, D, XT=None):
    """H v = v + 2C X_Iᵀ(X_I v) = V + X̃ᵀ(D ⊙ X̃V) for every column: (D+1) × k.
    ``XT`` may pass X.T, built once for many products."""
    XV = np.asarray(X @ V)
    XV *= D
    HV = np.asarray((X.T if XT is None else XT) @ XV)
    HV += V
    return HV


def _boundary_step(ss, sp, pp, delta):
    """τ ≥ 0 with ‖s + τp‖ = Δ, from ss = ‖s‖² ≤ Δ², sp = sᵀp and pp = ‖p‖² (k,) each: (k,)."""
    room = np.maximum(delta ** 2 - ss, 0.0)
    root = np.sqrt(sp ** 2 + pp * room)
    # two algebraically equal roots, each free of cancellation on its side of sᵀp = 0
    tiny = np.finfo(float).tiny
    return np.where(sp >= 0, room / np.maximum(sp + root, tiny),
                    (root - sp) / np.maximum(pp, tiny))


def _trust_region_cg(X, G, D, delta, eps_cg):
    """Steihaug's conjugate gradient for every column (liblinear's ``trcg``): approximately
    minimise the model q(s) = gᵀs + ½sᵀHs subject to ‖s‖ ≤ Δ.

    X : the rows of X̃ (CSR) outside which D is 0; G : (D+1) × k gradients; D : those rows' Hessian
    weights (rows × k); delta : (k,) radii.
    A column stops when ‖r‖ ≤ eps_cg·‖g‖ (r = −g − Hs, the model's negative gradient) or when a
    step would leave the region, which then ends on its boundary. ‖s‖², sᵀp and ‖p‖² follow the
    CG recurrences (r_{j+1} is orthogonal to s_{j+1} and to p_j), so that only pᵀHp and ‖r‖²
    are dot products over the features; the boundary step uses exact dot products, as liblinear.
    Stopped columns take zero steps and are dropped from the products once a quarter of the
    working set has stopped. Returns (S, R): the steps and their residuals −g − Hs, (D+1) × k.
    """
    S, R = np.zeros_like(G), -G
    cols, Sw, Rw, Pw, Dw, dw = np.arange(G.shape[1]), S, R, R.copy(), D, delta  # working set
    rr = _column_dot(Rw, Rw)
    tol = eps_cg ** 2 * rr
    ss, sp, pp = np.zeros_like(rr), np.zeros_like(rr), rr.copy()   # ‖s‖², sᵀp, ‖p‖²
    live = rr > tol
    T = np.empty_like(Pw)                            # scratch for τp and τHp
    XT = X.T
    for _ in range(G.shape[0]):
        if not live.any():
            break
        if live.sum() < 0.75 * cols.size:            # compact the working set
            S[:, cols], R[:, cols] = Sw, Rw
            cols, Sw, Rw, Pw, Dw, dw, rr, tol, ss, sp, pp = (
                _columns(A, live) for A in (cols, Sw, Rw, Pw, Dw, dw, rr, tol, ss, sp, pp))
            live, T = live[live], np.empty_like(Pw)
        HP = _hessian_product(X, Pw, Dw, XT)
        step = np.where(live, rr / np.maximum(_column_dot(Pw, HP), np.finfo(float).tiny), 0.0)
        ss_next = ss + step * (2.0 * sp + step * pp)  # ‖s + τp‖²
        leaving = live & (ss_next > dw ** 2)
        if leaving.any():                             # ‖s + τp‖ > Δ: stop on the boundary
            step[leaving], ss_next[leaving] = _boundary_steps(Sw, Pw, dw, leaving)
            live &= ~leaving
        ss = ss_next
        Sw += np.multiply(Pw, step, out=T)           # s ← s + τp, r ← r − τHp
        Rw -= np.multiply(HP, step, out=T)
        rr_next = _column_dot(Rw, Rw)
        beta = np.where(live, rr_next / np.maximum(rr, np.finfo(float).tiny), 0.0)
        sp = beta * (sp + step * pp)                  # s_{j+1}ᵀp_{j+1} = β(sᵀp + τ‖p‖²)
        pp = rr_next + beta ** 2 * pp                 # ‖p_{j+1}‖² = ‖r_{j+1}‖² + β²‖p‖²
        Pw *= beta
        Pw += Rw                                      # p ← r + β p (stopped columns: p = r)
        rr = np.where(live, rr_next, rr)
        live &= rr > tol
    S[:, cols], R[:, cols] = Sw, Rw
    return S, R


def _boundary_steps(S, P, delta, leaving):
    """(τ, Δ²) for the columns ``leaving`` of the steps S and directions P: the step to the
    boundary ‖s + τp‖ = Δ from exact dot products (:func:`_boundary_step`)."""
    Sl, Pl, dl = S[:, leaving], P[:, leaving], delta[leaving]
    tau = _boundary_step(_column_dot(Sl, Sl), _column_dot(Sl, Pl), _column_dot(Pl, Pl), dl)
    return tau, dl ** 2


#: Trust-region constants of liblinear's tron.cpp: a step is accepted when the actual reduction
#: of f exceeds ETA[0] × the predicted one; ETA[1], ETA[2] and SIGMA set the new radius.
ETA = (1e-4, 0.25, 0.75)
SIGMA = (0.25, 0.5, 4.0)


def _new_radius(delta, step_norm, actual, predicted, gs, f_change):
    """Δ after a trial step s (liblinear's rule), for every column: (k,).

    The minimiser of the quadratic through f(w), gᵀs and f(w + s) along s lies at α·s with
    α = −½ gᵀs / (f(w + s) − f(w) − gᵀs) (4 if f does not curve up), α ≥ 1/4; then Δ shrinks
    towards α‖s‖ when the actual reduction is poor and grows when it is good.
    """
    sigma1, sigma2, sigma3 = SIGMA
    curve = f_change - gs
    alpha = np.where(curve <= 0, sigma3,
                     np.maximum(sigma1, -0.5 * gs / np.where(curve <= 0, 1.0, curve)))
    target = alpha * step_norm
    eta0, eta1, eta2 = ETA
    return np.select(
        [actual < eta0 * predicted, actual < eta1 * predicted, actual < eta2 * predicted],
        [np.minimum(target, sigma2 * delta),
         np.maximum(sigma1 * delta, np.minimum(target, sigma2 * delta)),
         np.maximum(sigma1 * delta, np.minimum(target, sigma3 * delta))],
        default=np.maximum(delta, np.minimum(target, sigma3 * delta)))


def _stopping_threshold(gradient_at_zero, S, tol):
    """tol · max(min(#pos, #neg), 1)/n · ‖∇f(0)‖ per label (liblinear's rule): (L,)."""
    n = S.shape[0]
    positives = (S > 0).sum(axis=0)
    balance = np.maximum(np.minimum(positives, n - positives), 1) / n
    return tol * balance * np.linalg.norm(gradient_at_zero, axis=0)


@dataclass
class _Working:
    """The labels TRON still optimises (``labels``, indices into all L) and, column by column,
    their w, signed margins Q, signs S, active sets A, ∇f, f, radius Δ and whether Δ still
    awaits its cap by the first step."""

    labels: np.ndarray
    W: np.ndarray
    Q: np.ndarray
    S: np.ndarray
    A: np.ndarray
    G: np.ndarray
    f: np.ndarray
    delta: np.ndarray
    first: np.ndarray

    def keep(self, mask):
        """The labels where ``mask`` (k,) is True, as compact copies."""
        return _Working(**{name: _columns(value, mask) for name, value in vars(self).items()})


#: Labels per conjugate-gradient group (:func:`_trial`): enough columns for the sparse products to
#: run at the speed of many right-hand sides, few enough that the group's union of active sets
#: stays close to each label's.
GROUP_SIZE = 16


def _label_groups(A, size=GROUP_SIZE):
    """The working labels (the columns of their active sets A, n × k bool) in groups of at most
    ``size``, taken in the order of |I|, so that small active sets go together: a list of index
    arrays."""
    order = np.argsort(np.count_nonzero(A, axis=0), kind="stable")
    return np.array_split(order, -(-order.size // size))


def _group_cg(X, G, A, C, delta, eps_cg):
    """Conjugate gradient (:func:`_trust_region_cg`) for every group of labels
    (:func:`_label_groups`), each on the rows of X̃ in the union of its labels' active sets I
    (outside them D = 2C·A = 0, so the products X̃ᵀ(D ⊙ X̃P) need no other rows): (S, R).

    liblinear restricts each label's Hessian-vector products to its rows X_I; labels taken in
    the order of |I| share most of their rows, and each product still multiplies
    :data:`GROUP_SIZE` columns at once (on Reuters-21578 at C = 10 the union of all 90 labels'
    active sets holds about 65 % of the documents, one label's about 12 %).
    """
    S, R = np.empty_like(G), np.empty_like(G)
    for cols in _label_groups(A):
        Ag = np.take(A, cols, axis=1)
        rows = np.flatnonzero(Ag.any(axis=1))
        D = np.where(Ag[rows], 2.0 * C, 0.0)
        S[:, cols], R[:, cols] = _trust_region_cg(X[rows], np.take(G, cols, axis=1), D,
                                                  delta[cols], eps_cg)
    return S, R


def _trial(X, work, C, eps_cg):
    """One trust-region trial step s for every working label: (s, w + s, Q and ξ at w + s,
    f(w + s), predicted reduction q(0) − q(s), ∇fᵀs)."""
    step, R = _group_cg(X, work.G, work.A, C, work.delta, eps_cg)
    W_new = work.W + step
    Q_new = work.S * np.asarray(X @ step)
    Q_new += work.Q
    gs = _column_dot(work.G, step)
    predicted = -0.5 * (gs - _column_dot(step, R))     # −(gᵀs + ½sᵀHs), as r = −g − Hs
    slack = _slack(Q_new)
    return step, W_new, Q_new, slack, _primal_value(W_new, Q_new, C, slack), predicted, gs


def _tron(X, S, W, C, tol, max_iter, eps_cg=0.1):
    """Trust-region Newton for all labels at once, starting from W ((D+1) × L, not modified).

    X : n × (D+1) CSR (augmented); S : n × L signs ±1. With margins z = X̃w and the active set
    I = {i : y_i z_i < 1}: ∇f(w) = w + 2C X_Iᵀ(z_I − y_I), H v = v + 2C X_Iᵀ(X_I v) (generalised
    Hessian; :func:`_derivatives`, :func:`_hessian_product`). Each iteration minimises
    the model q(s) = ∇fᵀs + ½sᵀHs inside ‖s‖ ≤ Δ approximately by Steihaug's conjugate gradient
    (:func:`_group_cg`), accepts the step if f falls by more than ETA[0] × the predicted
    reduction, and updates Δ by liblinear's ``tron.cpp`` (:func:`_new_radius`; the first step
    caps Δ once, as in liblinear 2.30). After an accepted step the margins are updated,
    Z ← Z + X̃S, rather than recomputed. Every label keeps its own radius and stopping flag.

    A label leaves when ‖∇f(w)‖ ≤ tol · max(min(#pos, #neg), 1)/n · ‖∇f(0)‖
    (:func:`_stopping_threshold`, liblinear's rule; ∇f(0) also for warm starts, so warm and cold
    starts meet the same criterion), when both its predicted and actual reductions fall below
    1e-12·|f| (the limit of floating point; liblinear's rule), or after ``max_iter``
    iterations. liblinear 2.30's diagonal preconditioner is not used (on Reuters-21578 it
    stalled labels with one or two positives at C = 100). With α_i = 2C max(0, 1 − y_i wᵀx_i)
    the duality gap is ½‖∇f(w)‖². Returns (W, Q = S ⊙ X̃W, n_iter, converged).
    """
    W = np.array(W, dtype=np.float64)
    S = S.astype(np.int8)                            # ±1: an eighth of the memory traffic
    Q = S * np.asarray(X @ W)
    A, G = _derivatives(X, W, Q, S, C)
    at_zero = G if not W.any() else -2.0 * C * np.asarray(X.T @ S)   # ∇f(0) = −2C X̃ᵀy
    threshold = _stopping_threshold(at_zero, S, tol)
    converged = np.linalg.norm(G, axis=0) <= threshold
    n_iter = np.zeros(S.shape[1], dtype=int)
    work = _Working(np.arange(S.shape[1]), W, Q, S, A, G, _primal_value(W, Q, C),
                    np.linalg.norm(G, axis=0), np.ones(S.shape[1], dtype=bool)).keep(~converged)
    while work.labels.size:
        step, W_new, Q_new, slack, f_new, predicted, gs = _trial(X, work, C, eps_cg)
        actual = work.f - f_new
        step_norm = np.linalg.norm(step, axis=0)
        radius = np.where(work.first, np.minimum(work.delta, step_norm), work.delta)
        work.delta = _new_radius(radius, step_norm, actual, predicted, gs, -actual)
        work.first[:] = False
        n_iter[work.labels] += 1
        accepted = actual > ETA[0] * predicted
        if accepted.all():
            work.W, work.Q, work.f = W_new, Q_new, f_new
            work.A, work.G = _derivatives(X, W_new, Q_new, work.S, C, slack)
        elif accepted.any():
            work.W = np.where(accepted, W_new, work.W)
            work.Q = np.where(accepted, Q_new, work.Q)
            work.f = np.where(accepted, f_new, work.f)
            W_acc, Q_acc, S_acc, slack_acc = (_columns(M, accepted)
                                              for M in (W_new, Q_new, work.S, slack))
            A_new, G_new = _derivatives(X, W_acc, Q_acc, S_acc, C, slack_acc)
            work.A[:, accepted], work.G[:, accepted] = A_new, G_new
        met = np.linalg.norm(work.G, axis=0) <= threshold[work.labels]
        stalled = (np.abs(actual) <= 1e-12 * np.abs(work.f)) \
            & (np.abs(predicted) <= 1e-12 * np.abs(work.f))
        done = met | stalled | (n_iter[work.labels] >= max_iter)
        if done.any():
            finished = work.labels[done]
            W[:, finished], Q[:, finished] = _columns(work.W, done), _columns(work.Q, done)
            converged[finished] = met[done]
            work = work.keep(~done)
    return W, Q, n_iter, converged


def _dual_cd_epoch(order, rows, Wa, Aa, Ya, Qbar, Dii, U, PGmax_old, PGmin_old):
    """One epoch of dual CD over the documents ``order`` for the working labels, updating their
    columns ``Wa`` (D × La) and ``Aa`` (n × La) in place.

    Returns (PGmax, PGmin, kept): the extreme projected gradients of each label over the epoch
    and the documents not shrunk (a document is shrunk when, for every working label, α_i sits at
    a bound with a gradient pointing out of the box by more than last epoch's extreme PG).
    """
    La = Wa.shape[1]
    hinge = np.isfinite(U)
    PGmax = np.full(La, -np.inf)
    PGmin = np.full(La, np.inf)
    kept = []
    for i in order:
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
            continue                                          # PG = 0 for every label: no move
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
        if 4 * moved.size < La:                               # few labels move: touch only them
            Wa[np.ix_(idx, moved)] += np.outer(v, delta[moved])
        else:
            Wa[idx] += v[:, None] * delta
    return PGmax, PGmin, np.asarray(kept, dtype=np.intp)


def _dual_coordinate_descent(X, signs, alpha, W, Dii, U, tol, max_iter, rng):
    """Run dual CD for all labels at once, updating ``alpha`` (n × L) and ``W`` (D × L) in place.

    The duals of the primal problems (module doc) are min_α ½ αᵀ Q̄ α − eᵀα s.t. 0 ≤ α_i ≤ U,
    Q̄ = Q + diag(D_ii), Q_ij = y_i y_j x_iᵀx_j (squared hinge: U = ∞, D_ii = 1/(2C); hinge:
    U = C, D_ii = 0), with w = Σ_i y_i α_i x_i. Each epoch visits the documents in a random
    order; for document i G = y_i wᵀx_i − 1 + D_ii α_i, the exact minimiser along α_i is
    α_i ← min(max(α_i − G/Q̄_ii, 0), U), then w ← w + (Δα_i) y_i x_i; one visit updates all L
    problems. A label stops when its projected gradients PG (G clipped at the bounds: PG = G if
    0 < α_i < U, min(G, 0) if α_i = 0, max(G, 0) if α_i = U; 0 for every i at the optimum) span
    at most ``tol`` over an epoch that visits every document (liblinear: max PG − min PG ≤ eps).

    X : CSR (n × D) with unique column indices per row; signs : (n × L) float ±1.
    Returns (n_iter, converged), both of length L.

    Shrinking (Hsieh et al. 2008, Sec. 3.2, as in liblinear; :func:`_dual_cd_epoch`): a
    variable at a bound whose gradient points out of the box by more than last epoch's extreme
    projected gradient (α = 0 with G > max PG, or α = U with G < min PG) is unlikely to move. A
    document is skipped in later epochs once this holds for all labels still being optimised.
    Labels converge only after an epoch over *all* documents (then without shrinking).
    """
    n, L = signs.shape
    indptr, indices, data = X.indptr, X.indices, X.data
    rows = [(indices[indptr[i]:indptr[i + 1]], data[indptr[i]:indptr[i + 1]]) for i in range(n)]
    Qbar = np.asarray(X.multiply(X).sum(axis=1)).ravel() + Dii   # Q̄_ii = ‖x_i‖² + D_ii
    n_iter = np.full(L, max_iter)
    converged = np.zeros(L, dtype=bool)
    active = np.arange(L)                                     # labels still being optimised
    Wa, Aa, Ya = W, alpha, signs                              # their columns (views while all)
    live = np.arange(n)                                       # documents not shrunk
    PGmax_old, PGmin_old = np.full(L, np.inf), np.full(L, -np.inf)
    for epoch in range(1, max_iter + 1):
        PGmax, PGmin, kept = _dual_cd_epoch(rng.permutation(live), rows, Wa, Aa, Ya, Qbar, Dii,
                                            U, PGmax_old, PGmin_old)
        met = PGmax - PGmin <= tol
        if live.size < n and met.any():                       # the shrunk set met the criterion:
            live = np.arange(n)                               # recheck on all documents
            PGmax_old.fill(np.inf)
            PGmin_old.fill(-np.inf)
            continue
        live = np.sort(kept)
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
