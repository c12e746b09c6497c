"""Gradient checking by finite differences, on copies (for the tests and the first notebook).

:func:`numerical_gradient`: ∂f/∂x_i ≈ (f(x + h e_i) − f(x − h e_i)) / 2h, 2 evaluations per entry;
:func:`directional_derivative`: ⟨∇f(x), v⟩ ≈ (f(x + h v) − f(x − h v)) / 2h, two evaluations in
all (the check for a large W1, after HIPS/autograd's ``check_grads``); compare by :func:`rel_error`.
"""

import numpy as np

from mlnn.nn.network import Network


def rel_error(a, b, floor=1e-8):
    """max_i |a_i − b_i| / max(|a_i| + |b_i|, floor): a scale-free error for gradient checks."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {b.shape}")
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(a) + np.abs(b), floor)))


def numerical_gradient(f, x, h=1e-6):
    """Central-difference gradient of the scalar function ``f`` at (a copy of) ``x``."""
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    flat, grad_flat = x.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        saved = flat[i]
        flat[i] = saved + h
        f_plus = f(x)
        flat[i] = saved - h
        f_minus = f(x)
        flat[i] = saved
        grad_flat[i] = (f_plus - f_minus) / (2 * h)
    return grad


def numerical_jacobian_diagonal(fn, z, h=1e-6):
    """d fn(z)_i / d z_i for an element-wise function, by central differences (all at once)."""
    z = np.asarray(z, dtype=np.float64)
    return (fn(z + h) - fn(z - h)) / (2 * h)


def directional_derivative(f, x, v, h=1e-6):
    """(f(x + h v) − f(x − h v)) / 2h, the derivative of f at x along v."""
    x = np.asarray(x, dtype=np.float64)
    return (f(x + h * v) - f(x - h * v)) / (2 * h)


def loss_of_param(network, loss, X, Y, name, mask=None):
    """J as a function of one parameter array (evaluated on a copy of the network)."""
    def f(value):
        params = dict(network.params)
        params[name] = value
        copy = Network(**params, hidden_activation=network.hidden_activation,
                       output=network.output)
        cache = copy.forward(X, mask=mask)
        return loss.value(cache.z2, cache.o, Y)
    return f
