"""Notebook 01b's graders (its pieces' graders, over mlnn.course.pieces): the worked solution
passes every one, and plausible wrong answers are rejected, each with a message that names its
mistake and no code."""

import ast
import inspect
import re

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit

from mlnn import course
from mlnn.course import grading, pieces, training_loop
from mlnn.course.pairwise import pwe_reference
from mlnn.course.pwe import _large_pwe_cases
from mlnn.nn.gradcheck import loss_of_param, numerical_gradient, rel_error
from mlnn.nn.losses import CrossEntropy, PairwiseExponential
from tests.test_exercises import SOLUTIONS, solutions
from tests.across import judged
from tests.shown import shown

worked = solutions("ex01b_build_it_from_zero")

#: (grader, name of the piece in the worked solution), in the notebook's order.
PIECES = [(course.check_forward, "forward"), (course.check_ce_delta2, "ce_delta2"),
          (course.check_pwe_delta2_pairs, "pwe_delta2_pairs"),
          (course.check_pwe_delta2, "pwe_delta2"), (course.check_delta1_relu, "delta1_relu"),
          (course.check_grad_W1_rows, "grad_W1_rows"), (course.check_backward, "backward"),
          (course.check_adagrad, "AdaGrad"), (course.check_update, "update"),
          (course.check_train, "train")]


@pytest.mark.parametrize("check, name", PIECES, ids=[name for _, name in PIECES])
def test_the_worked_solution_passes(check, name, capsys):
    report = judged(check, getattr(worked, name))
    out = shown(capsys)
    assert report, out
    assert out.startswith("PASS"), out


def _body_lines(node):
    """The lines of the statements inside a function or class, docstrings left out."""
    lines = set()
    for statement in ast.walk(node):
        docstring = isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
        if (isinstance(statement, ast.stmt) and statement is not node and not docstring
                and not isinstance(statement, (ast.FunctionDef, ast.ClassDef))):
            lines.update(range(statement.lineno, statement.end_lineno + 1))
    return lines


def test_the_worked_solution_is_plain_numpy_in_a_few_dozen_lines():
    tree = ast.parse((SOLUTIONS / "ex01b_build_it_from_zero.py").read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom)}
    assert imported <= {"numpy", "scipy"}, imported
    pieces = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))]
    assert {node.name for node in pieces} == {name for _, name in PIECES}
    assert sum(len(_body_lines(node)) for node in pieces) <= 60


# -- wrong answers: the forward pass ---------------------------------------------------------------

def forward_without_b1(X, W1, b1, W2, b2, f_o):
    z1 = X @ W1
    h = np.maximum(z1, 0)
    z2 = h @ W2 + b2
    return z1, h, z2, f_o(z2)


def forward_without_b2(X, W1, b1, W2, b2, f_o):
    z1, h, _, _ = worked.forward(X, W1, b1, W2, b2, f_o)
    return z1, h, h @ W2, f_o(h @ W2)


def forward_linear_hidden(X, W1, b1, W2, b2, f_o):
    z1 = X @ W1 + b1
    return z1, z1, z1 @ W2 + b2, f_o(z1 @ W2 + b2)


def forward_tanh_hidden(X, W1, b1, W2, b2, f_o):
    z1 = X @ W1 + b1
    h = np.tanh(z1)
    return z1, h, h @ W2 + b2, f_o(h @ W2 + b2)


def forward_always_sigmoid(X, W1, b1, W2, b2, f_o):
    return worked.forward(X, W1, b1, W2, b2, expit)


def forward_no_output_activation(X, W1, b1, W2, b2, f_o):
    z1, h, z2, _ = worked.forward(X, W1, b1, W2, b2, f_o)
    return z1, h, z2, z2


def forward_dense_X(X, W1, b1, W2, b2, f_o):
    return worked.forward(X.toarray(), W1, b1, W2, b2, f_o)


def forward_float64(X, W1, b1, W2, b2, f_o):
    return worked.forward(X.astype(np.float64), W1.astype(np.float64), b1, W2, b2, f_o)


def forward_np_matrix(X, W1, b1, W2, b2, f_o):
    z1 = (X @ W1) + b1
    z1 = np.asmatrix(z1)
    h = np.maximum(z1, 0)
    z2 = h @ W2 + b2
    return z1, h, z2, f_o(z2)


def forward_changes_b1(X, W1, b1, W2, b2, f_o):
    b1 *= 2
    return worked.forward(X, W1, b1 / 2, W2, b2, f_o)


def forward_three_arrays(X, W1, b1, W2, b2, f_o):
    z1, h, _, o = worked.forward(X, W1, b1, W2, b2, f_o)
    return z1, h, o


def forward_z2_from_z1(X, W1, b1, W2, b2, f_o):
    z1, h, _, _ = worked.forward(X, W1, b1, W2, b2, f_o)
    return z1, h, z1 @ W2 + b2, f_o(z1 @ W2 + b2)


def forward_raises(X, W1, b1, W2, b2, f_o):
    return X.no_such_method()


def forward_relu_in_place(X, W1, b1, W2, b2, f_o):
    z1 = X @ W1 + b1
    h = np.maximum(z1, 0, out=z1)
    z2 = h @ W2 + b2
    return z1, h, z2, f_o(z2)


