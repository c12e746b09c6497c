r"""Notebook 01b's machinery: the student's network (Eq. 2) built from zero, one piece at a time.

Each piece is judged on its own: while it runs, mlnn's pieces (:data:`STAND_INS`) stand in for
the student's other pieces that it calls, so one mistake fails one grader (:func:`piece`). What
an exercise rules out is judged by the work done, whatever classes the student's code goes
through (memory allocated, Python lines run: :func:`~mlnn.course.grading.within`), with guards
on X naming it early: X made dense, the full D × F product Xᵀ δ1 (:func:`run_guarded`). Also the
random minibatches of the graders, and :func:`yours_if`, which gives the cells below the
student's piece once it passed, else mlnn's stand-in.
"""

import functools
import types
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from mlnn.course.grading import (NO_ANSWER, CaseRng, NotYet, StudentError, as_array,
                                 expect_arguments, expect_items, judge, label_rows, run, within)
from mlnn.course.pairwise import pwe_reference
from mlnn.course.rules import apply_rule
from mlnn.nn.activations import get_activation
from mlnn.nn.losses import CrossEntropy
from mlnn.nn.network import Network
from mlnn.nn.optimizers import AdaGrad as MlnnAdaGrad


# -- one piece judged on its own -------------------------------------------------------------------

def standing_in(answer):
    """``answer`` with mlnn's pieces in place of the student's pieces it calls by name (a
    function reads them from its notebook's namespace): it is judged on its own."""
    if not isinstance(answer, types.FunctionType):
        return answer
    names = {**answer.__globals__, **STAND_INS}
    judged = types.FunctionType(answer.__code__, names, answer.__name__, answer.__defaults__,
                                answer.__closure__)
    judged.__kwdefaults__ = answer.__kwdefaults__
    return judged


def piece(grader):
    """The grader of one 01b piece, judging it with mlnn's pieces standing in for the others."""
    @functools.wraps(grader)
    def judge_piece(answer):
        return grader(standing_in(answer))
    return judge_piece


#: (n, D, F, L, dtype) of the random cases: F = L (where a missing transpose still runs) and
#: F ≠ L, n = 1, wide and narrow, float32.
SHAPES = [(6, 12, 5, 5, np.float64), (1, 6, 3, 4, np.float64), (4, 9, 4, 3, np.float64),
          (3, 10, 2, 7, np.float64), (9, 30, 6, 2, np.float64), (5, 14, 4, 6, np.float32)]


#: The vocabulary size D of the wide cases, where the work done tells a sparse product from X
#: made dense (n × D) or the full D × F product; both stay under ``WIDE_ROWS`` · D entries.
WIDE, WIDE_ROWS = 50_000, 8


#: The wide cases: many documents and few hidden units (X dense would be n × D), and the other
#: way round (the full product would be D × F).
WIDE_SHAPES = [(40, WIDE, 2, 3, np.float64), (2, WIDE, 40, 3, np.float64)]


# -- the guards ------------------------------------------------------------------------------------

class Refused(Exception):
    """Raised inside a student's function that does what its exercise rules out (the hint)."""


GUARD = {"armed": False, "D": None, "vectors": 0}

#: The dense vectors of D entries a piece may get from products with X (X's column sums, say);
#: more, such as the full D × F product or its columns one at a time, is refused.
VECTORS = 2


DENSE_HINT = ("your function made the sparse X dense; products with X and Xᵀ work on the sparse "
              "matrix directly, at a cost proportional to its nonzeros")


FULL_HINT = ("your function forms the full D × F product Xᵀ δ1 (one row per feature of the "
             "vocabulary); restrict Xᵀ to the features present in the minibatch first")


ROW_HINT = ("your function made the sparse X dense, or rows of it (arrays of D entries): X W1 "
            "works on the sparse X directly, at a cost proportional to its nonzeros")


class Guarded:
    """A sparse matrix that, while a student's function runs, refuses to become dense and to
    give products with one dense row per feature of more than :data:`VECTORS` columns in all
    (the full D × F gradient, at once or by columns; X's column sums are allowed)."""

    def toarray(self, *args, **kwargs):           # todense() calls it too
        if GUARD["armed"]:
            raise Refused(DENSE_HINT)
        return super().toarray(*args, **kwargs)

    def _matmul_dispatch(self, other):
        result = super()._matmul_dispatch(other)
        if (GUARD["armed"] and GUARD["D"] and np.ndim(result) == 2 and not sp.issparse(result)
                and result.shape[0] == GUARD["D"]):
            GUARD["vectors"] += result.shape[1]
            if GUARD["vectors"] > VECTORS:
                raise Refused(FULL_HINT)
        return result


