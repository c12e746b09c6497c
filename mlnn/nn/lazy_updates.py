r"""A rule of :mod:`mlnn.nn.optimizers` run on a network's parameters: :class:`LazyRows`.

``LazyRows(rule, weight_decay=γ)`` adds the weight decay γ θ to the gradient, keeps each
parameter's state, lends the rule reused buffers (its ``work_arrays``) and runs its ``update`` on
the rows of W1 a minibatch touched, never densifying the gradient, with the parameters of the
dense updates. It checks the rule's answers to the contract of :mod:`mlnn.nn.optimizers` once,
on a parameter's first step.

A row whose ∂J/∂θ is zero at step t still takes the step with g_t = γ θ; the rule's
``idle_steps(γ)`` says what that step does:

* UNCHANGED (SGD and AdaGrad, γ = 0): only the touched rows are updated;
* a Linear map A (SGD, γ > 0: θ ← (1 − ηγ) θ; momentum, any γ: (θ, v) ← A (θ, v),
  :func:`~mlnn.nn.optimizers.momentum_transition`): the steps are deferred, and Δ of them
  applied at once as A^Δ (:func:`powers`, :func:`matrix_powers`, :func:`apply_powers`);
* MUST_RUN (AdaGrad, γ > 0: G grows by (γθ)² at every step), and any rule that does not say:
  the rule runs on **every row at every step**.

A deferred row records the step it is up to date at (``state[name]["last_step"]``); the skipped
steps are applied in :meth:`LazyRows.step` before the row's update, in :meth:`LazyRows.catch_up`
to the rows a minibatch reads (before its forward pass, so the gradient is the dense one) and in
:meth:`LazyRows.flush` to every row (before evaluation or saving). Rows go in cache-sized blocks.
"""

import numpy as np

from mlnn.nn.network import RowSparseGradient
from mlnn.nn.optimizers import (MUST_RUN, Linear, check_moved, checked_idle_steps, checked_state,
                                momentum_transition, work_count)
from mlnn.base.validation import check_bool, check_nonnegative_float

__all__ = ["LazyRows", "matrix_powers", "momentum_transition", "powers",
           "apply_powers", "row_blocks", "ROW_BLOCK_BYTES"]

#: Bytes of a parameter's rows per block in a row-sparse update (see :func:`row_blocks`).
ROW_BLOCK_BYTES = 256 * 1024


def matrix_powers(A, exponents):
    """A^e for each integer e ≥ 0 in ``exponents``, (len(exponents), n, n) for A n × n, by
    repeated squaring vectorised over the exponents."""
    exponents = np.asarray(exponents, dtype=np.int64)
    assert np.all(exponents >= 0), f"negative numbers of skipped steps: {exponents[exponents < 0]}"
    result = np.broadcast_to(np.eye(len(A)), (len(exponents),) + np.shape(A)).copy()
    power = np.array(A, dtype=np.float64)
    remaining = exponents.copy()
    while np.any(remaining):
        odd = (remaining & 1).astype(bool)
        result[odd] = result[odd] @ power
        power = power @ power
        remaining >>= 1
    return result


