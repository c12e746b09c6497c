r"""Graders for notebook 01b, where the student builds the paper's network from zero.

The network is that of Sec. 3.2 (Eq. 2) with ReLU hidden units, CE (Eq. 6) or PWE (Eq. 3,
Sec. 3.4) at the output, and AdaGrad (Sec. 3.5). The student writes each piece in plain
NumPy/SciPy; each ``check_*`` here tries it on many random cases — shapes n, D, F, L, sparsity,
documents without words, label sets with |y| ≠ |ȳ| and documents PWE excludes, float64 and float32,
several η0 and ε — against mlnn's own code (:mod:`mlnn.nn.network`, :mod:`mlnn.nn.losses`,
:mod:`mlnn.nn.optimizers`), whose gradients are first checked against central differences. It
prints one line (PASS, or NOT YET with a hint that says what is wrong and never the code) and
returns a :class:`~mlnn.course.grading.Report`, true when it passed.

=====================  ===========================================================
grader                 the student's piece
=====================  ===========================================================
check_forward          ``forward(X, W1, b1, W2, b2, f_o)`` → (z1, h, z2, o)
check_ce_delta2        ``ce_delta2(z2, o, Y)`` → δ2 = o − y
check_pwe_delta2_pairs ``pwe_delta2_pairs(z2, o, Y)`` → PWE's δ2 by the pair sum
check_pwe_delta2       ``pwe_delta2(z2, o, Y)`` → the same, factorised
check_delta1_relu      ``delta1_relu(delta2, W2, z1)`` → δ1 = (δ2 W2ᵀ) ∘ ReLU'(z1)
check_grad_W1_rows     ``grad_W1_rows(X, delta1)`` → (rows, Xᵀ δ1 / n on those rows)
check_backward         ``backward(X, z1, h, W2, delta2)`` → {"W1": (rows, values), "b1", …}
check_adagrad          ``AdaGrad(eta0, epsilon)`` with ``step(params, grads)``
check_update           ``update(params, optimizer, X_batch, Y_batch)``: one minibatch update
check_train            ``train(params, optimizer, X, Y, epochs, batch_size, rng, update)``
=====================  ===========================================================

:func:`load_worked_solution` and :func:`yours_if` let the notebook run top to bottom before the
student has written anything: a piece that has not passed its grader is replaced, for the cells
below it, by the worked solution in ``notebooks/solutions/ex01b_build_it_from_zero.py``.
"""

import importlib.util
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from scipy.stats import chisquare

from mlnn.course.grading import (NotYet, StudentError, as_array, close, expect_shape, grade,
                                 pristine, relative_error, run, same)
from mlnn.figures import environment
from mlnn.nn.gradcheck import loss_of_param, numerical_gradient
from mlnn.nn.losses import CrossEntropy, PairwiseExponential
from mlnn.nn.network import Network, RowSparseGradient
from mlnn.nn.optimizers import AdaGrad as ReferenceAdaGrad

#: The worked solution, relative to the project's root.
SOLUTION = Path("notebooks") / "solutions" / "ex01b_build_it_from_zero.py"

#: (n, D, F, L, dtype) of the random cases: F = L (where a missing transpose still runs) and
#: F ≠ L, n = 1, wide and narrow, float32.
SHAPES = [(6, 12, 5, 5, np.float64), (1, 6, 3, 4, np.float64), (4, 9, 4, 3, np.float64),
          (3, 10, 2, 7, np.float64), (9, 30, 6, 2, np.float64), (5, 14, 4, 6, np.float32)]

#: How far mlnn's analytic gradients may be from central differences (else the grader is wrong).
FD_TOLERANCE = 1e-5


def tolerance(dtype):
    """The relative error within which an answer counts as equal to the reference."""
    return 1e-7 if np.dtype(dtype) == np.float64 else 2e-4


# -- inputs --------------------------------------------------------------------------------------

class Densified(Exception):
    """Raised when a graded function turns the sparse input X into a dense matrix."""


_GUARD = {"armed": False}


class Guarded:
    """Refuses ``toarray``/``todense`` while a student's function runs (a sparse-matrix mixin)."""

    def toarray(self, *args, **kwargs):
        if _GUARD["armed"]:
            raise Densified("X was made dense")
        return super().toarray(*args, **kwargs)

    def todense(self, *args, **kwargs):
        if _GUARD["armed"]:
            raise Densified("X was made dense")
        return super().todense(*args, **kwargs)


class GuardedCSC(Guarded, sp.csc_matrix):
    """A guarded CSC matrix: the transpose of a :class:`GuardedCSR`."""

    def transpose(self, *args, **kwargs):
        return GuardedCSR(super().transpose(*args, **kwargs))


class GuardedCSR(Guarded, sp.csr_matrix):
    """A guarded CSR matrix, whose transpose is guarded too."""

    def transpose(self, *args, **kwargs):
        return GuardedCSC(super().transpose(*args, **kwargs))


DENSE_HINT = ("your function made the sparse X dense; products with X and Xᵀ work on the sparse "
              "matrix directly, at a cost proportional to its nonzeros")