# -- the output deltas ---------------------------------------------------------------------------

def ce_sign(z2, o, Y):
    return Y - o


def ce_divided_by_n(z2, o, Y):
    return (o - Y) / len(o)


def ce_sigmoid_again(z2, o, Y):
    return (o - Y) * o * (1 - o)


def ce_dJ_do(z2, o, Y):
    return (o - Y) / (o * (1 - o))


def ce_float32(z2, o, Y):
    return (o - Y).astype(np.float32)


def ce_in_place(z2, o, Y):
    o -= Y
    return o


def ce_transposed(z2, o, Y):
    return (o - Y).T


def pwe_normalised_by_y_squared(z2, o, Y):
    relevant = Y > 0
    n_y = relevant.sum(axis=1, keepdims=True)
    pairs = np.maximum(n_y * (Y.shape[1] - n_y), 1)
    return worked.pwe_delta2(z2, o, Y) * pairs / np.maximum(n_y * n_y, 1)


def pwe_normalised_by_ybar_squared(z2, o, Y):
    n_ybar = (Y == 0).sum(axis=1, keepdims=True)
    pairs = np.maximum((Y.shape[1] - n_ybar) * n_ybar, 1)
    return worked.pwe_delta2(z2, o, Y) * pairs / np.maximum(n_ybar * n_ybar, 1)


def pwe_not_normalised(z2, o, Y):
    n_y = (Y > 0).sum(axis=1, keepdims=True)
    return worked.pwe_delta2_pairs(z2, o, Y) * np.maximum(n_y * (Y.shape[1] - n_y), 1)


def pwe_normalised_by_L_squared(z2, o, Y):
    n_y = (Y > 0).sum(axis=1, keepdims=True)
    pairs = np.maximum(n_y * (Y.shape[1] - n_y), 1)
    return worked.pwe_delta2_pairs(z2, o, Y) * pairs / Y.shape[1] ** 2




def pwe_with_factor(o, Y, factor):
    """PWE's δ2 factorised, times ``factor`` in place of tanh'(z2)."""
    relevant = np.asarray(Y) > 0
    pairs = np.maximum(relevant.sum(1, keepdims=True) * (~relevant).sum(1, keepdims=True), 1)
    S_y = np.where(relevant, np.exp(-o), 0).sum(1, keepdims=True)
    S_ybar = np.where(relevant, 0, np.exp(o)).sum(1, keepdims=True)
    return np.where(relevant, -np.exp(-o) * S_ybar, np.exp(o) * S_y) / pairs * factor


def pwe_without_tanh_factor(z2, o, Y):
    return pwe_with_factor(o, Y, 1.0)


def pwe_sigmoid_factor(z2, o, Y):
    return pwe_with_factor(o, Y, o * (1 - o))


def pwe_sign(z2, o, Y):
    return -worked.pwe_delta2_pairs(z2, o, Y)


def pwe_relevant_sign(z2, o, Y):
    delta2 = worked.pwe_delta2(z2, o, Y)
    return np.where(Y > 0, -delta2, delta2)


def pwe_nan_for_excluded(z2, o, Y):
    relevant = Y > 0
    pairs = relevant.sum(axis=1, keepdims=True) * (~relevant).sum(axis=1, keepdims=True)
    S_y = np.where(relevant, np.exp(-o), 0).sum(axis=1, keepdims=True)
    S_ybar = np.where(relevant, 0, np.exp(o)).sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(relevant, -np.exp(-o) * S_ybar, np.exp(o) * S_y) / pairs * (1 - o * o)


def pwe_exponents_swapped(z2, o, Y):
    return worked.pwe_delta2(z2, -o, Y)


def pwe_relevant_only(z2, o, Y):
    return np.where(Y > 0, worked.pwe_delta2(z2, o, Y), 0)


def pwe_promotes_float32(z2, o, Y):
    return worked.pwe_delta2(z2, o, Y).astype(np.float64)


def pwe_divided_by_n(z2, o, Y):
    return worked.pwe_delta2(z2, o, Y) / len(o)


# -- backpropagation -----------------------------------------------------------------------------

def delta1_without_relu(delta2, W2, z1):
    return delta2 @ W2.T


def delta1_wrong_side(delta2, W2, z1):
    return (delta2 @ W2.T) * (z1 < 0)


def delta1_one_at_zero(delta2, W2, z1):
    return (delta2 @ W2.T) * (z1 >= 0)


def delta1_times_h(delta2, W2, z1):
    return (delta2 @ W2.T) * np.maximum(z1, 0)


def delta1_not_transposed(delta2, W2, z1):
    return (delta2 @ W2) * (z1 > 0)


def delta1_sign_of_z1(delta2, W2, z1):
    return (delta2 @ W2.T) * np.sign(z1)


def delta1_divided_by_n(delta2, W2, z1):
    return (delta2 @ W2.T) * (z1 > 0) / len(z1)


def delta1_overwrites_z1(delta2, W2, z1):
    z1[z1 > 0], z1[z1 <= 0] = 1, 0
    return (delta2 @ W2.T) * z1


def grad_W1_all_rows(X, delta1):
    return np.arange(X.shape[1]), np.asarray(X.T @ delta1) / X.shape[0]


