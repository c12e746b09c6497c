"""Graders for the notebooks' exercises: each takes the student's function and says pass or why not.

Every ``check_*`` function calls the student's function on small random inputs, compares the
result with mlnn's own implementation (or a literal loop), prints one line — ``PASS`` or
``NOT YET`` with a hint — and returns True or False. A grader never raises: an exercise left
as ``...`` (which returns None) or a function that fails is reported, so a notebook always runs
top to bottom. The worked solutions in ``notebooks/solutions/`` pass every grader
(``tests/test_exercises.py``), and wrong answers are tested to fail.
"""

import numpy as np
import scipy.sparse as sp

from mlnn.evaluation.metrics import LOWER_IS_BETTER, ranking_measures
from mlnn.evaluation.thresholds import optimal_thresholds, ridge
from mlnn.figures.landscapes import loss_surface, surface_gradient
from mlnn.nn.gradcheck import numerical_gradient, rel_error
from mlnn.nn.losses import CrossEntropy, PairwiseExponential
from mlnn.nn.network import Network
from mlnn.nn.optimizers import AdaGrad, Optimizer
from mlnn.paper.ranks import average_ranks, critical_difference, friedman_test

#: Relative error below which a float64 answer counts as equal to the reference.
TOLERANCE = 1e-7


class NotYet(Exception):
    """Raised inside a grader when the answer is wrong; its message is the hint."""


def grade(title, attempt):
    """Run ``attempt()`` (which raises :class:`NotYet` with a hint when the answer is wrong),
    print PASS or NOT YET, and return whether it passed. Any other error is reported too."""
    try:
        attempt()
    except NotYet as hint:
        print(f"NOT YET  {title}: {hint}")
        return False
    except Exception as error:          # the student's code failed: report it, do not raise
        print(f"NOT YET  {title}: your function raised {type(error).__name__}: {error}")
        return False
    print(f"PASS     {title}")
    return True


