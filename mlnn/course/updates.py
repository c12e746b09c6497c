"""Graders of notebook 02b's exercises (Sec. 3.5): RMSProp as a step and as an mlnn optimizer,
momentum's closed-form catch-up, inverted dropout (judged by its distribution: the kept fraction
at several rates, independent coins for units and documents, the generator passed in) and
AdaGrad's per-feature learning rates. The notebooks call them through :mod:`mlnn.course.graders`.
"""

import numpy as np

from mlnn.course.grading import (NotYet, as_array, binomial_z, call, case_rngs, close, dispersion,
                                 grade, judge, judge_shape, pair, run)
from mlnn.nn.network import RowSparseGradient
from mlnn.nn.optimizers import AdaGrad, Optimizer


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
            judge_kept(kept, rate, "unit", "document")
            judge_generator(lambda seed: _dropout_masks(inverted_dropout, h, rate, seed, 1)[0])
        return (f"rates {', '.join(map(str, RATES))}: kept fraction, independence across units "
                "and documents, the generator passed in; h unchanged")
    return grade("inverted dropout", attempt).passed


def judge_kept(kept, rate, column, row, trials=None, noun="units"):
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


def judge_generator(masks_of_seed):
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