def grad_W1_as_list(X, delta1):
    return list(worked.grad_W1_rows(X, delta1))


def grad_W1_without_mean(X, delta1):
    rows, values = worked.grad_W1_rows(X, delta1)
    return rows, values * X.shape[0]


def grad_W1_transposed(X, delta1):
    rows, values = worked.grad_W1_rows(X, delta1)
    return rows, values.T


def grad_W1_document_rows(X, delta1):
    rows = np.unique(X.nonzero()[0])
    return rows, np.asarray(X[:, rows].T @ delta1) / X.shape[0]


def grad_W1_unsorted(X, delta1):
    rows, values = worked.grad_W1_rows(X, delta1)
    return rows[::-1], values[::-1]


def grad_W1_repeated_rows(X, delta1):
    rows = X.indices
    return rows, np.asarray(X[:, rows].T @ delta1) / X.shape[0]


def grad_W1_dense_X(X, delta1):
    dense = X.toarray()
    rows = np.flatnonzero(dense.any(axis=0))
    return rows, dense[:, rows].T @ delta1 / X.shape[0]


def backward_W2_sum(X, z1, h, W2, delta2):
    return {**worked.backward(X, z1, h, W2, delta2), "W2": h.T @ delta2}


def backward_b1_sum(X, z1, h, W2, delta2):
    delta1 = worked.delta1_relu(delta2, W2, z1)
    return {**worked.backward(X, z1, h, W2, delta2), "b1": delta1.sum(axis=0)}


def backward_b1_from_delta2(X, z1, h, W2, delta2):
    return {**worked.backward(X, z1, h, W2, delta2), "b1": delta2.mean(axis=0)}


def backward_W2_transposed(X, z1, h, W2, delta2):
    return {**worked.backward(X, z1, h, W2, delta2), "W2": delta2.T @ h / len(h)}


def backward_W2_from_z1(X, z1, h, W2, delta2):
    return {**worked.backward(X, z1, h, W2, delta2), "W2": z1.T @ delta2 / len(z1)}


def backward_without_b2(X, z1, h, W2, delta2):
    grads = worked.backward(X, z1, h, W2, delta2)
    del grads["b2"]
    return grads


def backward_dense_W1(X, z1, h, W2, delta2):
    delta1 = worked.delta1_relu(delta2, W2, z1)
    return {**worked.backward(X, z1, h, W2, delta2), "W1": grad_W1_all_rows(X, delta1)}


def backward_b2_sign(X, z1, h, W2, delta2):
    grads = worked.backward(X, z1, h, W2, delta2)
    return {**grads, "b2": -grads["b2"]}


# -- AdaGrad -------------------------------------------------------------------------------------

class AdaGradBase(worked.AdaGrad):
    """The worked AdaGrad with one line of the update replaced by ``rule``."""

    def step(self, params, grads):
        for name, g in grads.items():
            rows = slice(None)
            if isinstance(g, tuple):
                rows, g = g
            G = self.G.setdefault(name, np.zeros_like(params[name]))
            params[name][rows] -= self.rule(G, rows, g)

    def rule(self, G, rows, g):
        G[rows] += g * g
        return self.eta0 * g / (np.sqrt(G[rows]) + self.epsilon)


class AdaGradWithoutSqrt(AdaGradBase):
    def rule(self, G, rows, g):
        G[rows] += g * g
        return self.eta0 * g / (G[rows] + self.epsilon)


class AdaGradEpsilonInside(AdaGradBase):
    def rule(self, G, rows, g):
        G[rows] += g * g
        return self.eta0 * g / np.sqrt(G[rows] + self.epsilon)


class AdaGradResetEachStep(AdaGradBase):
    def rule(self, G, rows, g):
        G[rows] = g * g
        return self.eta0 * g / (np.sqrt(G[rows]) + self.epsilon)


class AdaGradAccumulatesAfter(AdaGradBase):
    def rule(self, G, rows, g):
        step = self.eta0 * g / (np.sqrt(G[rows]) + self.epsilon)
        G[rows] += g * g
        return step


class AdaGradUphill(AdaGradBase):
    def rule(self, G, rows, g):
        return -super().rule(G, rows, g)


class AdaGradFixedEta(AdaGradBase):
    def rule(self, G, rows, g):
        G[rows] += g * g
        return 0.1 * g / (np.sqrt(G[rows]) + self.epsilon)


class AdaGradFixedEpsilon(AdaGradBase):
    def rule(self, G, rows, g):
        G[rows] += g * g
        return self.eta0 * g / (np.sqrt(G[rows]) + 1e-8)


class AdaGradWithoutEpsilon(AdaGradBase):
    def rule(self, G, rows, g):
        G[rows] += g * g
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.eta0 * g / np.sqrt(G[rows])


class AdaGradSharedState(AdaGradBase):
    G = {}

    def __init__(self, eta0, epsilon=1e-8):
        self.eta0, self.epsilon = eta0, epsilon


class AdaGradNotInPlace(worked.AdaGrad):
    def step(self, params, grads):
        for name, g in grads.items():
            dense = np.zeros_like(params[name])
            if isinstance(g, tuple):
                dense[g[0]] = g[1]
            else:
                dense = g
            G = self.G.setdefault(name, np.zeros_like(params[name]))
            G += dense * dense
            params[name] = params[name] - self.eta0 * dense / (np.sqrt(G) + self.epsilon)


