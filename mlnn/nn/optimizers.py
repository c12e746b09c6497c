r"""Gradient-descent update rules with explicit, named state, and ℓ2 weight decay (paper Sec. 3.5).

Every optimizer has ``step(params, grads)``: ``params`` maps a name (``W1``, ``b1``, ``W2``, ``b2``)
to an array that is updated *in place*; ``grads`` maps the same names to ∂J/∂θ, either a dense
array or a :class:`~mlnn.nn.network.RowSparseGradient` (only the rows of W1 whose features occur in
the minibatch). A row-sparse gradient is applied to its rows only, never densified (except by
AdaGrad with weight decay, see below).

``state`` holds the per-parameter state by name (e.g. ``optimizer.state["W1"]["velocity"]``).

Weight decay. With ``weight_decay`` λ > 0 the objective is J + (λ/2) Σ ‖θ‖² over the weight
matrices W1 and W2, and over the biases b1, b2 too when ``decay_biases=True`` (Zhang & Zhou 2006
decay every parameter of BP-MLL). Every rule below then uses the regularised gradient

    g_t = ∂J/∂θ + λ θ          (λ = 0 for a parameter that is not decayed),

and :func:`regularised` gives that objective and its gradient for checking.

Update rules, for one parameter θ at step t:

SGD          θ ← θ − η g_t
Momentum     v ← μ v − η g_t;  θ ← θ + v                                    (classical)
             v ← μ v − η g_t;  θ ← θ + μ v − η g_t                          (Nesterov, in the
             form of Sutskever et al. 2013 / Bengio et al. 2013 that needs no look-ahead point)
AdaGrad      G ← G + g_t²;  θ ← θ − η0 g_t / (sqrt(G) + ε)                   (Duchi et al. 2011)

AdaGrad is the paper's per-parameter learning rate η_{i,τ} = η0 / sqrt(Σ_{t≤τ} Δ²_{i,t}), with a
small ε (default 1e-8) that only guards the division while G is 0.

Sparse updates are exact: after :meth:`Optimizer.flush` the parameters equal those of the dense
updates (up to rounding), and so does every row when it is read. A row whose gradient ∂J/∂θ is
zero at step t takes the step with g_t = λ θ:

* SGD, λ = 0, and AdaGrad, λ = 0: the row does not change, so only the touched rows are updated.
* SGD, λ > 0: the row only shrinks, θ ← (1 − ηλ) θ; Δ such steps are θ ← (1 − ηλ)^Δ θ.
* Momentum (any λ): the pair (θ, v) of the row follows the linear recurrence
  (θ, v) ← A (θ, v) with A = [[1 − ηλ, μ], [−ηλ, μ]] (classical) or
  A = [[1 − ηλ(1 + μ), μ²], [−ηλ, μ]] (Nesterov); Δ such steps are A^Δ (:func:`matrix_powers`).
  With λ = 0 this is v ← μ^Δ v, θ ← θ + μ (1 − μ^Δ)/(1 − μ) v (classical; μ² instead of μ for
  Nesterov).
* AdaGrad, λ > 0: G grows by (λθ)² at every step, which has no closed form, so the decay is
  applied to **every row at every step**: each update makes a pass over all D × F entries of W1
  and G, bound by memory bandwidth, instead of over the k × F entries of the touched rows.

For SGD and Momentum these skipped steps are deferred: each row records the step up to which it
is up to date (``state[name]["last_step"]``), and the skipped steps are applied in closed form

1. in :meth:`Optimizer.step`, to the rows that have a gradient, before their update;
2. in :meth:`Optimizer.catch_up`, to the rows named: :func:`mlnn.nn.training.train` calls it before
   each forward pass with the rows of W1 that the minibatch reads (its features), so the forward
   pass, and hence the gradient, sees the same parameters as in the dense updates;
3. in :meth:`Optimizer.flush`, to every row: before the parameters are used (evaluation, saving).

The cost of 1 and 2 is proportional to the rows touched, never a pass over all of W1.
"""

from abc import ABC, abstractmethod

import numpy as np

from mlnn.base.validation import (check_bool, check_choice, check_float_in, check_nonnegative_float,
                                  check_positive_float)
from mlnn.nn.network import RowSparseGradient


