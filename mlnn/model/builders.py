"""A network, its loss and its optimizer built from names: the one place that does it.

The estimator, the model files, the figure experiments and the benchmark describe a model by the
names and numbers of :mod:`mlnn.model.params`; :func:`build` turns them into the three objects
the trainer takes, trusting the boundary's checks. The output activation is never named: it is
the loss's own (sigmoid for CE, tanh for PWE: the footnote in the paper's Sec. 5), so a loss and
an output activation that do not belong together cannot be built.
"""

from mlnn.model.params import DEFAULT
from mlnn.nn.lazy_updates import get_optimizer
from mlnn.nn.losses import PairwiseExponential, get_loss
from mlnn.nn.network import Network


def build_loss(name, pwe_form=DEFAULT.pwe_form):
    """The loss ``name`` ("ce" or "pwe"); PWE in ``pwe_form`` ("factorised" or "pairwise")."""
    loss = get_loss(name)
    return PairwiseExponential(pwe_form) if isinstance(loss, PairwiseExponential) else loss


def build(n_features, n_labels, *, loss=DEFAULT.loss, hidden_units=DEFAULT.hidden_units,
          hidden_activation=DEFAULT.hidden_activation, optimizer=DEFAULT.optimizer,
          learning_rate=DEFAULT.learning_rate, momentum=DEFAULT.momentum,
          nesterov=DEFAULT.nesterov, weight_decay=DEFAULT.weight_decay,
          decay_biases=DEFAULT.decay_biases, pwe_form=DEFAULT.pwe_form,
          random_state=DEFAULT.random_state, dtype=DEFAULT.dtype, init=DEFAULT.init):
    """(network, loss, optimizer) for ``n_features`` inputs and ``n_labels`` outputs: a freshly
    initialised D × F × L network whose output activation is the loss's, and the update rule
    ``optimizer`` with step size η (``momentum`` μ and ``nesterov`` for momentum) and ℓ2 weight
    decay γ (on W1, W2, and on b1, b2 with ``decay_biases``)."""
    loss = build_loss(loss, pwe_form)
    network = Network.initialize(n_features, n_labels, hidden_units, hidden_activation,
                                 loss.output, random_state=random_state, dtype=dtype, init=init)
    options = {"momentum": momentum, "nesterov": nesterov} if optimizer == "momentum" else {}
    return network, loss, get_optimizer(optimizer, learning_rate, weight_decay=weight_decay,
                                        decay_biases=decay_biases, **options)
