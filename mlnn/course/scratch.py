r"""Graders of notebook 01b, where the student builds the paper's network (Eq. 2) from zero, with
CE (Eq. 6) or PWE (Eq. 3, Sec. 3.2) at the output, ReLU hidden units and AdaGrad (Sec. 3.5).

Each piece runs through :func:`~mlnn.course.grading.check` on random minibatches against mlnn's
code or a plain NumPy reference (whose gradients the tests check against central differences),
and is judged on its own: while it runs, mlnn's pieces (:data:`STAND_INS`) stand in for the
student's other pieces that it calls, so one mistake fails one grader. What the exercise rules
out is judged by the work done, whatever classes the student's code goes through (memory
allocated, Python lines run: :func:`~mlnn.course.grading.within`), with guards on X naming it
early: X made dense, the full D × F product Xᵀ δ1, O(L²) work or a loop over the documents where
O(L) per document, all documents at once, is asked. :func:`yours_if` gives the cells below the
student's piece once it passed, else mlnn's stand-in.
"""

import functools
import types
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from scipy.stats import chisquare

from mlnn.course.grading import (NO_ANSWER, Mistake, NotYet, StudentError, as_array, call,
                                 expect_class, expect_items, grade, judge, label_rows,
                                 make_grader, pristine, run, same, variant, within)
from mlnn.course.pairwise import PWE_MISTAKES, pwe_reference
from mlnn.course.rules import apply_rule, rule_problem
from mlnn.nn.activations import get_activation
from mlnn.nn.losses import CrossEntropy, PairwiseExponential
from mlnn.nn.network import Network
from mlnn.nn.optimizers import AdaGrad as MlnnAdaGrad

# -- one piece judged on its own --------------------------------------------------------------

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

# -- the guards ----------------------------------------------------------------------------------

class Refused(Exception):
    """Raised inside a student's function that does what its exercise rules out (the hint)."""


GUARD = {"armed": False, "D": None}

DENSE_HINT = ("your function made the sparse X dense; products with X and Xᵀ work on the sparse "
              "matrix directly, at a cost proportional to its nonzeros")
FULL_HINT = ("your function forms the full D × F product Xᵀ δ1 (one row per feature of the "
             "vocabulary); restrict Xᵀ to the features present in the minibatch first")
PAIRS_HINT = ("your δ2 does work for every (relevant, irrelevant) pair: the factorised form needs "
              "only two sums over the labels of each document, O(L) per document")
LOOP_HINT = ("your δ2 loops over the documents (or the labels) one at a time: compute it for all "
             "documents at once, with array operations over the whole minibatch")

class Guarded:
    """A sparse matrix that, while a student's function runs, refuses to become dense and to
    give a product with one dense row per feature (the full D × F gradient)."""

    def toarray(self, *args, **kwargs):           # todense() calls it too
        if GUARD["armed"]:
            raise Refused(DENSE_HINT)
        return super().toarray(*args, **kwargs)

    def _matmul_dispatch(self, other):
        result = super()._matmul_dispatch(other)
        if (GUARD["armed"] and GUARD["D"] and np.ndim(result) == 2 and not sp.issparse(result)
                and result.shape[0] == GUARD["D"]):
            raise Refused(FULL_HINT)
        return result


class GuardedCSC(Guarded, sp.csc_matrix):
    def transpose(self, *args, **kwargs):
        return GuardedCSR(super().transpose(*args, **kwargs))


class GuardedCSR(Guarded, sp.csr_matrix):
    def transpose(self, *args, **kwargs):
        return GuardedCSC(super().transpose(*args, **kwargs))


def run_guarded(function, *named, name="function", measure=True):
    """:func:`~mlnn.course.grading.run` with the guards armed; what they refuse is the hint. A
    minibatch X lacking some of the D features may not give a product with D rows. On a wide
    case (D = :data:`WIDE`) the memory the function allocates is the judge, whatever classes X
    goes through: n × D entries is X made dense (n ≥ 16 there), D × F the full product (n = 2)."""
    X = next((value for _, value in named if sp.issparse(value)), None)
    D = X.shape[1] if X is not None and np.unique(X.indices).size < X.shape[1] else None

    def armed(*args):
        GUARD.update(armed=True, D=D)
        try:
            return function(*args)
        finally:
            GUARD.update(armed=False, D=None)
    try:
        if measure and X is not None and X.shape[1] >= WIDE:
            within(armed, *named, name=name, memory=WIDE_ROWS * X.shape[1] * 8,
                   hint=DENSE_HINT if X.shape[0] >= 16 else FULL_HINT)
        return run(armed, *named, name=name)
    except StudentError as error:
        if isinstance(error.error, Refused):
            raise NotYet(str(error.error)) from None
        raise


# -- random minibatches --------------------------------------------------------------------------

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
        rng = np.random.default_rng([seed, attempt])
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


# -- the forward pass ----------------------------------------------------------------------------

def _forward(X, W1, b1, W2, b2, f_o, hidden=lambda z1: np.maximum(z1, 0), z2_from_z1=False,
             no_b1=False, no_b2=False, output=None, z1_is_h=False, clip=np.inf):
    """(z1, h, z2, o) of Eq. 2, right or with one mistake."""
    z1 = sp.csr_matrix(X) @ W1 + (0 if no_b1 else b1)
    h = hidden(z1)
    z2 = np.clip((z1 if z2_from_z1 else h) @ W2 + (0 if no_b2 else b2), -clip, clip)
    return (h if z1_is_h else z1), h, z2, (output or f_o)(z2)