#: Bytes of a parameter's rows per block in a row-sparse update (see :func:`row_blocks`).
ROW_BLOCK_BYTES = 256 * 1024

#: The bias parameters: decayed only with ``decay_biases=True``; every other parameter is a weight.
BIASES = ("b1", "b2")


def is_decayed(name, decay_biases):
    """Whether parameter ``name`` is in the weight-decay term (weights always, biases if asked)."""
    return decay_biases or name not in BIASES


def regularised(J, grads, params, weight_decay, decay_biases=False):
    """The ℓ2-regularised objective J + (λ/2) Σ_θ ‖θ‖² and its gradient ∂J/∂θ + λ θ.

    ``J`` is the minibatch loss, ``grads`` its gradients by name (dense or row-sparse), ``params``
    the parameters; the sum is over W1, W2 and, with ``decay_biases``, b1, b2 (module doc).
    Returns ``(value, {name: dense gradient})``; nothing passed in is modified.
    """
    lam = check_nonnegative_float(weight_decay, "weight_decay")
    decay_biases = check_bool(decay_biases, "decay_biases")
    decayed = [name for name in params if is_decayed(name, decay_biases)]
    value = J + lam / 2 * sum(float(np.sum(np.square(params[name]))) for name in decayed)
    gradient = {}
    for name, g in grads.items():
        g = g.toarray() if isinstance(g, RowSparseGradient) else np.array(g)
        gradient[name] = g + lam * params[name] if name in decayed else g
    return value, gradient


def matrix_powers(A, exponents):
    """A^e for each integer e ≥ 0 in ``exponents``: an array (len(exponents), 2, 2).

    Repeated squaring, vectorised over the exponents: log2(max e) products of 2 × 2 matrices.
    """
    exponents = np.asarray(exponents, dtype=np.int64)
    result = np.broadcast_to(np.eye(2), (len(exponents), 2, 2)).copy()
    power = np.array(A, dtype=np.float64)
    remaining = exponents.copy()
    while np.any(remaining):
        odd = (remaining & 1).astype(bool)
        result[odd] = result[odd] @ power
        power = power @ power
        remaining >>= 1
    return result


