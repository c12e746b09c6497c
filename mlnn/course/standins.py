"""mlnn's own pieces of notebook 01b with the notebook's signatures: what stands in for the
student's other pieces while one piece is judged (in the answer's own process too: this module
imports only the library, nothing of the graders), and in the cells below a piece until it
passes (:func:`mlnn.course.pieces.yours_if`); and the driver of notebook 02b's RMSProp rule,
which runs it where mlnn runs a rule (:func:`drive_rule`)."""

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from mlnn.course.drivers import Misstep
from mlnn.nn.activations import get_activation
from mlnn.nn.lazy_updates import LazyRows
from mlnn.nn.losses import CrossEntropy
from mlnn.nn.network import Network, RowSparseGradient
from mlnn.nn.optimizers import AdaGrad as MlnnAdaGrad


def pwe_reference(z2, o, Y):
    """PWE's δ2 (Eq. 10) of tanh outputs, factorised as exp(−(o_p − o_n)) = exp(−o_p) exp(o_n):
    two sums over the labels of each document, all documents at once; 0 for an excluded
    document. Equal to :class:`mlnn.nn.losses.PairwiseExponential`'s (tested), and O(L)."""
    o = np.asarray(o)
    relevant = np.asarray(Y) > 0
    n_y = relevant.sum(axis=1, keepdims=True)
    pairs = np.maximum(n_y * (o.shape[1] - n_y), 1).astype(o.dtype)
    e_minus, e_plus = np.exp(-o), np.exp(o)
    S_y = np.where(relevant, e_minus, 0).sum(axis=1, keepdims=True)
    S_ybar = np.where(relevant, 0, e_plus).sum(axis=1, keepdims=True)
    return np.where(relevant, -e_minus * S_ybar, e_plus * S_y) / pairs * (1 + o) * (1 - o)



def mlnn_forward(X, W1, b1, W2, b2, f_o=expit):
    output = "sigmoid" if f_o is expit else "tanh"
    cache = Network(W1, b1, W2, b2, "relu", output).forward(sp.csr_matrix(X))
    return cache.z1, cache.h, cache.z2, cache.o


def mlnn_ce_delta2(z2, o, Y):
    return CrossEntropy().delta(z2, o, Y)


def mlnn_delta1_relu(delta2, W2, z1):
    return (delta2 @ W2.T) * get_activation("relu").grad(z1, np.maximum(z1, 0))


def grad_W1_rows_scaled(X, delta1, scale):
    """``scale`` times ∂J/∂W1 = Xᵀ δ1 / n on the rows of the words present, as (rows, values)."""
    rows = np.unique(X.indices)
    return rows, np.asarray(X[:, rows].T @ delta1) / X.shape[0] * scale


def mlnn_grad_W1_rows(X, delta1):
    """∂J/∂W1 = Xᵀ δ1 / n on the rows of the words present, as (rows, values)."""
    return grad_W1_rows_scaled(X, delta1, 1.0)


def mlnn_backward(X, z1, h, W2, delta2):
    """The gradients of the mean loss with ReLU hidden units (Sec. 3.2), ∂J/∂W1 row-sparse."""
    n, delta1 = len(z1), mlnn_delta1_relu(delta2, W2, z1)
    return {"W1": mlnn_grad_W1_rows(X, delta1), "b1": delta1.sum(axis=0) / n,
            "W2": h.T @ delta2 / n, "b2": delta2.sum(axis=0) / n}


class Reference:
    """mlnn's AdaGrad rule as the notebook's ``AdaGrad(eta0, epsilon)`` with ``step``."""

    def __init__(self, eta0, epsilon=1e-8):
        self.rule, self.states = MlnnAdaGrad(eta0, epsilon=epsilon), {}

    def step(self, params, grads):
        for name in grads:
            self.states.setdefault(name, self.rule.new_state(params[name]))
        for name, g in grads.items():        # as mlnn's lazy executor runs a rule on rows
            rows, g = g if isinstance(g, tuple) else (slice(None), g)
            theta, state = params[name], self.states[name]
            theta_rows, slots = theta[rows], {k: v[rows] for k, v in state.items()}
            self.rule.update(theta_rows, g.copy(), slots)
            theta[rows] = theta_rows
            for k, v in slots.items():
                state[k][rows] = v


def mlnn_update(params, optimizer, X_batch, Y_batch):
    """One minibatch update: forward, CE's δ2, backward and one ``optimizer.step``."""
    z1, h, z2, o = mlnn_forward(X_batch, **params)
    delta2 = mlnn_ce_delta2(z2, o, Y_batch)
    optimizer.step(params, mlnn_backward(X_batch, z1, h, params["W2"], delta2))


def mlnn_train(params, optimizer, X, Y, epochs, batch_size, rng, update=mlnn_update):
    """``epochs`` passes, each in a new random order from ``rng``, in minibatches to ``update``."""
    for _ in range(epochs):
        order = rng.permutation(X.shape[0])
        for start in range(0, X.shape[0], batch_size):
            batch = order[start:start + batch_size]
            update(params, optimizer, X[batch], Y[batch])


def drive_rule(Rule, settings, start, sequence):
    """The parameters after notebook 02b's ``Rule(*settings)`` took each gradient dict of
    ``sequence`` from ``start`` where mlnn runs a rule: in
    :class:`mlnn.nn.lazy_updates.LazyRows`, W1's gradients row-sparse (None if a state is
    None; :class:`~mlnn.course.drivers.Misstep` if it is not a dict of arrays shaped like its
    parameter)."""
    rule, params = Rule(*settings), {key: theta.copy() for key, theta in start.items()}
    for theta in params.values():
        state = rule.new_state(theta.copy())
        if state is None:
            return None
        if not isinstance(state, dict) or not all(
                np.shape(v) == theta.shape for v in state.values()):
            raise Misstep("the state of one parameter, new_state(theta), must be a dict of "
                          "arrays shaped like theta (AdaGrad's holds its sum of squares)")
    executor = LazyRows(rule, weight_decay=0.0)
    for grads in sequence:
        executor.step(params, {key: RowSparseGradient(*g, params[key].shape)
                               if isinstance(g, tuple) else g for key, g in grads.items()})
    return params


#: mlnn's own piece of each name, with the notebook's signature: what stands in for a piece of
#: the student's while another piece is graded, and in the cells below until the piece passes.
STAND_INS = {"forward": mlnn_forward, "ce_delta2": mlnn_ce_delta2,
             "pwe_delta2_pairs": pwe_reference, "pwe_delta2": pwe_reference,
             "delta1_relu": mlnn_delta1_relu,
             "grad_W1_rows": mlnn_grad_W1_rows, "backward": mlnn_backward, "AdaGrad": Reference,
             "update": mlnn_update, "train": mlnn_train}
