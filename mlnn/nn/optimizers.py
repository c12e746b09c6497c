r"""Gradient-descent update rules, each on its own with explicit, named state (paper Sec. 3.5).

A rule is a small object: its hyper-parameters, ``new_state(theta)`` (the state of one
parameter) and ``update(theta, g, state)``, one step in place with gradient g (the contract
below):

SGD          θ ← θ − η g                                  (the paper's Eq. 4)
Momentum     v ← μ v − η g;  θ ← θ + v                    (classical)
             v ← μ v − η g;  θ ← θ + μ v − η g            (Nesterov, in the form of Sutskever
             et al. 2013 / Bengio et al. 2013 that needs no look-ahead point)
AdaGrad      G ← G + g²;  θ ← θ − η0 g / (sqrt(G) + ε)    (Duchi et al. 2011)

AdaGrad is the paper's per-parameter learning rate η_{i,τ} = η0 / sqrt(Σ_{t≤τ} Δ²_{i,t}), with a
small ε that only guards the division while G is 0. The paper writes out SGD and AdaGrad and
names momentum; Nesterov's form is ours.

The contract of a rule with its engine, :class:`mlnn.nn.lazy_updates.LazyRows` (a new rule is
one class keeping it, registered in :data:`OPTIMIZERS`; a wrong answer is refused once, on first
use, with one :class:`~mlnn.base.errors.MLNNError` naming the rule):

* **Constructor** ``Rule(learning_rate, option=default, ...)``: η first, then the rule's own
  options by name (no ``*args``, ``**kwargs``); ``momentum`` and ``nesterov`` are
  :class:`Momentum`'s alone. η, μ and Nesterov's form are checked once where they enter
  (:mod:`mlnn.model.params`); a rule checks only its other options and holds nothing else.
* **new_state(theta)**: a dict of NumPy arrays by name, each of θ's shape (passed row by row)
  or 0-d (one value of the parameter, passed whole, such as Adam's step count t);
  ``last_step`` is the engine's name.
* **update(theta, g, state, work=None)**: one step, changing θ and the state arrays in place
  (``theta -= ...``), never rebinding them (checked: the first step with a nonzero gradient
  must move θ). ``work`` holds ``work_arrays`` (int ≥ 0) reused arrays shaped like θ for the
  intermediate results; without them ``update`` makes its own.
* **idle_steps(gamma)** (optional): what a step does to a row whose ∂J/∂θ is zero (g = γ θ):
  :data:`UNCHANGED`; a :class:`Linear` map A, (θ, s) ← A (θ, s) with A 2 × 2 and s a state
  array of θ's shape, or θ ← a θ with A = [[a]], so Δ steps are A^Δ; or :data:`MUST_RUN` (no
  closed form). Anything else is refused; a rule without it is taken as MUST_RUN (always right,
  only slower).
"""

import inspect
from dataclasses import dataclass

import numpy as np

from mlnn.base.errors import MLNNError
from mlnn.base.validation import check_positive_float, check_registered

#: ``idle_steps``: a step with ∂J/∂θ = 0 leaves the row of θ and of its state as they are.
UNCHANGED = "unchanged"

#: ``idle_steps``: a step with ∂J/∂θ = 0 has no closed form here; it must run on every row.
MUST_RUN = "must run"


@dataclass(frozen=True)
class Linear:
    """``idle_steps``: (θ, s) ← A (θ, s), A 2 × 2, s the row of state array ``slot``; or
    θ ← a θ with A = [[a]] and no slot (other state arrays stay)."""

    A: np.ndarray
    slot: str = None


def work_or_new(theta, work, count):
    """``work``, or ``count`` new arrays shaped like θ when it is None."""
    return [np.empty_like(theta) for _ in range(count)] if work is None else work


class SGD:
    """Stochastic gradient descent: θ ← θ − η g. No state."""

    work_arrays = 1        # η g

    def __init__(self, learning_rate):
        self.learning_rate = learning_rate

    def new_state(self, theta):
        return {}

    def update(self, theta, g, state, work=None):
        (step,) = work_or_new(theta, work, 1)
        theta -= np.multiply(self.learning_rate, g, out=step)     # θ ← θ − η g

    def idle_steps(self, gamma):
        """g = γ θ: θ ← (1 − ηγ) θ; nothing without decay."""
        return UNCHANGED if gamma == 0 else Linear(np.array([[1 - self.learning_rate * gamma]]))