class AdaGradIgnoresRows(worked.AdaGrad):
    def step(self, params, grads):
        for name, g in grads.items():
            rows = slice(None)
            if isinstance(g, tuple):
                rows, g = slice(0, len(g[0])), g[1]
            G = self.G.setdefault(name, np.zeros_like(params[name]))
            G[rows] += g * g
            params[name][rows] -= self.eta0 * g / (np.sqrt(G[rows]) + self.epsilon)


class AdaGradDenseW1(worked.AdaGrad):
    """Right numbers, but W1's gradient made dense and every row of W1 updated."""

    def step(self, params, grads):
        for name, g in grads.items():
            if isinstance(g, tuple):
                dense = np.zeros_like(params[name])
                dense[g[0]] = g[1]
                g = dense
            G = self.G.setdefault(name, np.zeros_like(params[name]))
            G += g * g
            params[name] -= self.eta0 * g / (np.sqrt(G) + self.epsilon)


class AdaGradAddAt(worked.AdaGrad):
    """Right numbers, but every row of W1 written through np.subtract.at."""

    def step(self, params, grads):
        for name, g in grads.items():
            if isinstance(g, tuple):
                dense = np.zeros_like(params[name])
                dense[g[0]] = g[1]
                g = dense
            G = self.G.setdefault(name, np.zeros_like(params[name]))
            G += g * g
            np.subtract.at(params[name], np.arange(len(g)),
                           self.eta0 * g / (np.sqrt(G) + self.epsilon))


class AdaGradSquaresGradientInPlace(worked.AdaGrad):
    def step(self, params, grads):
        for name, g in grads.items():
            rows = slice(None)
            if isinstance(g, tuple):
                rows, g = g
            G = self.G.setdefault(name, np.zeros_like(params[name]))
            step = self.eta0 * g
            g **= 2
            G[rows] += g
            params[name][rows] -= step / (np.sqrt(G[rows]) + self.epsilon)


class AdaGradStub(worked.AdaGrad):
    def step(self, params, grads):
        ...


def adagrad_function(eta0, epsilon=1e-8):
    return worked.AdaGrad(eta0, epsilon)


# -- one update and the training loop ------------------------------------------------------------

def update_without_step(params, optimizer, X_batch, Y_batch):
    z1, h, z2, o = worked.forward(X_batch, **params)
    worked.backward(X_batch, z1, h, params["W2"], worked.ce_delta2(z2, o, Y_batch))


def update_wrong_delta_sign(params, optimizer, X_batch, Y_batch):
    z1, h, z2, o = worked.forward(X_batch, **params)
    optimizer.step(params, worked.backward(X_batch, z1, h, params["W2"], Y_batch - o))


def update_changes_params_itself(params, optimizer, X_batch, Y_batch):
    z1, h, z2, o = worked.forward(X_batch, **params)
    grads = worked.backward(X_batch, z1, h, params["W2"], worked.ce_delta2(z2, o, Y_batch))
    params["b2"] -= 0.1 * grads["b2"]
    optimizer.step(params, grads)


def update_two_steps(params, optimizer, X_batch, Y_batch):
    worked.update(params, optimizer, X_batch, Y_batch)
    worked.update(params, optimizer, X_batch, Y_batch)


def update_dense_X(params, optimizer, X_batch, Y_batch):
    worked.update(params, optimizer, X_batch.toarray(), Y_batch)


def train_in_stored_order(params, optimizer, X, Y, epochs, batch_size, rng, update):
    for _ in range(epochs):
        for start in range(0, X.shape[0], batch_size):
            update(params, optimizer, X[start:start + batch_size], Y[start:start + batch_size])


def train_shuffled_once(params, optimizer, X, Y, epochs, batch_size, rng, update):
    order = rng.permutation(X.shape[0])
    for _ in range(epochs):
        for start in range(0, X.shape[0], batch_size):
            batch = order[start:start + batch_size]
            update(params, optimizer, X[batch], Y[batch])


def train_one_epoch(params, optimizer, X, Y, epochs, batch_size, rng, update):
    worked.train(params, optimizer, X, Y, 1, batch_size, rng, update)


def train_global_random(params, optimizer, X, Y, epochs, batch_size, rng, update):
    worked.train(params, optimizer, X, Y, epochs, batch_size, np.random.default_rng(), update)


def train_fixed_seed(params, optimizer, X, Y, epochs, batch_size, rng, update):
    worked.train(params, optimizer, X, Y, epochs, batch_size, np.random.default_rng(0), update)


def train_drops_last_batch(params, optimizer, X, Y, epochs, batch_size, rng, update):
    for _ in range(epochs):
        order = rng.permutation(X.shape[0])
        for start in range(0, X.shape[0] - batch_size + 1, batch_size):
            batch = order[start:start + batch_size]
            update(params, optimizer, X[batch], Y[batch])


def train_with_replacement(params, optimizer, X, Y, epochs, batch_size, rng, update):
    for _ in range(epochs):
        order = rng.integers(0, X.shape[0], size=X.shape[0])
        for start in range(0, X.shape[0], batch_size):
            batch = order[start:start + batch_size]
            update(params, optimizer, X[batch], Y[batch])


