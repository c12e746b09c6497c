"""The model description: each hyper-parameter of MultiLabelNN, its default, its check, its help.

Read like scikit-learn's ``_parameter_constraints``: one :class:`Param` per hyper-parameter, in
the order of :class:`~mlnn.model.estimator.MultiLabelNN`'s signature. This is the one place a
default is stated and the one check of each value, at the public boundary; the estimator, the
paper's methods, the figures, the benchmark and the command line's options read from it. Inner
layers trust what the boundary checked.
"""

import textwrap
from dataclasses import dataclass
from types import MappingProxyType, SimpleNamespace
from typing import Callable

import numpy as np

from mlnn.base.errors import MLNNError
from mlnn.base.validation import (check_bool, check_choice, check_float_in, check_fraction,
                                  check_nonnegative_float, check_positive_float,
                                  check_positive_int, check_registered, check_seed)
from mlnn.evaluation.thresholds import FEATURES, INTERCEPTS, TARGETS
from mlnn.nn.activations import ACTIVATIONS
from mlnn.nn.dropout import check_rate
from mlnn.nn.losses import LOSSES, loss_class
from mlnn.nn.network import DTYPES, INITIALISATIONS, check_dtype
from mlnn.nn.optimizers import MOMENTUM_OPTIONS, OPTIMIZERS, option_names, rule_class
from mlnn.model.stopping_rules import STOPPING_RULES


@dataclass(frozen=True)
class Param:
    """One hyper-parameter: ``default``; ``check(value, name)`` raising
    :class:`~mlnn.base.errors.MLNNError` (naming ``name``) for a bad value; ``kind``, the type
    line of the docstring; ``help``, what it means; ``parse``, how the command line reads it."""

    default: object
    check: Callable
    kind: str
    help: str
    parse: Callable = str


def _choice(*choices):
    """A check that a value is one of ``choices``."""
    return lambda value, name: check_choice(value, name, choices)


def _registered(registry):
    """A check that a value is a key of ``registry`` (read when checking)."""
    return lambda value, name: check_registered(value, name, registry)


def _check_options(value, name):
    """``loss_options``, ``optimizer_options``: a dict of names to plain values."""
    plain = (str, int, float, bool, type(None))
    if not isinstance(value, dict) or not all(
            isinstance(key, str) and isinstance(option, plain) for key, option in value.items()):
        raise MLNNError(f"{name} must be a dict of option names to numbers, strings, booleans or "
                        f"None, got {value!r}")


#: The hyper-parameters that are options of ``optimizer="momentum"`` (μ and Nesterov's form,
#: Sec. 3.5); ``optimizer_options`` holds a rule's other options.
RULE_PARAMS = MOMENTUM_OPTIONS


def rule_options(params, names=None):
    """The options of the rule ``params["optimizer"]``: those of :data:`RULE_PARAMS` it takes
    and ``optimizer_options``; one given both ways is refused."""
    options = params["optimizer_options"] or {}
    twice = sorted(set(options) & {"learning_rate", *RULE_PARAMS})
    if twice:
        spelled = (names or {}).get(twice[0], twice[0])
        raise MLNNError(f"{twice[0]!r} is the hyper-parameter {spelled}; give it there, not in "
                        "both")
    takes = option_names(rule_class(params["optimizer"]))
    return {**{name: params[name] for name in RULE_PARAMS if name in takes}, **options}


def _optional(check):
    """``check``, but None passes."""
    return lambda value, name: None if value is None else check(value, name)


def _check_verbose(value, name):
    """``verbose``: a bool or a callable."""
    if not callable(value) and not isinstance(value, (bool, np.bool_)):
        raise MLNNError(f"{name} must be True, False or a callable taking each record, "
                        f"got {value!r}")


def _names(choices):
    return "{" + ", ".join(f'"{choice}"' for choice in choices) + "}"