class Momentum:
    """Classical momentum, v ← μ v − η g; θ ← θ + v, or Nesterov's, θ ← θ + μ v − η g; state
    ``velocity`` v."""

    work_arrays = 2        # η g and, for Nesterov, μ v − η g

    def __init__(self, learning_rate, momentum, nesterov=False):
        self.learning_rate, self.momentum, self.nesterov = learning_rate, momentum, nesterov

    def new_state(self, theta):
        return {"velocity": np.zeros_like(theta)}

    def update(self, theta, g, state, work=None):
        v, (eta_g, step) = state["velocity"], work_or_new(theta, work, 2)
        np.multiply(self.learning_rate, g, out=eta_g)     # η g
        v *= self.momentum                                # μ v
        v -= eta_g                                        # v ← μ v − η g
        if self.nesterov:
            np.multiply(self.momentum, v, out=step)       # μ v
            step -= eta_g                                 # μ v − η g
            theta += step                                 # θ ← θ + μ v − η g
        else:
            theta += v                                    # θ ← θ + v

    def idle_steps(self, gamma):
        """g = γ θ: (θ, v) ← A (θ, v), A = :func:`momentum_transition` (velocity moves θ even
        without decay)."""
        return Linear(momentum_transition(self, gamma), "velocity")


def momentum_transition(rule, gamma):
    """A with (θ, v) ← A (θ, v): one momentum step of a row whose ∂J/∂θ is zero (g = γ θ)."""
    mu, eta_gamma = rule.momentum, rule.learning_rate * gamma
    if rule.nesterov:      # v' = μ v − ηγ θ;  θ' = θ + μ v' − ηγ θ
        return np.array([[1 - eta_gamma * (1 + mu), mu * mu], [-eta_gamma, mu]])
    return np.array([[1 - eta_gamma, mu], [-eta_gamma, mu]])   # v' = μ v − ηγ θ;  θ' = θ + v'


class AdaGrad:
    """G ← G + g²;  θ ← θ − η0 g / (sqrt(G) + ε)  (Duchi et al. 2011; paper Sec. 3.5); state
    ``sum_squares`` G."""

    work_arrays = 1        # g², then sqrt(G), ..., η0 g / (sqrt(G) + ε)

    def __init__(self, learning_rate, epsilon=1e-8):
        self.learning_rate = learning_rate
        self.epsilon = check_positive_float(epsilon, "epsilon")     # its own option

    def new_state(self, theta):
        return {"sum_squares": np.zeros_like(theta)}

    def update(self, theta, g, state, work=None):
        G, (step,) = state["sum_squares"], work_or_new(theta, work, 1)
        G += np.square(g, out=step)               # G ← G + g²
        np.sqrt(G, out=step)                      # sqrt(G)
        step += self.epsilon                      # sqrt(G) + ε
        np.divide(g, step, out=step)              # g / (sqrt(G) + ε)
        step *= self.learning_rate                # η0 g / (sqrt(G) + ε)
        theta -= step                             # θ ← θ − η0 g / (sqrt(G) + ε)

    def idle_steps(self, gamma):
        """g = 0 changes neither G nor θ; g = γ θ adds (γθ)² to G at every step: no closed form."""
        return UNCHANGED if gamma == 0 else MUST_RUN


#: The rules by name (the ``optimizer`` of :mod:`mlnn.model.params`); a new rule is added here.
OPTIMIZERS = {"sgd": SGD, "momentum": Momentum, "adagrad": AdaGrad}

#: The names of :class:`Momentum`'s hyper-parameters, which no other rule's option may take.
MOMENTUM_OPTIONS = ("momentum", "nesterov")


def option_names(kind):
    """The options of the rule class ``kind``: its constructor's arguments after η."""
    return list(inspect.signature(kind).parameters)[1:]


