"""Worked solution of notebook 01b (build the network from zero), in plain NumPy/SciPy.

Each function is one piece the notebook asks for, graded by ``mlnn.course.check_*``;
nothing here imports mlnn. The network is that of the paper (Sec. 3.2, Eq. 2) with ReLU hidden
units, trained with CE (Eq. 6) and AdaGrad (Sec. 3.5). Rows are documents: X is n × D (CSR),
W1 D × F, W2 F × L. The gradients are those of the mean loss J = (1/n) Σ_i J_i.
"""

import numpy as np
from scipy.special import expit


def forward(X, W1, b1, W2, b2, f_o=expit):
    """z1 = X W1 + b1, h = ReLU(z1), z2 = h W2 + b2, o = f_o(z2); returns (z1, h, z2, o)."""
    z1 = X @ W1 + b1                 # sparse X: reads only the rows of W1 of the words present
    h = np.maximum(z1, 0)
    z2 = h @ W2 + b2
    return z1, h, z2, f_o(z2)


def ce_delta2(z2, o, Y):
    """CE's δ2 = ∂J_i/∂z2 through sigmoid outputs: o − y (per document, no 1/n)."""
    return o - Y


def pwe_delta2_pairs(z2, o, Y):
    """PWE's δ2 through tanh outputs by the literal double sum over (p ∈ y, n ∈ ȳ) pairs."""
    delta2 = np.zeros_like(o)
    for i in range(len(o)):
        relevant, irrelevant = np.flatnonzero(Y[i] > 0), np.flatnonzero(Y[i] == 0)
        pairs = len(relevant) * len(irrelevant)
        for p in relevant:
            for n in irrelevant:
                e = np.exp(-(o[i, p] - o[i, n])) / pairs
                delta2[i, p] -= e
                delta2[i, n] += e
    return delta2 * (1 + o) * (1 - o)          # times tanh'(z2)


def pwe_delta2(z2, o, Y):
    """PWE's δ2 factorised: exp(−(o_p − o_n)) = exp(−o_p) exp(o_n), O(L) per document."""
    relevant = Y > 0
    n_y = relevant.sum(axis=1, keepdims=True)
    pairs = np.maximum(n_y * (Y.shape[1] - n_y), 1).astype(o.dtype)   # 1 for an excluded one
    S_y = np.where(relevant, np.exp(-o), 0).sum(axis=1, keepdims=True)
    S_ybar = np.where(relevant, 0, np.exp(o)).sum(axis=1, keepdims=True)
    dJ_do = np.where(relevant, -np.exp(-o) * S_ybar, np.exp(o) * S_y) / pairs
    return dJ_do * (1 + o) * (1 - o)           # an excluded document has S_y or S_ybar = 0


def delta1_relu(delta2, W2, z1):
    """δ1 = (δ2 W2ᵀ) ∘ ReLU'(z1), with ReLU'(z1) = 1 where z1 > 0, else 0."""
    return (delta2 @ W2.T) * (z1 > 0)


def grad_W1_rows(X, delta1):
    """∂J/∂W1 = Xᵀ δ1 / n on the rows of the words present in X: (rows, values (k × F))."""
    rows = np.unique(X.indices)
    return rows, np.asarray(X[:, rows].T @ delta1) / X.shape[0]


def backward(X, z1, h, W2, delta2):
    """The gradients of the mean loss: {"W1": (rows, values), "b1": …, "W2": …, "b2": …}."""
    n = X.shape[0]
    delta1 = delta1_relu(delta2, W2, z1)
    return {"W1": grad_W1_rows(X, delta1), "b1": delta1.sum(axis=0) / n,
            "W2": h.T @ delta2 / n, "b2": delta2.sum(axis=0) / n}


class AdaGrad:
    """G ← G + g²;  θ ← θ − η0 g / (√G + ε), per parameter, on the rows of a row-sparse W1."""

    def __init__(self, eta0, epsilon=1e-8):
        self.eta0, self.epsilon = eta0, epsilon
        self.G = {}          # name → the sum of squared gradients G of that parameter

    def step(self, params, grads):
        for name, g in grads.items():
            rows = slice(None)
            if isinstance(g, tuple):                   # W1: (rows, values)
                rows, g = g
            G = self.G.setdefault(name, np.zeros_like(params[name]))
            G[rows] += g * g
            params[name][rows] -= self.eta0 * g / (np.sqrt(G[rows]) + self.epsilon)


def update(params, optimizer, X_batch, Y_batch):
    """One minibatch update: forward, CE's δ2, backward, ``optimizer.step``."""
    z1, h, z2, o = forward(X_batch, **params)
    optimizer.step(params, backward(X_batch, z1, h, params["W2"], ce_delta2(z2, o, Y_batch)))


def train(params, optimizer, X, Y, epochs, batch_size, rng, update=update):
    """``epochs`` passes over the documents, each in a new random order from ``rng``, in
    minibatches of ``batch_size`` (the last one smaller), each handed to ``update``."""
    for _ in range(epochs):
        order = rng.permutation(X.shape[0])
        for start in range(0, X.shape[0], batch_size):
            batch = order[start:start + batch_size]
            update(params, optimizer, X[batch], Y[batch])
