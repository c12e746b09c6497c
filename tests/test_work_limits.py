"""How an answer works, judged from outside the answer's process: on cases where work of the
wrong order cannot finish, the kernel refuses it the memory, or the grader stops it for its CPU
time (:func:`mlnn.course.grading.within`). Each wrong answer here is a notebook cell's source,
judged as the grading command judges it (:func:`mlnn.course.answers.run_cell`), whatever
classes and forms it goes through; the right answers in unusual forms pass.
"""

import textwrap

import pytest

from mlnn.course import raw_grader
from mlnn.course.answers import run_cell
from mlnn.course.registry import EXERCISES

IMPORTS = "import numpy as np\nimport scipy.sparse as sp\nfrom scipy.special import expit\n"

FORWARD_TAIL = """
    h = np.maximum(z1, 0)
    return z1, h, h @ W2 + b2, f_o(h @ W2 + b2)
"""

WRONG = {
    "through COO": ("forward", """
def forward(X, W1, b1, W2, b2, f_o=expit):
    z1 = X.tocoo().toarray() @ W1 + b1""" + FORWARD_TAIL, "made the sparse X dense"),
    "through a new CSR": ("forward", """
def forward(X, W1, b1, W2, b2, f_o=expit):
    z1 = sp.csr_matrix(X).toarray() @ W1 + b1""" + FORWARD_TAIL, "made the sparse X dense"),
    "row by row": ("forward", """
def forward(X, W1, b1, W2, b2, f_o=expit):
    rows = []
    for i in range(X.shape[0]):
        row = np.zeros(X.shape[1], dtype=W1.dtype)
        row[X.indices[X.indptr[i]:X.indptr[i + 1]]] = X.data[X.indptr[i]:X.indptr[i + 1]]
        rows.append(row @ W1)
    z1 = np.array(rows).reshape(X.shape[0], -1) + b1""" + FORWARD_TAIL, "rows of it"),
    "the full product through CSC": ("grad_W1_rows", """
def grad_W1_rows(X, delta1):
    rows = np.unique(X.indices)
    full = X.tocsc().T @ delta1
    return rows, np.asarray(full)[rows] / X.shape[0]
""", "full D × F product"),
    "through X made dense": ("grad_W1_rows", """
def grad_W1_rows(X, delta1):
    rows = np.unique(X.indices)
    return rows, (X.toarray().T @ delta1)[rows] / X.shape[0]
""", "made the sparse X dense"),
    "the full product one column at a time": ("grad_W1_rows", """
def grad_W1_rows(X, delta1):
    rows = np.unique(X.indices)
    columns = [np.asarray(X.T @ delta1[:, j:j + 1]) for j in range(delta1.shape[1])]
    return rows, np.hstack(columns)[rows] / X.shape[0]
""", "full D × F product"),
    "backward through the full product": ("backward", """
def backward(X, z1, h, W2, delta2):
    n, delta1 = X.shape[0], delta1_relu(delta2, W2, z1)
    rows = np.unique(X.indices)
    return {"W1": (rows, np.asarray(X.tocsc().T @ delta1)[rows] / n),
            "b1": delta1.sum(axis=0) / n, "W2": h.T @ delta2 / n, "b2": delta2.sum(axis=0) / n}
""", "full D × F product"),
    "update through a dense X": ("update", """
def update(params, optimizer, X_batch, Y_batch):
    X_batch = sp.csr_matrix(X_batch.tocoo().toarray())
    z1, h, z2, o = forward(X_batch, **params)
    optimizer.step(params, backward(X_batch, z1, h, params["W2"], ce_delta2(z2, o, Y_batch)))
""", "made the sparse X dense"),
    "AdaGrad through a dense gradient": ("AdaGrad", """
class AdaGrad:
    def __init__(self, eta0, epsilon=1e-8):
        self.eta0, self.epsilon, self.G = eta0, epsilon, {}

    def step(self, params, grads):
        for name, g in grads.items():
            if isinstance(g, tuple):
                dense = np.zeros_like(params[name])
                dense[g[0]] = g[1]
                g = dense
            G = self.G.setdefault(name, np.zeros_like(params[name]))
            G += g * g
            params[name] -= self.eta0 * g / (np.sqrt(G) + self.epsilon)
""", "does work on every row of W1"),
    "all pairs by einsum": ("pwe_delta2", """
def pwe_delta2(z2, o, Y):
    relevant = (np.asarray(Y) > 0).astype(o.dtype)
    pairs = np.einsum("ip,in->ipn", relevant, 1 - relevant)
    E = np.exp(-(o[:, :, None] - o[:, None, :])) * pairs
    count = np.maximum(pairs.sum(axis=(1, 2)), 1)[:, None]
    return (E.sum(axis=1) - E.sum(axis=2)) / count * (1 + o) * (1 - o)
""", "every (relevant, irrelevant) pair"),
    "the labels in a loop": ("pwe_delta2", """
def pwe_delta2(z2, o, Y):
    delta2 = np.zeros_like(o)
    for i in range(len(o)):
        y = np.asarray(Y[i]) > 0
        p, q = y.sum(), (~y).sum()
        if p == 0 or q == 0:
            continue
        S_y, S_ybar = np.exp(-o[i][y]).sum(), np.exp(o[i][~y]).sum()
        for l in range(o.shape[1]):
            e = -np.exp(-o[i, l]) * S_ybar if y[l] else np.exp(o[i, l]) * S_y
            delta2[i, l] = e / (p * q) * (1 + o[i, l]) * (1 - o[i, l])
    return delta2
""", "loops over the labels or the pairs"),
    "one document at a time": ("pwe_delta2", """
def one(o, y):
    S_y, S_ybar = np.exp(-o[y]).sum(), np.exp(o[~y]).sum()
    pairs = float(max(y.sum() * (~y).sum(), 1))
    return np.where(y, -np.exp(-o) * S_ybar, np.exp(o) * S_y) / pairs * (1 + o) * (1 - o)

def pwe_delta2(z2, o, Y):
    return np.vstack([one(o[i], np.asarray(Y[i]) > 0) for i in range(len(o))])
""", "all documents at once"),
    "a product over the documents": ("pwe_delta2", """
def pwe_delta2(z2, o, Y):
    relevant = (np.asarray(Y) > 0).astype(o.dtype)
    n_y = relevant.sum(axis=1, keepdims=True)
    pairs = np.maximum(n_y * (o.shape[1] - n_y), 1)
    S_y = (np.exp(-o) @ relevant.T).diagonal()[:, None]
    S_ybar = (np.exp(o) @ (1 - relevant).T).diagonal()[:, None]
    return (np.where(relevant > 0, -np.exp(-o) * S_ybar, np.exp(o) * S_y) / pairs
            * (1 + o) * (1 - o))
""", "n × n"),
    "a loop over the skipped steps": ("momentum_skip", """
def momentum_skip(theta, v, mu, eta, gamma, skipped):
    theta, v = np.array(theta, dtype=float), np.array(v, dtype=float)
    for _ in range(skipped):
        v = mu * v - eta * gamma * theta
        theta = theta + v
    return theta, v
""", "does work for every skipped step"),
    "arrays of the skipped steps": ("momentum_skip", """
def momentum_skip(theta, v, mu, eta, gamma, skipped):
    A = np.array([[1 - eta * gamma, mu], [-eta * gamma, mu]])
    powers = [np.eye(2)]
    for _ in range(skipped):
        powers.append(A @ powers[-1])
    P = np.array(powers)[-1]
    return P[0, 0] * theta + P[0, 1] * v, P[1, 0] * theta + P[1, 1] * v
""", "does work for every skipped step"),
}