def train_dense_X(params, optimizer, X, Y, epochs, batch_size, rng, update):
    worked.train(params, optimizer, X.toarray(), Y, epochs, batch_size, rng, update)


def train_labels_not_shuffled(params, optimizer, X, Y, epochs, batch_size, rng, update):
    for _ in range(epochs):
        order = rng.permutation(X.shape[0])
        for start in range(0, X.shape[0], batch_size):
            update(params, optimizer, X[order[start:start + batch_size]],
                   Y[start:start + batch_size])


def train_rotated_order(params, optimizer, X, Y, epochs, batch_size, rng, update):
    for _ in range(epochs):
        order = np.roll(np.arange(X.shape[0]), rng.integers(X.shape[0]))
        for start in range(0, X.shape[0], batch_size):
            batch = order[start:start + batch_size]
            update(params, optimizer, X[batch], Y[batch])


def train_batch_of_64(params, optimizer, X, Y, epochs, batch_size, rng, update):
    worked.train(params, optimizer, X, Y, epochs, 64, rng, update)


def train_new_optimizer(params, optimizer, X, Y, epochs, batch_size, rng, update):
    worked.train(params, worked.AdaGrad(0.1), X, Y, epochs, batch_size, rng, update)


def train_global_update(params, optimizer, X, Y, epochs, batch_size, rng, update):
    worked.train(params, optimizer, X, Y, epochs, batch_size, rng, worked.update)


def train_stub(params, optimizer, X, Y, epochs, batch_size, rng, update):
    ...