FORWARD_MISTAKES = [
    Mistake("z1 is missing the bias b1", variant(_forward, no_b1=True)),
    Mistake("z2 is missing the bias b2", variant(_forward, no_b2=True)),
    Mistake("h is z1 itself: the hidden units apply ReLU", variant(_forward, hidden=lambda z: z)),
    Mistake("the hidden units are ReLU, max(0, z1), not tanh", variant(_forward, hidden=np.tanh)),
    Mistake("the hidden units are ReLU, max(0, z1), not the sigmoid",
            variant(_forward, hidden=expit)),
    Mistake("z2 is computed from z1; it takes the hidden units h = ReLU(z1)",
            variant(_forward, z2_from_z1=True)),
    Mistake("o is z2 itself: apply the output activation f_o you are given",
            variant(_forward, output=lambda z: z)),
    Mistake("you applied the sigmoid whatever f_o is; apply the f_o given",
            variant(_forward, output=expit)),
    Mistake("you applied tanh whatever f_o is; apply the f_o given",
            variant(_forward, output=np.tanh)),
    Mistake("z1 was overwritten by ReLU: keep z1 and h = ReLU(z1) apart",
            variant(_forward, z1_is_h=True)),
    Mistake("z2 is clipped: return z2 = h W2 + b2 however large it is; the output activation "
            "takes large values as they are", variant(_forward, clip=30.0))]


def _forward_cases():
    """``forward(X, W1, b1, W2, b2, f_o)`` → (z1, h, z2, o): z1 = X W1 + b1, h = ReLU(z1),
    z2 = h W2 + b2, o = f_o(z2) (Eq. 2), X sparse and never made dense."""
    for seed, shape in enumerate(SHAPES + [(5, 12, 4, 6, np.float64)] + WIDE_SHAPES[:1]):
        for f_o, output in ((expit, "sigmoid"), (np.tanh, "tanh"))[:2 if seed < 7 else 1]:
            case = network_case(10 + seed, *shape, output=output)
            saturated = seed == len(SHAPES)
            if saturated:                           # |z2| from 31 to 60: saturated outputs
                b2 = case.params["b2"]
                b2[:] = np.sign(b2 + 1e-12) * np.linspace(31, 60, b2.size)
            yield (f"for {shape_words(shape)} ({np.dtype(shape[4])}, {output} outputs"
                   f"{', |z2| > 30' if saturated else ''})",
                   [("X", case.X), *case.params.items(), ("f_o", f_o)])


def _mlnn_forward(X, W1, b1, W2, b2, f_o=expit):
    output = "sigmoid" if f_o is expit else "tanh"
    cache = Network(W1, b1, W2, b2, "relu", output).forward(sp.csr_matrix(X))
    return cache.z1, cache.h, cache.z2, cache.o


check_forward = piece(make_grader("check_forward", "the sparse forward pass", _mlnn_forward,
                               _forward_cases, FORWARD_MISTAKES,
                               expect=expect_items(("z1", "h", "z2", "o")), runner=run_guarded,
                               name="forward"))


# -- the output deltas ---------------------------------------------------------------------------

def delta_cases(output, seed):
    """(z2, o, Y) minibatches: n = 1 and n > 1, excluded documents, float32, and saturated
    outputs (|z2| > 30)."""
    activation = expit if output == "sigmoid" else np.tanh
    for number, (n, _, _, L, dtype) in enumerate(SHAPES + [(4, 0, 0, 6, np.float64)]):
        rng = np.random.default_rng([seed, number])
        z2 = rng.normal(scale=1.5, size=(n, L)).astype(dtype)
        saturated, Y = number == len(SHAPES), labels(rng, n, L, dtype)
        if saturated:                       # |z2| from 30 to 45, o = 1 exactly beyond 36.7
            z2 = np.where(Y > 0, -1, 1) * rng.choice([-1, 1, 1], size=(n, L)) * rng.uniform(
                30, 45, size=(n, L))
        o = activation(z2)
        yield (f"δ2 for n = {n}, L = {L} ({np.dtype(dtype)}"
               f"{', saturated outputs' if saturated else ''})", [("z2", z2), ("o", o), ("Y", Y)])


def _ce(z2, o, Y):
    return CrossEntropy().delta(z2, o, Y)


CE_MISTAKES = [
    Mistake("the sign is flipped: δ2 is positive where o is above y",
            lambda z2, o, Y: -_ce(z2, o, Y)),
    Mistake("δ2 is per document (row i is ∂J_i/∂z2_i): no 1/n here, the mean's 1/n comes in the "
            "parameter gradients", lambda z2, o, Y: _ce(z2, o, Y) / len(z2)),
    Mistake("the sigmoid's derivative o(1 − o) already cancelled against ∂J/∂o: do not multiply "
            "by it again", lambda z2, o, Y: _ce(z2, o, Y) * o * (1 - o)),
    Mistake("that is ∂J/∂o; δ2 = ∂J/∂z2 is ∂J/∂o times o(1 − o)",
            lambda z2, o, Y: _ce(z2, o, Y) / (o * (1 - o))),
    Mistake("CE's outputs are sigmoids: use the o given, σ(z2), not tanh(z2)",
            lambda z2, o, Y: np.tanh(z2) - Y),
    Mistake("o is clipped: δ2 = o − y holds for every probability, however small, and needs no "
            "clipping", lambda z2, o, Y: np.clip(o, 1e-7, 1 - 1e-7) - Y),
    Mistake("δ2 is set to 0 where the output saturates (o = 0 or 1 exactly): δ2 = o − y holds "
            "there too, and needs no guard", lambda z2, o, Y: np.where(o * (1 - o) > 0, o - Y, 0))]


