r"""Graders of notebook 01b, where the student builds the paper's network (Eq. 2) from zero, with
CE (Eq. 6) or PWE (Eq. 3, Sec. 3.2) at the output, ReLU hidden units and AdaGrad (Sec. 3.5).

Each piece is tried on random minibatches against mlnn's own code, whose gradients are first
checked against central differences. The cases and the guards on the inputs (X never made
dense, no full D × F product, no O(L²) work where O(L) is asked) are in
:mod:`~mlnn.course.scratch_cases`, the learning pieces in :mod:`~mlnn.course.scratch_training`.
:func:`yours_if` replaces a piece that has not passed by the worked solution's in the cells below.
"""

import importlib.util
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from mlnn.course.graders import PWE_MISTAKES, pwe_reference
from mlnn.course.grading import (Mistake, NotYet, as_array, exercise, expect_items,
                                 expect_shape, grade, run)
from mlnn.course.scratch_cases import (SHAPES, SOLUTION, GuardedCSR, Linear, agree,
                                       backward_case, expect_gradients, expect_row_sparse,
                                       expect_values, fd_delta1, fd_params, labels,
                                       network_case, run_guarded)
from mlnn.course.scratch_training import check_adagrad, check_train, check_update
from mlnn.figures import environment
from mlnn.nn.activations import get_activation
from mlnn.nn.gradcheck import numerical_gradient
from mlnn.nn.losses import CrossEntropy, PairwiseExponential
from mlnn.nn.network import Network

#: The ten graders, in the notebook's order (three of them live in :mod:`scratch_training`).
__all__ = ["check_forward", "check_ce_delta2", "check_pwe_delta2_pairs", "check_pwe_delta2",
           "check_delta1_relu", "check_grad_W1_rows", "check_backward", "check_adagrad",
           "check_update", "check_train", "load_worked_solution", "yours_if", "SOLUTION"]


# -- the forward pass ----------------------------------------------------------------------------

FORWARD = ("z1", "h", "z2", "o")


def _forward(X, W1, b1, W2, b2, f_o, hidden=lambda z1: np.maximum(z1, 0), z2_from="h"):
    """(z1, h, z2, o) of Eq. 2, right or with one mistake (no bias: b1 or b2 of 0)."""
    z1 = sp.csr_matrix(X) @ W1 + b1
    h = hidden(z1)
    z2 = (h if z2_from == "h" else z1) @ W2 + b2
    return z1, h, z2, f_o(z2)


FORWARD_MISTAKES = [
    Mistake("z1 is missing the bias b1",
            lambda X, W1, b1, W2, b2, f_o: _forward(X, W1, 0 * b1, W2, b2, f_o)),
    Mistake("z2 is missing the bias b2",
            lambda X, W1, b1, W2, b2, f_o: _forward(X, W1, b1, W2, 0 * b2, f_o)),
    Mistake("h is z1 itself: the hidden units apply ReLU",
            lambda X, W1, b1, W2, b2, f_o: _forward(X, W1, b1, W2, b2, f_o, lambda z: z)),
    Mistake("the hidden units are ReLU, max(0, z1), not tanh",
            lambda X, W1, b1, W2, b2, f_o: _forward(X, W1, b1, W2, b2, f_o, np.tanh)),
    Mistake("the hidden units are ReLU, max(0, z1), not the sigmoid",
            lambda X, W1, b1, W2, b2, f_o: _forward(X, W1, b1, W2, b2, f_o, expit)),
    Mistake("z2 is computed from z1; it takes the hidden units h = ReLU(z1)",
            lambda X, W1, b1, W2, b2, f_o: _forward(X, W1, b1, W2, b2, f_o, z2_from="z1")),
    Mistake("o is z2 itself: apply the output activation f_o you are given",
            lambda X, W1, b1, W2, b2, f_o: _forward(X, W1, b1, W2, b2, lambda z: z)),
    Mistake("you applied the sigmoid whatever f_o is; apply the f_o given",
            lambda X, W1, b1, W2, b2, f_o: _forward(X, W1, b1, W2, b2, expit)),
    Mistake("you applied tanh whatever f_o is; apply the f_o given",
            lambda X, W1, b1, W2, b2, f_o: _forward(X, W1, b1, W2, b2, np.tanh)),
    Mistake("z1 was overwritten by ReLU: keep z1 and h = ReLU(z1) apart",
            lambda X, W1, b1, W2, b2, f_o: (lambda z1, h, z2, o: (h, h, z2, o))(
                *_forward(X, W1, b1, W2, b2, f_o)))]


