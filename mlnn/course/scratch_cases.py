"""The random cases and checks shared by the graders of notebook 01b (:mod:`mlnn.course.scratch`
and :mod:`mlnn.course.scratch_training`): inputs with documents without words and label sets PWE
excludes, a sparse X that refuses to be made dense, networks whose gradients are checked against
central differences first, and the comparisons that name a known mistake.
"""

from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from mlnn.course.grading import (NotYet, StudentError, as_array, judge, label_rows,
                                 relative_error, run)
from mlnn.nn.gradcheck import loss_of_param, numerical_gradient
from mlnn.nn.losses import CrossEntropy
from mlnn.nn.network import Network

#: The worked solution, relative to the project's root.
SOLUTION = Path("notebooks") / "solutions" / "ex01b_build_it_from_zero.py"

#: (n, D, F, L, dtype) of the random cases: F = L (where a missing transpose still runs) and
#: F ≠ L, n = 1, wide and narrow, float32.
SHAPES = [(6, 12, 5, 5, np.float64), (1, 6, 3, 4, np.float64), (4, 9, 4, 3, np.float64),
          (3, 10, 2, 7, np.float64), (9, 30, 6, 2, np.float64), (5, 14, 4, 6, np.float32)]

#: How far mlnn's analytic gradients may be from central differences (else the grader is wrong).
FD_TOLERANCE = 1e-5


# -- inputs --------------------------------------------------------------------------------------

class Refused(Exception):
    """Raised inside a student's function that does what its exercise rules out; the message
    is the hint."""


GUARD = {"armed": False, "D": None, "reads": 0, "limit": None}

DENSE_HINT = ("your function made the sparse X dense; products with X and Xᵀ work on the sparse "
              "matrix directly, at a cost proportional to its nonzeros")

FULL_HINT = ("your function forms the full D × F product Xᵀ δ1 (one row per feature of the "
             "vocabulary); restrict Xᵀ to the features present in the minibatch first")

PAIRS_HINT = ("your δ2 does work for every (relevant, irrelevant) pair: the factorised form needs "
              "only two sums over the labels of each document, O(L) per document")


class Guarded:
    """A sparse-matrix mixin: while a student's function runs, refuses ``toarray``/``todense``
    and a product with one dense row per feature (the full D × F gradient)."""

    def toarray(self, *args, **kwargs):
        if GUARD["armed"]:
            raise Refused(DENSE_HINT)
        return super().toarray(*args, **kwargs)

    def todense(self, *args, **kwargs):
        if GUARD["armed"]:
            raise Refused(DENSE_HINT)
        return super().todense(*args, **kwargs)

    def _matmul_dispatch(self, other):
        result = super()._matmul_dispatch(other)
        if (GUARD["armed"] and GUARD["D"] and np.ndim(result) == 2 and not sp.issparse(result)
                and result.shape[0] == GUARD["D"]):
            raise Refused(FULL_HINT)
        return result


class GuardedCSC(Guarded, sp.csc_matrix):
    """A guarded CSC matrix: the transpose of a :class:`GuardedCSR`."""

    def transpose(self, *args, **kwargs):
        return GuardedCSR(super().transpose(*args, **kwargs))


class GuardedCSR(Guarded, sp.csr_matrix):
    """A guarded CSR matrix, whose transpose is guarded too."""

    def transpose(self, *args, **kwargs):
        return GuardedCSC(super().transpose(*args, **kwargs))


class Linear(np.ndarray):
    """An array that refuses, while a student's function runs, to become (or give rise to) an
    array of more than ``GUARD["limit"]`` entries, or to be read element by element more than
    that many times: the O(L)-per-document rule of the factorised PWE δ2."""

    def __array_finalize__(self, obj):
        if GUARD["armed"] and GUARD["limit"] and self.size > GUARD["limit"]:
            raise Refused(PAIRS_HINT)

    def __getitem__(self, key):
        if GUARD["armed"] and GUARD["limit"]:
            GUARD["reads"] += 1
            if GUARD["reads"] > GUARD["limit"]:
                raise Refused(PAIRS_HINT)
        return super().__getitem__(key)


