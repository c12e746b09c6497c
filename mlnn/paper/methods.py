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

All networks have 1,000 hidden units (Sec. 4); η0 comes from :data:`LEARNING_RATES` and C from
:data:`C_VALUES`, chosen on validation data (:mod:`mlnn.paper.selection`); the number of epochs
by our declared stopping rule (README). The dropout rate 0.5 is ours: the paper gives none.
:data:`METHODS` writes each network as overrides of :mod:`mlnn.model.params`, whose defaults are
NN_A.

Not in the paper's table: ``BP-MLL`` (command line ``bpmll-original``), BP-MLL as Zhang & Zhou
(2006) publish it: tanh hidden and outputs, PWE, ceil(0.2 · D) hidden units, online SGD at 0.05
for 100 epochs, weight decay on weights and biases (Σ_i E_i + 0.1 ‖θ‖²), and thresholds
t(o) = wᵀo + b by least squares on Hamming-optimal targets. Ours differs in Glorot
initialisation, shuffled epochs and unscaled tf-idf input.
"""

import math

from mlnn.base.errors import MLNNError
from mlnn.baselines.svm import DEFAULT_C_VALUES
from mlnn.model.params import DEFAULTS

#: The paper's grid for the base learning rate η0.
LEARNING_RATES = (0.001, 0.01, 0.1)

#: The paper's grid for the SVMs' C, 10⁻³ … 10³ (defined in :mod:`mlnn.baselines.svm`).
C_VALUES = DEFAULT_C_VALUES

#: Each method: its ``kind`` and, for a network, the hyper-parameters it sets (else the defaults).
METHODS = {
    "NN_A": {"kind": "nn"},
    "NN_AD": {"kind": "nn", "dropout": 0.5},
    "BP-MLL_TA": {"kind": "nn", "hidden_activation": "tanh", "loss": "pwe"},
    "BP-MLL_TAD": {"kind": "nn", "hidden_activation": "tanh", "loss": "pwe", "dropout": 0.5},
    "BP-MLL_RA": {"kind": "nn", "loss": "pwe"},
    "BP-MLL_RAD": {"kind": "nn", "loss": "pwe", "dropout": 0.5},
    "BR_B": {"kind": "br", "variant": "B"},
    "BR_R": {"kind": "br", "variant": "R"},
    "BP-MLL": {"kind": "published", "hidden_activation": "tanh", "loss": "pwe",
               "optimizer": "sgd", "learning_rate": 0.05, "batch_size": 1,
               "max_epochs": DEFAULTS["max_epochs"], "validation_fraction": 0.0,
               "decay_biases": True, "threshold_features": "scores", "threshold_intercept": "free",
               "threshold_lambda": 0.0, "threshold_target": "hamming"},
}

#: The hyper-parameters that make a network method, the columns of the table above.
METHOD_COLUMNS = ("hidden_activation", "loss", "dropout", "optimizer")

#: The eight methods of the paper's Table 3, in its order.
PAPER_METHODS = tuple(name for name, spec in METHODS.items() if spec["kind"] != "published")

#: BP-MLL as published: hidden units as a share of D, and the cost of Σ_i E_i + cost ‖θ‖², per
#: document E_i + (γ/2)‖θ‖² with γ = 2 · cost / N.
BPMLL_HIDDEN_SHARE, BPMLL_COST = 0.2, 0.1

#: Command-line spellings: nn-a, nn-ad, bpmll-ta, ..., br-b, br-r, bpmll-original.
ALIASES = {name.lower().replace("bp-mll", "bpmll").replace("_", "-"): name
           for name in PAPER_METHODS}
ALIASES["bpmll-original"] = "BP-MLL"

#: Command-line spellings of the network methods: the paper's six, and BP-MLL as published.
NETWORK_ALIASES = tuple(sorted(alias for alias, name in ALIASES.items()
                               if METHODS[name]["kind"] != "br"))

#: Command-line spellings of the paper's six network methods.
PAPER_NETWORK_ALIASES = tuple(alias for alias in NETWORK_ALIASES
                              if METHODS[ALIASES[alias]]["kind"] == "nn")


def resolve(name):
    """The paper's method name for ``name`` (paper spelling or command-line alias)."""
    if name in METHODS:
        return name
    if name in ALIASES:
        return ALIASES[name]
    raise MLNNError(f"unknown method {name!r}; choose from {sorted(ALIASES)} "
                    f"(or the paper's names {list(METHODS)})")


def network_params(name, n_features=None, n_documents=None):
    """The :class:`~mlnn.model.estimator.MultiLabelNN` hyper-parameters of a network method;
    BP-MLL as published also needs D and N (its hidden layer and weight decay)."""
    name = resolve(name)
    spec = METHODS[name]
    if spec["kind"] == "br":
        raise MLNNError(f"{name} is not a neural-network method")
    params = {key: DEFAULTS[key] for key in METHOD_COLUMNS}
    params.update((key, value) for key, value in spec.items() if key != "kind")
    if spec["kind"] == "nn":
        return params
    if n_features is None or n_documents is None:
        raise MLNNError(f"{name} needs the number of features and of training documents")
    params["hidden_units"] = math.ceil(BPMLL_HIDDEN_SHARE * n_features)
    params["weight_decay"] = 2 * BPMLL_COST / n_documents
    return params
