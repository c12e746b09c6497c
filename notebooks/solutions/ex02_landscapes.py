"""Solutions to the exercises of notebook 02 (loss landscapes)."""

import numpy as np
from scipy.special import expit


def pwe_closed_form(W1, W2_1):
    """J = (1/3) Σ_{n=2..4} exp(−(o_1 − o_n)) = exp(−o_1), since o_n = tanh(c h) = 0."""
    o_1 = np.tanh(W2_1 * np.tanh(W1))
    return np.exp(-o_1)


def ce_dJ_dW2_1(W1, W2_1):
    """∂J/∂W2_1 = δ2_1 · h with δ2_1 = σ(z2_1) − y_1 = σ(W2_1 h) − 1 and h = tanh(W1)."""
    h = np.tanh(W1)
    return (expit(W2_1 * h) - 1) * h
