r"""Gradient-descent update rules, each on its own with explicit, named state (paper Sec. 3.5).

A rule is a small object: its hyper-parameters, ``new_state(theta)`` (the state of one
parameter, a dict of arrays) and ``update(theta, g, state)``, one step in place with gradient g:

SGD          θ ← θ − η g                                  (the paper's Eq. 4)
Momentum     v ← μ v − η g;  θ ← θ + v                    (classical)
             v ← μ v − η g;  θ ← θ + μ v − η g            (Nesterov, in the form of Sutskever
             et al. 2013 / Bengio et al. 2013 that needs no look-ahead point)
AdaGrad      G ← G + g²;  θ ← θ − η0 g / (sqrt(G) + ε)    (Duchi et al. 2011)

AdaGrad is the paper's per-parameter learning rate η_{i,τ} = η0 / sqrt(Σ_{t≤τ} Δ²_{i,t}), with a
small ε that only guards the division while G is 0. The paper writes out SGD and AdaGrad and
names momentum; Nesterov's form is ours.

A rule sees only θ, g and its state. Running it on a network's parameters -- ℓ2 weight decay
(g = ∂J/∂θ + γ θ) and the row-sparse gradient of W1 -- is :class:`mlnn.nn.lazy_updates.LazyRows`,
which wraps a rule: ``LazyRows(AdaGrad(0.01), weight_decay=0.0)``.
"""

import numpy as np

from mlnn.base.validation import check_bool, check_float_in, check_positive_float

__all__ = ["SGD", "Momentum", "AdaGrad", "OPTIMIZERS"]


class SGD:
    """Stochastic gradient descent: θ ← θ − η g. No state."""

    def __init__(self, learning_rate):
        self.learning_rate = check_positive_float(learning_rate, "learning_rate")

    def new_state(self, theta):
        return {}

    def update(self, theta, g, state):
        theta -= self.learning_rate * g


class Momentum:
    """Classical momentum, v ← μ v − η g; θ ← θ + v, or Nesterov's, θ ← θ + μ v − η g.

    State per parameter: ``velocity`` v (shape of θ).
    """

    def __init__(self, learning_rate, momentum, nesterov=False):
        self.learning_rate = check_positive_float(learning_rate, "learning_rate")
        self.momentum = check_float_in(momentum, "momentum", 0, 1, closed="left")
        self.nesterov = check_bool(nesterov, "nesterov")

    def new_state(self, theta):
        return {"velocity": np.zeros_like(theta)}

    def update(self, theta, g, state):
        v = state["velocity"]
        v[...] = self.momentum * v - self.learning_rate * g
        if self.nesterov:
            theta += self.momentum * v - self.learning_rate * g
        else:
            theta += v


class AdaGrad:
    """G ← G + g²;  θ ← θ − η0 g / (sqrt(G) + ε)  (Duchi et al. 2011; paper Sec. 3.5).

    State per parameter: ``sum_squares`` G (shape of θ).
    """

    def __init__(self, learning_rate, epsilon=1e-8):
        self.learning_rate = check_positive_float(learning_rate, "learning_rate")
        self.epsilon = check_positive_float(epsilon, "epsilon")

    def new_state(self, theta):
        return {"sum_squares": np.zeros_like(theta)}

    def update(self, theta, g, state):
        G = state["sum_squares"]
        G += np.square(g)
        theta -= g / (np.sqrt(G) + self.epsilon) * self.learning_rate


OPTIMIZERS = {"sgd": SGD, "momentum": Momentum, "adagrad": AdaGrad}

