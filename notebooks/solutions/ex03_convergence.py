"""Solutions to the exercises of notebook 03 (convergence)."""

import numpy as np


def rank_loss_one(scores, y):
    """Eq. 1: the fraction of (relevant, irrelevant) pairs ranked wrongly, a tie counting ½."""
    relevant = y > 0
    diff = scores[relevant][:, None] - scores[~relevant][None, :]     # s_p − s_n for each pair
    return (np.sum(diff < 0) + 0.5 * np.sum(diff == 0)) / diff.size


def effective_rates(grads, eta0, eps=1e-8):
    """AdaGrad's step size per feature after each step t: η0 / (√(Σ_{s≤t} g_s²) + ε)."""
    return eta0 / (np.sqrt(np.cumsum(grads ** 2, axis=0)) + eps)
