"""Graders for the notebooks' exercises: each takes the student's function and says pass or why not.

Every ``check_*`` function tries the student's function on several random cases that vary the
shapes and every value an answer could hard-code (|y| ≠ |ȳ|, n > 1, dropout rates other than 0.5,
several μ, η0, ρ, ε, λ and q_α, several parameters, row-sparse gradients), against mlnn's own
implementation or a literal loop built from pristine copies of the inputs. It prints one line —
``PASS`` with the number of cases, or ``NOT YET`` with what is wrong, never the code — and returns
True or False. Random answers (dropout) are judged by their distribution: the dropped fraction at
several rates, independence across units and documents, and use of the generator passed in.

A grader never raises: an exercise left as ``...`` (which returns None), a function that raises,
an answer that changes its inputs or has the wrong shape or dtype is reported, so a notebook
always runs top to bottom; a failure of the grader itself is reported as such
(:mod:`mlnn.course.grading`). The worked solutions in ``notebooks/solutions/`` pass every grader
(``tests/test_exercises.py``), and plausible wrong answers fail (``tests/test_wrong_answers.py``).
"""

import numpy as np
import scipy.sparse as sp

from mlnn.course.grading import (NO_ANSWER, NotYet, as_array, binomial_z, call, case_rngs, close,
                                 dispersion, expect_array, expect_shape, grade, label_rows, run,
                                 sparse_rows)
from mlnn.evaluation.metrics import LOWER_IS_BETTER, MEASURES, ranking_measures
from mlnn.evaluation.thresholds import optimal_thresholds, ridge
from mlnn.figures.landscapes import loss_surface, surface_gradient
from mlnn.nn.activations import get_activation
from mlnn.nn.gradcheck import numerical_gradient
from mlnn.nn.losses import PairwiseExponential
from mlnn.nn.network import RowSparseGradient
from mlnn.nn.optimizers import AdaGrad, Optimizer
from mlnn.paper.ranks import average_ranks, critical_difference, friedman_test

#: Random cases per deterministic grader.
CASES = 8


def judge(answer, reference, what, mistakes=(), kind="f"):
    """Check ``answer`` against ``reference`` (:func:`~mlnn.course.grading.expect_array`), first
    naming a known mistake: ``mistakes`` are pairs (what that mistake returns, what is wrong)."""
    array = as_array(answer, what)
    expect_shape(array, np.shape(reference), what)
    for wrong, hint in mistakes:
        if close(array, wrong) and not close(wrong, reference):
            raise NotYet(f"{what}: {hint}")
    return expect_array(array, reference, what, kind)


def scale_of(answer, reference):
    """c if ``answer`` is c · ``reference`` for one scalar c ≠ 1, else None."""
    a, r = (np.asarray(v, dtype=np.float64).ravel() for v in (answer, reference))
    if a.shape != r.shape or not np.all(np.isfinite(a)) or not np.any(r):
        return None
    c = float(a @ r / (r @ r))
    return c if close(a, c * r) and not np.isclose(c, 1.0) else None


def pair(answer, what):
    """The two items of an answer that must be a pair (a tuple of two)."""
    if answer is None:
        raise NotYet(NO_ANSWER)
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        raise NotYet(f"{what} must be a pair (a tuple of two values), got {type(answer).__name__}")
    return answer


# ---------------------------------------------------------------------------------------------
# notebook 01: the derivatives

def check_delta1(delta1_tanh):
    """``delta1_tanh(delta2, W2, h)`` → δ1 = (δ2 W2ᵀ) ∘ (1 − h²) for tanh hidden units (Sec. 3)."""
    tanh = get_activation("tanh")

    def attempt():
        for rng in case_rngs(1, CASES):
            n, F, L = rng.integers(1, 8), rng.integers(2, 7), rng.integers(2, 7)
            delta2, W2 = rng.normal(size=(n, L)), rng.normal(size=(F, L))
            z1 = rng.normal(size=(n, F))
            h = tanh.fn(z1)
            answer = run(delta1_tanh, ("delta2", delta2), ("W2", W2), ("h", h))
            back = delta2 @ W2.T
            judge(answer, back * tanh.grad(z1, h), f"δ1 for n = {n}, F = {F}, L = {L}", [
                (back, "the derivative of the hidden activation is missing"),
                (back * h * (1 - h), "that is the sigmoid's derivative; these hidden units are "
                                     "tanh, whose derivative is written with h differently"),
                (-back * tanh.grad(z1, h), "the sign is flipped"),
                (back * (1 - np.tanh(h) ** 2), "tanh is applied twice: h is already tanh(z1)")])
        return f"{CASES} random cases (n, F, L varied), inputs unchanged"
    return grade("δ1 for tanh hidden units", attempt).passed


def check_input_gradient(grad_W1_dense):
    """``grad_W1_dense(X, delta1)`` → the dense D × F matrix ∂J/∂W1 = Xᵀ δ1 / n (Sec. 3)."""
    def attempt():
        for rng, n in zip(case_rngs(2, CASES), (1, 6, 2, 9, 3, 13, 5, 4)):
            D, F = n + rng.integers(2, 8), rng.integers(2, 6)
            X, delta1 = sparse_rows(rng, n, D), rng.normal(size=(n, F))
            answer = run(grad_W1_dense, ("X", X), ("delta1", delta1))
            reference = np.asarray(X.T @ delta1) / n
            what = f"∂J/∂W1 for a minibatch of n = {n}, D = {D}, F = {F}"
            array = as_array(answer, what)
            expect_shape(array, reference.shape, what)
            c = scale_of(array, reference)
            if c is not None and np.isclose(c, n):
                raise NotYet(f"{what} is n times too large: J is the mean over the minibatch")
            if c is not None:
                raise NotYet(f"{what} is {c:.3g} times the right gradient: the factor must "
                             "follow the minibatch")
            expect_array(array, reference, what)
        return f"{CASES} random cases (n from 1 to 13), inputs unchanged"
    return grade("∂J/∂W1 with the minibatch mean", attempt).passed