def run_guarded(function, *named, name="function"):
    """:func:`~mlnn.course.grading.run` with X's densification turned into a hint."""
    def armed(*args):
        _GUARD["armed"] = True
        try:
            return function(*args)
        finally:
            _GUARD["armed"] = False
    try:
        return run(armed, *named, name=name)
    except StudentError as error:
        if isinstance(error.error, Densified):
            raise NotYet(DENSE_HINT) from None
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
    Y = np.zeros((n, L), dtype=dtype)
    for row, size in zip(Y, rng.integers(1, L, size=n)):
        row[rng.choice(L, size=size, replace=False)] = 1
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


class Ambiguous(NotYet):
    """The answer equals several wrong forms in this case: another case may tell them apart."""


def diagnose(answer, reference, wrong_forms):
    """Raise :class:`NotYet` with the hint of the wrong form the answer equals (and the
    reference does not); :class:`Ambiguous` if it equals several with different hints."""
    hints = [hint for form, hint in wrong_forms
             if form is not None and close(answer, form) and not close(form, reference)]
    if len(set(hints)) > 1:
        raise Ambiguous(hints[0])
    if hints:
        raise NotYet(hints[0])


def each_case(cases, check):
    """``check(*case)`` for every case; a hint that is :class:`Ambiguous` in one case waits for
    a later case to name the mistake, and is given if none does. Returns the number of cases."""
    pending, count = None, 0
    for case in cases:
        try:
            check(*case)
        except Ambiguous as hint:
            pending = pending or hint
        count += 1
    if pending is not None:
        raise NotYet(str(pending))
    return count


def expect_dtype(array, dtype, what):
    """:class:`NotYet` unless ``array`` has exactly ``dtype``."""
    if np.asarray(array).dtype != np.dtype(dtype):
        raise NotYet(f"{what} has dtype {np.asarray(array).dtype}, expected {np.dtype(dtype)} "
                     "(that of its inputs): do not convert")


def expect_values(answer, reference, what, wrong_forms=()):
    """Type, shape, dtype kind, finite values, the named mistakes, then the values and dtype."""
    array = as_array(answer, what)
    if isinstance(answer, np.matrix) or sp.issparse(answer):
        raise NotYet(f"{what} is a {type(answer).__name__}; return a dense numpy.ndarray")
    expect_shape(array, np.shape(reference), what)
    diagnose(array, reference, wrong_forms)
    dtype = np.asarray(reference).dtype
    values = array.astype(np.float64)
    if not np.all(np.isfinite(values)):
        raise NotYet(f"{what} holds NaN or infinite values")
    error = relative_error(values, np.asarray(reference, dtype=np.float64))
    if not error < tolerance(dtype):
        raise NotYet(f"{what} is off (relative error {error:.1e})")
    expect_dtype(array, dtype, what)


# -- the forward pass ----------------------------------------------------------------------------

FORWARD = ("z1", "h", "z2", "o")


def check_forward(forward):
    """``forward(X, W1, b1, W2, b2, f_o)`` → (z1, h, z2, o): z1 = X W1 + b1, h = ReLU(z1),
    z2 = h W2 + b2, o = f_o(z2) (Eq. 2), X sparse and never made dense."""
    def attempt():
        count = 0
        for seed, shape in enumerate(SHAPES):
            for f_o, output in ((expit, "sigmoid"), (np.tanh, "tanh")):
                case = network_case(10 + seed, *shape, output=output)
                reference = case.net.forward(sp.csr_matrix(case.X))
                answer = run_guarded(forward, ("X", case.X), *case.params.items(),
                                     ("f_o", f_o), name="forward")
                expect_forward(answer, reference, case)
                count += 1
        return f"{count} random cases (documents without words, sigmoid and tanh f_o, float32)"
    return grade("the sparse forward pass", attempt)


def expect_forward(answer, reference, case):
    """The four arrays of a forward pass, each with the mistakes that are easy to make."""
    if answer is None:
        raise NotYet("no answer yet (forward: the function returned None)")
    if not isinstance(answer, (tuple, list)) or len(answer) != 4:
        raise NotYet("return the four arrays (z1, h, z2, o), in that order")
    z1, h, z2, o = reference.z1, reference.h, reference.z2, reference.o
    XW1 = sp.csr_matrix(case.X) @ case.params["W1"]
    wrong = {"z1": [(XW1, "z1 is missing the bias b1"),
                    (h, "z1 was overwritten by ReLU: keep z1 and h = ReLU(z1) apart")],
             "h": [(z1, "h is z1 itself: the hidden units apply ReLU"),
                   (np.tanh(z1), "the hidden units are ReLU, max(0, z1), not tanh"),
                   (expit(z1), "the hidden units are ReLU, max(0, z1), not the sigmoid")],
             "z2": [(h @ case.params["W2"], "z2 is missing the bias b2"),
                    (z1 @ case.params["W2"] + case.params["b2"],
                     "z2 is computed from z1; it takes the hidden units h = ReLU(z1)")],
             "o": [(z2, "o is z2 itself: apply the output activation f_o you are given"),
                   (expit(z2), "you applied the sigmoid whatever f_o is; apply the f_o given"),
                   (np.tanh(z2), "you applied tanh whatever f_o is; apply the f_o given")]}
    for name, given, expected in zip(FORWARD, answer, (z1, h, z2, o)):
        expect_values(given, expected, name, wrong[name])


# -- the output deltas ---------------------------------------------------------------------------