def _ce_cases():
    """``ce_delta2(z2, o, Y)`` → CE's δ2 = ∂J_i/∂z2 = o − y through sigmoid outputs (Eq. 6)."""
    return delta_cases("sigmoid", 20)


check_ce_delta2 = piece(make_grader("check_ce_delta2", "CE's δ2", _ce, _ce_cases, CE_MISTAKES,
                                 name="ce_delta2"))


def _expect_pwe(answer, expected, what, wrongs, inputs):
    """An excluded document's δ2 row is 0; then the values, a known mistake named."""
    array = as_array(answer, what)
    if array.shape == expected.shape:
        rows = array[PairwiseExponential().excluded(np.asarray(inputs["Y"]))].astype(float)
        if not np.all(np.isfinite(rows)) or np.any(rows != 0):
            raise NotYet("a document with no relevant label, or with every label relevant, has "
                         "no pair: PWE excludes it and its δ2 row must be 0 (no division by zero)")
    judge(answer, expected, what, wrongs)


def _pwe_batch_cases():
    """``pwe_delta2_pairs(z2, o, Y)`` → PWE's δ2 (Eq. 10, Sec. 3.4) through tanh outputs."""
    return delta_cases("tanh", 30)


def _large_pwe_cases():
    """``pwe_delta2(z2, o, Y)`` → PWE's δ2 in O(L) per document, all documents at once; also on
    2 documents of 1,500 labels, where no array of all pairs may be formed and no loop may run
    over them, and on 3,000 documents of 4 labels, where no loop may run over the documents."""
    yield from _pwe_batch_cases()
    rng = np.random.default_rng(31)
    for n, L in ((2, 1500), (3000, 4)):
        z2 = rng.normal(size=(n, L))
        yield (f"δ2 for n = {n}, L = {L}",
               [("z2", z2), ("o", np.tanh(z2)), ("Y", labels(rng, n, L))])


#: Python lines a vectorised δ2 stays under on the large cases (NumPy's own included).
PWE_LINES = 2500


def run_linear(function, *named, name="function"):
    """:func:`~mlnn.course.grading.run`, the work of a large case bounded, whatever form the
    code takes: O(L) memory per document and no Python loop over the pairs (many labels), no
    loop over the documents (many documents)."""
    n, L = np.shape(named[1][1])
    if L >= 1000:
        within(function, *named, name=name, memory=64 * n * L * 8, lines=50 * L,
               hint=PAIRS_HINT)
    elif n >= 1000:
        within(function, *named, name=name, lines=PWE_LINES, hint=LOOP_HINT)
    return run(function, *named, name=name)


check_pwe_delta2_pairs = piece(make_grader("check_pwe_delta2_pairs", "PWE's δ2 by the pair sum",
                                        pwe_reference, _pwe_batch_cases, PWE_MISTAKES,
                                        expect=_expect_pwe, name="pwe_delta2_pairs"))
check_pwe_delta2 = piece(make_grader("check_pwe_delta2", "PWE's δ2 factorised", pwe_reference,
                                  _large_pwe_cases, PWE_MISTAKES, expect=_expect_pwe,
                                  runner=run_linear, name="pwe_delta2"))


# -- backpropagation -----------------------------------------------------------------------------

def _delta1(d2, W2, z1, derivative=lambda z1: z1 > 0, transposed=True):
    return (d2 @ (W2.T if transposed else W2)) * derivative(z1)


RELU_DELTA1_MISTAKES = [
    Mistake("δ1 is missing the factor ReLU'(z1)", variant(_delta1, derivative=lambda z: 1)),
    Mistake("ReLU'(z1) is 1 where z1 > 0 and 0 where z1 < 0; yours is the other way round",
            variant(_delta1, derivative=lambda z: z < 0)),
    Mistake("at z1 = 0 exactly (a document without words, b1 = 0) ReLU'(0) is taken as 0",
            variant(_delta1, derivative=lambda z: z >= 0)),
    Mistake("multiplied by h = ReLU(z1); δ1 needs its derivative ReLU'(z1)",
            variant(_delta1, derivative=lambda z: np.maximum(z, 0))),
    Mistake("ReLU'(z1) is 0 where z1 < 0, not −1", variant(_delta1, derivative=np.sign)),
    Mistake("ReLU'(z1) is 1 for every z1 > 0, however small: compare z1 with 0 itself, not "
            "with a tolerance", variant(_delta1, derivative=lambda z: z > 1e-6)),
    Mistake("the sign is flipped", lambda d2, W2, z1: -_delta1(d2, W2, z1)),
    Mistake("δ2 (n × L) multiplies W2ᵀ (L × F), the transpose of W2 (F × L)",
            variant(_delta1, transposed=False)),
    Mistake("δ1 is per document: no 1/n here", lambda d2, W2, z1: _delta1(d2, W2, z1) / len(z1))]


