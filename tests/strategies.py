"""Hypothesis strategies for small networks, sparse inputs and label sets (float64)."""

import numpy as np
import scipy.sparse as sp
from hypothesis import assume
from hypothesis import strategies as st

from mlnn.nn.network import Network


@st.composite
def label_matrices(draw, n, L):
    """n × L 0/1 matrices, with rows of no label and of all labels among the cases drawn."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    density = draw(st.sampled_from([0.0, 0.2, 0.5, 0.8, 1.0]))
    Y = (rng.random((n, L)) < density).astype(np.float64)
    if draw(st.booleans()):
        Y[rng.integers(n)] = draw(st.sampled_from([0.0, 1.0]))   # an edge-case row
    return Y


@st.composite
def sparse_inputs(draw, n, D):
    """n × D CSR inputs: random sparsity (empty rows and columns included), values of both signs."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    density = draw(st.sampled_from([0.0, 0.1, 0.3, 0.7, 1.0]))
    dense = np.where(rng.random((n, D)) < density, rng.normal(size=(n, D)), 0.0)
    return sp.csr_matrix(dense)


@st.composite
def problems(draw, hidden=("relu", "tanh", "sigmoid"), output=("sigmoid", "tanh"), max_D=10):
    """(network, X, Y, seed): a float64 network with random shapes and parameters and a
    minibatch."""
    n = draw(st.integers(1, 6))
    D = draw(st.integers(1, max_D))
    F = draw(st.integers(1, 6))
    L = draw(st.integers(2, 6))
    seed = draw(st.integers(0, 2**32 - 1))
    network = Network.initialize(D, L, hidden_units=F,
                                 hidden_activation=draw(st.sampled_from(hidden)),
                                 output=draw(st.sampled_from(output)), random_state=seed,
                                 dtype=np.float64, init="glorot")
    rng = np.random.default_rng(seed + 1)
    scale = draw(st.sampled_from([0.5, 1.0, 2.0]))
    for name in ("W1", "W2"):
        network.params[name][...] = rng.normal(scale=scale, size=network.params[name].shape)
    for name in ("b1", "b2"):
        network.params[name][...] = rng.normal(scale=0.5, size=network.params[name].shape)
    X = draw(sparse_inputs(n, D))
    Y = draw(label_matrices(n, L))
    if network.hidden_activation.name == "relu":   # keep pre-activations away from the kink at 0
        z1 = network.forward(X).z1
        assume(np.min(np.abs(z1)) > 1e-3)
    return network, X, Y, seed