def delta_cases(output, seed):
    """(z2, o, Y) minibatches for the δ2 graders: n = 1 and n > 1, excluded documents, float32."""
    activation = expit if output == "sigmoid" else np.tanh
    for number, (n, _, _, L, dtype) in enumerate(SHAPES):
        rng = np.random.default_rng([seed, number])
        z2 = rng.normal(scale=1.5, size=(n, L)).astype(dtype)
        yield z2, activation(z2), labels(rng, n, L, dtype)


def fd_delta(loss, z2, Y):
    """∂(Σ_i J_i)/∂z2 by central differences (float64): row i is ∂J_i/∂z2_i."""
    def total(value):
        return float(np.sum(loss.per_document(value, loss.output.fn(value), Y)))
    return numerical_gradient(total, z2.astype(np.float64))


def check_ce_delta2(ce_delta2):
    """``ce_delta2(z2, o, Y)`` → CE's δ2 = ∂J_i/∂z2 = o − y through sigmoid outputs (Eq. 6)."""
    def one(z2, o, Y):
        ce = CrossEntropy()
        reference = ce.delta(z2, o, Y)
        if z2.dtype == np.float64:
            agree(reference, fd_delta(ce, z2, Y), "CE δ2")
        answer = run(ce_delta2, ("z2", z2), ("o", o), ("Y", Y), name="ce_delta2")
        expect_values(answer, reference, "δ2", [
            (-reference, "the sign is flipped: δ2 is positive where o is above y"),
            (reference / len(z2), "δ2 is per document (row i is ∂J_i/∂z2_i): no 1/n here, the "
                                  "mean's 1/n comes in the parameter gradients"),
            (reference * o * (1 - o), "the sigmoid's derivative o(1 − o) already cancelled "
                                      "against ∂J/∂o: do not multiply by it again"),
            (reference / (o * (1 - o)), "that is ∂J/∂o; δ2 = ∂J/∂z2 is ∂J/∂o times o(1 − o)")])

    def attempt():
        count = each_case(delta_cases("sigmoid", 20), one)
        return f"{count} random cases against mlnn and central differences"
    return grade("CE's δ2", attempt)


def pwe_wrong_forms(reference, o, Y):
    """PWE δ2s with the usual mistakes, each with its hint."""
    relevant = Y > 0
    y, ybar = relevant.sum(axis=1, keepdims=True), (~relevant).sum(axis=1, keepdims=True)
    pairs, L = y * ybar, Y.shape[1]

    def renormalised(by):
        return reference * pairs / np.maximum(by, 1)
    dJ_do = reference / ((1 + o) * (1 - o))
    return [
        (-reference, "the sign is flipped: relevant labels get a negative δ2, irrelevant ones a "
                     "positive δ2"),
        (np.where(relevant, -reference, reference), "the relevant labels' δ2 has the wrong sign"),
        (np.where(relevant, reference, -reference), "the irrelevant labels' δ2 has the wrong sign"),
        (np.where(relevant, reference, 0), "the irrelevant labels' δ2 is missing: each n ∈ ȳ "
                                           "gets +Σ_p exp(−(o_p − o_n)) over its pairs"),
        (np.where(relevant, 0, reference), "the relevant labels' δ2 is missing: each p ∈ y "
                                           "gets −Σ_n exp(−(o_p − o_n)) over its pairs"),
        (dJ_do, "that is ∂J/∂o; δ2 = ∂J/∂z2 also needs tanh'(z2) = (1 + o)(1 − o)"),
        (dJ_do * o * (1 - o), "the derivative of tanh is (1 + o)(1 − o), not o(1 − o)"),
        (renormalised(y * y), "wrong normaliser: divide by |y||ȳ|, the number of pairs, not |y|²"),
        (renormalised(ybar * ybar), "wrong normaliser: divide by |y||ȳ|, not |ȳ|²"),
        (renormalised(np.ones_like(pairs)), "the pair sum is not normalised: divide by |y||ȳ|"),
        (renormalised(np.full_like(pairs, L * L)), "wrong normaliser: |y||ȳ|, not L²"),
        (renormalised(np.full_like(pairs, L)), "wrong normaliser: |y||ȳ|, not L"),
        (reference / len(o), "δ2 is per document: no 1/n here")]


def check_pwe(answer_fn, name, title):
    """PWE's δ2 (Eq. 3, Sec. 3.4) through tanh outputs, against mlnn's pairwise form."""
    def one(z2, o, Y):
        reference = PairwiseExponential("pairwise").delta(z2, o, Y)
        if z2.dtype == np.float64:
            agree(reference, fd_delta(PairwiseExponential(), z2, Y), "PWE δ2")
        answer = run(answer_fn, ("z2", z2), ("o", o), ("Y", Y), name=name)
        expect_pwe(answer, reference, o, Y)

    def attempt():
        count = each_case(delta_cases("tanh", 30), one)
        return f"{count} random cases (|y| ≠ |ȳ|, excluded documents) against mlnn"
    return grade(title, attempt)


def expect_pwe(answer, reference, o, Y):
    """An excluded document's δ2 row is 0; then the usual mistakes, then the values."""
    array = as_array(answer, "δ2")
    expect_shape(array, reference.shape, "δ2")
    excluded = PairwiseExponential().excluded(Y)
    rows = array[excluded].astype(float)
    if not np.all(np.isfinite(rows)) or np.any(rows != 0):
        raise NotYet("a document with no relevant label, or with every label relevant, has no "
                     "pair: PWE excludes it and its δ2 row must be 0 (no division by zero)")
    expect_values(answer, reference, "δ2", pwe_wrong_forms(reference, o, Y))


