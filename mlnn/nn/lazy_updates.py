r"""The update rules of :mod:`mlnn.nn.optimizers` executed on row-sparse gradients, lazily.

The rules there are written densely, on (θ, g, state). This module is the engineering beneath
them: it applies a rule to the rows of W1 a minibatch touched, never densifying the gradient, and
gives the same parameters as the dense updates (up to rounding).

A :class:`~mlnn.nn.network.RowSparseGradient` carries only the rows of W1 whose features occur in
the minibatch. A row whose gradient ∂J/∂θ is zero at step t still takes the step with
g_t = γ θ (weight decay γ):

* SGD, γ = 0, and AdaGrad, γ = 0: the row does not change, so only the touched rows are updated.
* SGD, γ > 0: the row only shrinks, θ ← (1 − ηγ) θ; Δ such steps are θ ← (1 − ηγ)^Δ θ
  (:class:`ShrinkingSteps`).
* Momentum (any γ): the pair (θ, v) of the row follows the linear recurrence (θ, v) ← A (θ, v)
  (:meth:`mlnn.nn.optimizers.Momentum.transition`); Δ such steps are A^Δ (:func:`matrix_powers`,
  :class:`MomentumSteps`). With γ = 0 this is v ← μ^Δ v, θ ← θ + μ (1 − μ^Δ)/(1 − μ) v
  (classical; μ² instead of μ for Nesterov).
* AdaGrad, γ > 0: G grows by (γθ)² at every step, which has no closed form, so the rule is
  applied to **every row at every step**: each update makes a pass over all D × F entries of W1
  and G, bound by memory bandwidth, instead of over the k × F entries of the touched rows.

For SGD and Momentum the skipped steps are deferred: each row records the step up to which it is
up to date (``state[name]["last_step"]``), and the skipped steps are applied in closed form

1. in :meth:`LazyRows.step`, to the rows that have a gradient, before their update;
2. in :meth:`LazyRows.catch_up`, to the rows named: :func:`mlnn.nn.training.train` calls it
   before each forward pass with the rows of W1 that the minibatch reads (its features), so the
   forward pass, and hence the gradient, sees the same parameters as in the dense updates;
3. in :meth:`LazyRows.flush`, to every row: before the parameters are used (evaluation, saving).

The cost of 1 and 2 is proportional to the rows touched, never a pass over all of W1. The rows of
an update are processed in blocks (:func:`row_blocks`) that stay in the CPU's cache.
"""

import numpy as np

from mlnn.nn.network import RowSparseGradient

#: Bytes of a parameter's rows per block in a row-sparse update (see :func:`row_blocks`).
ROW_BLOCK_BYTES = 256 * 1024


