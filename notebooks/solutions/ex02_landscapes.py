"""Solutions to the exercises of notebook 02 (loss landscapes)."""

import numpy as np
from scipy.special import expit


def pwe_closed_form(W1, W2_1, c):
    """PWE (Eq. 3) on the Fig. 2 network with y = (1, 1, 0, 0): h = tanh(W1), o_1 = tanh(W2_1 h)
    and o_2 = o_3 = o_4 = tanh(c h) =: o_c. The 2 × 2 = 4 pairs (p, n), p ∈ {1, 2}, n ∈ {3, 4}:
    two pairs (1, n) give exp(−(o_1 − o_c)), two pairs (2, n) give exp(0) = 1, so
    J = (2 exp(−(o_1 − o_c)) + 2) / 4."""
    h = np.tanh(W1)
    o_1, o_c = np.tanh(W2_1 * h), np.tanh(c * h)
    return (np.exp(-(o_1 - o_c)) + 1) / 2


def ce_dJ_dW2_1(W1, W2_1):
    """∂J/∂W2_1 = δ2_1 · h with δ2_1 = σ(z2_1) − y_1 = σ(W2_1 h) − 1 and h = tanh(W1)."""
    h = np.tanh(W1)
    return (expit(W2_1 * h) - 1) * h
