"""Dropout (Hinton et al. 2012; paper Sec. 3.5), as explicit masks.

Each unit is kept with probability 1 − rate. We use *inverted* dropout: a kept unit is scaled by
1 / (1 − rate) during training, so the mask entries are 0 or 1/(1 − rate) and nothing changes at
test time. This is equivalent to Hinton et al.'s weight scaling (train unscaled, multiply the
outgoing weights by 1 − rate at test time): both make the expected training-time input of the next
layer equal its test-time input.

The masks are plain arrays made from an explicit ``numpy.random.Generator``, so a forward/backward
pass with a fixed mask is deterministic and can be gradient-checked.

A rate is checked once, by :func:`check_rate`, where it enters: :func:`mlnn.nn.training.train`
and the model description (:mod:`mlnn.model.params`). The mask functions, called for every
minibatch, trust it.
"""

import numpy as np
import scipy.sparse as sp

from mlnn.base.errors import MLNNError
from mlnn.base.validation import check_float_in


def check_rate(rate, name="dropout"):
    """A dropout rate as a float: a real number in [0, 1) (not a bool, not NaN), else raise."""
    return check_float_in(rate, name, 0, 1, closed="left")


def hidden_mask(shape, rate, rng, dtype=np.float64):
    """A dropout mask for the hidden units h (n × F): entries 0 or 1/(1 − rate), or None if rate 0.

    Draws ``rng.random(shape, dtype=float32)`` and keeps a unit where that number is ≥ ``rate``
    (a rate in [0, 1), see :func:`check_rate`).
    """
    if rate == 0:
        return None
    keep = rng.random(shape, dtype=np.float32) >= rate
    return keep.astype(dtype) * np.dtype(dtype).type(1 / (1 - rate))


def input_mask(X, rate, rng):
    """A dropout mask over the *stored* entries of a CSR input X: one value per ``X.data`` entry.

    Zero inputs contribute nothing whether dropped or not, so only the nonzeros need a mask; the
    dropped input is ``X`` with ``data * mask`` (see :func:`apply_input_mask`): the same stored
    pattern, with dropped entries stored as explicit zeros. Returns None if rate 0 (a rate in
    [0, 1), see :func:`check_rate`).
    """
    if not sp.issparse(X):
        raise MLNNError("input dropout needs X as a scipy.sparse CSR matrix, got "
                        f"{type(X).__name__}")
    if rate == 0:
        return None
    keep = rng.random(X.nnz, dtype=np.float32) >= rate
    return keep.astype(X.dtype) * X.dtype.type(1 / (1 - rate))


def apply_input_mask(X, mask):
    """The CSR matrix X with its stored values multiplied by ``mask`` (X itself is not modified)."""
    if mask is None:
        return X
    if np.shape(mask) != (X.nnz,):
        raise MLNNError(f"mask must have one value per stored entry of X ({X.nnz}), "
                        f"got shape {np.shape(mask)}")
    X_dropped = X.copy()
    X_dropped.data = X.data * mask
    return X_dropped
