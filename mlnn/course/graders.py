"""The graders of notebooks 01–08 (01b's in :mod:`~mlnn.course.scratch`, 06b's in
:mod:`~mlnn.course.measures`): each a call of :func:`~mlnn.course.grading.check` with its random
cases (shapes, and every value an answer could hard-code), its reference (mlnn's own code where
mlnn has it) and its table of mistakes. Dropout is judged by the distribution of its masks.
"""

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from scipy.stats import rankdata

from mlnn.course.grading import (NO_ANSWER, Mistake, NotYet, StudentError, as_array,
                                 binomial_z, call, case_rngs, dispersion, expect_class,
                                 expect_dtype, expect_items, expect_shape, expect_tuple, grade,
                                 judge, label_rows, make_grader, pristine, run, sparse_rows,
                                 within)
from mlnn.course.pairwise import PWE_MISTAKES, pwe_reference
from mlnn.course.ranking import (RANKING_MISTAKES, SCORE_KINDS, measure_of, random_scores,
                                 scores_first)
from mlnn.course.rules import STEPS, rule_problem
from mlnn.evaluation.metrics import (EXTRA_MEASURES, LOWER_IS_BETTER, MEASURES,
                                     bipartition_measures)
from mlnn.evaluation.thresholds import optimal_thresholds, ridge
from mlnn.figures.landscapes import loss_surface, surface_gradient
from mlnn.nn.activations import get_activation
from mlnn.nn.gradcheck import numerical_gradient
from mlnn.nn.lazy_updates import LazyRows
from mlnn.nn.network import RowSparseGradient
from mlnn.nn.optimizers import AdaGrad
from mlnn.paper.ranks import average_ranks, friedman_test

#: Random cases per deterministic grader.
CASES = 8


# ---------------------------------------------------------------------------------------------
# notebook 01: the derivatives

def _tanh_delta1(d2, W2, h):
    return (d2 @ W2.T) * get_activation("tanh").grad(np.arctanh(h), h)


DELTA1_MISTAKES = [
    Mistake("the derivative of the hidden activation is missing", lambda d2, W2, h: d2 @ W2.T),
    Mistake("that is the sigmoid's derivative; these hidden units are tanh, whose derivative is "
            "written with h differently", lambda d2, W2, h: (d2 @ W2.T) * h * (1 - h)),
    Mistake("tanh' is 1 − h², not 1 − h", lambda d2, W2, h: (d2 @ W2.T) * (1 - h)),
    Mistake("the sign is flipped", lambda d2, W2, h: -_tanh_delta1(d2, W2, h)),
    Mistake("tanh is applied twice: h is already tanh(z1)",
            lambda d2, W2, h: (d2 @ W2.T) * (1 - np.tanh(h) ** 2))]


def _delta1_cases():
    """``delta1_tanh(delta2, W2, h)`` → δ1 = (δ2 W2ᵀ) ∘ (1 − h²) for tanh hidden units."""
    for rng in case_rngs(1, CASES):
        n, F, L = rng.integers(1, 8), rng.integers(2, 7), rng.integers(2, 7)
        yield (f"δ1 for n = {n}, F = {F}, L = {L}", [
            ("delta2", rng.normal(size=(n, L))), ("W2", rng.normal(size=(F, L))),
            ("h", np.tanh(rng.normal(size=(n, F))))])


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


def _of_one(batch):
    """A δ2 function of documents (z2, o, Y) as one of one document (o, y)."""
    return lambda o, y: batch(np.arctanh(o)[None, :], np.asarray(o)[None, :],
                              np.asarray(y)[None, :])[0]


