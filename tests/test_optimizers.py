"""SGD, momentum and AdaGrad: hand-computed steps, and row-sparse updates equal to dense ones."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlnn.errors import MLNNError
from mlnn.network import RowSparseGradient
from mlnn.optimizers import AdaGrad, Momentum, SGD, get_optimizer

OPTIMIZER_FACTORIES = {
    "sgd": lambda: SGD(0.1),
    "adagrad": lambda: AdaGrad(0.1),
    "momentum": lambda: Momentum(0.1, momentum=0.9),
    "nesterov": lambda: Momentum(0.1, momentum=0.8, nesterov=True),
}


@st.composite
def gradient_sequences(draw):
    """A D × F parameter and a sequence of row-sparse gradients (some steps touch no row)."""
    D, F = draw(st.integers(1, 12)), draw(st.integers(1, 4))
    steps = draw(st.integers(1, 12))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    sequence = []
    for _ in range(steps):
        rows = np.flatnonzero(rng.random(D) < draw(st.sampled_from([0.0, 0.3, 1.0])))
        sequence.append(RowSparseGradient(rows, rng.normal(size=(len(rows), F)), (D, F)))
    return rng.normal(size=(D, F)), sequence


@pytest.mark.parametrize("kind", sorted(OPTIMIZER_FACTORIES))
@given(case=gradient_sequences())
def test_row_sparse_updates_equal_dense_updates(kind, case):
    theta0, sequence = case
    sparse_theta, dense_theta = theta0.copy(), theta0.copy()
    sparse_opt, dense_opt = OPTIMIZER_FACTORIES[kind](), OPTIMIZER_FACTORIES[kind]()
    for grad in sequence:
        sparse_opt.step({"W1": sparse_theta}, {"W1": grad})
        dense_opt.step({"W1": dense_theta}, {"W1": grad.toarray()})
    sparse_opt.flush({"W1": sparse_theta})
    np.testing.assert_allclose(sparse_theta, dense_theta, rtol=1e-12, atol=1e-12)


@given(case=gradient_sequences())
def test_momentum_flush_in_the_middle_changes_nothing(case):
    theta0, sequence = case
    a, b = theta0.copy(), theta0.copy()
    opt_a, opt_b = Momentum(0.05, 0.9), Momentum(0.05, 0.9)
    for i, grad in enumerate(sequence):
        opt_a.step({"W1": a}, {"W1": grad})
        opt_b.step({"W1": b}, {"W1": grad})
        if i % 2:
            opt_b.flush({"W1": b})
    opt_a.flush({"W1": a})
    opt_b.flush({"W1": b})
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_sgd_step_by_hand():
    theta = np.array([1.0, -2.0])
    SGD(0.5).step({"b": theta}, {"b": np.array([0.2, -0.4])})
    np.testing.assert_allclose(theta, [1.0 - 0.1, -2.0 + 0.2])


def test_momentum_steps_by_hand():
    theta = np.array([1.0])
    opt = Momentum(0.1, momentum=0.5)
    opt.step({"b": theta}, {"b": np.array([2.0])})
    # v = 0.5·0 − 0.1·2 = −0.2;  θ = 1 − 0.2 = 0.8
    np.testing.assert_allclose(theta, [0.8])
    opt.step({"b": theta}, {"b": np.array([1.0])})
    # v = 0.5·(−0.2) − 0.1·1 = −0.2;  θ = 0.8 − 0.2 = 0.6
    np.testing.assert_allclose(theta, [0.6])
    np.testing.assert_allclose(opt.state["b"]["velocity"], [-0.2])


def test_nesterov_steps_by_hand():
    theta = np.array([1.0])
    opt = Momentum(0.1, momentum=0.5, nesterov=True)
    opt.step({"b": theta}, {"b": np.array([2.0])})
    # v = −0.2;  θ = 1 + 0.5·(−0.2) − 0.1·2 = 0.7
    np.testing.assert_allclose(theta, [0.7])


def test_adagrad_steps_by_hand():
    theta = np.array([1.0, 1.0])
    opt = AdaGrad(0.1, epsilon=1e-8)
    opt.step({"b": theta}, {"b": np.array([3.0, 0.0])})
    # G = (9, 0);  θ_0 = 1 − 0.1·3/(3 + 1e−8);  θ_1 unchanged (g = 0)
    np.testing.assert_allclose(theta, [1 - 0.1 * 3 / (3 + 1e-8), 1.0])
    opt.step({"b": theta}, {"b": np.array([4.0, 0.0])})
    # G = (25, 0);  θ_0 −= 0.1·4/5
    np.testing.assert_allclose(theta[0], 1 - 0.1 * 3 / (3 + 1e-8) - 0.1 * 4 / (5 + 1e-8))
    np.testing.assert_allclose(opt.state["b"]["sum_squares"], [25.0, 0.0])


def test_float32_state_stays_float32():
    theta = np.ones((5, 3), dtype=np.float32)
    grad = RowSparseGradient(np.array([1, 3]), np.ones((2, 3), dtype=np.float32), (5, 3))
    for opt in (AdaGrad(0.1), Momentum(0.1)):
        opt.step({"W1": theta}, {"W1": grad})
        opt.flush({"W1": theta})
        assert theta.dtype == np.float32
        assert all(v.dtype == np.float32 for v in opt.state["W1"].values()
                   if v.dtype.kind == "f")


@pytest.mark.parametrize("call, message", [
    (lambda: get_optimizer("adam", 0.1), "unknown optimizer 'adam'"),
    (lambda: SGD(-1), "learning_rate must be a positive"),
    (lambda: SGD(float("nan")), "learning_rate must be a positive"),
    (lambda: Momentum(0.1, momentum=1.0), r"momentum must be a number in \[0, 1\)"),
    (lambda: AdaGrad(0.1, epsilon=0), "epsilon must be a positive"),
])
def test_bad_options_are_clear_errors(call, message):
    with pytest.raises(MLNNError, match=message):
        call()


@pytest.mark.parametrize("kind", sorted(OPTIMIZER_FACTORIES))
@given(case=gradient_sequences())
def test_updates_in_row_blocks_equal_one_block(kind, case):
    """Row-sparse updates are applied in blocks of rows; blocks of one row change nothing."""
    from unittest import mock

    import mlnn.optimizers
    theta0, sequence = case
    whole, blocked = theta0.copy(), theta0.copy()
    opt_whole, opt_blocked = OPTIMIZER_FACTORIES[kind](), OPTIMIZER_FACTORIES[kind]()
    for grad in sequence:
        opt_whole.step({"W1": whole}, {"W1": grad})
        with mock.patch.object(mlnn.optimizers, "ROW_BLOCK_BYTES", 1):   # one row per block
            opt_blocked.step({"W1": blocked}, {"W1": grad})
    opt_whole.flush({"W1": whole})
    opt_blocked.flush({"W1": blocked})
    np.testing.assert_array_equal(blocked, whole)