def _relu_delta1_cases():
    """``delta1_relu(delta2, W2, z1)`` → δ1 = (δ2 W2ᵀ) ∘ ReLU'(z1), ReLU'(0) taken as 0."""
    for seed, shape in enumerate(SHAPES):
        kink = seed % 2 == 1
        case, cache, grads = backward_case(40 + seed, shape, kink)
        z1 = cache.z1.copy()
        if seed in (0, 2):                          # some z1 within 1e-7 of the kink
            near = np.random.default_rng(seed).random(z1.shape) < 0.3
            z1[near] = np.sign(z1[near]) * np.logspace(-9, -7, int(near.sum()))
        yield (f"δ1 for n = {shape[0]}, F = {shape[2]}, L = {shape[3]}"
               + (", some z1 exactly 0" if kink else "")
               + (", some z1 within 1e-7 of 0" if seed in (0, 2) else ""),
               [("delta2", grads.delta2), ("W2", case.params["W2"]), ("z1", z1)])


def _mlnn_delta1(d2, W2, z1):
    return (d2 @ W2.T) * get_activation("relu").grad(z1, np.maximum(z1, 0))


check_delta1_relu = piece(make_grader("check_delta1_relu", "δ1 through ReLU", _mlnn_delta1,
                                   _relu_delta1_cases, RELU_DELTA1_MISTAKES, name="delta1_relu"))


def _grad_W1(X, d1, scale=1.0):
    """∂J/∂W1 = Xᵀ δ1 / n on the rows of the words present, as (rows, values)."""
    rows = np.unique(X.indices)
    return rows, np.asarray(X[:, rows].T @ d1) / X.shape[0] * scale


def _expect_rows(answer, expected, case, wrongs, inputs, what="∂J/∂W1"):
    """A (rows, values) pair: the sorted features present in X, and their gradient rows."""
    if answer is None:
        raise NotYet(NO_ANSWER)
    if type(answer) is not tuple or len(answer) != 2:
        raise NotYet(f"{what} must be a tuple (rows, values): the sorted indices of the words "
                     "present in the minibatch, and the k × F block of their gradient rows")
    rows, (right, values) = as_array(answer[0], "rows"), expected
    D, k = inputs["X"].shape[1], len(right)
    if rows.ndim != 1 or rows.dtype.kind not in "iu":
        raise NotYet("rows must be a 1-d array of integer feature indices")
    if len(rows) == D and k < D:
        raise NotYet(f"{what} holds all D = {D} rows; store only the k = {k} rows of the words "
                     "present in the minibatch (every other row is zero)")
    if set(rows.tolist()) != set(right.tolist()):
        raise NotYet("rows must be exactly the features (columns of X) that occur in the "
                     f"minibatch: {k} of them here, you gave {len(rows)}")
    if len(rows) != k or np.any(np.diff(rows) <= 0):
        raise NotYet("rows must be sorted, each feature once")
    judge(answer[1], values, f"the values of {what}", [(w[1], h) for w, h in wrongs])


W1_MISTAKES = [
    Mistake("∂J/∂W1 is n times too large: J is the mean over the n documents",
            lambda X, d1: _grad_W1(X, d1, X.shape[0])),
    Mistake("∂J/∂W1 is divided by n twice", lambda X, d1: _grad_W1(X, d1, 1 / X.shape[0]))]


def _grad_W1_cases():
    """``grad_W1_rows(X, delta1)`` → (rows, values): ∂J/∂W1 = Xᵀ δ1 / n on the rows of the words
    present in X, and only those; one minibatch has no word at all."""
    for seed, shape in enumerate(SHAPES + [(3, 8, 3, 4, np.float64)] + WIDE_SHAPES):
        case, cache, grads = backward_case(50 + seed, shape)
        X = case.X
        if seed == len(SHAPES):
            X = GuardedCSR(X.shape, dtype=X.dtype)
        yield f"∂J/∂W1 for {shape_words(shape)}", [("X", X), ("delta1", grads.delta1)]


check_grad_W1_rows = piece(make_grader("check_grad_W1_rows", "the row-sparse ∂J/∂W1", _grad_W1,
                                    _grad_W1_cases, W1_MISTAKES, expect=_expect_rows,
                                    runner=run_guarded, name="grad_W1_rows"))


def _backward(X, z1, h, W2, d2):
    """The gradients of the mean loss with ReLU hidden units (Sec. 3.2), ∂J/∂W1 row-sparse."""
    n, d1 = len(z1), _mlnn_delta1(d2, W2, z1)
    return {"W1": _grad_W1(X, d1), "b1": d1.sum(axis=0) / n, "W2": h.T @ d2 / n,
            "b2": d2.sum(axis=0) / n}


def _backward_with(name, wrong):
    """The gradients with ∂J/∂``name`` replaced by ``wrong(X, z1, h, W2, δ2, δ1, n)``."""
    def answer(X, z1, h, W2, d2):
        return {**_backward(X, z1, h, W2, d2),
                name: wrong(X, z1, h, W2, d2, _mlnn_delta1(d2, W2, z1), len(z1))}
    return answer