def check_pwe_delta2_pairs(pwe_delta2_pairs):
    """``pwe_delta2_pairs(z2, o, Y)`` → PWE's δ2 by the literal sum over the pairs."""
    return check_pwe(pwe_delta2_pairs, "pwe_delta2_pairs", "PWE's δ2 by the pair sum")


def check_pwe_delta2(pwe_delta2):
    """``pwe_delta2(z2, o, Y)`` → PWE's δ2 factorised, exp(−(o_p − o_n)) = exp(−o_p) exp(o_n)."""
    return check_pwe(pwe_delta2, "pwe_delta2", "PWE's δ2 factorised")


# -- backpropagation -----------------------------------------------------------------------------

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


def check_delta1_relu(delta1_relu):
    """``delta1_relu(delta2, W2, z1)`` → δ1 = (δ2 W2ᵀ) ∘ ReLU'(z1), ReLU'(0) taken as 0."""
    def one(seed, shape):
        kink = seed % 2 == 1
        case, cache, grads = backward_case(40 + seed, shape, kink)
        if shape[-1] == np.float64 and not kink:
            agree(grads.delta1, fd_delta1(case, cache), "δ1")
        answer = run(delta1_relu, ("delta2", grads.delta2), ("W2", case.params["W2"]),
                     ("z1", cache.z1), name="delta1_relu")
        dJ_dh, z1 = grads.delta2 @ case.params["W2"].T, cache.z1
        expect_values(answer, grads.delta1, "δ1", [
            (dJ_dh, "δ1 is missing the factor ReLU'(z1)"),
            (dJ_dh * (z1 < 0), "ReLU'(z1) is 1 where z1 > 0 and 0 where z1 < 0; yours is the "
                               "other way round"),
            (dJ_dh * (z1 >= 0), "at z1 = 0 exactly (a document without words, b1 = 0) "
                                "ReLU'(0) is taken as 0"),
            (dJ_dh * cache.h, "multiplied by h = ReLU(z1); δ1 needs its derivative ReLU'(z1)"),
            (dJ_dh * np.sign(z1), "ReLU'(z1) is 0 where z1 < 0, not −1"),
            (-grads.delta1, "the sign is flipped"),
            ((grads.delta2 @ case.params["W2"]) * (z1 > 0) if shape[2] == shape[3] else None,
             "δ2 (n × L) multiplies W2ᵀ (L × F), the transpose of W2 (F × L)"),
            (grads.delta1 / shape[0], "δ1 is per document: no 1/n here")])

    def attempt():
        count = each_case(enumerate(SHAPES), one)
        return f"{count} random cases against mlnn and central differences (some with z1 = 0)"
    return grade("δ1 through ReLU", attempt)


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


def check_grad_W1_rows(grad_W1_rows):
    """``grad_W1_rows(X, delta1)`` → (rows, values): ∂J/∂W1 = Xᵀ δ1 / n on the rows of the
    words present in X, and only those (the rest is zero)."""
    def attempt():
        count = 0
        for seed, shape in enumerate(SHAPES + [(3, 8, 3, 4, np.float64)]):
            case, cache, grads = backward_case(50 + seed, shape)
            X = case.X
            if seed == len(SHAPES):                 # a minibatch of documents without words
                X = GuardedCSR((case.X.shape[0], case.X.shape[1]), dtype=case.X.dtype)
                grads = case.net.backward(case.net.forward(sp.csr_matrix(X)), grads.delta2)
            elif shape[-1] == np.float64 and seed < 3:
                agree(grads.W1.toarray(), fd_params(case, ("W1",))["W1"], "∂J/∂W1")
            answer = run_guarded(grad_W1_rows, ("X", X), ("delta1", grads.delta1),
                         name="grad_W1_rows")
            expect_row_sparse(answer, grads.W1, shape[0])
            count += 1
        return f"{count} random cases (one minibatch without any word) against mlnn"
    return grade("the row-sparse ∂J/∂W1", attempt)


def check_backward(backward):
    """``backward(X, z1, h, W2, delta2)`` → {"W1": (rows, values), "b1", "W2", "b2"}, the
    gradients of the mean loss (Sec. 3.2) with ReLU hidden units."""
    def attempt():
        count = 0
        for seed, shape in enumerate(SHAPES):
            case, cache, grads = backward_case(60 + seed, shape, kink=seed == 2)
            if shape[-1] == np.float64 and seed != 2:
                numeric = fd_params(case)
                agree(grads.W1.toarray(), numeric["W1"], "∂J/∂W1")
                for name in ("b1", "W2", "b2"):
                    agree(getattr(grads, name), numeric[name], f"∂J/∂{name}")
            answer = run_guarded(backward, ("X", case.X), ("z1", cache.z1), ("h", cache.h),
                         ("W2", case.params["W2"]), ("delta2", grads.delta2), name="backward")
            expect_gradients(answer, grads, cache, shape[0])
            count += 1
        return f"{count} random cases against mlnn and central differences"
    return grade("backward: ∂J/∂W1 (row-sparse), ∂J/∂b1, ∂J/∂W2, ∂J/∂b2", attempt)


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