def row_blocks(n_rows, row_bytes):
    """Slices of consecutive rows that cover ``range(n_rows)``, about ROW_BLOCK_BYTES each.

    Every rule here updates each row on its own, so the rows of an update (or a catch-up) are
    processed in such blocks: a block of θ, its state and its gradient stays in the CPU's L2 cache
    through the few element-wise passes of the update, instead of each pass streaming all k × F
    entries from main memory.
    """
    block = max(1, ROW_BLOCK_BYTES // max(row_bytes, 1))
    return [slice(start, start + block) for start in range(0, n_rows, block)]


def per_row(factor, theta):
    """``factor`` (one value per row) shaped to broadcast over the rows of ``theta``, its dtype."""
    return np.asarray(factor).reshape((-1,) + (1,) * (theta.ndim - 1)).astype(theta.dtype)


class Optimizer(ABC):
    """Base: learning rate η, weight decay λ, per-parameter ``state``, a step counter ``t``."""

    def __init__(self, learning_rate, weight_decay=0.0, decay_biases=False):
        self.learning_rate = check_positive_float(learning_rate, "learning_rate")
        self.weight_decay = check_nonnegative_float(weight_decay, "weight_decay")
        self.decay_biases = check_bool(decay_biases, "decay_biases")
        self.state = {}
        self.t = 0

    def decay(self, name):
        """λ for the parameter ``name`` (0 if it is not decayed)."""
        return self.weight_decay if is_decayed(name, self.decay_biases) else 0.0

    def step(self, params, grads):
        """Apply one update with the gradients ``grads`` to ``params`` (in place)."""
        self.t += 1
        for name, grad in grads.items():
            theta = params[name]
            if not isinstance(grad, RowSparseGradient):
                self._apply(name, theta, slice(None), grad)
            elif self.decay(name) and not self._deferred(name):
                self._update_every_row(name, theta, grad)
            else:
                rows, values = grad.rows, grad.values
                for block in row_blocks(max(len(rows), 1), values[:1].nbytes):  # once if k = 0
                    self._apply(name, theta, rows[block], values[block])

    def catch_up(self, params, rows):
        """Bring the rows ``rows[name]`` of each parameter ``name`` up to step ``t`` (in place).

        Applies the deferred zero-gradient steps of those rows (see the module doc); nothing to do
        for a rule that defers nothing. :func:`mlnn.nn.training.train` calls it before each forward
        pass with the rows of W1 the minibatch reads.
        """
        for name, index in rows.items():
            if "last_step" in self.state.get(name, {}):
                self._catch_up(name, params[name], index, self.t)

    def flush(self, params):
        """Bring every row of every parameter up to step ``t`` (before evaluation or saving)."""
        self.catch_up(params, {name: slice(None) for name in self.state})

    def _deferred(self, name):
        """Whether a row of ``name`` with zero gradient still moves (so its steps are deferred)."""
        return False

    def _slot(self, name, theta):
        """The state of ``name``, made on its first step (rows up to date at step t − 1)."""
        if name not in self.state:
            state = self._new_state(theta)
            if self._deferred(name):
                state["last_step"] = np.full(theta.shape[0], self.t - 1, dtype=np.int64)
            self.state[name] = state
        return self.state[name]

    def _apply(self, name, theta, rows, g):
        """Update rows ``rows`` of ``theta`` whose gradient ∂J/∂θ is ``g``, with decay λ θ added."""
        state = self._slot(name, theta)
        if "last_step" in state:
            self._catch_up(name, theta, rows, self.t - 1)
        lam = self.decay(name)
        if lam:
            g = g + lam * theta[rows]
        self._update_rows(state, theta, rows, g)
        if "last_step" in state:
            state["last_step"][rows] = self.t

    def _catch_up(self, name, theta, rows, to_step):
        """Apply in closed form the zero-gradient steps of rows ``rows`` up to step ``to_step``."""
        state = self.state[name]
        last_step = state["last_step"]
        skipped = to_step - last_step[rows]
        behind = np.flatnonzero(skipped)
        if behind.size == 0:
            return
        rows = np.arange(len(last_step))[rows] if isinstance(rows, slice) else np.asarray(rows)
        rows, skipped, lam = rows[behind], skipped[behind], self.decay(name)
        factors = self._skip_factors(skipped, lam)
        for block in row_blocks(len(rows), theta[:1].nbytes):
            self._skip(state, theta, rows[block], factors[block], lam)
        last_step[rows] = to_step

    def _update_every_row(self, name, theta, grad):
        """A row-sparse gradient plus λ θ, applied to every row (in blocks of rows)."""
        rows, values = grad.rows, grad.values
        for block in row_blocks(theta.shape[0], theta[:1].nbytes):
            low, high = np.searchsorted(rows, [block.start, block.stop])
            g = np.zeros_like(theta[block])
            g[rows[low:high] - block.start] = values[low:high]
            self._apply(name, theta, block, g)

    def _new_state(self, theta):
        """The per-parameter state of the rule (beside ``last_step``)."""
        return {}

    @abstractmethod
    def _update_rows(self, state, theta, rows, g):
        """Update the rows ``rows`` of ``theta`` whose (regularised) gradient is ``g``."""


class DeferringOptimizer(Optimizer):
    """A rule whose zero-gradient steps have a closed form, applied lazily (see the module doc)."""

    @abstractmethod
    def _skip_factors(self, skipped, lam):
        """What Δ = ``skipped[i]`` zero-gradient steps do to a row, one entry per row i."""

    @abstractmethod
    def _skip(self, state, theta, rows, factors, lam):
        """Apply the skipped steps, given by ``factors`` (one per row), to rows ``rows``."""


class SGD(DeferringOptimizer):
    """θ ← θ − η g;  with weight decay, rows without gradient shrink lazily by (1 − ηλ)^Δ.

    State per parameter, only with weight decay: ``last_step`` (see the module doc).
    """

    def _deferred(self, name):
        return self.decay(name) > 0

    def _skip_factors(self, skipped, lam):
        return (1 - self.learning_rate * lam) ** skipped            # θ ← (1 − ηλ)^Δ θ

    def _skip(self, state, theta, rows, factors, lam):
        theta[rows] *= per_row(factors, theta)

    def _update_rows(self, state, theta, rows, g):
        theta[rows] -= self.learning_rate * g


class Momentum(DeferringOptimizer):
    """Classical momentum (or Nesterov's variant), v ← μ v − η g; θ ← θ + v; see module doc.

    State per parameter: ``velocity`` (shape of θ) and ``last_step`` (the step up to which each
    row's deferred momentum has been applied).
    """

    def __init__(self, learning_rate, momentum=0.9, nesterov=False, weight_decay=0.0,
                 decay_biases=False):
        super().__init__(learning_rate, weight_decay, decay_biases)
        self.momentum = check_float_in(momentum, "momentum", 0, 1, closed="left")
        self.nesterov = check_bool(nesterov, "nesterov")

    def _deferred(self, name):
        return True

    def _new_state(self, theta):
        return {"velocity": np.zeros_like(theta)}

    def transition(self, lam):
        """A with (θ, v) ← A (θ, v) for one step of a row whose gradient ∂J/∂θ is zero."""
        mu, eta_lam = self.momentum, self.learning_rate * lam
        if self.nesterov:      # v' = μ v − ηλ θ;  θ' = θ + μ v' − ηλ θ
            return np.array([[1 - eta_lam * (1 + mu), mu * mu], [-eta_lam, mu]])
        return np.array([[1 - eta_lam, mu], [-eta_lam, mu]])   # v' = μ v − ηλ θ;  θ' = θ + v'

    def _skip_factors(self, skipped, lam):
        distinct, which = np.unique(skipped, return_inverse=True)
        return matrix_powers(self.transition(lam), distinct)[which]    # A^Δ for each row

    def _skip(self, state, theta, rows, A, lam):
        v = state["velocity"]
        if lam == 0:       # A^Δ = [[1, a], [0, μ^Δ]]: θ ← θ + a v, v ← μ^Δ v (two passes fewer)
            theta[rows] += per_row(A[:, 0, 1], theta) * v[rows]
            v[rows] *= per_row(A[:, 1, 1], theta)
            return
        theta_rows, v_rows = theta[rows], v[rows]
        theta[rows] = per_row(A[:, 0, 0], theta) * theta_rows + per_row(A[:, 0, 1], theta) * v_rows
        v[rows] = per_row(A[:, 1, 0], theta) * theta_rows + per_row(A[:, 1, 1], theta) * v_rows

    def _update_rows(self, state, theta, rows, g):
        v = state["velocity"]
        v_rows = self.momentum * v[rows] - self.learning_rate * g
        v[rows] = v_rows
        if self.nesterov:
            theta[rows] += self.momentum * v_rows - self.learning_rate * g
        else:
            theta[rows] += v_rows


class AdaGrad(Optimizer):
    """G ← G + g²;  θ ← θ − η0 g / (sqrt(G) + ε)  (Duchi et al. 2011; paper Sec. 3.5).

    State per parameter: ``sum_squares`` G (shape of θ). ``epsilon`` defaults to 1e-8.

    With weight decay every row of W1 has the gradient λ θ even when its feature is absent from
    the minibatch, and G then grows at every step with no closed form over skipped steps; so a
    decayed row-sparse parameter is updated on **all** its rows at every step (D × F per update),
    which is exact but not sparse.
    """

    def __init__(self, learning_rate, epsilon=1e-8, weight_decay=0.0, decay_biases=False):
        super().__init__(learning_rate, weight_decay, decay_biases)
        self.epsilon = check_positive_float(epsilon, "epsilon")

    def _new_state(self, theta):
        return {"sum_squares": np.zeros_like(theta)}

    def _update_rows(self, state, theta, rows, g):
        G = state["sum_squares"]
        # For W1 this touches k rows × F entries with a few passes over memory each, so it works
        # on the gathered rows in place and builds the step in one buffer, with no temporary per
        # operator:
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
    """An optimizer by name: ``sgd``, ``momentum`` (options ``momentum``, ``nesterov``), ``adagrad``
    (option ``epsilon``); every one takes ``weight_decay`` (λ ≥ 0) and ``decay_biases``."""
    return OPTIMIZERS[check_choice(name, "optimizer", sorted(OPTIMIZERS))](learning_rate, **options)
