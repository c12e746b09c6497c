"""Plausible wrong answers to every exercise of the notebooks, each rejected by its grader with a
message that names the problem and shows no code of the solution; the toolkit's own checks.

Each entry of ``WRONG`` is (grader, wrong answer, a phrase the message must contain). The kinds:
wrong formulas, constants hard-coded to one case (n = 6, η0 = 0.1, μ = 0.9, np.eye(6), L = 3),
PWE normalisers that only agree when |y| = |ȳ|, dropout by the wrong distribution or generator,
RMSProp with ε inside the root, ignored rows or a shared accumulator, answers that change their
inputs, and answers of the wrong shape or dtype.
"""

import ast
import re

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.stats
from scipy.special import expit

from mlnn import course
from mlnn.course import grading
from mlnn.course.update_rules import RMSPropRule
from mlnn.nn import dropout as dropout_module
from mlnn.paper.ranks import Q_ALPHA
from tests.test_exercises import EXERCISES, SOLUTIONS, solutions
from tests.across import judged
from tests.shown import shown

ex01, ex02 = solutions("ex01_derivatives"), solutions("ex02_landscapes")
ex02b, ex03 = solutions("ex02b_optimizers_dropout"), solutions("ex03_convergence")
ex04, ex05 = solutions("ex04_dropout"), solutions("ex05_learning_rates")
ex06, ex07 = solutions("ex06_thresholds"), solutions("ex07_paper_table")
ex08 = solutions("ex08_beyond_the_paper")


# --- notebook 01 ----------------------------------------------------------------------------

def delta1_square_h_in_place(d2, W2, h):
    np.square(h, out=h)
    return (d2 @ W2.T) * (1 - h)


def delta1_doubling_delta2(d2, W2, h):
    """Right values, but δ2 is left doubled: the reference must not be built from it."""
    d2 *= 2
    return (d2 @ W2.T) * (1 - h * h) / 2


def grad_converting_X_in_place(X, d1):
    """Right values, but X's stored values are made float32 in place (the dtype of X changes)."""
    X.data = X.data.astype(np.float32)
    return np.asarray(X.T @ d1) / X.shape[0]


def delta1_reinterpreting_h(d2, W2, h):
    """Right values, but h's buffer is relabelled as int64 on the way (its dtype changes)."""
    result = (d2 @ W2.T) * (1 - h * h)
    h.dtype = np.int64
    return result


def grad_scaling_X_in_place(X, d1):
    X.data /= X.shape[0]
    return np.asarray(X.T @ d1)


def pwe_by_pairs(o, y, norm):
    """The literal pair sum with the normaliser ``norm(|y|, |ȳ|, L)``."""
    p, n = np.flatnonzero(y > 0), np.flatnonzero(y == 0)
    E = np.exp(-(o[p][:, None] - o[n][None, :]))
    dJ_do = np.zeros_like(o)
    dJ_do[p], dJ_do[n] = -E.sum(axis=1), E.sum(axis=0)
    return dJ_do / norm(len(p), len(n), len(o)) * (1 + o) * (1 - o)


def pwe_clearing_y(o, y):
    result = ex01.pwe_delta_one(o, y)
    y[:] = 0
    return result


def one_sided(f, x, h):
    x, grad = np.array(x, dtype=float), np.zeros(np.shape(x))
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        grad[i] = (f(x + e) - f(x)) / h
    return grad


def central_not_restored(f, x, h):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        x[i] += h
        f_plus = f(x)
        x[i] -= 2 * h
        grad[i] = (f_plus - f(x)) / (2 * h)
    return grad


