"""Binary relevance with L2-regularised linear SVMs, trained by a trust-region Newton method.

The paper's BR baselines (Sec. 4, "Algorithms") train one linear SVM per label with Liblinear.
For label l with signs y_il ∈ {−1, +1} (+1 iff document i has label l) and inputs x_i (augmented
by a constant feature ``bias`` as liblinear's ``-B``, so the intercept is regularised like the
weights), the primal problem is the squared hinge (L2-loss; liblinear ``-s 2``)

    min_w  f(w) = ½‖w‖² + C Σ_i max(0, 1 − y_il wᵀx_i)²,

solved by trust-region Newton (Lin, Weng & Keerthi, JMLR 2008; :func:`_tron`) for all labels at
once (W is D × L), the conjugate gradient per group of labels on the rows of their active sets
(:func:`_group_cg`). Model selection over C is :func:`mlnn.paper.selection.fit_br`.
"""
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from mlnn.base.errors import MLNNError
from mlnn.base.validation import (check_fitted, check_nonnegative_float, check_positive_float,
                                  check_positive_int, check_X, check_Y)

#: liblinear's default tolerance of the primal TRON (-s 2).
DEFAULT_TOL = 0.01

#: The C grid of the paper's BR baselines, 10^-3 … 10^3.
DEFAULT_C_VALUES = tuple(10.0 ** k for k in range(-3, 4))


class ConvergenceWarning(UserWarning):
    """TRON stopped at ``max_iter`` before reaching ``tol`` for some labels."""


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
    """The columns of A (or entries of a vector) where ``mask`` is True, C-ordered (unlike
    ``A[:, mask]``)."""
    return np.compress(mask, A, axis=-1)


class LinearSVMBR:
    """One L2-regularised squared-hinge linear SVM per label (binary relevance): C, the cost of
    margin violations; bias, the constant feature (0: none); tol (:func:`_stopping_threshold`);
    max_iter. After ``fit``: coef_ (D, L), intercept_ (L,), dual_coef_ (n, L) = α_i =
    2C max(0, 1 − y_i wᵀx_i), n_iter_ (L,), converged_ (L,) bool.
    """

    def __init__(self, C=1.0, bias=1.0, tol=DEFAULT_TOL, max_iter=1000):
        self.C = check_positive_float(C, "C")
        self.bias = check_nonnegative_float(bias, "bias")
        self.tol = check_positive_float(tol, "tol")
        self.max_iter = check_positive_int(max_iter, "max_iter")

    def fit(self, X, Y, coef=None, intercept=None):
        """Train the L SVMs on X (n, D) and Y (n, L, 0/1), warm-started from ``coef`` (D, L) and
        ``intercept`` (L,) if given; returns self."""
        X = check_X(X, "X")
        X.sum_duplicates()
        Y = check_Y(Y, "Y", n_samples=X.shape[0])
        W = self._initial_weights(coef, intercept, X.shape[1], Y.shape[1])
        W, Q, self.n_iter_, self.converged_ = _tron(augment_bias(X, self.bias),
                                                    2.0 * Y.toarray() - 1.0, W, self.C,
                                                    self.tol, self.max_iter)
        self.dual_coef_ = 2.0 * self.C * np.maximum(1.0 - Q, 0.0)           # α_i = 2C ξ_i
        self.coef_ = W[:X.shape[1]] if self.bias else W
        self.intercept_ = self.bias * W[-1] if self.bias else np.zeros(Y.shape[1])
        self.n_features_in_ = X.shape[1]
        if not self.converged_.all():
            warnings.warn(f"TRON did not reach tol={self.tol} for "
                          f"{int((~self.converged_).sum())} of {Y.shape[1]} labels "
                          f"(C={self.C}, max_iter={self.max_iter})",
                          ConvergenceWarning, stacklevel=2)
        return self

    def _initial_weights(self, coef, intercept, D, L):
        """The starting w, (D[+1]) × L: zeros, or [coef; intercept/bias]."""
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

    def decision_function(self, X):
        """The margins wᵀx + b: (n, L) dense. X : (n, D) CSR."""
        check_fitted(self, "coef_")
        X = check_X(X, "X", n_features=self.n_features_in_)
        return np.asarray(X @ self.coef_) + self.intercept_

    def weights(self):
        """w including the weight of the constant feature: (D+1, L), or coef_ if bias is 0."""
        if self.bias:
            return np.vstack([self.coef_, self.intercept_ / self.bias])
        return self.coef_