def row_blocks(n_rows, row_bytes):
    """Slices of consecutive rows covering ``range(n_rows)``, about ROW_BLOCK_BYTES each: a
    block of θ, its state and its gradient stays in the L2 cache through the update's passes."""
    block = max(1, ROW_BLOCK_BYTES // max(row_bytes, 1))
    return [slice(start, start + block) for start in range(0, n_rows, block)]


def per_row(factor, theta):
    """``factor`` (one value per row) shaped to broadcast over the rows of ``theta``, its dtype."""
    return np.asarray(factor).reshape((-1,) + (1,) * (theta.ndim - 1)).astype(theta.dtype)


def powers(A, skipped):
    """A^Δ for each Δ in ``skipped``, (len(skipped), n, n); :func:`matrix_powers` of the
    distinct Δ unless A = [[a]]."""
    if A.shape == (1, 1):
        return (A[0, 0] ** skipped).reshape(-1, 1, 1)       # θ ← a^Δ θ
    distinct, which = np.unique(skipped, return_inverse=True)
    return matrix_powers(A, distinct)[which]


def apply_powers(theta, s, rows, P):
    """(θ, s) ← P (θ, s) on the rows ``rows`` of θ and of the state array s, P = A^Δ per row
    (:func:`powers`); θ ← P θ for a 1 × 1 P, with no s."""
    if P.shape[1] == 1:
        theta[rows] *= per_row(P[:, 0, 0], theta)
    elif np.all(P[:, 0, 0] == 1) and not np.any(P[:, 1, 0]):    # θ ← θ + a s, s ← d s: two
        theta[rows] += per_row(P[:, 0, 1], theta) * s[rows]     # passes fewer (momentum, γ = 0)
        s[rows] *= per_row(P[:, 1, 1], theta)
    else:
        theta_rows, s_rows = theta[rows], s[rows]
        theta[rows] = per_row(P[:, 0, 0], theta) * theta_rows + per_row(P[:, 0, 1], theta) * s_rows
        s[rows] = per_row(P[:, 1, 0], theta) * theta_rows + per_row(P[:, 1, 1], theta) * s_rows


#: The parameters a bias: decayed only with ``decay_biases=True``; every other one is a weight.
BIASES = ("b1", "b2")


class LazyRows:
    """A rule's ``update`` on dense or row-sparse gradients, with ℓ2 weight decay (module doc).

    With ``weight_decay`` γ > 0 the objective is J + (γ/2) Σ ‖θ‖² over W1 and W2, and over b1, b2
    too with ``decay_biases`` (Zhang & Zhou 2006 decay every parameter of BP-MLL); the rule gets
    g = ∂J/∂θ + γ θ. ``state[name]`` holds the state of parameter ``name`` (and ``last_step``);
    ``t`` counts the steps.
    """

    def __init__(self, rule, weight_decay, decay_biases=False):
        self.rule = rule
        self.weight_decay = check_nonnegative_float(weight_decay, "weight_decay")
        self.decay_biases = check_bool(decay_biases, "decay_biases")
        self.work_arrays = work_count(rule)
        self.state = {}
        self.t = 0
        self._idle = {}            # the rule's checked idle_steps(γ) of each parameter
        self._checking = {}        # until a step with a gradient: did it have one, move θ?
        self._workspace = {}       # the reused buffers of :meth:`_buffers`

    def decay(self, name):
        """γ for the parameter ``name``: weights always, biases with ``decay_biases``, else 0."""
        return self.weight_decay if self.decay_biases or name not in BIASES else 0.0

    def step(self, params, grads):
        """Apply one update with the gradients ``grads`` to ``params`` (in place)."""
        self.t += 1
        if self._checking is not None:
            self._checking = {"gradient": False, "moved": False}
        for name, grad in grads.items():
            theta = params[name]
            self._slot(name, theta)
            if not isinstance(grad, RowSparseGradient):
                self._apply(name, theta, slice(None), grad)
            elif self._idle[name] == MUST_RUN:
                self._update_every_row(name, theta, grad)
            else:
                rows, values = grad.rows, grad.values
                for block in self._blocks(name, max(len(rows), 1), values[:1].nbytes):  # k = 0
                    self._apply(name, theta, rows[block], values[block])                # once
        if self._checking and self._checking["gradient"]:
            check_moved(self.rule, self._checking["moved"])
            self._checking = None

    def catch_up(self, params, rows):
        """Bring the rows ``rows[name]`` of each parameter ``name`` up to step ``t`` (in place):
        their deferred zero-gradient steps."""
        for name, index in rows.items():
            if "last_step" in self.state.get(name, {}):
                self._catch_up(name, params[name], index, self.t)

    def flush(self, params):
        """Bring every row of every parameter up to step ``t`` (before evaluation or saving)."""
        self.catch_up(params, {name: slice(None) for name in self.state})

    def _slot(self, name, theta):
        """The state of ``name``, made and checked on its first step, with ``idle_steps``."""
        if name not in self.state:
            state = checked_state(self.rule, theta)
            self._idle[name] = checked_idle_steps(self.rule, self.decay(name), state)
            if isinstance(self._idle[name], Linear):
                state["last_step"] = np.full(theta.shape[0], self.t - 1, dtype=np.int64)
            self.state[name] = state
        return self.state[name]

    def _blocks(self, name, n_rows, row_bytes):
        """:func:`row_blocks`, or one block when the state holds a 0-d array (a step count)."""
        if any(array.ndim == 0 for array in self.state[name].values()):
            return [slice(0, n_rows)]
        return row_blocks(n_rows, row_bytes)

    def _apply(self, name, theta, rows, dJ):
        """Update rows ``rows`` of ``theta`` whose gradient ∂J/∂θ is ``dJ`` (decay γ θ added)."""
        state = self.state[name]
        if "last_step" in state:
            self._catch_up(name, theta, rows, self.t - 1)
        gamma = self.decay(name)
        g = dJ + gamma * theta[rows] if gamma else dJ
        self._update_rows(state, theta, rows, g)
        if "last_step" in state:
            state["last_step"][rows] = self.t

    def _update_rows(self, state, theta, rows, g):
        """The rule on rows ``rows`` of θ and its state with regularised gradient ``g``: rows
        gathered into reused buffers (views for a slice), updated, scattered back."""
        names = [slot for slot in state if slot != "last_step" and state[slot].ndim]
        slots = {slot: array for slot, array in state.items() if array.ndim == 0}
        if isinstance(rows, slice):
            theta_rows, gathered = theta[rows], [state[slot][rows] for slot in names]
        else:
            theta_rows, *gathered = self._buffers("gather", theta, len(g), 1 + len(names))
            np.take(theta, rows, axis=0, out=theta_rows, mode="clip")
            for slot, buffer in zip(names, gathered):
                np.take(state[slot], rows, axis=0, out=buffer, mode="clip")
        slots.update(zip(names, gathered))
        work = (self._buffers("work", theta, len(g), self.work_arrays),) if self.work_arrays \
            else ()
        before = None if self._checking is None else theta_rows.copy()
        self.rule.update(theta_rows, g, slots, *work)
        if before is not None:
            self._checking["gradient"] |= bool(np.any(g))
            self._checking["moved"] |= not np.array_equal(before, theta_rows, equal_nan=True)
        if not isinstance(rows, slice):
            theta[rows] = theta_rows
            for slot, buffer in zip(names, gathered):
                state[slot][rows] = buffer

    def _buffers(self, use, theta, n_rows, count):
        """``count`` arrays of ``n_rows`` rows like θ for ``use``: views of arrays made once (at
        least a block of rows) and reused by every later step."""
        key = (use, theta.shape[1:], theta.dtype)
        arrays = self._workspace.get(key, [])
        if len(arrays) < count or arrays[0].shape[0] < n_rows:
            block = ROW_BLOCK_BYTES // max(theta[:1].nbytes, 1) if theta.ndim > 1 else 0
            shape = (max([n_rows, block] + [len(array) for array in arrays]),) + theta.shape[1:]
            arrays = [np.empty(shape, theta.dtype) for _ in range(max(count, len(arrays)))]
            self._workspace[key] = arrays
        return [array[:n_rows] for array in arrays[:count]]

    def _catch_up(self, name, theta, rows, to_step):
        """Apply in closed form the zero-gradient steps of rows ``rows`` up to step ``to_step``."""
        state = self.state[name]
        last_step = state["last_step"]
        skipped = to_step - last_step[rows]
        behind = np.flatnonzero(skipped)
        if behind.size == 0:
            return
        rows = np.arange(len(last_step))[rows] if isinstance(rows, slice) else np.asarray(rows)
        rows, skipped, linear = rows[behind], skipped[behind], self._idle[name]
        P = powers(linear.A, skipped)                        # A^Δ per row
        s = None if linear.slot is None else state[linear.slot]
        for block in row_blocks(len(rows), theta[:1].nbytes):
            apply_powers(theta, s, rows[block], P[block])
        last_step[rows] = to_step

    def _update_every_row(self, name, theta, grad):
        """A row-sparse gradient applied to every row, in blocks (MUST_RUN)."""
        rows, values = grad.rows, grad.values
        for block in self._blocks(name, theta.shape[0], theta[:1].nbytes):
            low, high = np.searchsorted(rows, [block.start, block.stop])
            g = np.zeros_like(theta[block])
            g[rows[low:high] - block.start] = values[low:high]
            self._apply(name, theta, block, g)