# -- AdaGrad -------------------------------------------------------------------------------------

def adagrad_run(params, steps, eta0, epsilon, variant="right"):
    """θ after ``steps`` (lists of dense gradients by name) of AdaGrad or of a wrong variant."""
    params = {name: value.astype(np.float64) for name, value in params.items()}
    G = {name: np.zeros_like(value) for name, value in params.items()}
    for grads in steps:
        for name, g in grads.items():
            before = G[name].copy()
            G[name] = g * g if variant == "reset" else G[name] + g * g
            denominator = {"no_sqrt": G[name] + epsilon, "inside": np.sqrt(G[name] + epsilon),
                           "before": np.sqrt(before) + epsilon}.get(variant,
                                                                     np.sqrt(G[name]) + epsilon)
            step = eta0 * g if variant == "sgd" else eta0 * g / np.where(denominator > 0,
                                                                         denominator, 1)
            params[name] = params[name] + step if variant == "uphill" else params[name] - step
    return params


ADAGRAD_MISTAKES = {
    "no_sqrt": "the step divides by G + ε; AdaGrad divides by √G + ε",
    "inside": "ε belongs outside the square root: √G + ε, not √(G + ε)",
    "reset": "G is reset at every step; it must accumulate g² over all the steps so far",
    "before": "G must include the current gradient: add g² to G before taking the step",
    "sgd": "the step is η0 g; AdaGrad divides it by √G + ε, per parameter entry",
    "uphill": "the parameters move uphill: subtract the step",
}


def adagrad_steps(rng, params, count=5):
    """``count`` gradient dicts: W1 as (rows, values) on random rows (one step with no row)."""
    D = params["W1"].shape[0]
    steps = []
    for t in range(count):
        rows = np.sort(rng.choice(D, size=0 if t == 2 else rng.integers(1, D), replace=False))
        grads = {"W1": (rows, rng.normal(size=(len(rows), params["W1"].shape[1])))}
        for name in ("b1", "W2", "b2"):
            grads[name] = rng.normal(size=params[name].shape) * (rng.random(params[name].shape)
                                                                  < 0.7)
        dtype = params["W1"].dtype
        steps.append({name: (g[0], g[1].astype(dtype)) if name == "W1" else g.astype(dtype)
                      for name, g in grads.items()})
    return steps


def dense_steps(steps, params):
    """The steps with W1's (rows, values) made dense, for :func:`adagrad_run`."""
    out = []
    for grads in steps:
        W1 = np.zeros(params["W1"].shape)
        W1[grads["W1"][0]] = grads["W1"][1]
        out.append({**{k: np.asarray(v, float) for k, v in grads.items() if k != "W1"}, "W1": W1})
    return out


def reference_adagrad(params, steps, eta0, epsilon):
    """θ after the steps by mlnn's AdaGrad (row-sparse W1), on copies."""
    params = {name: value.copy() for name, value in params.items()}
    optimizer = ReferenceAdaGrad(eta0, epsilon=epsilon)
    for grads in steps:
        rows, values = grads["W1"]
        optimizer.step(params, {**grads, "W1": RowSparseGradient(rows, values,
                                                                 params["W1"].shape)})
    return params


#: (η0, ε, (D, F, L), dtype) of the AdaGrad cases; F = L once, so that b1 and b2 have one shape.
ADAGRAD_CASES = [(0.1, 1e-8, (7, 3, 4), np.float64), (0.03, 0.5, (5, 4, 4), np.float64),
                 (1.0, 1e-3, (9, 2, 5), np.float64), (0.3, 0.1, (6, 3, 3), np.float32)]


def random_params(rng, D, F, L, dtype=np.float64):
    """Random W1, b1, W2, b2 of the given shapes and dtype."""
    shapes = {"W1": (D, F), "b1": (F,), "W2": (F, L), "b2": (L,)}
    return {name: rng.normal(size=shape).astype(dtype) for name, shape in shapes.items()}


def new_optimizer(AdaGrad, eta0, epsilon):
    """``AdaGrad(eta0, epsilon)``, its exception reported as the student's."""
    try:
        return AdaGrad(eta0, epsilon)
    except Exception as error:
        raise StudentError("AdaGrad(eta0, epsilon)", error) from error


class WatchedRows(np.ndarray):
    """W1 for the AdaGrad grader: records in ``written`` (one flag per row) the rows a step
    writes, by item assignment, by a ufunc writing into it, or by ``ufunc.at``."""

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


def watched(W1):
    """A copy of W1 that records the rows written (:class:`WatchedRows`)."""
    array = W1.copy().view(WatchedRows)
    array.written = np.zeros(len(W1), dtype=bool)
    return array


def expect_rows_written(W1, rows):
    """Only the rows ``rows`` of a watched W1 were written by the last step."""
    if not isinstance(W1, WatchedRows) or W1.written is None:
        return
    allowed = np.zeros(len(W1), dtype=bool)
    allowed[rows] = True
    extra = W1.written & ~allowed
    W1.written[:] = False
    if extra.any() and (extra | allowed).all():
        raise NotYet(f"step wrote all {len(W1)} rows of W1; only the rows listed in rows have a "
                     "gradient and may be touched (k × F work per step instead of D × F)")
    if extra.any():
        raise NotYet("step wrote rows of W1 that have no gradient in this step; W1's gradient "
                     "(rows, values) applies to the rows listed in rows only")