def expect_close(answer, reference, what, hint=""):
    """Raise :class:`NotYet` unless ``answer`` has ``reference``'s shape and values."""
    if answer is None:
        raise NotYet(f"no answer yet (the function returned None). {hint}".strip())
    answer = np.asarray(answer, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    if answer.shape != reference.shape:
        raise NotYet(f"{what} has shape {answer.shape}, expected {reference.shape}. {hint}".strip())
    error = rel_error(answer, reference)
    if not error < TOLERANCE:
        raise NotYet(f"{what} is off (relative error {error:.1e}). {hint}".strip())


def expect_unchanged(before, after, name):
    """Raise :class:`NotYet` if an input array was modified in place."""
    if not np.array_equal(before, after):
        raise NotYet(f"your function modified its input {name}; work on copies")


def small_problem(hidden="tanh", output="sigmoid", n=5, D=7, F=4, L=3, seed=0):
    """A float64 network, a sparse minibatch X (n × D) with 0/1 labels Y (n × L), and its cache."""
    rng = np.random.default_rng(seed)
    net = Network.initialize(D, L, hidden_units=F, hidden_activation=hidden, output=output,
                             random_state=seed, dtype=np.float64)
    net.params["b1"][:] = rng.normal(scale=0.1, size=F)
    X = sp.random(n, D, density=0.4, random_state=seed, format="csr") + sp.eye(n, D, format="csr")
    Y = (rng.random((n, L)) < 0.5).astype(np.float64)
    Y[:, 0], Y[:, 1] = 1.0, 0.0                  # every document has a relevant and an irrelevant
    return net, X.tocsr(), Y, net.forward(X)


# ---------------------------------------------------------------------------------------------
# notebook 01: the derivatives

def check_delta1(delta1_tanh):
    """``delta1_tanh(delta2, W2, h)`` → δ1 = (δ2 W2ᵀ) ∘ (1 − h²) for tanh hidden units."""
    def attempt():
        net, X, Y, cache = small_problem("tanh")
        delta2 = CrossEntropy().delta(cache.z2, cache.o, Y)
        W2, h = net.W2.copy(), cache.h.copy()
        answer = delta1_tanh(delta2, W2, h)
        expect_unchanged(W2, net.W2, "W2")
        expect_unchanged(h, cache.h, "h")
        expect_close(answer, net.backward(cache, delta2).delta1, "δ1",
                     "δ1 = (δ2 W2ᵀ) ∘ f_h'(z1), and for tanh f_h'(z1) = 1 − h².")
    return grade("δ1 for tanh hidden units", attempt)


def check_input_gradient(grad_W1_dense):
    """``grad_W1_dense(X, delta1)`` → the dense D × F matrix ∂J/∂W1 = Xᵀ δ1 / n."""
    def attempt():
        net, X, Y, cache = small_problem("relu", n=6)
        grads = net.backward(cache, CrossEntropy().delta(cache.z2, cache.o, Y))
        answer = grad_W1_dense(X.copy(), grads.delta1.copy())
        reference = grads.W1.toarray()
        if answer is not None and np.allclose(np.asarray(answer), reference * X.shape[0]):
            raise NotYet("your gradient is n times too large: J is the *mean* over the n = "
                         f"{X.shape[0]} documents, so divide by n")
        expect_close(answer, reference, "∂J/∂W1", "∂J/∂W1 = Xᵀ δ1 / n (X.T @ delta1 / n).")
    return grade("∂J/∂W1 with the minibatch mean", attempt)


def check_pwe_delta(pwe_delta_one):
    """``pwe_delta_one(o, y)`` → δ2 of one document for PWE over tanh outputs (1-d arrays)."""
    def attempt():
        rng = np.random.default_rng(3)
        z2 = rng.normal(size=(1, 6))
        o, y = np.tanh(z2), np.array([[1, 0, 1, 0, 0, 1]], dtype=np.float64)
        answer = pwe_delta_one(o[0].copy(), y[0].copy())
        reference = PairwiseExponential("pairwise").delta(z2, o, y)[0]
        dJ_do = reference / (1 - o[0] ** 2)
        if answer is not None and np.allclose(np.asarray(answer, dtype=float), dJ_do):
            raise NotYet("that is ∂J/∂o; δ2 = ∂J/∂z2 also needs tanh'(z2) = (1 + o)(1 − o)")
        expect_close(answer, reference, "δ2",
                     "sum exp(−(o_p − o_n)) over the pairs of each label, divide by |y||ȳ|, "
                     "sign − for relevant and + for irrelevant labels, times (1 + o)(1 − o).")
    return grade("PWE δ2 of one document", attempt)


def check_gradient_check(central_differences):
    """``central_differences(f, x, h)`` → the array of (f(x + h e_i) − f(x − h e_i)) / 2h."""
    def attempt():
        rng = np.random.default_rng(4)
        A = rng.normal(size=(3, 3))
        x = rng.normal(size=(3, 2))
        def f(value):
            return float(np.sum(np.tanh(A @ value) ** 2))
        before = x.copy()
        answer = central_differences(f, x, 1e-6)
        expect_unchanged(before, x, "x")
        expect_close(answer, numerical_gradient(f, before), "the numerical gradient",
                     "perturb one entry at a time by +h and −h, on a copy of x.")
    return grade("central differences", attempt)


# ---------------------------------------------------------------------------------------------
# notebook 02: loss landscapes

def check_pwe_landscape(pwe_closed_form):
    """``pwe_closed_form(W1, W2_1)`` → J on the Fig. 2 network (x = 1, y = (1, 0, 0, 0), c = 0)."""
    def attempt():
        grid = np.linspace(-3, 3, 7)
        surface = loss_surface("pwe", "tanh", grid, grid)
        W1, W2_1 = np.meshgrid(grid, grid)
        expect_close(pwe_closed_form(W1, W2_1), surface.J, "J",
                     "o_1 = tanh(W2_1 tanh(W1)) and o_2..4 = tanh(0) = 0; each of the 3 pairs "
                     "(1, n) contributes exp(−(o_1 − 0)), and J divides their sum by 3.")
    return grade("PWE landscape in closed form", attempt)


def check_ce_slope(ce_dJ_dW2_1):
    """``ce_dJ_dW2_1(W1, W2_1)`` → ∂J/∂W2_1 of CE on the Fig. 2 network, tanh hidden unit."""
    def attempt():
        grid = np.linspace(-3, 3, 7)
        surface = loss_surface("ce", "tanh", grid, grid)
        W1, W2_1 = np.meshgrid(grid, grid)
        expect_close(ce_dJ_dW2_1(W1, W2_1), surface_gradient(surface)[1], "∂J/∂W2_1",
                     "δ2_1 = o_1 − y_1 = σ(W2_1 h) − 1 and ∂J/∂W2_1 = δ2_1 · h, h = tanh(W1).")
    return grade("CE slope along W2_1", attempt)


# ---------------------------------------------------------------------------------------------
# notebooks 02b and 03: optimizers and dropout

def _rmsprop_reference(theta, G, grads, eta, rho, eps):
    theta, G = theta.copy(), G.copy()
    for g in grads:
        for i in np.ndindex(theta.shape):
            G[i] = rho * G[i] + (1 - rho) * g[i] ** 2
            theta[i] -= eta * g[i] / (np.sqrt(G[i]) + eps)
    return theta, G


def check_rmsprop(rmsprop_step):
    """``rmsprop_step(theta, G, g, eta, rho, eps)`` → new (θ, G), inputs unchanged."""
    def attempt():
        rng = np.random.default_rng(5)
        theta, G = rng.normal(size=(4, 3)), np.zeros((4, 3))
        grads = rng.normal(size=(6, 4, 3)) * np.array([1.0, 0.0, 3.0])
        state = (theta, G)
        for g in grads:
            before = (state[0].copy(), state[1].copy(), g.copy())
            answer = rmsprop_step(state[0], state[1], g, 0.01, 0.9, 1e-8)
            if answer is None:
                raise NotYet("no answer yet (the function returned None)")
            for old, new, name in zip(before, (state[0], state[1], g), ("theta", "G", "g")):
                expect_unchanged(old, new, name)
            state = answer
        reference = _rmsprop_reference(theta, G, grads, 0.01, 0.9, 1e-8)
        hint = "G ← ρ G + (1 − ρ) g², then θ ← θ − η g / (√G + ε); return (θ, G)."
        expect_close(state[0], reference[0], "θ after 6 steps", hint)
        expect_close(state[1], reference[1], "G after 6 steps", hint)
    return grade("RMSProp against a dense loop", attempt)


def check_rmsprop_optimizer(RMSProp):
    """``RMSProp(learning_rate, rho=0.9, epsilon=1e-8)``, a subclass of
    :class:`mlnn.nn.optimizers.Optimizer`: six dense ``step`` calls against the literal loop."""
    def attempt():
        if not (isinstance(RMSProp, type) and issubclass(RMSProp, Optimizer)):
            raise NotYet("RMSProp must be a class derived from mlnn.nn.optimizers.Optimizer")
        rng = np.random.default_rng(15)
        theta = rng.normal(size=(4, 3))
        grads = rng.normal(size=(6, 4, 3))
        optimizer, params = RMSProp(0.01, rho=0.9, epsilon=1e-8), {"W2": theta.copy()}
        if not isinstance(optimizer._new_state(theta.copy()), dict):
            raise NotYet("_new_state(theta) must return the state of one parameter as a dict "
                         "of arrays shaped like theta (AdaGrad: {'sum_squares': ...})")
        for g in grads:
            optimizer.step(params, {"W2": g.copy()})
        if np.array_equal(params["W2"], theta):
            raise NotYet("θ did not change: _new_state returns the state dict, _update_rows "
                         "updates theta[rows] and the state in place")
        expect_close(params["W2"], _rmsprop_reference(theta, np.zeros_like(theta), grads, 0.01,
                                                      0.9, 1e-8)[0], "θ after 6 steps",
                     "in _update_rows: G[rows] = ρ G[rows] + (1 − ρ) g², then "
                     "theta[rows] -= η g / (√G[rows] + ε).")
    return grade("RMSProp as an mlnn optimizer", attempt)


def check_momentum_skip(momentum_skip):
    """``momentum_skip(theta, v, mu, skipped)`` → (θ, v) after ``skipped`` zero-gradient steps."""
    def attempt():
        rng = np.random.default_rng(6)
        for skipped in (0, 1, 2, 7, 40):
            theta, v = rng.normal(size=5), rng.normal(size=5)
            answer = momentum_skip(theta.copy(), v.copy(), 0.9, skipped)
            if answer is None:
                raise NotYet("no answer yet (the function returned None)")
            t_loop, v_loop = theta.copy(), v.copy()
            for _ in range(skipped):
                v_loop = 0.9 * v_loop
                t_loop = t_loop + v_loop
            hint = ("with g = 0, v ← μ v and θ ← θ + v; sum the geometric series "
                    "μ + μ² + … + μ^Δ = μ (1 − μ^Δ) / (1 − μ).")
            expect_close(answer[0], t_loop, f"θ after Δ = {skipped}", hint)
            expect_close(answer[1], v_loop, f"v after Δ = {skipped}", hint)
    return grade("momentum's catch-up in closed form", attempt)


def check_inverted_dropout(inverted_dropout):
    """``inverted_dropout(h, rate, rng)`` → (h ∘ mask, mask), mask entries 0 or 1/(1 − rate)."""
    def attempt():
        h = np.linspace(0.1, 2.0, 40).reshape(8, 5)
        rate, draws = 0.5, 4000
        rng = np.random.default_rng(7)
        total = np.zeros_like(h)
        for _ in range(draws):
            before = h.copy()
            answer = inverted_dropout(h, rate, rng)
            if answer is None:
                raise NotYet("no answer yet (the function returned None)")
            expect_unchanged(before, h, "h")
            dropped, mask = (np.asarray(a, dtype=float) for a in answer)
            if not np.all(np.isin(mask, (0.0, 1 / (1 - rate)))):
                raise NotYet("mask entries must be 0 (dropped) or 1/(1 − rate) (kept, scaled)")
            expect_close(dropped, h * mask, "h ∘ mask")
            total += dropped
        error = np.abs(total / draws - h).max() / h.max()
        if error > 0.1:
            raise NotYet(f"the mean of h ∘ mask over {draws} draws is not h (off by {error:.0%}); "
                         "keep each unit with probability 1 − rate")
    return grade("inverted dropout", attempt)


def check_adagrad_rates(effective_rates):
    """``effective_rates(grads, eta0)`` → (T, D) AdaGrad step sizes η0 / (√G_t + ε) after each step."""
    def attempt():
        rng = np.random.default_rng(8)
        grads = rng.normal(size=(10, 4)) * (rng.random((10, 4)) < 0.4)
        optimizer, theta, reference = AdaGrad(0.1), np.zeros((1, 4)), []
        for g in grads:
            optimizer.step({"w": theta}, {"w": g[None, :]})
            G = optimizer.state["w"]["sum_squares"][0]
            reference.append(0.1 / (np.sqrt(G) + optimizer.epsilon))
        expect_close(effective_rates(grads.copy(), 0.1), np.array(reference), "the rates",
                     "G_t = Σ_{s≤t} g_s² (np.cumsum), rate_t = η0 / (√G_t + 1e-8).")
    return grade("AdaGrad's per-feature learning rates", attempt)


# ---------------------------------------------------------------------------------------------
# notebooks 03-07: curves, measures, thresholds

def _documents(seed, n=30, L=6):
    rng = np.random.default_rng(seed)
    scores = np.round(rng.random((n, L)), 1)          # rounded: ties occur
    Y = (rng.random((n, L)) < 0.4).astype(np.int8)
    Y[:, 0], Y[:, 1] = 1, 0
    return scores, Y


def _per_document(fn, scores, Y):
    values = [fn(scores[i].copy(), Y[i].copy()) for i in range(len(Y))]
    if any(v is None for v in values):
        raise NotYet("no answer yet (the function returned None)")
    return float(np.mean(values))


def check_rank_loss(rank_loss_one):
    """``rank_loss_one(scores, y)`` → Eq. 1 for one document (ties count ½)."""
    def attempt():
        scores, Y = _documents(9)
        expect_close(_per_document(rank_loss_one, scores, Y),
                     ranking_measures(Y, scores)["rankloss"], "the mean rank loss",
                     "count pairs (p relevant, n irrelevant) with s_p < s_n, plus ½ per tie, "
                     "divided by |y||ȳ|.")
    return grade("rank loss of one document", attempt)


def check_average_precision(average_precision_one):
    """``average_precision_one(scores, y)`` → the document's average precision (ties pessimistic)."""
    def attempt():
        scores, Y = _documents(10)
        expect_close(_per_document(average_precision_one, scores, Y),
                     ranking_measures(Y, scores)["MAP"], "MAP",
                     "for each relevant k: #{relevant k' with s_k' ≥ s_k} / #{l with s_l ≥ s_k}; "
                     "average over the relevant k.")
    return grade("average precision of one document", attempt)


def check_coverage(coverage_one):
    """``coverage_one(scores, y)`` → max_{k ∈ y} rank(k) − 1 with rank(k) = #{l : s_l ≥ s_k}."""
    def attempt():
        scores, Y = _documents(11)
        expect_close(_per_document(coverage_one, scores, Y),
                     ranking_measures(Y, scores)["coverage"], "coverage",
                     "rank(k) = #{l : s_l ≥ s_k}; take the largest over the relevant k, minus 1.")
    return grade("coverage of one document", attempt)


def check_pwe_excluded(excluded):
    """``excluded(Y)`` → the boolean mask of documents PWE leaves out."""
    def attempt():
        Y = np.array([[1, 0, 1], [0, 0, 0], [1, 1, 1], [0, 1, 0], [1, 1, 0]])
        expect_close(excluded(Y.copy()), PairwiseExponential().excluded(Y), "the mask",
                     "PWE needs a pair (relevant, irrelevant): no relevant label, or all "
                     "labels relevant, leaves |y||ȳ| = 0.")
    return grade("PWE's excluded documents", attempt)


def check_best_update(best_update):
    """``best_update(curve)`` → (update of the lowest rank loss, final − best rank loss)."""
    def attempt():
        curve = {"updates": [10, 20, 30, 40, 50], "rankloss": [0.3, 0.2, 0.15, 0.17, 0.19]}
        answer = best_update({k: list(v) for k, v in curve.items()})
        expect_close(answer, (30, 0.04), "(update, rise)",
                     "np.argmin over the rank losses gives the index of the best evaluation.")
    return grade("where over-fitting starts", attempt)


def check_input_dropout(input_dropout):
    """``input_dropout(X, rate, rng)`` → CSR X with each stored value kept ×1/(1 − rate) or 0."""
    def attempt():
        X = sp.random(20, 50, density=0.2, random_state=12, format="csr")
        before = X.copy()
        answer = input_dropout(X, 0.5, np.random.default_rng(0))
        if answer is None:
            raise NotYet("no answer yet (the function returned None)")
        expect_unchanged(before.toarray(), X.toarray(), "X")
        answer = sp.csr_matrix(answer).toarray()
        kept = answer != 0
        if kept.sum() in (0, X.nnz):
            raise NotYet("drop each stored entry with probability rate, keep the others")
        expect_close(answer[kept], 2 * X.toarray()[kept], "the kept entries",
                     "kept entries are scaled by 1 / (1 − rate)")
        if np.any(answer[X.toarray() == 0] != 0):
            raise NotYet("a zero input became nonzero")
    return grade("input dropout on a sparse X", attempt)


def check_f1_threshold(best_threshold_one):
    """``best_threshold_one(scores, y)`` → a threshold t whose prediction s > t has the best F1."""
    def f1(y, predicted):
        both, size = np.sum(y & predicted), y.sum() + predicted.sum()
        return 1.0 if size == 0 else 2 * both / size

    def attempt():
        scores, Y = _documents(13)
        best = optimal_thresholds(scores, Y)
        for i in range(len(Y)):
            t = best_threshold_one(scores[i].copy(), Y[i].copy())
            if t is None:
                raise NotYet("no answer yet (the function returned None)")
            y = Y[i] > 0
            if f1(y, scores[i] > t) < f1(y, scores[i] > best[i]) - 1e-12:
                raise NotYet(f"document {i}: your threshold {t:.3f} gives F1 "
                             f"{f1(y, scores[i] > t):.3f}, {f1(y, scores[i] > best[i]):.3f} is "
                             "possible. Try every cut between consecutive sorted scores.")
    return grade("F1-optimal threshold of one document", attempt)


def check_ridge(ridge_solve):
    """``ridge_solve(Z, t, lam)`` → θ minimising ‖Z θ − t‖² + λ ‖θ‖² (Eq. 5)."""
    def attempt():
        rng = np.random.default_rng(14)
        Z, t = rng.normal(size=(40, 6)), rng.normal(size=40)
        expect_close(ridge_solve(Z.copy(), t.copy(), 3.0), ridge(Z, t, 3.0, tol=1e-14)[0], "θ",
                     "set the gradient to zero: (Zᵀ Z + λ I) θ = Zᵀ t (np.linalg.solve).")
    return grade("ridge regression of Eq. 5", attempt)


def check_better_than_paper(better_than_paper):
    """``better_than_paper(measure, ours, paper)`` → relative difference, > 0 when ours is better."""
    def attempt():
        cases = [("rankloss", 0.04, 0.05), ("MAP", 0.55, 0.5), ("coverage", 12.0, 10.0),
                 ("miF", 0.3, 0.4)]
        answer = [better_than_paper(m, ours, paper) for m, ours, paper in cases]
        if any(a is None for a in answer):
            raise NotYet("no answer yet (the function returned None)")
        reference = [(-1 if m in LOWER_IS_BETTER else 1) * (ours - paper) / abs(paper)
                     for m, ours, paper in cases]
        expect_close(answer, reference, "the differences",
                     "(ours − paper) / |paper|, negated for measures where lower is better "
                     "(mlnn.evaluation.metrics.LOWER_IS_BETTER).")
    return grade("better than the paper by", attempt)


# ---------------------------------------------------------------------------------------------
# notebook 08: comparing methods over datasets (Demšar 2006)

def check_average_ranks(average_ranks_by_hand):
    """``average_ranks_by_hand(values, lower_is_better)`` → R_j, the mean rank (1 = best, ties
    averaged) of each method (column) over the datasets (rows)."""
    def attempt():
        values = np.array([[0.10, 0.20, 0.20, 0.40], [0.30, 0.10, 0.20, 0.20],
                           [0.50, 0.50, 0.50, 0.10], [0.20, 0.30, 0.10, 0.40]])
        for lower in (True, False):
            before = values.copy()
            answer = average_ranks_by_hand(values, lower)
            expect_unchanged(before, values, "values")
            expect_close(answer, average_ranks(values, lower),
                         f"R with lower_is_better={lower}",
                         "rank each row, 1 for the best (the lowest value when lower is better, "
                         "else the highest); tied methods share the mean of the ranks they span "
                         "(scipy.stats.rankdata); then average over the rows.")
    return grade("average ranks with ties", attempt)


def check_friedman(friedman_chi2):
    """``friedman_chi2(R, N)`` → Friedman's χ²_F from the average ranks R of k methods over N
    datasets (Demšar 2006, Sec. 3.2.2)."""
    def attempt():
        for R, N in (([1.5, 2.25, 2.75, 3.5], 4), ([2.0, 1.0, 3.0], 6),
                     ([3.1, 2.4, 5.6, 4.0, 6.9, 3.3, 5.2, 5.5], 7)):
            expect_close(friedman_chi2(np.array(R), N), friedman_test(R, N).chi2, "χ²_F",
                         "χ²_F = 12 N / (k (k+1)) · (Σ_j R_j² − k (k+1)² / 4), with k = len(R).")
    return grade("Friedman's statistic by hand", attempt)


def check_critical_difference(nemenyi_cd):
    """``nemenyi_cd(k, N, q_alpha)`` → Nemenyi's CD = q_α √(k (k+1) / (6 N))."""
    def attempt():
        for k, N in ((8, 7), (8, 6), (5, 2), (2, 30), (10, 100)):
            q = critical_difference(k, 1) / np.sqrt(k * (k + 1) / 6.0)
            expect_close(nemenyi_cd(k, N, q), critical_difference(k, N), f"CD for k={k}, N={N}",
                         "CD = q_α √(k (k+1) / (6 N)): k methods, N datasets.")
    return grade("Nemenyi's critical difference", attempt)
