"""Graders of the update rules of Sec. 3.5: AdaGrad with its state (notebook 01b) and its
per-feature rates (03), RMSProp as a loop and as an mlnn rule on named parameters, momentum's
catch-up in closed form (02b)."""

import functools
import time

import numpy as np

from mlnn.course.grading import (CPU_SLACK, NO_ANSWER, OURS, CaseRng, Mistake, NotYet,
                                 StudentError, agree, as_array, call, case_rngs, expect_class,
                                 expect_items, expect_tuple, make_grader, pristine, run, variant,
                                 within)
from mlnn.course.drivers import drive_adagrad
from mlnn.course.pieces import Reference, piece
from mlnn.course.rules import STEPS, rule_problem
from mlnn.course.standins import drive_rule
from mlnn.nn.optimizers import AdaGrad
from mlnn.sandbox.client import cpu_seconds, is_remote


# -- notebook 02b: RMSProp, as a loop and as an mlnn rule ------------------------------------------

def _rmsprop_literal(theta, G, g, eta, rho, eps, inside=False, adagrad=False, swapped=False):
    """One RMSProp step by a literal loop over the entries, or with ε ``inside`` the root, with
    AdaGrad's sum of squares (``adagrad``), or ρ and 1 − ρ ``swapped``."""
    theta, G = np.array(theta, dtype=float), np.array(G, dtype=float)
    keep = 1 - rho if swapped else rho
    for i in np.ndindex(theta.shape):
        G[i] = G[i] + g[i] ** 2 if adagrad else keep * G[i] + (1 - keep) * g[i] ** 2
        theta[i] -= eta * g[i] / (np.sqrt(G[i] + eps) if inside else np.sqrt(G[i]) + eps)
    return theta, G


def _rmsprop_steps(step, *named, name):
    """(θ, G) after the student's ``step`` took every gradient of the case in turn."""
    values = dict(named)
    state = (values["theta"], values["G"])
    for g in values["grads"]:
        state = expect_tuple(run(step, ("theta", state[0]), ("G", state[1]), ("g", g),
                                 *[(k, values[k]) for k in ("eta", "rho", "eps")],
                                 name=name), ("θ", "G"))
        state = tuple(as_array(a, "θ and G") for a in state)
    return state


#: (η, ρ, ε) of the RMSProp cases: ε large enough that where it is added shows.
RMSPROP_SETTINGS = ((0.01, 0.9, 1e-8), (0.1, 0.5, 0.1), (0.003, 0.99, 1.0), (0.05, 0.7, 1e-3))


def _rmsprop_cases():
    """``rmsprop_step(theta, G, g, eta, rho, eps)`` → new (θ, G), inputs unchanged; six steps."""
    for rng, (eta, rho, eps) in zip(case_rngs(6, 4), RMSPROP_SETTINGS):
        shape = (rng.integers(2, 6), rng.integers(2, 5))
        grads = rng.normal(size=(STEPS,) + shape) * (rng.random(shape) < 0.7)
        yield (f"after {STEPS} steps with η = {eta}, ρ = {rho}, ε = {eps:g}", [
            ("theta", rng.normal(size=shape)), ("G", rng.random(shape) * rng.integers(0, 2)),
            ("grads", grads), ("eta", eta), ("rho", rho), ("eps", eps)])


INSIDE = "ε is inside the square root; it belongs outside, added to the root"
SWAPPED = ("ρ and 1 − ρ are swapped: G keeps the fraction ρ of its old value and takes 1 − ρ of "
           "the new g²")


check_rmsprop = make_grader("check_rmsprop", "RMSProp against a dense loop", _rmsprop_literal,
                            _rmsprop_cases, [
    Mistake(INSIDE, variant(_rmsprop_literal, inside=True)),
    Mistake(SWAPPED, variant(_rmsprop_literal, swapped=True))],
                            runner=_rmsprop_steps, expect=expect_items(("θ", "G"), (1, 0)),
                            name="rmsprop_step")


