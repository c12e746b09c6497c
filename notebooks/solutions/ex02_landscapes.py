"""Solutions to the exercises of notebook 02 (loss landscapes)."""

import numpy as np
from scipy.special import expit


def pwe_closed_form(W1, W2_1, c, y):
    """PWE (Eq. 3) on the Fig. 2 network with labels y, label 1 relevant: h = tanh(W1),
    o_1 = tanh(W2_1 h) and every other output o_l = tanh(c h) =: o_c. Of the |y||ȳ| pairs
    (p, n), the |ȳ| pairs (1, n) give exp(−(o_1 − o_c)) and the (|y| − 1)|ȳ| others exp(0) = 1,
    so J = (|ȳ| exp(−(o_1 − o_c)) + (|y| − 1)|ȳ|) / (|y||ȳ|) = (exp(−(o_1 − o_c)) + |y| − 1) / |y|
    (for y = (1, 1, 0, 0): (exp(−(o_1 − o_c)) + 1) / 2)."""
    h = np.tanh(W1)
    o_1, o_c = np.tanh(W2_1 * h), np.tanh(c * h)
    relevant = np.sum(y)
    return (np.exp(-(o_1 - o_c)) + relevant - 1) / relevant


def ce_dJ_dW2_1(W1, W2_1):
    """∂J/∂W2_1 = δ2_1 · h with δ2_1 = σ(z2_1) − y_1 = σ(W2_1 h) − 1 and h = tanh(W1)."""
    h = np.tanh(W1)
    return (expit(W2_1 * h) - 1) * h
