"""Graders for the notebooks' exercises: each takes the student's function and says pass or why not.

Every ``check_*`` function tries the student's function on several random cases that vary the
shapes and every value an answer could hard-code (|y| ≠ |ȳ|, n > 1, dropout rates other than 0.5,
several μ, η0, ρ, ε, λ and q_α, several parameters, row-sparse gradients), against mlnn's own
implementation or a literal loop built from pristine copies of the inputs. It prints one line —
``PASS`` with the number of cases, or ``NOT YET`` with what is wrong, never the code — and returns
True or False. Random answers (dropout) are judged by their distribution: the dropped fraction at
several rates, independence across units and documents, and use of the generator passed in.

A grader never raises: an exercise left as ``...`` (which returns None), a function that raises,
an answer that changes its inputs or has the wrong shape or dtype is reported, so a notebook
always runs top to bottom; a failure of the grader itself is reported as such
(:mod:`mlnn.course.grading`). The worked solutions in ``notebooks/solutions/`` pass every grader
(``tests/test_exercises.py``), and plausible wrong answers fail (``tests/test_wrong_answers.py``).
"""

import numpy as np
import scipy.sparse as sp

from mlnn.course.grading import (NO_ANSWER, NotYet, as_array, case_rngs, close, expect_array,
                                 expect_shape, grade, judge, judge_shape, label_rows, pair, run,
                                 scale_of, sparse_rows)
# notebook 02b's graders live in mlnn.course.updates; the notebooks call them from here
from mlnn.course.updates import (RATES, check_adagrad_rates, check_inverted_dropout,
                                 check_momentum_skip, check_rmsprop, check_rmsprop_optimizer,
                                 judge_generator, judge_kept)
from mlnn.evaluation.metrics import LOWER_IS_BETTER, MEASURES, ranking_measures
from mlnn.evaluation.thresholds import optimal_thresholds, ridge
from mlnn.figures.landscapes import loss_surface, surface_gradient
from mlnn.nn.activations import get_activation
from mlnn.nn.gradcheck import numerical_gradient
from mlnn.nn.losses import PairwiseExponential
from mlnn.paper.ranks import average_ranks, critical_difference, friedman_test

#: Random cases per deterministic grader.
CASES = 8


# ---------------------------------------------------------------------------------------------
# notebook 01: the derivatives

def check_delta1(delta1_tanh):
    """``delta1_tanh(delta2, W2, h)`` → δ1 = (δ2 W2ᵀ) ∘ (1 − h²) for tanh hidden units (Sec. 3)."""
    tanh = get_activation("tanh")

    def attempt():
        for rng in case_rngs(1, CASES):
            n, F, L = rng.integers(1, 8), rng.integers(2, 7), rng.integers(2, 7)
            delta2, W2 = rng.normal(size=(n, L)), rng.normal(size=(F, L))
            z1 = rng.normal(size=(n, F))
            h = tanh.fn(z1)
            answer = run(delta1_tanh, ("delta2", delta2), ("W2", W2), ("h", h))
            back = delta2 @ W2.T
            judge(answer, back * tanh.grad(z1, h), f"δ1 for n = {n}, F = {F}, L = {L}", [
                (back, "the derivative of the hidden activation is missing"),
                (back * h * (1 - h), "that is the sigmoid's derivative; these hidden units are "
                                     "tanh, whose derivative is written with h differently"),
                (-back * tanh.grad(z1, h), "the sign is flipped"),
                (back * (1 - np.tanh(h) ** 2), "tanh is applied twice: h is already tanh(z1)")])
        return f"{CASES} random cases (n, F, L varied), inputs unchanged"
    return grade("δ1 for tanh hidden units", attempt).passed


def check_input_gradient(grad_W1_dense):
    """``grad_W1_dense(X, delta1)`` → the dense D × F matrix ∂J/∂W1 = Xᵀ δ1 / n (Sec. 3)."""
    def attempt():
        for rng, n in zip(case_rngs(2, CASES), (1, 6, 2, 9, 3, 13, 5, 4)):
            D, F = n + rng.integers(2, 8), rng.integers(2, 6)
            X, delta1 = sparse_rows(rng, n, D), rng.normal(size=(n, F))
            answer = run(grad_W1_dense, ("X", X), ("delta1", delta1))
            reference = np.asarray(X.T @ delta1) / n
            what = f"∂J/∂W1 for a minibatch of n = {n}, D = {D}, F = {F}"
            array = as_array(answer, what)
            expect_shape(array, reference.shape, what)
            c = scale_of(array, reference)
            if c is not None and np.isclose(c, n):
                raise NotYet(f"{what} is n times too large: J is the mean over the minibatch")
            if c is not None:
                raise NotYet(f"{what} is {c:.3g} times the right gradient: the factor must "
                             "follow the minibatch")
            expect_array(array, reference, what)
        return f"{CASES} random cases (n from 1 to 13), inputs unchanged"
    return grade("∂J/∂W1 with the minibatch mean", attempt).passed