def rmsprop_rule(keep_G=True, shared=False, **mistake):
    """RMSProp as mlnn writes a rule (by the literal loop), or with one mistake: G not kept,
    one G ``shared`` by the parameters of a shape, or a ``mistake`` of :func:`_rmsprop_literal`."""
    class RMSProp:
        def __init__(self, learning_rate, rho=0.9, epsilon=1e-8):
            self.learning_rate, self.rho, self.epsilon = learning_rate, rho, epsilon
            self.shared = {}

        def new_state(self, theta):
            G = np.zeros_like(theta)
            return {"mean_square": self.shared.setdefault(theta.shape, G) if shared else G}

        def update(self, theta, g, state):
            G = state["mean_square"]
            theta[...], new_G = _rmsprop_literal(theta, G, g, self.learning_rate, self.rho,
                                                 self.epsilon, **mistake)
            if keep_G:
                G[...] = new_G
    return RMSProp


RMSPropRule = rmsprop_rule()


def driven(driver, Class, *args, name):
    """``driver(Class, *args)``, for a class answer of another process by the driver of that
    process on the class itself (its state stays where it lives between calls, as in a
    notebook); a :class:`~mlnn.course.drivers.Misstep` the driver raises is the hint."""
    if is_remote(Class):
        driver, Class = Class.answer.get(driver.__name__), Class.ref
    try:
        return call(driver, Class, *args, name=name)
    except StudentError as error:
        if error.kind == "Misstep":
            raise NotYet(str(error.error)) from None
        raise


def _drive_rule(Rule, *named, name):
    """The parameters after the rule's steps, run where mlnn runs a rule
    (:func:`~mlnn.course.standins.drive_rule`)."""
    settings, start, sequence = (value for _, value in named)
    expect_class(Rule, "RMSProp", {"new_state": "new_state(theta)",
                                   "update": "update(theta, g, state)"})
    params = driven(drive_rule, Rule, settings, start, sequence, name=name)
    if params is None:
        raise NotYet(NO_ANSWER)
    for key in params:
        if np.array_equal(params[key], start[key]):
            raise NotYet(f"{key} did not change in {STEPS} steps: update must change θ (and "
                         "its state) in place")
    return params


def _rule_cases():
    """``RMSProp(learning_rate, rho, epsilon)`` with ``new_state(theta)`` and ``update(theta, g,
    state)``: six steps on four parameters (W1's gradients row-sparse, b1 and b2 of one shape)."""
    for rng, settings in zip(case_rngs(7, 3), RMSPROP_SETTINGS[1:]):
        params, sequence = rule_problem(rng, 7, 3, 3)
        yield (f"after {STEPS} steps with η, ρ, ε = {settings}",
               [("settings", settings), ("params", params), ("sequence", sequence)])


check_rmsprop_rule = make_grader("check_rmsprop_rule", "RMSProp as an mlnn update rule",
                                 RMSPropRule, _rule_cases, [
    Mistake("G starts from 0 at every step: keep it in the state and write the new G into that "
            "array, in place (G[...] = ...); a new array put in state[\"mean_square\"] is never "
            "seen by the executor, which keeps the arrays new_state gave",
            rmsprop_rule(keep_G=False)),
    Mistake("every parameter needs its own accumulator", rmsprop_rule(shared=True)),
    Mistake("G sums the squares (that is AdaGrad); RMSProp's G forgets the old ones",
            rmsprop_rule(adagrad=True)),
    Mistake(INSIDE, rmsprop_rule(inside=True)),
    Mistake(SWAPPED, rmsprop_rule(swapped=True))],
                                 runner=_drive_rule, expect=expect_items(("b1", "b2", "W2", "W1")),
                                 name="RMSProp(learning_rate, rho, epsilon)")


# -- notebook 02b: momentum's catch-up over skipped steps ------------------------------------------

def _momentum_skipped(theta, v, mu, eta, gamma, skipped):
    """Classical momentum with zero ∂J/∂θ and weight decay γ: Δ steps g = γ θ, v ← μ v − η g,
    θ ← θ + v make (θ, v) ← A^Δ (θ, v) with A = [[1 − η γ, μ], [−η γ, μ]] (tested equal to the
    literal loop)."""
    A = np.linalg.matrix_power(np.array([[1 - eta * gamma, mu], [-eta * gamma, mu]]), skipped)
    theta, v = np.asarray(theta, dtype=float), np.asarray(v, dtype=float)
    return A[0, 0] * theta + A[0, 1] * v, A[1, 0] * theta + A[1, 1] * v