RIGHT = {
    "rows from the column sums": ("grad_W1_rows", """
def grad_W1_rows(X, delta1):
    rows = np.flatnonzero(np.asarray(abs(X).sum(axis=0)).ravel())
    return rows, np.asarray(X[:, rows].T @ delta1) / X.shape[0]
"""),
    "momentum by its matrix power": ("momentum_skip", """
def momentum_skip(theta, v, mu, eta, gamma, skipped):
    A = np.linalg.matrix_power(np.array([[1 - eta * gamma, mu], [-eta * gamma, mu]]), skipped)
    return A[0, 0] * theta + A[0, 1] * v, A[1, 0] * theta + A[1, 1] * v
"""),
}


def judged(name, source, capsys):
    exercise = next(e for e in EXERCISES if e.name == name)
    report = run_cell(exercise, raw_grader(exercise.grader), textwrap.dedent(source), IMPORTS)
    capsys.readouterr()
    return report


@pytest.mark.parametrize("what", sorted(WRONG))
def test_work_of_the_wrong_order_is_refused_with_what_it_does(what, capsys):
    name, source, hint = WRONG[what]
    report = judged(name, source, capsys)
    assert not report and hint in report.detail, report


@pytest.mark.parametrize("what", sorted(RIGHT))
def test_right_answers_in_unusual_forms_pass_the_limits(what, capsys):
    report = judged(*RIGHT[what], capsys)
    assert report, report