def take_steps(optimizer, params, steps):
    """Call ``optimizer.step`` on each gradient dict; params must be updated in place and the
    gradients left unchanged. Returns the parameters after the steps."""
    arrays = dict(params)
    for grads in steps:
        given = pristine(grads)
        try:
            optimizer.step(params, given)
        except Exception as error:
            raise StudentError("AdaGrad.step", error) from error
        if not same(grads, given):
            raise NotYet("step modified the gradients it was given; leave them unchanged")
        expect_rows_written(params.get("W1"), grads["W1"][0])
        for name, array in arrays.items():
            if params.get(name) is not array:
                raise NotYet(f"step replaced params[{name!r}] by a new array; update it in place "
                             "(on W1's rows only), otherwise every step copies all of W1")
    return params


def expect_adagrad(answer, start, steps, eta0, epsilon):
    """The parameters after the steps equal mlnn's AdaGrad; else name the mistake."""
    reference = reference_adagrad(start, steps, eta0, epsilon)
    dense = dense_steps(steps, start)
    for name, value in adagrad_run(start, dense, eta0, epsilon).items():
        agree(value, reference[name], f"AdaGrad's {name}")
    if all(np.array_equal(answer[name], start[name]) for name in start):
        raise NotYet("no answer yet (step changed no parameter)")
    dtype = start["W1"].dtype
    if not all(np.all(np.isfinite(np.asarray(answer[name], float))) for name in start):
        raise NotYet("a parameter became NaN or infinite: ε in √G + ε guards the division "
                     "where G is still 0 (an entry whose gradient has been 0 so far)")
    if all(close(answer[name], reference[name], tolerance(dtype)) for name in start):
        for name in start:
            expect_dtype(answer[name], dtype, name)
        return
    for variant, hint in ADAGRAD_MISTAKES.items():
        wrong = adagrad_run(start, dense, eta0, epsilon, variant)
        if all(close(answer[name], wrong[name], tolerance(dtype)) for name in start):
            raise NotYet(hint)
    touched = np.unique(np.concatenate([grads["W1"][0] for grads in steps]))
    untouched = np.setdiff1d(np.arange(start["W1"].shape[0]), touched)
    if not np.array_equal(answer["W1"][untouched], start["W1"][untouched]):
        raise NotYet("rows of W1 without a gradient changed; W1's gradient (rows, values) "
                     "applies to the rows listed in rows only")
    wrong = [name for name in start if not close(answer[name], reference[name], tolerance(dtype))]
    raise NotYet(f"after {len(steps)} steps {', '.join(wrong)} differ from AdaGrad's: per "
                 "parameter, G ← G + g² accumulated over the steps, θ ← θ − η0 g / (√G + ε), "
                 "on the rows given for W1")


def check_adagrad(AdaGrad):
    """``AdaGrad(eta0, epsilon)`` with ``step(params, grads)``: G ← G + g²,
    θ ← θ − η0 g / (√G + ε) per parameter (Sec. 3.5), W1's gradient given as (rows, values)."""
    def attempt():
        if not isinstance(AdaGrad, type):
            raise NotYet("AdaGrad must be a class: AdaGrad(eta0, epsilon) keeps its state and "
                         "has a method step(params, grads)")
        expect_separate_state(AdaGrad)
        for number, (eta0, epsilon, (D, F, L), dtype) in enumerate(ADAGRAD_CASES):
            rng = np.random.default_rng([70, number])
            start = random_params(rng, D, F, L, dtype)
            steps = adagrad_steps(rng, start)
            params = {name: value.copy() for name, value in start.items()}
            params["W1"] = watched(start["W1"])
            answer = take_steps(new_optimizer(AdaGrad, eta0, epsilon), params, steps)
            expect_adagrad(answer, start, steps, eta0, epsilon)
        expect_own_state(AdaGrad)
        return (f"{len(ADAGRAD_CASES)} runs of 5 steps (η0 from 0.03 to 1, ε from 1e-8 to 0.5, "
                "a step without W1 rows, float32) and two optimizers side by side, against mlnn")
    return grade("AdaGrad with its state", attempt)


INTERFERE = ("two AdaGrad objects used side by side interfere: each must keep its own G, made "
             "in __init__, not shared between objects")


def state_of(optimizer):
    """Copies of the data attributes an optimizer can reach (its own and its class's)."""
    return {name: pristine(getattr(optimizer, name)) for name in dir(optimizer)
            if not name.startswith("__") and not callable(getattr(optimizer, name))}


def expect_separate_state(AdaGrad):
    """A step of one optimizer leaves the state of another one untouched."""
    rng = np.random.default_rng(78)
    first, second = new_optimizer(AdaGrad, 0.1, 1e-8), new_optimizer(AdaGrad, 0.5, 0.01)
    before = state_of(second)
    start = random_params(rng, 6, 3, 4)
    take_steps(first, start, adagrad_steps(rng, start, 1))
    if not same(before, state_of(second)):
        raise NotYet(INTERFERE)


