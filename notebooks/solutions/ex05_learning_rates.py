"""Solutions to the exercises of notebook 05 (learning rates, PWE vs CE)."""

import numpy as np


def excluded(Y):
    """Documents without a (relevant, irrelevant) pair: no relevant label, or all relevant."""
    n_relevant = np.count_nonzero(Y, axis=1)
    return (n_relevant == 0) | (n_relevant == Y.shape[1])


def average_precision_one(scores, y):
    """(1/|y|) Σ_{k∈y} #{k' ∈ y : s_k' ≥ s_k} / #{l : s_l ≥ s_k} (ties counted pessimistically)."""
    relevant = scores[y > 0]
    at_least = (scores[None, :] >= relevant[:, None]).sum(axis=1)          # rank(k)
    relevant_at_least = (relevant[None, :] >= relevant[:, None]).sum(axis=1)
    return float(np.mean(relevant_at_least / at_least))