class GuardedCSC(Guarded, sp.csc_matrix):
    def transpose(self, *args, **kwargs):
        return GuardedCSR(super().transpose(*args, **kwargs))


class GuardedCSR(Guarded, sp.csr_matrix):
    def transpose(self, *args, **kwargs):
        return GuardedCSC(super().transpose(*args, **kwargs))


def run_guarded(function, *named, name="function", measure=True, vectors=WIDE_ROWS):
    """:func:`~mlnn.course.grading.run` with the guards armed; what they refuse is the hint. A
    minibatch X lacking some of the D features may not give a product with D rows. On a wide
    case (D = :data:`WIDE`) the memory the function allocates is the judge, whatever classes X
    goes through: more than ``vectors`` arrays of D entries at once is X made dense (n ≥ 16
    there), the full product (n = 2), or, with ``vectors`` < 1, a row of X made dense."""
    expect_arguments(function, named)
    X = next((value for _, value in named if sp.issparse(value)), None)
    D = X.shape[1] if X is not None and np.unique(X.indices).size < X.shape[1] else None

    def armed(*args):
        GUARD.update(armed=True, D=D, vectors=0)
        try:
            return function(*args)
        finally:
            GUARD.update(armed=False, D=None)
    try:
        if measure and X is not None and X.shape[1] >= WIDE:
            within(armed, *named, name=name, memory=vectors * X.shape[1] * 8,
                   hint=ROW_HINT if vectors < 1 else DENSE_HINT if X.shape[0] >= 16
                   else FULL_HINT)
        return run(armed, *named, name=name)
    except StudentError as error:
        if isinstance(error.error, Refused):
            raise NotYet(str(error.error)) from None
        raise


# -- random minibatches ----------------------------------------------------------------------------