WRONG_01 = [
    (course.check_delta1, lambda d2, W2, h: (d2 @ W2.T) * h * (1 - h), "sigmoid"),
    (course.check_delta1, lambda d2, W2, h: -(d2 @ W2.T) * (1 - h * h), "sign"),
    (course.check_delta1, lambda d2, W2, h: d2 @ W2.T, "derivative"),
    (course.check_delta1, lambda d2, W2, h: ((d2 @ W2.T) * (1 - h * h)).T, "transposed"),
    (course.check_delta1, delta1_square_h_in_place, "modified its input h"),
    (course.check_delta1, delta1_doubling_delta2, "modified its input delta2"),
    (course.check_delta1, lambda d2, W2, h: (d2 @ W2.T) * (1 - h), "not 1 − h"),
    (course.check_delta1, lambda d2, W2, h: (d2 @ W2.T) * (1 - np.tanh(h) ** 2), "applied twice"),
    (course.check_delta1, lambda d2, W2, h: ((d2 @ W2.T) * (1 - h * h)).astype(np.float32),
     "dtype float32"),
    (course.check_delta1, lambda d2, W2, h: ((d2 @ W2.T) * (1 - h * h) * 10).astype(int),
     "dtype int"),
    (course.check_delta1, lambda d2, W2, h: (d2 @ W2.T) * (1 - h * h) / len(d2), "off"),
    (course.check_delta1, lambda d2, W2, h: ((d2 @ W2.T) * (1 - h * h)).ravel(), "shape"),
    (course.check_input_gradient, lambda X, d1: np.asarray(X.T @ d1), "n times too large"),
    (course.check_input_gradient, lambda X, d1: np.asarray(X.T @ d1) / 6, "times the right"),
    (course.check_input_gradient, lambda X, d1: np.asarray(X.T @ d1).T / X.shape[0],
     "transposed"),
    (course.check_input_gradient, lambda X, d1: np.asarray(X.T @ d1) / X.shape[1],
     "times the right"),
    (course.check_input_gradient, grad_scaling_X_in_place, "modified its input X"),
    (course.check_input_gradient, grad_converting_X_in_place, "modified its input X"),
    (course.check_delta1, delta1_reinterpreting_h, "modified its input h"),
    (course.check_input_gradient, lambda X, d1: (np.asarray(X.T @ d1) / len(d1)).astype(
        np.float32), "dtype float32"),
    (course.check_input_gradient, lambda X, d1: np.asarray(X.T @ d1) / X.nnz, "times the right"),
    (course.check_input_gradient, lambda X, d1: np.asarray(X.T @ (d1 * d1)) / len(d1), "off"),
    (course.check_pwe_delta, lambda o, y: pwe_by_pairs(o, y, lambda p, n, L: p * p), "not |y|²"),
    (course.check_pwe_delta, lambda o, y: pwe_by_pairs(o, y, lambda p, n, L: n * n), "not |ȳ|²"),
    (course.check_pwe_delta, lambda o, y: pwe_by_pairs(o, y, lambda p, n, L: 1), "not normalised"),
    (course.check_pwe_delta, lambda o, y: pwe_by_pairs(o, y, lambda p, n, L: L), "not L"),
    (course.check_pwe_delta, lambda o, y: pwe_by_pairs(o, y, lambda p, n, L: 2 * n), "wrong count"),
    (course.check_pwe_delta, lambda o, y: ex01.pwe_delta_one(o, y) / ((1 + o) * (1 - o)),
     "∂J/∂o"),
    (course.check_pwe_delta, lambda o, y: -ex01.pwe_delta_one(o, y), "sign is flipped"),
    (course.check_pwe_delta, lambda o, y: ex01.pwe_delta_one(o, y) / ((1 + o) * (1 - o))
     * o * (1 - o), "not o(1 − o)"),
    (course.check_pwe_delta, pwe_clearing_y, "modified its input y"),
    (course.check_pwe_delta, lambda o, y: ex01.pwe_delta_one(o, y)[None, :], "shape"),
    (course.check_pwe_delta, lambda o, y: ex01.pwe_delta_one(-o, y), "off"),
    (course.check_gradient_check, one_sided, "one-sided"),
    (course.check_gradient_check, lambda f, x, h: ex01.central_differences(f, x, h) * 2, "twice"),
    (course.check_gradient_check, lambda f, x, h: ex01.central_differences(f, x, 1e-6),
     "step h"),
    (course.check_gradient_check, central_not_restored, "modified its input x"),
    (course.check_gradient_check, lambda f, x, h: ex01.central_differences(f, x, h).ravel(),
     "shape"),
]


# --- notebook 02 ----------------------------------------------------------------------------

def tanh_in_place(W1, W2_1, c, y):
    h = np.tanh(W1, out=W1)
    return (np.exp(-np.tanh(W2_1 * h) + np.tanh(c * h)) + np.sum(y) - 1) / np.sum(y)


def pwe_landscape_over(norm):
    """The pair sum of the PWE landscape divided by ``norm(|y|, |ȳ|, L)``."""
    def pwe_closed_form(W1, W2_1, c, y):
        p, q = int(np.sum(y)), len(y) - int(np.sum(y))
        h = np.tanh(W1)
        pair_sum = q * np.exp(-(np.tanh(W2_1 * h) - np.tanh(c * h))) + (p - 1) * q
        return pair_sum / norm(p, q, len(y))
    return pwe_closed_form


WRONG_02 = [
    (course.check_pwe_landscape, lambda W1, W2_1, c, y: 3 * ex02.pwe_closed_form(W1, W2_1, c, y),
     "times"),
    (course.check_pwe_landscape, lambda W1, W2_1, c, y: (3 * ex02.pwe_closed_form(
        W1, W2_1, c, y) + 1) / 4, "off"),
    (course.check_pwe_landscape, lambda W1, W2_1, c, y: np.exp(-expit(W2_1 * np.tanh(W1))),
     "does not follow the c passed in"),
    (course.check_pwe_landscape, lambda W1, W2_1, c, y: np.exp(np.tanh(W2_1 * np.tanh(W1))),
     "does not follow the c passed in"),
    (course.check_pwe_landscape, lambda W1, W2_1, c, y: np.exp(-np.tanh(W2_1 * np.tanh(W1))),
     "the network in the text"),
    (course.check_pwe_landscape, lambda W1, W2_1, c, y: np.ones((7, 7)), "shape"),
    (course.check_pwe_landscape, tanh_in_place, "modified its input W1"),
    (course.check_pwe_landscape, lambda W1, W2_1, c, y: ex02.pwe_closed_form(W1, W2_1, c,
                                                                             (1, 1, 0, 0)),
     "does not follow the y passed in"),
    (course.check_pwe_landscape, pwe_landscape_over(lambda p, q, L: L), "not by L"),
    (course.check_pwe_landscape, pwe_landscape_over(lambda p, q, L: p * p), "not by |y|²"),
    (course.check_pwe_landscape, pwe_landscape_over(lambda p, q, L: q * q), "not by |ȳ|²"),
    (course.check_pwe_landscape, pwe_landscape_over(lambda p, q, L: 1), "not averaged"),
    (course.check_ce_slope, lambda W1, W2_1: -ex02.ce_dJ_dW2_1(W1, W2_1), "sign"),
    (course.check_ce_slope, lambda W1, W2_1: expit(W2_1 * np.tanh(W1)) - 1, "δ2 alone"),
    (course.check_ce_slope, lambda W1, W2_1: (np.tanh(W2_1 * np.tanh(W1)) - 1) * np.tanh(W1),
     "not tanh"),
    (course.check_ce_slope, lambda W1, W2_1: expit(W2_1 * np.tanh(W1)) * np.tanh(W1),
     "has a label in it"),
    (course.check_ce_slope, lambda W1, W2_1: np.transpose(ex02.ce_dJ_dW2_1(W1, W2_1)),
     "transposed"),
    (course.check_ce_slope, lambda W1, W2_1: (expit(W2_1 * np.tanh(W1)) - 1) * W1, "not its input"),
    (course.check_ce_slope, lambda W1, W2_1: 0.9 * ex02.ce_dJ_dW2_1(W1, W2_1), "off"),
]