PARAMS = MappingProxyType({
    "hidden_units": Param(
        default=1000, check=check_positive_int, kind="int ≥ 1", parse=int,
        help="F, the number of hidden units (the paper's networks have 1,000; Sec. 4)."),
    "hidden_activation": Param(
        default="relu", check=_registered(ACTIVATIONS), kind=_names(ACTIVATIONS),
        help="f_h, the hidden units' activation (ReLU is the paper's choice, Sec. 3.5)."),
    "loss": Param(
        default="ce", check=loss_class, kind=_names(LOSSES),
        help='"ce": sigmoid outputs and cross-entropy (Eq. 6, Sec. 3.4); "pwe": tanh outputs and '
             "BP-MLL's pairwise exponential error (Eq. 3, Sec. 3.2); see mlnn.nn.losses."),
    "loss_options": Param(
        default=None, check=_optional(_check_options), kind="dict or None",
        help='The options of the loss (None: its defaults), e.g. {"form": "pairwise"} for PWE: '
             "the literal O(|y||ȳ|) double sum instead of the O(L) form (the same numbers)."),
    "optimizer": Param(
        default="adagrad", check=rule_class, kind=_names(sorted(OPTIMIZERS)),
        help="The update rule (Sec. 3.5; see mlnn.nn.optimizers)."),
    "optimizer_options": Param(
        default=None, check=_optional(_check_options), kind="dict or None",
        help='The update rule\'s options other than η, μ and Nesterov\'s form, which are the '
             'hyper-parameters learning_rate, momentum and nesterov (None: its defaults), e.g. '
             '{"epsilon": 1e-6} for AdaGrad, or the options of a rule registered in '
             "mlnn.nn.optimizers.OPTIMIZERS."),
    "learning_rate": Param(
        default=0.01, check=check_positive_float, kind="float > 0", parse=float,
        help="η0; the reproduction chooses it from {0.001, 0.01, 0.1} on validation data "
             "(Sec. 4)."),
    "momentum": Param(
        default=0.9, check=lambda value, name: check_float_in(value, name, 0, 1, closed="left"),
        kind="float in [0, 1)", parse=float,
        help='μ, used only with optimizer="momentum".'),
    "nesterov": Param(
        default=False, check=check_bool, kind="bool",
        help='Nesterov\'s accelerated gradient, with optimizer="momentum".'),
    "weight_decay": Param(
        default=0.0, check=check_nonnegative_float, kind="float ≥ 0", parse=float,
        help="γ of an ℓ2 penalty (γ/2)‖θ‖² on W1 and W2 (BP-MLL as published uses one; the paper's "
             "networks do not). Not Eq. 5's λ (threshold_lambda)."),
    "decay_biases": Param(
        default=False, check=check_bool, kind="bool",
        help="Also decay b1 and b2 (as BP-MLL's published code does)."),
    "dropout": Param(
        default=0.0, check=check_rate, kind="float in [0, 1)", parse=float,
        help="Dropout rate of the hidden units (Sec. 3.5; the paper gives no rate, our NN_AD uses "
             "0.5), inverted dropout (see mlnn.nn.dropout)."),
    "input_dropout": Param(
        default=0.0, check=check_rate, kind="float in [0, 1)", parse=float,
        help="Dropout rate of the input's stored entries."),
    "batch_size": Param(
        default=64, check=check_positive_int, kind="int ≥ 1", parse=int,
        help="Documents per minibatch of SGD (ours: the paper, Sec. 3.5, gives no minibatch "
             "size)."),
    "max_epochs": Param(
        default=100, check=check_positive_int, kind="int ≥ 1", parse=int,
        help="Passes over the training documents at most."),
    "patience": Param(
        default=5, check=check_positive_int, kind="int ≥ 1", parse=int,
        help="Evaluations without an improvement of the stopping measure before training stops."),
    "stopping": Param(
        default="rankloss", check=_choice(*STOPPING_RULES), kind=_names(STOPPING_RULES),
        help="How the number of epochs is chosen on the validation data (ours, see "
             "mlnn.model.stopping_rules): early stopping on rank loss or on the mean of micro- and "
             "macro-F1, the best such mean within max_epochs epochs, or max_epochs epochs."),
    "eval_every": Param(
        default=None, check=_optional(check_positive_int), kind="int ≥ 1 or None", parse=int,
        help="Parameter updates between evaluations on the validation data (None: once per "
             "epoch)."),
    "validation_fraction": Param(
        default=0.1, check=lambda value, name: check_fraction(value, name, allow_zero=True),
        kind="float in [0, 1)", parse=float,
        help="When fit gets no X_val, the seeded fraction of the training documents held out for "
             "early stopping and for choosing the thresholds' λ (0: none, so no early stopping)."),
    "threshold": Param(
        default="learned", check=_choice("learned", "fixed"), kind=_names(("learned", "fixed")),
        help="\"learned\": the threshold predictor T(x) of Sec. 3.3 (Eq. 5); \"fixed\": 0.5 for "
             "sigmoid outputs, 0 for tanh outputs."),
    "threshold_features": Param(
        default="input", check=_choice(*FEATURES), kind=_names(FEATURES),
        help="What T(x) regresses on: the input x (Eq. 5) or the scores o."),
    "threshold_lambda": Param(
        default=None, check=_optional(check_nonnegative_float), kind="float ≥ 0 or None",
        parse=float,
        help="Eq. 5's λ on our scale, against the summed squared error (the paper's λ is this "
             "divided by the number of training documents). None: chosen from "
             "mlnn.evaluation.thresholds.DEFAULT_LAMBDAS on the validation data, or λ = n (the "
             "number of training documents) when there is none."),
    "threshold_intercept": Param(
        default="penalised", check=_choice(*INTERCEPTS), kind=_names(INTERCEPTS),
        help="A constant feature of T (ours; Eq. 5 has none): penalised like every coefficient, "
             "absent, or unpenalised."),
    "threshold_target": Param(
        default="f1", check=_choice(*TARGETS), kind=_names(TARGETS),
        help="The per-document targets T regresses on: F1-optimal (Sec. 3.3) or Hamming-optimal "
             "(BP-MLL's); see mlnn.evaluation.thresholds.ThresholdPredictor."),
    "init": Param(
        default="glorot", check=_choice(*INITIALISATIONS), kind=_names(INITIALISATIONS),
        help="Uniform initialisation of W1 and W2 (biases start at zero); the paper names "
             "none. 'he' is the usual choice for ReLU units today; Glorot, the default, serves "
             "every hidden activation alike."),
    "dtype": Param(
        default="float32", check=check_dtype, kind=_names(DTYPES),
        help="The precision of training and of the scores."),
    "sparse_output": Param(
        default=False, check=check_bool, kind="bool",
        help="predict returns a scipy CSR matrix instead of a dense ndarray (for many labels)."),
    "random_state": Param(
        default=None, check=check_seed, kind="None or int ≥ 0", parse=int,
        help="Seed of the initialisation, the validation split, the shuffling and dropout; None "
             "draws fresh randomness at every fit."),
    "verbose": Param(
        default=False, check=_check_verbose, kind="bool or callable",
        help="True prints a line per evaluation on standard output; a callable is called with "
             "each history record (e.g. mlnn.base.progress.epoch_reporter)."),
})

#: The hyper-parameters' defaults, by name (read-only).
DEFAULTS = MappingProxyType({name: param.default for name, param in PARAMS.items()})

#: The same defaults as attributes, for signatures: ``hidden_units=DEFAULT.hidden_units``.
DEFAULT = SimpleNamespace(**DEFAULTS)


def check_params(values, names=None):
    """Check each value of ``values`` (hyper-parameter → value) by its description; raise
    :class:`~mlnn.base.errors.MLNNError` naming the first bad one, as ``names`` spells it
    (e.g. a command-line option; default: the hyper-parameter)."""
    for name, value in values.items():
        PARAMS[name].check(value, (names or {}).get(name, name))


def numpydoc():
    """The Parameters entries of the description, numpydoc style (for MultiLabelNN's doc)."""
    lines = []
    for name, param in PARAMS.items():
        lines.append(f"    {name} : {param.kind}, default {param.default!r}")
        lines += textwrap.wrap(param.help, 95, initial_indent=" " * 8, subsequent_indent=" " * 8,
                               break_long_words=False, break_on_hyphens=False)
    return "\n".join(lines)
