"""Dropout (Hinton et al. 2012; paper Sec. 3.5), as explicit masks.

Each unit is kept with probability 1 − rate. We use *inverted* dropout: a kept unit is scaled by
1 / (1 − rate) during training, so nothing changes at test time (equivalent to Hinton et al.'s
scaling of the outgoing weights by 1 − rate at test time). The masks are plain arrays from an
explicit ``numpy.random.Generator``, so a pass with a fixed mask can be gradient-checked. A rate
is checked once where it enters (:func:`check_rate`); the mask functions trust it.
"""

import numpy as np
import scipy.sparse as sp

from mlnn.base.errors import MLNNError
from mlnn.base.validation import check_float_in


def check_rate(rate, name="dropout"):
    """A dropout rate as a float: a real number in [0, 1) (not a bool, not NaN), else raise."""
    return check_float_in(rate, name, 0, 1, closed="left")


def hidden_mask(shape, rate, rng, dtype=np.float64):
    """A dropout mask for h (n × F), 0 or 1/(1 − rate), or None if rate 0: keeps a unit where
    ``rng.random(shape, dtype=float32)`` is ≥ ``rate``."""
    if rate == 0:
        return None
    keep = rng.random(shape, dtype=np.float32) >= rate
    return keep.astype(dtype) * np.dtype(dtype).type(1 / (1 - rate))


def input_mask(X, rate, rng):
    """A dropout mask over the *stored* entries of a CSR input X, one value per ``X.data``
    entry (zeros need none), or None if rate 0; see :func:`apply_input_mask`."""
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