def expect_own_state(AdaGrad):
    """Two optimizers stepped in turn on their own parameters each match their own reference."""
    rng = np.random.default_rng(79)
    runs = []
    for eta0, epsilon in ((0.1, 1e-8), (0.5, 0.01)):
        start = random_params(rng, 6, 3, 4)
        runs.append((new_optimizer(AdaGrad, eta0, epsilon), start, adagrad_steps(rng, start),
                     {name: value.copy() for name, value in start.items()}, eta0, epsilon))
    for t in range(5):
        for optimizer, _, steps, params, _, _ in runs:
            take_steps(optimizer, params, steps[t:t + 1])
    for _, start, steps, params, eta0, epsilon in runs:
        reference = reference_adagrad(start, steps, eta0, epsilon)
        if not all(close(params[name], reference[name]) for name in start):
            raise NotYet(INTERFERE)


# -- one update and the training loop ------------------------------------------------------------

class RecordingOptimizer:
    """An optimizer that only records what ``step`` was given."""

    def __init__(self):
        self.calls = []

    def step(self, params, grads):
        self.calls.append((params, pristine(grads)))


def call_guarded(function, *args, name="function"):
    """``function(*args)`` with X guarded; its exception is the student's."""
    _GUARD["armed"] = True
    try:
        return function(*args)
    except Densified:
        raise NotYet(DENSE_HINT) from None
    except Exception as error:
        raise StudentError(name, error) from error
    finally:
        _GUARD["armed"] = False


def check_update(update):
    """``update(params, optimizer, X_batch, Y_batch)``: forward, CE's δ2, backward and one
    ``optimizer.step(params, grads)`` with the gradients of the mean CE loss."""
    def attempt():
        count = 0
        for seed, shape in enumerate(SHAPES[:5]):
            case, cache, grads = backward_case(80 + seed, shape)
            params = {name: value.copy() for name, value in case.params.items()}
            inputs = (case.X, case.Y)
            before = pristine((params, inputs))
            optimizer = RecordingOptimizer()
            call_guarded(update, params, optimizer, *inputs, name="update")
            if not same(before[1], inputs):
                raise NotYet("update modified X_batch or Y_batch; leave them unchanged")
            if not same(before[0], params):
                raise NotYet("update changed the parameters itself, or through another "
                             "optimizer than the one it was given; only optimizer.step may")
            expect_one_step(optimizer, params, grads, cache, shape[0])
            count += 1
        return f"{count} random minibatches against mlnn's forward, CE δ2 and backward"
    return grade("one minibatch update", attempt)


def expect_one_step(optimizer, params, grads, cache, n):
    """``optimizer.step`` called once, with ``params`` and mlnn's gradients."""
    if not optimizer.calls:
        raise NotYet("no answer yet (optimizer.step was never called)")
    if len(optimizer.calls) > 1:
        raise NotYet(f"optimizer.step was called {len(optimizer.calls)} times; one update is "
                     "one step")
    given, answer = optimizer.calls[0]
    if given is not params:
        raise NotYet("hand optimizer.step the params dict you were given")
    try:
        expect_gradients(answer, grads, cache, n)
    except NotYet as hint:
        raise NotYet(f"the gradients handed to optimizer.step: {hint} (forward, ce_delta2 and "
                     "backward each have a grader above)") from None


def training_inputs(n):
    """X (n × 1, GuardedCSR) holding each document's number 1 … n, and Y (n × 8) its bits."""
    ids = np.arange(1, n + 1)
    X = GuardedCSR((ids.astype(np.float64), np.zeros(n, np.int32), np.arange(n + 1)),
                   shape=(n, 1))
    Y = ((ids[:, None] >> np.arange(8)) & 1).astype(np.float64)
    return X, Y


def batch_ids(X_batch, Y_batch):
    """(document numbers of X_batch or None if it is not sparse, those of Y_batch or None)."""
    x = np.asarray(X_batch.tocsr().data, int) if sp.issparse(X_batch) else None
    y = None
    if isinstance(Y_batch, np.ndarray) and Y_batch.ndim == 2 and Y_batch.shape[1] == 8:
        y = (np.asarray(Y_batch, float) @ (2.0 ** np.arange(8))).astype(int)
    return x, y


class OtherUpdate(Exception):
    """Raised when the training loop's optimizer is stepped by another update than the one given."""


class SentinelOptimizer:
    """The optimizer handed to ``train``: only the recording update may receive it."""

    def step(self, params, grads):
        raise OtherUpdate


def record_training(train, n, batch_size, epochs, seed):
    """What ``train`` hands to ``update``: a list of (params ok, optimizer ok, X ids, Y ids)."""
    X, Y = training_inputs(n)
    before = pristine((X, Y))
    params = {"W1": np.zeros((1, 1)), "b1": np.zeros(1), "W2": np.zeros((1, 8)),
              "b2": np.zeros(8)}                 # shaped for X and Y, should an update use them
    optimizer, record = SentinelOptimizer(), []

    def update(p, o, X_batch, Y_batch):
        record.append((p is params, o is optimizer, *batch_ids(X_batch, Y_batch)))
    try:
        call_guarded(train, params, optimizer, X, Y, epochs, batch_size,
                     np.random.default_rng(seed), update, name="train")
    except StudentError as error:
        if isinstance(error.error, OtherUpdate):
            raise NotYet("train must hand each minibatch to the update it is given as its "
                         "argument, not to another function") from None
        raise
    if not same(before, (X, Y)):
        raise NotYet("train modified X or Y; leave them unchanged")
    return record