def matrix_powers(A, exponents):
    """A^e for each integer e ≥ 0 in ``exponents``: an array (len(exponents), 2, 2).

    Repeated squaring, vectorised over the exponents: log2(max e) products of 2 × 2 matrices.
    """
    exponents = np.asarray(exponents, dtype=np.int64)
    assert np.all(exponents >= 0), f"negative numbers of skipped steps: {exponents[exponents < 0]}"
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

    Every rule updates each row on its own, so the rows of an update (or a catch-up) are
    processed in such blocks: a block of θ, its state and its gradient stays in the CPU's L2 cache
    through the few element-wise passes of the update, instead of each pass streaming all k × F
    entries from main memory.
    """
    block = max(1, ROW_BLOCK_BYTES // max(row_bytes, 1))
    return [slice(start, start + block) for start in range(0, n_rows, block)]


def per_row(factor, theta):
    """``factor`` (one value per row) shaped to broadcast over the rows of ``theta``, its dtype."""
    return np.asarray(factor).reshape((-1,) + (1,) * (theta.ndim - 1)).astype(theta.dtype)


class ShrinkingSteps:
    """Δ zero-gradient SGD steps with weight decay γ: θ ← (1 − ηγ)^Δ θ."""

    @staticmethod
    def factors(optimizer, skipped, gamma):
        return (1 - optimizer.learning_rate * gamma) ** skipped       # θ ← (1 − ηγ)^Δ θ

    @staticmethod
    def apply(state, theta, rows, factors, gamma):
        theta[rows] *= per_row(factors, theta)


class MomentumSteps:
    """Δ zero-gradient momentum steps: (θ, v) ← A^Δ (θ, v), A = ``optimizer.transition(γ)``."""

    @staticmethod
    def factors(optimizer, skipped, gamma):
        distinct, which = np.unique(skipped, return_inverse=True)
        return matrix_powers(optimizer.transition(gamma), distinct)[which]    # A^Δ for each row

    @staticmethod
    def apply(state, theta, rows, A, gamma):
        v = state["velocity"]
        if gamma == 0:     # A^Δ = [[1, a], [0, μ^Δ]]: θ ← θ + a v, v ← μ^Δ v (two passes fewer)
            theta[rows] += per_row(A[:, 0, 1], theta) * v[rows]
            v[rows] *= per_row(A[:, 1, 1], theta)
            return
        theta_rows, v_rows = theta[rows], v[rows]
        theta[rows] = per_row(A[:, 0, 0], theta) * theta_rows + per_row(A[:, 0, 1], theta) * v_rows
        v[rows] = per_row(A[:, 1, 0], theta) * theta_rows + per_row(A[:, 1, 1], theta) * v_rows


class LazyRows:
    """The execution of a dense rule ``update(theta, g, state)`` on dense or row-sparse gradients,
    with deferred zero-gradient steps (see the module doc).

    A rule sets ``skipped_steps`` to the closed form of its zero-gradient steps
    (:class:`ShrinkingSteps`, :class:`MomentumSteps`) or None, and says in :meth:`_deferred`
    whether a parameter's rows are deferred. ``state[name]`` holds the rule's state of parameter
    ``name`` and, for a deferred parameter, ``last_step``; ``t`` counts the steps.
    """

    skipped_steps = None

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
        for a rule that defers nothing. :func:`mlnn.nn.training.train` calls it before each
        forward pass with the rows of W1 the minibatch reads.
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

    def _new_state(self, theta):
        """The rule's per-parameter state (beside ``last_step``): ``new_state(theta)``."""
        return self.new_state(theta)

    def _slot(self, name, theta):
        """The state of ``name``, made on its first step (rows up to date at step t − 1)."""
        if name not in self.state:
            state = self._new_state(theta)
            if self._deferred(name):
                state["last_step"] = np.full(theta.shape[0], self.t - 1, dtype=np.int64)
            self.state[name] = state
        return self.state[name]

    def _apply(self, name, theta, rows, dJ):
        """Update rows ``rows`` of ``theta`` whose gradient ∂J/∂θ is ``dJ`` (decay γ θ added)."""
        state = self._slot(name, theta)
        if "last_step" in state:
            self._catch_up(name, theta, rows, self.t - 1)
        g = self.gradient(dJ, theta[rows], self.decay(name))
        self._update_rows(state, theta, rows, g)
        if "last_step" in state:
            state["last_step"][rows] = self.t

    def _update_rows(self, state, theta, rows, g):
        """The dense rule ``update`` on the rows ``rows`` of ``theta`` and of its state, whose
        regularised gradient is ``g``: gathered (a view for a slice), updated, scattered back."""
        slots = {slot: value[rows] for slot, value in state.items() if slot != "last_step"}
        theta_rows = theta[rows]
        self.update(theta_rows, g, slots)
        if not isinstance(rows, slice):
            theta[rows] = theta_rows
            for slot, value in slots.items():
                state[slot][rows] = value

    def _catch_up(self, name, theta, rows, to_step):
        """Apply in closed form the zero-gradient steps of rows ``rows`` up to step ``to_step``."""
        state = self.state[name]
        last_step = state["last_step"]
        skipped = to_step - last_step[rows]
        behind = np.flatnonzero(skipped)
        if behind.size == 0:
            return
        rows = np.arange(len(last_step))[rows] if isinstance(rows, slice) else np.asarray(rows)
        rows, skipped, gamma = rows[behind], skipped[behind], self.decay(name)
        factors = self.skipped_steps.factors(self, skipped, gamma)
        for block in row_blocks(len(rows), theta[:1].nbytes):
            self.skipped_steps.apply(state, theta, rows[block], factors[block], gamma)
        last_step[rows] = to_step

    def _update_every_row(self, name, theta, grad):
        """A row-sparse gradient, with the decay γ θ of every row, applied to every row (in
        blocks of rows)."""
        rows, values = grad.rows, grad.values
        for block in row_blocks(theta.shape[0], theta[:1].nbytes):
            low, high = np.searchsorted(rows, [block.start, block.stop])
            g = np.zeros_like(theta[block])
            g[rows[low:high] - block.start] = values[low:high]
            self._apply(name, theta, block, g)