def _forward_cases():
    """``forward(X, W1, b1, W2, b2, f_o)`` → (z1, h, z2, o): z1 = X W1 + b1, h = ReLU(z1),
    z2 = h W2 + b2, o = f_o(z2) (Eq. 2), X sparse and never made dense."""
    for seed, shape in enumerate(SHAPES):
        for f_o, output in ((expit, "sigmoid"), (np.tanh, "tanh")):
            case = network_case(10 + seed, *shape, output=output)
            yield (f"for n = {shape[0]}, D = {shape[1]}, F = {shape[2]}, L = {shape[3]} "
                   f"({np.dtype(shape[4])}, {output} outputs)",
                   [("X", case.X), *case.params.items(), ("f_o", f_o)])


def _mlnn_forward(X, W1, b1, W2, b2, f_o):
    output = "sigmoid" if f_o is expit else "tanh"
    cache = Network(W1, b1, W2, b2, "relu", output).forward(sp.csr_matrix(X))
    return cache.z1, cache.h, cache.z2, cache.o


check_forward = exercise("check_forward", "the sparse forward pass", _mlnn_forward,
                         _forward_cases, FORWARD_MISTAKES, expect=expect_items(FORWARD),
                         runner=run_guarded, name="forward")


# -- the output deltas ---------------------------------------------------------------------------

def delta_cases(output, seed):
    """(z2, o, Y) minibatches for the δ2 graders, mlnn's δ2 first checked against central
    differences: n = 1 and n > 1, excluded documents, float32, and saturated outputs (|z2| > 30:
    probabilities below 1e-13)."""
    activation, loss = ((expit, CrossEntropy()) if output == "sigmoid"
                        else (np.tanh, PairwiseExponential()))
    for number, (n, _, _, L, dtype) in enumerate(SHAPES + [(4, 0, 0, 6, np.float64)]):
        rng = np.random.default_rng([seed, number])
        z2 = rng.normal(scale=1.5, size=(n, L)).astype(dtype)
        if number == len(SHAPES):
            z2 = rng.choice([-1, 1], size=(n, L)) * rng.uniform(30, 36, size=(n, L))
        o, Y = activation(z2), labels(rng, n, L, dtype)
        if z2.dtype == np.float64 and number < len(SHAPES):
            agree(loss.delta(z2, o, Y), fd_delta(loss, z2, Y), f"{output} δ2")
        yield (f"δ2 for n = {n}, L = {L} ({np.dtype(dtype)}"
               f"{', saturated outputs' if number == len(SHAPES) else ''})",
               [("z2", z2), ("o", o), ("Y", Y)])


def fd_delta(loss, z2, Y):
    """∂(Σ_i J_i)/∂z2 by central differences (float64): row i is ∂J_i/∂z2_i."""
    def total(value):
        return float(np.sum(loss.per_document(value, loss.output.fn(value), Y)))
    return numerical_gradient(total, z2.astype(np.float64))


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
            "clipping", lambda z2, o, Y: np.clip(o, 1e-7, 1 - 1e-7) - Y)]


def _ce_cases():
    """``ce_delta2(z2, o, Y)`` → CE's δ2 = ∂J_i/∂z2 = o − y through sigmoid outputs (Eq. 6)."""
    yield from delta_cases("sigmoid", 20)


check_ce_delta2 = exercise("check_ce_delta2", "CE's δ2", _ce, _ce_cases, CE_MISTAKES,
                           name="ce_delta2")


def _expect_pwe(answer, expected, what, wrongs, inputs):
    """An excluded document's δ2 row is 0; then the values, a known mistake named."""
    array = as_array(answer, what)
    expect_shape(array, expected.shape, what)
    rows = np.asarray(array[PairwiseExponential().excluded(np.asarray(inputs["Y"]))], dtype=float)
    if not np.all(np.isfinite(rows)) or np.any(rows != 0):
        raise NotYet("a document with no relevant label, or with every label relevant, has no "
                     "pair: PWE excludes it and its δ2 row must be 0 (no division by zero)")
    expect_values(np.asarray(answer) if isinstance(answer, Linear) else answer, expected, what,
                  wrongs)


def _pwe_cases():
    """``pwe_delta2_pairs(z2, o, Y)`` → PWE's δ2 (Eq. 10, Sec. 3.4) through tanh outputs."""
    yield from delta_cases("tanh", 30)


def _large_pwe_cases():
    """``pwe_delta2(z2, o, Y)`` → PWE's δ2 in O(L) per document, also on 3 documents of 2,000
    labels, where no array of all pairs may be formed and no loop may run over them."""
    yield from delta_cases("tanh", 30)
    rng = np.random.default_rng(31)
    z2 = rng.normal(size=(3, 2000))
    yield ("δ2 for n = 3, L = 2000", [("z2", z2), ("o", np.tanh(z2)),
                                      ("Y", (rng.random(z2.shape) < 0.5).astype(np.float64))])