# -- the primal of the squared hinge for all labels at once (Lin, Weng & Keerthi 2008) ----------
# X̃ is the augmented n × (D+1) CSR matrix and W the (D+1) × k weights of k labels; S holds their
# signs y ∈ {−1, +1} and Q = S ⊙ X̃W the signed margins y_i z_i (n × k). The active set of a
# label is I = {i : y_i z_i < 1}, where the slack ξ_i = max(0, 1 − y_i z_i) is positive.

def _slack(Q):
    """The slacks ξ = max(0, 1 − y_i z_i) of the signed margins Q: n × k."""
    return np.maximum(1.0 - Q, 0.0)


def _primal_value(W, Q, C, slack=None):
    """f(w) = ½‖w‖² + C Σ_i max(0, 1 − y_i z_i)² for every column: (k,)."""
    slack = _slack(Q) if slack is None else slack
    return 0.5 * _column_dot(W, W) + C * _column_dot(slack, slack)


def _derivatives(X, W, Q, S, C, slack=None):
    """The active sets A = [y_i z_i < 1] (n × k bool; the Hessian's weights are 2C·A) and the
    gradient ∇f = w + 2C X_Iᵀ(z_I − y_I) = W − 2C X̃ᵀ(S ⊙ ξ), ((D+1) × k)."""
    slack = _slack(Q) if slack is None else slack
    return slack > 0, W - 2.0 * C * np.asarray(X.T @ (S * slack))


def _hessian_product(X, V, D, XT=None):
    """H v = v + 2C X_Iᵀ(X_I v) = V + X̃ᵀ(D ⊙ X̃V) for every column (``XT``: X.T, if built)."""
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
    return np.where(sp >= 0, room / np.maximum(sp + root, tiny), (root - sp) / np.maximum(pp, tiny))


def _trust_region_cg(X, G, D, delta, eps_cg):
    """Steihaug's conjugate gradient for every column (liblinear's ``trcg``): approximately
    minimise q(s) = gᵀs + ½sᵀHs subject to ‖s‖ ≤ Δ.

    X : the rows of X̃ outside which D is 0; G : (D+1) × k gradients; D : those rows' Hessian
    weights; delta : (k,) radii. A column stops when ‖r‖ ≤ eps_cg·‖g‖ (r = −g − Hs) or on the
    boundary; ‖s‖², sᵀp and ‖p‖² follow the CG recurrences. Returns (S, R), (D+1) × k.
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
        if leaving.any():          # ‖s + τp‖ > Δ: stop on the boundary, τ from exact dot products
            Sl, Pl, dl = Sw[:, leaving], Pw[:, leaving], dw[leaving]
            step[leaving] = _boundary_step(_column_dot(Sl, Sl), _column_dot(Sl, Pl),
                                           _column_dot(Pl, Pl), dl)
            ss_next[leaving] = dl ** 2
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


#: Trust-region constants of liblinear's tron.cpp: a step is accepted when the actual reduction
#: of f exceeds ETA[0] × the predicted one; ETA[1], ETA[2] and SIGMA set the new radius.
ETA = (1e-4, 0.25, 0.75)
SIGMA = (0.25, 0.5, 4.0)


def _new_radius(delta, step_norm, actual, predicted, gs, f_change):
    """Δ after a trial step s, for every column (liblinear's rule): towards α‖s‖, α the
    minimiser of the quadratic through f(w), gᵀs and f(w + s)."""
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
    """The labels TRON still optimises and, per column, their w, Q, S, A, ∇f, f, Δ and whether
    Δ awaits its first cap."""

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


#: Labels per conjugate-gradient group: enough columns for fast sparse products, few enough that
#: the group's union of active sets stays close to each label's.
GROUP_SIZE = 16


def _label_groups(A, size=GROUP_SIZE):
    """The working labels (columns of their active sets A, n × k bool) in groups of at most
    ``size``, in the order of |I|: a list of index arrays."""
    order = np.argsort(np.count_nonzero(A, axis=0), kind="stable")
    return np.array_split(order, -(-order.size // size))


def _group_cg(X, G, A, C, delta, eps_cg):
    """:func:`_trust_region_cg` for every group of labels (:func:`_label_groups`), each on the
    rows of X̃ in the union of its labels' active sets (outside them D = 0): (S, R)."""
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
    """Trust-region Newton for all labels at once, from W ((D+1) × L, not modified); X : n ×
    (D+1) CSR, S : n × L signs. A CG step inside ‖s‖ ≤ Δ is accepted if f falls by more than
    ETA[0] × the predicted reduction; a label leaves at :func:`_stopping_threshold` (against
    ∇f(0)), when its reductions fall below 1e-12·|f|, or after ``max_iter`` iterations.
    Returns (W, S ⊙ X̃W, n_iter, converged)."""
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