# --- notebook 02b ---------------------------------------------------------------------------

def rmsprop_G_in_place(theta, G, g, eta, rho, eps):
    G *= rho
    G += (1 - rho) * g * g
    return theta - eta * g / (np.sqrt(G) + eps), G


def rmsprop_theta_in_place(theta, G, g, eta, rho, eps):
    G = rho * G + (1 - rho) * g * g
    theta -= eta * g / (np.sqrt(G) + eps)
    return theta, G


class EpsilonInside(ex02b.RMSProp):
    def update(self, theta, g, state):
        G = state["mean_square"]
        G[...] = self.rho * G + (1 - self.rho) * g * g
        theta -= self.learning_rate * g / np.sqrt(G + self.epsilon)


class SharedByShape(ex02b.RMSProp):
    """One accumulator per shape: parameters of one shape share it."""

    def new_state(self, theta):
        shared = self.__dict__.setdefault("shared", {})
        return {"mean_square": shared.setdefault(theta.shape, np.zeros_like(theta))}


class SharedByClass(ex02b.RMSProp):
    """The accumulators live on the class: a second rule starts from the first one's."""

    store = {}

    def new_state(self, theta):
        return {"mean_square": self.store.setdefault(theta.shape, np.zeros_like(theta))}


class RowsCopied(ex02b.RMSProp):
    """G is taken as a copy, so the accumulator in the state never changes."""

    def update(self, theta, g, state):
        G = state["mean_square"].copy()
        G *= self.rho
        G += (1 - self.rho) * g * g
        theta -= self.learning_rate * g / (np.sqrt(G) + self.epsilon)


class RowsIgnored(ex02b.RMSProp):
    """Writes its step into the first rows of θ, whichever rows the gradient has."""

    def update(self, theta, g, state):
        G = state["mean_square"]
        G[...] = self.rho * G + (1 - self.rho) * g * g
        step = self.learning_rate * g / (np.sqrt(G) + self.epsilon)
        theta[:1] -= step[:1]


class RhoFixed(ex02b.RMSProp):
    def update(self, theta, g, state):
        G = state["mean_square"]
        G[...] = 0.9 * G + 0.1 * g * g
        theta -= self.learning_rate * g / (np.sqrt(G) + self.epsilon)


class StateNotDict(ex02b.RMSProp):
    def new_state(self, theta):
        return np.zeros_like(theta)


class PlainSGD(ex02b.RMSProp):
    def update(self, theta, g, state):
        theta -= self.learning_rate * g


class UpdateLeftOpen(ex02b.RMSProp):
    def update(self, theta, g, state):
        ...


class AdaGradLike(ex02b.RMSProp):
    def update(self, theta, g, state):
        G = state["mean_square"]
        G += g * g
        theta -= self.learning_rate * g / (np.sqrt(G) + self.epsilon)


class RMSPropStub(ex02b.RMSProp):
    """The exercise as handed out: both methods left as ``...``."""

    def new_state(self, theta):
        ...

    def update(self, theta, g, state):
        ...


class RuleSharedByShape(SharedByShape):
    pass


def momentum_in_place(theta, v, mu, eta, gamma, skipped):
    theta += mu * (1 - mu ** skipped) / (1 - mu) * v
    return theta, mu ** skipped * v


def dropout(keep, scale=lambda rate: 1 / (1 - rate)):
    """An inverted dropout whose kept units are ``keep(h, rate, rng)``, scaled by ``scale``."""
    def answer(h, rate, rng):
        mask = (keep(h, rate, rng) * np.ones(h.shape) * scale(rate)).astype(h.dtype)
        return h * mask, mask
    return answer


def fixed_count_per_row(h, rate, rng):
    """Keeps exactly round((1 − rate) F) units of every document, at random places."""
    keep = round((1 - rate) * h.shape[1])
    return np.argsort(rng.random(h.shape), axis=1) < keep


def fixed_count_per_unit(h, rate, rng):
    """Keeps every unit in exactly round((1 − rate) n) documents."""
    keep = round((1 - rate) * h.shape[0])
    return np.argsort(rng.random(h.shape), axis=0) < keep


def dropout_in_place(h, rate, rng):
    mask = ((rng.random(h.shape) >= rate) / (1 - rate)).astype(h.dtype)
    h *= mask
    return h, mask


