"""Graders of the derivatives (Eq. 2, Sec. 3.2): δ1 through tanh (notebook 01) and ReLU, ∂J/∂W1
(dense with the minibatch mean, and row-sparse), central differences, and notebook 01b's sparse
forward pass, CE's δ2 (Eq. 6) and backward with the bias gradients."""

import functools

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from mlnn.course.grading import (CASES, CaseRng, Mistake, case_rngs, expect_items, make_grader,
                                 sparse_rows, variant)
from mlnn.course.pieces import (SHAPES, WIDE_SHAPES, backward_case, delta_cases,
                                expect_backward, expect_rows, grad_W1_rows_scaled, mlnn_backward,
                                mlnn_ce_delta2, mlnn_delta1_relu, mlnn_forward, mlnn_grad_W1_rows,
                                network_case, piece, run_sparse, shape_words)
from mlnn.nn.activations import get_activation
from mlnn.nn.gradcheck import numerical_gradient


# -- notebook 01: δ1, ∂J/∂W1 and central differences -----------------------------------------------

def _tanh_delta1(d2, W2, h):
    return (d2 @ W2.T) * get_activation("tanh").grad(np.arctanh(h), h)


DELTA1_MISTAKES = [
    Mistake("the derivative of the hidden activation is missing", lambda d2, W2, h: d2 @ W2.T),
    Mistake("that is the sigmoid's derivative; these hidden units are tanh, whose derivative is "
            "written with h differently", lambda d2, W2, h: (d2 @ W2.T) * h * (1 - h)),
    Mistake("tanh' is 1 − h², not 1 − h", lambda d2, W2, h: (d2 @ W2.T) * (1 - h)),
    Mistake("the sign is flipped", lambda d2, W2, h: -_tanh_delta1(d2, W2, h)),
    Mistake("tanh is applied twice: h is already tanh(z1)",
            lambda d2, W2, h: (d2 @ W2.T) * (1 - np.tanh(h) ** 2)),
    Mistake("h is clipped: tanh' = 1 − h² holds however close h is to ±1, and needs no clipping",
            lambda d2, W2, h: (d2 @ W2.T) * (1 - np.clip(h, -0.999, 0.999) ** 2))]


def _delta1_cases():
    """``delta1_tanh(delta2, W2, h)`` → δ1 = (δ2 W2ᵀ) ∘ (1 − h²) for tanh hidden units; the
    last cases deep in saturation (|z1| from 3 to 15, 1 − h² down to 4e-13)."""
    for i, rng in enumerate(case_rngs(1, CASES)):
        n, F, L = rng.integers(1, 8), rng.integers(2, 7), rng.integers(2, 7)
        saturated = i >= CASES - 2
        z1 = rng.normal(size=(n, F))
        if saturated:
            z1 = np.sign(z1) * rng.uniform(3, 15, size=(n, F))
        yield (f"δ1 for n = {n}, F = {F}, L = {L}{', saturated h (|z1| ≥ 3)' if saturated else ''}",
               [("delta2", rng.normal(size=(n, L))), ("W2", rng.normal(size=(F, L))),
                ("h", np.tanh(z1))])


check_delta1 = make_grader("check_delta1", "δ1 for tanh hidden units", _tanh_delta1, _delta1_cases,
                        DELTA1_MISTAKES)


def _input_gradient_cases():
    """``grad_W1_dense(X, delta1)`` → the dense D × F matrix ∂J/∂W1 = Xᵀ δ1 / n."""
    for rng, n in zip(case_rngs(2, CASES), (1, 6, 2, 9, 3, 13, 5, 4)):
        D, F = n + rng.integers(2, 8), rng.integers(2, 6)
        yield (f"∂J/∂W1 for a minibatch of n = {n}, D = {D}, F = {F}",
               [("X", sparse_rows(rng, n, D)), ("delta1", rng.normal(size=(n, F)))])


check_input_gradient = make_grader(
    "check_input_gradient", "∂J/∂W1 with the minibatch mean",
    lambda X, d1: np.asarray(X.T @ d1) / X.shape[0], _input_gradient_cases,
    [Mistake("n times too large: J is the mean over the minibatch",
             lambda X, d1: np.asarray(X.T @ d1))], scale="the factor must follow the minibatch")


