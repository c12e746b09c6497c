r"""Loss landscapes of a tiny network (paper Sec. 3.4, Fig. 2).

The paper's setting: one input x, one hidden unit (W1 is a scalar), four outputs (W2 ∈ R^{4×1}),
no biases. Of W2 only the first entry W2_1 varies; W2_2 = W2_3 = W2_4 = c are held fixed (c = 0
in Fig. 2). With the instances x and targets y fixed (the paper does not give them; we take one
document), the loss J is then a function of two numbers, (W1, W2_1), and can be drawn as a
surface or a contour map:

    z1 = x W1,   h = f_h(z1),   z2 = h · (W2_1, c, c, c),   o = f_o(z2),   J = loss(o, y).

With x = 1, y = (1, 0, 0, 0) and c = 0: PWE over tanh outputs (Eq. 3) is
J = exp(−tanh(W2_1 h)), in [e⁻¹, e] and flat wherever |W2_1 h| > 2 (the plateaus); CE over
sigmoid outputs (Eq. 6) is J = log(1 + exp(−W2_1 h)) + 3 log 2, whose slope keeps growing on the
wrong side. A tanh hidden unit also saturates along W1; ReLU does not (Fig. 2b).

Every grid point is one "document" of a batch: the surface is computed in one vectorised pass
with mlnn's own activations (:mod:`mlnn.nn.activations`) and losses (:mod:`mlnn.nn.losses`), and its
gradient with the losses' δ2 and backpropagation by hand (:func:`surface_gradient`).
"""

from typing import NamedTuple

import numpy as np

from mlnn.base.errors import MLNNError
from mlnn.nn.activations import get_activation
from mlnn.nn.losses import get_loss

#: The paper's Fig. 2 panels: (loss, hidden activation) pairs to compare.
PANELS = {
    "a": (("ce", "tanh"), ("pwe", "tanh")),     # CE vs PWE, tanh hidden unit
    "b": (("ce", "tanh"), ("ce", "relu")),      # tanh vs ReLU hidden unit, CE loss
}


class Surface(NamedTuple):
    """A loss landscape: ``J[i, j]`` is the loss at W1 = ``W1[j]``, W2_1 = ``W2_1[i]`` (the
    layout of ``np.meshgrid(W1, W2_1)``)."""

    W1: np.ndarray      # (n1,) grid of W1
    W2_1: np.ndarray    # (n2,) grid of W2_1
    J: np.ndarray       # (n2, n1) loss values
    loss: str           # "ce" or "pwe"
    hidden_activation: str   # hidden activation name
    x: float
    y: tuple
    c: float


def _check_grid(values, name):
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or values.size < 2 or not np.all(np.isfinite(values)):
        raise MLNNError(f"{name} must be a 1-d array of at least 2 finite numbers, "
                        f"got shape {values.shape}")
    return values


def _check_labels(y):
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or y.size < 2 or not np.all((y == 0) | (y == 1)):
        raise MLNNError(f"y must be a 0/1 vector of at least 2 labels, got {y!r}")
    return y


def _forward(loss, hidden, W1, W2_1, x, y, c):
    """Forward pass on (x, y) at each point of the grid W1 × W2_1, one row per point (in the
    order of ``np.meshgrid(W1, W2_1)``): (z1, h, W2, z2, o, Y)."""
    W1, W2_1 = (grid.ravel() for grid in np.meshgrid(W1, W2_1))
    G, L = W1.size, y.size
    z1 = x * W1
    h = hidden.fn(z1)
    W2 = np.full((G, L), c, dtype=np.float64)
    W2[:, 0] = W2_1
    z2 = h[:, None] * W2
    o = loss.output.fn(z2)
    Y = np.broadcast_to(y, (G, L))
    return z1, h, W2, z2, o, Y


def loss_surface(loss, hidden_activation, W1, W2_1, x=1.0, y=(1, 0, 0, 0), c=0.0):
    """J(W1, W2_1) on the 1-d grids W1, W2_1 for the document (x, y), W2_2..L = c: a
    :class:`Surface`. ``loss`` ("ce", "pwe" or a Loss) brings its output activation."""
    loss, hidden = get_loss(loss), get_activation(hidden_activation)
    W1, W2_1 = _check_grid(W1, "W1"), _check_grid(W2_1, "W2_1")
    y = _check_labels(y)
    *_, z2, o, Y = _forward(loss, hidden, W1, W2_1, float(x), y, float(c))
    J = loss.per_document(z2, o, Y).reshape(W2_1.size, W1.size)
    return Surface(W1, W2_1, J, loss.name, hidden.name, float(x), tuple(int(v) for v in y),
                   float(c))


def surface_gradient(surface):
    """(∂J/∂W1, ∂J/∂W2_1) on the grid of ``surface`` by backpropagation: ∂J/∂W2_1 = δ2_1 · h,
    δ1 = (Σ_l δ2_l W2_l) · f_h'(z1), ∂J/∂W1 = δ1 · x."""
    loss, hidden = get_loss(surface.loss), get_activation(surface.hidden_activation)
    z1, h, W2, z2, o, Y = _forward(loss, hidden, surface.W1, surface.W2_1, surface.x,
                                   np.asarray(surface.y, dtype=np.float64), surface.c)
    delta2 = loss.delta(z2, o, Y)
    dJ_dW2_1 = delta2[:, 0] * h
    delta1 = (delta2 * W2).sum(axis=1) * hidden.grad(z1, h)
    dJ_dW1 = delta1 * surface.x
    return dJ_dW1.reshape(surface.J.shape), dJ_dW2_1.reshape(surface.J.shape)


def plateau_fraction(surface, tol=1e-2):
    """The fraction of grid points where the gradient norm ‖∇J‖ is below ``tol`` (flat regions)."""
    dJ_dW1, dJ_dW2_1 = surface_gradient(surface)
    return float(np.mean(np.hypot(dJ_dW1, dJ_dW2_1) < tol))


def figure2_surfaces(n_points=101, limit=4.0, x=1.0, y=(1, 0, 0, 0), c=0.0):
    """The surfaces of :data:`PANELS` on [−limit, limit]², by (loss, hidden activation)."""
    grid = np.linspace(-limit, limit, int(n_points))
    keys = {key for panel in PANELS.values() for key in panel}
    return {key: loss_surface(key[0], key[1], grid, grid, x=x, y=y, c=c) for key in sorted(keys)}