def run_closed_form(function, *named, name="function"):
    """:func:`~mlnn.course.grading.run`; on a case of a million skipped steps first the work
    of a billion, whatever form it takes: no loop over the steps, no array of them."""
    if dict(named)["skipped"] >= 10 ** 6:
        many = [(label, 10 ** 9 if label == "skipped" else value) for label, value in named]
        within(function, *many, name=name, memory=1 << 20, reference=_momentum_skipped,
               hint="your catch-up does work for every skipped step (a loop over the Δ steps, "
                    "or arrays of Δ entries): the closed form costs the same whatever Δ is")
    return run(function, *named, name=name)


def _momentum_cases():
    """``momentum_skip(theta, v, mu, eta, gamma, skipped)`` → (θ, v) after ``skipped`` classical
    momentum steps with zero ∂J/∂θ and weight decay γ, in closed form."""
    settings = ((0.9, 0.1, 0.0, 0), (0.5, 0.1, 0.0, 1), (0.3, 0.05, 0.0, 2), (0.75, 0.1, 0.0, 7),
                (0.99, 0.01, 0.0, 40), (0.6, 0.2, 0.5, 1), (0.9, 0.1, 0.01, 7),
                (0.6, 0.3, 0.2, 40), (0.9, 0.05, 1e-3, 40), (0.99, 0.01, 0.0, 10 ** 6))
    for rng, (mu, eta, gamma, skipped) in zip(case_rngs(8, len(settings)), settings):
        theta = rng.normal(size=rng.integers(1, 6))
        v = rng.normal() * rng.uniform(0.5, 2, size=theta.shape)
        yield (f"after Δ = {skipped} steps with μ = {mu}, η = {eta}, γ = {gamma}", [
            ("theta", theta), ("v", v), ("mu", mu), ("eta", eta), ("gamma", gamma),
            ("skipped", skipped)])


check_momentum_skip = make_grader("check_momentum_skip", "momentum's catch-up in closed form",
                                  _momentum_skipped, _momentum_cases, [
    Mistake("θ moves by the whole v at every skipped step, but v shrinks by μ at each",
            lambda t, v, mu, eta, gamma, d: (t + d * v, mu ** d * v)),
    Mistake("the factor μ/(1 − μ) does not follow the μ passed in",
            lambda t, v, mu, eta, gamma, d: (t + 9 * (1 - mu ** d) * v, mu ** d * v)),
    Mistake("v must shrink by μ at every skipped step",
            lambda t, v, mu, eta, gamma, d: (t + mu * (1 - mu ** d) / (1 - mu) * v, v)),
    Mistake("one step too many: Δ skipped steps apply the step Δ times, not Δ + 1",
            lambda t, v, mu, eta, gamma, d: _momentum_skipped(t, v, mu, eta, gamma, d + 1)),
    Mistake("one step too few: Δ skipped steps apply the step Δ times, not Δ − 1",
            lambda t, v, mu, eta, gamma, d: _momentum_skipped(t, v, mu, eta, gamma,
                                                               max(d - 1, 0))),
    Mistake("v is one step ahead of θ: after Δ steps v has shrunk by μ^Δ, not μ^(Δ + 1)",
            lambda t, v, mu, eta, gamma, d: (_momentum_skipped(t, v, mu, eta, gamma, d)[0],
                                             _momentum_skipped(t, v, mu, eta, gamma, d + 1)[1])),
    Mistake("the weight decay is missing: a skipped step still has the gradient γ θ, which "
            "changes v and θ",
            lambda t, v, mu, eta, gamma, d: _momentum_skipped(t, v, mu, eta, 0, d))],
                                  expect=expect_items(("θ", "v")), runner=run_closed_form)


# -- notebook 03: AdaGrad's per-feature rates ------------------------------------------------------

def _adagrad_rates(grads, eta0):
    """η0 / (√G_t + ε) after each step, by mlnn's AdaGrad rule on one row of D entries."""
    rule, theta = AdaGrad(eta0), np.zeros(grads.shape[1])
    state, rates = rule.new_state(theta), []
    for g in grads:
        rule.update(theta, g, state)
        rates.append(eta0 / (np.sqrt(state["sum_squares"]) + rule.epsilon))
    return np.array(rates).reshape(grads.shape)