def run_guarded(function, *named, name="function", full_rows=None, limit=None):
    """:func:`~mlnn.course.grading.run` with the guards armed (``full_rows``: the D of a
    product that must not be formed; ``limit``: the size an array may reach); what they refuse
    becomes the hint."""
    def armed(*args):
        GUARD.update(armed=True, D=full_rows, reads=0, limit=limit)
        try:
            return function(*args)
        finally:
            GUARD.update(armed=False, D=None, limit=None)
    try:
        return run(armed, *named, name=name)
    except StudentError as error:
        if isinstance(error.error, Refused):
            raise NotYet(str(error.error)) from None
        raise


def documents(rng, n, D, dtype=np.float64, empty=True):
    """A GuardedCSR n × D of positive tf-idf-like values, sorted indices, no explicit zeros;
    with ``empty`` and n > 1 one document has no words."""
    sizes = rng.integers(1, max(2, D // 3) + 1, size=n)
    if empty and n > 1:
        sizes[rng.integers(n)] = 0
    rows = [np.sort(rng.choice(D, size=min(size, D), replace=False)) for size in sizes]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    indices = np.concatenate(rows).astype(np.int32)
    data = rng.uniform(0.1, 1.0, size=len(indices)).astype(dtype)
    return GuardedCSR((data, indices, indptr), shape=(n, D))


def labels(rng, n, L, dtype=np.float64, excluded=True):
    """n × L 0/1 labels, |y| uniform in 1 … L − 1 (so mostly |y| ≠ |ȳ|); with ``excluded`` and
    n > 2 one document has no relevant label and one has every label relevant."""
    Y = label_rows(rng, n, L).astype(dtype)
    if excluded and n > 2:
        Y[0], Y[1] = 0, 1
    return Y


class Case(NamedTuple):
    """One random minibatch and network: X (GuardedCSR), Y, the parameters, mlnn's network."""

    X: sp.csr_matrix
    Y: np.ndarray
    params: dict
    net: Network


def network_case(seed, n, D, F, L, dtype=np.float64, output="sigmoid", kink=False):
    """A random :class:`Case`; its z1 stays at least 1e-3 from ReLU's kink unless ``kink``, when
    some biases are exactly 0 so that a document without words has z1 = 0 there."""
    for attempt in range(100):
        rng = np.random.default_rng([seed, attempt])
        X = documents(rng, n, D, dtype)
        params = {"W1": rng.normal(scale=0.8, size=(D, F)).astype(dtype),
                  "b1": rng.normal(scale=0.4, size=F).astype(dtype),
                  "W2": rng.normal(scale=0.8, size=(F, L)).astype(dtype),
                  "b2": rng.normal(scale=0.3, size=L).astype(dtype)}
        if kink:
            params["b1"][::2] = 0
        net = Network(*(params[k].copy() for k in ("W1", "b1", "W2", "b2")), "relu", output)
        z1 = net.forward(sp.csr_matrix(X)).z1
        if kink or np.min(np.abs(z1)) > 1e-3:
            return Case(X, labels(rng, n, L, dtype), params, net)
    raise RuntimeError("no random case away from ReLU's kink")


def agree(analytic, numeric, what):
    """Raise (the grader's own failure) unless mlnn's gradient matches central differences."""
    error = relative_error(np.asarray(analytic, float), np.asarray(numeric, float))
    if not error < FD_TOLERANCE:
        raise AssertionError(f"mlnn's {what} differs from central differences ({error:.1e})")


def expect_values(answer, reference, what, wrong_forms=()):
    """A dense array equal to ``reference`` (:func:`~mlnn.course.grading.judge`, dtype exactly
    the reference's), a known mistake named."""
    if sp.issparse(answer):
        raise NotYet(f"{what} is a {type(answer).__name__}; return a dense numpy.ndarray")
    return judge(answer, reference, what, [(w, h) for w, h in wrong_forms if w is not None])


# -- backpropagation cases ------------------------------------------------------------------------

def backward_case(seed, shape, kink=False):
    """A CE case with its cache and mlnn's gradients."""
    case = network_case(seed, *shape, kink=kink)
    cache = case.net.forward(sp.csr_matrix(case.X))
    grads = case.net.backward(cache, CrossEntropy().delta(cache.z2, cache.o, case.Y))
    return case, cache, grads


def fd_delta1(case, cache):
    """∂(Σ_i J_i)/∂z1 by central differences: row i is δ1_i."""
    W2, b2, ce = case.params["W2"], case.params["b2"], CrossEntropy()

    def total(z1):
        z2 = np.maximum(z1, 0) @ W2 + b2
        return float(np.sum(ce.per_document(z2, expit(z2), case.Y)))
    return numerical_gradient(total, cache.z1)


def fd_params(case, names=("W1", "b1", "W2", "b2")):
    """∂J/∂θ of the mean CE loss by central differences, for each parameter named."""
    X = sp.csr_matrix(case.X)
    return {name: numerical_gradient(loss_of_param(case.net, CrossEntropy(), X, case.Y, name),
                                     case.params[name]) for name in names}


def expect_row_sparse(answer, reference, n, what="∂J/∂W1"):
    """A (rows, values) pair equal to mlnn's :class:`RowSparseGradient` ``reference``."""
    if answer is None:
        raise NotYet(f"no answer yet ({what}: None)")
    if type(answer) is not tuple or len(answer) != 2:
        raise NotYet(f"{what} must be a tuple (rows, values): the sorted indices of the words "
                     "present in the minibatch, and the k × F block of their gradient rows")
    rows, values = as_array(answer[0], "rows"), as_array(answer[1], f"the values of {what}")
    D, F, k = reference.shape[0], reference.shape[1], len(reference.rows)
    if rows.ndim != 1 or rows.dtype.kind not in "iu":
        raise NotYet("rows must be a 1-d array of integer feature indices")
    if len(rows) == D and k < D:
        raise NotYet(f"{what} holds all D = {D} rows; store only the k = {k} rows of the words "
                     "present in the minibatch (every other row is zero)")
    if set(rows.tolist()) != set(reference.rows.tolist()):
        raise NotYet("rows must be exactly the features (columns of X) that occur in the "
                     f"minibatch: {k} of them here, you gave {len(rows)}")
    if len(rows) != k or np.any(np.diff(rows) <= 0):
        raise NotYet("rows must be sorted, each feature once")
    ref = reference.values
    expect_values(values, ref, f"the values of {what}", [
        (ref * n, f"{what} is n times too large: J is the mean over the n documents"),
        (-ref, f"the sign of {what} is flipped"), (ref / n, f"{what} is divided by n twice")])
    if k == 0 and values.shape != (0, F):
        raise NotYet(f"with no words in the minibatch the values must have shape (0, {F})")


def expect_gradients(answer, grads, cache, n):
    """The four gradients of :func:`check_backward`, with their usual mistakes."""
    if answer is None:
        raise NotYet("no answer yet (backward: the function returned None)")
    if not isinstance(answer, dict) or set(answer) != {"W1", "b1", "W2", "b2"}:
        raise NotYet("return a dict with the keys W1, b1, W2, b2")
    expect_row_sparse(answer["W1"], grads.W1, n)
    sums = {"b1": grads.delta1.sum(axis=0), "W2": cache.h.T @ grads.delta2,
            "b2": grads.delta2.sum(axis=0)}
    for name in ("b1", "W2", "b2"):
        reference = getattr(grads, name)
        expect_values(answer[name], reference, f"∂J/∂{name}", [
            (sums[name], f"∂J/∂{name} is n times too large: J is the mean over the n documents"),
            (cache.z1.T @ grads.delta2 / n if name == "W2" else None,
             "∂J/∂W2 takes the hidden units h = ReLU(z1), not z1"),
            (reference.T if name == "W2" and reference.shape == reference.T.shape else None,
             "∂J/∂W2 is transposed: it has W2's shape F × L, one row per hidden unit"),
            (-reference, f"the sign of ∂J/∂{name} is flipped"),
            (grads.delta2.mean(axis=0) if name == "b1" else None,
             "∂J/∂b1 is the mean of δ1 over the documents, not of δ2"),
            (grads.delta1.mean(axis=0) if name == "b2" else None,
             "∂J/∂b2 is the mean of δ2 over the documents, not of δ1")])