#: (grader, wrong answer, words its message must contain).
WRONG = [
    (course.check_forward, forward_without_b1, "missing the bias b1"),
    (course.check_forward, forward_without_b2, "missing the bias b2"),
    (course.check_forward, forward_linear_hidden, "h is z1 itself"),
    (course.check_forward, forward_tanh_hidden, "not tanh"),
    (course.check_forward, forward_always_sigmoid, "whatever f_o is"),
    (course.check_forward, forward_no_output_activation, "o is z2 itself"),
    (course.check_forward, forward_float64, "dtype float64, expected float32"),
    (course.check_forward, forward_np_matrix, "numpy.ndarray"),
    (course.check_forward, forward_changes_b1, "modified its input b1"),
    (course.check_forward, forward_three_arrays, "four arrays"),
    (course.check_forward, forward_z2_from_z1, "computed from z1"),
    (course.check_forward, forward_raises, "your forward raised AttributeError"),
    (course.check_forward, forward_relu_in_place, "z1 was overwritten by ReLU"),
    (course.check_ce_delta2, ce_sign, "sign is flipped"),
    (course.check_ce_delta2, ce_divided_by_n, "per document"),
    (course.check_ce_delta2, ce_sigmoid_again, "already cancelled"),
    (course.check_ce_delta2, ce_dJ_do, "that is ∂J/∂o"),
    (course.check_ce_delta2, ce_float32, "dtype float32, expected float64"),
    (course.check_ce_delta2, ce_in_place, "modified its input o"),
    (course.check_ce_delta2, ce_transposed, "transposed"),
    (course.check_pwe_delta2_pairs, pwe_normalised_by_y_squared, "not |y|²"),
    (course.check_pwe_delta2, pwe_normalised_by_ybar_squared, "not |ȳ|²"),
    (course.check_pwe_delta2_pairs, pwe_not_normalised, "not normalised"),
    (course.check_pwe_delta2_pairs, pwe_normalised_by_L_squared, "not L²"),
    (course.check_pwe_delta2_pairs, pwe_without_tanh_factor, "that is ∂J/∂o"),
    (course.check_pwe_delta2, pwe_sigmoid_factor, "not o(1 − o)"),
    (course.check_pwe_delta2_pairs, pwe_sign, "sign is flipped"),
    (course.check_pwe_delta2, pwe_relevant_sign, "relevant labels' δ2 has the wrong sign"),
    (course.check_pwe_delta2, pwe_nan_for_excluded, "PWE excludes it"),
    (course.check_pwe_delta2, pwe_exponents_swapped, "is off"),
    (course.check_pwe_delta2, pwe_relevant_only, "irrelevant labels' δ2 is missing"),
    (course.check_pwe_delta2, pwe_promotes_float32, "dtype float64, expected float32"),
    (course.check_pwe_delta2, pwe_divided_by_n, "no 1/n"),
    (course.check_delta1_relu, delta1_without_relu, "missing the factor ReLU'(z1)"),
    (course.check_delta1_relu, delta1_wrong_side, "other way round"),
    (course.check_delta1_relu, delta1_one_at_zero, "ReLU'(0) is taken as 0"),
    (course.check_delta1_relu, delta1_times_h, "multiplied by h"),
    (course.check_delta1_relu, delta1_not_transposed, "the transpose of W2"),
    (course.check_delta1_relu, delta1_divided_by_n, "no 1/n"),
    (course.check_delta1_relu, delta1_sign_of_z1, "not −1"),
    (course.check_delta1_relu, delta1_overwrites_z1, "modified its input z1"),
    (course.check_grad_W1_rows, grad_W1_all_rows, "holds all D"),
    (course.check_grad_W1_rows, grad_W1_without_mean, "n times too large"),
    (course.check_grad_W1_rows, grad_W1_as_list, "must be a tuple (rows, values)"),
    (course.check_grad_W1_rows, grad_W1_transposed, "transposed"),
    (course.check_grad_W1_rows, grad_W1_document_rows, "features (columns of X)"),
    (course.check_grad_W1_rows, grad_W1_unsorted, "sorted, each feature once"),
    (course.check_grad_W1_rows, grad_W1_repeated_rows, "sorted, each feature once"),
    (course.check_backward, backward_W2_sum, "∂J/∂W2 is n times too large"),
    (course.check_backward, backward_b1_sum, "∂J/∂b1 is n times too large"),
    (course.check_backward, backward_b1_from_delta2, "not of δ2"),
    (course.check_backward, backward_W2_transposed, "transposed"),
    (course.check_backward, backward_W2_from_z1, "not z1"),
    (course.check_backward, backward_without_b2, "keys W1, b1, W2, b2"),
    (course.check_backward, backward_dense_W1, "holds all D"),
    (course.check_backward, backward_b2_sign, "sign of ∂J/∂b2"),
    (course.check_adagrad, AdaGradWithoutSqrt, "divides by G + ε"),
    (course.check_adagrad, AdaGradEpsilonInside, "outside the square root"),
    (course.check_adagrad, AdaGradResetEachStep, "reset at every step"),
    (course.check_adagrad, AdaGradAccumulatesAfter, "before taking the step"),
    (course.check_adagrad, AdaGradUphill, "uphill"),
    (course.check_adagrad, AdaGradFixedEta, "η0 passed in"),
    (course.check_adagrad, AdaGradFixedEpsilon, "ε passed in"),
    (course.check_adagrad, AdaGradWithoutEpsilon, "NaN or infinite"),
    (course.check_adagrad, AdaGradSharedState, "interfere"),
    (course.check_adagrad, AdaGradNotInPlace, "replaced params"),
    (course.check_adagrad, AdaGradIgnoresRows, "rows of W1 that have no gradient"),
    (course.check_adagrad, AdaGradDenseW1, "does work on every row of W1"),
    (course.check_adagrad, AdaGradAddAt, "does work on every row of W1"),
    (course.check_adagrad, AdaGradSquaresGradientInPlace, "modified the gradients"),
    (course.check_adagrad, AdaGradStub, "no answer yet"),
    (course.check_adagrad, adagrad_function, "must be a class"),
    (course.check_update, update_without_step, "no answer yet"),
    (course.check_update, update_wrong_delta_sign, "handed to optimizer.step"),
    (course.check_update, update_changes_params_itself, "changed the parameters itself"),
    (course.check_update, update_two_steps, "called 2 times"),
    (course.check_train, train_in_stored_order, "stored order"),
    (course.check_train, train_shuffled_once, "same order"),
    (course.check_train, train_one_epoch, "one epoch only"),
    (course.check_train, train_global_random, "generator rng"),
    (course.check_train, train_fixed_seed, "does not depend on the generator rng"),
    (course.check_train, train_drops_last_batch, "update was called"),
    (course.check_train, train_with_replacement, "exactly once"),
    (course.check_train, train_dense_X, "must stay a sparse matrix"),
    (course.check_train, train_labels_not_shuffled, "same documents"),
    (course.check_train, train_rotated_order, "reversed or shifted"),
    (course.check_train, train_batch_of_64, "update was called"),
    (course.check_train, train_new_optimizer, "the optimizer you were given"),
    (course.check_train, train_global_update, "the update it is given"),
    (course.check_train, train_stub, "no answer yet"),
]

#: What a hint must never contain: code.
CODE = re.compile(r"np\.|@|\.T\b|\.sum\(|toarray\(|\bfor \w+ in\b|\[:, ")


def _name(answer):
    return getattr(answer, "__name__", str(answer))


def test_there_are_many_wrong_answers():
    assert len(WRONG) >= 40
    assert len({_name(answer) for _, answer, _ in WRONG}) == len(WRONG)


@pytest.mark.parametrize("check, answer, words", WRONG, ids=[_name(a) for _, a, _ in WRONG])
def test_a_wrong_answer_is_rejected_naming_its_mistake(check, answer, words, capsys):
    report = judged(check, answer)
    out = shown(capsys)
    assert not report, out
    assert out.startswith("NOT YET"), out
    assert words in out, out
    assert not CODE.search(out), f"the hint prints code: {out}"


def test_a_failure_of_the_grader_itself_is_not_blamed_on_the_student(monkeypatch, capsys):
    def failing(*args):
        raise RuntimeError("the grader's own reference failed")
    monkeypatch.setattr(training_loop, "mlnn_backward", failing)  # what check_update judges by
    report = course.check_update(worked.update)
    out = shown(capsys)
    assert not report and out.startswith("ERROR") and "not a fault of your answer" in out


# -- the mistakes of issue 29: saturation, named δ2 errors, O(L), the full D × F, shuffles ------

def ce_with_tanh_outputs(z2, o, Y):
    return np.tanh(z2) - Y


