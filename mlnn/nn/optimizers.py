r"""Gradient-descent update rules, each on its own with explicit, named state (paper Sec. 3.5).

A rule is a small object: its hyper-parameters, ``new_state(theta)`` (the state of one
parameter, a dict of arrays shaped like θ) and ``update(theta, g, state)``, one step in place
with gradient g:

SGD          θ ← θ − η g                                  (the paper's Eq. 4)
Momentum     v ← μ v − η g;  θ ← θ + v                    (classical)
             v ← μ v − η g;  θ ← θ + μ v − η g            (Nesterov, in the form of Sutskever
             et al. 2013 / Bengio et al. 2013 that needs no look-ahead point)
AdaGrad      G ← G + g²;  θ ← θ − η0 g / (sqrt(G) + ε)    (Duchi et al. 2011)

AdaGrad is the paper's per-parameter learning rate η_{i,τ} = η0 / sqrt(Σ_{t≤τ} Δ²_{i,t}), with a
small ε that only guards the division while G is 0. The paper writes out SGD and AdaGrad and
names momentum; Nesterov's form is ours.

Each ``update`` is the one form of its rule, and the one training runs: a few in-place NumPy
operations, each commented with the part of the formula it computes. Its intermediate results go
into ``work``, ``work_arrays`` arrays shaped like θ that the caller passes in and reuses at every
step (:class:`~mlnn.nn.lazy_updates.LazyRows` does), so that a step makes no temporary of θ's
size; called without them (``update(theta, g, state)``), it makes its own.

A rule also says what its steps do to a row whose gradient ∂J/∂θ is zero, so that g = γ θ with
weight decay γ (the rows of W1 whose words a minibatch lacks): ``idle_steps(gamma)`` answers

* :data:`UNCHANGED`: the row and its state stay as they are (SGD and AdaGrad without decay);
* a :class:`Linear` map A: the step is (θ, s) ← A (θ, s) on the row of θ and of a state array s,
  or θ ← a θ, so Δ of them are A^Δ in closed form (SGD with decay: θ ← (1 − ηγ) θ; momentum);
* :data:`MUST_RUN`: no closed form, the step must run (AdaGrad with decay: G grows by (γθ)²).

A rule that has no ``idle_steps`` (a new one, a student's) is taken as :data:`MUST_RUN`: it is
applied to every row at every step, which is always right, only slower.

A rule sees only θ, g and its state. Running it on a network's parameters -- ℓ2 weight decay
(g = ∂J/∂θ + γ θ) and the row-sparse gradient of W1 -- is :class:`mlnn.nn.lazy_updates.LazyRows`,
which wraps a rule: ``LazyRows(AdaGrad(0.01), weight_decay=0.0)``. A new rule is one class with
``new_state`` and ``update`` (and ``idle_steps`` if it can say), registered by name in
:data:`OPTIMIZERS`; its constructor takes η first, then its options (:func:`get_rule`).
"""

import inspect
from dataclasses import dataclass

import numpy as np

from mlnn.base.errors import MLNNError
from mlnn.base.validation import check_bool, check_choice, check_float_in, check_positive_float

__all__ = ["SGD", "Momentum", "AdaGrad", "OPTIMIZERS", "get_rule", "option_names", "UNCHANGED",
           "MUST_RUN", "Linear", "momentum_transition"]

#: ``idle_steps``: a step with ∂J/∂θ = 0 leaves the row of θ and of its state as they are.
UNCHANGED = "unchanged"

#: ``idle_steps``: a step with ∂J/∂θ = 0 has no closed form here; it must run on every row.
MUST_RUN = "must run"


@dataclass(frozen=True)
class Linear:
    """``idle_steps``: a step with ∂J/∂θ = 0 is linear in the row, (θ, s) ← A (θ, s) with A
    2 × 2 and s the row of the state array ``slot``, or θ ← a θ with A = [[a]] and no slot (any
    other state array stays); Δ such steps are A^Δ."""

    A: np.ndarray
    slot: str = None


def work_or_new(theta, work, count):
    """``work``, or ``count`` new arrays shaped like θ when it is None (a call without them)."""
    return [np.empty_like(theta) for _ in range(count)] if work is None else work


class SGD:
    """Stochastic gradient descent: θ ← θ − η g. No state."""

    work_arrays = 1        # η g

    def __init__(self, learning_rate):
        self.learning_rate = check_positive_float(learning_rate, "learning_rate")

    def new_state(self, theta):
        return {}

    def update(self, theta, g, state, work=None):
        (step,) = work_or_new(theta, work, 1)
        theta -= np.multiply(self.learning_rate, g, out=step)     # θ ← θ − η g

    def idle_steps(self, gamma):
        """g = γ θ: θ ← (1 − ηγ) θ; nothing without decay."""
        return UNCHANGED if gamma == 0 else Linear(np.array([[1 - self.learning_rate * gamma]]))


class Momentum:
    """Classical momentum, v ← μ v − η g; θ ← θ + v, or Nesterov's, θ ← θ + μ v − η g.

    State per parameter: ``velocity`` v (shape of θ).
    """

    work_arrays = 2        # η g and, for Nesterov, μ v − η g

    def __init__(self, learning_rate, momentum, nesterov=False):
        self.learning_rate = check_positive_float(learning_rate, "learning_rate")
        self.momentum = check_float_in(momentum, "momentum", 0, 1, closed="left")
        self.nesterov = check_bool(nesterov, "nesterov")

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
    """G ← G + g²;  θ ← θ − η0 g / (sqrt(G) + ε)  (Duchi et al. 2011; paper Sec. 3.5).

    State per parameter: ``sum_squares`` G (shape of θ).
    """

    work_arrays = 1        # g², then sqrt(G), ..., η0 g / (sqrt(G) + ε)

    def __init__(self, learning_rate, epsilon=1e-8):
        self.learning_rate = check_positive_float(learning_rate, "learning_rate")
        self.epsilon = check_positive_float(epsilon, "epsilon")

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


def option_names(kind):
    """The options of the rule class ``kind``: its constructor's arguments after η."""
    return list(inspect.signature(kind).parameters)[1:]


def get_rule(name, learning_rate, **options):
    """The rule ``name`` (a key of :data:`OPTIMIZERS`) with step size η = ``learning_rate`` and
    its ``options``, e.g. ``get_rule("momentum", 0.01, momentum=0.9)``; an option the rule does
    not take is refused."""
    kind = OPTIMIZERS[check_choice(name, "optimizer", sorted(OPTIMIZERS))]
    known = option_names(kind)
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise MLNNError(f"optimizer {name!r} has no option {unknown[0]!r}; its options: "
                        f"{known or 'none'}")
    return kind(learning_rate, **options)