BACKWARD_MISTAKES = [
    Mistake(f"∂J/∂{name} is n times too large: J is the mean over the n documents",
            _backward_with(name, lambda X, z1, h, W2, d2, d1, n, name=name:
                           _backward(X, z1, h, W2, d2)[name] * n)) for name in ("b1", "W2", "b2")
] + [
    Mistake("∂J/∂W2 takes the hidden units h = ReLU(z1), not z1",
            _backward_with("W2", lambda X, z1, h, W2, d2, d1, n: z1.T @ d2 / n)),
    Mistake("∂J/∂b1 is the mean of δ1 over the documents, not of δ2",
            _backward_with("b1", lambda X, z1, h, W2, d2, d1, n: d2.mean(axis=0))),
    Mistake("∂J/∂b2 is the mean of δ2 over the documents, not of δ1",
            _backward_with("b2", lambda X, z1, h, W2, d2, d1, n: d1.mean(axis=0)))]

GRADIENTS = ("b1", "W2", "b2")


def _expect_backward(answer, expected, what, wrongs, inputs):
    """A dict of the four gradients: W1 as (rows, values), the others arrays."""
    if answer is None:
        raise NotYet(NO_ANSWER)
    if not isinstance(answer, dict) or set(answer) != {"W1", *GRADIENTS}:
        raise NotYet("return a dict with the keys W1, b1, W2, b2")
    _expect_rows(answer["W1"], expected["W1"], what, (), inputs)
    expect_items(GRADIENTS, label="∂J/∂{}")({k: answer[k] for k in GRADIENTS},
                                            {k: expected[k] for k in GRADIENTS}, what, wrongs)


def _backward_cases():
    """``backward(X, z1, h, W2, delta2)`` → {"W1": (rows, values), "b1", "W2", "b2"}, the
    gradients of the mean loss (Sec. 3.2) with ReLU hidden units."""
    for seed, shape in enumerate(SHAPES + WIDE_SHAPES):
        case, cache, grads = backward_case(60 + seed, shape, kink=seed == 2)
        named = [("X", case.X), ("z1", cache.z1), ("h", cache.h), ("W2", case.params["W2"]),
                 ("delta2", grads.delta2)]
        yield f"for {shape_words(shape)}", named


check_backward = piece(make_grader("check_backward", "backward: ∂J/∂W1 (row-sparse), ∂J/∂b1, "
                                "∂J/∂W2, ∂J/∂b2", _backward, _backward_cases, BACKWARD_MISTAKES,
                                expect=_expect_backward, runner=run_guarded, name="backward"))


# -- AdaGrad -------------------------------------------------------------------------------------

class Reference:
    """mlnn's AdaGrad rule as the notebook's ``AdaGrad(eta0, epsilon)`` with ``step``."""

    def __init__(self, eta0, epsilon=1e-8):
        self.rule, self.states = MlnnAdaGrad(eta0, epsilon=epsilon), {}

    def step(self, params, grads):
        for name in grads:
            self.states.setdefault(name, self.rule.new_state(params[name]))
        apply_rule(self.rule, params, self.states, grads)


def adagrad_with(rule):
    """An ``AdaGrad(eta0, epsilon)`` class whose step applies ``rule(G, g, η0, ε)`` → (new G,
    step) to each parameter (to W1 on the rows given): one mistake of :data:`ADAGRAD_MISTAKES`."""
    class AdaGrad:
        def __init__(self, eta0, epsilon=1e-8):
            self.eta0, self.epsilon, self.G = eta0, epsilon, {}

        def step(self, params, grads):
            for name, g in grads.items():
                rows, g = g if isinstance(g, tuple) else (slice(None), g)
                G = self.G.setdefault(name, np.zeros_like(params[name]))
                G[rows], step = rule(G[rows], g, self.eta0, self.epsilon)
                params[name][rows] -= step
    return AdaGrad


ADAGRAD_MISTAKES = [
    Mistake("the step divides by G + ε; AdaGrad divides by √G + ε", adagrad_with(
        lambda G, g, eta0, eps: (G + g * g, eta0 * g / (G + g * g + eps)))),
    Mistake("ε belongs outside the square root: √G + ε, not √(G + ε)", adagrad_with(
        lambda G, g, eta0, eps: (G + g * g, eta0 * g / np.sqrt(G + g * g + eps)))),
    Mistake("G is reset at every step; it must accumulate g² over all the steps so far",
            adagrad_with(lambda G, g, eta0, eps: (g * g, eta0 * g / (np.abs(g) + eps)))),
    Mistake("G must include the current gradient: add g² to G before taking the step",
            adagrad_with(lambda G, g, eta0, eps: (G + g * g, eta0 * g / (np.sqrt(G) + eps)))),
    Mistake("the step is η0 g; AdaGrad divides it by √G + ε, per parameter entry",
            adagrad_with(lambda G, g, eta0, eps: (G + g * g, eta0 * g))),
    Mistake("the parameters move uphill: subtract the step", adagrad_with(
        lambda G, g, eta0, eps: (G + g * g, -eta0 * g / (np.sqrt(G + g * g) + eps))))]


class WatchedRows(np.ndarray):
    """W1 recording in ``written`` the rows a step writes: by item assignment, by a ufunc
    writing into it, or by ``ufunc.at``."""

    def __array_finalize__(self, obj):
        self.written = None                  # views and copies record nothing

    def record(self, key):
        if self.written is not None:
            probe = np.zeros(self.shape, dtype=bool)
            probe[key] = True
            self.written |= probe.reshape(len(probe), -1).any(axis=1)

    def __setitem__(self, key, value):
        self.record(key)
        super().__setitem__(key, value)

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if method == "at" and isinstance(inputs[0], WatchedRows):
            inputs[0].record(inputs[1])
        for array in out or ():
            if isinstance(array, WatchedRows):
                array.record(Ellipsis)
        plain = [x.view(np.ndarray) if isinstance(x, WatchedRows) else x for x in inputs]
        if out is not None:
            kwargs["out"] = tuple(x.view(np.ndarray) if isinstance(x, WatchedRows) else x
                                  for x in out)
        result = getattr(ufunc, method)(*plain, **kwargs)
        return (out[0] if len(out) == 1 else out) if out is not None else result


