"""Notebook 01b's machinery: the student's network (Eq. 2) built from zero, one piece at a time.

Each piece is judged with mlnn's pieces (:data:`STAND_INS`) standing in for the student's others
(:func:`piece`), so one mistake fails one grader; X made dense or the full D × F product Xᵀ δ1 is
judged on wide cases by the memory and CPU time the answer may have (:func:`run_sparse`).
"""

import functools
import types
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from mlnn.course.grading import (NO_ANSWER, CaseRng, NotYet, as_array, expect_items, judge,
                                 label_rows, run, within)
from mlnn.course.standins import (STAND_INS, Reference, grad_W1_rows_scaled,  # noqa: F401
                                  mlnn_backward, mlnn_ce_delta2, mlnn_delta1_relu, mlnn_forward,
                                  mlnn_grad_W1_rows, mlnn_update)
from mlnn.nn.losses import CrossEntropy
from mlnn.nn.network import Network
from mlnn.sandbox.client import is_remote


# -- one piece judged on its own -------------------------------------------------------------------

def standing_in(answer):
    """``answer`` with mlnn's pieces in place of the student's pieces it calls by name (a
    function reads them from its notebook's namespace): it is judged on its own."""
    if not isinstance(answer, types.FunctionType) or is_remote(answer):
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
WIDE, WIDE_ROWS = 1_000_000, 8

#: The wide cases: many documents and few hidden units (X dense would be n × D, and densifying
#: it row by row takes n · D steps), and the other way round (the full product would be D × F;
#: its work is judged with the hidden units repeated to :data:`MANY_UNITS`, where taking it one
#: column at a time takes F · D steps).
WIDE_SHAPES = [(1000, WIDE, 2, 3, np.float64), (2, WIDE, 40, 3, np.float64)]
MANY_UNITS = 400

DENSE_HINT = ("your function made the sparse X dense; products with X and Xᵀ work on the sparse "
              "matrix directly, at a cost proportional to its nonzeros")
FULL_HINT = ("your function forms the full D × F product Xᵀ δ1 (one row per feature of the "
             "vocabulary); restrict Xᵀ to the features present in the minibatch first")
ROW_HINT = ("your function made the sparse X dense, or rows of it (arrays of D entries): X W1 "
            "works on the sparse X directly, at a cost proportional to its nonzeros")


def widened(named, n):
    """The named inputs with the hidden units repeated to :data:`MANY_UNITS`: every dense
    array of n rows repeats its columns, W2 its rows (the same network, many more units)."""
    F = next(v.shape[1] for _, v in named if isinstance(v, np.ndarray) and v.ndim == 2
             and v.shape[0] == n)
    repeat = MANY_UNITS // F
    return [(label, np.tile(value, (repeat, 1)) if label == "W2"
             else np.tile(value, (1, repeat)) if np.shape(value) == (n, F) else value)
            for label, value in named]


def run_sparse(function, *named, name="function", vectors=WIDE_ROWS):
    """:func:`~mlnn.course.grading.run`; on a wide case (D = :data:`WIDE`) first the work,
    whatever classes X goes through: more than ``vectors`` arrays of D entries, or the CPU
    time of O(n · D) steps, is X made dense (many documents), the full product (two), or with
    ``vectors`` < 1 a row of X made dense."""
    X = next((value for _, value in named if sp.issparse(value)), None)
    if X is not None and X.shape[1] >= WIDE:
        judged = named if X.shape[0] >= 16 else widened(named, X.shape[0])
        within(function, *judged, name=name, memory=vectors * X.shape[1] * 8,
               reference=STAND_INS.get(name, lambda *args: None),
               hint=ROW_HINT if vectors < 1 else DENSE_HINT if X.shape[0] >= 16 else FULL_HINT)
    return run(function, *named, name=name)


# -- random minibatches ----------------------------------------------------------------------------

