"""SGD, momentum and AdaGrad: hand-computed steps, weight decay, row-sparse updates equal to dense
ones, and the weight-decayed gradient against finite differences."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import expit

from mlnn.base.errors import MLNNError
from mlnn.nn.gradcheck import numerical_gradient
from mlnn.nn.losses import CrossEntropy, PairwiseExponential
from mlnn.nn.network import Network, RowSparseGradient
from mlnn.nn.lazy_updates import matrix_powers
from mlnn.nn.lazy_updates import LazyRows, momentum_transition
from mlnn.nn.optimizers import MUST_RUN, UNCHANGED, AdaGrad, Momentum, SGD, get_rule
from tests.strategies import problems

OPTIMIZER_FACTORIES = {
    "sgd": lambda **decay: LazyRows(SGD(0.1), **decay),
    "adagrad": lambda **decay: LazyRows(AdaGrad(0.1), **decay),
    "momentum": lambda **decay: LazyRows(Momentum(0.1, momentum=0.9), **decay),
    "nesterov": lambda **decay: LazyRows(Momentum(0.1, momentum=0.8, nesterov=True), **decay),
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
@given(case=gradient_sequences(), weight_decay=st.sampled_from([0.0, 0.05, 0.7]),
       name=st.sampled_from(["W1", "b1"]), decay_biases=st.booleans())
def test_row_sparse_updates_equal_dense_updates(kind, case, weight_decay, name, decay_biases):
    theta0, sequence = case
    decay = {"weight_decay": weight_decay, "decay_biases": decay_biases}
    sparse_theta, dense_theta = theta0.copy(), theta0.copy()
    sparse_opt, dense_opt = OPTIMIZER_FACTORIES[kind](**decay), OPTIMIZER_FACTORIES[kind](**decay)
    for grad in sequence:
        sparse_opt.step({name: sparse_theta}, {name: grad})
        dense_opt.step({name: dense_theta}, {name: grad.toarray()})
    sparse_opt.flush({name: sparse_theta})
    np.testing.assert_allclose(sparse_theta, dense_theta, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", sorted(OPTIMIZER_FACTORIES))
@given(case=gradient_sequences(), weight_decay=st.sampled_from([0.0, 0.05, 0.7]))
def test_row_sparse_updates_equal_the_update_rules_written_out(kind, case, weight_decay):
    """The dense update rules of the module doc, one line each, against the row-sparse ones."""
    theta0, sequence = case
    eta, mu = 0.1, {"momentum": 0.9, "nesterov": 0.8}.get(kind, 0.0)
    theta, state = theta0.copy(), np.zeros_like(theta0)          # state: v or G
    for grad in sequence:
        g = grad.toarray() + weight_decay * theta
        if kind == "sgd":
            theta = theta - eta * g
        elif kind == "adagrad":
            state = state + g ** 2
            theta = theta - eta * g / (np.sqrt(state) + 1e-8)
        else:
            state = mu * state - eta * g
            theta = theta + (mu * state - eta * g if kind == "nesterov" else state)
    sparse_theta = theta0.copy()
    optimizer = OPTIMIZER_FACTORIES[kind](weight_decay=weight_decay)
    for grad in sequence:
        optimizer.step({"W1": sparse_theta}, {"W1": grad})
    optimizer.flush({"W1": sparse_theta})
    np.testing.assert_allclose(sparse_theta, theta, rtol=1e-12, atol=1e-12)


@given(case=gradient_sequences())
def test_momentum_flush_in_the_middle_changes_nothing(case):
    theta0, sequence = case
    a, b = theta0.copy(), theta0.copy()
    opt_a, opt_b = LazyRows(Momentum(0.05, 0.9),
                            weight_decay=0.0), LazyRows(Momentum(0.05, 0.9), weight_decay=0.0)
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
    LazyRows(SGD(0.5), weight_decay=0.0).step({"b": theta}, {"b": np.array([0.2, -0.4])})
    np.testing.assert_allclose(theta, [1.0 - 0.1, -2.0 + 0.2])


def test_momentum_steps_by_hand():
    theta = np.array([1.0])
    opt = LazyRows(Momentum(0.1, momentum=0.5), weight_decay=0.0)
    opt.step({"b": theta}, {"b": np.array([2.0])})
    # v = 0.5·0 − 0.1·2 = −0.2;  θ = 1 − 0.2 = 0.8
    np.testing.assert_allclose(theta, [0.8])
    opt.step({"b": theta}, {"b": np.array([1.0])})
    # v = 0.5·(−0.2) − 0.1·1 = −0.2;  θ = 0.8 − 0.2 = 0.6
    np.testing.assert_allclose(theta, [0.6])
    np.testing.assert_allclose(opt.state["b"]["velocity"], [-0.2])


def test_nesterov_steps_by_hand():
    theta = np.array([1.0])
    opt = LazyRows(Momentum(0.1, momentum=0.5, nesterov=True), weight_decay=0.0)
    opt.step({"b": theta}, {"b": np.array([2.0])})
    # v = −0.2;  θ = 1 + 0.5·(−0.2) − 0.1·2 = 0.7
    np.testing.assert_allclose(theta, [0.7])
    opt.step({"b": theta}, {"b": np.array([1.0])})
    # v = 0.5·(−0.2) − 0.1·1 = −0.2;  θ = 0.7 + 0.5·(−0.2) − 0.1·1 = 0.5
    np.testing.assert_allclose(theta, [0.5])
    np.testing.assert_allclose(opt.state["b"]["velocity"], [-0.2])


def test_adagrad_steps_by_hand():
    theta = np.array([1.0, 1.0])
    opt = LazyRows(AdaGrad(0.1, epsilon=1e-8), weight_decay=0.0)
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
    for opt in (LazyRows(AdaGrad(0.1), weight_decay=0.0),
                LazyRows(Momentum(0.1, momentum=0.9), weight_decay=0.0),
                LazyRows(AdaGrad(0.1), weight_decay=0.1),
                LazyRows(Momentum(0.1, momentum=0.9), weight_decay=0.1), LazyRows(SGD(0.1), weight_decay=0.1)):
        opt.step({"W1": theta}, {"W1": grad})
        opt.step({"W1": theta}, {"W1": RowSparseGradient(np.array([0]), grad.values[:1], (5, 3))})
        opt.flush({"W1": theta})
        assert theta.dtype == np.float32
        assert all(v.dtype == np.float32 for v in opt.state["W1"].values()
                   if v.dtype.kind == "f")


@pytest.mark.parametrize("call, message", [
    (lambda: get_rule("adam", 0.1), "unknown optimizer 'adam'"),
    (lambda: AdaGrad(0.1, epsilon=0), "epsilon must be a positive"),
    (lambda: LazyRows(SGD(0.1), weight_decay=-0.1), "weight_decay must be a finite number ≥ 0, got -0.1"),
    (lambda: LazyRows(Momentum(0.1, momentum=0.9), weight_decay=float("nan")), "weight_decay must be a finite number"),
    (lambda: LazyRows(AdaGrad(0.1), weight_decay=float("inf")), "weight_decay must be a finite number"),
    (lambda: LazyRows(SGD(0.1), weight_decay="0.1"), "weight_decay must be a finite number .*'0.1'"),
    (lambda: LazyRows(SGD(0.1), weight_decay=True), "weight_decay must be a finite number"),
    (lambda: LazyRows(SGD(0.1), weight_decay=None), "weight_decay must be a finite number"),
    (lambda: LazyRows(SGD(0.1), 0.0, decay_biases="yes"), "decay_biases must be True or False"),
])
def test_bad_options_are_clear_errors(call, message):
    with pytest.raises(MLNNError, match=message):
        call()


@pytest.mark.parametrize("kind", sorted(OPTIMIZER_FACTORIES))
@given(case=gradient_sequences(), weight_decay=st.sampled_from([0.0, 0.05]))
def test_updates_in_row_blocks_equal_one_block(kind, case, weight_decay):
    """Row-sparse updates, catch-ups and AdaGrad's decay of every row go in blocks of rows;
    blocks of one row change nothing."""
    from unittest import mock

    import mlnn.nn.lazy_updates
    theta0, sequence = case
    whole, blocked = theta0.copy(), theta0.copy()
    opt_whole = OPTIMIZER_FACTORIES[kind](weight_decay=weight_decay)
    opt_blocked = OPTIMIZER_FACTORIES[kind](weight_decay=weight_decay)
    for grad in sequence:
        opt_whole.catch_up({"W1": whole}, {"W1": grad.rows})
        opt_whole.step({"W1": whole}, {"W1": grad})
        with mock.patch.object(mlnn.nn.lazy_updates, "ROW_BLOCK_BYTES", 1):   # one row per block
            opt_blocked.catch_up({"W1": blocked}, {"W1": grad.rows})
            opt_blocked.step({"W1": blocked}, {"W1": grad})
    opt_whole.flush({"W1": whole})
    with mock.patch.object(mlnn.nn.lazy_updates, "ROW_BLOCK_BYTES", 1):
        opt_blocked.flush({"W1": blocked})
    np.testing.assert_array_equal(blocked, whole)


def test_adagrad_follows_its_formula_from_tiny_to_huge_gradients():
    """θ − η0 g / (sqrt(G) + ε) for |g| from 1e-8 to 1e3: ε is added after the square root."""
    g1 = np.logspace(-8, 3, 12) * np.where(np.arange(12) % 2, -1.0, 1.0)
    theta0 = np.linspace(-1.0, 1.0, 12)
    theta = theta0.copy()
    opt = LazyRows(AdaGrad(0.1, epsilon=1e-8), weight_decay=0.0)
    opt.step({"W2": theta}, {"W2": g1})
    expected = theta0 - 0.1 * g1 / (np.abs(g1) + 1e-8)     # sqrt(G) = |g1|
    np.testing.assert_allclose(theta, expected, rtol=1e-13, atol=0)
    np.testing.assert_allclose(theta[0], theta0[0] - 0.05, rtol=1e-13)   # g = 1e-8: step η0/2
    g2 = -3 * g1
    opt.step({"W2": theta}, {"W2": g2})
    expected = expected - 0.1 * g2 / (np.sqrt(10) * np.abs(g1) + 1e-8)   # G = g1² + 9 g1²
    np.testing.assert_allclose(theta, expected, rtol=1e-13, atol=0)


def test_weight_decay_one_step_by_hand():
    """γ = 0.1, η = 0.5: the weight W1 is decayed, the bias b1 only with decay_biases."""
    for decay_biases, b1_after in ((False, 1 - 0.5 * 0.4), (True, 1 - 0.5 * (0.4 + 0.1 * 1))):
        params = {"W1": np.array([[2.0]]), "b1": np.array([1.0])}
        grads = {"W1": np.array([[0.4]]), "b1": np.array([0.4])}
        LazyRows(SGD(0.5), weight_decay=0.1, decay_biases=decay_biases).step(params, grads)
        # g = 0.4 + 0.1·2 = 0.6;  W1 = 2 − 0.5·0.6 = 1.7
        np.testing.assert_allclose(params["W1"], [[1.7]], rtol=1e-15)
        np.testing.assert_allclose(params["b1"], [b1_after], rtol=1e-15)
    params = {"W1": np.array([[2.0]]), "b1": np.array([1.0])}
    LazyRows(AdaGrad(0.5), weight_decay=0.1).step(params, {"W1": np.array([[0.4]]), "b1": np.array([0.4])})
    # W1: g = 0.6, G = 0.36, W1 = 2 − 0.5·0.6/(0.6 + 1e−8);  b1: g = 0.4, not decayed
    np.testing.assert_allclose(params["W1"], [[2 - 0.3 / (0.6 + 1e-8)]], rtol=1e-15)
    np.testing.assert_allclose(params["b1"], [1 - 0.2 / (0.4 + 1e-8)], rtol=1e-15)


@pytest.mark.parametrize("nesterov, expected", [
    # step 1: g = 0.4 + 0.1·2 = 0.6, v = −0.3, W1 = 2 − 0.3 = 1.7 (Nesterov: 2 + 0.9·(−0.3) − 0.3)
    # step 2, no gradient: g = 0.1·W1, v = 0.9 v − 0.5 g
    (False, 1.7 + (0.9 * -0.3 - 0.5 * 0.17)),                  # = 1.345
    (True, 1.43 + 0.9 * (0.9 * -0.3 - 0.5 * 0.143) - 0.5 * 0.143),
])
def test_momentum_with_weight_decay_on_a_row_without_gradient_by_hand(nesterov, expected):
    W1 = np.array([[2.0], [5.0]])
    opt = LazyRows(Momentum(0.5, momentum=0.9, nesterov=nesterov), weight_decay=0.1)
    opt.step({"W1": W1}, {"W1": RowSparseGradient(np.array([0]), np.array([[0.4]]), (2, 1))})
    opt.step({"W1": W1}, {"W1": RowSparseGradient(np.array([1]), np.array([[0.0]]), (2, 1))})
    opt.flush({"W1": W1})
    np.testing.assert_allclose(W1[0], [expected], rtol=1e-14)


def test_sgd_weight_decay_shrinks_a_row_without_gradient_by_hand():
    W1 = np.array([[1.0], [2.0]])
    opt = LazyRows(SGD(0.5), weight_decay=0.1)
    for _ in range(3):
        opt.step({"W1": W1}, {"W1": RowSparseGradient(np.array([0]), np.array([[0.2]]), (2, 1))})
    assert W1[1, 0] == 2.0                       # deferred: untouched so far
    opt.flush({"W1": W1})
    np.testing.assert_allclose(W1[1], [2.0 * 0.95 ** 3], rtol=1e-15)   # (1 − ηγ)³ = 0.857375


@pytest.mark.parametrize("kind, decay", [("sgd", 0.1), ("momentum", 0.0), ("momentum", 0.1),
                                         ("nesterov", 0.1)])
def test_rows_without_gradient_are_deferred_not_touched(kind, decay):
    """The cost of a step is in the touched rows: the others are not written until caught up."""
    rng = np.random.default_rng(0)
    W1 = rng.normal(size=(50, 4))
    opt = OPTIMIZER_FACTORIES[kind](weight_decay=decay)
    for rows in ([1, 7], [7, 30], [2]):
        before, last = W1.copy(), opt.state.get("W1", {}).get("last_step")
        last = None if last is None else last.copy()
        grad = RowSparseGradient(np.array(rows), rng.normal(size=(len(rows), 4)), W1.shape)
        opt.step({"W1": W1}, {"W1": grad})
        others = np.setdiff1d(np.arange(50), rows)
        np.testing.assert_array_equal(W1[others], before[others])
        if last is not None:
            np.testing.assert_array_equal(opt.state["W1"]["last_step"][others], last[others])


def test_adagrad_weight_decay_updates_every_row_at_every_step():
    W1 = np.full((6, 2), 3.0)
    opt = LazyRows(AdaGrad(0.5), weight_decay=0.1)
    opt.step({"W1": W1}, {"W1": RowSparseGradient(np.array([2]), np.ones((1, 2)), W1.shape)})
    # an untouched row: g = 0.1·3 = 0.3, G = 0.09, θ = 3 − 0.5·0.3/(0.3 + 1e−8)
    np.testing.assert_allclose(np.delete(W1, 2, axis=0), 3 - 0.15 / (0.3 + 1e-8), rtol=1e-15)
    np.testing.assert_allclose(W1[2], 3 - 0.5 * 1.3 / (1.3 + 1e-8), rtol=1e-15)


@pytest.mark.parametrize("kind", sorted(OPTIMIZER_FACTORIES))
@given(case=gradient_sequences(), weight_decay=st.sampled_from([0.0, 0.05]),
       seed=st.integers(0, 2**32 - 1))
def test_catch_up_brings_the_named_rows_to_the_dense_values(kind, case, weight_decay, seed):
    theta0, sequence = case
    sparse_theta, dense_theta = theta0.copy(), theta0.copy()
    sparse_opt = OPTIMIZER_FACTORIES[kind](weight_decay=weight_decay)
    dense_opt = OPTIMIZER_FACTORIES[kind](weight_decay=weight_decay)
    for grad in sequence:
        sparse_opt.step({"W1": sparse_theta}, {"W1": grad})
        dense_opt.step({"W1": dense_theta}, {"W1": grad.toarray()})
    rows = np.flatnonzero(np.random.default_rng(seed).random(len(theta0)) < 0.5)
    before = sparse_theta.copy()
    sparse_opt.catch_up({"W1": sparse_theta}, {"W1": rows})
    np.testing.assert_allclose(sparse_theta[rows], dense_theta[rows], rtol=1e-12, atol=1e-12)
    others = np.setdiff1d(np.arange(len(theta0)), rows)
    np.testing.assert_array_equal(sparse_theta[others], before[others])


def test_catching_up_before_the_forward_pass_on_the_minimal_case():
    """W1 = 0.5·1, W2 = 1, X = I, Y = (1, 0), Momentum(0.1, 0.9), documents 0, 1, 0 one at a time:
    the dense loop (written out here) gives W1[0] = 0.638110; reading row 0 without catching up
    gave 0.638896."""
    X, Y = sp.csr_matrix(np.eye(2)), np.array([[1.0], [0.0]])
    network = Network(0.5 * np.ones((2, 1)), np.zeros(1), np.ones((1, 1)), np.zeros(1), "relu")
    opt = LazyRows(Momentum(0.1, momentum=0.9), weight_decay=0.0)
    P = {name: value.copy() for name, value in network.params.items()}
    v = {name: np.zeros_like(value) for name, value in P.items()}
    for i in (0, 1, 0):
        opt.catch_up(network.params, {"W1": X[i].indices})
        cache = network.forward(X[i])
        opt.step(network.params, network.backward(cache, cache.o - Y[i:i + 1]).params)
        x = np.eye(2)[i:i + 1]                             # the dense loop: ReLU, sigmoid, CE
        z1 = x @ P["W1"] + P["b1"]
        h = np.maximum(z1, 0)
        delta2 = expit(h @ P["W2"] + P["b2"]) - Y[i:i + 1]
        delta1 = (delta2 @ P["W2"].T) * (z1 > 0)
        grads = {"W1": x.T @ delta1, "b1": delta1[0], "W2": h.T @ delta2, "b2": delta2[0]}
        for name, g in grads.items():
            v[name] = 0.9 * v[name] - 0.1 * g
            P[name] += v[name]
    opt.flush(network.params)
    for name in P:
        np.testing.assert_allclose(network.params[name], P[name], rtol=1e-14)
    assert P["W1"][0, 0] == pytest.approx(0.638110, abs=5e-7)


def test_matrix_powers_equal_repeated_products():
    rng = np.random.default_rng(0)
    A = rng.normal(scale=0.6, size=(2, 2))
    exponents = np.array([0, 1, 2, 3, 7, 8, 31, 64, 65, 100])
    powers = matrix_powers(A, exponents)
    for e, power in zip(exponents, powers):
        np.testing.assert_allclose(power, np.linalg.matrix_power(A, e), rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_transition_is_one_zero_gradient_step(nesterov):
    """(θ, v) ← A (θ, v) is one dense step with ∂J/∂θ = 0 (so g = γ θ)."""
    opt = LazyRows(Momentum(0.3, momentum=0.7, nesterov=nesterov), weight_decay=0.2)
    theta, v = np.array([1.5]), np.array([-0.25])
    opt.step({"W1": np.zeros(1)}, {"W1": np.zeros(1)})     # makes the state
    opt.state["W1"]["velocity"][...] = v
    stepped = theta.copy()
    opt.step({"W1": stepped}, {"W1": np.zeros(1)})
    A = momentum_transition(opt.rule, 0.2)
    np.testing.assert_allclose(stepped, A[0, 0] * theta + A[0, 1] * v, rtol=1e-15)
    np.testing.assert_allclose(opt.state["W1"]["velocity"], A[1, 0] * theta + A[1, 1] * v,
                               rtol=1e-15)


# ------------------------------------------------------------------------------------------------
# The regularised objective J + (γ/2) Σ ‖θ‖² (weight decay γ)


def loss_for(network):
    return CrossEntropy() if network.output.name == "sigmoid" else PairwiseExponential()


@given(case=problems(), weight_decay=st.sampled_from([0.0, 0.1, 2.5]), decay_biases=st.booleans())
def test_the_decayed_step_follows_the_regularised_objective(case, weight_decay, decay_biases):
    """One SGD step of LazyRows with η = 1 (then flushed) moves each parameter by
    −∂(J + γ/2 Σ‖θ‖²)/∂θ, the sum over W1, W2 and, with ``decay_biases``, b1 and b2."""
    network, X, Y, _ = case
    loss = loss_for(network)
    cache = network.forward(X)
    grads = network.backward(cache, loss.delta(cache.z2, cache.o, Y)).params
    stepped = {name: theta.copy() for name, theta in network.params.items()}
    optimizer = LazyRows(SGD(1.0), weight_decay, decay_biases)
    optimizer.step(stepped, grads)
    optimizer.flush(stepped)
    decayed = ("W1", "W2", "b1", "b2") if decay_biases else ("W1", "W2")

    def objective(params, penalised):
        out = Network(**params, hidden_activation=network.hidden_activation,
                      output=network.output).forward(X)
        penalty = sum(np.sum(params[name] ** 2) for name in penalised)
        return loss.value(out.z2, out.o, Y) + weight_decay / 2 * penalty

    for name, theta in network.params.items():
        # as a function of θ_name alone: the other parameters' penalties are constants, left out
        # so that their size does not swamp the central difference in rounding error
        def f(value, name=name):
            return objective({**network.params, name: value}, [name] if name in decayed else [])
        np.testing.assert_allclose(theta - stepped[name], numerical_gradient(f, theta),
                                   rtol=1e-5, atol=1e-8, err_msg=f"∂(J + γ/2 ‖θ‖²)/∂{name}")


def test_matrix_powers_fail_fast_on_a_negative_number_of_skipped_steps():
    """A row ahead of the step it is caught up to would loop forever in the repeated squaring."""
    with pytest.raises(AssertionError, match="negative numbers of skipped steps"):
        matrix_powers(np.eye(2), [3, -1])


@pytest.mark.parametrize("kind", sorted(OPTIMIZER_FACTORIES))
def test_each_rule_is_its_dense_update_written_out(kind):
    """``update(theta, g, state)`` is the rule of the module doc, on a whole parameter."""
    rng = np.random.default_rng(1)
    theta0, g = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    optimizer = OPTIMIZER_FACTORIES[kind](weight_decay=0.0).rule
    theta, state = theta0.copy(), optimizer.new_state(theta0)
    optimizer.update(theta, g, state)
    if kind == "sgd":
        expected = theta0 - 0.1 * g
    elif kind == "adagrad":
        expected = theta0 - 0.1 * g / (np.abs(g) + 1e-8)
    else:
        v = -0.1 * g
        expected = theta0 + (optimizer.momentum * v - 0.1 * g if kind == "nesterov" else v)
    np.testing.assert_allclose(theta, expected, rtol=1e-15)


@pytest.mark.parametrize("kind, names", [("sgd", ("W1", "W2")), ("adagrad", ("W1", "W2")),
                                         ("momentum", ("W2",)), ("nesterov", ("W2",))])
def test_a_step_makes_no_copy_of_a_dense_parameter(kind, names):
    """After the first steps, a step on a dense F × L parameter (W2) and on rows of W1 allocates
    less than a tenth of W2: its buffers are made once and reused (NumPy's own buffers for a
    broadcast operand take at most 8,192 numbers). (Momentum's catch-up of the touched rows of
    W1 before their step copies them.)"""
    import tracemalloc
    rng = np.random.default_rng(4)
    params = {"W1": rng.normal(size=(400, 60)), "W2": rng.normal(size=(500, 400))}
    optimizer = OPTIMIZER_FACTORIES[kind](weight_decay=0.0)

    def gradients():
        rows = np.sort(rng.choice(400, 150, replace=False))
        grads = {"W1": RowSparseGradient(rows, rng.normal(size=(150, 60)), (400, 60)),
                 "W2": rng.normal(size=(500, 400))}
        return {name: grads[name] for name in names}
    for _ in range(3):     # the first steps make the buffers
        optimizer.step(params, gradients())
    grads = gradients()
    tracemalloc.start()
    try:
        optimizer.step(params, grads)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < params["W2"].nbytes / 10


@pytest.mark.parametrize("kind, gamma, answer", [
    ("sgd", 0.0, UNCHANGED), ("adagrad", 0.0, UNCHANGED), ("adagrad", 0.1, MUST_RUN)])
def test_each_rule_says_what_its_zero_gradient_steps_do(kind, gamma, answer):
    assert OPTIMIZER_FACTORIES[kind](weight_decay=0.0).rule.idle_steps(gamma) == answer


@pytest.mark.parametrize("kind, gamma, A", [
    ("sgd", 0.1, [[1 - 0.1 * 0.1]]),                              # θ ← (1 − ηγ) θ
    ("momentum", 0.0, [[1, 0.9], [0, 0.9]]),                      # v ← μ v;  θ ← θ + μ v
    ("nesterov", 0.2, [[1 - 0.1 * 0.2 * 1.8, 0.64], [-0.1 * 0.2, 0.8]])])
def test_a_linear_zero_gradient_step_is_one_dense_step(kind, gamma, A):
    """The map a rule declares is what its ``update`` does with g = γ θ."""
    rule = OPTIMIZER_FACTORIES[kind](weight_decay=0.0).rule
    linear = rule.idle_steps(gamma)
    np.testing.assert_allclose(linear.A, A, rtol=1e-15)
    theta, state = np.array([1.5, -2.0]), rule.new_state(np.zeros(2))
    s = state[linear.slot] if linear.slot else None
    if s is not None:
        s[...] = [-0.25, 0.5]
    before = np.vstack([theta, s]) if s is not None else theta[None].copy()
    rule.update(theta, gamma * theta, state)
    after = np.vstack([theta, s]) if s is not None else theta[None]
    np.testing.assert_allclose(after, linear.A @ before, rtol=1e-14)


class Undeclared:
    """SGD's update in a class of its own that says nothing about zero-gradient steps."""

    def __init__(self, rule):
        self.rule, self.rows = rule, []

    def new_state(self, theta):
        return {}

    def update(self, theta, g, state):
        self.rows.append(len(theta))
        self.rule.update(theta, g, state)


class Declared(Undeclared):
    def idle_steps(self, gamma):
        return UNCHANGED


def test_the_executor_asks_the_rule_not_its_class():
    """The same SGD step in a foreign class: run on every row when it says nothing, on the
    touched rows only when it answers UNCHANGED; the same parameters either way."""
    grads = [RowSparseGradient(np.array([1, 4]), np.ones((2, 3)), (9, 3)),
             RowSparseGradient(np.array([0]), np.ones((1, 3)), (9, 3))]
    results = []
    for Rule in (Undeclared, Declared):
        rule, W1 = Rule(SGD(0.5)), np.zeros((9, 3))
        optimizer = LazyRows(rule, weight_decay=0.0)
        for grad in grads:
            optimizer.step({"W1": W1}, {"W1": grad})
        results.append((rule.rows, W1))
    assert results[0][0] == [9, 9] and results[1][0] == [2, 1]
    np.testing.assert_array_equal(results[0][1], results[1][1])
