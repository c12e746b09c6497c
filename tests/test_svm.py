"""Tests of mlnn.baselines.svm: the trust-region Newton solver (derivatives, CG, trust-region rules,
a plain dense reference run), its dual variables (KKT, the duality gap), warm starts, bias
handling, BR_B / BR_R selection, and the side-by-side benchmark of mlnn.tools.svm_bench.

Independent references used here: the primal, its gradient and the dual written out densely from
their definitions; central differences; a dense single-label TRON following liblinear's rules
step by step; L-BFGS on the primal (SciPy); liblinear itself when scikit-learn is installed.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import minimize

from mlnn.evaluation import metrics
from mlnn.evaluation.thresholds import DEFAULT_LAMBDAS

from mlnn.base.errors import MLNNError
from mlnn.base.validation import validation_split
from mlnn.baselines import svm
from mlnn.baselines.svm import ConvergenceWarning, LinearSVMBR
from mlnn.paper.selection import fit_br


def make_problem(seed=0, n=80, D=20, L=5, density=0.3):
    """Sparse documents and labels that depend (noisily) on a few features."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, D, density=density, format="csr", random_state=seed)
    X.data = rng.normal(size=X.data.size)
    V = rng.normal(size=(D, L))
    Y = ((X @ V + 0.5 * rng.normal(size=(n, L))) > 0.3).astype(np.int8)
    return X, Y


def augmented(X, bias):
    """[X, bias·1] dense, or X dense when bias is 0."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    return np.column_stack([X, np.full(X.shape[0], bias)]) if bias else X


def weights(model):
    """w including the bias weight, (D[+1], L), from the public attributes only."""
    if model.bias:
        return np.vstack([model.coef_, model.intercept_ / model.bias])
    return model.coef_


# -- the primal and dual, written out densely from their definitions -------------------------
def signs_and_duals(model, X, Y):
    """(Z = X̃ dense, signs ±1 (n × L), α (n × L), D_ii, U) of a fitted model on its data."""
    Z, S = augmented(X, model.bias), 2.0 * np.asarray(sp.csr_matrix(Y).toarray()) - 1.0
    alpha = model.dual_coef_
    assert alpha.shape == S.shape, "the dual needs the training data"
    return Z, S, alpha, 1.0 / (2.0 * model.C), np.inf


def primal_objective(model, X, Y):
    """½‖w‖² + C Σ_i loss(y_i wᵀz_i) per label (w with the bias weight): (L,)."""
    Z, S = augmented(X, model.bias), 2.0 * np.asarray(sp.csr_matrix(Y).toarray()) - 1.0
    W = weights(model)
    slack = np.maximum(0.0, 1.0 - S * (Z @ W))
    return 0.5 * (W * W).sum(axis=0) + model.C * (slack ** 2).sum(axis=0)


def dual_objective(model, X, Y):
    """Σ_i α_i − ½‖w(α)‖² − ½ D_ii Σ_i α_i² per label, w(α) = Σ_i y_i α_i z_i: (L,)."""
    Z, S, alpha, Dii, _ = signs_and_duals(model, X, Y)
    V = Z.T @ (alpha * S)
    return alpha.sum(axis=0) - 0.5 * (V * V).sum(axis=0) - 0.5 * Dii * (alpha ** 2).sum(axis=0)


def duality_gap(model, X, Y):
    """primal − dual objective per label: ≥ 0, and 0 exactly at the optimum."""
    return primal_objective(model, X, Y) - dual_objective(model, X, Y)


def projected_gradient(model, X, Y):
    """The dual's projected gradient PG (n, L) at α, with w(α) recomputed; 0 at the optimum."""
    Z, S, alpha, Dii, U = signs_and_duals(model, X, Y)
    G = S * (Z @ (Z.T @ (alpha * S))) - 1.0 + Dii * alpha
    return np.where(alpha <= 0, np.minimum(G, 0.0), np.where(alpha >= U, np.maximum(G, 0.0), G))


# -- the squared-hinge primal and dual of one label ------------------------------------------
def dense_primal(Z, y, w, C):
    """½‖w‖² + C Σ_i max(0, 1 − y_i wᵀz_i)² for one label."""
    slack = np.maximum(0.0, 1.0 - y * (Z @ w))
    return 0.5 * w @ w + C * slack @ slack


def dense_gradient(Z, y, w, C):
    """w − 2C Σ_{i: y_i wᵀz_i < 1} y_i (1 − y_i wᵀz_i) z_i for one label."""
    slack = np.maximum(0.0, 1.0 - y * (Z @ w))
    return w - 2.0 * C * Z.T @ (y * slack)


def dense_dual(Z, y, alpha, C):
    """Σ α_i − ½‖Σ_i α_i y_i z_i‖² − Σ α_i²/(4C) for one label (squared hinge)."""
    v = Z.T @ (alpha * y)
    return alpha.sum() - 0.5 * v @ v - alpha @ alpha / (4.0 * C)


@st.composite
def svm_problems(draw, max_n=25, max_D=8, max_L=4):
    """(X CSR, Y 0/1, C, bias): random sparse documents of both signs, with — when drawn — an
    empty document, an empty feature, a label without positives and a label of all positives."""
    n, D, L = draw(st.integers(2, max_n)), draw(st.integers(1, max_D)), draw(st.integers(1, max_L))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    density = draw(st.sampled_from([0.2, 0.5, 1.0]))
    X = np.where(rng.random((n, D)) < density, rng.normal(size=(n, D)), 0.0)
    Y = (rng.random((n, L)) < draw(st.sampled_from([0.1, 0.3, 0.5]))).astype(np.int8)
    if draw(st.booleans()):
        X[rng.integers(n)] = 0.0                                   # an empty document
    if draw(st.booleans()):
        X[:, rng.integers(D)] = 0.0                                # an empty feature
    if draw(st.booleans()):
        Y[:, rng.integers(L)] = draw(st.sampled_from([0, 1]))      # no positives / all positives
    C = draw(st.sampled_from([0.01, 0.3, 1.0, 10.0]))
    bias = draw(st.sampled_from([0.0, 1.0, 2.5]))
    return sp.csr_matrix(X), Y, C, bias


