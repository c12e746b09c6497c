"""Solutions to the exercises of notebook 04 (dropout against over-fitting)."""

import numpy as np
import scipy.sparse as sp


def input_dropout(X, rate, rng):
    """Drop each *stored* entry of the CSR matrix X with probability ``rate``; scale the rest."""
    keep = rng.random(X.nnz) >= rate
    return sp.csr_matrix((X.data * keep / (1 - rate), X.indices, X.indptr), shape=X.shape)


def best_update(curve):
    """(the update with the lowest validation rank loss, final minus best rank loss)."""
    rankloss = np.asarray(curve["rankloss"])
    best = int(np.argmin(rankloss))
    return curve["updates"][best], rankloss[-1] - rankloss[best]
