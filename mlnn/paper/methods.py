"""The eight methods compared in the paper (Sec. 4, "Algorithms"; Table 3).

=============  ===============  ============  =====  ========  =======
method         hidden units     outputs       loss   dropout   learner
=============  ===============  ============  =====  ========  =======
NN_A           ReLU             sigmoid       CE     —         AdaGrad
NN_AD          ReLU             sigmoid       CE     0.5       AdaGrad
BP-MLL_TA      tanh             tanh          PWE    —         AdaGrad
BP-MLL_TAD     tanh             tanh          PWE    0.5       AdaGrad
BP-MLL_RA      ReLU             tanh          PWE    —         AdaGrad
BP-MLL_RAD     ReLU             tanh          PWE    0.5       AdaGrad
BR_B           binary relevance, linear SVMs, C chosen by mean of micro/macro F1 (sign threshold)
BR_R           binary relevance, linear SVMs, C chosen by rank loss, threshold predictor
=============  ===============  ============  =====  ========  =======

All networks have 1,000 hidden units; η0 is chosen from :data:`LEARNING_RATES` and the number of
epochs by early stopping on validation rank loss (:mod:`mlnn.paper.selection`); C from
:data:`C_VALUES` (:func:`mlnn.svm.fit_br`).
"""

from mlnn.errors import MLNNError
from mlnn.svm import DEFAULT_C_GRID

#: The paper's grid for the base learning rate η0.
LEARNING_RATES = (0.001, 0.01, 0.1)

#: The paper's grid for the SVMs' C, 10⁻³ … 10³ (defined with the solver, :mod:`mlnn.svm`).
C_VALUES = DEFAULT_C_GRID

METHODS = {
    "NN_A": {"kind": "nn", "hidden_activation": "relu", "loss": "ce", "dropout": 0.0},
    "NN_AD": {"kind": "nn", "hidden_activation": "relu", "loss": "ce", "dropout": 0.5},
    "BP-MLL_TA": {"kind": "nn", "hidden_activation": "tanh", "loss": "pwe", "dropout": 0.0},
    "BP-MLL_TAD": {"kind": "nn", "hidden_activation": "tanh", "loss": "pwe", "dropout": 0.5},
    "BP-MLL_RA": {"kind": "nn", "hidden_activation": "relu", "loss": "pwe", "dropout": 0.0},
    "BP-MLL_RAD": {"kind": "nn", "hidden_activation": "relu", "loss": "pwe", "dropout": 0.5},
    "BR_B": {"kind": "br", "variant": "B"},
    "BR_R": {"kind": "br", "variant": "R"},
}

#: Command-line spellings: nn-a, nn-ad, bpmll-ta, ..., br-b, br-r.
ALIASES = {name.lower().replace("bp-mll", "bpmll").replace("_", "-"): name for name in METHODS}

#: Command-line spellings of the six network methods.
NETWORK_ALIASES = tuple(sorted(alias for alias, name in ALIASES.items()
                               if METHODS[name]["kind"] == "nn"))


def resolve(name):
    """The paper's method name for ``name`` (paper spelling or command-line alias)."""
    if name in METHODS:
        return name
    if name in ALIASES:
        return ALIASES[name]
    raise MLNNError(f"unknown method {name!r}; choose from {sorted(ALIASES)} "
                    f"(or the paper's names {list(METHODS)})")


def network_params(name):
    """The :class:`~mlnn.estimator.MultiLabelNN` hyper-parameters of a network method."""
    spec = METHODS[resolve(name)]
    if spec["kind"] != "nn":
        raise MLNNError(f"{name} is not a neural-network method")
    params = {key: value for key, value in spec.items() if key != "kind"}
    params["optimizer"] = "adagrad"
    return params
