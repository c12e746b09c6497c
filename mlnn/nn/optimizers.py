r"""Gradient-descent update rules with explicit, named state, and ℓ2 weight decay (paper Sec. 3.5).

Each rule is written as the paper writes it: a method ``update(theta, g, state)`` of a few lines
that updates θ and its state in place from the gradient g, for one parameter at step t:

SGD          θ ← θ − η g_t
Momentum     v ← μ v − η g_t;  θ ← θ + v                                    (classical)
             v ← μ v − η g_t;  θ ← θ + μ v − η g_t                          (Nesterov, in the
             form of Sutskever et al. 2013 / Bengio et al. 2013 that needs no look-ahead point)
AdaGrad      G ← G + g_t²;  θ ← θ − η0 g_t / (sqrt(G) + ε)                   (Duchi et al. 2011)

AdaGrad is the paper's per-parameter learning rate η_{i,τ} = η0 / sqrt(Σ_{t≤τ} Δ²_{i,t}), with a
small ε (default 1e-8) that only guards the division while G is 0.

Weight decay. With ``weight_decay`` γ > 0 the objective is J + (γ/2) Σ ‖θ‖² over the weight
matrices W1 and W2, and over the biases b1, b2 too when ``decay_biases=True`` (Zhang & Zhou 2006
decay every parameter of BP-MLL). Every rule then uses the regularised gradient

    g_t = ∂J/∂θ + γ θ          (γ = 0 for a parameter that is not decayed),

(:meth:`Optimizer.gradient`), and :func:`regularised` gives that objective and its gradient for
checking. (γ is not Eq. 5's λ, the penalty of the threshold predictor, ``threshold_lambda``.)

Using an optimizer: ``step(params, grads)``: ``params`` maps a name (``W1``, ``b1``, ``W2``,
``b2``) to an array that is updated *in place*; ``grads`` maps the same names to ∂J/∂θ, either a
dense array or a :class:`~mlnn.nn.network.RowSparseGradient` (only the rows of W1 whose features
occur in the minibatch). ``state`` holds the per-parameter state by name (e.g.
``optimizer.state["W1"]["velocity"]``). How a rule runs on row-sparse gradients without
densifying them — deferring the steps of untouched rows and catching them up exactly — is the
layer beneath, :mod:`mlnn.nn.lazy_updates`: ``catch_up`` and ``flush`` come from there.
"""

import numpy as np

from mlnn.base.validation import (check_bool, check_choice, check_float_in,
                                  check_nonnegative_float, check_positive_float)
from mlnn.nn.lazy_updates import LazyRows, MomentumSteps, ShrinkingSteps, matrix_powers
from mlnn.nn.network import RowSparseGradient

#: The bias parameters: decayed only with ``decay_biases=True``; every other one is a weight.
BIASES = ("b1", "b2")

__all__ = ["SGD", "Momentum", "AdaGrad", "Optimizer", "OPTIMIZERS", "get_optimizer",
           "regularised", "is_decayed", "matrix_powers"]


def is_decayed(name, decay_biases):
    """Whether parameter ``name`` is in the weight-decay term (weights always, biases if asked)."""
    return decay_biases or name not in BIASES


def regularised(J, grads, params, weight_decay, decay_biases=False):
    """The ℓ2-regularised objective J + (γ/2) Σ_θ ‖θ‖² and its gradient ∂J/∂θ + γ θ.

    ``J`` is the minibatch loss, ``grads`` its gradients by name (dense or row-sparse),
    ``params`` the parameters; the sum is over W1, W2 and, with ``decay_biases``, b1, b2 (module
    doc). Returns ``(value, {name: dense gradient})``; nothing passed in is modified.
    """
    gamma = check_nonnegative_float(weight_decay, "weight_decay")
    decay_biases = check_bool(decay_biases, "decay_biases")
    decayed = [name for name in params if is_decayed(name, decay_biases)]
    value = J + gamma / 2 * sum(float(np.sum(np.square(params[name]))) for name in decayed)
    gradient = {}
    for name, g in grads.items():
        g = g.toarray() if isinstance(g, RowSparseGradient) else np.array(g)
        gradient[name] = g + gamma * params[name] if name in decayed else g
    return value, gradient


