r"""Gradient-descent update rules with explicit, named state (paper Sec. 3.5).

Every optimizer has ``step(params, grads)``: ``params`` maps a name (``W1``, ``b1``, ``W2``, ``b2``)
to an array that is updated *in place*; ``grads`` maps the same names to ∂J/∂θ, either a dense
array or a :class:`~mlnn.network.RowSparseGradient` (only the rows of W1 whose features occur in
the minibatch). A row-sparse gradient is applied to its rows only, never densified.

``state`` holds the per-parameter state by name (e.g. ``optimizer.state["W1"]["velocity"]``).

Update rules, for one parameter θ with gradient g_t = ∂J/∂θ at step t:

SGD          θ ← θ − η g_t
Momentum     v ← μ v − η g_t;  θ ← θ + v                                    (classical)
             v ← μ v − η g_t;  θ ← θ + μ v − η g_t                          (Nesterov, in the
             form of Sutskever et al. 2013 / Bengio et al. 2013 that needs no look-ahead point)
AdaGrad      G ← G + g_t²;  θ ← θ − η0 g_t / (sqrt(G) + ε)                   (Duchi et al. 2011)

AdaGrad is the paper's per-parameter learning rate η_{i,τ} = η0 / sqrt(Σ_{t≤τ} Δ²_{i,t}), with a
small ε (default 1e-8) that only guards the division while G is 0.

Sparse updates are exact. For SGD and AdaGrad a zero gradient row leaves θ (and G) unchanged, so
updating only the touched rows is exactly the dense update. Momentum keeps moving a row even when
its gradient is zero (v decays by μ each step, θ keeps adding it); we apply those skipped steps in
closed form when a row is next touched ("catch-up"), and :meth:`Momentum.flush` brings every row up
to date before the parameters are used (evaluation, saving). After a flush the parameters equal the
dense momentum updates exactly (up to rounding).
"""

from abc import ABC, abstractmethod

import numpy as np

from mlnn.errors import MLNNError
from mlnn.network import RowSparseGradient
from mlnn.validation import check_positive_float


#: Bytes of gradient per block of rows in a row-sparse update (see :meth:`Optimizer.step`).
ROW_BLOCK_BYTES = 256 * 1024