def ce_clipped(z2, o, Y):
    return np.clip(o, 1e-7, 1 - 1e-7) - Y


def pwe_tanh_prime_one_minus_o(z2, o, Y):
    return pwe_with_factor(o, Y, 1 - o)


def pwe_tanh_prime_on_both(z2, o, Y):
    delta2 = np.zeros_like(o)
    for i in range(len(o)):
        p, q = np.flatnonzero(Y[i] > 0), np.flatnonzero(Y[i] == 0)
        for a in p:
            for b in q:
                e = np.exp(-(o[i, a] - o[i, b])) / (len(p) * len(q))
                e *= (1 - o[i, a] ** 2) * (1 - o[i, b] ** 2)
                delta2[i, a] -= e
                delta2[i, b] += e
    return delta2


def pwe_sums_swapped(z2, o, Y):
    relevant = Y > 0
    n_y = relevant.sum(axis=1, keepdims=True)
    pairs = np.maximum(n_y * (Y.shape[1] - n_y), 1).astype(o.dtype)
    S_y = np.where(relevant, np.exp(-o), 0).sum(axis=1, keepdims=True)
    S_ybar = np.where(relevant, 0, np.exp(o)).sum(axis=1, keepdims=True)
    excluded = (n_y == 0) | (n_y == Y.shape[1])
    dJ_do = np.where(relevant, -np.exp(-o) * S_y, np.exp(o) * S_ybar) / pairs
    return np.where(excluded, 0, dJ_do * (1 + o) * (1 - o))


def pwe_all_pairs_at_once(z2, o, Y):
    relevant = (Y > 0).astype(o.dtype)
    pairs = relevant[:, :, None] * (1 - relevant)[:, None, :]
    E = np.exp(-(o[:, :, None] - o[:, None, :])) * pairs
    count = np.maximum(pairs.sum(axis=(1, 2)), 1)[:, None]
    return (-E.sum(axis=2) + E.sum(axis=1)) / count * (1 + o) * (1 - o)


def grad_W1_full_then_rows(X, delta1):
    rows = np.unique(X.indices)
    return rows, np.asarray(X.T @ delta1)[rows] / X.shape[0]


def train_fixed_minibatches(params, optimizer, X, Y, epochs, batch_size, rng, update):
    starts = list(range(0, X.shape[0], batch_size))
    for _ in range(epochs):
        for start in starts:
            batch = start + rng.permutation(min(batch_size, X.shape[0] - start))
            update(params, optimizer, X[batch], Y[batch])


def train_biased_swap(params, optimizer, X, Y, epochs, batch_size, rng, update):
    for _ in range(epochs):
        order = np.arange(X.shape[0])
        for i in range(len(order)):
            j = rng.integers(len(order))
            order[i], order[j] = order[j], order[i]
        for start in range(0, X.shape[0], batch_size):
            batch = order[start:start + batch_size]
            update(params, optimizer, X[batch], Y[batch])


NEW_WRONG = [
    (course.check_ce_delta2, ce_with_tanh_outputs, "not tanh(z2)"),
    (course.check_ce_delta2, ce_clipped, "o is clipped"),
    (course.check_pwe_delta2, pwe_tanh_prime_one_minus_o, "not 1 − o"),
    (course.check_pwe_delta2_pairs, pwe_tanh_prime_on_both, "not also that of the other label"),
    (course.check_pwe_delta2, pwe_sums_swapped, "S_y and S_ȳ are swapped"),
    (course.check_train, train_fixed_minibatches, "cut into consecutive runs"),
    (course.check_train, train_biased_swap, "not uniformly random"),
]


@pytest.mark.parametrize("check, answer, words", NEW_WRONG, ids=[_name(a) for _, a, _ in NEW_WRONG])
def test_the_new_mistakes_are_rejected_by_name(check, answer, words, capsys):
    report = judged(check, answer)
    out = shown(capsys)
    assert not report and out.startswith("NOT YET") and words in out, out
    assert not CODE.search(out), f"the hint prints code: {out}"


def test_the_pair_sum_passes_where_it_is_asked_for(capsys):
    assert course.check_pwe_delta2_pairs(pwe_all_pairs_at_once), shown(capsys)


@pytest.mark.parametrize("check, name", PIECES, ids=[name for _, name in PIECES])
def test_a_piece_left_as_a_stub_is_not_yet_done(check, name, capsys):
    def stub(*args):
        ...
    stub.__name__ = name
    assert not check(stub)
    assert shown(capsys).startswith("NOT YET")


# -- one mistake costs one piece: mlnn's pieces stand in for the student's other ones ----------

#: One wrong version of each piece, by name (each is rejected by its own grader above).
ONE_MISTAKE = {"forward": forward_without_b1, "ce_delta2": ce_sign, "pwe_delta2_pairs": pwe_sign,
               "pwe_delta2": pwe_relevant_sign, "delta1_relu": delta1_without_relu,
               "grad_W1_rows": grad_W1_without_mean, "backward": backward_W2_sum,
               "AdaGrad": AdaGradUphill, "update": update_two_steps,
               "train": train_in_stored_order}