def _pwe_cases():
    """(o, y) pairs of one document: L from 3 to 10, |y| from 1 to L − 1, first |y| ≠ |ȳ|."""
    cases = []
    for i, rng in enumerate(case_rngs(3, CASES)):
        L = int(rng.integers(3, 11))
        size = {0: 1, 1: L // 2, 2: L - 1}.get(i, rng.integers(1, L))    # |y| = 1, ≈ |ȳ|, |ȳ| = 1
        y = np.zeros(L)
        y[rng.choice(L, size=size, replace=False)] = 1.0
        cases.append((np.tanh(rng.normal(size=L)), y))
    return cases


def check_pwe_delta(pwe_delta_one):
    """``pwe_delta_one(o, y)`` → δ2 of one document for PWE over tanh outputs (1-d arrays,
    Eq. 3 and Sec. 3.4)."""
    def attempt():
        for o, y in _pwe_cases():
            answer = run(pwe_delta_one, ("o", o), ("y", y))
            z2 = np.arctanh(o)[None, :]
            reference = PairwiseExponential("pairwise").delta(z2, o[None, :], y[None, :])[0]
            p, n = int(y.sum()), int(len(y) - y.sum())
            what = f"δ2 for L = {len(y)}, |y| = {p}, |ȳ| = {n}"
            array = judge_shape(answer, reference, what)
            if close(array, reference / (1 - o ** 2)):
                raise NotYet(f"{what}: that is ∂J/∂o; δ2 = ∂J/∂z2 also needs the derivative of "
                             "the tanh output")
            if close(array, -reference):
                raise NotYet(f"{what}: the signs of the relevant and irrelevant labels are swapped")
            c = scale_of(array, reference)
            if c is not None:
                raise NotYet(f"{what} is {c:.3g} times the right value: the sum over pairs is "
                             "normalised by the wrong count (try a document with |y| ≠ |ȳ|)")
            expect_array(array, reference, what)
        return f"{CASES} random documents (L from 3 to 10, |y| ≠ |ȳ|), inputs unchanged"
    return grade("PWE δ2 of one document", attempt).passed


def _smooth(A, shape):
    """f(x) = Σ tanh(A vec(x))², a smooth function of an array x of ``shape``."""
    def f(x):
        return float(np.sum(np.tanh(A @ np.reshape(x, -1)) ** 2))
    return f


def check_gradient_check(central_differences):
    """``central_differences(f, x, h)`` → the array of (f(x + h e_i) − f(x − h e_i)) / 2h."""
    shapes = ((3,), (2, 3), (4, 1), (3, 2), (5,), (2, 2, 2))
    steps = (1e-6, 1e-2, 1e-4, 1e-3, 1e-5, 3e-2)

    def attempt():
        for rng, shape, h in zip(case_rngs(4, len(shapes)), shapes, steps):
            x = rng.normal(size=shape)
            f = _smooth(rng.normal(size=(x.size, x.size)), shape)
            answer = run(central_differences, ("f", f), ("x", x), ("h", h))
            reference = numerical_gradient(f, x, h)
            units = np.eye(x.size).reshape((x.size,) + shape)
            forward = np.array([(f(x + h * e) - f(x)) / h for e in units]).reshape(shape)
            judge(answer, reference, f"the numerical gradient for x of shape {shape}, h = {h:g}", [
                (forward, "that is a one-sided difference; use both sides of x"),
                (2 * reference, "twice the central difference: the two points are 2h apart"),
                (numerical_gradient(f, x, 1e-6 if h != 1e-6 else 1e-2),
                 "it does not follow the step h passed in")])
        return f"{len(shapes)} random cases (shapes and h varied), x unchanged"
    return grade("central differences", attempt).passed


# ---------------------------------------------------------------------------------------------
# notebook 02: loss landscapes

def _landscape_grids():
    """(W1, W2_1) grids of several shapes: a non-square meshgrid, a 1-d array, a scalar."""
    cases = []
    for rng, shape in zip(case_rngs(5, 4), ((5, 8), (9, 3), (6,), ())):
        cases.append((rng.uniform(-3, 3, size=shape), rng.uniform(-3, 3, size=shape)))
    return cases


def _on_grid(values, W1, W2_1):
    """The entries (W1[i], W2_1[i]) of a surface function ``values(grid_W1, grid_W2_1)``."""
    a, b = np.append(np.ravel(W1), 0.5), np.append(np.ravel(W2_1), 0.5)   # grids of ≥ 2 points
    return np.diag(values(a, b))[:-1].reshape(np.shape(W1))


def check_pwe_landscape(pwe_closed_form):
    """``pwe_closed_form(W1, W2_1)`` → J on the Fig. 2 network (x = 1, y = (1, 0, 0, 0), c = 0)."""
    def attempt():
        for W1, W2_1 in _landscape_grids():
            answer = run(pwe_closed_form, ("W1", W1), ("W2_1", W2_1))
            reference = _on_grid(lambda a, b: loss_surface("pwe", "tanh", a, b).J, W1, W2_1)
            what = f"J on an array of shape {np.shape(W1)}"
            array = judge_shape(answer, reference, what)
            c = scale_of(array, reference)
            if c is not None:
                raise NotYet(f"{what} is {c:.3g} times the right value: check how the pair terms "
                             "are counted and averaged")
            expect_array(array, reference, what)
        return "4 random grids (meshgrid, 1-d, scalar), inputs unchanged"
    return grade("PWE landscape in closed form", attempt).passed


def check_ce_slope(ce_dJ_dW2_1):
    """``ce_dJ_dW2_1(W1, W2_1)`` → ∂J/∂W2_1 of CE on the Fig. 2 network, tanh hidden unit."""
    def attempt():
        for W1, W2_1 in _landscape_grids():
            answer = run(ce_dJ_dW2_1, ("W1", W1), ("W2_1", W2_1))
            reference = _on_grid(lambda a, b: surface_gradient(loss_surface("ce", "tanh", a, b))[1],
                                 W1, W2_1)
            what = f"∂J/∂W2_1 on an array of shape {np.shape(W1)}"
            h = np.tanh(W1)
            z2 = W2_1 * h
            sigmoid = 1 / (1 + np.exp(-z2))
            judge(answer, reference, what, [
                (-reference, "the sign is flipped"),
                (sigmoid - 1, "δ2 alone: ∂z2/∂W2_1 contributes a factor"),
                ((sigmoid - 1) * W1, "the factor from z2 = W2_1 h is the hidden unit's output h, "
                                     "not its input W1"),
                ((np.tanh(z2) - 1) * h, "CE's output unit is the sigmoid, not tanh"),
                (sigmoid * h, "δ2 = o − y has a label in it: y = 1 for this output")])
        return "4 random grids (meshgrid, 1-d, scalar), inputs unchanged"
    return grade("CE slope along W2_1", attempt).passed


# ---------------------------------------------------------------------------------------------
# notebooks 03-07: curves, measures, thresholds

def _documents(seed, count=4, n=12):
    """(scores, Y) for ``count`` cases of n documents: L from 3 to 12, scores rounded so that
    ties occur, labels of several dtypes, every document with a relevant and an irrelevant."""
    cases = []
    for rng, dtype in zip(case_rngs(seed, count), (np.int8, np.float64, np.int32, np.int64)):
        L = int(rng.integers(3, 13))
        scores = np.round(rng.random((n, L)), 1)
        cases.append((scores, label_rows(rng, n, L).astype(dtype)))
    return cases


MEASURE_NAMES = {"rankloss": "the rank loss", "MAP": "the average precision",
                 "coverage": "the coverage"}


def _rank_loss_mistakes(s, y, reference):
    """What a rank loss with a known mistake returns for one document, and what is wrong."""
    d = s[y > 0][:, None] - s[y == 0][None, :]
    return [(np.mean(d < 0), "a tie between a relevant and an irrelevant label counts ½"),
            (np.mean(d <= 0), "a tie between a relevant and an irrelevant label counts ½"),
            (reference * d.size, "divide by |y||ȳ|, the number of (relevant, irrelevant) pairs"),
            (1 - reference, "count the pairs ordered wrongly, not those ordered rightly")]


def _off_by_one(s, y, reference):
    """A count one too large or too small (coverage, average precision)."""
    return [(reference + 1, "it is 1 too large"), (reference - 1, "it is 1 too small")]


def _per_document(measure_one, measure, seed, name, mistakes=_off_by_one):
    """Compare ``measure_one(scores, y)`` with mlnn's ``measure`` document by document, then
    averaged over the documents of each case; ``mistakes(s, y, reference)`` names known wrong
    answers."""
    for scores, Y in _documents(seed):
        values = []
        for s, y in zip(scores, Y):
            answer = run(measure_one, ("scores", s), ("y", y), name=name)
            reference = ranking_measures(y[None, :].astype(int), s[None, :])[measure]
            tie = " and tied scores" if len(np.unique(s)) < len(s) else ""
            what = (f"{MEASURE_NAMES[measure]} of a document with L = {len(y)}, "
                    f"|y| = {np.sum(y > 0)}{tie}")
            judge(answer, reference, what, mistakes(s, y, reference), kind="biuf")
            values.append(float(answer))
        judge(np.mean(values), ranking_measures(Y.astype(int), scores)[measure],
              f"the mean {MEASURE_NAMES[measure][4:]} of {len(Y)} documents")
    return "4 cases of 12 random documents (L from 3 to 12, ties), inputs unchanged"


def check_rank_loss(rank_loss_one):
    """``rank_loss_one(scores, y)`` → Eq. 1 for one document (ties count ½)."""
    return grade("rank loss of one document",
                 lambda: _per_document(rank_loss_one, "rankloss", 11, "rank_loss_one",
                                       _rank_loss_mistakes)).passed


def check_average_precision(average_precision_one):
    """``average_precision_one(scores, y)`` → the document's average precision (ties
    pessimistic, Sec. 4)."""
    return grade("average precision of one document",
                 lambda: _per_document(average_precision_one, "MAP", 12,
                                       "average_precision_one")).passed


def check_coverage(coverage_one):
    """``coverage_one(scores, y)`` → max_{k ∈ y} rank(k) − 1 with rank(k) = #{l : s_l ≥ s_k}."""
    return grade("coverage of one document",
                 lambda: _per_document(coverage_one, "coverage", 13, "coverage_one")).passed


def check_pwe_excluded(excluded):
    """``excluded(Y)`` → the boolean mask of documents PWE leaves out (no (relevant, irrelevant)
    pair: |y||ȳ| = 0)."""
    def attempt():
        for rng, dtype in zip(case_rngs(14, 4), (np.int64, np.float64, np.int32, np.int8)):
            n, L = rng.integers(4, 12), rng.integers(2, 9)
            Y = (rng.random((n, L)) < rng.uniform(0.2, 0.8)).astype(dtype)
            Y[0], Y[1] = 0, 1                       # one without relevant labels, one all relevant
            Y = Y[rng.permutation(n)]
            answer = run(excluded, ("Y", Y))
            count = np.count_nonzero(Y, axis=1)
            judge(answer, (count == 0) | (count == L), f"the mask for n = {n}, L = {L}", [
                (count == 0, "a document whose labels are all relevant has no pair either"),
                (count == L, "a document with no relevant label has no pair either")], kind="b")
        return "4 random label matrices (n, L and dtypes varied), Y unchanged"
    return grade("PWE's excluded documents", attempt).passed


def check_best_update(best_update):
    """``best_update(curve)`` → (update of the lowest rank loss, final − best rank loss)."""
    def attempt():
        for rng in case_rngs(15, 5):
            size = int(rng.integers(2, 12))
            updates = list(np.cumsum(rng.integers(20, 400, size=size)).tolist())
            rankloss = list(rng.uniform(0.05, 0.4, size=size).round(6).tolist())
            answer = pair(run(best_update, ("curve", {"updates": updates, "rankloss": rankloss})),
                          "best_update's result")
            best = int(np.argmin(rankloss))
            judge(answer[0], updates[best], f"the update of {size} evaluations", [
                (best, "that is the position in the list, not the update's number")], kind="biuf")
            rise = rankloss[-1] - rankloss[best]
            judge(answer[1], rise, "final − best rank loss", [
                (-rise, "the sign is flipped: it is final minus best")], kind="biuf")
        return "5 random curves (lengths and update numbers varied), curve unchanged"
    return grade("where over-fitting starts", attempt).passed


def _input_dropout_kept(input_dropout, X, rate, seed):
    """The kept stored entries of one call, after checking type, shape, zeros and the scale."""
    answer = run(input_dropout, ("X", X), ("rate", rate), ("rng", np.random.default_rng(seed)))
    what = f"the dropped-out X at rate {rate}"
    if answer is None:
        raise NotYet(NO_ANSWER)
    if not sp.issparse(answer):
        raise NotYet(f"{what} is a {type(answer).__name__}; keep it sparse (a CSR matrix like X)")
    dense, original = judge_shape(answer, X.toarray(), what).astype(float), X.toarray()
    if np.any(dense[original == 0] != 0):
        raise NotYet(f"{what}: a zero input became nonzero")
    kept = dense[original != 0] != 0
    if np.any(kept) and np.allclose(dense[original != 0][kept], original[original != 0][kept]):
        raise NotYet(f"{what}: the kept entries are not scaled")
    if rate != 0.5 and np.any(kept) and close(dense[original != 0][kept],
                                              original[original != 0][kept] / rate):
        raise NotYet(f"{what}: kept entries are scaled by 1/rate; the scale must keep each "
                     "entry's expected value")
    judge(dense[original != 0][kept], original[original != 0][kept] / (1 - rate),
          f"the kept entries at rate {rate}")
    return kept


def check_input_dropout(input_dropout):
    """``input_dropout(X, rate, rng)`` → CSR X with each stored value kept ×1/(1 − rate) or
    dropped, independently, with the coins drawn from ``rng``."""
    def attempt():
        X = sparse_rows(np.random.default_rng(16), 80, 60, density=0.25)
        structure = (X.toarray() != 0).astype(float)
        for rate in RATES:
            kept = [_input_dropout_kept(input_dropout, X, rate, seed) for seed in range(4)]
            grids = np.zeros((4,) + X.shape, dtype=bool)
            for grid, k in zip(grids, kept):
                grid[structure > 0] = k
            judge_kept(grids, rate, "feature", "document", structure, "stored entries")
            judge_generator(lambda seed: _input_dropout_kept(input_dropout, X, rate, seed))
        return (f"rates {', '.join(map(str, RATES))}: kept fraction, independence across "
                "features and documents, the generator passed in; X unchanged")
    return grade("input dropout on a sparse X", attempt).passed


def _f1(y, predicted):
    both, size = np.sum(y & predicted), y.sum() + predicted.sum()
    return 1.0 if size == 0 else 2 * both / size


def check_f1_threshold(best_threshold_one):
    """``best_threshold_one(scores, y)`` → a threshold t whose prediction s > t has the best F1."""
    def attempt():
        for scores, Y in _documents(17, count=3, n=10):
            best = optimal_thresholds(scores, Y)
            for s, y, b in zip(scores, Y, best):
                answer = run(best_threshold_one, ("scores", s), ("y", y))
                t = float(judge_shape(answer, 0.0, "the threshold"))
                relevant = y > 0
                if _f1(relevant, s > t) < _f1(relevant, s > b) - 1e-12:
                    every = (": here predicting every label is best, so try a threshold below "
                             "the lowest score too" if np.all(s > b) else "")
                    raise NotYet(f"on a document with L = {len(y)}, |y| = {relevant.sum()} your "
                                 f"threshold {t:.3f} gives F1 {_f1(relevant, s > t):.3f}, and "
                                 f"{_f1(relevant, s > b):.3f} is possible{every}")
        return "3 cases of 10 random documents (L from 3 to 12, ties), inputs unchanged"
    return grade("F1-optimal threshold of one document", attempt).passed


def check_ridge(ridge_solve):
    """``ridge_solve(Z, t, lam)`` → θ minimising ‖Z θ − t‖² + λ ‖θ‖² (Eq. 5 as mlnn solves it)."""
    def attempt():
        for rng, lam in zip(case_rngs(18, 5), (3.0, 0.5, 100.0, 20.0, 1.0)):
            M, K = int(rng.integers(8, 50)), int(rng.integers(2, 8))
            Z, t = rng.normal(size=(M, K)), rng.normal(size=M)
            answer = run(ridge_solve, ("Z", Z), ("t", t), ("lam", lam))
            def solved(weight):
                return ridge(Z, t, weight, tol=1e-14)[0]
            judge(answer, solved(lam), f"θ for Z of shape {(M, K)}, λ = {lam}", [
                (solved(0.0), "the penalty λ‖θ‖² is missing"),
                (solved(lam / 2), "the penalty counts half: λ‖θ‖² has weight λ here"),
                (solved(2 * lam), "the penalty counts twice: λ‖θ‖² has weight λ here"),
                (solved(3.0), "θ does not follow the λ passed in"),
                (solved(lam * M), "that θ averages the squared error over the M documents (the "
                                  "paper's 1/(2M) scale); Eq. 5 is solved here with the plain sum "
                                  "of squares")])
        return "5 random cases (Z's shape and λ varied), inputs unchanged"
    return grade("ridge regression of Eq. 5", attempt).passed


def check_better_than_paper(better_than_paper):
    """``better_than_paper(measure, ours, paper)`` → the relative difference, > 0 when ours is
    better."""
    def attempt():
        rng = np.random.default_rng(19)
        for measure in MEASURES:
            ours, paper = rng.uniform(0.02, 20, size=2).round(4)
            answer = run(better_than_paper, ("measure", measure), ("ours", ours),
                         ("paper", paper))
            sign = -1 if measure in LOWER_IS_BETTER else 1
            judge(answer, sign * (ours - paper) / paper, f"the difference for {measure}", [
                (-sign * (ours - paper) / paper, "the sign is wrong for this measure "
                 "(is lower or higher better?)"),
                (sign * (ours - paper), "it is not relative to the paper's value"),
                (sign * (ours - paper) / ours, "it is relative to our value, not the paper's")],
                  kind="biuf")
        return f"the {len(MEASURES)} measures with random values"
    return grade("better than the paper by", attempt).passed


# ---------------------------------------------------------------------------------------------
# notebook 08: comparing methods over datasets (Demšar 2006)

def check_average_ranks(average_ranks_by_hand):
    """``average_ranks_by_hand(values, lower_is_better)`` → R_j, the mean rank (1 = best, ties
    averaged) of each method (column) over the datasets (rows)."""
    def attempt():
        for rng, lower in zip(case_rngs(20, 6), (True, False) * 3):
            N, k = rng.integers(2, 9), rng.integers(2, 9)
            values = rng.integers(1, 5, size=(N, k)) / 10.0      # few values: ties occur
            answer = run(average_ranks_by_hand, ("values", values), ("lower_is_better", lower))
            what = f"R for {N} datasets × {k} methods with lower_is_better={lower}"
            judge(answer, average_ranks(values, lower), what, [
                (average_ranks(values, not lower), "the ranks run the wrong way")])
        return "6 random tables (sizes, ties and direction varied), values unchanged"
    return grade("average ranks with ties", attempt).passed


def check_friedman(friedman_chi2):
    """``friedman_chi2(R, N)`` → Friedman's χ²_F from the average ranks R of k methods over N
    datasets (Demšar 2006, Sec. 3.2.2)."""
    def attempt():
        for rng in case_rngs(21, 6):
            N, k = int(rng.integers(2, 12)), int(rng.integers(2, 10))
            R = average_ranks(rng.random((N, k)), True)
            answer = run(friedman_chi2, ("R", R), ("N", N))
            judge(answer, friedman_test(R, N).chi2, f"χ²_F for k = {k} methods, N = {N}")
        return "6 random cases (k and N varied), R unchanged"
    return grade("Friedman's statistic by hand", attempt).passed


def check_critical_difference(nemenyi_cd):
    """``nemenyi_cd(k, N, q_alpha)`` → Nemenyi's CD = q_α √(k (k+1) / (6 N)) (Demšar 2006)."""
    def attempt():
        for rng in case_rngs(22, 6):
            k, N = int(rng.integers(2, 11)), int(rng.integers(2, 60))
            q = float(rng.uniform(1.5, 4.0))
            answer = run(nemenyi_cd, ("k", k), ("N", N), ("q_alpha", q))
            reference = q * np.sqrt(k * (k + 1) / (6.0 * N))
            judge(answer, reference, f"CD for k = {k}, N = {N}, q_α = {q:.3f}", [
                (critical_difference(k, N), "it does not follow the q_α passed in"),
                (critical_difference(k, N, 0.10), "it does not follow the q_α passed in")])
        return "6 random cases (k, N and q_α varied)"
    return grade("Nemenyi's critical difference", attempt).passed