def take_steps(optimizer, params, steps):
    """``optimizer.step`` on each gradient dict: the parameters updated in place (W1 on the rows
    given only), the gradients left unchanged."""
    arrays = dict(params)
    for grads in steps:
        given = pristine(grads)
        call(optimizer.step, params, given, name="AdaGrad.step")
        if not same(grads, given):
            raise NotYet("step modified the gradients it was given; leave them unchanged")
        W1, rows = params.get("W1"), grads["W1"][0]
        if isinstance(W1, WatchedRows) and W1.written is not None:
            extra = W1.written.copy()
            extra[rows], W1.written[:] = False, False
            if extra.any() and len(rows) + extra.sum() == len(W1):
                raise NotYet(f"step wrote all {len(W1)} rows of W1; only the rows listed in rows "
                             "have a gradient and may be touched (k × F work per step instead "
                             "of D × F)")
            if extra.any():
                raise NotYet("step wrote rows of W1 that have no gradient in this step; W1's "
                             "gradient (rows, values) applies to the rows listed in rows only")
        for name, array in arrays.items():
            if params.get(name) is not array:
                raise NotYet(f"step replaced params[{name!r}] by a new array; update it in place "
                             "(on W1's rows only), otherwise every step copies all of W1")
    return params


def state_of(optimizer):
    """Copies of the data attributes an optimizer reaches (its own and its class's)."""
    return {name: pristine(getattr(optimizer, name)) for name in dir(optimizer)
            if not name.startswith("__") and not callable(getattr(optimizer, name))}


def _drive_adagrad(AdaGrad, *named, name):
    """The parameters after the steps of ``AdaGrad(eta0, epsilon)``, once a step of another
    optimizer has left its state untouched."""
    eta0, epsilon, start, steps = (value for _, value in named)
    expect_class(AdaGrad, "AdaGrad", {"step": "step(params, grads)"})
    optimizer = call(AdaGrad, eta0, epsilon, name=name)
    other, before = call(AdaGrad, 0.5, 0.01, name=name), state_of(optimizer)
    take_steps(other, pristine(start), steps[:1])
    if not same(before, state_of(optimizer)):
        raise NotYet("two AdaGrad objects used side by side interfere: each must keep its own G, "
                     "made in __init__, not shared between objects")
    params = pristine(start)
    params["W1"] = start["W1"].copy().view(WatchedRows)
    params["W1"].written = np.zeros(len(start["W1"]), dtype=bool)
    take_steps(optimizer, params, steps)
    if all(np.array_equal(params[name], start[name]) for name in start):
        raise NotYet(NO_ANSWER)
    return params


def _adagrad_cases():
    """``AdaGrad(eta0, epsilon)`` with ``step(params, grads)``: G ← G + g²,
    θ ← θ − η0 g / (√G + ε) per parameter (Sec. 3.5), W1's gradient given as (rows, values);
    η0 from 0.03 to 1, ε from 1e-8 to 0.5, a step without W1 rows, float32."""
    for number, (eta0, epsilon, (D, F, L), dtype) in enumerate([
            (0.1, 1e-8, (7, 3, 4), np.float64), (0.03, 0.5, (5, 4, 4), np.float64),
            (1.0, 1e-3, (9, 2, 5), np.float64), (0.3, 0.1, (6, 3, 3), np.float32)]):
        start, steps = rule_problem(np.random.default_rng([70, number]), D, F, L, dtype, steps=5)
        yield (f"after 5 steps with η0 = {eta0}, ε = {epsilon:g} ({np.dtype(dtype)})",
               [("eta0", eta0), ("epsilon", epsilon), ("params", start), ("steps", steps)])


check_adagrad = piece(make_grader("check_adagrad", "AdaGrad with its state", Reference,
                               _adagrad_cases, ADAGRAD_MISTAKES, runner=_drive_adagrad,
                               name="AdaGrad(eta0, epsilon)",
                               expect=expect_items(("b1", "b2", "W2", "W1"))))


# -- one update and the training loop ------------------------------------------------------------

class Recorder:
    """An optimizer that only records what ``step`` was given."""

    def __init__(self):
        self.calls = []

    def step(self, params, grads):
        self.calls.append((params, pristine(grads)))


