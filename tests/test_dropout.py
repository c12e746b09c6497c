"""Dropout masks: their statistics and values, input dropout on CSR, rate 0, no mutation, errors."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from mlnn.base.errors import MLNNError
from mlnn.nn.dropout import apply_input_mask, check_rate, hidden_mask, input_mask
from mlnn.nn.losses import CrossEntropy
from mlnn.nn.network import Network
from mlnn.nn.optimizers import SGD
from mlnn.nn.training import train
from tests.strategies import sparse_inputs

RATES = (0.1, 0.5, 0.9)


def binomial_bound(p_keep, count, sigmas=5):
    """``sigmas`` standard deviations of the kept fraction of ``count`` Bernoulli(p_keep) draws."""
    return sigmas * np.sqrt(p_keep * (1 - p_keep) / count)


@pytest.mark.parametrize("rate", RATES)
def test_hidden_mask_keeps_1_minus_rate_and_has_mean_one(rate):
    mask = hidden_mask((400, 250), rate, np.random.default_rng(0))
    kept = np.mean(mask != 0)
    assert abs(kept - (1 - rate)) < binomial_bound(1 - rate, mask.size)
    # E[mask] = (1 − p) · 1/(1 − p) = 1; the mean's standard deviation is sqrt(p/(1 − p)/N)
    assert abs(mask.mean() - 1) < 5 * np.sqrt(rate / (1 - rate) / mask.size)
    assert len(np.unique(mask, axis=0)) == 400    # drawn per document and unit, not repeated
    assert len(np.unique(mask, axis=1).T) == 250


@given(rate=st.floats(0.01, 0.95), n=st.integers(1, 30), F=st.integers(1, 30),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**32 - 1))
def test_hidden_mask_values_are_exactly_zero_or_the_inverted_scale(rate, n, F, dtype, seed):
    mask = hidden_mask((n, F), rate, np.random.default_rng(seed), dtype)
    assert mask.shape == (n, F) and mask.dtype == dtype
    scale = np.dtype(dtype).type(1 / (1 - rate))
    assert np.all((mask == 0) | (mask == scale))


@pytest.mark.parametrize("rate", RATES)
def test_input_dropout_on_csr_keeps_the_pattern_and_scales_kept_entries(rate):
    X = sp.random(300, 400, density=0.05, format="csr", random_state=1) + 0.5 * \
        sp.random(300, 400, density=0.05, format="csr", random_state=2)
    X.data[::2] *= -1                              # values of both signs
    data, indices, indptr = X.data.copy(), X.indices.copy(), X.indptr.copy()
    mask = input_mask(X, rate, np.random.default_rng(0))
    X_dropped = apply_input_mask(X, mask)
    np.testing.assert_array_equal(X.data, data)    # the caller's X is not modified
    np.testing.assert_array_equal(X.indices, indices)
    np.testing.assert_array_equal(X.indptr, indptr)
    assert sp.isspmatrix_csr(X_dropped) and X_dropped.shape == X.shape
    np.testing.assert_array_equal(X_dropped.indices, X.indices)   # the same stored pattern ...
    np.testing.assert_array_equal(X_dropped.indptr, X.indptr)
    nonzero = X_dropped.toarray() != 0
    assert not np.any(nonzero & (X.toarray() == 0))                # ... so nonzeros are a subset
    kept = X_dropped.data != 0
    np.testing.assert_array_equal(X_dropped.data[kept], X.data[kept] * (1 / (1 - rate)))
    assert abs(kept.mean() - (1 - rate)) < binomial_bound(1 - rate, X.nnz)


@given(data=st.data(), rate=st.floats(0.01, 0.95), seed=st.integers(0, 2**32 - 1))
def test_input_mask_values_and_no_mutation_for_any_sparsity(data, rate, seed):
    X = data.draw(sparse_inputs(data.draw(st.integers(1, 8)), data.draw(st.integers(1, 8))))
    before = X.data.copy()
    mask = input_mask(X, rate, np.random.default_rng(seed))
    assert mask.shape == (X.nnz,)
    assert np.all((mask == 0) | (mask == 1 / (1 - rate)))
    X_dropped = apply_input_mask(X, mask)
    np.testing.assert_array_equal(X.data, before)
    np.testing.assert_array_equal(X_dropped.data, before * mask)


def test_rate_zero_means_no_mask_and_the_input_unchanged():
    rng = np.random.default_rng(0)
    X = sp.random(5, 12, density=0.4, format="csr", random_state=0)
    assert hidden_mask((5, 3), 0.0, rng) is None
    assert input_mask(X, 0, rng) is None
    assert apply_input_mask(X, None) is X
    assert rng.random() == np.random.default_rng(0).random()   # rate 0 draws no random numbers
    network = Network.initialize(12, 2, hidden_units=3, hidden_activation="relu",
                                 random_state=0, dtype=np.float64, init="glorot")
    np.testing.assert_array_equal(network.forward(X, None).o,
                                  network.forward(X, np.ones((5, 3))).o)


def test_same_generator_same_masks():
    X = sp.random(6, 10, density=0.5, format="csr", random_state=0)
    first = (hidden_mask((6, 4), 0.5, np.random.default_rng(3)),
             input_mask(X, 0.5, np.random.default_rng(3)))
    second = (hidden_mask((6, 4), 0.5, np.random.default_rng(3)),
              input_mask(X, 0.5, np.random.default_rng(3)))
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("rate", [-0.1, 1.0, 1.5, float("nan"), "0.5", None, True, 0.5j])
def test_bad_rates_are_clear_errors_naming_the_argument(rate):
    """A rate is checked once, where it enters training; the masks of each minibatch trust it."""
    with pytest.raises(MLNNError, match=r"^my_rate must be a number in \[0, 1\)"):
        check_rate(rate, "my_rate")
    network = Network.initialize(2, 1, hidden_units=2, hidden_activation="relu", random_state=0,
                                 init="glorot")
    X, Y = sp.csr_matrix(np.eye(2)), np.array([[1], [0]])
    for name in ("dropout", "input_dropout"):
        with pytest.raises(MLNNError, match=rf"^{name} must be a number in \[0, 1\)"):
            train(network, CrossEntropy(), SGD(0.1), X, Y, batch_size=64, max_epochs=1,
                  **{"dropout": 0.0, "input_dropout": 0.0, name: rate})


@pytest.mark.parametrize("rate", [0, 0.0, 0.25, np.float32(0.5), np.float64(0.9), np.int64(0)])
def test_good_rates_are_accepted_as_floats(rate):
    assert check_rate(rate) == float(rate)
    assert type(check_rate(rate)) is float


def test_input_dropout_needs_sparse_input_and_a_matching_mask():
    with pytest.raises(MLNNError, match="CSR matrix, got ndarray"):
        input_mask(np.eye(3), 0.5, np.random.default_rng(0))
    X = sp.csr_matrix(np.eye(3))
    with pytest.raises(MLNNError, match=r"one value per stored entry of X \(3\)"):
        apply_input_mask(X, np.ones(4))