def documents(rng, n, D, dtype=np.float64):
    """A CSR n × D of positive values, sorted indices; for n > 1 one document is empty."""
    sizes = rng.integers(1, max(2, min(D // 3, 12)) + 1, size=n)
    if n > 1:
        sizes[rng.integers(n)] = 0
    rows = [np.sort(rng.choice(D, size=min(size, D), replace=False)) for size in sizes]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    indices = np.concatenate(rows).astype(np.int32)
    data = rng.uniform(0.1, 1.0, size=len(indices)).astype(dtype)
    return sp.csr_matrix((data, indices, indptr), shape=(n, D))


def labels(rng, n, L, dtype=np.float64):
    """0/1 labels, |y| uniform in 1 … L − 1; for n > 2 two documents PWE excludes (|y| = 0, L)."""
    Y = label_rows(rng, n, L).astype(dtype)
    if n > 2:
        Y[0], Y[1] = 0, 1
    return Y


class Case(NamedTuple):
    """One random minibatch: X (CSR), Y, the parameters, mlnn's network on them."""

    X: sp.csr_matrix
    Y: np.ndarray
    params: dict
    net: Network


def first_layer(rng, X, F, dtype):
    """W1 (D × F), normal with scale 0.8; on a wide case (D = :data:`WIDE`) only the rows of
    the words present in X are drawn and the rest are 0: z1 reads no other row, and a wide
    W1 of 40 units would take seconds to draw."""
    if X.shape[1] < WIDE:
        return rng.normal(scale=0.8, size=(X.shape[1], F)).astype(dtype)
    present = np.unique(X.indices)
    W1 = np.zeros((X.shape[1], F), dtype=dtype)
    W1[present] = rng.normal(scale=0.8, size=(len(present), F))
    return W1


def network_case(seed, n, D, F, L, dtype=np.float64, output="sigmoid", kink=False):
    """A random :class:`Case` whose z1 stays 1e-3 away from ReLU's kink, unless ``kink``: then
    half the biases b1 are 0, so that a document without words has z1 = 0 there. (Many
    documents: the biases are drawn again until z1 is away from the kink.)"""
    for attempt in range(100):
        rng = CaseRng(seed, attempt)
        X = documents(rng, n, D, dtype)
        params = {"W1": first_layer(rng, X, F, dtype),
                  "b1": rng.normal(scale=0.4, size=F).astype(dtype),
                  "W2": rng.normal(scale=0.8, size=(F, L)).astype(dtype),
                  "b2": rng.normal(scale=0.3, size=L).astype(dtype)}
        if kink:
            params["b1"][::2] = 0
        XW = np.asarray(X @ params["W1"])
        for _ in range(100 if n >= 100 and not kink else 1):
            if kink or np.min(np.abs(XW + params["b1"])) > 1e-3:
                net = Network(*(params[k].copy() for k in ("W1", "b1", "W2", "b2")), "relu",
                              output)
                return Case(X, labels(rng, n, L, dtype), params, net)
            params["b1"] = rng.normal(scale=0.4, size=F).astype(dtype)
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


def yours_if(report, answer, name):
    """``answer`` if its grader passed, else mlnn's own piece ``name``; says which one the cells
    below use."""
    print(f"→ the cells below use your {name}" if report
          else f"→ the cells below use mlnn's own {name} until yours passes")
    return answer if report else STAND_INS[name]


# -- the gradients of a piece, compared ------------------------------------------------------------

def expect_rows(answer, expected, case, wrongs, inputs):
    """∂J/∂W1 as a (rows, values) pair: the sorted features present in X, their gradient rows."""
    if answer is None:
        raise NotYet(NO_ANSWER)
    if type(answer) is not tuple or len(answer) != 2:
        raise NotYet("∂J/∂W1 must be a tuple (rows, values): the sorted indices of the words "
                     "present in the minibatch, and the k × F block of their gradient rows")
    rows, (right, values) = as_array(answer[0], "rows"), expected
    if rows.size == 0 and isinstance(answer[0], (list, tuple)):
        rows = rows.astype(np.intp)               # an empty list of indices holds no floats
    D, k = inputs["X"].shape[1], len(right)
    if rows.ndim != 1 or rows.dtype.kind not in "iu":
        raise NotYet("rows must be a 1-d array (or list) of integer feature indices")
    if len(rows) == D and k < D:
        raise NotYet(f"∂J/∂W1 holds all D = {D} rows; store only the k = {k} rows of the words "
                     "present in the minibatch (every other row is zero)")
    if set(rows.tolist()) != set(right.tolist()):
        raise NotYet("rows must be exactly the features (columns of X) that occur in the "
                     f"minibatch: {k} of them here, you gave {len(rows)}")
    if len(rows) != k or np.any(np.diff(rows) <= 0):
        raise NotYet("rows must be sorted, each feature once")
    judge(answer[1], values, "the values of ∂J/∂W1")


def expect_backward(answer, expected, what, wrongs, inputs):
    """A dict of the four gradients: W1 as (rows, values), the others arrays."""
    if answer is None:
        raise NotYet(NO_ANSWER)
    if not isinstance(answer, dict) or set(answer) != {"W1", "b1", "W2", "b2"}:
        raise NotYet("return a dict with the keys W1, b1, W2, b2")
    expect_rows(answer["W1"], expected["W1"], what, (), inputs)
    dense = ("b1", "W2", "b2")
    expect_items(dense, label="∂J/∂{}")({k: answer[k] for k in dense},
                                        {k: expected[k] for k in dense}, what, wrongs)
