"""A network, its loss and its optimizer built from names: the one place that does it.

The estimator, the model files, the figure experiments and the benchmark describe a model by the
hyper-parameters of :mod:`mlnn.model.params`; :func:`build` turns them into the three objects
the trainer takes, trusting the boundary's checks: the loss and the update rule are built
straight from the values, and building them is the check of their own options
(:func:`build_loss`, :func:`build_rule`). The output activation is never named: it is the loss's
own (sigmoid for CE, tanh for PWE: the footnote in the paper's Sec. 5), so a loss and an output
activation that do not belong together cannot be built.
"""

import contextlib

from mlnn.base.errors import MLNNError
from mlnn.base.validation import check_choice
from mlnn.model.params import DEFAULTS, rule_options
from mlnn.nn.lazy_updates import LazyRows
from mlnn.nn.losses import get_loss
from mlnn.nn.network import Network
from mlnn.nn.optimizers import get_rule


@contextlib.contextmanager
def _named(option, names):
    """An error of building a loss or a rule, prefixed with ``option`` (``loss_options``,
    ``optimizer_options``) as ``names`` spells it (see :func:`mlnn.model.params.check_params`)."""
    try:
        yield
    except MLNNError as error:
        raise MLNNError(f"{(names or {}).get(option, option)}: {error}") from None


def build_loss(name, options=None, names=None):
    """The loss ``name`` with its ``options`` (a dict, the hyper-parameter ``loss_options``;
    None: the loss's defaults); a bad option is refused naming ``loss_options``."""
    with _named("loss_options", names):
        return get_loss(name, **(options or {}))


def build_rule(params, names=None):
    """The update rule ``params["optimizer"]`` with step size η ``params["learning_rate"]`` and
    its options (:func:`~mlnn.model.params.rule_options`); a bad option is refused naming
    ``optimizer_options``."""
    with _named("optimizer_options", names):
        return get_rule(params["optimizer"], params["learning_rate"], **rule_options(params, names))


def build_network(n_features, n_labels, loss, params):
    """A freshly initialised D × F × L network for the hyper-parameters ``params`` (all of them:
    ``hidden_units``, ``hidden_activation``, ``init``, ``dtype``, seeded by ``random_state``),
    whose output activation is the loss's."""
    return Network.initialize(n_features, n_labels, params["hidden_units"],
                              params["hidden_activation"], loss.output,
                              random_state=params["random_state"], dtype=params["dtype"],
                              init=params["init"])


def build(n_features, n_labels, **params):
    """(network, loss, optimizer) for ``n_features`` inputs and ``n_labels`` outputs from the
    hyper-parameters ``params`` (any of :data:`~mlnn.model.params.DEFAULTS`; the others take
    their defaults): :func:`build_network` with the loss's output activation (``loss``,
    ``loss_options``), and :func:`build_rule` run by :class:`~mlnn.nn.lazy_updates.LazyRows`
    with ℓ2 weight decay γ (``weight_decay`` on W1, W2, and on b1, b2 with ``decay_biases``)."""
    for name in params:
        check_choice(name, "hyper-parameter", DEFAULTS)
    p = {**DEFAULTS, **params}
    loss = build_loss(p["loss"], p["loss_options"])
    return (build_network(n_features, n_labels, loss, p), loss,
            LazyRows(build_rule(p), p["weight_decay"], p["decay_biases"]))