def rule_class(name, option="optimizer"):
    """The class registered as ``name`` in :data:`OPTIMIZERS`, its constructor checked against
    the contract; an unknown name is refused naming ``option``."""
    kind = OPTIMIZERS[check_registered(name, option, OPTIMIZERS)]
    if not isinstance(kind, type):
        raise MLNNError(f"update rule {name!r}: registered as {kind!r}, not a class")
    arguments = list(inspect.signature(kind).parameters.values())
    if not arguments or arguments[0].name != "learning_rate":
        raise MLNNError(f"update rule {name!r}: its constructor must take η first, named "
                        f"learning_rate; it takes {[a.name for a in arguments]}")
    if any(a.kind not in (a.POSITIONAL_OR_KEYWORD, a.KEYWORD_ONLY) for a in arguments):
        raise MLNNError(f"update rule {name!r}: its constructor must name each option (no "
                        "*args, **kwargs or positional-only arguments)")
    taken = sorted(set(MOMENTUM_OPTIONS) & {a.name for a in arguments})
    if taken and not issubclass(kind, Momentum):
        raise MLNNError(f"update rule {name!r}: its option {taken[0]!r} is the name of the "
                        "hyper-parameter of Momentum; name it otherwise")
    return kind


def get_rule(name, learning_rate, **options):
    """The rule ``name`` with η = ``learning_rate`` and its ``options``, e.g.
    ``get_rule("momentum", 0.01, momentum=0.9)``; an option the rule does not take is refused."""
    kind = rule_class(name)
    known = option_names(kind)
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise MLNNError(f"optimizer {name!r} has no option {unknown[0]!r}; its options: "
                        f"{known or 'none'}")
    return kind(learning_rate, **options)


def _refuse(rule, problem):
    raise MLNNError(f"update rule {type(rule).__name__}: {problem}")


def work_count(rule):
    """The rule's ``work_arrays`` (0 if it says nothing), an int ≥ 0."""
    count = getattr(rule, "work_arrays", 0)
    if isinstance(count, (bool, np.bool_)) or not isinstance(count, (int, np.integer)) \
            or count < 0:
        _refuse(rule, f"work_arrays must be an integer >= 0, got {count!r}")
    return int(count)


def checked_state(rule, theta):
    """``rule.new_state(theta)``, refused unless a dict of arrays of θ's shape or 0-d."""
    state = rule.new_state(theta)
    if not isinstance(state, dict):
        _refuse(rule, f"new_state must return a dict of arrays, got {type(state).__name__}")
    for slot, array in state.items():
        if not isinstance(slot, str) or slot == "last_step":
            _refuse(rule, f"new_state names a state array {slot!r}; a name is a string other "
                          "than 'last_step', which is the engine's")
        shape = getattr(array, "shape", None)
        if not isinstance(array, np.ndarray) or shape not in (theta.shape, ()):
            _refuse(rule, f"new_state's {slot!r} must be a NumPy array of θ's shape "
                          f"{theta.shape} or a 0-d array, got {type(array).__name__} of shape "
                          f"{shape}")
    return state


def checked_idle_steps(rule, gamma, state):
    """``rule.idle_steps(gamma)`` (MUST_RUN without one), refused unless UNCHANGED, MUST_RUN or
    a Linear map that fits ``state``."""
    idle_steps = getattr(rule, "idle_steps", None)
    answer = MUST_RUN if idle_steps is None else idle_steps(gamma)
    if isinstance(answer, str) and answer in (UNCHANGED, MUST_RUN):
        return answer
    if not isinstance(answer, Linear):
        _refuse(rule, f"idle_steps answered {answer!r}; it must answer UNCHANGED, MUST_RUN or "
                      "a Linear map")
    A, slot = answer.A, answer.slot
    if not isinstance(A, np.ndarray) or A.shape != ((1, 1) if slot is None else (2, 2)) \
            or A.dtype.kind not in "iuf" or not np.all(np.isfinite(A)):
        shown = A.tolist() if isinstance(A, np.ndarray) else A        # on one line
        _refuse(rule, f"idle_steps answered Linear({shown!r}, {slot!r}); A must be a finite "
                      "NumPy array, 1 × 1 without a state slot, 2 × 2 with one")
    rows = sorted(name for name, array in state.items() if array.ndim)
    if slot is not None and slot not in rows:
        _refuse(rule, f"idle_steps answered a Linear map of the state array {slot!r}, which is "
                      f"not one of θ's shape in its state: {rows}")
    return answer


def check_moved(rule, moved):
    """Refuse an ``update`` that left every θ as it was in a step with a nonzero gradient."""
    if not moved:
        _refuse(rule, "θ did not change in a step with a nonzero gradient: update must change "
                      "theta in place (theta -= ...), not bind a new array to the name")