def _pwe_document_cases():
    """``pwe_delta_one(o, y)`` → δ2 of one document for PWE over tanh outputs (1-d arrays, Eq. 10,
    Sec. 3.4)."""
    for i, rng in enumerate(case_rngs(3, CASES)):
        L = int(rng.integers(3, 11))
        size = {0: 1, 1: L // 2, 2: L - 1}.get(i, rng.integers(1, L))   # |y| = 1, ≈ |ȳ|, …
        y = np.zeros(L)
        y[rng.choice(L, size=size, replace=False)] = 1.0
        yield (f"δ2 for L = {L}, |y| = {size}, |ȳ| = {L - size}",
               [("o", np.tanh(rng.normal(size=L))), ("y", y)])


check_pwe_delta = make_grader(   # the last mistake, a division by n, means nothing for one document
    "check_pwe_delta", "PWE δ2 of one document", _of_one(pwe_reference), _pwe_document_cases,
    [Mistake(m.hint, _of_one(m.answer)) for m in PWE_MISTAKES[:-1]],
    scale="the sum over pairs is normalised by the wrong count (try a document with |y| ≠ |ȳ|)")


def _one_sided(f, x, h):
    units = np.eye(x.size).reshape((x.size,) + x.shape)
    return np.array([(f(x + h * e) - f(x)) / h for e in units]).reshape(x.shape)


def _gradient_check_cases():
    """``central_differences(f, x, h)`` → the array of (f(x + h e_i) − f(x − h e_i)) / 2h."""
    shapes = ((3,), (2, 3), (4, 1), (3, 2), (5,), (2, 2, 2))
    steps = (1e-6, 1e-2, 1e-4, 1e-3, 1e-5, 3e-2)
    for rng, shape, h in zip(case_rngs(4, len(shapes)), shapes, steps):
        x = rng.normal(size=shape)
        A = rng.normal(size=(x.size, x.size))

        def f(x, A=A):                          # a smooth function: Σ tanh(A vec(x))²
            return float(np.sum(np.tanh(A @ np.reshape(x, -1)) ** 2))
        yield (f"the numerical gradient for x of shape {shape}, h = {h:g}",
               [("f", f), ("x", x), ("h", h)])


check_gradient_check = make_grader("check_gradient_check", "central differences",
                                numerical_gradient, _gradient_check_cases, [
    Mistake("that is a one-sided difference; use both sides of x", _one_sided),
    Mistake("twice the central difference: the two points are 2h apart",
            lambda f, x, h: 2 * numerical_gradient(f, x, h))])


# ---------------------------------------------------------------------------------------------
# notebook 02: loss landscapes on the network of Fig. 2 (x = 1, one tanh hidden unit)

#: The label vectors of the PWE landscapes: the first label relevant, |y| ≠ |ȳ| in most, L from
#: 3 to 7 (a normaliser |y||ȳ| = L = |y|² = |ȳ|² only for y = (1, 1, 0, 0)).
LANDSCAPE_LABELS = ((1, 1, 0, 0), (1, 0, 0), (1, 1, 1, 0, 0), (1, 0, 0, 0, 0, 0),
                    (1, 1, 0, 1, 0, 1, 1), (1, 0, 1))


def _landscape_cases(title, names):
    """(W1, W2_1, c, y) grids of several shapes: a non-square meshgrid, a 1-d array, a scalar;
    the labels y of :data:`LANDSCAPE_LABELS`."""
    shapes = ((5, 8), (9, 3), (6,), (), (4, 4), (7,))
    for rng, shape, y in zip(case_rngs(5, len(shapes)), shapes, LANDSCAPE_LABELS):
        values = {"W1": rng.uniform(-3, 3, size=shape), "W2_1": rng.uniform(-3, 3, size=shape),
                  "c": float(rng.uniform(-2, 2)), "y": y}
        where = f" for y = {y}" if "y" in names else ""
        yield (f"{title} on an array of shape {shape}{where}",
               [(name, values[name]) for name in names])


def _on_grid(values, W1, W2_1):
    """The entries (W1[i], W2_1[i]) of a surface function ``values(grid_W1, grid_W2_1)``."""
    a, b = np.append(np.ravel(W1), 0.5), np.append(np.ravel(W2_1), 0.5)   # grids of ≥ 2 points
    return np.diag(values(a, b))[:-1].reshape(np.shape(W1))


def _sigmoid_z2(W1, W2_1):
    return expit(W2_1 * np.tanh(W1))


def _pwe_landscape(W1, W2_1, c, y):
    return _on_grid(lambda a, b: loss_surface("pwe", "tanh", a, b, y=y, c=c).J, W1, W2_1)


def _pwe_pairs(W1, W2_1, c, y, norm=lambda p, q, L: p * q, output=np.tanh, shared=True,
               others=True):
    """PWE's J in closed form, or with one mistake: the pair sum |ȳ| exp(−(o_1 − o_c)) (the pairs
    of label 1) + (|y| − 1)|ȳ| (the ``others``, each exp(0)), divided by ``norm(|y|, |ȳ|, L)``;
    o = ``output``(z), o_c = 0 unless ``shared``."""
    h = np.tanh(W1)
    o_1, o_c = output(W2_1 * h), output(c * h) if shared else 0.0
    p, q = int(np.sum(y)), len(y) - int(np.sum(y))
    return (q * np.exp(-(o_1 - o_c)) + (p - 1) * q * others) / norm(p, q, len(y))


def _pwe_landscape_cases():
    """``pwe_closed_form(W1, W2_1, c, y)`` → PWE's J for labels y (label 1 relevant) and the
    other output weights W2_2 = … = W2_L = c."""
    yield from _landscape_cases("J", ("W1", "W2_1", "c", "y"))


def _pwe_normalised_by(norm):
    return lambda W1, W2_1, c, y: _pwe_pairs(W1, W2_1, c, y, norm)


check_pwe_landscape = make_grader("check_pwe_landscape", "PWE landscape in closed form",
                               _pwe_landscape, _pwe_landscape_cases, [
    Mistake("that is J of the network in the text (y = (1, 0, 0, 0), c = 0); this one has the "
            "labels y and the weights c", lambda W1, W2_1, c, y: np.exp(-np.tanh(W2_1 * np.tanh(
                W1)))),
    Mistake("J divides the pair sum by |y||ȳ|, the number of (relevant, irrelevant) pairs, not "
            "by L", _pwe_normalised_by(lambda p, q, L: L)),
    Mistake("J divides the pair sum by |y||ȳ|, the number of (relevant, irrelevant) pairs, not "
            "by |y|²", _pwe_normalised_by(lambda p, q, L: p * p)),
    Mistake("J divides the pair sum by |y||ȳ|, the number of (relevant, irrelevant) pairs, not "
            "by |ȳ|²", _pwe_normalised_by(lambda p, q, L: q * q)),
    Mistake("the pair sum is not averaged: J divides it by |y||ȳ|, the number of (relevant, "
            "irrelevant) pairs", _pwe_normalised_by(lambda p, q, L: 1)),
    Mistake("the pairs of the other relevant labels count too: each (p, n) with o_p = o_n = o_c "
            "adds exp(0) = 1", lambda W1, W2_1, c, y: _pwe_pairs(W1, W2_1, c, y, others=False)),
    Mistake("the outputs that share the weight c are not 0 here: o_l = tanh(c h) for l > 1",
            lambda W1, W2_1, c, y: _pwe_pairs(W1, W2_1, c, y, shared=False)),
    Mistake("the output units of PWE are tanh, not the sigmoid",
            lambda W1, W2_1, c, y: _pwe_pairs(W1, W2_1, c, y, output=expit))],
                               scale="check how the pair terms are counted and averaged")


def _ce_slope(W1, W2_1):
    return _on_grid(lambda a, b: surface_gradient(loss_surface("ce", "tanh", a, b))[1], W1, W2_1)


def _ce_slope_cases():
    """``ce_dJ_dW2_1(W1, W2_1)`` → ∂J/∂W2_1 of CE, y = 1 for the one output."""
    yield from _landscape_cases("∂J/∂W2_1", ("W1", "W2_1"))


check_ce_slope = make_grader("check_ce_slope", "CE slope along W2_1", _ce_slope, _ce_slope_cases, [
    Mistake("the sign is flipped", lambda W1, W2_1: -_ce_slope(W1, W2_1)),
    Mistake("δ2 alone: ∂z2/∂W2_1 contributes a factor", lambda W1, W2_1: _sigmoid_z2(W1, W2_1) - 1),
    Mistake("the factor from z2 = W2_1 h is the hidden unit's output h, not its input W1",
            lambda W1, W2_1: (_sigmoid_z2(W1, W2_1) - 1) * W1),
    Mistake("CE's output unit is the sigmoid, not tanh",
            lambda W1, W2_1: (np.tanh(W2_1 * np.tanh(W1)) - 1) * np.tanh(W1)),
    Mistake("δ2 = o − y has a label in it: y = 1 for this output",
            lambda W1, W2_1: _sigmoid_z2(W1, W2_1) * np.tanh(W1))])


# ---------------------------------------------------------------------------------------------
# notebooks 03-07: measures, thresholds, curves

def _documents(seed, count, n, what):
    """(scores, y) of one document at a time, from ``count`` cases of n documents: L from 3 to
    12, labels of several dtypes, every document with a relevant and an irrelevant label, the
    scores of each kind."""
    for rng, dtype, kind in zip(case_rngs(seed, count), (np.int8, np.float64, np.int32, np.int64),
                                SCORE_KINDS):
        L = int(rng.integers(3, 13))
        scores, Y = random_scores(rng, n, L, kind), label_rows(rng, n, L).astype(dtype)
        for s, y in zip(scores, Y):
            yield (f"{what} with L = {L}, |y| = {np.sum(y > 0)} and {kind}",
                   [("scores", s), ("y", y)])


def _one_document_grader(label, measure, seed, noun=None):
    """The grader of ``measure`` of one document (notebooks 03, 05 and 07), with 06b's table."""
    noun = noun or measure

    def cases():
        yield from _documents(seed, 4, 12, f"the {noun} of a document")
    cases.__doc__ = f"``(scores, y)`` of one document → the {noun} (Sec. 4)."
    return make_grader(label, f"{noun} of one document", scores_first(measure_of(measure)), cases,
                    [Mistake(m.hint, scores_first(m.answer)) for m in RANKING_MISTAKES[measure]],
                    kind="biuf")


check_rank_loss_one = _one_document_grader("check_rank_loss_one", "rank loss", 11)
check_average_precision_one = _one_document_grader("check_average_precision_one", "MAP", 12,
                                          "average precision")
check_coverage_one = _one_document_grader("check_coverage_one", "coverage", 13)


def _excluded_cases():
    """``excluded(Y)`` → the boolean mask of documents without a (relevant, irrelevant) pair."""
    for rng, dtype in zip(case_rngs(14, 4), (np.int64, np.float64, np.int32, np.int8)):
        n, L = rng.integers(4, 12), rng.integers(2, 9)
        Y = (rng.random((n, L)) < rng.uniform(0.2, 0.8)).astype(dtype)
        Y[0], Y[1] = 0, 1                       # one without relevant labels, one all relevant
        yield f"the mask for n = {n}, L = {L}", [("Y", Y[rng.permutation(n)])]


check_pwe_excluded = make_grader(
    "check_pwe_excluded", "PWE's excluded documents",
    lambda Y: np.isin(np.count_nonzero(Y, axis=1), (0, Y.shape[1])), _excluded_cases, [
        Mistake("a document whose labels are all relevant has no pair either",
                lambda Y: np.count_nonzero(Y, axis=1) == 0),
        Mistake("a document with no relevant label has no pair either",
                lambda Y: np.count_nonzero(Y, axis=1) == Y.shape[1])], kind="b")


def _best_update(curve, position=False, sign=1):
    best = int(np.argmin(curve["rankloss"]))
    return (best if position else curve["updates"][best],
            sign * (curve["rankloss"][-1] - curve["rankloss"][best]))


def _best_update_cases():
    """``best_update(curve)`` → (update of the lowest rank loss, final − best rank loss)."""
    for rng in case_rngs(15, 5):
        size = int(rng.integers(2, 12))
        curve = {"updates": np.cumsum(rng.integers(20, 400, size=size)).tolist(),
                 "rankloss": rng.uniform(0.05, 0.4, size=size).round(6).tolist()}
        yield f"of {size} evaluations", [("curve", curve)]


check_best_update = make_grader("check_best_update", "where over-fitting starts", _best_update,
                             _best_update_cases, [
    Mistake("that is the position in the list, not the update's number",
            lambda c: _best_update(c, position=True)),
    Mistake("the sign is flipped: it is final minus best", lambda c: _best_update(c, sign=-1))],
                             expect=expect_items(("the update", "final − best rank loss"),
                                                 kind="biuf"))


def _threshold_cases():
    """``best_threshold_one(scores, y)`` → a threshold t whose prediction s > t has the best F1."""
    yield from _documents(17, 3, 10, "a document")


def _expect_best_f1(answer, expected, what, wrongs, inputs):
    """Any threshold whose F1 is the best F1 of the document; −∞ predicts every label, which
    is right where that is F1-optimal."""
    array = as_array(answer, "the threshold")
    if array.size != 1:
        raise NotYet(f"the threshold must be one number, not an array of shape {array.shape}")
    t = float(array.reshape(()))
    if np.isnan(t):
        raise NotYet("the threshold is NaN")
    s, y = inputs["scores"], inputs["y"][None, :]
    yours, best = (bipartition_measures(y, s[None, :] > cut)["miF"] for cut in (t, expected))
    if yours < best - 1e-12:
        every = (": here predicting every label is best, so try a threshold below the lowest "
                 "score too" if np.all(s > expected) else "")
        raise NotYet(f"on {what} your threshold {t:.3f} gives F1 {yours:.3f}, and {best:.3f} is "
                     f"possible{every}")


check_f1_threshold = make_grader("check_f1_threshold", "F1-optimal threshold of one document",
                              lambda s, y: optimal_thresholds(s[None, :], y[None, :])[0],
                              _threshold_cases, expect=_expect_best_f1)


def _ridge(Z, t, lam):
    return ridge(Z, t, lam, tol=1e-14)[0]


def _ridge_cases():
    """``ridge_solve(Z, t, lam)`` → θ minimising ‖Z θ − t‖² + λ ‖θ‖² (Eq. 5 as mlnn solves it)."""
    for rng, lam in zip(case_rngs(18, 5), (3.0, 0.5, 100.0, 20.0, 1.0)):
        M, K = int(rng.integers(8, 50)), int(rng.integers(2, 8))
        yield (f"θ for Z of shape {(M, K)}, λ = {lam}",
               [("Z", rng.normal(size=(M, K))), ("t", rng.normal(size=M)), ("lam", lam)])


check_ridge = make_grader("check_ridge", "ridge regression of Eq. 5", _ridge, _ridge_cases, [
    Mistake("the penalty λ‖θ‖² is missing", lambda Z, t, lam: _ridge(Z, t, 0.0)),
    Mistake("the penalty counts half: λ‖θ‖² has weight λ here",
            lambda Z, t, lam: _ridge(Z, t, lam / 2)),
    Mistake("the penalty counts twice: λ‖θ‖² has weight λ here",
            lambda Z, t, lam: _ridge(Z, t, 2 * lam)),
    Mistake("that θ averages the squared error over the M documents (the paper's 1/(2M) "
            "scale); Eq. 5 is solved here with the plain sum of squares",
            lambda Z, t, lam: _ridge(Z, t, lam * len(t)))])


def _better(measure, ours, paper, sign=1):
    return sign * (-1 if measure in LOWER_IS_BETTER else 1) * (ours - paper) / paper


def _better_cases():
    """``better_than_paper(measure, ours, paper)`` → the relative difference, > 0 when ours is
    better."""
    rng = np.random.default_rng(19)
    for measure in MEASURES + EXTRA_MEASURES:
        ours, paper = (float(v) for v in rng.uniform(0.02, 20, size=2).round(4))
        yield (f"the difference for {measure}",
               [("measure", measure), ("ours", ours), ("paper", paper)])


check_better_than_paper = make_grader("check_better_than_paper", "better than the paper by",
                                   _better, _better_cases, [
    Mistake("the sign is wrong for this measure (is lower or higher better?)",
            lambda m, ours, paper: _better(m, ours, paper, -1)),
    Mistake("it is not relative to the paper's value",
            lambda m, ours, paper: _better(m, ours, paper) * paper),
    Mistake("it is relative to our value, not the paper's",
            lambda m, ours, paper: _better(m, ours, paper) * paper / ours)], kind="biuf")


# ---------------------------------------------------------------------------------------------
# notebook 08: comparing methods over datasets (Demšar 2006)

def _rank_cases():
    """``average_ranks_by_hand(values, lower_is_better)`` → R_j, the mean rank (1 = best, ties
    averaged) of each method (column) over the datasets (rows)."""
    for rng, lower in zip(case_rngs(20, 6), (True, False) * 3):
        N, k = rng.integers(2, 9), rng.integers(2, 9)
        yield (f"R for {N} datasets × {k} methods with lower_is_better={lower}",
               [("values", rng.integers(1, 5, size=(N, k)) / 10.0), ("lower_is_better", lower)])


def _ranks_with(method):
    """Average ranks whose ties take ``method`` of scipy.stats.rankdata ("ordinal": broken by
    position, "min" / "max": the lowest / highest rank of the tie) instead of their mean."""
    def ranks(values, lower_is_better):
        oriented = np.asarray(values) if lower_is_better else -np.asarray(values)
        return rankdata(oriented, method=method, axis=1).mean(axis=0)
    return ranks


check_average_ranks = make_grader("check_average_ranks", "average ranks with ties", average_ranks,
                               _rank_cases, [
    Mistake("the ranks run the wrong way", lambda v, lower: average_ranks(v, not lower)),
    Mistake("tied values get different ranks (by their position): ties share the mean of the "
            "ranks they span", _ranks_with("ordinal")),
    Mistake("tied values share the lowest rank of their tie; they share the mean of the ranks "
            "they span", _ranks_with("min")),
    Mistake("tied values share the highest rank of their tie; they share the mean of the ranks "
            "they span", _ranks_with("max"))])


def _friedman_cases():
    """``friedman_chi2(R, N)`` → Friedman's χ²_F from the average ranks R of k methods over N
    datasets (Demšar 2006, Sec. 3.2.2)."""
    for rng, k in zip(case_rngs(21, 10), (2, 3, 5, 7, 11, 4, 14, 6, 9, 20)):
        N = int(rng.integers(2, 40))
        yield (f"χ²_F for k = {k} methods, N = {N}",
               [("R", average_ranks(rng.random((N, k)), True)), ("N", N)])


def _chi2(R, N, k=None, scale=1.0, centre=True, pairs=1):
    """χ²_F = 12 N / (k (k + 1)) (Σ R_j² − k (k + 1)² / 4), or with one mistake: another ``k``
    (the size of R by default), a ``scale``, no ``centre`` term, k (k + ``pairs``)."""
    k = len(R) if k is None else k
    centre_term = len(R) * (len(R) + 1) ** 2 / 4.0 if centre else 0.0
    return scale * 12.0 * N / (k * (k + pairs)) * (np.sum(np.square(R)) - centre_term)


def _iman_davenport(R, N):
    return friedman_test(R, N).F


check_friedman = make_grader("check_friedman", "Friedman's statistic",
                          lambda R, N: friedman_test(R, N).chi2, _friedman_cases, [
    Mistake("Σ R_j² is not centred: subtract k (k + 1)² / 4, the value of Σ R_j² when every "
            "method has the mean rank (k + 1)/2", lambda R, N: _chi2(R, N, centre=False)),
    Mistake("the factor is 12 N / (k (k + 1)), not 12 N / (k (k − 1))",
            lambda R, N: _chi2(R, N, pairs=-1)),
    Mistake("N and k are swapped: N counts the datasets, k the methods (the length of R)",
            lambda R, N: 12.0 * len(R) / (N * (N + 1)) * (np.sum(np.square(R))
                                                          - N * (N + 1) ** 2 / 4.0)),
    Mistake("the factor N is missing: χ²_F grows with the number of datasets",
            lambda R, N: _chi2(R, N) / N),
    Mistake("that is Iman and Davenport's F_F; the exercise asks for Friedman's χ²_F",
            _iman_davenport)])


def _cd_cases():
    """``nemenyi_cd(k, N, q_alpha)`` → Nemenyi's CD, q_α times the standard deviation of a
    difference of two average ranks (Demšar 2006)."""
    for rng, k in zip(case_rngs(22, 8), (2, 3, 6, 10, 4, 15, 8, 25)):
        N = int(rng.integers(2, 60))
        q = float(rng.uniform(1.5, 4.0))
        yield f"CD for k = {k}, N = {N}, q_α = {q:.3f}", [("k", k), ("N", N), ("q_alpha", q)]


check_critical_difference = make_grader(
    "check_critical_difference", "Nemenyi's critical difference",
    lambda k, N, q: q * np.sqrt(k * (k + 1) / (6.0 * N)), _cd_cases, [
        Mistake("the square root is missing: the CD is q_α times a standard deviation, the root "
                "of the variance k (k + 1) / (6 N)", lambda k, N, q: q * k * (k + 1) / (6.0 * N)),
        Mistake("the standard error is that of one average rank; a difference of two average "
                "ranks varies more", lambda k, N, q: q * np.sqrt((k * k - 1) / (12.0 * N)))])


# ---------------------------------------------------------------------------------------------
# notebook 02b: update rules and dropout (Sec. 3.5); notebook 03: AdaGrad's rates

def _rmsprop_literal(theta, G, g, eta, rho, eps, inside=False, adagrad=False, swapped=False):
    """One RMSProp step by a literal loop over the entries, or with ε ``inside`` the root, with
    AdaGrad's sum of squares (``adagrad``), or ρ and 1 − ρ ``swapped``."""
    theta, G = np.array(theta, dtype=float), np.array(G, dtype=float)
    keep = 1 - rho if swapped else rho
    for i in np.ndindex(theta.shape):
        G[i] = G[i] + g[i] ** 2 if adagrad else keep * G[i] + (1 - keep) * g[i] ** 2
        theta[i] -= eta * g[i] / (np.sqrt(G[i] + eps) if inside else np.sqrt(G[i]) + eps)
    return theta, G


def _rmsprop_steps(step, *named, name):
    """(θ, G) after the student's ``step`` took every gradient of the case in turn."""
    values = dict(named)
    state = (values["theta"], values["G"])
    for g in values["grads"]:
        state = expect_tuple(run(step, ("theta", state[0]), ("G", state[1]), ("g", g),
                                 *[(k, values[k]) for k in ("eta", "rho", "eps")],
                                 name=name), ("θ", "G"))
        state = tuple(as_array(a, "θ and G") for a in state)
    return state


#: (η, ρ, ε) of the RMSProp cases: ε large enough that where it is added shows.
RMSPROP_SETTINGS = ((0.01, 0.9, 1e-8), (0.1, 0.5, 0.1), (0.003, 0.99, 1.0), (0.05, 0.7, 1e-3))

def _rmsprop_cases():
    """``rmsprop_step(theta, G, g, eta, rho, eps)`` → new (θ, G), inputs unchanged; six steps."""
    for rng, (eta, rho, eps) in zip(case_rngs(6, 4), RMSPROP_SETTINGS):
        shape = (rng.integers(2, 6), rng.integers(2, 5))
        grads = rng.normal(size=(STEPS,) + shape) * (rng.random(shape) < 0.7)
        yield (f"after {STEPS} steps with η = {eta}, ρ = {rho}, ε = {eps:g}", [
            ("theta", rng.normal(size=shape)), ("G", rng.random(shape) * rng.integers(0, 2)),
            ("grads", grads), ("eta", eta), ("rho", rho), ("eps", eps)])


INSIDE = "ε is inside the square root; it belongs outside, added to the root"
SWAPPED = ("ρ and 1 − ρ are swapped: G keeps the fraction ρ of its old value and takes 1 − ρ of "
           "the new g²")

check_rmsprop = make_grader("check_rmsprop", "RMSProp against a dense loop", _rmsprop_literal,
                         _rmsprop_cases, [
    Mistake(INSIDE, lambda t, G, g, eta, rho, eps: _rmsprop_literal(t, G, g, eta, rho, eps, True)),
    Mistake(SWAPPED, lambda t, G, g, eta, rho, eps: _rmsprop_literal(t, G, g, eta, rho, eps,
                                                                    swapped=True))],
                         runner=_rmsprop_steps, expect=expect_items(("θ", "G"), (1, 0)),
                         name="rmsprop_step")


def rmsprop_rule(keep_G=True, shared=False, rebind=False, **mistake):
    """RMSProp as mlnn writes a rule, ``new_state(theta)`` and ``update(theta, g, state)`` in
    place (by the literal loop); or with one mistake: G not kept, one G ``shared`` by the
    parameters of a shape, the state's G replaced (``rebind``) instead of written into, or a
    ``mistake`` of :func:`_rmsprop_literal`."""
    class RMSProp:
        def __init__(self, learning_rate, rho=0.9, epsilon=1e-8):
            self.learning_rate, self.rho, self.epsilon = learning_rate, rho, epsilon
            self.shared = {}

        def new_state(self, theta):
            if shared:
                return {"mean_square": self.shared.setdefault(theta.shape, np.zeros_like(theta))}
            return {"mean_square": np.zeros_like(theta)}

        def update(self, theta, g, state):
            G = state["mean_square"]
            theta[...], new_G = _rmsprop_literal(theta, G, g, self.learning_rate, self.rho,
                                                 self.epsilon, **mistake)
            if rebind:
                state["mean_square"] = new_G
            elif keep_G:
                G[...] = new_G
    return RMSProp


RMSPropRule = rmsprop_rule()


#: The methods of an update rule, as :class:`mlnn.nn.lazy_updates.LazyRows` calls them.
RULE_METHODS = {"new_state": "new_state(theta)", "update": "update(theta, g, state)"}


def _drive_rule(Rule, *named, name):
    """The parameters after the rule's steps, run where mlnn runs a rule: in
    :class:`mlnn.nn.lazy_updates.LazyRows`, W1's gradients row-sparse."""
    settings, start, sequence = (value for _, value in named)
    expect_class(Rule, "RMSProp", RULE_METHODS)
    rule = call(Rule, *settings, name=name)
    params = pristine(start)
    for key, theta in params.items():
        state = call(rule.new_state, theta.copy(), name="new_state")
        if state is None:
            raise NotYet(NO_ANSWER)
        if not isinstance(state, dict) or not all(
                np.shape(v) == theta.shape for v in state.values()):
            raise NotYet("the state of one parameter, new_state(theta), must be a dict of arrays "
                         "shaped like theta (AdaGrad's holds its sum of squares)")
    executor = LazyRows(rule, weight_decay=0.0)
    for grads in sequence:
        call(executor.step, params, {key: RowSparseGradient(*g, params[key].shape)
                                     if isinstance(g, tuple) else g
                                     for key, g in grads.items()}, name="update")
    for key in params:
        if np.array_equal(params[key], start[key]):
            raise NotYet(f"{key} did not change in {STEPS} steps: update must change θ (and "
                         "its state) in place")
    return params


def _rule_cases():
    """``RMSProp(learning_rate, rho, epsilon)`` with ``new_state(theta)`` and ``update(theta, g,
    state)``: six steps on four parameters (W1's gradients row-sparse, b1 and b2 of one shape),
    run as mlnn's lazy executor runs a rule, against the literal loop."""
    for rng, settings in zip(case_rngs(7, 3), RMSPROP_SETTINGS[1:]):
        params, sequence = rule_problem(rng, 7, 3, 3)
        yield (f"after {STEPS} steps with η, ρ, ε = {settings}",
               [("settings", settings), ("params", params), ("sequence", sequence)])


check_rmsprop_rule = make_grader("check_rmsprop_rule", "RMSProp as an mlnn update rule",
                              RMSPropRule, _rule_cases, [
    Mistake("G starts from 0 at every step; keep it in the state and update that array in place",
            rmsprop_rule(keep_G=False)),
    Mistake("every parameter needs its own accumulator", rmsprop_rule(shared=True)),
    Mistake("G sums the squares (that is AdaGrad); RMSProp's G forgets the old ones",
            rmsprop_rule(adagrad=True)),
    Mistake(INSIDE, rmsprop_rule(inside=True)),
    Mistake(SWAPPED, rmsprop_rule(swapped=True)),
    Mistake("update replaces state[\"mean_square\"] by a new array, which the executor never "
            "sees (it keeps the arrays new_state gave); write the new G into that array, in place",
            rmsprop_rule(rebind=True))],
                              runner=_drive_rule, expect=expect_items(("b1", "b2", "W2", "W1")),
                              name="RMSProp(learning_rate, rho, epsilon)")


def _momentum_skipped(theta, v, mu, eta, gamma, skipped):
    """Classical momentum with zero ∂J/∂θ and weight decay γ: Δ steps g = γ θ, v ← μ v − η g,
    θ ← θ + v make (θ, v) ← A^Δ (θ, v) with A = [[1 − η γ, μ], [−η γ, μ]] (tested equal to the
    literal loop)."""
    A = np.linalg.matrix_power(np.array([[1 - eta * gamma, mu], [-eta * gamma, mu]]), skipped)
    theta, v = np.asarray(theta, dtype=float), np.asarray(v, dtype=float)
    return A[0, 0] * theta + A[0, 1] * v, A[1, 0] * theta + A[1, 1] * v


STEPS_HINT = ("your catch-up does work for every skipped step (a loop over the Δ steps, or arrays "
              "of Δ entries): the closed form costs the same whatever Δ is")


def run_closed_form(function, *named, name="function"):
    """:func:`~mlnn.course.grading.run`, with the work of a case of a million skipped steps
    bounded: no loop over the steps, whatever form it takes."""
    if dict(named)["skipped"] >= 10 ** 6:
        within(function, *named, name=name, memory=100_000, lines=500, hint=STEPS_HINT)
    return run(function, *named, name=name)


def _momentum_cases():
    """``momentum_skip(theta, v, mu, eta, gamma, skipped)`` → (θ, v) after ``skipped`` classical
    momentum steps with zero ∂J/∂θ and weight decay γ, in closed form."""
    settings = ((0.9, 0.1, 0.0, 0), (0.5, 0.1, 0.0, 1), (0.3, 0.05, 0.0, 2), (0.75, 0.1, 0.0, 7),
                (0.99, 0.01, 0.0, 40), (0.6, 0.2, 0.5, 1), (0.9, 0.1, 0.01, 7),
                (0.6, 0.3, 0.2, 40), (0.9, 0.05, 1e-3, 40), (0.99, 0.01, 0.0, 10 ** 6))
    for rng, (mu, eta, gamma, skipped) in zip(case_rngs(8, len(settings)), settings):
        theta = rng.normal(size=rng.integers(1, 6))
        v = rng.normal() * rng.uniform(0.5, 2, size=theta.shape)
        yield (f"after Δ = {skipped} steps with μ = {mu}, η = {eta}, γ = {gamma}", [
            ("theta", theta), ("v", v), ("mu", mu), ("eta", eta), ("gamma", gamma),
            ("skipped", skipped)])


check_momentum_skip = make_grader("check_momentum_skip", "momentum's catch-up in closed form",
                               _momentum_skipped, _momentum_cases, [
    Mistake("θ moves by the whole v at every skipped step, but v shrinks by μ at each",
            lambda t, v, mu, eta, gamma, d: (t + d * v, mu ** d * v)),
    Mistake("the factor μ/(1 − μ) does not follow the μ passed in",
            lambda t, v, mu, eta, gamma, d: (t + 9 * (1 - mu ** d) * v, mu ** d * v)),
    Mistake("v must shrink by μ at every skipped step",
            lambda t, v, mu, eta, gamma, d: (t + mu * (1 - mu ** d) / (1 - mu) * v, v)),
    Mistake("one step too many: Δ skipped steps apply the step Δ times, not Δ + 1",
            lambda t, v, mu, eta, gamma, d: _momentum_skipped(t, v, mu, eta, gamma, d + 1)),
    Mistake("one step too few: Δ skipped steps apply the step Δ times, not Δ − 1",
            lambda t, v, mu, eta, gamma, d: _momentum_skipped(t, v, mu, eta, gamma,
                                                               max(d - 1, 0))),
    Mistake("v is one step ahead of θ: after Δ steps v has shrunk by μ^Δ, not μ^(Δ + 1)",
            lambda t, v, mu, eta, gamma, d: (_momentum_skipped(t, v, mu, eta, gamma, d)[0],
                                             _momentum_skipped(t, v, mu, eta, gamma, d + 1)[1])),
    Mistake("the weight decay is missing: a skipped step still has the gradient γ θ, which "
            "changes v and θ",
            lambda t, v, mu, eta, gamma, d: _momentum_skipped(t, v, mu, eta, 0, d))],
                               expect=expect_items(("θ", "v")), runner=run_closed_form)


#: The dropout rates the graders try, with the draws at each: tenths, a quarter, and a rate off
#: the percent grid (coins drawn on a coarse grid keep the wrong fraction there).
RATES = {0.2: 20, 0.5: 20, 0.7: 20, 0.1: 20, 0.25: 20, 0.0151: 4}

#: The shape of h at each rate: never one shape only, large where few units are dropped.
H_SHAPES = {0.2: (30, 40), 0.5: (17, 23), 0.7: (64, 9), 0.1: (5, 50), 0.25: (30, 40),
            0.0151: (120, 160)}


def judge_scale(kept, original, rate, what):
    """The kept values of inverted dropout: ``original`` scaled by 1/(1 − rate)."""
    judge(kept, original / (1 - rate), f"the scale of a kept entry in {what}", [
        (original, "the kept entries are not scaled"),
        (original / rate, "the kept entries are scaled by 1/rate; the scale must keep each "
                          "entry's expected value")],
          scale="a kept entry is scaled by 1/(1 − rate)")


def judge_kept(kept, rate, column, trials, noun="units"):
    """Judge boolean masks ``kept`` (draws × documents × columns) by their distribution:
    per-document, per-column and per-call counts binomial in both directions (no coin shared by
    a row or column, no fixed count), no coin a copy of another, neighbours independent, and
    the kept fraction 1 − rate."""
    count, total = kept.sum(), trials.sum() * len(kept)
    q = min(max(count / total, 0.001), 0.999)               # the observed kept fraction
    by_row = np.mean([dispersion(k.sum(axis=1), trials.sum(axis=1), q) for k in kept])
    by_column = np.mean([dispersion(k.sum(axis=0), trials.sum(axis=0), q) for k in kept])
    if by_row > 3 and by_column > 3:
        raise NotYet(f"at rate {rate} the whole minibatch shares one coin: draw one for every "
                     f"{column} of every document")
    if by_column > 3:
        raise NotYet(f"at rate {rate} each {column} is kept or dropped for all documents at once: "
                     "draw a separate coin for every document")
    if by_row > 3:
        raise NotYet(f"at rate {rate} each document keeps or drops all its {column}s together: "
                     f"draw a separate coin for every {column}")
    if by_row < 0.3 or by_column < 0.3:
        one = "document" if by_row < 0.3 else column
        raise NotYet(f"at rate {rate} every {one} keeps about the same number of {noun}: with "
                     "an independent coin for each, that number varies from draw to draw")
    if dispersion(kept.sum(axis=(1, 2)), np.full(len(kept), trials.sum()), q) < 0.1:
        raise NotYet(f"at rate {rate} every call keeps the same number of {noun}: with an "
                     "independent coin for each, the number kept varies from call to call")
    if _shared_coins_z(kept, trials > 0, q) > 8:
        raise NotYet(f"at rate {rate} some coins are copies of others, not independent (the "
                     f"mask repeats itself): draw one coin for every {column} of every document")
    for axis, name in ((2, f"neighbouring {column}s of a document"),
                       (1, f"neighbouring documents for one {column}")):
        z = _neighbours_z(kept, trials > 0, axis, q)
        if abs(z) > 6:
            raise NotYet(f"at rate {rate} {name} are kept together too "
                         f"{'often' if z > 0 else 'rarely'}: their coins are not independent")
    if abs(binomial_z(count, total, 1 - rate)) > 5:
        swapped = abs(binomial_z(count, total, rate)) < 5
        raise NotYet(f"at rate {rate} you keep {count / total:.2%} of the {noun}: " + (
            "you keep with probability rate; rate is the probability of dropping" if swapped
            else f"each should be dropped with probability {rate} (a coin drawn on a coarse "
                 "grid, such as tenths or percent, cannot be compared with every rate)"))


def _shared_coins_z(kept, present, q):
    """The largest z-score, over the distances d ≥ 1 in storage order, of how often the coins of
    entries d apart agree (summed over the draws): a coin copied from another (a mask resized
    from fewer coins, rows or columns repeated) shows at its distance."""
    coins = np.array([k[present] for k in kept], dtype=float) - q
    size = coins.shape[1]
    spectrum = np.fft.rfft(coins, 2 * size, axis=1)
    agreement = np.fft.irfft(spectrum * spectrum.conj(), 2 * size, axis=1)[:, :size].sum(axis=0)
    lags = np.arange(1, max(size - 50, 2))
    spread = np.sqrt(len(kept) * (size - lags)) * q * (1 - q)
    return float(np.max(np.abs(agreement[lags]) / spread))


def _neighbours_z(kept, present, axis, q):
    """The z-score of how often two neighbours along ``axis`` (both present) are both kept,
    against q² for independent coins."""
    size = kept.shape[axis]
    first, second = (np.take(kept, range(a, a + size - 1), axis=axis) for a in (0, 1))
    both = np.take(present, range(size - 1), axis=axis - 1) & np.take(
        present, range(1, size), axis=axis - 1)
    return binomial_z((first & second & both).sum(), both.sum() * len(kept), q * q)


def _inverted_kept(inverted_dropout, h, rate, rng):
    """The kept units of one call, after checking a pair, the mask's shape and dtype as
    returned, its values 0 or 1/(1 − rate) and h ∘ mask."""
    what = f"the mask at rate {rate}"
    try:
        answer = run(inverted_dropout, ("h", h), ("rate", rate), ("rng", rng))
    except StudentError as error:
        if "broadcast" in str(error):
            raise NotYet(f"{what} does not fit h of shape {h.shape}: draw it with h's shape, "
                         "whatever shape h has") from None
        raise
    dropped, mask = expect_tuple(answer, ("h ∘ mask", "mask"))
    mask = as_array(mask, what)
    expect_shape(mask, h.shape, what)
    expect_dtype(mask, h, what, "f")
    judge_scale(mask[mask != 0], np.ones(np.count_nonzero(mask)), rate, what)
    judge(dropped, h * mask, f"h ∘ mask at rate {rate}")
    return mask > 0


def _input_kept(input_dropout, X, rate, rng):
    """The kept stored entries of one call (a grid like X), after checking type, shape, dtype
    as returned, zeros and the scale."""
    answer, what = run(input_dropout, ("X", X), ("rate", rate), ("rng", rng)), \
        f"the dropped-out X at rate {rate}"
    if answer is None:
        raise NotYet(NO_ANSWER)
    if not sp.issparse(answer):
        raise NotYet(f"{what} is a {type(answer).__name__}; keep it sparse (a CSR matrix like X)")
    dense, original = as_array(answer, what), X.toarray()
    expect_shape(dense, original.shape, what)
    expect_dtype(dense, original, what, "f")
    if np.any(dense[original == 0] != 0):
        raise NotYet(f"{what}: a zero input became nonzero")
    judge_scale(dense[dense != 0], original[dense != 0], rate, what)
    return dense != 0


def _check_dropout(title, kept, given, draws, column, noun):
    """Judge ``kept(x, rate, rng)``, the kept entries of one call on ``given(rate)``, at every
    rate: ``draws(rate)`` calls from one generator, judged by their distribution; then the
    masks must come from the generator passed in."""
    def attempt():
        for rate in RATES:
            x, rng = given(rate), np.random.default_rng(9)
            present = x.toarray() != 0 if sp.issparse(x) else np.ones(np.shape(x), dtype=bool)
            first, again, other = (kept(x, rate, np.random.default_rng(seed))
                                   for seed in (11, 11, 12))
            if not np.array_equal(first, again):
                raise NotYet("two generators with the same seed gave different masks: draw the "
                             "coins from the generator rng passed in (not from NumPy's global "
                             "random state)")
            if np.array_equal(first, other):
                raise NotYet("generators with different seeds gave the same mask: draw the coins "
                             "from the generator rng passed in, not from one of your own")
            judge_kept(np.array([kept(x, rate, rng) for _ in range(draws(rate))]), rate, column,
                       present.astype(float), noun)
        return (f"rates {', '.join(map(str, RATES))}: kept fraction, independence across "
                f"{column}s, documents and calls, the generator passed in; inputs unchanged")
    return bool(grade(title, attempt))


def check_inverted_dropout(inverted_dropout):
    """``inverted_dropout(h, rate, rng)`` → (h ∘ mask, mask), mask entries 0 or 1/(1 − rate)
    in h's dtype, each unit of each document kept independently with probability 1 − rate,
    drawn from ``rng``; h of several shapes."""
    return _check_dropout(
        "inverted dropout", lambda h, rate, rng: _inverted_kept(inverted_dropout, h, rate, rng),
        lambda rate: np.random.default_rng(9).uniform(0.1, 2.0, size=H_SHAPES[rate]),
        RATES.get, "unit", "units")


#: The X of the input dropout grader: 3,000 stored entries.
INPUT_X = sparse_rows(np.random.default_rng(16), 120, 100, density=0.25)


def check_input_dropout(input_dropout):
    """``input_dropout(X, rate, rng)`` → CSR X (X's dtype) with each stored value kept
    ×1/(1 − rate) or dropped, independently, with the coins drawn from ``rng``."""
    return _check_dropout(
        "input dropout on a sparse X",
        lambda X, rate, rng: _input_kept(input_dropout, X, rate, rng), lambda rate: INPUT_X,
        lambda rate: 12, "feature", "stored entries")


def _adagrad_rates(grads, eta0):
    """η0 / (√G_t + ε) after each step, by mlnn's AdaGrad rule on one row of D entries."""
    rule, theta = AdaGrad(eta0), np.zeros(grads.shape[1])
    state, rates = rule.new_state(theta), []
    for g in grads:
        rule.update(theta, g, state)
        rates.append(eta0 / (np.sqrt(state["sum_squares"]) + rule.epsilon))
    return np.array(rates).reshape(grads.shape)


def _rates_cases():
    """``effective_rates(grads, eta0)`` → (T, D) AdaGrad step sizes η0 / (√G_t + ε) after each
    step, G_t the sum of squares of the gradients up to t (Sec. 3.5)."""
    for rng, eta0 in zip(case_rngs(10, 5), (0.1, 0.5, 0.03, 1.0, 0.2)):
        T = int(rng.integers(1, 12))
        D = int(rng.choice([d for d in range(1, 8) if d != T]))    # not square
        grads = rng.normal(size=(T, D)) * (rng.random((T, D)) < 0.5)
        yield f"the rates for T = {T} steps, D = {D}, η0 = {eta0}", [("grads", grads),
                                                                     ("eta0", eta0)]


check_adagrad_rates = make_grader("check_adagrad_rates", "AdaGrad's per-feature learning rates",
                               _adagrad_rates, _rates_cases, [
    Mistake("each rate uses only the gradient of its own step; AdaGrad accumulates all steps so "
            "far", lambda grads, eta0: eta0 / (np.abs(grads) + 1e-8)),
    Mistake("they are right where a gradient has been seen and off where none has yet: guard "
            "the division with ε = 1e-8, as mlnn's AdaGrad does",
            lambda grads, eta0: eta0 / (np.sqrt(np.cumsum(grads ** 2, axis=0)) + 1e-6)),
    Mistake("the rate divides by G itself; AdaGrad divides by its square root, √G + ε",
            lambda grads, eta0: eta0 / (np.cumsum(grads ** 2, axis=0) + 1e-8)),
    Mistake("ε is added to √G, outside the root",
            lambda grads, eta0: eta0 / np.sqrt(np.cumsum(grads ** 2, axis=0) + 1e-8))],
                               nonfinite="are infinite or NaN where no gradient has been seen "
                                         "yet: the small ε that guards the division is missing")
