"""Activation functions, each with its derivative beside it (paper Sec. 3.2, Eq. 2; ReLU: Sec. 3.5).

An :class:`Activation` holds ``fn(z)`` and ``grad(z, a)`` = ∂a/∂z element-wise, given ``z`` *and*
``a = fn(z)`` (ReLU uses z, tanh and sigmoid a), neither modified; its ``title`` and, for output
units, its ``range`` (low, high), whose ``midpoint`` is the fixed threshold. Adding one is its
entry in :data:`ACTIVATIONS`.

==========  ==============================  =========================  ==========================
name        a = f(z)                        f'(z)                      role in the paper
==========  ==============================  =========================  ==========================
relu        max(0, z)                       1[z > 0]                   hidden units (Sec. 3.5)
tanh        tanh(z)                         1 − a²                     hidden units of BP-MLL;
                                                                       output units for PWE
sigmoid     1 / (1 + exp(−z))               a (1 − a)                  hidden units; output
                                                                       units for CE
==========  ==============================  =========================  ==========================

The derivative of ReLU at exactly z = 0 is taken as 0 (a sub-gradient).
"""

from typing import Callable, NamedTuple, Optional, Tuple

import numpy as np
from scipy.special import expit

from mlnn.base.validation import check_choice


class Activation(NamedTuple):
    """An element-wise activation ``fn``, its derivative ``grad(z, a) = f'(z)``, ``title`` and
    ``range`` (None: not an output activation)."""

    name: str
    fn: Callable[[np.ndarray], np.ndarray]
    grad: Callable[[np.ndarray, np.ndarray], np.ndarray]
    title: str
    range: Optional[Tuple[float, float]] = None

    @property
    def midpoint(self):
        """(low + high) / 2: the fixed threshold (None without a range)."""
        return None if self.range is None else (self.range[0] + self.range[1]) / 2


def relu(z):
    """a = max(0, z)."""
    return np.maximum(z, 0)


def relu_grad(z, a):
    """f'(z) = 1 where z > 0, else 0."""
    return (z > 0).astype(z.dtype)


def tanh(z):
    """a = tanh(z)."""
    return np.tanh(z)


def tanh_grad(z, a):
    """f'(z) = 1 − tanh(z)² = 1 − a²."""
    return 1 - a * a


def sigmoid(z):
    """a = 1 / (1 + exp(−z)), computed stably by :func:`scipy.special.expit`."""
    return expit(z)


def sigmoid_grad(z, a):
    """f'(z) = σ(z)(1 − σ(z)) = a (1 − a)."""
    return a * (1 - a)


ACTIVATIONS = {
    "relu": Activation("relu", relu, relu_grad, title="ReLU"),
    "tanh": Activation("tanh", tanh, tanh_grad, title="tanh", range=(-1.0, 1.0)),
    "sigmoid": Activation("sigmoid", sigmoid, sigmoid_grad, title="sigmoid", range=(0.0, 1.0)),
}


def get_activation(name):
    """The activation ``name`` (``relu``, ``tanh``, ``sigmoid``), or an Activation, passed on."""
    if isinstance(name, Activation):
        return name
    return ACTIVATIONS[check_choice(name, "activation", sorted(ACTIVATIONS))]
