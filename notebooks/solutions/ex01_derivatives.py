"""Solutions to the exercises of notebook 01 (the network and its derivatives)."""

import numpy as np


def delta1_tanh(delta2, W2, h):
    """δ1 = (δ2 W2ᵀ) ∘ f_h'(z1), with f_h'(z1) = 1 − h² for tanh hidden units."""
    return (delta2 @ W2.T) * (1 - h * h)


def grad_W1_dense(X, delta1):
    """∂J/∂W1 = Xᵀ δ1 / n: the gradient of the *mean* loss over the n documents."""
    return np.asarray(X.T @ delta1) / X.shape[0]


def pwe_delta_one(o, y):
    """PWE's δ2 for one document by the double sum over (relevant p, irrelevant n) pairs."""
    relevant = y > 0
    p, n = np.flatnonzero(relevant), np.flatnonzero(~relevant)
    E = np.exp(-(o[p][:, None] - o[n][None, :]))        # E[a, b] = exp(−(o_p − o_n))
    dJ_do = np.zeros_like(o)
    dJ_do[p] = -E.sum(axis=1)
    dJ_do[n] = E.sum(axis=0)
    return dJ_do / (len(p) * len(n)) * (1 + o) * (1 - o)    # times tanh'(z2)


def central_differences(f, x, h=1e-6):
    """(f(x + h e_i) − f(x − h e_i)) / 2h for every entry i, on a copy of x."""
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        saved = x[i]
        x[i] = saved + h
        f_plus = f(x)
        x[i] = saved - h
        f_minus = f(x)
        x[i] = saved
        grad[i] = (f_plus - f_minus) / (2 * h)
    return grad