def reference_tron(Z, y, C, tol, max_iter=1000, eps_cg=0.1):
    """liblinear's TRON (tron.cpp, trcg) for one label, step by step with dense arrays.

    Returns (w, number of trust-region iterations, whether ‖∇f‖ met the stopping rule)."""
    eta0, eta1, eta2, sigma1, sigma2, sigma3 = 1e-4, 0.25, 0.75, 0.25, 0.5, 4.0
    n = len(y)
    positives = int((y > 0).sum())
    threshold = tol * max(min(positives, n - positives), 1) / n \
        * np.linalg.norm(dense_gradient(Z, y, np.zeros(Z.shape[1]), C))
    w = np.zeros(Z.shape[1])
    f, g = dense_primal(Z, y, w, C), dense_gradient(Z, y, w, C)
    delta, iterations = np.linalg.norm(g), 0
    while np.linalg.norm(g) > threshold and iterations < max_iter:
        active = y * (Z @ w) < 1
        ZI = Z[active]
        s, r = np.zeros_like(w), -g
        d, rr = r.copy(), r @ r
        for _ in range(len(w)):                      # conjugate gradient in ‖s‖ ≤ Δ
            if np.sqrt(rr) <= eps_cg * np.linalg.norm(g):
                break
            Hd = d + 2.0 * C * ZI.T @ (ZI @ d)
            alpha = rr / (d @ Hd)
            if np.linalg.norm(s + alpha * d) > delta:   # stop on the boundary ‖s + τd‖ = Δ
                sd, ss, dd = s @ d, s @ s, d @ d
                root = np.sqrt(sd ** 2 + dd * (delta ** 2 - ss))
                tau = (delta ** 2 - ss) / (sd + root) if sd >= 0 else (root - sd) / dd
                s, r = s + tau * d, r - tau * Hd
                break
            s, r = s + alpha * d, r - alpha * Hd
            rr_next = r @ r
            d, rr = r + rr_next / rr * d, rr_next
        gs = g @ s
        predicted = -0.5 * (gs - s @ r)
        f_new = dense_primal(Z, y, w + s, C)
        actual = f - f_new
        if iterations == 0:
            delta = min(delta, np.linalg.norm(s))
        curve = f_new - f - gs
        alpha = sigma3 if curve <= 0 else max(sigma1, -0.5 * gs / curve)
        snorm = np.linalg.norm(s)
        if actual < eta0 * predicted:
            delta = min(alpha * snorm, sigma2 * delta)
        elif actual < eta1 * predicted:
            delta = max(sigma1 * delta, min(alpha * snorm, sigma2 * delta))
        elif actual < eta2 * predicted:
            delta = max(sigma1 * delta, min(alpha * snorm, sigma3 * delta))
        else:
            delta = max(delta, min(alpha * snorm, sigma3 * delta))
        iterations += 1
        if actual > eta0 * predicted:
            w, f, g = w + s, f_new, dense_gradient(Z, y, w + s, C)
        if abs(actual) <= 1e-12 * abs(f) and abs(predicted) <= 1e-12 * abs(f):
            break
    return w, iterations, np.linalg.norm(g) <= threshold


# -- derivatives: exact formulas and central differences --------------------------------------
@st.composite
def points(draw):
    """(X̃ CSR augmented, S signs, W weights, C): a problem and a random point w."""
    X, Y, C, bias = draw(svm_problems())
    Xa = sp.csr_matrix(augmented(X, bias))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    W = rng.normal(scale=draw(st.sampled_from([0.1, 1.0])), size=(Xa.shape[1], Y.shape[1]))
    return Xa, 2.0 * Y - 1.0, W, C


@given(points())
def test_gradient_is_the_derivative_of_the_primal(point):
    Xa, S, W, C = point
    Z = Xa.toarray()
    _, G = svm._derivatives(Xa, W, S * (Z @ W), S, C)
    h = 1e-6
    for l in range(W.shape[1]):
        expected = dense_gradient(Z, S[:, l], W[:, l], C)
        np.testing.assert_allclose(G[:, l], expected, rtol=1e-12, atol=1e-12)
        central = np.array([(dense_primal(Z, S[:, l], W[:, l] + h * e, C)
                             - dense_primal(Z, S[:, l], W[:, l] - h * e, C)) / (2 * h)
                            for e in np.eye(W.shape[0])])
        # f is C¹ with a Lipschitz gradient (constant 1 + 2C‖Z‖²): central differences are
        # exact for quadratics and off by O(h·(1 + 2C‖Z‖²)) across a kink of the hinge
        scale = 1.0 + 2.0 * C * np.linalg.norm(Z, 2) ** 2
        np.testing.assert_allclose(central, G[:, l], atol=1e-6 * scale * (1 + abs(G).max()))


@given(points(), st.integers(0, 2**32 - 1))
def test_hessian_product_is_the_derivative_of_the_gradient(point, seed):
    Xa, S, W, C = point
    Z = Xa.toarray()
    V = np.random.default_rng(seed).normal(size=W.shape)
    Q = S * (Z @ W)
    A, _ = svm._derivatives(Xa, W, Q, S, C)
    np.testing.assert_array_equal(A, Q < 1)                        # the active sets I
    HV = svm._hessian_product(Xa, V, 2.0 * C * A)
    h = 1e-6
    for l in range(W.shape[1]):
        active = Q[:, l] < 1
        H = np.eye(W.shape[0]) + 2.0 * C * Z[active].T @ Z[active]   # generalised Hessian
        np.testing.assert_allclose(HV[:, l], H @ V[:, l], rtol=1e-11, atol=1e-11)
        # away from the kinks (no margin crosses 1 between w − hv and w + hv) it is the derivative
        if np.all(np.abs(1.0 - Q[:, l]) > 2 * h * np.abs(Z @ V[:, l]) + 1e-9):
            central = (dense_gradient(Z, S[:, l], W[:, l] + h * V[:, l], C)
                       - dense_gradient(Z, S[:, l], W[:, l] - h * V[:, l], C)) / (2 * h)
            scale = 1.0 + 2.0 * C * np.linalg.norm(Z, 2) ** 2
            np.testing.assert_allclose(central, HV[:, l],
                                       atol=1e-7 * scale * (1 + np.abs(V[:, l]).sum()))