def _rates_cases():
    """``effective_rates(grads, eta0)`` → (T, D) AdaGrad step sizes η0 / (√G_t + ε) after each
    step, G_t the sum of squares of the gradients up to t (Sec. 3.5)."""
    for rng, eta0 in zip(case_rngs(10, 5), (0.1, 0.5, 0.03, 1.0, 0.2)):
        T = int(rng.integers(1, 12))
        D = int(rng.choice([d for d in range(1, 8) if d != T]))    # not square
        grads = rng.normal(size=(T, D)) * (rng.random((T, D)) < 0.5)
        yield f"the rates for T = {T} steps, D = {D}, η0 = {eta0}", [("grads", grads),
                                                                     ("eta0", eta0)]


check_adagrad_rates = make_grader("check_adagrad_rates", "AdaGrad's per-feature learning rates",
                                  _adagrad_rates, _rates_cases, [
    Mistake("each rate uses only the gradient of its own step; AdaGrad accumulates all steps so "
            "far", lambda grads, eta0: eta0 / (np.abs(grads) + 1e-8)),
    Mistake("they are right where a gradient has been seen and off where none has yet: guard "
            "the division with ε = 1e-8, as mlnn's AdaGrad does",
            lambda grads, eta0: eta0 / (np.sqrt(np.cumsum(grads ** 2, axis=0)) + 1e-6)),
    Mistake("the rate divides by G itself; AdaGrad divides by its square root, √G + ε",
            lambda grads, eta0: eta0 / (np.cumsum(grads ** 2, axis=0) + 1e-8)),
    Mistake("ε is added to √G, outside the root",
            lambda grads, eta0: eta0 / np.sqrt(np.cumsum(grads ** 2, axis=0) + 1e-8))],
                                  nonfinite="are infinite or NaN where no gradient has been seen "
                                            "yet: the small ε that guards the division is missing")


# -- notebook 01b: AdaGrad with its state ----------------------------------------------------------

def adagrad_with(rule):
    """An ``AdaGrad(eta0, epsilon)`` class whose step applies ``rule(G, g, η0, ε)`` → (new G,
    step) to each parameter (to W1 on the rows given): one mistake of :data:`ADAGRAD_MISTAKES`."""
    class AdaGrad:
        def __init__(self, eta0, epsilon=1e-8):
            self.eta0, self.epsilon, self.G = eta0, epsilon, {}

        def step(self, params, grads):
            for name, g in grads.items():
                rows, g = g if isinstance(g, tuple) else (slice(None), g)
                G = self.G.setdefault(name, np.zeros_like(params[name]))
                G[rows], step = rule(G[rows], g, self.eta0, self.epsilon)
                params[name][rows] -= step
    return AdaGrad


ADAGRAD_MISTAKES = [
    Mistake("the step divides by G + ε; AdaGrad divides by √G + ε", adagrad_with(
        lambda G, g, eta0, eps: (G + g * g, eta0 * g / (G + g * g + eps)))),
    Mistake("ε belongs outside the square root: √G + ε, not √(G + ε)", adagrad_with(
        lambda G, g, eta0, eps: (G + g * g, eta0 * g / np.sqrt(G + g * g + eps)))),
    Mistake("G is reset at every step; it must accumulate g² over all the steps so far",
            adagrad_with(lambda G, g, eta0, eps: (g * g, eta0 * g / (np.abs(g) + eps)))),
    Mistake("G must include the current gradient: add g² to G before taking the step",
            adagrad_with(lambda G, g, eta0, eps: (G + g * g, eta0 * g / (np.sqrt(G) + eps)))),
    Mistake("the step is η0 g; AdaGrad divides it by √G + ε, per parameter entry",
            adagrad_with(lambda G, g, eta0, eps: (G + g * g, eta0 * g))),
    Mistake("the parameters move uphill: subtract the step", adagrad_with(
        lambda G, g, eta0, eps: (G + g * g, -eta0 * g / (np.sqrt(G + g * g) + eps))))]


#: The wide problem of notebook 01b's AdaGrad: D rows of W1, a few of them in each step's
#: gradient, so that a step doing work on every row of W1 takes far longer than one on its rows.
WIDE_D, WIDE_STEPS, WIDE_ROWS = 1_000_000, 100, 20

WIDE_HINT = ("step does work on every row of W1 (a dense gradient, or a write or copy of all of "
             "W1): only the rows listed in rows have a gradient and may be touched (k × F work "
             "per step instead of D × F)")