@piece
def check_update(update):
    """``update(params, optimizer, X_batch, Y_batch)``: forward, CE's δ2, backward and one
    ``optimizer.step(params, grads)`` with the gradients of the mean CE loss."""
    def attempt():
        for seed, shape in enumerate(SHAPES[:5] + WIDE_SHAPES[:1]):
            case, cache, grads = backward_case(80 + seed, shape)
            if shape in WIDE_SHAPES:                # the work done, on objects of its own
                run_guarded(lambda X_batch, Y_batch: update(
                    pristine(case.params), Recorder(), X_batch, Y_batch),
                    ("X_batch", case.X), ("Y_batch", case.Y), name="update")
            params, optimizer = pristine(case.params), Recorder()
            before = pristine(params)
            run_guarded(lambda X_batch, Y_batch: update(params, optimizer, X_batch, Y_batch),
                        ("X_batch", case.X), ("Y_batch", case.Y), name="update", measure=False)
            if not same(before, params):
                raise NotYet("update changed the parameters itself, or through another "
                             "optimizer than the one it was given; only optimizer.step may")
            if not optimizer.calls:
                raise NotYet(NO_ANSWER)
            if len(optimizer.calls) > 1:
                raise NotYet(f"optimizer.step was called {len(optimizer.calls)} times; one "
                             "update is one step")
            if optimizer.calls[0][0] is not params:
                raise NotYet("hand optimizer.step the params dict you were given")
            named = dict(X=case.X, z1=cache.z1, h=cache.h, W2=case.params["W2"],
                         delta2=grads.delta2)
            try:
                _expect_backward(optimizer.calls[0][1], _backward(*named.values()), "", (), named)
            except NotYet as hint:
                raise NotYet(f"the gradients handed to optimizer.step: {hint} (forward, "
                             "ce_delta2 and backward each have a grader above)") from None
        return "5 random minibatches against mlnn's forward, CE δ2 and backward"
    return bool(grade("one minibatch update", attempt))


#: Label bits of the documents :func:`record_training` numbers (up to 2¹² − 1 documents).
BITS = 12


def record_training(train, n, batch_size, epochs, seed):
    """What ``train`` hands to ``update``, for X (n × 1) holding each document's number 1 … n
    and Y its bits: a list of (params and optimizer right, X's numbers, Y's numbers)."""
    ids = np.arange(1, n + 1)
    X = GuardedCSR((ids.astype(float), np.zeros(n, np.int32), np.arange(n + 1)), shape=(n, 1))
    Y = ((ids[:, None] >> np.arange(BITS)) & 1).astype(np.float64)
    recorder, record = Recorder(), []
    given = {"W1": np.zeros((1, 1)), "b1": np.zeros(1), "W2": np.zeros((1, BITS)),
             "b2": np.zeros(BITS)}

    def update(params, optimizer, X_batch, Y_batch):      # the names the exercise documents
        x = np.asarray(X_batch.tocsr().data, int) if sp.issparse(X_batch) else None
        y = None
        if isinstance(Y_batch, np.ndarray) and Y_batch.ndim == 2 and Y_batch.shape[1] == BITS:
            y = (np.asarray(Y_batch, float) @ (2.0 ** np.arange(BITS))).astype(int)
        record.append((params is given and optimizer is recorder, x, y))
    run_guarded(lambda X, Y: train(given, recorder, X, Y, epochs, batch_size,
                                   np.random.default_rng(seed), update),
                ("X", X), ("Y", Y), name="train")
    if recorder.calls:
        raise NotYet("train must hand each minibatch to the update it is given as its argument, "
                     "not to another function")
    return record


def orders(record):
    return [x.tolist() for _, x, _ in record]


