"""A network, its loss and its optimizer built from names: the one place that does it.

The estimator, the model files, the convergence experiments and the benchmark all describe a
model by names and numbers (``hidden_activation="relu"``, ``loss="ce"``, ``optimizer="adagrad"``,
``learning_rate=0.01`` ...). :func:`build` turns such a description into the three objects the
trainer takes, validating every name on the way. The output activation is never named: it is
the loss's own (sigmoid for CE, tanh for PWE; paper Sec. 3.2 and 3.4), so a loss and an output
activation that do not belong together cannot be built.
"""

import numpy as np

from mlnn.base.validation import check_choice, check_positive_int
from mlnn.nn.losses import PairwiseExponential, get_loss
from mlnn.nn.network import INITIALISATIONS, Network
from mlnn.nn.optimizers import OPTIMIZERS, get_optimizer

DTYPES = ("float32", "float64")


def build_loss(name, pwe_form="factorised"):
    """The loss ``name`` ("ce" or "pwe"); PWE in ``pwe_form`` ("factorised" or "pairwise")."""
    loss = get_loss(name)
    if isinstance(loss, PairwiseExponential):
        loss = PairwiseExponential(pwe_form)
    return loss


def build_network(n_features, n_labels, loss, hidden_units=1000, hidden_activation="relu",
                  random_state=None, dtype="float32", init="glorot"):
    """A freshly initialised D × F × L network whose output activation is ``loss.output``."""
    dtype = check_dtype(dtype)
    hidden_units = check_positive_int(hidden_units, "hidden_units")
    check_choice(init, "init", INITIALISATIONS)
    return Network.initialize(n_features, n_labels, hidden_units, hidden_activation, loss.output,
                              random_state=random_state, dtype=np.dtype(dtype), init=init)


def check_dtype(dtype, name="dtype"):
    """The training precision's name, "float32" or "float64", from a name or a NumPy dtype or
    scalar type (``np.float32``); raise on anything else."""
    return check_choice(np.dtype(dtype).name if _is_dtype(dtype) else dtype, name, DTYPES)


def build_optimizer(name, learning_rate, momentum=0.9, nesterov=False, weight_decay=0.0,
                    decay_biases=False):
    """The optimizer ``name`` with step size η (``momentum`` μ and ``nesterov`` for momentum) and
    ℓ2 weight decay λ (on W1, W2, and on b1, b2 with ``decay_biases``)."""
    check_choice(name, "optimizer", sorted(OPTIMIZERS))
    options = {"momentum": momentum, "nesterov": nesterov} if name == "momentum" else {}
    return get_optimizer(name, learning_rate, weight_decay=weight_decay,
                         decay_biases=decay_biases, **options)


def build(n_features, n_labels, *, loss="ce", hidden_units=1000, hidden_activation="relu",
          optimizer="adagrad", learning_rate=0.01, momentum=0.9, nesterov=False,
          weight_decay=0.0, decay_biases=False, pwe_form="factorised", random_state=None,
          dtype="float32", init="glorot"):
    """(network, loss, optimizer) for ``n_features`` inputs and ``n_labels`` outputs."""
    loss = build_loss(loss, pwe_form)
    network = build_network(n_features, n_labels, loss, hidden_units, hidden_activation,
                            random_state, dtype, init)
    return network, loss, build_optimizer(optimizer, learning_rate, momentum, nesterov,
                                          weight_decay, decay_biases)


def _is_dtype(value):
    """True for NumPy dtypes and scalar types (np.float32), False for names and anything else."""
    return isinstance(value, np.dtype) or (isinstance(value, type)
                                           and issubclass(value, np.generic))