def _pwe_cases():
    """(o, y) pairs of one document: L from 3 to 10, |y| from 1 to L − 1, first |y| ≠ |ȳ|."""
    cases = []
    for i, rng in enumerate(case_rngs(3, CASES)):
        L = int(rng.integers(3, 11))
        size = {0: 1, 1: L // 2, 2: L - 1}.get(i, rng.integers(1, L))    # |y| = 1, ≈ |ȳ|, |ȳ| = 1
        y = np.zeros(L)
        y[rng.choice(L, size=size, replace=False)] = 1.0
        cases.append((np.tanh(rng.normal(size=L)), y))
    return cases


def check_pwe_delta(pwe_delta_one):
    """``pwe_delta_one(o, y)`` → δ2 of one document for PWE over tanh outputs (1-d arrays,
    Eq. 3 and Sec. 3.4)."""
    def attempt():
        for o, y in _pwe_cases():
            answer = run(pwe_delta_one, ("o", o), ("y", y))
            z2 = np.arctanh(o)[None, :]
            reference = PairwiseExponential("pairwise").delta(z2, o[None, :], y[None, :])[0]
            p, n = int(y.sum()), int(len(y) - y.sum())
            what = f"δ2 for L = {len(y)}, |y| = {p}, |ȳ| = {n}"
            array = judge_shape(answer, reference, what)
            if close(array, reference / (1 - o ** 2)):
                raise NotYet(f"{what}: that is ∂J/∂o; δ2 = ∂J/∂z2 also needs the derivative of "
                             "the tanh output")
            if close(array, -reference):
                raise NotYet(f"{what}: the signs of the relevant and irrelevant labels are swapped")
            c = scale_of(array, reference)
            if c is not None:
                raise NotYet(f"{what} is {c:.3g} times the right value: the sum over pairs is "
                             "normalised by the wrong count (try a document with |y| ≠ |ȳ|)")
            expect_array(array, reference, what)
        return f"{CASES} random documents (L from 3 to 10, |y| ≠ |ȳ|), inputs unchanged"
    return grade("PWE δ2 of one document", attempt).passed


def judge_shape(answer, reference, what):
    """``answer`` as an array of ``reference``'s shape, or :class:`NotYet` saying why not."""
    array = as_array(answer, what)
    expect_shape(array, np.shape(reference), what)
    return array


def _smooth(A, shape):
    """f(x) = Σ tanh(A vec(x))², a smooth function of an array x of ``shape``."""
    def f(x):
        return float(np.sum(np.tanh(A @ np.reshape(x, -1)) ** 2))
    return f


def check_gradient_check(central_differences):
    """``central_differences(f, x, h)`` → the array of (f(x + h e_i) − f(x − h e_i)) / 2h."""
    shapes = ((3,), (2, 3), (4, 1), (3, 2), (5,), (2, 2, 2))
    steps = (1e-6, 1e-2, 1e-4, 1e-3, 1e-5, 3e-2)

    def attempt():
        for rng, shape, h in zip(case_rngs(4, len(shapes)), shapes, steps):
            x = rng.normal(size=shape)
            f = _smooth(rng.normal(size=(x.size, x.size)), shape)
            answer = run(central_differences, ("f", f), ("x", x), ("h", h))
            reference = numerical_gradient(f, x, h)
            units = np.eye(x.size).reshape((x.size,) + shape)
            forward = np.array([(f(x + h * e) - f(x)) / h for e in units]).reshape(shape)
            judge(answer, reference, f"the numerical gradient for x of shape {shape}, h = {h:g}", [
                (forward, "that is a one-sided difference; use both sides of x"),
                (2 * reference, "twice the central difference: the two points are 2h apart"),
                (numerical_gradient(f, x, 1e-6 if h != 1e-6 else 1e-2),
                 "it does not follow the step h passed in")])
        return f"{len(shapes)} random cases (shapes and h varied), x unchanged"
    return grade("central differences", attempt).passed


# ---------------------------------------------------------------------------------------------
# notebook 02: loss landscapes

def _landscape_grids():
    """(W1, W2_1) grids of several shapes: a non-square meshgrid, a 1-d array, a scalar."""
    cases = []
    for rng, shape in zip(case_rngs(5, 4), ((5, 8), (9, 3), (6,), ())):
        cases.append((rng.uniform(-3, 3, size=shape), rng.uniform(-3, 3, size=shape)))
    return cases


def _on_grid(values, W1, W2_1):
    """The entries (W1[i], W2_1[i]) of a surface function ``values(grid_W1, grid_W2_1)``."""
    a, b = np.append(np.ravel(W1), 0.5), np.append(np.ravel(W2_1), 0.5)   # grids of ≥ 2 points
    return np.diag(values(a, b))[:-1].reshape(np.shape(W1))


def check_pwe_landscape(pwe_closed_form):
    """``pwe_closed_form(W1, W2_1)`` → J on the Fig. 2 network (x = 1, y = (1, 0, 0, 0), c = 0)."""
    def attempt():
        for W1, W2_1 in _landscape_grids():
            answer = run(pwe_closed_form, ("W1", W1), ("W2_1", W2_1))
            reference = _on_grid(lambda a, b: loss_surface("pwe", "tanh", a, b).J, W1, W2_1)
            what = f"J on an array of shape {np.shape(W1)}"
            array = judge_shape(answer, reference, what)
            c = scale_of(array, reference)
            if c is not None:
                raise NotYet(f"{what} is {c:.3g} times the right value: check how the pair terms "
                             "are counted and averaged")
            expect_array(array, reference, what)
        return "4 random grids (meshgrid, 1-d, scalar), inputs unchanged"
    return grade("PWE landscape in closed form", attempt).passed


def check_ce_slope(ce_dJ_dW2_1):
    """``ce_dJ_dW2_1(W1, W2_1)`` → ∂J/∂W2_1 of CE on the Fig. 2 network, tanh hidden unit."""
    def attempt():
        for W1, W2_1 in _landscape_grids():
            answer = run(ce_dJ_dW2_1, ("W1", W1), ("W2_1", W2_1))
            reference = _on_grid(lambda a, b: surface_gradient(loss_surface("ce", "tanh", a, b))[1],
                                 W1, W2_1)
            what = f"∂J/∂W2_1 on an array of shape {np.shape(W1)}"
            judge(answer, reference, what, [(-reference, "the sign is flipped")])
        return "4 random grids (meshgrid, 1-d, scalar), inputs unchanged"
    return grade("CE slope along W2_1", attempt).passed


# ---------------------------------------------------------------------------------------------
# notebooks 02b and 03: optimizers and dropout

def _rmsprop_reference(theta, G, grads, eta, rho, eps, inside=False):
    """θ and G after the RMSProp steps ``grads``, by a literal loop over the entries (with
    ``inside``, the mistake of ε inside the square root)."""
    theta, G = theta.copy(), G.copy()
    for g in grads:
        for i in np.ndindex(theta.shape):
            G[i] = rho * G[i] + (1 - rho) * g[i] ** 2
            root = np.sqrt(G[i] + eps) if inside else np.sqrt(G[i]) + eps
            theta[i] -= eta * g[i] / root
    return theta, G


#: Steps of each RMSProp case.
STEPS = 6

#: (η, ρ, ε) of the RMSProp cases: ε large enough that where it is added shows.
RMSPROP_SETTINGS = ((0.01, 0.9, 1e-8), (0.1, 0.5, 0.1), (0.003, 0.99, 1.0), (0.05, 0.7, 1e-3))


def check_rmsprop(rmsprop_step):
    """``rmsprop_step(theta, G, g, eta, rho, eps)`` → new (θ, G), inputs unchanged."""
    def attempt():
        for rng, (eta, rho, eps) in zip(case_rngs(6, 4), RMSPROP_SETTINGS):
            shape = (rng.integers(2, 6), rng.integers(2, 5))
            theta, G0 = rng.normal(size=shape), rng.random(shape) * rng.integers(0, 2)
            grads = rng.normal(size=(STEPS,) + shape) * (rng.random(shape) < 0.7)
            state = (theta, G0)
            for g in grads:
                state = pair(run(rmsprop_step, ("theta", state[0]), ("G", state[1]), ("g", g),
                                 ("eta", eta), ("rho", rho), ("eps", eps)), "rmsprop_step's result")
                state = tuple(as_array(a, "θ and G") for a in state)
            what = f"θ after {STEPS} steps with η = {eta}, ρ = {rho}, ε = {eps:g}"
            reference = _rmsprop_reference(theta, G0, grads, eta, rho, eps)
            judge(state[1], reference[1], f"G after {STEPS} steps with ρ = {rho}", [
                (_rmsprop_reference(theta, G0, grads, eta, 0.9, eps)[1],
                 "G does not follow the ρ passed in")])
            judge(state[0], reference[0], what, [
                (_rmsprop_reference(theta, G0, grads, eta, rho, eps, inside=True)[0],
                 "ε is inside the square root; it belongs outside, added to the root"),
                (_rmsprop_reference(theta, G0, grads, eta, rho, 1e-8)[0],
                 "θ does not follow the ε passed in"),
                (_rmsprop_reference(theta, G0, grads, 0.01, rho, eps)[0],
                 "θ does not follow the η passed in")])
        return f"4 random cases of {STEPS} steps (η, ρ, ε and shapes varied), inputs unchanged"
    return grade("RMSProp against a dense loop", attempt).passed


def _rmsprop_problem(rng):
    """Parameters W1, b1, W2, b2 (b1 and b2 of one shape) and five steps of gradients, W1's
    row-sparse (a single row on every other step)."""
    D, F = 7, 3
    params = {"W1": rng.normal(size=(D, F)), "b1": rng.normal(size=F),
              "W2": rng.normal(size=(F, F)), "b2": rng.normal(size=F)}
    sequence = []
    for step in range(STEPS):
        rows = np.sort(rng.choice(D, size=1 if step % 2 == 0 else rng.integers(2, D),
                                  replace=False))
        grads = {name: rng.normal(size=value.shape) for name, value in params.items()}
        grads["W1"] = RowSparseGradient(rows, rng.normal(size=(len(rows), F)), (D, F))
        sequence.append(grads)
    return params, sequence


def _copy(g):
    if isinstance(g, RowSparseGradient):
        return RowSparseGradient(g.rows.copy(), g.values.copy(), g.shape)
    return g.copy()


def _rmsprop_steps(RMSProp, settings, params, sequence, names):
    """The parameters ``names`` after the student's optimizer took the steps of ``sequence``."""
    optimizer = call(RMSProp, *settings, name="RMSProp(learning_rate, rho, epsilon)")
    params = {name: params[name].copy() for name in names}
    for grads in sequence:
        call(optimizer.step, params, {name: _copy(grads[name]) for name in names}, name="step")
    return params


def _rmsprop_expected(settings, theta, sequence, name, lazy=True, memoryless=False):
    """θ after the steps by the literal loop; a row-sparse gradient updates its rows only
    (``lazy``) or, as the dense rule, every row (zero gradient elsewhere: G decays). With
    ``memoryless``, the mistake of a G that starts from 0 at every step."""
    theta, G = theta.copy(), np.zeros_like(theta)
    for grads in sequence:
        G = np.zeros_like(theta) if memoryless else G
        g, rows = grads[name], slice(None)
        if isinstance(g, RowSparseGradient):
            rows, g = (g.rows, g.values) if lazy else (slice(None), g.toarray())
        theta[rows], G[rows] = _rmsprop_reference(theta[rows], G[rows], [g], *settings)
    return theta


def _judge_rmsprop_case(RMSProp, settings, rng):
    """One case: every parameter against the loop, naming shared state and ignored rows."""
    params, sequence = _rmsprop_problem(rng)
    result = _rmsprop_steps(RMSProp, settings, params, sequence, list(params))
    for name in ("b1", "b2", "W2", "W1"):
        what = f"{name} after {STEPS} steps with η, ρ, ε = {settings}"
        expected = _rmsprop_expected(settings, params[name], sequence, name)
        if name == "W1" and close(result[name], _rmsprop_expected(settings, params[name],
                                                                  sequence, name, lazy=False)):
            continue                                 # G decayed on every row: the dense rule
        if close(result[name], expected):
            continue
        if np.array_equal(result[name], params[name]):
            raise NotYet(f"{name} did not change in {STEPS} steps: the update must change θ "
                         "(and its state) in place")
        if close(result[name], _rmsprop_expected(settings, params[name], sequence, name,
                                                 memoryless=True)):
            raise NotYet(f"{what} is off: G starts from 0 at every step; keep it in the state "
                         "and update that array in place")
        alone = _rmsprop_steps(RMSProp, settings, params, sequence, [name])[name]
        if close(alone, expected):
            raise NotYet(f"{what} is right when it is the only parameter and off beside the "
                         "others: every parameter needs its own accumulator")
        if name == "W1" and all(close(result[k], _rmsprop_expected(settings, params[k],
                                                                   sequence, k))
                                for k in ("b1", "b2", "W2")):
            raise NotYet(f"{what} is off while the dense parameters are right: with a "
                         "row-sparse gradient, update exactly the rows it gives, with theirs")
        judge(result[name], expected, what)


def check_rmsprop_optimizer(RMSProp):
    """``RMSProp(learning_rate, rho=0.9, epsilon=1e-8)``, a subclass of
    :class:`mlnn.nn.optimizers.Optimizer`: five ``step`` calls on four parameters (W1 with a
    row-sparse gradient; b1 and b2 of one shape) against the literal loop, η, ρ, ε varied."""
    def attempt():
        if not (isinstance(RMSProp, type) and issubclass(RMSProp, Optimizer)):
            raise NotYet("RMSProp must be a class derived from mlnn.nn.optimizers.Optimizer")
        probe = call(RMSProp, 0.01, 0.9, 1e-8, name="RMSProp(learning_rate, rho, epsilon)")
        state = call(probe._new_state, np.zeros((4, 3)), name="_new_state")
        if not isinstance(state, dict):
            raise NotYet("the state of one parameter (new_state(theta), or _new_state(theta)) "
                         "must be a dict of arrays shaped like theta (AdaGrad's holds its sum "
                         "of squares)")
        for rng, settings in zip(case_rngs(7, 3), RMSPROP_SETTINGS[1:]):
            _judge_rmsprop_case(RMSProp, settings, rng)
        return (f"3 random cases of {STEPS} steps (4 parameters, row-sparse W1, η, ρ, ε "
                "varied)")
    return grade("RMSProp as an mlnn optimizer", attempt).passed


def check_momentum_skip(momentum_skip):
    """``momentum_skip(theta, v, mu, skipped)`` → (θ, v) after ``skipped`` zero-gradient steps."""
    def attempt():
        settings = ((0.9, 0), (0.5, 1), (0.3, 2), (0.75, 7), (0.99, 40), (0.6, 40), (0.9, 7))
        for rng, (mu, skipped) in zip(case_rngs(8, len(settings)), settings):
            theta, v = rng.normal(size=rng.integers(1, 6)), rng.normal(size=rng.integers(1, 2))
            v = np.resize(v, theta.shape) * rng.uniform(0.5, 2, size=theta.shape)
            answer = pair(run(momentum_skip, ("theta", theta), ("v", v), ("mu", mu),
                              ("skipped", skipped)), "momentum_skip's result")
            loop = _momentum_loop(theta, v, mu, skipped)
            fixed = _momentum_loop(theta, v, 0.9, skipped)
            judge(answer[0], loop[0], f"θ after Δ = {skipped} steps with μ = {mu}", [
                (fixed[0], "it does not follow the μ passed in"),
                (theta + 9 * (1 - mu ** skipped) * v, "the factor μ/(1 − μ) does not follow the "
                                                      "μ passed in"),
                (theta + skipped * v, "θ moves by the whole v at every skipped step, but v "
                                      "shrinks by μ at each")])
            judge(answer[1], loop[1], f"v after Δ = {skipped} steps with μ = {mu}", [
                (fixed[1], "it does not follow the μ passed in"),
                (v, "v must shrink by μ at every skipped step")])
        return f"{len(settings)} random cases (μ, Δ and sizes varied), inputs unchanged"
    return grade("momentum's catch-up in closed form", attempt).passed


def _momentum_loop(theta, v, mu, skipped):
    """Classical momentum with zero gradient, step by step: v ← μ v, θ ← θ + v."""
    theta, v = theta.copy(), v.copy()
    for _ in range(skipped):
        v = mu * v
        theta = theta + v
    return theta, v


#: The dropout rates the dropout graders try.
RATES = (0.2, 0.5, 0.7, 0.1)


def _dropout_masks(inverted_dropout, h, rate, seed, draws):
    """The student's masks (as kept booleans) of ``draws`` calls with one generator, each call
    checked: a pair, shapes, mask values 0 or 1/(1 − rate), h ∘ mask."""
    rng, kept = np.random.default_rng(seed), []
    for _ in range(draws):
        dropped, mask = pair(run(inverted_dropout, ("h", h), ("rate", rate), ("rng", rng)),
                             "inverted_dropout's result")
        what = f"the mask at rate {rate}"
        mask = judge_shape(mask, h, what).astype(np.float64)
        values = set(np.unique(mask).round(9)) - {0.0}
        if values and values <= {round(1 / rate, 9)} and rate != 0.5:
            raise NotYet(f"{what}: kept units are scaled by 1/rate; the scale must make the "
                         "expected value of h ∘ mask equal to h")
        if values == {1.0}:
            raise NotYet(f"{what} holds only 0 and 1: the kept units are not scaled")
        if not values <= {round(1 / (1 - rate), 9)}:
            raise NotYet(f"{what} must hold only 0 (dropped) and the scale of a kept unit")
        judge(dropped, h * mask, f"h ∘ mask at rate {rate}")
        kept.append(mask > 0)
    return np.array(kept)


def check_inverted_dropout(inverted_dropout):
    """``inverted_dropout(h, rate, rng)`` → (h ∘ mask, mask), mask entries 0 or 1/(1 − rate),
    each unit of each document kept independently with probability 1 − rate, drawn from ``rng``."""
    def attempt():
        h = np.random.default_rng(9).uniform(0.1, 2.0, size=(30, 40))
        for rate in RATES:
            kept = _dropout_masks(inverted_dropout, h, rate, 9, 20)
            _judge_kept(kept, rate, "unit", "document")
            _judge_generator(lambda seed: _dropout_masks(inverted_dropout, h, rate, seed, 1)[0])
        return (f"rates {', '.join(map(str, RATES))}: kept fraction, independence across units "
                "and documents, the generator passed in; h unchanged")
    return grade("inverted dropout", attempt).passed


def _judge_kept(kept, rate, column, row, trials=None, noun="units"):
    """Judge boolean masks ``kept`` (draws × rows × columns) by their distribution: per-row and
    per-column counts binomial (no coin shared by a row or column), neighbours independent, and
    the kept fraction 1 − rate."""
    trials = np.ones(kept.shape[1:]) if trials is None else trials
    count, total = kept.sum(), trials.sum() * len(kept)
    q = min(max(count / total, 0.02), 0.98)                 # the observed kept fraction
    by_row = np.mean([dispersion(k.sum(axis=1), trials.sum(axis=1), q) for k in kept])
    by_column = np.mean([dispersion(k.sum(axis=0), trials.sum(axis=0), q) for k in kept])
    if by_row > 3 and by_column > 3:
        raise NotYet(f"at rate {rate} the whole minibatch shares one coin: draw one for every "
                     f"{column} of every {row}")
    if by_column > 3:
        raise NotYet(f"at rate {rate} each {column} is kept or dropped for all {row}s at once: "
                     f"draw a separate coin for every {row}")
    if by_row > 3:
        raise NotYet(f"at rate {rate} each {row} keeps or drops all its {column}s together: "
                     f"draw a separate coin for every {column}")
    for axis, name in ((2, f"neighbouring {column}s of a {row}"),
                       (1, f"neighbouring {row}s for one {column}")):
        z = _neighbours_z(kept, trials > 0, axis, q)
        if abs(z) > 6:
            raise NotYet(f"at rate {rate} {name} are kept together too "
                         f"{'often' if z > 0 else 'rarely'}: their coins are not independent")
    if abs(binomial_z(count, total, 1 - rate)) > 5:
        swapped = abs(binomial_z(count, total, rate)) < 5
        raise NotYet(f"at rate {rate} you keep {count / total:.1%} of the {noun}: " +
                     ("you keep with probability rate; rate is the probability of dropping"
                      if swapped else f"each should be dropped with probability {rate}"))


def _neighbours_z(kept, present, axis, q):
    """The z-score of how often two neighbours along ``axis`` (both present) are both kept,
    against q² for independent coins."""
    size = kept.shape[axis]
    first, second = (np.take(kept, range(a, a + size - 1), axis=axis) for a in (0, 1))
    both = np.take(present, range(size - 1), axis=axis - 1) & np.take(
        present, range(1, size), axis=axis - 1)
    return binomial_z((first & second & both).sum(), both.sum() * len(kept), q * q)


def _judge_generator(masks_of_seed):
    """The masks must come from the generator passed in: equal for equal seeds, not otherwise."""
    first, again, other = masks_of_seed(11), masks_of_seed(11), masks_of_seed(12)
    if not np.array_equal(first, again):
        raise NotYet("two generators with the same seed gave different masks: draw the coins "
                     "from the generator rng passed in (not from NumPy's global random state)")
    if np.array_equal(first, other):
        raise NotYet("generators with different seeds gave the same mask: draw the coins from "
                     "the generator rng passed in, not from one of your own")


def check_adagrad_rates(effective_rates):
    """``effective_rates(grads, eta0)`` → (T, D) AdaGrad step sizes η0 / (√G_t + ε) after each
    step, G_t the sum of squares of the gradients up to t (Sec. 3.5)."""
    def attempt():
        for rng, eta0 in zip(case_rngs(10, 5), (0.1, 0.5, 0.03, 1.0, 0.2)):
            T = int(rng.integers(1, 12))
            D = int(rng.choice([d for d in range(1, 8) if d != T]))    # not square
            grads = rng.normal(size=(T, D)) * (rng.random((T, D)) < 0.5)
            answer = run(effective_rates, ("grads", grads), ("eta0", eta0))
            optimizer, theta, reference = AdaGrad(eta0), np.zeros((1, D)), []
            for g in grads:
                optimizer.step({"w": theta}, {"w": g[None, :]})
                G = optimizer.state["w"]["sum_squares"][0]
                reference.append(eta0 / (np.sqrt(G) + optimizer.epsilon))
            what = f"the rates for T = {T} steps, D = {D}, η0 = {eta0}"
            array = judge_shape(answer, np.array(reference), what)
            if not np.all(np.isfinite(array.astype(float))):
                raise NotYet(f"{what} are infinite or NaN where no gradient has been seen yet: "
                             "the small ε that guards the division is missing")
            seen = np.cumsum(grads ** 2, axis=0) > 0
            if close(array[seen], np.array(reference)[seen], 1e-4) and not close(array, reference):
                raise NotYet(f"{what} are right where a gradient has been seen and off where none "
                             "has yet: guard the division with ε = 1e-8, as mlnn's AdaGrad does")
            judge(array, np.array(reference), what, [
                (eta0 / (np.abs(grads) + 1e-8), "each rate uses only the gradient of its own "
                                                "step; AdaGrad accumulates all steps so far"),
                (np.array(reference) * 0.1 / eta0, "they do not follow the η0 passed in")])
        return "5 random cases (T, D, η0 varied), inputs unchanged"
    return grade("AdaGrad's per-feature learning rates", attempt).passed


# ---------------------------------------------------------------------------------------------
# notebooks 03-07: curves, measures, thresholds

def _documents(seed, count=4, n=12):
    """(scores, Y) for ``count`` cases of n documents: L from 3 to 12, scores rounded so that
    ties occur, labels of several dtypes, every document with a relevant and an irrelevant."""
    cases = []
    for rng, dtype in zip(case_rngs(seed, count), (np.int8, np.float64, np.int32, np.int64)):
        L = int(rng.integers(3, 13))
        scores = np.round(rng.random((n, L)), 1)
        cases.append((scores, label_rows(rng, n, L).astype(dtype)))
    return cases


MEASURE_NAMES = {"rankloss": "the rank loss", "MAP": "the average precision",
                 "coverage": "the coverage"}


def _per_document(measure_one, measure, seed, name):
    """Compare ``measure_one(scores, y)`` with mlnn's ``measure`` document by document, then
    averaged over the documents of each case."""
    for scores, Y in _documents(seed):
        values = []
        for s, y in zip(scores, Y):
            answer = run(measure_one, ("scores", s), ("y", y), name=name)
            reference = ranking_measures(y[None, :].astype(int), s[None, :])[measure]
            tie = " and tied scores" if len(np.unique(s)) < len(s) else ""
            what = (f"{MEASURE_NAMES[measure]} of a document with L = {len(y)}, "
                    f"|y| = {np.sum(y > 0)}{tie}")
            judge(answer, reference, what, [(reference + 1, "it is 1 too large"),
                                             (reference - 1, "it is 1 too small")], kind="biuf")
            values.append(float(answer))
        judge(np.mean(values), ranking_measures(Y.astype(int), scores)[measure],
              f"the mean {MEASURE_NAMES[measure][4:]} of {len(Y)} documents")
    return "4 cases of 12 random documents (L from 3 to 12, ties), inputs unchanged"


def check_rank_loss(rank_loss_one):
    """``rank_loss_one(scores, y)`` → Eq. 1 for one document (ties count ½)."""
    return grade("rank loss of one document",
                 lambda: _per_document(rank_loss_one, "rankloss", 11, "rank_loss_one")).passed


def check_average_precision(average_precision_one):
    """``average_precision_one(scores, y)`` → the document's average precision (ties
    pessimistic, Sec. 4)."""
    return grade("average precision of one document",
                 lambda: _per_document(average_precision_one, "MAP", 12,
                                       "average_precision_one")).passed


def check_coverage(coverage_one):
    """``coverage_one(scores, y)`` → max_{k ∈ y} rank(k) − 1 with rank(k) = #{l : s_l ≥ s_k}."""
    return grade("coverage of one document",
                 lambda: _per_document(coverage_one, "coverage", 13, "coverage_one")).passed


def check_pwe_excluded(excluded):
    """``excluded(Y)`` → the boolean mask of documents PWE leaves out (no (relevant, irrelevant)
    pair: |y||ȳ| = 0)."""
    def attempt():
        for rng, dtype in zip(case_rngs(14, 4), (np.int64, np.float64, np.int32, np.int8)):
            n, L = rng.integers(4, 12), rng.integers(2, 9)
            Y = (rng.random((n, L)) < rng.uniform(0.2, 0.8)).astype(dtype)
            Y[0], Y[1] = 0, 1                       # one without relevant labels, one all relevant
            Y = Y[rng.permutation(n)]
            answer = run(excluded, ("Y", Y))
            count = np.count_nonzero(Y, axis=1)
            judge(answer, (count == 0) | (count == L), f"the mask for n = {n}, L = {L}", [
                (count == 0, "a document whose labels are all relevant has no pair either"),
                (count == L, "a document with no relevant label has no pair either")], kind="b")
        return "4 random label matrices (n, L and dtypes varied), Y unchanged"
    return grade("PWE's excluded documents", attempt).passed


def check_best_update(best_update):
    """``best_update(curve)`` → (update of the lowest rank loss, final − best rank loss)."""
    def attempt():
        for rng in case_rngs(15, 5):
            size = int(rng.integers(2, 12))
            updates = list(np.cumsum(rng.integers(20, 400, size=size)).tolist())
            rankloss = list(rng.uniform(0.05, 0.4, size=size).round(6).tolist())
            answer = pair(run(best_update, ("curve", {"updates": updates, "rankloss": rankloss})),
                          "best_update's result")
            best = int(np.argmin(rankloss))
            judge(answer[0], updates[best], f"the update of {size} evaluations", [
                (best, "that is the position in the list, not the update's number")], kind="biuf")
            rise = rankloss[-1] - rankloss[best]
            judge(answer[1], rise, "final − best rank loss", [
                (-rise, "the sign is flipped: it is final minus best")], kind="biuf")
        return "5 random curves (lengths and update numbers varied), curve unchanged"
    return grade("where over-fitting starts", attempt).passed


def _input_dropout_kept(input_dropout, X, rate, seed):
    """The kept stored entries of one call, after checking type, shape, zeros and the scale."""
    answer = run(input_dropout, ("X", X), ("rate", rate), ("rng", np.random.default_rng(seed)))
    what = f"the dropped-out X at rate {rate}"
    if answer is None:
        raise NotYet(NO_ANSWER)
    if not sp.issparse(answer):
        raise NotYet(f"{what} is a {type(answer).__name__}; keep it sparse (a CSR matrix like X)")
    dense, original = judge_shape(answer, X.toarray(), what).astype(float), X.toarray()
    if np.any(dense[original == 0] != 0):
        raise NotYet(f"{what}: a zero input became nonzero")
    kept = dense[original != 0] != 0
    if np.any(kept) and np.allclose(dense[original != 0][kept], original[original != 0][kept]):
        raise NotYet(f"{what}: the kept entries are not scaled")
    if rate != 0.5 and np.any(kept) and close(dense[original != 0][kept],
                                              original[original != 0][kept] / rate):
        raise NotYet(f"{what}: kept entries are scaled by 1/rate; the scale must keep each "
                     "entry's expected value")
    judge(dense[original != 0][kept], original[original != 0][kept] / (1 - rate),
          f"the kept entries at rate {rate}")
    return kept


def check_input_dropout(input_dropout):
    """``input_dropout(X, rate, rng)`` → CSR X with each stored value kept ×1/(1 − rate) or
    dropped, independently, with the coins drawn from ``rng``."""
    def attempt():
        X = sparse_rows(np.random.default_rng(16), 80, 60, density=0.25)
        structure = (X.toarray() != 0).astype(float)
        for rate in RATES:
            kept = [_input_dropout_kept(input_dropout, X, rate, seed) for seed in range(4)]
            grids = np.zeros((4,) + X.shape, dtype=bool)
            for grid, k in zip(grids, kept):
                grid[structure > 0] = k
            _judge_kept(grids, rate, "feature", "document", structure, "stored entries")
            _judge_generator(lambda seed: _input_dropout_kept(input_dropout, X, rate, seed))
        return (f"rates {', '.join(map(str, RATES))}: kept fraction, independence across "
                "features and documents, the generator passed in; X unchanged")
    return grade("input dropout on a sparse X", attempt).passed


def _f1(y, predicted):
    both, size = np.sum(y & predicted), y.sum() + predicted.sum()
    return 1.0 if size == 0 else 2 * both / size


def check_f1_threshold(best_threshold_one):
    """``best_threshold_one(scores, y)`` → a threshold t whose prediction s > t has the best F1."""
    def attempt():
        for scores, Y in _documents(17, count=3, n=10):
            best = optimal_thresholds(scores, Y)
            for s, y, b in zip(scores, Y, best):
                answer = run(best_threshold_one, ("scores", s), ("y", y))
                t = float(judge_shape(answer, 0.0, "the threshold"))
                relevant = y > 0
                if _f1(relevant, s > t) < _f1(relevant, s > b) - 1e-12:
                    raise NotYet(f"on a document with L = {len(y)}, |y| = {relevant.sum()} your "
                                 f"threshold {t:.3f} gives F1 {_f1(relevant, s > t):.3f}, and "
                                 f"{_f1(relevant, s > b):.3f} is possible")
        return "3 cases of 10 random documents (L from 3 to 12, ties), inputs unchanged"
    return grade("F1-optimal threshold of one document", attempt).passed


def check_ridge(ridge_solve):
    """``ridge_solve(Z, t, lam)`` → θ minimising ‖Z θ − t‖² + λ ‖θ‖² (Eq. 5 as mlnn solves it)."""
    def attempt():
        for rng, lam in zip(case_rngs(18, 5), (3.0, 0.5, 100.0, 20.0, 1.0)):
            M, K = int(rng.integers(8, 50)), int(rng.integers(2, 8))
            Z, t = rng.normal(size=(M, K)), rng.normal(size=M)
            answer = run(ridge_solve, ("Z", Z), ("t", t), ("lam", lam))
            def solved(weight):
                return ridge(Z, t, weight, tol=1e-14)[0]
            judge(answer, solved(lam), f"θ for Z of shape {(M, K)}, λ = {lam}", [
                (solved(0.0), "the penalty λ‖θ‖² is missing"),
                (solved(lam / 2), "the penalty counts half: λ‖θ‖² has weight λ here"),
                (solved(2 * lam), "the penalty counts twice: λ‖θ‖² has weight λ here"),
                (solved(3.0), "θ does not follow the λ passed in"),
                (solved(lam * M), "that θ averages the squared error over the M documents (the "
                                  "paper's 1/(2M) scale); Eq. 5 is solved here with the plain sum "
                                  "of squares")])
        return "5 random cases (Z's shape and λ varied), inputs unchanged"
    return grade("ridge regression of Eq. 5", attempt).passed


def check_better_than_paper(better_than_paper):
    """``better_than_paper(measure, ours, paper)`` → the relative difference, > 0 when ours is
    better."""
    def attempt():
        rng = np.random.default_rng(19)
        for measure in MEASURES:
            ours, paper = rng.uniform(0.02, 20, size=2).round(4)
            answer = run(better_than_paper, ("measure", measure), ("ours", ours),
                         ("paper", paper))
            sign = -1 if measure in LOWER_IS_BETTER else 1
            judge(answer, sign * (ours - paper) / paper, f"the difference for {measure}", [
                (-sign * (ours - paper) / paper, "the sign is wrong for this measure "
                 "(is lower or higher better?)"),
                (sign * (ours - paper), "it is not relative to the paper's value"),
                (sign * (ours - paper) / ours, "it is relative to our value, not the paper's")],
                  kind="biuf")
        return f"the {len(MEASURES)} measures with random values"
    return grade("better than the paper by", attempt).passed


# ---------------------------------------------------------------------------------------------
# notebook 08: comparing methods over datasets (Demšar 2006)

def check_average_ranks(average_ranks_by_hand):
    """``average_ranks_by_hand(values, lower_is_better)`` → R_j, the mean rank (1 = best, ties
    averaged) of each method (column) over the datasets (rows)."""
    def attempt():
        for rng, lower in zip(case_rngs(20, 6), (True, False) * 3):
            N, k = rng.integers(2, 9), rng.integers(2, 9)
            values = rng.integers(1, 5, size=(N, k)) / 10.0      # few values: ties occur
            answer = run(average_ranks_by_hand, ("values", values), ("lower_is_better", lower))
            what = f"R for {N} datasets × {k} methods with lower_is_better={lower}"
            judge(answer, average_ranks(values, lower), what, [
                (average_ranks(values, not lower), "the ranks run the wrong way")])
        return "6 random tables (sizes, ties and direction varied), values unchanged"
    return grade("average ranks with ties", attempt).passed


def check_friedman(friedman_chi2):
    """``friedman_chi2(R, N)`` → Friedman's χ²_F from the average ranks R of k methods over N
    datasets (Demšar 2006, Sec. 3.2.2)."""
    def attempt():
        for rng in case_rngs(21, 6):
            N, k = int(rng.integers(2, 12)), int(rng.integers(2, 10))
            R = average_ranks(rng.random((N, k)), True)
            answer = run(friedman_chi2, ("R", R), ("N", N))
            judge(answer, friedman_test(R, N).chi2, f"χ²_F for k = {k} methods, N = {N}")
        return "6 random cases (k and N varied), R unchanged"
    return grade("Friedman's statistic by hand", attempt).passed


def check_critical_difference(nemenyi_cd):
    """``nemenyi_cd(k, N, q_alpha)`` → Nemenyi's CD = q_α √(k (k+1) / (6 N)) (Demšar 2006)."""
    def attempt():
        for rng in case_rngs(22, 6):
            k, N = int(rng.integers(2, 11)), int(rng.integers(2, 60))
            q = float(rng.uniform(1.5, 4.0))
            answer = run(nemenyi_cd, ("k", k), ("N", N), ("q_alpha", q))
            reference = q * np.sqrt(k * (k + 1) / (6.0 * N))
            judge(answer, reference, f"CD for k = {k}, N = {N}, q_α = {q:.3f}", [
                (critical_difference(k, N), "it does not follow the q_α passed in"),
                (critical_difference(k, N, 0.10), "it does not follow the q_α passed in")])
        return "6 random cases (k, N and q_α varied)"
    return grade("Nemenyi's critical difference", attempt).passed