def expect_epochs(record, n, batch_size, epochs):
    """The minibatches of each epoch: sparse, matching X and Y, sizes, every document once."""
    per_epoch = -(-n // batch_size)
    if not record:
        raise NotYet(NO_ANSWER)
    if not all(right for right, _, _ in record):
        raise NotYet("hand update the params and the optimizer you were given")
    if any(x is None for _, x, _ in record):
        raise NotYet("X_batch must stay a sparse matrix: take its rows from X, do not densify")
    if any(y is None or not np.array_equal(x, y) for _, x, y in record):
        raise NotYet("X_batch and Y_batch must hold the same documents, in the same order")
    if len(record) != epochs * per_epoch:
        if epochs > 1 and len(record) == per_epoch:
            raise NotYet(f"one epoch only: train for the {epochs} epochs asked")
        raise NotYet(f"update was called {len(record)} times; {epochs} epochs of {n} documents "
                     f"in minibatches of {batch_size} make {epochs * per_epoch}")
    sizes = [batch_size] * (per_epoch - 1) + [n - batch_size * (per_epoch - 1)]
    epoch_orders = []
    for epoch in range(epochs):
        batches = [x for _, x, _ in record[epoch * per_epoch:(epoch + 1) * per_epoch]]
        if [len(b) for b in batches] != sizes:
            raise NotYet(f"minibatches hold batch_size = {batch_size} documents each (the last "
                         "one of an epoch fewer)")
        epoch_orders.append(np.concatenate(batches).tolist())
        if sorted(epoch_orders[-1]) != list(range(1, n + 1)):
            raise NotYet("an epoch must visit every document exactly once")
    return epoch_orders


@piece
def check_train(train):
    """``train(params, optimizer, X, Y, epochs, batch_size, rng, update)``: ``epochs`` passes,
    each over every document once in a new random order drawn from ``rng``, in minibatches of
    ``batch_size`` (the last one of an epoch smaller), each handed to
    ``update(params, optimizer, X_batch, Y_batch)`` with X_batch still sparse."""
    def attempt():
        cases = [(10, 3, 2), (12, 12, 3), (23, 4, 3), (5, 8, 2), (1, 2, 2), (17, 5, 1)]
        for number, (n, batch_size, epochs) in enumerate(cases):
            record = record_training(train, n, batch_size, epochs, seed=90 + number)
            epoch_orders = expect_epochs(record, n, batch_size, epochs)
            if orders(record_training(train, n, batch_size, epochs, 90 + number)) != orders(
                    record):
                raise NotYet("the order must come from the generator rng you are given: the "
                             "same rng seed must give the same minibatches")
            if n < 10:
                continue
            if epoch_orders[0] == list(range(1, n + 1)):
                raise NotYet("the documents come in their stored order: shuffle them at the "
                             "start of every epoch")
            if epochs > 1 and all(order == epoch_orders[0] for order in epoch_orders):
                raise NotYet("every epoch has the same order: draw a new random order at the "
                             "start of each epoch")
            if orders(record_training(train, n, batch_size, epochs, 1090 + number)) == orders(
                    record):
                raise NotYet("the order does not depend on the generator rng you are given")
        unordered = expect_unordered(train)
        expect_mixed(train)
        unordered()
        expect_uniform(train)
        return (f"{len(cases)} cases of n, batch size and epochs, 60 epochs of 12 documents for "
                "the minibatches and 4,000 of 4 for the randomness of the order")
    return bool(grade("the shuffled minibatch training loop", attempt))


def expect_mixed(train, n=12, batch_size=4, epochs=60):
    """Any two documents share a minibatch in some epoch (in about 3 of 11 epochs when the
    whole order is shuffled; never, when the order is shuffled only inside fixed minibatches)."""
    together = np.zeros((n + 1, n + 1), dtype=int)
    for _, batch, _ in record_training(train, n, batch_size, epochs, seed=98):
        together[np.ix_(batch, batch)] += 1
    if np.any(together[1:, 1:] == 0):
        raise NotYet("some documents never share a minibatch: the minibatches are fixed and only "
                     "their order or their insides are shuffled; shuffle the order of all the "
                     "documents at the start of each epoch, then cut it into minibatches")


def expect_unordered(train, n=3000, epochs=3):
    """Over epochs of 3,000 documents (one minibatch each), the positions of one epoch are
    uncorrelated with those of the previous one (r ≈ 0 ± 1/√n): an order reversed or shifted
    from the last one is refused at once. Returns the second check, to run later: a shuffled
    order ascends at about half its steps, (n − 1)/2 ± √((n + 1)/12), which random keys with
    ties (keeping the stored order among them) do not."""
    record = record_training(train, n, n, epochs, seed=97)
    orders_ = [np.asarray(x) for _, x, _ in record]
    for before, after in zip(orders_, orders_[1:]):
        positions = [np.argsort(order) for order in (before, after)]
        if abs(np.corrcoef(*positions)[0, 1]) * np.sqrt(n) > 6:
            raise NotYet("each epoch's order follows from the previous one's (reversed or "
                         "shifted): draw a new random order at the start of each epoch")

    def ascending():
        for order in orders_:
            ascents = np.count_nonzero(np.diff(order) > 0)
            if abs(ascents - (n - 1) / 2) > 6 * np.sqrt((n + 1) / 12):
                raise NotYet(f"in an epoch of {n} documents {ascents} neighbours of the order "
                             f"are in their stored order, about {(n - 1) // 2} in a random "
                             "order: ties among your random keys keep the stored order; "
                             "shuffle with a permutation of all the documents")
    return ascending


def expect_uniform(train, epochs=4000):
    """Over many epochs of 4 documents every one of the 24 orders is about equally frequent
    (4,000 epochs: a χ² test that sees the classic biased shuffle, which swaps each position
    with any position, with power above 0.999 at p = 1e-6)."""
    found = [tuple(order) for order in orders(record_training(train, 4, 4, epochs, seed=99))]
    counts = [found.count(order) for order in sorted(set(found))]
    if chisquare(counts + [0] * (24 - len(counts))).pvalue < 1e-6:
        raise NotYet("the orders are not uniformly random: every order of the documents should "
                     "be equally likely (a shuffle that swaps each position with any position, "
                     "not only with itself or a later one, favours some orders)")


# -- mlnn's pieces standing in for the student's ---------------------------------------------------

def _update(params, optimizer, X_batch, Y_batch):
    """One minibatch update: forward, CE's δ2, backward and one ``optimizer.step``."""
    z1, h, z2, o = _mlnn_forward(X_batch, **params)
    optimizer.step(params, _backward(X_batch, z1, h, params["W2"], _ce(z2, o, Y_batch)))


def _train(params, optimizer, X, Y, epochs, batch_size, rng, update=_update):
    """``epochs`` passes, each in a new random order from ``rng``, in minibatches to ``update``."""
    for _ in range(epochs):
        order = rng.permutation(X.shape[0])
        for start in range(0, X.shape[0], batch_size):
            batch = order[start:start + batch_size]
            update(params, optimizer, X[batch], Y[batch])


#: mlnn's own piece of each name, with the notebook's signature: what stands in for a piece of
#: the student's while another piece is graded, and in the cells below until the piece passes.
STAND_INS = {"forward": _mlnn_forward, "ce_delta2": _ce, "pwe_delta2_pairs": pwe_reference,
             "pwe_delta2": pwe_reference, "delta1_relu": _mlnn_delta1,
             "grad_W1_rows": _grad_W1, "backward": _backward, "AdaGrad": Reference,
             "update": _update, "train": _train}


def yours_if(report, answer, name):
    """``answer`` if its grader passed, else mlnn's own piece ``name``; says which one the cells
    below use."""
    if report:
        print(f"→ the cells below use your {name}")
        return answer
    print(f"→ the cells below use mlnn's own {name} until yours passes")
    return STAND_INS[name]