class Optimizer(ABC):
    """Base: learning rate η, per-parameter ``state``, a step counter ``t``."""

    def __init__(self, learning_rate):
        self.learning_rate = check_positive_float(learning_rate, "learning_rate")
        self.state = {}
        self.t = 0

    def step(self, params, grads):
        """Apply one update with the gradients ``grads`` to ``params`` (in place)."""
        self.t += 1
        for name, grad in grads.items():
            if isinstance(grad, RowSparseGradient):
                # Every rule here updates each row on its own, so the touched rows are updated in
                # blocks of about ROW_BLOCK_BYTES: a block of θ, its state and its gradient stays
                # in the CPU's L2 cache through the few element-wise passes of the update, instead
                # of each pass streaming all k × F entries from main memory (for W1 of Reuters,
                # k ≈ 1,400 rows × F = 1,000, this halves the time of the update).
                rows, values = grad.rows, grad.values
                block = max(1, ROW_BLOCK_BYTES // max(values[:1].nbytes, 1))
                for start in range(0, max(len(rows), 1), block):   # one call even if k = 0
                    stop = start + block
                    self._update_rows(name, params[name], rows[start:stop], values[start:stop])
            else:
                self._update(name, params[name], grad)

    def flush(self, params):
        """Bring every parameter up to date (only momentum has deferred work)."""

    def _update(self, name, theta, g):
        """Dense update of ``theta`` with gradient ``g``."""
        self._update_rows(name, theta, slice(None), g)

    @abstractmethod
    def _update_rows(self, name, theta, rows, g):
        """Update the rows ``rows`` of ``theta`` whose gradient is ``g``; all others have g = 0."""


class SGD(Optimizer):
    """θ ← θ − η g."""

    def _update_rows(self, name, theta, rows, g):
        theta[rows] -= self.learning_rate * g


class Momentum(Optimizer):
    """Classical momentum (or Nesterov's variant), v ← μ v − η g; θ ← θ + v; see module doc.

    State per parameter: ``velocity`` (shape of θ) and, for row-sparse parameters, ``last_step``
    (the step up to which each row's deferred momentum has been applied).
    """

    def __init__(self, learning_rate, momentum=0.9, nesterov=False):
        super().__init__(learning_rate)
        if isinstance(momentum, bool) or not isinstance(momentum, (int, float)) \
                or not 0 <= momentum < 1:
            raise MLNNError(f"momentum must be a number in [0, 1), got {momentum!r}")
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)

    def _slot(self, name, theta):
        if name not in self.state:
            self.state[name] = {"velocity": np.zeros_like(theta),
                                "last_step": np.zeros(theta.shape[0], dtype=np.int64)}
        return self.state[name]

    def _catch_up(self, theta, state, rows, to_step):
        """Apply, in closed form, the zero-gradient steps of rows ``rows`` up to step ``to_step``.

        With g = 0 for Δ steps: v_k = μ^k v, and θ gains Σ_{k=1..Δ} μ^k v = μ (1 − μ^Δ)/(1 − μ) v
        (classical), or Σ_{k=1..Δ} μ · μ^k v = μ² (1 − μ^Δ)/(1 − μ) v (Nesterov).
        """
        mu = self.momentum
        skipped = to_step - state["last_step"][rows]
        if not np.any(skipped):
            return
        per_row = (-1,) + (1,) * (theta.ndim - 1)      # broadcast one factor over each row
        decay = (mu ** skipped).reshape(per_row)
        gain = (mu * mu if self.nesterov else mu) * (1 - decay) / (1 - mu)
        v = state["velocity"]
        theta[rows] += gain.astype(theta.dtype) * v[rows]
        v[rows] *= decay.astype(v.dtype)
        state["last_step"][rows] = to_step

    def _update_rows(self, name, theta, rows, g):
        state = self._slot(name, theta)
        self._catch_up(theta, state, rows, self.t - 1)
        v = state["velocity"]
        v_rows = self.momentum * v[rows] - self.learning_rate * g
        v[rows] = v_rows
        if self.nesterov:
            theta[rows] += self.momentum * v_rows - self.learning_rate * g
        else:
            theta[rows] += v_rows
        state["last_step"][rows] = self.t

    def flush(self, params):
        """Apply all deferred momentum steps, so that every row is at step ``t``."""
        for name, state in self.state.items():
            self._catch_up(params[name], state, slice(None), self.t)


class AdaGrad(Optimizer):
    """G ← G + g²;  θ ← θ − η0 g / (sqrt(G) + ε)  (Duchi et al. 2011; paper Sec. 3.5).

    State per parameter: ``sum_squares`` G (shape of θ). ``epsilon`` defaults to 1e-8.
    """

    def __init__(self, learning_rate, epsilon=1e-8):
        super().__init__(learning_rate)
        self.epsilon = check_positive_float(epsilon, "epsilon")

    def _update_rows(self, name, theta, rows, g):
        if name not in self.state:
            self.state[name] = {"sum_squares": np.zeros_like(theta)}
        G = self.state[name]["sum_squares"]
        # For W1 this is the most expensive part of a minibatch: k ≈ 2,000 touched rows × F
        # entries, a few passes over memory each. So it works on the gathered rows in place and
        # builds the step in one buffer, with no temporary per operator:
        G_rows = G[rows]                  # the touched rows of G (a copy; a view when dense)
        step = np.square(g)
        G_rows += step                    # G ← G + g²
        G[rows] = G_rows
        np.sqrt(G_rows, out=step)
        step += self.epsilon
        np.divide(g, step, out=step)
        step *= self.learning_rate        # step = η0 g / (sqrt(G) + ε)
        theta[rows] -= step               # one gather, subtract, scatter of the touched rows


OPTIMIZERS = {"sgd": SGD, "momentum": Momentum, "adagrad": AdaGrad}


def get_optimizer(name, learning_rate, **options):
    """An optimizer by name: ``sgd``, ``momentum`` (options ``momentum``, ``nesterov``), ``adagrad``."""
    try:
        cls = OPTIMIZERS[name]
    except (KeyError, TypeError):
        raise MLNNError(f"unknown optimizer {name!r}; choose one of {sorted(OPTIMIZERS)}") from None
    return cls(learning_rate, **options)