@given(points())
def test_primal_value_and_stopping_threshold_follow_their_definitions(point):
    Xa, S, W, C = point
    Z = Xa.toarray()
    values = svm._primal_value(W, S * (Z @ W), C)
    for l in range(W.shape[1]):
        assert values[l] == pytest.approx(dense_primal(Z, S[:, l], W[:, l], C), rel=1e-12, abs=0)
    n, tol = S.shape[0], 0.01
    threshold = svm._stopping_threshold(-2.0 * C * Z.T @ S, S, tol)
    for l in range(W.shape[1]):
        positives = int((S[:, l] > 0).sum())
        g0 = dense_gradient(Z, S[:, l], np.zeros(W.shape[0]), C)
        expected = tol * max(min(positives, n - positives), 1) / n * np.linalg.norm(g0)
        # ‖∇f(0)‖ may cancel to ~0 (e.g. balanced signs on the bias alone): rounding of 2CX̃ᵀy
        assert threshold[l] == pytest.approx(expected, rel=1e-12, abs=1e-14 * C * abs(Z).sum())


# -- the trust-region subproblem ----------------------------------------------------------------
def cg_problem(seed, C=3.0, n=30, D=12, L=4):
    X, Y = make_problem(seed=seed, n=n, D=D, L=L, density=0.4)
    Xa = sp.csr_matrix(augmented(X, 1.0))
    S = 2.0 * Y - 1.0
    W = np.random.default_rng(seed).normal(scale=0.3, size=(Xa.shape[1], L))
    A, G = svm._derivatives(Xa, W, S * (Xa @ W), S, C)
    D_ = 2.0 * C * A                                               # the Hessian's weights
    H = [np.eye(Xa.shape[1]) + Xa.toarray().T @ (D_[:, [l]] * Xa.toarray()) for l in range(L)]
    return Xa, D_, G, H


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cg_inside_a_large_region_solves_the_newton_system(seed):
    Xa, D_, G, H = cg_problem(seed)
    eps_cg = 1e-3
    S, R = svm._trust_region_cg(Xa, G, D_, np.full(G.shape[1], 1e10), eps_cg)
    for l in range(G.shape[1]):
        np.testing.assert_allclose(R[:, l], -G[:, l] - H[l] @ S[:, l], atol=1e-10)
        assert np.linalg.norm(R[:, l]) <= eps_cg * np.linalg.norm(G[:, l])
        newton = np.linalg.solve(H[l], -G[:, l])
        # ‖s − s_N‖ ≤ ‖H⁻¹‖‖r‖ ≤ ‖r‖ since H ⪰ I
        assert np.linalg.norm(S[:, l] - newton) <= np.linalg.norm(R[:, l]) * (1 + 1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cg_stops_on_the_boundary_of_a_small_region_with_a_decrease(seed):
    Xa, D_, G, H = cg_problem(seed)
    newton_norms = np.array([np.linalg.norm(np.linalg.solve(H[l], -G[:, l]))
                             for l in range(G.shape[1])])
    delta = newton_norms * np.array([0.05, 0.3, 0.9, 2.0])   # the last column stays inside
    S, R = svm._trust_region_cg(Xa, G, D_, delta, 1e-8)
    norms = np.linalg.norm(S, axis=0)
    np.testing.assert_allclose(norms[:3], delta[:3], rtol=1e-10)
    assert norms[3] < delta[3]
    for l in range(G.shape[1]):
        model = G[:, l] @ S[:, l] + 0.5 * S[:, l] @ H[l] @ S[:, l]
        assert model < 0
        np.testing.assert_allclose(R[:, l], -G[:, l] - H[l] @ S[:, l], atol=1e-10)


def test_cg_columns_are_independent():
    Xa, D_, G, _ = cg_problem(3, L=5)
    delta = np.array([0.01, 0.5, 1e9, 0.1, 1e9])
    S, R = svm._trust_region_cg(Xa, G, D_, delta, 0.1)
    for l in range(G.shape[1]):
        s, r = svm._trust_region_cg(Xa, G[:, [l]], D_[:, [l]], delta[[l]], 0.1)
        np.testing.assert_allclose(S[:, [l]], s, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(R[:, [l]], r, rtol=1e-12, atol=1e-14)


def test_boundary_step_reaches_the_radius():
    rng = np.random.default_rng(0)
    s, p = rng.normal(size=(5, 6)), rng.normal(size=(5, 6))
    s[:, 3] = 0.0                                               # a step from the centre
    p[:, 4] = -s[:, 4]                                          # sᵀp < 0
    delta = np.linalg.norm(s, axis=0) + rng.uniform(0.1, 2.0, size=6)
    tau = svm._boundary_step((s * s).sum(0), (s * p).sum(0), (p * p).sum(0), delta)
    assert np.all(tau > 0)
    np.testing.assert_allclose(np.linalg.norm(s + tau * p, axis=0), delta, rtol=1e-12)


def test_boundary_step_avoids_cancellation():
    # s almost on the boundary and p along s: τ ≈ (Δ² − ‖s‖²)/(2sᵀp) is tiny, and the textbook
    # root (√(sᵀp² + ‖p‖²(Δ² − ‖s‖²)) − sᵀp)/‖p‖² would lose about 12 of its 16 digits
    from decimal import Decimal, getcontext

    getcontext().prec = 60
    ss, sp, pp, delta = 1.0 - 2.0 ** -40, 2.5, 7.0, 1.0            # Δ² − ‖s‖² = 2⁻⁴⁰ exactly
    tau = svm._boundary_step(np.array([ss]), np.array([sp]), np.array([pp]), np.array([delta]))
    room = Decimal(delta) ** 2 - Decimal(ss)
    exact = (-Decimal(sp) + (Decimal(sp) ** 2 + Decimal(pp) * room).sqrt()) / Decimal(pp)
    assert tau[0] == pytest.approx(float(exact), rel=1e-12, abs=0)


def test_new_radius_follows_liblinear_rules():
    # trial steps with gᵀs = −4 and predicted reduction 3; actual reductions on both sides of
    # each threshold of ρ = actual/predicted (1e-4, 0.25, 0.75), with Δ and ‖s‖ chosen so that
    # the two neighbouring rules give different radii. f(w+s) − f(w) = −actual, so the
    # interpolation factor is α = max(1/4, −½gᵀs/(f(w+s) − f(w) − gᵀs)) = max(1/4, 2/(4 − actual)),
    # or 4 when 4 − actual ≤ 0; the rules then use t = α‖s‖ and σ = (1/4, 1/2, 4).
    actual = np.array([0.0002, 0.0004, 0.7, 0.8, 2.2, 2.3, 5.0])
    delta = np.array([4.0, 4.0, 1.0, 1.0, 4.0, 4.0, 1.0])
    step_norm = np.array([0.5, 0.5, 2.0, 2.0, 2.0, 2.0, 2.0])
    t = step_norm * np.where(4 - actual <= 0, 4.0, np.maximum(0.25, 2 / (4 - actual)))
    expected = [
        min(t[0], 0.5 * 4),                   # ρ < 1e-4: min(t, σ2Δ) = t ≈ 0.25
        max(0.25 * 4, min(t[1], 0.5 * 4)),    # ρ < 0.25: max(σ1Δ, min(t, σ2Δ)) = 1
        max(0.25 * 1, min(t[2], 0.5 * 1)),    # ρ < 0.25: = σ2Δ = 0.5
        max(0.25 * 1, min(t[3], 4 * 1)),      # ρ < 0.75: max(σ1Δ, min(t, σ3Δ)) = t = 1.25
        max(0.25 * 4, min(t[4], 4 * 4)),      # ρ < 0.75: = t ≈ 2.22
        max(4, min(t[5], 4 * 4)),             # ρ ≥ 0.75: max(Δ, min(t, σ3Δ)) = Δ = 4
        max(1, min(t[6], 4 * 1)),             # f falls faster than linear: α = 4, = σ3Δ = 4
    ]
    np.testing.assert_allclose(expected, [0.2500125, 1, 0.5, 1.25, 2 / 0.9, 4, 4], rtol=1e-6)
    np.testing.assert_allclose(
        svm._new_radius(delta, step_norm, actual, np.full(7, 3.0), np.full(7, -4.0), -actual),
        expected, rtol=1e-14)


def test_tron_stops_at_the_limit_of_floating_point_precision():
    X, Y = make_problem(seed=14, n=40, D=10, L=3)
    with pytest.warns(ConvergenceWarning, match="did not reach"):
        model = LinearSVMBR(C=1.0, tol=1e-15, max_iter=500).fit(X, Y)
    assert not model.converged_.any() and model.n_iter_.max() < 100
    # it stops once the reductions fall to 1e-12·f; the predicted one is ≥ ‖∇f‖²/(2λ_max(H))
    # (up to the CG tolerance) and λ_max(H) ≤ 1 + 2C‖X̃‖², so ‖∇f‖ is at most about
    # √(2·1e-12·f·λ_max)
    lam_max = 1 + 2 * 1.0 * np.linalg.norm(augmented(X, 1.0), 2) ** 2
    bound = np.sqrt(2e-12 * primal_objective(model, X, Y) * lam_max)
    assert np.all(gradient_norms(model, X, Y) <= 2 * bound)


# -- TRON as a whole ------------------------------------------------------------------------------
@pytest.mark.parametrize("seed, C, bias, max_iter", [
    (0, 0.1, 1.0, 1000), (1, 1.0, 1.0, 1000), (2, 10.0, 0.0, 1000), (4, 1.0, 1.0, 1000),
    (3, 100.0, 2.0, 1), (3, 100.0, 2.0, 2), (3, 100.0, 2.0, 6)])
def test_tron_takes_the_same_steps_as_a_dense_single_label_reference(seed, C, bias, max_iter):
    # at C = 100 rounding differences between the sparse and dense products grow by ~10× per
    # iteration (H is ill-conditioned), so the runs are compared over their first iterations
    X, Y = make_problem(seed=seed, n=60, D=15, L=5, density=0.3)
    Y[:, 4] = 0 if seed != 4 else 1                             # no positives / all positives
    Z = augmented(X, bias)
    S = 2.0 * Y - 1.0
    W, _, n_iter, converged = svm._tron(sp.csr_matrix(Z), S, np.zeros((Z.shape[1], 5)), C,
                                        1e-4, max_iter)
    for l in range(5):
        w, iterations, met = reference_tron(Z, S[:, l], C, 1e-4, max_iter=max_iter)
        assert n_iter[l] == iterations and converged[l] == met
        np.testing.assert_allclose(W[:, l], w, rtol=1e-7, atol=1e-10 * np.abs(w).max())


def test_tron_with_several_label_groups_takes_the_reference_steps():
    # more labels than one conjugate-gradient group holds, with active sets of very different
    # sizes (rare and frequent labels, one without positives): each group's CG runs on the union
    # of its labels' active rows, which must not change any label's steps
    L = 2 * svm.GROUP_SIZE + 3
    X, _ = make_problem(seed=21, n=70, D=12, L=1, density=0.35)
    rng = np.random.default_rng(21)
    Y = (rng.random((70, L)) < np.linspace(0.0, 0.6, L)).astype(np.int8)
    Z = augmented(X, 1.0)
    S = 2.0 * Y - 1.0
    W, Q, n_iter, converged = svm._tron(sp.csr_matrix(Z), S, np.zeros((Z.shape[1], L)), 2.0,
                                        1e-3, 1000)
    assert len(svm._label_groups(np.ones((70, L)))) == 3
    np.testing.assert_allclose(Q, S * (Z @ W), rtol=1e-9, atol=1e-9)
    for l in range(L):
        w, iterations, met = reference_tron(Z, S[:, l], 2.0, 1e-3)
        assert n_iter[l] == iterations and converged[l] == met
        np.testing.assert_allclose(W[:, l], w, rtol=1e-7, atol=1e-9 * max(np.abs(w).max(), 1))


def test_label_groups_partition_the_labels_by_active_set_size():
    D = np.zeros((10, 40))
    counts = np.random.default_rng(0).permutation(40) % 11
    for l, count in enumerate(counts):
        D[:count, l] = 2.0
    groups = svm._label_groups(D, size=16)
    assert [len(g) for g in groups] == [14, 13, 13]
    np.testing.assert_array_equal(np.sort(np.concatenate(groups)), np.arange(40))
    sizes = [counts[g] for g in groups]
    assert all(a.max() <= b.min() for a, b in zip(sizes, sizes[1:]))


def test_tron_warm_start_meets_the_cold_stopping_rule_without_iterating():
    # the stopping rule compares ‖∇f(w)‖ with ‖∇f(0)‖ even from a warm start, so a cold
    # solution restarted with the same tol is already finished; a rule relative to the
    # starting gradient would iterate on
    X, Y = make_problem(seed=17, n=90, L=4)
    cold = LinearSVMBR(C=5.0, tol=0.05).fit(X, Y)
    assert np.all(cold.n_iter_ > 0)
    again = LinearSVMBR(C=5.0, tol=0.05).fit(X, Y, coef=cold.coef_, intercept=cold.intercept_)
    np.testing.assert_array_equal(again.n_iter_, 0)
    assert again.converged_.all()
    # and a warm start from another C is held to the same threshold as a cold start
    warm = LinearSVMBR(C=50.0, tol=0.05).fit(X, Y, coef=cold.coef_, intercept=cold.intercept_)
    Z, S = augmented(X, 1.0), 2.0 * Y - 1.0
    for l in range(4):
        positives = int(Y[:, l].sum())
        g0 = np.linalg.norm(dense_gradient(Z, S[:, l], np.zeros(Z.shape[1]), 50.0))
        threshold = 0.05 * max(min(positives, 90 - positives), 1) / 90 * g0
        assert gradient_norms(warm, X, Y)[l] <= threshold * (1 + 1e-9)


def fit_quietly(model, *args, **kwargs):
    """fit, with the ConvergenceWarning of labels that stop at floating-point precision
    silenced (their gradients are checked directly)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(*args, **kwargs)


def gradient_norms(model, X, Y):
    """‖∇f(w_l)‖ per label, from the dense definition."""
    Z, S = augmented(X, model.bias), 2.0 * np.asarray(Y) - 1.0
    return np.array([np.linalg.norm(dense_gradient(Z, S[:, l], weights(model)[:, l], model.C))
                     for l in range(S.shape[1])])


@given(svm_problems())
def test_tron_meets_the_stopping_rule_and_its_dual_gap_is_half_the_squared_gradient(problem):
    X, Y, C, bias = problem
    model = LinearSVMBR(C=C, bias=bias, tol=1e-3).fit(X, Y)
    assert model.converged_.all()
    Z, S, n = augmented(X, bias), 2.0 * Y - 1.0, X.shape[0]
    for l in range(Y.shape[1]):
        w, y = weights(model)[:, l], S[:, l]
        positives = int(Y[:, l].sum())
        g0 = np.linalg.norm(dense_gradient(Z, y, np.zeros_like(w), C))
        g = dense_gradient(Z, y, w, C)
        assert np.linalg.norm(g) <= 1e-3 * max(min(positives, n - positives), 1) / n * g0 \
            * (1 + 1e-9) + 1e-13
        # α = 2C ξ(w): w(α) = w − ∇f(w), and the duality gap is exactly ½‖∇f(w)‖²
        alpha = model.dual_coef_[:, l]
        np.testing.assert_allclose(alpha, 2 * C * np.maximum(0, 1 - y * (Z @ w)), atol=1e-12)
        primal, dual = dense_primal(Z, y, w, C), dense_dual(Z, y, alpha, C)
        assert primal - dual == pytest.approx(0.5 * g @ g, rel=1e-6, abs=1e-10 * (1 + primal))
    np.testing.assert_allclose(duality_gap(model, X, Y), 0.5 * gradient_norms(model, X, Y) ** 2,
                               rtol=1e-6, atol=1e-10 * (1 + primal_objective(model, X, Y).max()))


@pytest.mark.parametrize("bias", [1.0, 0.0])
def test_matches_a_generic_solver_of_the_primal(bias):
    # squared hinge is differentiable: L-BFGS on the primal is an independent oracle
    X, Y = make_problem(seed=2, n=50, D=8, L=3)
    C = 0.7
    model = fit_quietly(LinearSVMBR(C=C, bias=bias, tol=1e-10, max_iter=20000),
                        X, Y)
    Z = augmented(X, bias)
    for l in range(Y.shape[1]):
        y = 2.0 * Y[:, l] - 1

        def objective(w):
            return dense_primal(Z, y, w, C), dense_gradient(Z, y, w, C)

        reference = minimize(objective, np.zeros(Z.shape[1]), jac=True, method="L-BFGS-B",
                             options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000}).x
        np.testing.assert_allclose(weights(model)[:, l], reference, atol=1e-5)


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_matches_liblinear(C):
    sklearn_svm = pytest.importorskip("sklearn.svm")
    X, Y = make_problem(seed=9, n=120, D=25, L=4)
    model = fit_quietly(LinearSVMBR(C=C, tol=1e-8, max_iter=5000), X, Y)
    for l in range(Y.shape[1]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reference = sklearn_svm.LinearSVC(C=C, dual=False, tol=1e-10, max_iter=100000).fit(
                X, Y[:, l])
        w = np.append(reference.coef_.ravel(), reference.intercept_)
        Z, y = augmented(X, 1.0), 2.0 * Y[:, l] - 1
        bound = np.linalg.norm(dense_gradient(Z, y, w, C)) \
            + np.linalg.norm(dense_gradient(Z, y, weights(model)[:, l], C))
        assert np.linalg.norm(weights(model)[:, l] - w) <= bound * 1.001 + 1e-12


def test_labels_are_independent_problems():
    X, Y = make_problem(seed=3)
    together = fit_quietly(LinearSVMBR(C=1.0, tol=1e-8, max_iter=20000), X, Y)
    for l in range(Y.shape[1]):
        alone = fit_quietly(LinearSVMBR(C=1.0, tol=1e-8, max_iter=20000),
                            X, Y[:, [l]])
        np.testing.assert_allclose(alone.coef_[:, 0], together.coef_[:, l], atol=1e-6)
        assert alone.intercept_[0] == pytest.approx(together.intercept_[l], abs=1e-6)
        assert alone.n_iter_[0] == together.n_iter_[l]


@pytest.mark.parametrize("C_start", [0.01, 30.0])
def test_tron_warm_start_reaches_the_same_solution(C_start):
    X, Y = make_problem(seed=4)
    cold = LinearSVMBR(C=2.0, tol=1e-6).fit(X, Y)
    start = LinearSVMBR(C=C_start, tol=1e-6).fit(X, Y)
    warm = LinearSVMBR(C=2.0, tol=1e-6).fit(X, Y, coef=start.coef_, intercept=start.intercept_)
    assert warm.converged_.all()
    bound = gradient_norms(warm, X, Y) + gradient_norms(cold, X, Y)
    assert np.all(np.linalg.norm(weights(warm) - weights(cold), axis=0) <= bound * 1.001)
    # the start is not modified
    np.testing.assert_array_equal(start.coef_, LinearSVMBR(C=C_start, tol=1e-6).fit(X, Y).coef_)


@pytest.mark.parametrize("bias", [0.0, 2.5])
def test_tron_restarted_at_its_solution_takes_no_step(bias):
    X, Y = make_problem(seed=13)
    model = LinearSVMBR(C=3.0, bias=bias, tol=1e-4).fit(X, Y)
    again = LinearSVMBR(C=3.0, bias=bias, tol=1e-4).fit(X, Y, coef=model.coef_,
                                                        intercept=model.intercept_)
    np.testing.assert_array_equal(again.n_iter_, 0)
    np.testing.assert_allclose(again.coef_, model.coef_, rtol=1e-15)
    np.testing.assert_allclose(again.intercept_, model.intercept_, rtol=1e-15)


@pytest.mark.parametrize("bias", [0.5, 1.0, 3.0])
def test_bias_is_a_regularised_constant_feature(bias):
    X, Y = make_problem(seed=10)
    model = fit_quietly(LinearSVMBR(C=0.5, bias=bias, tol=1e-9, max_iter=20000), X, Y)
    explicit = fit_quietly(LinearSVMBR(C=0.5, bias=0.0, tol=1e-9, max_iter=20000),
                           sp.csr_matrix(augmented(X, bias)), Y)
    np.testing.assert_allclose(model.coef_, explicit.coef_[:-1], atol=1e-7)
    np.testing.assert_allclose(model.intercept_, bias * explicit.coef_[-1], atol=1e-7)
    np.testing.assert_array_equal(explicit.intercept_, 0.0)
    np.testing.assert_allclose(model.decision_function(X), X @ model.coef_ + model.intercept_)


def test_tron_dual_variables_satisfy_kkt():
    X, Y = make_problem(n=60)
    model = fit_quietly(LinearSVMBR(C=2.0, tol=1e-8), X, Y)
    g = gradient_norms(model, X, Y)
    # PG_i = y_i w(α)ᵀx_i − 1 + α_i/(2C) with w(α) = w − ∇f: |PG_i| ≤ ‖x_i‖‖∇f‖
    bound = np.linalg.norm(augmented(X, 1.0), axis=1)[:, None] * g[None, :]
    assert np.all(np.abs(projected_gradient(model, X, Y)) <= bound * 1.001 + 1e-12)


def test_weak_duality_before_convergence():
    X, Y = make_problem(seed=1)
    model = LinearSVMBR(C=10.0, tol=1e-12, max_iter=1)
    with pytest.warns(ConvergenceWarning):
        model.fit(X, Y)
    assert not model.converged_.all()
    primal, dual = primal_objective(model, X, Y), dual_objective(model, X, Y)
    assert np.all(primal >= dual - 1e-12)
    assert np.any(primal - dual > 1e-6)


def test_shapes_dtypes_and_input_forms():
    X, Y = make_problem(seed=5, n=40, D=12, L=3)
    model = LinearSVMBR(C=1.0).fit(X, Y)
    assert model.coef_.shape == (12, 3) and model.coef_.dtype == np.float64
    assert model.intercept_.shape == (3,) and model.dual_coef_.shape == (40, 3)
    assert model.n_iter_.shape == (3,) and model.n_iter_.dtype.kind == "i"
    assert model.converged_.dtype == bool and model.n_features_in_ == 12
    scores = model.decision_function(X[:7])
    assert scores.shape == (7, 3) and scores.dtype == np.float64
    # dense X, CSR Y, float32 X and an unsorted CSR all give the same model
    for X_form, Y_form in ((X.toarray(), Y), (X, sp.csr_matrix(Y)), (X.astype(np.float32), Y)):
        other = LinearSVMBR(C=1.0).fit(X_form, Y_form)
        np.testing.assert_allclose(other.coef_, model.coef_, rtol=1e-5, atol=1e-6)
    X_copy, Y_copy = X.copy(), Y.copy()
    LinearSVMBR(C=1.0).fit(X, Y, coef=model.coef_, intercept=model.intercept_)
    assert (X != X_copy).nnz == 0 and np.array_equal(Y, Y_copy)


def test_decision_function():
    X, Y = make_problem(seed=5)
    model = LinearSVMBR(C=1.0).fit(X, sp.csr_matrix(Y))
    scores = model.decision_function(X)
    np.testing.assert_allclose(scores, X.toarray() @ model.coef_ + model.intercept_)
    np.testing.assert_allclose(model.decision_function(X.toarray()), scores)
    # the training labels are learnable: most are recovered by the signs of the margins
    assert metrics.bipartition_measures(Y, scores > 0)["miF"] > 0.8


def test_a_label_without_positives_gets_negative_margins():
    X, Y = make_problem(seed=6)
    Y[:, 0] = 0
    Y[:, 1] = 1
    model = LinearSVMBR(C=1.0).fit(X, Y)
    assert np.all(model.decision_function(X)[:, 0] < 0)
    assert np.all(model.decision_function(X)[:, 1] > 0)


@pytest.mark.parametrize("make, message", [
    (lambda: LinearSVMBR(C=0), "C"),
    (lambda: LinearSVMBR(C=float("inf")), "C"),
    (lambda: LinearSVMBR(bias=-1), "bias"),
    (lambda: LinearSVMBR(max_iter=0), "max_iter"),
    (lambda: LinearSVMBR(tol=0), "tol"),
])
def test_bad_options_raise(make, message):
    with pytest.raises(MLNNError, match=message):
        make()


def test_tolerance_default():
    assert LinearSVMBR().tol == 0.01
    assert LinearSVMBR(tol=0.5).tol == 0.5


def test_bad_data_raises():
    X, Y = make_problem()
    with pytest.raises(MLNNError, match="rows"):
        LinearSVMBR().fit(X[:10], Y)
    with pytest.raises(MLNNError, match="0/1"):
        LinearSVMBR().fit(X, 2 * Y)
    bad = X.copy()
    bad.data[0] = np.nan
    with pytest.raises(MLNNError, match="NaN"):
        LinearSVMBR().fit(bad, Y)
    with pytest.raises(MLNNError, match="not fitted"):
        LinearSVMBR().decision_function(X)
    with pytest.raises(MLNNError, match="coef must be"):
        LinearSVMBR().fit(X, Y, coef=np.zeros((5, 20)))
    with pytest.raises(MLNNError, match="coef must be"):
        LinearSVMBR().fit(X, Y, coef=np.full((20, 5), np.inf))
    with pytest.raises(MLNNError, match="intercept must be"):
        LinearSVMBR().fit(X, Y, coef=np.zeros((20, 5)), intercept=np.zeros(4))
    with pytest.raises(MLNNError, match="intercept must be None or 0"):
        LinearSVMBR(bias=0).fit(X, Y, coef=np.zeros((20, 5)), intercept=np.ones(5))
    with pytest.raises(MLNNError, match="without coef"):
        LinearSVMBR().fit(X, Y, intercept=np.zeros(5))
    model = LinearSVMBR().fit(X, Y)
    with pytest.raises(MLNNError, match="features"):
        model.decision_function(X[:, :5])
    with pytest.raises(MLNNError, match="variant"):
        fit_br(X, Y, variant="C")
    with pytest.raises(MLNNError, match="validation_fraction"):
        fit_br(X, Y, validation_fraction=1.5)
    with pytest.raises(MLNNError, match="overlap"):
        fit_br(X, Y, validation=(np.arange(50), np.arange(40, 80)))


# -- model selection ------------------------------------------------------------------------------
def test_fit_br_selects_the_best_c_on_the_validation_split():
    X, Y = make_problem(seed=7, n=200, D=30, L=6)
    grid = (0.01, 0.1, 1.0, 10.0)
    result = fit_br(X, Y, variant="B", C_values=grid, validation_fraction=0.25, random_state=3)
    table = result.validation_scores
    assert [row["C"] for row in table] == list(grid)
    values = [row["criterion"] for row in table]
    assert result.C == grid[int(np.argmax(values))]
    assert result.model.C == result.C
    assert result.model.dual_coef_.shape == (200, 6)          # refitted on all documents
    np.testing.assert_array_equal(result.predict(X).toarray(),
                                  result.model.decision_function(X) > 0)
    # the split is the project's seeded validation split, the first C is fitted from w = 0, and
    # its row holds that model's measures and selection score (mean F1, macro over the labels
    # with a validation positive) on those rows
    fit_rows, val_rows = validation_split(200, 0.25, 3)
    model = LinearSVMBR(C=grid[0]).fit(X[fit_rows], Y[fit_rows])
    scores = model.decision_function(X[val_rows])
    assert table[0]["miF"] == pytest.approx(
        metrics.evaluate(Y[val_rows], scores, scores > 0)["miF"])
    assert values[0] == pytest.approx(metrics.selection_score(Y[val_rows], scores > 0))
    again = fit_br(X, Y, variant="B", C_values=grid, validation_fraction=0.25, random_state=3)
    assert [row["miF"] for row in again.validation_scores] == [row["miF"] for row in table]


def test_fit_br_warm_starts_reach_the_cold_solutions():
    X, Y = make_problem(seed=11, n=120, D=20, L=4)
    fit_rows, val_rows = np.arange(90), np.arange(90, 120)
    result = fit_br(X, Y, variant="B", C_values=(0.1, 3.0), validation=(fit_rows, val_rows),
                    tol=1e-7, max_iter=20000)
    cold = fit_quietly(LinearSVMBR(C=result.C, tol=1e-7, max_iter=20000), X, Y)
    np.testing.assert_allclose(result.model.coef_, cold.coef_, atol=1e-5)
    np.testing.assert_allclose(result.model.intercept_, cold.intercept_, atol=1e-5)


def test_fit_br_variant_r_uses_rank_loss_and_learned_thresholds():
    X, Y = make_problem(seed=8, n=200, D=30, L=6)
    fit_rows, val_rows = np.arange(150), np.arange(150, 200)
    grid = (0.01, 1.0, 100.0)
    result = fit_br(X, Y, variant="R", C_values=grid, validation=(fit_rows, val_rows),
                    refit=False)
    rank_losses = [row["rankloss"] for row in result.validation_scores]
    assert result.C == grid[int(np.argmin(rank_losses))]
    # the reported rank loss is that of the chosen model on the validation documents
    scores = result.model.decision_function(X[val_rows])
    assert metrics.rank_loss(Y[val_rows], scores) == pytest.approx(min(rank_losses))
    assert result.lam in DEFAULT_LAMBDAS and set(result.lambda_scores) == set(DEFAULT_LAMBDAS)
    T = result.thresholds.predict_threshold(X[val_rows], scores)
    np.testing.assert_array_equal(result.predict(X[val_rows]).toarray(), scores > T[:, None])


# -- the benchmark ----------------------------------------------------------------------------
def test_benchmark_reports_every_solver_and_c_with_the_objective_reached(monkeypatch):
    from mlnn.tools import svm_bench

    X, Y = make_problem(seed=12, n=60, D=10, L=3)
    Y[:, 2] = 0                                                 # liblinear cannot train this
    solvers = ("tron", "tron-cold") + (
        ("liblinear-primal", "liblinear-dual") if svm_bench.liblinear_available() else ())
    lines = []
    result = svm_bench.benchmark_svm(X, Y, C_values=(1.0, 0.1), tol=1e-6, dual_tol=1e-6,
                                     repeats=2, solvers=solvers, log=lines.append)
    assert [(row["solver"], row["C"]) for row in result["rows"]] == \
        [(s, C) for s in solvers for C in (0.1, 1.0)]
    assert len(lines) == 2 * 2 * len(solvers)
    assert result["skipped"] == [2] and result["compared_labels"] == 2
    Z, S = augmented(X, 1.0), 2.0 * Y - 1.0
    for row in result["rows"]:
        assert len(row["all_seconds"]) == 2 and row["seconds"] == np.median(row["all_seconds"])
        C = row["C"]
        optimum = fit_quietly(LinearSVMBR(C=C, tol=1e-9), X, Y[:, :2])
        best = sum(dense_primal(Z, S[:, l], weights(optimum)[:, l], C) for l in range(2))
        assert row["objective"] == pytest.approx(best, rel=1e-4)
    if svm_bench.liblinear_available():
        assert set(result["ratios"]) == set(result["cold_ratios"]) == {0.1, 1.0}
        seconds = {(row["solver"], row["C"]): np.array(row["all_seconds"])
                   for row in result["rows"]}
        for key, solver in (("ratios", "tron"), ("cold_ratios", "tron-cold")):
            for C in (0.1, 1.0):            # the median of the per-repeat ratios
                assert result[key][C] == pytest.approx(np.median(
                    seconds[solver, C] / seconds["liblinear-primal", C]), rel=1e-12)
    report = svm_bench.format_svm_report(result)
    assert "| 0.1 |" in report and "tron s" in report
    monkeypatch.setattr(svm_bench, "liblinear_available", lambda: False)
    result = svm_bench.benchmark_svm(X, Y, C_values=(1.0,), repeats=1)
    assert {row["solver"] for row in result["rows"]} == {"tron", "tron-cold"}
    assert result["ratios"] == result["cold_ratios"] == {}
    assert "not installed" in svm_bench.format_svm_report(result)


@pytest.mark.parametrize("options, message", [
    ({"C_values": ()}, "C_values"), ({"C_values": (1.0, -1.0)}, "C_values"), ({"tol": 0}, "tol"),
    ({"repeats": 0}, "repeats"), ({"solvers": ("svm-light",)}, "solver"),
    ({"solvers": ()}, "solver"), ({"bias": 0.0}, "bias"),
])
def test_benchmark_bad_options_raise(options, message):
    from mlnn.tools.svm_bench import benchmark_svm

    X, Y = make_problem(n=20, D=5, L=2)
    with pytest.raises(MLNNError, match=message):
        benchmark_svm(X, Y, **options)


# -- real data ----------------------------------------------------------------------------------
@pytest.mark.data
@pytest.mark.slow
def test_reuters_micro_f1(data_dir):
    from mlnn import datasets

    data = datasets.load("reuters21578", data_dir=data_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = LinearSVMBR(C=1.0).fit(data.X_train, data.Y_train)
    scores = model.decision_function(data.X_test)
    result = metrics.evaluate(data.Y_test, scores, scores > 0)
    assert result["miF"] >= 0.85, result
    assert result["rankloss"] < 0.01, result


@pytest.mark.data
@pytest.mark.slow
def test_reuters_br_r_with_learned_thresholds(data_dir):
    from mlnn import datasets

    data = datasets.load("reuters21578", data_dir=data_dir)
    result = fit_br(data.X_train, data.Y_train, variant="R", C_values=(0.1, 1.0), random_state=0)
    scores = result.decision_function(data.X_test)
    measures = metrics.evaluate(data.Y_test, scores, result.predict(data.X_test, scores))
    assert measures["miF"] >= 0.85, measures