@functools.cache
def wide_problem():
    """(η0, ε, parameters, steps) of the wide problem, W1 D × 4, each step's W1 gradient on
    :data:`WIDE_ROWS` rows."""
    rng = np.random.default_rng(2014)
    start = {"W1": rng.normal(size=(WIDE_D, 4)), "b1": rng.normal(size=4),
             "W2": rng.normal(size=(4, 3)), "b2": rng.normal(size=3)}
    steps = [{"W1": (np.sort(rng.choice(WIDE_D, WIDE_ROWS, replace=False)),
                     rng.normal(size=(WIDE_ROWS, 4))), "b1": rng.normal(size=4),
              "W2": rng.normal(size=(4, 3)), "b2": rng.normal(size=3)}
             for _ in range(WIDE_STEPS)]
    return 0.1, 1e-8, start, steps


def _wide_steps(AdaGrad, name):
    """:class:`NotYet` unless ``AdaGrad``, an answer of another process, takes the steps of the
    wide problem, to the same parameters, within twice the CPU time that handing it the
    problem takes there (the same call without steps) and ten times that of mlnn's steps
    here."""
    if name in OURS or not is_remote(AdaGrad) or getattr(AdaGrad, "wide_judged", False):
        return
    AdaGrad.wide_judged = True
    eta0, epsilon, start, steps = wide_problem()
    ours = []
    for _ in range(2):
        params = pristine(start)
        began = time.process_time()
        expected = drive_adagrad(Reference, eta0, epsilon, params, steps, False)
        ours.append(time.process_time() - began)
    with AdaGrad.answer.limited(memory=1 << 40, cpu=60.0) as limited:
        drive, Class = limited.get("drive_adagrad"), limited.get(AdaGrad.__name__).ref
        before = cpu_seconds(limited.pid)
        driven(drive, Class, eta0, epsilon, pristine(start), [], False, name=name)
        limited.cpu = 2 * (cpu_seconds(limited.pid) - before) + 10 * min(ours) + CPU_SLACK
        try:
            got = driven(drive, Class, eta0, epsilon, pristine(start), steps, False, name=name)
        except StudentError as error:
            if error.kind in ("cpu", "wall", "MemoryError"):
                raise NotYet(WIDE_HINT) from None
            raise
    if not agree(got, expected):
        raise NotYet(f"after {WIDE_STEPS} steps on a W1 of {WIDE_D:,} rows the parameters are "
                     "off")


def _drive_adagrad(AdaGrad, *named, name):
    """The parameters after the steps of ``AdaGrad(eta0, epsilon)``
    (:func:`~mlnn.course.standins.drive_adagrad`); an answer of another process right on them
    also on the wide problem (:func:`_wide_steps`)."""
    expect_class(AdaGrad, "AdaGrad", {"step": "step(params, grads)"})
    args = [value for _, value in named]
    params = driven(drive_adagrad, AdaGrad, *args, name=name)
    if all(np.array_equal(params[key], args[2][key]) for key in args[2]):
        raise NotYet(NO_ANSWER)
    if agree(params, drive_adagrad(Reference, *pristine(args))):    # right here: how it works
        _wide_steps(AdaGrad, name)
    return params


def _adagrad_cases():
    """``AdaGrad(eta0, epsilon)`` with ``step(params, grads)``: G ← G + g²,
    θ ← θ − η0 g / (√G + ε) per parameter (Sec. 3.5), W1's gradient given as (rows, values);
    η0 from 0.03 to 1, ε from 1e-8 to 0.5, a step without W1 rows, float32."""
    for number, (eta0, epsilon, (D, F, L), dtype) in enumerate([
            (0.1, 1e-8, (7, 3, 4), np.float64), (0.03, 0.5, (5, 4, 4), np.float64),
            (1.0, 1e-3, (9, 2, 5), np.float64), (0.3, 0.1, (6, 3, 3), np.float32)]):
        start, steps = rule_problem(CaseRng(70, number), D, F, L, dtype, steps=5)
        yield (f"after 5 steps with η0 = {eta0}, ε = {epsilon:g} ({np.dtype(dtype)})",
               [("eta0", eta0), ("epsilon", epsilon), ("params", start), ("steps", steps)])


check_adagrad = piece(make_grader("check_adagrad", "AdaGrad with its state", Reference,
                                  _adagrad_cases, ADAGRAD_MISTAKES, runner=_drive_adagrad,
                                  name="AdaGrad(eta0, epsilon)",
                                  expect=expect_items(("b1", "b2", "W2", "W1"))))
