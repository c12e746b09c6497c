"""Hypothesis strategies for training runs: small float64 networks, data, optimizer settings."""

import numpy as np
from hypothesis import strategies as st

from mlnn.nn.network import Network
from mlnn.nn.lazy_updates import LazyRows
from mlnn.nn.optimizers import AdaGrad, Momentum, SGD
from tests.strategies import label_matrices, sparse_inputs

#: The optimizers of the dense-reference tests, with learning rates that move the parameters a lot
#: in a few dozen updates without diverging.
OPTIMIZER_KINDS = ("sgd", "momentum", "nesterov", "adagrad")


def make_optimizer(kind, weight_decay=0.0, decay_biases=False):
    """The optimizer named ``kind`` (see :data:`OPTIMIZER_KINDS`) with its test settings."""
    decay = {"weight_decay": weight_decay, "decay_biases": decay_biases}
    if kind == "sgd":
        return LazyRows(SGD(0.5), **decay)
    if kind == "momentum":
        return LazyRows(Momentum(0.1, momentum=0.9), **decay)
    if kind == "nesterov":
        return LazyRows(Momentum(0.1, momentum=0.8, nesterov=True), **decay)
    return LazyRows(AdaGrad(0.3), **decay)


#: The settings :func:`make_optimizer` uses, for the dense reference: (rule, η, μ).
OPTIMIZER_SETTINGS = {"sgd": ("sgd", 0.5, 0.0), "momentum": ("momentum", 0.1, 0.9),
                      "nesterov": ("nesterov", 0.1, 0.8), "adagrad": ("adagrad", 0.3, 0.0)}


@st.composite
def training_cases(draw, max_D=15):
    """A dict: a float64 ``network`` (non-zero biases), CSR ``X`` with empty rows and columns,
    0/1 ``Y``, ``batch_size``, ``max_epochs``, ``dropout``, ``input_dropout``, ``seed``."""
    n = draw(st.integers(1, 12))
    D = draw(st.integers(1, max_D))
    F = draw(st.integers(1, 5))
    L = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    hidden = draw(st.sampled_from(["relu", "tanh"]))
    network = Network.initialize(D, L, hidden_units=F, hidden_activation=hidden, output="sigmoid",
                                 random_state=seed, dtype=np.float64, init="glorot")
    rng = np.random.default_rng(seed + 1)
    for name in ("b1", "b2"):
        network.params[name][...] = rng.normal(scale=0.5, size=network.params[name].shape)
    X, Y = draw(sparse_inputs(n, D)), draw(label_matrices(n, L))
    # training refuses data with nothing to learn (mlnn.base.validation.check_training_data): give
    # an all-empty X one stored entry and a Y without a positive one relevant label
    if X.count_nonzero() == 0:
        X = X.tolil()
        X[0, 0] = rng.normal()
        X = X.tocsr()
    if not Y.any():
        Y[0, 0] = 1.0
    return {"network": network, "X": X, "Y": Y,
            "batch_size": draw(st.integers(1, 5)), "max_epochs": draw(st.integers(1, 4)),
            "dropout": draw(st.sampled_from([0.0, 0.5])),
            "input_dropout": draw(st.sampled_from([0.0, 0.3])), "seed": seed}


@st.composite
def decay_settings(draw):
    """(weight_decay, decay_biases): no decay, a small one and a large one; biases on or off."""
    return draw(st.sampled_from([0.0, 0.01, 0.3])), draw(st.booleans())