#: (n, batch_size, epochs) of the training-loop cases: n not a multiple of the batch size, one
#: minibatch per epoch, a batch larger than n, a single document.
TRAINING_CASES = [(10, 3, 2), (12, 12, 3), (23, 4, 3), (5, 8, 2), (1, 2, 2), (17, 5, 1)]


def check_train(train):
    """``train(params, optimizer, X, Y, epochs, batch_size, rng, update)``: ``epochs`` passes,
    each over every document once in a new random order drawn from ``rng``, in minibatches of
    ``batch_size`` (the last one of an epoch smaller), each handed to
    ``update(params, optimizer, X_batch, Y_batch)`` with X_batch still sparse."""
    def attempt():
        for number, (n, batch_size, epochs) in enumerate(TRAINING_CASES):
            record = record_training(train, n, batch_size, epochs, seed=90 + number)
            expect_epochs(record, n, batch_size, epochs)
            again = record_training(train, n, batch_size, epochs, seed=90 + number)
            if [r[2].tolist() for r in again] != [r[2].tolist() for r in record]:
                raise NotYet("the order must come from the generator rng you are given: the "
                             "same rng seed must give the same minibatches")
            if n >= 10:
                expect_shuffled(train, record, n, batch_size, epochs, 90 + number)
        expect_uniform(train)
        return (f"{len(TRAINING_CASES)} cases of n, batch size and epochs, and 480 epochs of 4 "
                "documents for the randomness of the order")
    return grade("the shuffled minibatch training loop", attempt)


def expect_epochs(record, n, batch_size, epochs):
    """The minibatches of each epoch: sparse, matching X and Y, sizes, every document once."""
    per_epoch = -(-n // batch_size)
    if not record:
        raise NotYet("no answer yet (update was never called)")
    if not all(p and o for p, o, _, _ in record):
        raise NotYet("hand update the params and the optimizer you were given")
    if any(x is None for _, _, x, _ in record):
        raise NotYet("X_batch must stay a sparse matrix: take its rows from X, do not densify")
    if any(y is None or not np.array_equal(x, y) for _, _, x, y in record):
        raise NotYet("X_batch and Y_batch must hold the same documents, in the same order")
    if len(record) != epochs * per_epoch:
        if epochs > 1 and len(record) == per_epoch:
            raise NotYet(f"one epoch only: train for the {epochs} epochs asked")
        raise NotYet(f"update was called {len(record)} times; {epochs} epochs of {n} documents "
                     f"in minibatches of {batch_size} make {epochs * per_epoch}")
    sizes = [batch_size] * (per_epoch - 1) + [n - batch_size * (per_epoch - 1)]
    for epoch in range(epochs):
        batches = [r[2] for r in record[epoch * per_epoch:(epoch + 1) * per_epoch]]
        if [len(b) for b in batches] != sizes:
            raise NotYet(f"minibatches hold batch_size = {batch_size} documents each (the last "
                         "one of an epoch fewer)")
        if sorted(np.concatenate(batches).tolist()) != list(range(1, n + 1)):
            raise NotYet("an epoch must visit every document exactly once")


def expect_shuffled(train, record, n, batch_size, epochs, seed):
    """A new random order at every epoch, and a different one for another seed."""
    per_epoch = -(-n // batch_size)
    orders = [np.concatenate([r[2] for r in record[e * per_epoch:(e + 1) * per_epoch]]).tolist()
              for e in range(epochs)]
    if orders[0] == list(range(1, n + 1)):
        raise NotYet("the documents come in their stored order: shuffle them at the start of "
                     "every epoch")
    if epochs > 1 and all(order == orders[0] for order in orders):
        raise NotYet("every epoch has the same order: draw a new random order at the start of "
                     "each epoch")
    other = record_training(train, n, batch_size, epochs, seed + 1000)
    if [r[2].tolist() for r in other] == [r[2].tolist() for r in record]:
        raise NotYet("the order does not depend on the generator rng you are given")


def expect_uniform(train, epochs=480):
    """Over many epochs of 4 documents every one of the 24 orders is about equally frequent."""
    record = record_training(train, 4, 4, epochs, seed=99)
    orders = [tuple(r[2].tolist()) for r in record]
    counts = [orders.count(order) for order in sorted(set(orders))]
    counts += [0] * (24 - len(counts))
    if chisquare(counts).pvalue < 1e-6:
        raise NotYet("the orders are not uniformly random: every order of the documents should "
                     "be equally likely")


# -- running the notebook before the exercises are done ------------------------------------------

def load_worked_solution(root=None):
    """The worked solution of notebook 01b as a module (``SOLUTION`` under the project root)."""
    root = Path(root) if root is not None else environment.project_root()
    path = (root if root is not None else Path.cwd()) / SOLUTION
    spec = importlib.util.spec_from_file_location("ex01b_build_it_from_zero", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def yours_if(report, answer, worked, name=None):
    """``answer`` if its grader passed, else the worked solution's piece of the same name; says
    which one the cells below use."""
    name = name or answer.__name__
    if report:
        print(f"→ the cells below use your {name}")
        return answer
    print(f"→ the cells below use the worked solution's {name} ({SOLUTION.as_posix()}) until "
          "yours passes")
    return getattr(worked, name)
