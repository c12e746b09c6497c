"""A network, its loss and its optimizer built from names: the one place that does it.

:func:`build` turns the hyper-parameters of :mod:`mlnn.model.params` into the three objects the
trainer takes; building the loss and the rule checks their own options. The output activation
is never named: it is the loss's own (sigmoid for CE, tanh for PWE: the footnote in the paper's
Sec. 5), so a loss and an output activation that do not belong together cannot be built.
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
    """An error of building a loss or a rule, prefixed with ``option`` as ``names`` spells it."""
    try:
        yield
    except MLNNError as error:
        raise MLNNError(f"{(names or {}).get(option, option)}: {error}") from None


def build_loss(name, options=None, names=None):
    """The loss ``name`` with its ``options`` (``loss_options``; None: its defaults)."""
    with _named("loss_options", names):
        return get_loss(name, **(options or {}))


def build_rule(params, names=None):
    """The update rule ``params["optimizer"]`` with η ``params["learning_rate"]`` and its options
    (:func:`~mlnn.model.params.rule_options`)."""
    with _named("optimizer_options", names):
        return get_rule(params["optimizer"], params["learning_rate"], **rule_options(params, names))


def build_network(n_features, n_labels, loss, params):
    """A new D × F × L network for the hyper-parameters ``params``, with the loss's output."""
    return Network.initialize(n_features, n_labels, params["hidden_units"],
                              params["hidden_activation"], loss.output,
                              random_state=params["random_state"], dtype=params["dtype"],
                              init=params["init"])


def build(n_features, n_labels, **params):
    """(network, loss, optimizer) for ``n_features`` inputs and ``n_labels`` outputs from the
    hyper-parameters ``params`` (others default): the rule run by
    :class:`~mlnn.nn.lazy_updates.LazyRows` with ``weight_decay`` and ``decay_biases``."""
    for name in params:
        check_choice(name, "hyper-parameter", DEFAULTS)
    p = {**DEFAULTS, **params}
    loss = build_loss(p["loss"], p["loss_options"])
    return (build_network(n_features, n_labels, loss, p), loss,
            LazyRows(build_rule(p), p["weight_decay"], p["decay_biases"]))
