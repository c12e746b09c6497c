"""The shared checks and the one seeded train/validation split."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from mlnn.errors import MLNNError
from mlnn.validation import (check_fraction, check_integer, check_length, check_training_data,
                             validation_split)


@given(n=st.integers(2, 500), fraction=st.floats(0.01, 0.99), seed=st.integers(0, 2**32 - 1))
def test_validation_split_partitions_and_is_seeded(n, fraction, seed):
    n_val = int(round(fraction * n))
    if n_val < 1 or n_val >= n:
        with pytest.raises(MLNNError, match="leaves no documents"):
            validation_split(n, fraction=fraction, random_state=seed)
        return
    fit, val = validation_split(n, fraction=fraction, random_state=seed)
    assert len(val) == n_val and len(fit) == n - n_val
    np.testing.assert_array_equal(np.sort(np.concatenate([fit, val])), np.arange(n))
    assert np.all(np.diff(fit) > 0) and np.all(np.diff(val) > 0)
    # the convention: the first round(fraction · n) entries of the seed's permutation
    order = np.random.default_rng(seed).permutation(n)
    np.testing.assert_array_equal(val, np.sort(order[:n_val]))
    again = validation_split(n, fraction=fraction, random_state=seed)
    np.testing.assert_array_equal(again[1], val)


@pytest.mark.parametrize("fraction", [0, 0.0, 1.0, -0.1, 1.5, True, "0.1", float("nan")])
def test_validation_split_rejects_bad_fractions(fraction):
    with pytest.raises(MLNNError, match="fraction"):
        validation_split(100, fraction=fraction)


def test_check_fraction_with_and_without_zero():
    assert check_fraction(0.25, "f") == 0.25
    assert check_fraction(0, "f", allow_zero=True) == 0.0
    with pytest.raises(MLNNError, match=r"f must be in \(0, 1\), got 0"):
        check_fraction(0, "f")
    with pytest.raises(MLNNError, match=r"g must be in \[0, 1\), got 1"):
        check_fraction(1, "g", allow_zero=True)


def test_check_integer_and_length():
    assert check_integer(np.int64(3), "k", minimum=0) == 3
    for bad in (True, 2.0, -1, "3"):
        with pytest.raises(MLNNError, match="k must be an integer >= 0"):
            check_integer(bad, "k", minimum=0)
    assert check_length(("a", "b"), "names", 2) == ["a", "b"]
    with pytest.raises(MLNNError, match="names has 1 entries, expected 2"):
        check_length(["a"], "names", 2)


def test_check_training_data():
    X, Y = np.eye(4)[:3], np.array([[1, 0], [0, 1], [1, 1]])
    X_c, Y_c, X_val, Y_val = check_training_data(X, Y, dtype=np.float32)
    assert sp.isspmatrix_csr(X_c) and X_c.dtype == np.float32 and X_val is None and Y_val is None
    assert (Y_c != sp.csr_matrix(Y)).nnz == 0
    _, _, X_val, Y_val = check_training_data(X, Y, X[:1], Y[:1])
    assert X_val.shape == (1, 4) and Y_val.shape == (1, 2)
    for args, message in [((X, Y[:2]), "Y has 2 rows but X has 3"),
                          ((X[:0], Y[:0]), "no documents"),
                          ((X, Y, X[:1], None), "both X_val and Y_val"),
                          ((X, Y, X[:1, :3], Y[:1]), "X_val has 3 features"),
                          ((X, Y, X[:1], Y[:1, :1]), "Y_val has 1 labels")]:
        with pytest.raises(MLNNError, match=message):
            check_training_data(*args)
    with pytest.raises(MLNNError, match="X has 4 features"):
        check_training_data(X, Y, n_features=5)