def notebook_namespace():
    """The worked pieces defined in one namespace, as a notebook's cells define them: each
    calls the others by name (update calls forward, ce_delta2 and backward; backward delta1_relu
    and grad_W1_rows)."""
    path = SOLUTIONS / "ex01b_build_it_from_zero.py"
    namespace = {"__name__": "notebook"}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    return namespace


@pytest.mark.parametrize("wrong", list(ONE_MISTAKE))
def test_one_wrong_piece_fails_its_own_grader_only(wrong, capsys):
    namespace = notebook_namespace()
    namespace[wrong] = ONE_MISTAKE[wrong]
    failed = [name for check, name in PIECES if not check(namespace[name])]
    assert failed == [wrong], shown(capsys)


def test_the_pieces_a_piece_calls_are_mlnns_while_it_is_judged(capsys):
    namespace = notebook_namespace()
    namespace["ce_delta2"] = ce_sign
    judged = pieces.standing_in(namespace["update"])
    assert judged.__globals__["ce_delta2"] is pieces.STAND_INS["ce_delta2"]
    assert namespace["update"].__globals__["ce_delta2"] is ce_sign        # the notebook's own
    assert course.check_update(namespace["update"]), shown(capsys)


def test_yours_if_keeps_a_passing_answer_and_gives_mlnns_piece_for_a_failing_one(capsys):
    assert pieces.yours_if(True, forward_without_b1, "forward") is forward_without_b1
    assert "use your forward" in shown(capsys)
    for name, stand_in in pieces.STAND_INS.items():
        assert pieces.yours_if(False, ONE_MISTAKE[name], name) is stand_in
        out = shown(capsys)
        assert f"mlnn's own {name} until yours passes" in out and out.count("\n") == 1


def parameters(function):
    """The names of a function's parameters, in order, each with whether it has a default."""
    return [(p.name, p.default is p.empty) for p in inspect.signature(function).parameters.values()]


@pytest.mark.parametrize("name", sorted(pieces.STAND_INS))
def test_every_stand_in_has_the_notebooks_signature(name):
    """A student's code may call a stand-in by the argument names of the notebook's stub."""
    ours, theirs = pieces.STAND_INS[name], getattr(worked, name)
    methods = [m for m in vars(theirs) if m == "__init__" or not m.startswith("_")] \
        if isinstance(theirs, type) else [None]
    for method in methods:
        assert parameters(getattr(ours, method) if method else ours) == \
            parameters(getattr(theirs, method) if method else theirs), method


@pytest.mark.parametrize("check, name", PIECES, ids=[name for _, name in PIECES])
def test_mlnns_stand_in_passes_the_grader_of_its_piece(check, name, capsys):
    assert check(pieces.STAND_INS[name]), shown(capsys)


# -- the references the graders judge by, against central differences (once, here) ----------

def _fd_params(case):
    X = sp.csr_matrix(case.X)
    return {name: numerical_gradient(loss_of_param(case.net, CrossEntropy(), X, case.Y, name),
                                     case.params[name]) for name in ("W1", "b1", "W2", "b2")}


@pytest.mark.parametrize("shape", [s for s in pieces.SHAPES if s[-1] == np.float64])
def test_the_reference_gradients_match_central_differences(shape):
    case, cache, grads = pieces.backward_case(60, shape)
    answer = pieces.mlnn_backward(case.X, cache.z1, cache.h, case.params["W2"], grads.delta2)
    numeric = _fd_params(case)
    rows, values = answer["W1"]
    full = np.zeros_like(numeric["W1"])
    full[rows] = values
    assert rel_error(full, numeric["W1"]) < 1e-5
    for name in ("b1", "W2", "b2"):
        assert rel_error(answer[name], numeric[name]) < 1e-5
    W2, b2, ce = case.params["W2"], case.params["b2"], CrossEntropy()

    def total(z1):
        z2 = np.maximum(z1, 0) @ W2 + b2
        return float(np.sum(ce.per_document(z2, expit(z2), case.Y)))
    delta1 = pieces.mlnn_delta1_relu(grads.delta2, W2, cache.z1)
    assert rel_error(delta1, numerical_gradient(total, cache.z1)) < 1e-5


@pytest.mark.parametrize("output, seed", [("sigmoid", 20), ("tanh", 30)])
def test_the_reference_deltas_match_central_differences(output, seed):
    reference = pieces.mlnn_ce_delta2 if output == "sigmoid" else pwe_reference
    loss = CrossEntropy() if output == "sigmoid" else PairwiseExponential()
    for what, named in pieces.delta_cases(output, seed):
        z2, o, Y = (value for _, value in named)
        if z2.dtype != np.float64 or "saturated" in what:
            continue

        def total(value, Y=Y):
            return float(np.sum(loss.per_document(value, loss.output.fn(value), Y)))
        assert rel_error(reference(z2, o, Y), numerical_gradient(total, z2)) < 1e-5, what


def test_the_factorised_pwe_reference_equals_mlnns_loss():
    for what, named in list(pieces.delta_cases("tanh", 30)) + list(
            _large_pwe_cases())[-2:]:
        z2, o, Y = (value for _, value in named)
        ours, mlnns = pwe_reference(z2, o, Y), PairwiseExponential().delta(z2, o, Y)
        assert ours.dtype == mlnns.dtype and rel_error(ours, mlnns) < 1e-6, what