class Optimizer(LazyRows):
    """Base: learning rate η, weight decay γ, per-parameter ``state``, a step counter ``t``.

    A rule defines ``new_state(theta)`` (its state of one parameter, a dict of arrays) and
    ``update(theta, g, state)`` (one step, in place). Checks its hyper-parameters once, here.
    """

    def __init__(self, learning_rate, weight_decay=0.0, decay_biases=False):
        self.learning_rate = check_positive_float(learning_rate, "learning_rate")
        self.weight_decay = check_nonnegative_float(weight_decay, "weight_decay")
        self.decay_biases = check_bool(decay_biases, "decay_biases")
        self.state = {}
        self.t = 0

    def decay(self, name):
        """γ for the parameter ``name`` (0 if it is not decayed)."""
        return self.weight_decay if is_decayed(name, self.decay_biases) else 0.0

    @staticmethod
    def gradient(dJ, theta, gamma):
        """The regularised gradient g = ∂J/∂θ + γ θ."""
        return dJ + gamma * theta if gamma else dJ

    def new_state(self, theta):
        """The rule's state of one parameter θ (none for SGD)."""
        return {}

    def update(self, theta, g, state):
        """One step of the rule on θ and its ``state``, in place, with the gradient g."""
        raise NotImplementedError(f"{type(self).__name__} has no update rule")


class SGD(Optimizer):
    """Stochastic gradient descent: θ ← θ − η g.

    State per parameter, only with weight decay: ``last_step`` (:mod:`mlnn.nn.lazy_updates`,
    where a row without gradient shrinks lazily by (1 − ηγ)^Δ).
    """

    skipped_steps = ShrinkingSteps

    def update(self, theta, g, state):
        theta -= self.learning_rate * g

    def _deferred(self, name):
        return self.decay(name) > 0


class Momentum(Optimizer):
    """Classical momentum, v ← μ v − η g; θ ← θ + v, or Nesterov's, θ ← θ + μ v − η g.

    State per parameter: ``velocity`` v (shape of θ) and ``last_step`` (the step up to which each
    row's deferred momentum has been applied; :mod:`mlnn.nn.lazy_updates`).
    """

    skipped_steps = MomentumSteps

    def __init__(self, learning_rate, momentum=0.9, nesterov=False, weight_decay=0.0,
                 decay_biases=False):
        super().__init__(learning_rate, weight_decay, decay_biases)
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

    def transition(self, gamma):
        """A with (θ, v) ← A (θ, v): one step of a row whose gradient ∂J/∂θ is zero (g = γ θ)."""
        mu, eta_gamma = self.momentum, self.learning_rate * gamma
        if self.nesterov:      # v' = μ v − ηγ θ;  θ' = θ + μ v' − ηγ θ
            return np.array([[1 - eta_gamma * (1 + mu), mu * mu], [-eta_gamma, mu]])
        return np.array([[1 - eta_gamma, mu], [-eta_gamma, mu]])   # v' = μ v − ηγ θ;  θ' = θ + v'

    def _deferred(self, name):
        return True


class AdaGrad(Optimizer):
    """G ← G + g²;  θ ← θ − η0 g / (sqrt(G) + ε)  (Duchi et al. 2011; paper Sec. 3.5).

    State per parameter: ``sum_squares`` G (shape of θ). ``epsilon`` defaults to 1e-8. With
    weight decay a row-sparse parameter is updated on all its rows at every step
    (:mod:`mlnn.nn.lazy_updates`).
    """

    def __init__(self, learning_rate, epsilon=1e-8, weight_decay=0.0, decay_biases=False):
        super().__init__(learning_rate, weight_decay, decay_biases)
        self.epsilon = check_positive_float(epsilon, "epsilon")

    def new_state(self, theta):
        return {"sum_squares": np.zeros_like(theta)}

    def update(self, theta, g, state):
        G = state["sum_squares"]
        G += np.square(g)
        theta -= g / (np.sqrt(G) + self.epsilon) * self.learning_rate


OPTIMIZERS = {"sgd": SGD, "momentum": Momentum, "adagrad": AdaGrad}


def get_optimizer(name, learning_rate, **options):
    """An optimizer by name: ``sgd``, ``momentum`` (options ``momentum``, ``nesterov``),
    ``adagrad`` (option ``epsilon``); every one takes ``weight_decay`` (γ ≥ 0) and
    ``decay_biases``."""
    return OPTIMIZERS[check_choice(name, "optimizer", sorted(OPTIMIZERS))](learning_rate, **options)