def _differences(f, x, h, sides=2, dtype=float):
    """(f(x + h e_i) − f(x − h e_i)) / 2h, or one-sided (f(x + h e_i) − f(x)) / h, with x ± h
    in ``dtype`` (truncated, in an integer dtype)."""
    units = np.eye(x.size).reshape((x.size,) + x.shape)
    ends = [[f((x + s * h * e).astype(dtype)) for s in (1, 1 - sides)] for e in units]
    return np.array([(up - down) / (sides * h) for up, down in ends]).reshape(x.shape)


def _gradient_check_cases():
    """``central_differences(f, x, h)`` → the array of (f(x + h e_i) − f(x − h e_i)) / 2h; the
    last x of integers (the gradient is taken at them, in floats)."""
    shapes = ((3,), (2, 3), (4, 1), (3, 2), (5,), (2, 2, 2), (4,))
    steps = (1e-6, 1e-2, 1e-4, 1e-3, 1e-5, 3e-2, 1e-6)
    for number, (rng, shape, h) in enumerate(zip(case_rngs(4, len(shapes)), shapes, steps)):
        integers = number == len(shapes) - 1
        x = rng.integers(-2, 3, size=shape) if integers else rng.normal(size=shape)
        A = rng.normal(size=(x.size, x.size))

        def f(x, A=A):                          # a smooth function: Σ tanh(A vec(x))²
            return float(np.sum(np.tanh(A @ np.reshape(x, -1)) ** 2))
        yield (f"the numerical gradient for x of shape {shape}"
               f"{' (integers)' if integers else ''}, h = {h:g}", [("f", f), ("x", x), ("h", h)])


check_gradient_check = make_grader("check_gradient_check", "central differences",
                                numerical_gradient, _gradient_check_cases, [
    Mistake("that is a one-sided difference; use both sides of x", variant(_differences, sides=1)),
    Mistake("twice the central difference: the two points are 2h apart",
            lambda f, x, h: 2 * numerical_gradient(f, x, h)),
    Mistake("x keeps its integer dtype, so x ± h is truncated to an integer: work on a float "
            "copy of x", lambda f, x, h: _differences(f, x, h, dtype=x.dtype))])


# -- notebook 01b: the sparse forward pass, CE's δ2, δ1 through ReLU, backward ---------------------

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


check_forward = piece(make_grader("check_forward", "the sparse forward pass", mlnn_forward,
                               _forward_cases, FORWARD_MISTAKES,
                               expect=expect_items(("z1", "h", "z2", "o")),
                               runner=functools.partial(run_sparse, vectors=0.5),
                               name="forward"))


CE_MISTAKES = [
    Mistake("the sign is flipped: δ2 is positive where o is above y",
            lambda z2, o, Y: -mlnn_ce_delta2(z2, o, Y)),
    Mistake("δ2 is per document (row i is ∂J_i/∂z2_i): no 1/n here, the mean's 1/n comes in the "
            "parameter gradients", lambda z2, o, Y: mlnn_ce_delta2(z2, o, Y) / len(z2)),
    Mistake("the sigmoid's derivative o(1 − o) already cancelled against ∂J/∂o: do not multiply "
            "by it again", lambda z2, o, Y: mlnn_ce_delta2(z2, o, Y) * o * (1 - o)),
    Mistake("that is ∂J/∂o; δ2 = ∂J/∂z2 is ∂J/∂o times o(1 − o)",
            lambda z2, o, Y: mlnn_ce_delta2(z2, o, Y) / (o * (1 - o))),
    Mistake("CE's outputs are sigmoids: use the o given, σ(z2), not tanh(z2)",
            lambda z2, o, Y: np.tanh(z2) - Y),
    Mistake("o is clipped: δ2 = o − y holds for every probability, however small, and needs no "
            "clipping", lambda z2, o, Y: np.clip(o, 1e-7, 1 - 1e-7) - Y),
    Mistake("δ2 is set to 0 where the output saturates (o = 0 or 1 exactly): δ2 = o − y holds "
            "there too, and needs no guard", lambda z2, o, Y: np.where(o * (1 - o) > 0, o - Y, 0))]


def _ce_cases():
    """``ce_delta2(z2, o, Y)`` → CE's δ2 = ∂J_i/∂z2 = o − y through sigmoid outputs (Eq. 6)."""
    return delta_cases("sigmoid", 20)