def documents(rng, n, D, dtype=np.float64):
    """A GuardedCSR n × D of positive values, sorted indices; for n > 1 one document is empty."""
    sizes = rng.integers(1, max(2, min(D // 3, 12)) + 1, size=n)
    if n > 1:
        sizes[rng.integers(n)] = 0
    rows = [np.sort(rng.choice(D, size=min(size, D), replace=False)) for size in sizes]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    indices = np.concatenate(rows).astype(np.int32)
    data = rng.uniform(0.1, 1.0, size=len(indices)).astype(dtype)
    return GuardedCSR((data, indices, indptr), shape=(n, D))


def labels(rng, n, L, dtype=np.float64):
    """0/1 labels, |y| uniform in 1 … L − 1; for n > 2 two documents PWE excludes (|y| = 0, L)."""
    Y = label_rows(rng, n, L).astype(dtype)
    if n > 2:
        Y[0], Y[1] = 0, 1
    return Y


class Case(NamedTuple):
    """One random minibatch: X (GuardedCSR), Y, the parameters, mlnn's network on them."""

    X: sp.csr_matrix
    Y: np.ndarray
    params: dict
    net: Network


def network_case(seed, n, D, F, L, dtype=np.float64, output="sigmoid", kink=False):
    """A random :class:`Case` whose z1 stays 1e-3 away from ReLU's kink, unless ``kink``: then
    half the biases b1 are 0, so that a document without words has z1 = 0 there."""
    for attempt in range(100):
        rng = CaseRng(seed, attempt)
        X = documents(rng, n, D, dtype)
        params = {"W1": rng.normal(scale=0.8, size=(D, F)).astype(dtype),
                  "b1": rng.normal(scale=0.4, size=F).astype(dtype),
                  "W2": rng.normal(scale=0.8, size=(F, L)).astype(dtype),
                  "b2": rng.normal(scale=0.3, size=L).astype(dtype)}
        if kink:
            params["b1"][::2] = 0
        net = Network(*(params[k].copy() for k in ("W1", "b1", "W2", "b2")), "relu", output)
        if kink or np.min(np.abs(net.forward(sp.csr_matrix(X)).z1)) > 1e-3:
            return Case(X, labels(rng, n, L, dtype), params, net)
    raise RuntimeError("no random case away from ReLU's kink")


def backward_case(seed, shape, kink=False):
    """A CE case, its forward cache and mlnn's gradients."""
    case = network_case(seed, *shape, kink=kink)
    cache = case.net.forward(sp.csr_matrix(case.X))
    return case, cache, case.net.backward(cache, CrossEntropy().delta(cache.z2, cache.o, case.Y))


def shape_words(shape):
    return f"n = {shape[0]}, D = {shape[1]}, F = {shape[2]}, L = {shape[3]}"


def delta_cases(output, seed):
    """(z2, o, Y) minibatches: n = 1 and n > 1, excluded documents, float32, and saturated
    outputs (|z2| > 30)."""
    activation = expit if output == "sigmoid" else np.tanh
    for number, (n, _, _, L, dtype) in enumerate(SHAPES + [(4, 0, 0, 6, np.float64)]):
        rng = CaseRng(seed, number)
        z2 = rng.normal(scale=1.5, size=(n, L)).astype(dtype)
        saturated, Y = number == len(SHAPES), labels(rng, n, L, dtype)
        if saturated:                       # |z2| from 30 to 45, o = 1 exactly beyond 36.7
            z2 = np.where(Y > 0, -1, 1) * rng.choice([-1, 1, 1], size=(n, L)) * rng.uniform(
                30, 45, size=(n, L))
        o = activation(z2)
        yield (f"δ2 for n = {n}, L = {L} ({np.dtype(dtype)}"
               f"{', saturated outputs' if saturated else ''})", [("z2", z2), ("o", o), ("Y", Y)])


# -- mlnn's pieces standing in for the student's ---------------------------------------------------

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
        apply_rule(self.rule, params, self.states, grads)


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


#: mlnn's own piece of each name, with the notebook's signature: what stands in for a piece of
#: the student's while another piece is graded, and in the cells below until the piece passes.
STAND_INS = {"forward": mlnn_forward, "ce_delta2": mlnn_ce_delta2,
             "pwe_delta2_pairs": pwe_reference, "pwe_delta2": pwe_reference,
             "delta1_relu": mlnn_delta1_relu,
             "grad_W1_rows": mlnn_grad_W1_rows, "backward": mlnn_backward, "AdaGrad": Reference,
             "update": mlnn_update, "train": mlnn_train}


def yours_if(report, answer, name):
    """``answer`` if its grader passed, else mlnn's own piece ``name``; says which one the cells
    below use."""
    if report:
        print(f"→ the cells below use your {name}")
        return answer
    print(f"→ the cells below use mlnn's own {name} until yours passes")
    return STAND_INS[name]


# -- the gradients of a piece, compared ------------------------------------------------------------

def expect_rows(answer, expected, case, wrongs, inputs, what="∂J/∂W1"):
    """A (rows, values) pair: the sorted features present in X, and their gradient rows."""
    if answer is None:
        raise NotYet(NO_ANSWER)
    if type(answer) is not tuple or len(answer) != 2:
        raise NotYet(f"{what} must be a tuple (rows, values): the sorted indices of the words "
                     "present in the minibatch, and the k × F block of their gradient rows")
    rows, (right, values) = as_array(answer[0], "rows"), expected
    if rows.size == 0 and isinstance(answer[0], (list, tuple)):
        rows = rows.astype(np.intp)               # an empty list of indices holds no floats
    D, k = inputs["X"].shape[1], len(right)
    if rows.ndim != 1 or rows.dtype.kind not in "iu":
        raise NotYet("rows must be a 1-d array (or list) of integer feature indices")
    if len(rows) == D and k < D:
        raise NotYet(f"{what} holds all D = {D} rows; store only the k = {k} rows of the words "
                     "present in the minibatch (every other row is zero)")
    if set(rows.tolist()) != set(right.tolist()):
        raise NotYet("rows must be exactly the features (columns of X) that occur in the "
                     f"minibatch: {k} of them here, you gave {len(rows)}")
    if len(rows) != k or np.any(np.diff(rows) <= 0):
        raise NotYet("rows must be sorted, each feature once")
    judge(answer[1], values, f"the values of {what}", [(w[1], h) for w, h in wrongs])


GRADIENTS = ("b1", "W2", "b2")


def expect_backward(answer, expected, what, wrongs, inputs):
    """A dict of the four gradients: W1 as (rows, values), the others arrays."""
    if answer is None:
        raise NotYet(NO_ANSWER)
    if not isinstance(answer, dict) or set(answer) != {"W1", *GRADIENTS}:
        raise NotYet("return a dict with the keys W1, b1, W2, b2")
    expect_rows(answer["W1"], expected["W1"], what, (), inputs)
    expect_items(GRADIENTS, label="∂J/∂{}")({k: answer[k] for k in GRADIENTS},
                                            {k: expected[k] for k in GRADIENTS}, what, wrongs)