WRONG_02B = [
    (course.check_rmsprop, lambda t, G, g, eta, rho, eps: (
        t - eta * g / np.sqrt(rho * G + (1 - rho) * g * g + eps), rho * G + (1 - rho) * g * g),
     "inside the square root"),
    (course.check_rmsprop, lambda t, G, g, eta, rho, eps: (
        t - eta * g / (np.sqrt(G + g * g) + eps), G + g * g), "ρ"),
    (course.check_rmsprop, lambda t, G, g, eta, rho, eps: (
        t - eta * g / (np.sqrt(0.9 * G + 0.1 * g * g) + eps), 0.9 * G + 0.1 * g * g),
     "ρ passed in"),
    (course.check_rmsprop, lambda t, G, g, eta, rho, eps: ex02b.rmsprop_step(t, G, g, eta, rho),
     "ε passed in"),
    (course.check_rmsprop, lambda t, G, g, eta, rho, eps: ex02b.rmsprop_step(t, G, g, 0.01, rho,
                                                                             eps), "η passed in"),
    (course.check_rmsprop, lambda t, G, g, eta, rho, eps: (
        t - eta * g / (np.sqrt(G) + eps), rho * G + (1 - rho) * g * g), "off"),
    (course.check_rmsprop, rmsprop_G_in_place, "modified its input G"),
    (course.check_rmsprop, rmsprop_theta_in_place, "modified its input theta"),
    (course.check_rmsprop, lambda t, G, g, eta, rho, eps: ex02b.rmsprop_step(
        t, G, g, eta, rho, eps)[0], "pair"),
    (course.check_rmsprop, lambda t, G, g, eta, rho, eps: ex02b.rmsprop_step(
        t, G, g, eta, rho, eps)[::-1], "NaN"),
    (course.check_rmsprop_rule, EpsilonInside, "inside the square root"),
    (course.check_rmsprop_rule, SharedByShape, "own accumulator"),
    (course.check_rmsprop_rule, SharedByClass, "off"),
    (course.check_rmsprop_rule, RowsCopied, "starts from 0 at every step"),
    (course.check_rmsprop_rule, RowsIgnored, "off"),
    (course.check_rmsprop_rule, RhoFixed, "off"),
    (course.check_rmsprop_rule, StateNotDict, "must be a dict"),
    (course.check_rmsprop_rule, RMSPropStub, "no answer yet"),
    (course.check_rmsprop_rule, RuleSharedByShape, "own accumulator"),
    (course.check_rmsprop_rule, PlainSGD, "off"),
    (course.check_rmsprop_rule, UpdateLeftOpen, "did not change"),
    (course.check_rmsprop_rule, AdaGradLike, "that is AdaGrad"),
    (course.check_rmsprop_rule, ex02b.rmsprop_step, "must be a class"),
    (course.check_momentum_skip, lambda t, v, mu, eta, gamma, d: (t + d * v, mu ** d * v), "whole v"),
    (course.check_momentum_skip, lambda t, v, mu, eta, gamma, d: (t + 9 * (1 - mu ** d) * v, mu ** d * v),
     "μ/(1 − μ) does not follow"),
    (course.check_momentum_skip, lambda t, v, mu, eta, gamma, d: (t + mu * (1 - mu ** d) / (1 - mu) * v, v),
     "v must shrink"),
    (course.check_momentum_skip, lambda t, v, mu, eta, gamma, d: (
        t + mu * (1 - mu ** d) / (1 - mu) * v, mu ** (d + 1) * v), "off"),
    (course.check_momentum_skip, lambda t, v, mu, eta, gamma, d: (
        t + (1 - mu ** d) / (1 - mu) * v, mu ** d * v), "γ passed in"),
    (course.check_momentum_skip, momentum_in_place, "modified its input theta"),
    (course.check_momentum_skip, lambda t, v, mu, eta, gamma, d: t + mu * (1 - mu ** d) / (1 - mu) * v,
     "pair"),
    (course.check_inverted_dropout, dropout(lambda h, r, g: g.random(h.shape) >= r,
                                            lambda r: 1.0), "not scaled"),
    (course.check_inverted_dropout, dropout(lambda h, r, g: g.random(h.shape) >= r,
                                            lambda r: 1 / r), "1/rate"),
    (course.check_inverted_dropout, dropout(lambda h, r, g: g.random(h.shape) < r),
     "probability rate"),
    (course.check_inverted_dropout, dropout(lambda h, r, g: g.random() >= r), "whole minibatch"),
    (course.check_inverted_dropout, dropout(lambda h, r, g: g.random(h.shape[1]) >= r),
     "for all documents"),
    (course.check_inverted_dropout, dropout(lambda h, r, g: g.random((len(h), 1)) >= r),
     "together"),
    (course.check_inverted_dropout, dropout(lambda h, r, g: np.random.random(h.shape) >= r),
     "generator"),
    (course.check_inverted_dropout, dropout(
        lambda h, r, g: np.random.default_rng(0).random(h.shape) >= r), "generator"),
    (course.check_inverted_dropout, dropout(lambda h, r, g: g.random(h.shape) >= 0.5),
     "of the units"),
    (course.check_inverted_dropout, dropout_in_place, "modified its input h"),
    (course.check_inverted_dropout, dropout(fixed_count_per_row), "every document keeps about "
                                                                  "the same number"),
    (course.check_inverted_dropout, dropout(fixed_count_per_unit), "every unit keeps about "
                                                                   "the same number"),
    (course.check_inverted_dropout, dropout(lambda h, r, g: np.repeat(
        g.random((len(h), h.shape[1] // 2 + 1)) >= r, 2, axis=1)[:, :h.shape[1]]),
     "not independent"),
    (course.check_inverted_dropout, dropout(lambda h, r, g: np.repeat(
        g.random((len(h) // 2 + 1, h.shape[1])) >= r, 2, axis=0)[:len(h)]), "not independent"),
    (course.check_inverted_dropout, lambda h, r, g: ex02b.inverted_dropout(h, r, g)[::-1],
     "mask"),
    (course.check_inverted_dropout, lambda h, r, g: ex02b.inverted_dropout(h, r, g)[0], "pair"),
]


# --- notebooks 03 to 07 ---------------------------------------------------------------------

def pairs(s, y):
    """s_p − s_n for every (relevant p, irrelevant n)."""
    return s[y > 0][:, None] - s[y == 0][None, :]


def rates_in_place(grads, eta0):
    np.square(grads, out=grads)
    return eta0 / (np.sqrt(np.cumsum(grads, axis=0)) + 1e-8)


def best_sorting(curve):
    update, rise = ex04.best_update(curve)
    curve["rankloss"].sort()
    return update, rise


def input_dropout(keep, scale=lambda rate: 1 / (1 - rate)):
    """An input dropout keeping the stored entries ``keep(X, rate, rng)``, scaled by ``scale``."""
    def answer(X, rate, rng):
        kept = np.broadcast_to(keep(X, rate, rng), X.data.shape)
        return sp.csr_matrix((X.data * kept * scale(rate), X.indices, X.indptr), shape=X.shape)
    return answer


def input_dropout_in_place(X, rate, rng):
    X.data *= (rng.random(X.nnz) >= rate) / (1 - rate)
    return X


def per_row_coins(X, rate, rng):
    return np.repeat(rng.random(X.shape[0]) >= rate, np.diff(X.indptr))


def excluded_in_place(Y):
    Y[Y == 0] = 0
    Y.sort(axis=1)
    return ex05.excluded(Y)


def threshold_sorting(scores, y):
    scores.sort()
    return scores[0] - 1


def ridge_centring(Z, t, lam):
    t -= t.mean()
    return ex06.ridge_solve(Z, t, lam)


def threshold_never_all(s, y):
    """The best of the cuts above the top score and between distinct scores, none below all."""
    u = np.unique(s)
    cuts = np.append((u[:-1] + u[1:]) / 2, u[-1] + 1)
    relevant = y > 0
    f1 = [2 * np.sum(relevant & (s > c)) / (relevant.sum() + np.sum(s > c)) for c in cuts]
    return float(cuts[int(np.argmax(f1))])


def coverage_optimistic(s, y):
    return int((s[None, :] > s[y > 0][:, None]).sum(axis=1).max())


WRONG_03_07 = [
    (course.check_rank_loss_one, lambda s, y: np.mean(pairs(s, y) < 0), "tie between"),
    (course.check_rank_loss_one, lambda s, y: np.mean(pairs(s, y) <= 0), "counts ½"),
    (course.check_rank_loss_one, lambda s, y: np.sum(pairs(s, y) < 0) / np.sum(y > 0) ** 2, "off"),
    (course.check_rank_loss_one, lambda s, y: 1 - ex03.rank_loss_one(s, y), "ordered wrongly"),
    (course.check_rank_loss_one, lambda s, y: (np.sum(pairs(s, y) < 0) + 0.5 * np.sum(
        pairs(s, y) == 0)), "divide by |y||ȳ|"),
    (course.check_rank_loss_one, lambda s, y: np.mean(pairs(s, y) > 0), "off"),
    (course.check_rank_loss_one, lambda s, y: ex03.rank_loss_one(np.round(s, 1), y),
     "is off"),
    (course.check_rank_loss_one, lambda s, y: ex03.rank_loss_one(np.round(s, 6), y), "not tied"),
    (course.check_coverage_one, lambda s, y: ex07.coverage_one(np.round(s, 9), y), "not tied"),
    (course.check_rank_loss_one, lambda s, y: np.mean(pairs(s, y) < 0, axis=1), "shape"),
    (course.check_rank_loss_one, lambda s, y: (np.sum(pairs(s, y) < 0) + 0.5 * np.sum(
        pairs(s, y) == 0)) / (np.sum(y > 0) * (6 - np.sum(y > 0))), "off"),
    (course.check_adagrad_rates, lambda g, eta0: eta0 / np.sqrt(np.cumsum(g * g, axis=0)), "ε"),
    (course.check_adagrad_rates, lambda g, eta0: eta0 / (np.abs(g) + 1e-8), "own step"),
    (course.check_adagrad_rates, lambda g, eta0: ex03.effective_rates(g, 0.1), "η0 passed in"),
    (course.check_adagrad_rates, lambda g, eta0: eta0 / (np.sqrt(np.abs(np.cumsum(g, axis=0)))
                                                         + 1e-8), "off"),
    (course.check_adagrad_rates, lambda g, eta0: eta0 / (np.sqrt(np.cumsum(g * g, axis=1))
                                                         + 1e-8), "off"),
    (course.check_adagrad_rates, lambda g, eta0: eta0 / (np.cumsum(g * g, axis=0) + 1e-8),
     "its square root"),
    (course.check_adagrad_rates, rates_in_place, "modified its input grads"),
    (course.check_adagrad_rates, lambda g, eta0: ex03.effective_rates(g, eta0, 1e-6), "ε = 1e-8"),
    (course.check_adagrad_rates, lambda g, eta0: eta0 / np.sqrt(np.cumsum(g * g, axis=0) + 1e-8),
     "outside the root"),
    (course.check_adagrad_rates, lambda g, eta0: ex03.effective_rates(g, eta0).T, "transposed"),
    (course.check_input_dropout, lambda X, r, g: X.toarray() * (g.random(X.shape) >= r) / (1 - r),
     "keep it sparse"),
    (course.check_input_dropout, input_dropout(lambda X, r, g: g.random(X.nnz) >= r,
                                               lambda r: 1.0), "not scaled"),
    (course.check_input_dropout, input_dropout(lambda X, r, g: g.random(X.nnz) >= r,
                                               lambda r: 1 / r), "1/rate"),
    (course.check_input_dropout, input_dropout(lambda X, r, g: (g.random(X.shape[1]) >= r)[
        X.indices]), "for all documents"),
    (course.check_input_dropout, input_dropout(per_row_coins), "together"),
    (course.check_input_dropout, input_dropout(lambda X, r, g: g.random(X.nnz) < r),
     "probability rate"),
    (course.check_input_dropout, input_dropout(lambda X, r, g: np.random.random(X.nnz) >= r),
     "generator"),
    (course.check_input_dropout, input_dropout(lambda X, r, g: g.random() >= r),
     "whole minibatch"),
    (course.check_input_dropout, input_dropout_in_place, "modified its input X"),
    (course.check_input_dropout, lambda X, r, g: sp.csr_matrix(X.toarray() + (
        g.random(X.shape) < 0.01)), "zero input became nonzero"),
    (course.check_best_update, lambda c: (c["updates"][-1], 0.0), "off"),
    (course.check_best_update, lambda c: (int(np.argmin(c["rankloss"])), ex04.best_update(c)[1]),
     "position in the list"),
    (course.check_best_update, lambda c: (ex04.best_update(c)[0], -ex04.best_update(c)[1]),
     "sign"),
    (course.check_best_update, lambda c: (c["updates"][int(np.argmax(c["rankloss"]))], 0.0),
     "off"),
    (course.check_best_update, best_sorting, "modified its input curve"),
    (course.check_best_update, lambda c: ex04.best_update(c)[0], "pair"),
    (course.check_best_update, lambda c: (30, 0.04), "off"),
    (course.check_pwe_excluded, lambda Y: np.count_nonzero(Y, axis=1) == 0, "all relevant"),
    (course.check_pwe_excluded, lambda Y: np.count_nonzero(Y, axis=1) == Y.shape[1],
     "no relevant label"),
    (course.check_pwe_excluded, lambda Y: np.isin(np.count_nonzero(Y, axis=1), (0, 3)),
     "off"),
    (course.check_pwe_excluded, lambda Y: ex05.excluded(Y).astype(int), "dtype"),
    (course.check_pwe_excluded, lambda Y: np.flatnonzero(ex05.excluded(Y)), "shape"),
    (course.check_pwe_excluded, lambda Y: np.count_nonzero(Y, axis=0) == 0, "shape"),
    (course.check_pwe_excluded, excluded_in_place, "modified its input Y"),
    (course.check_average_precision_one, lambda s, y: float(np.mean(
        (s[y > 0][None, :] > s[y > 0][:, None]).sum(1) + 1) / np.mean(
        (s[None, :] > s[y > 0][:, None]).sum(1) + 1)), "off"),
    (course.check_average_precision_one, lambda s, y: float(np.mean(
        ((s[y > 0][None, :] > s[y > 0][:, None]).sum(1) + 1)
        / ((s[None, :] > s[y > 0][:, None]).sum(1) + 1))), "tied scores"),
    (course.check_average_precision_one, lambda s, y: float(np.mean(
        1 / (s[None, :] >= s[y > 0][:, None]).sum(1))), "off"),
    (course.check_average_precision_one, lambda s, y: ex05.average_precision_one(s, y) * np.mean(
        y > 0), "not over all L"),
    (course.check_average_precision_one, lambda s, y: np.atleast_1d(ex05.average_precision_one(s, y)),
     "shape"),
    (course.check_f1_threshold, lambda s, y: 0.5, "F1"),
    (course.check_f1_threshold, lambda s, y: float(np.median(s)), "F1"),
    (course.check_f1_threshold, lambda s, y: float(s.max()), "F1"),
    (course.check_f1_threshold, lambda s, y: np.sort(s), "shape"),
    (course.check_f1_threshold, threshold_never_all, "below the lowest score"),
    (course.check_f1_threshold, threshold_sorting, "modified its input scores"),
    (course.check_ridge, lambda Z, t, lam: np.linalg.lstsq(Z, t, rcond=None)[0], "missing"),
    (course.check_ridge, lambda Z, t, lam: np.linalg.solve(Z.T @ Z + lam * np.eye(6), Z.T @ t),
     "raised"),
    (course.check_ridge, lambda Z, t, lam: ex06.ridge_solve(Z, t, lam / 2), "half"),
    (course.check_ridge, lambda Z, t, lam: ex06.ridge_solve(Z, t, 2 * lam), "twice"),
    (course.check_ridge, lambda Z, t, lam: ex06.ridge_solve(Z, t, 3.0), "λ passed in"),
    (course.check_ridge, lambda Z, t, lam: ex06.ridge_solve(Z, t, lam)[:, None], "shape"),
    (course.check_ridge, lambda Z, t, lam: np.linalg.solve(Z.T @ Z + lam, Z.T @ t), "off"),
    (course.check_ridge, ridge_centring, "modified its input t"),
    (course.check_ridge, lambda Z, t, lam: np.linalg.solve(Z.T @ Z / len(t) + lam * np.eye(
        Z.shape[1]), Z.T @ t / len(t)), "1/(2M)"),
    (course.check_better_than_paper, lambda m, ours, paper: (ours - paper) / abs(paper), "sign"),
    (course.check_better_than_paper, lambda m, ours, paper: ex07.better_than_paper(
        m, ours, paper) * abs(paper), "not relative"),
    (course.check_better_than_paper, lambda m, ours, paper: ex07.better_than_paper(
        m, ours, paper) * abs(paper) / abs(ours), "our value"),
    (course.check_better_than_paper, lambda m, ours, paper: (-1 if m == "rankloss" else 1) * (
        ours - paper) / abs(paper), "sign"),
    (course.check_better_than_paper, lambda m, ours, paper: 100 * ex07.better_than_paper(
        m, ours, paper), "off"),
    (course.check_coverage_one, coverage_optimistic, "at least as high"),
    (course.check_coverage_one, lambda s, y: ex07.coverage_one(s, y) + 1, "1 too large"),
    (course.check_coverage_one, lambda s, y: int((s[y > 0][None, :] >= s[y > 0][:, None]).sum(
        1).max()) - 1, "off"),
    (course.check_coverage_one, lambda s, y: int((s[None, :] >= s[y > 0][:, None]).sum(1).min()) - 1,
     "ranked LAST"),
    (course.check_coverage_one, lambda s, y: (s[None, :] >= s[y > 0][:, None]).sum(1) - 1, "shape"),
    (course.check_coverage_one, lambda s, y: int((s[None, :] > s[y > 0][:, None]).sum(1).max()),
     "tied scores"),
]


# --- notebook 08 ----------------------------------------------------------------------------

def ranks_sorting(values, lower):
    values.sort(axis=1)
    return ex08.average_ranks_by_hand(values, lower)


WRONG_08 = [
    (course.check_average_ranks, lambda v, lower: (np.argsort(np.argsort(
        v if lower else -v, axis=1, kind="stable"), axis=1) + 1).mean(0), "different ranks"),
    (course.check_average_ranks, lambda v, lower: ex08.average_ranks_by_hand(v, True),
     "lower_is_better=False"),
    (course.check_average_ranks, lambda v, lower: ex08.average_ranks_by_hand(v, not lower),
     "wrong way"),
    (course.check_average_ranks, lambda v, lower: scipy.stats.rankdata(
        v if lower else -v, axis=0).mean(axis=1), "shape"),
    (course.check_average_ranks, lambda v, lower: scipy.stats.rankdata(
        v if lower else -v, axis=1).sum(axis=0), "off"),
    (course.check_average_ranks, ranks_sorting, "modified its input values"),
    (course.check_average_ranks, lambda v, lower: scipy.stats.rankdata(
        v if lower else -v, axis=1, method="min").mean(axis=0), "lowest rank"),
    (course.check_friedman, lambda R, N: 12 * N / (len(R) * (len(R) + 1)) * np.sum(np.square(R)),
     "not centred"),
    (course.check_friedman, lambda R, N: ex08.friedman_chi2(np.resize(R, 8), N), "off"),
    (course.check_friedman, lambda R, N: 12.0 * len(R) / (N * (N + 1)) * (
        np.sum(np.square(R)) - N * (N + 1) ** 2 / 4.0), "N and k are swapped"),
    (course.check_friedman, lambda R, N: ex08.friedman_chi2(R, N) / N, "factor N is missing"),
    (course.check_friedman, lambda R, N: round(ex08.friedman_chi2(R, N)), "dtype int"),
    (course.check_critical_difference, lambda k, N, q: np.sqrt(k * (k + 1) / (6 * N)),
     "q_α passed in"),
    (course.check_critical_difference, lambda k, N, q: q * np.sqrt(k * (k + 1) / N), "off"),
    (course.check_critical_difference, lambda k, N, q: Q_ALPHA[0.05][k - 2] * np.sqrt(
        k * (k + 1) / (6.0 * N)), "q_α passed in"),
    (course.check_critical_difference, lambda k, N, q: q / np.sqrt(k * (k + 1) / (6.0 * N)),
     "off"),
    (course.check_critical_difference, lambda k, N, q: q * np.sqrt(k * (k - 1) / (6.0 * N)),
     "off"),
]

WRONG = WRONG_01 + WRONG_02 + WRONG_02B + WRONG_03_07 + WRONG_08

#: Fragments of code that no message may show.
CODE = re.compile(r"np\.|numpy|scipy|\.T\b|@|cumsum|linalg|solve\(|argmin|rankdata|sqrt\(|\*\*|"
                  r"lambda|\breturn\b|rng\.|\[:, None\]|eye\(|axis=")


def solution_lines():
    """Every statement of the worked solutions' function bodies, as source text."""
    lines = set()
    for path in SOLUTIONS.glob("ex*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.stmt) and not isinstance(
                    node, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Expr)):
                text = ast.unparse(node).removeprefix("return ")
                lines.update(part for part in text.splitlines() if len(part) >= 10)
    return lines


SOLUTION_LINES = solution_lines()


def momentum_by_steps(theta, v, mu, eta, gamma, skipped):
    for _ in range(skipped):
        v = mu * v - eta * gamma * theta
        theta = theta + v
    return theta, v


#: Right answers written differently from the worked solutions: each must pass.
RIGHT = [
    (course.check_rmsprop_rule, RMSPropRule),
    (course.check_inverted_dropout, lambda h, r, g: (lambda m: (h * m, m))(
        dropout_module.hidden_mask(h.shape, r, g, dtype=h.dtype))),
    (course.check_inverted_dropout, lambda h, r, g: (lambda m: (h * m, m))(
        (g.binomial(1, 1 - r, size=h.shape) / (1 - r)).astype(h.dtype))),
    (course.check_input_dropout, lambda X, r, g: dropout_module.apply_input_mask(
        X, dropout_module.input_mask(X, r, g))),
    (course.check_input_dropout, lambda X, r, g: X.multiply(
        (g.random(X.shape) >= r) / (1 - r)).tocsr().astype(X.dtype)),
    (course.check_delta1, lambda d2, W2, h: (W2 @ d2.T).T * (1 + h) * (1 - h)),
    (course.check_input_gradient, lambda X, d1: (X.T @ sp.csr_matrix(d1)) / X.shape[0]),
    (course.check_rank_loss_one, lambda s, y: float(np.mean((pairs(s, y) < 0) + 0.5 * (
        pairs(s, y) == 0)))),
    (course.check_ridge, lambda Z, t, lam: np.linalg.lstsq(
        np.vstack([Z, np.sqrt(lam) * np.eye(Z.shape[1])]),
        np.concatenate([t, np.zeros(Z.shape[1])]), rcond=None)[0]),
    (course.check_average_ranks, lambda v, lower: scipy.stats.rankdata(
        -v if lower else v, axis=1).mean(axis=0) * -1 + v.shape[1] + 1),
]


@pytest.mark.parametrize("grader, right", RIGHT,
                         ids=[f"{g.__name__}-{i}" for i, (g, _) in enumerate(RIGHT)])
def test_a_right_answer_written_differently_passes(grader, right, capsys):
    assert grader(right), shown(capsys)


def test_there_are_at_least_a_hundred_wrong_answers_over_every_exercise():
    assert len(WRONG) >= 100
    elsewhere = ("ex01b_build_it_from_zero", "ex06b_measures_and_baseline")   # their own files
    assert {g for g, _, _ in WRONG} == {g for g, stem, _ in EXERCISES if stem not in elsewhere}


@pytest.mark.parametrize("grader, wrong, phrase", WRONG,
                         ids=[f"{g.__name__}-{i}" for i, (g, _, _) in enumerate(WRONG)])
def test_a_wrong_answer_is_rejected_with_a_message_naming_the_problem(grader, wrong, phrase,
                                                                      capsys):
    assert not judged(grader, wrong)
    out = shown(capsys)
    assert out.startswith("NOT YET"), out
    assert phrase in out, out
    assert not CODE.search(out.split(" raised ")[0]), out
    assert not [line for line in SOLUTION_LINES if line in out], out


@pytest.mark.parametrize("grader, stem, name", EXERCISES, ids=[g.__name__ for g, _, _ in EXERCISES])
def test_every_worked_solution_passes_with_a_short_stable_line(grader, stem, name, capsys):
    function = getattr(solutions(stem), name)
    assert judged(grader, function)
    first = shown(capsys)
    assert judged(grader, function)
    assert shown(capsys) == first
    assert first.startswith("PASS     ") and first.count("\n") == 1 and len(first) < 200


@pytest.mark.parametrize("grader", [g for g, _, _ in EXERCISES],
                         ids=[g.__name__ for g, _, _ in EXERCISES])
def test_an_exercise_left_open_gets_the_same_short_hint(grader, capsys):
    assert not grader(lambda *args: None)
    out = shown(capsys)
    assert out.startswith("NOT YET") and (grading.NO_ANSWER in out or "class" in out), out


def test_an_exception_inside_the_answer_is_the_students_and_the_graders_own_is_not(capsys):
    def raising(d2, W2, h):
        raise KeyError("oops")
    assert not course.check_delta1(raising)
    assert "your function raised KeyError" in shown(capsys)
    report = grading.grade("a check", lambda: {}["a key the grader lacks"])
    assert report.status == "ERROR" and not report
    assert "not a fault of your answer" in shown(capsys)


def test_an_error_of_the_answer_is_reported_on_one_short_line(capsys):
    def raising(d2, W2, h):
        raise ValueError("first line\n" + "x" * 500)
    assert not course.check_delta1(raising)
    out = shown(capsys)
    assert out.count("\n") == 1 and len(out) < 300 and "first line x" in out


def test_a_square_answer_that_is_transposed_is_told_so(capsys):
    reference = np.arange(9.0).reshape(3, 3)
    report = grading.grade("a check", lambda: grading.judge(reference.T, reference, "A"))
    assert not report and report.detail == "A is transposed"


def test_run_passes_the_generator_itself_and_copies_arrays():
    rng, x = np.random.default_rng(0), np.zeros(3)
    seen = grading.run(lambda a, g: (a, g), ("x", x), ("rng", rng))
    assert seen[1] is rng and seen[0] is not x


def test_dispersion_tells_shared_coins_from_independent_ones():
    rng = np.random.default_rng(1)
    independent = (rng.random((50, 40)) < 0.3).sum(axis=1)
    shared = 40 * (rng.random(50) < 0.3)
    assert grading.dispersion(independent, np.full(50, 40), 0.3) < 2
    assert grading.dispersion(shared, np.full(50, 40), 0.3) > 10