def run_linear(function, *named, name="function"):
    """:func:`run` with, for a large case, the inputs refusing O(L²) work (:class:`Linear`)."""
    size = named[1][1].size
    if size < 1000:
        return run(function, *named, name=name)
    return run_guarded(function, *((k, v.view(Linear)) for k, v in named), name=name,
                       limit=8 * size)


check_pwe_delta2_pairs = exercise("check_pwe_delta2_pairs", "PWE's δ2 by the pair sum",
                                  pwe_reference,
                                  _pwe_cases, PWE_MISTAKES, expect=_expect_pwe,
                                  name="pwe_delta2_pairs")
check_pwe_delta2 = exercise("check_pwe_delta2", "PWE's δ2 factorised",
                            lambda z2, o, Y: PairwiseExponential().delta(z2, o, Y),
                            _large_pwe_cases, PWE_MISTAKES, expect=_expect_pwe,
                            runner=run_linear, name="pwe_delta2")


# -- backpropagation -----------------------------------------------------------------------------

def _relu_delta1(d2, W2, z1, derivative=lambda z1: z1 > 0, transposed=True):
    return (d2 @ (W2.T if transposed else W2)) * derivative(z1)


DELTA1_MISTAKES = [
    Mistake("δ1 is missing the factor ReLU'(z1)", lambda d2, W2, z1: d2 @ W2.T),
    Mistake("ReLU'(z1) is 1 where z1 > 0 and 0 where z1 < 0; yours is the other way round",
            lambda d2, W2, z1: _relu_delta1(d2, W2, z1, lambda z: z < 0)),
    Mistake("at z1 = 0 exactly (a document without words, b1 = 0) ReLU'(0) is taken as 0",
            lambda d2, W2, z1: _relu_delta1(d2, W2, z1, lambda z: z >= 0)),
    Mistake("multiplied by h = ReLU(z1); δ1 needs its derivative ReLU'(z1)",
            lambda d2, W2, z1: _relu_delta1(d2, W2, z1, lambda z: np.maximum(z, 0))),
    Mistake("ReLU'(z1) is 0 where z1 < 0, not −1",
            lambda d2, W2, z1: _relu_delta1(d2, W2, z1, np.sign)),
    Mistake("the sign is flipped", lambda d2, W2, z1: -_relu_delta1(d2, W2, z1)),
    Mistake("δ2 (n × L) multiplies W2ᵀ (L × F), the transpose of W2 (F × L)",
            lambda d2, W2, z1: _relu_delta1(d2, W2, z1, transposed=False)),
    Mistake("δ1 is per document: no 1/n here",
            lambda d2, W2, z1: _relu_delta1(d2, W2, z1) / len(z1))]


def _delta1_cases():
    """``delta1_relu(delta2, W2, z1)`` → δ1 = (δ2 W2ᵀ) ∘ ReLU'(z1), ReLU'(0) taken as 0."""
    for seed, shape in enumerate(SHAPES):
        kink = seed % 2 == 1
        case, cache, grads = backward_case(40 + seed, shape, kink)
        if shape[-1] == np.float64 and not kink:
            agree(grads.delta1, fd_delta1(case, cache), "δ1")
        yield (f"δ1 for n = {shape[0]}, F = {shape[2]}, L = {shape[3]}"
               + (", some z1 exactly 0" if kink else ""),
               [("delta2", grads.delta2), ("W2", case.params["W2"]), ("z1", cache.z1)])


def _mlnn_delta1(d2, W2, z1):
    return (d2 @ W2.T) * get_activation("relu").grad(z1, np.maximum(z1, 0))


check_delta1_relu = exercise("check_delta1_relu", "δ1 through ReLU", _mlnn_delta1,
                             _delta1_cases, DELTA1_MISTAKES, name="delta1_relu")


def partial_vocabulary(X):
    """D if some of the D features are absent from the minibatch X (then no product may have D
    rows), else None."""
    return X.shape[1] if np.unique(X.indices).size < X.shape[1] else None


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
                                 name="grad_W1_rows", full_rows=partial_vocabulary(X))
            expect_row_sparse(answer, grads.W1, shape[0])
            count += 1
        return f"{count} random cases (one minibatch without any word) against mlnn"
    return grade("the row-sparse ∂J/∂W1", attempt).passed


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
                                 ("W2", case.params["W2"]), ("delta2", grads.delta2),
                                 name="backward", full_rows=partial_vocabulary(case.X))
            expect_gradients(answer, grads, cache, shape[0])
            count += 1
        return f"{count} random cases against mlnn and central differences"
    return grade("backward: ∂J/∂W1 (row-sparse), ∂J/∂b1, ∂J/∂W2, ∂J/∂b2", attempt).passed


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
