"""A network, its loss and its optimizer built from names: the one place that does it.

The estimator, the model files, the figure experiments and the benchmark describe a model by the
hyper-parameters of :mod:`mlnn.model.params`; :func:`build` turns them into the three objects
the trainer takes, trusting the boundary's checks. The output activation is never named: it is
the loss's own (sigmoid for CE, tanh for PWE: the footnote in the paper's Sec. 5), so a loss and
an output activation that do not belong together cannot be built.
"""

from mlnn.base.validation import check_choice
from mlnn.model.params import DEFAULTS, rule_options
from mlnn.nn.lazy_updates import get_optimizer
from mlnn.nn.losses import get_loss
from mlnn.nn.network import Network


def build_loss(name, options=None):
    """The loss ``name`` with its ``options`` (a dict, the hyper-parameter ``loss_options``;
    None: the loss's defaults)."""
    return get_loss(name, **(options or {}))


def build(n_features, n_labels, **params):
    """(network, loss, optimizer) for ``n_features`` inputs and ``n_labels`` outputs from the
    hyper-parameters ``params`` (any of :data:`~mlnn.model.params.DEFAULTS`; the others take
    their defaults): a freshly initialised D × F × L network (``hidden_units``,
    ``hidden_activation``, ``init``, ``dtype``, seeded by ``random_state``) whose output
    activation is the loss's (``loss``, ``loss_options``), and the update rule ``optimizer``
    with step size η (``learning_rate``), its options (``momentum`` μ and ``nesterov`` for
    momentum, ``optimizer_options``: :func:`~mlnn.model.params.rule_options`) and ℓ2 weight
    decay γ (``weight_decay`` on W1, W2, and on b1, b2 with ``decay_biases``)."""
    for name in params:
        check_choice(name, "hyper-parameter", DEFAULTS)
    p = {**DEFAULTS, **params}
    loss = build_loss(p["loss"], p["loss_options"])
    network = Network.initialize(n_features, n_labels, p["hidden_units"], p["hidden_activation"],
                                 loss.output, random_state=p["random_state"], dtype=p["dtype"],
                                 init=p["init"])
    return network, loss, get_optimizer(p["optimizer"], p["learning_rate"],
                                        weight_decay=p["weight_decay"],
                                        decay_biases=p["decay_biases"], **rule_options(p))