check_ce_delta2 = piece(make_grader("check_ce_delta2", "CE's δ2", mlnn_ce_delta2, _ce_cases,
                                    CE_MISTAKES, name="ce_delta2"))


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
            near = CaseRng(seed).random(z1.shape) < 0.3
            z1[near] = np.sign(z1[near]) * np.logspace(-9, -7, int(near.sum()))
        yield (f"δ1 for n = {shape[0]}, F = {shape[2]}, L = {shape[3]}"
               + (", some z1 exactly 0" if kink else "")
               + (", some z1 within 1e-7 of 0" if seed in (0, 2) else ""),
               [("delta2", grads.delta2), ("W2", case.params["W2"]), ("z1", z1)])


check_delta1_relu = piece(make_grader("check_delta1_relu", "δ1 through ReLU", mlnn_delta1_relu,
                                   _relu_delta1_cases, RELU_DELTA1_MISTAKES, name="delta1_relu"))


W1_MISTAKES = [
    Mistake("∂J/∂W1 is n times too large: J is the mean over the n documents",
            lambda X, d1: grad_W1_rows_scaled(X, d1, X.shape[0])),
    Mistake("∂J/∂W1 is divided by n twice",
            lambda X, d1: grad_W1_rows_scaled(X, d1, 1 / X.shape[0]))]


def _grad_W1_cases():
    """``grad_W1_rows(X, delta1)`` → (rows, values): ∂J/∂W1 = Xᵀ δ1 / n on the rows of the words
    present in X, and only those; one minibatch has no word at all."""
    for seed, shape in enumerate(SHAPES + [(3, 8, 3, 4, np.float64)] + WIDE_SHAPES):
        case, cache, grads = backward_case(50 + seed, shape)
        X = sp.csr_matrix(case.X.shape, dtype=case.X.dtype) if seed == len(SHAPES) else case.X
        yield f"∂J/∂W1 for {shape_words(shape)}", [("X", X), ("delta1", grads.delta1)]


check_grad_W1_rows = piece(make_grader("check_grad_W1_rows", "the row-sparse ∂J/∂W1",
                                    mlnn_grad_W1_rows, _grad_W1_cases, W1_MISTAKES,
                                    expect=expect_rows, runner=run_sparse, name="grad_W1_rows"))


def _backward_with(name, wrong):
    """The gradients with ∂J/∂``name`` replaced by ``wrong(X, z1, h, W2, δ2, δ1, n)``."""
    def answer(X, z1, h, W2, d2):
        return {**mlnn_backward(X, z1, h, W2, d2),
                name: wrong(X, z1, h, W2, d2, mlnn_delta1_relu(d2, W2, z1), len(z1))}
    return answer


BACKWARD_MISTAKES = [
    Mistake(f"∂J/∂{name} is n times too large: J is the mean over the n documents",
            _backward_with(name, lambda X, z1, h, W2, d2, d1, n, name=name:
                           mlnn_backward(X, z1, h, W2, d2)[name] * n))
    for name in ("b1", "W2", "b2")
] + [
    Mistake("∂J/∂W2 takes the hidden units h = ReLU(z1), not z1",
            _backward_with("W2", lambda X, z1, h, W2, d2, d1, n: z1.T @ d2 / n)),
    Mistake("∂J/∂b1 is the mean of δ1 over the documents, not of δ2",
            _backward_with("b1", lambda X, z1, h, W2, d2, d1, n: d2.mean(axis=0))),
    Mistake("∂J/∂b2 is the mean of δ2 over the documents, not of δ1",
            _backward_with("b2", lambda X, z1, h, W2, d2, d1, n: d1.mean(axis=0)))]


def _backward_cases():
    """``backward(X, z1, h, W2, delta2)`` → {"W1": (rows, values), "b1", "W2", "b2"}, the
    gradients of the mean loss (Sec. 3.2) with ReLU hidden units."""
    for seed, shape in enumerate(SHAPES + WIDE_SHAPES):
        case, cache, grads = backward_case(60 + seed, shape, kink=seed == 2)
        yield f"for {shape_words(shape)}", [("X", case.X), ("z1", cache.z1), ("h", cache.h),
                                            ("W2", case.params["W2"]), ("delta2", grads.delta2)]


check_backward = piece(make_grader("check_backward", "backward: ∂J/∂W1 (row-sparse), ∂J/∂b1, "
                                "∂J/∂W2, ∂J/∂b2", mlnn_backward, _backward_cases, BACKWARD_MISTAKES,
                                expect=expect_backward, runner=run_sparse, name="backward"))
