"""Wrong answers that graders used to accept, and right ones they used to reject: each wrong
form is rejected with a hint that names its mistake, each right form passes. By kind: a constant
hard-coded to any value, a mistake of a derivation, state written where the executor never
sees it, a class without one of its methods, a measure missing from a list, an infinite
threshold, a training loop calling update by keyword, a contract judged by the work done, a
tie tolerance however small, a clip short of saturation, a document with no relevant label,
an integer x, sorted minibatches, and the one dtype rule."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.special
import scipy.stats

from mlnn import course
from mlnn.course.bipartition import selection_values
from mlnn.evaluation import metrics
from mlnn.evaluation.metrics import LOWER_IS_BETTER
from mlnn.paper.ranks import friedman_test
from tests.test_exercises import solutions
from tests.across import judged
from tests.shown import shown

ex01, ex02b = solutions("ex01_derivatives"), solutions("ex02b_optimizers_dropout")
ex03, ex06 = solutions("ex03_convergence"), solutions("ex06_thresholds")
ex07, ex08 = solutions("ex07_paper_table"), solutions("ex08_beyond_the_paper")
ex01b = solutions("ex01b_build_it_from_zero")


def rejected(grader, answer, capsys):
    """The line a grader prints for a wrong answer judged from a process of its own (asserted
    NOT YET)."""
    assert not judged(grader, answer)
    out = shown(capsys)
    assert out.startswith("NOT YET"), out
    return out


# -- a constant hard-coded to any value is named by the argument it ignores ------------------

class AdaGradFixedAt(ex01b.AdaGrad):
    def __init__(self, eta0, epsilon=1e-8):
        super().__init__(0.05, epsilon)


HARD_CODED = [
    (course.check_rmsprop, lambda t, G, g, eta, rho, eps: ex02b.rmsprop_step(t, G, g, 0.02, rho,
                                                                             eps), "η"),
    (course.check_rmsprop, lambda t, G, g, eta, rho, eps: ex02b.rmsprop_step(t, G, g, eta, 0.8,
                                                                             eps), "ρ"),
    (course.check_rmsprop, lambda t, G, g, eta, rho, eps: ex02b.rmsprop_step(t, G, g, eta, rho,
                                                                             1e-4), "ε"),
    (course.check_critical_difference, lambda k, N, q: ex08.nemenyi_cd(k, N, 2.5), "q_α"),
    (course.check_ridge, lambda Z, t, lam: ex06.ridge_solve(Z, t, 1.0), "λ"),
    (course.check_gradient_check, lambda f, x, h: ex01.central_differences(f, x, 1e-5),
     "step h"),
    (course.check_momentum_skip, lambda t, v, mu, eta, gamma, d: ex02b.momentum_skip(
        t, v, 0.8, eta, gamma, d), "μ"),
    (course.check_momentum_skip, lambda t, v, mu, eta, gamma, d: ex02b.momentum_skip(
        t, v, mu, eta, gamma, 3), "Δ"),
    (course.check_adagrad_rates, lambda g, eta0: ex03.effective_rates(g, 0.3), "η0"),
    (course.check_adagrad, AdaGradFixedAt, "η0"),
]


@pytest.mark.parametrize("grader, answer, symbol", HARD_CODED,
                         ids=[f"{g.__name__}-{s}" for g, _, s in HARD_CODED])
def test_a_constant_hard_coded_to_any_value_is_named(grader, answer, symbol, capsys):
    out = rejected(grader, answer, capsys)
    assert f"does not follow the {symbol} passed in" in out, out


# -- mistakes that were only "off" ---------------------------------------------------------

def rmsprop_rho_swapped(theta, G, g, eta, rho, eps):
    G = (1 - rho) * G + rho * g * g
    return theta - eta * g / (np.sqrt(G) + eps), G


class RMSPropRhoSwapped(ex02b.RMSProp):
    def update(self, theta, g, state):
        G = state["mean_square"]
        G[...] = (1 - self.rho) * G + self.rho * g * g
        theta -= self.learning_rate * g / (np.sqrt(G) + self.epsilon)


def momentum_one_step_more(theta, v, mu, eta, gamma, skipped):
    return ex02b.momentum_skip(theta, v, mu, eta, gamma, skipped + 1)


def ranks_without_ties(values, lower_is_better):
    return scipy.stats.rankdata(values if lower_is_better else -values, method="ordinal",
                                axis=1).mean(axis=0)


NAMED = [
    (course.check_rmsprop, rmsprop_rho_swapped, "ρ and 1 − ρ are swapped"),
    (course.check_rmsprop_rule, RMSPropRhoSwapped, "ρ and 1 − ρ are swapped"),
    (course.check_momentum_skip, momentum_one_step_more, "one step too many"),
    (course.check_average_ranks, ranks_without_ties, "different ranks"),
    (course.check_critical_difference, lambda k, N, q: q * k * (k + 1) / (6.0 * N),
     "square root is missing"),
    (course.check_adagrad_rates, lambda g, eta0: eta0 / (np.cumsum(g * g, axis=0) + 1e-8),
     "square root"),
    (course.check_friedman, lambda R, N: friedman_test(R, N).F, "Iman and Davenport"),
    (course.check_friedman, lambda R, N: 12.0 * N / (len(R) * (len(R) - 1)) * (
        np.sum(np.square(R)) - len(R) * (len(R) + 1) ** 2 / 4.0), "not 12 N / (k (k − 1))"),
]


@pytest.mark.parametrize("grader, answer, hint", NAMED, ids=[a.__name__ if hasattr(
    a, "__name__") else str(i) for i, (_, a, _) in enumerate(NAMED)])
def test_a_mistake_that_was_only_off_is_named(grader, answer, hint, capsys):
    out = rejected(grader, answer, capsys)
    assert hint in out and "relative error" not in out, out


@pytest.mark.parametrize("k", [2, 5, 14, 20])
def test_friedman_is_tried_with_few_and_many_methods(k):
    cases = [dict(named)["R"] for _, named in course.check_friedman.cases()]
    assert k in {len(R) for R in cases}


# -- state the executor never sees, and classes without a method ----------------------------

class RMSPropRebinding(ex02b.RMSProp):
    """Right values, but G is a new array bound to the state's key, not written into it."""

    def update(self, theta, g, state):
        state["mean_square"] = self.rho * state["mean_square"] + (1 - self.rho) * g * g
        theta -= self.learning_rate * g / (np.sqrt(state["mean_square"]) + self.epsilon)


def test_a_rule_that_rebinds_its_state_is_judged_where_mlnn_runs_a_rule(capsys):
    out = rejected(course.check_rmsprop_rule, RMSPropRebinding, capsys)
    assert "write the new G into that array, in place" in out, out


def without(cls, method):
    """``cls`` with ``method`` missing (as a student who has not written it yet)."""
    namespace = {k: v for k, v in vars(cls).items() if k != method}
    bases = tuple(b for b in cls.__mro__[1:] if b is not object and method not in vars(b))
    return type(cls.__name__, bases or (object,), namespace)


@pytest.mark.parametrize("grader, cls, method", [
    (course.check_rmsprop_rule, ex02b.RMSProp, "update"),
    (course.check_rmsprop_rule, ex02b.RMSProp, "new_state"),
    (course.check_adagrad, ex01b.AdaGrad, "step")])
def test_a_class_missing_a_method_is_told_which(grader, cls, method, capsys):
    answer = without(cls, method)
    assert not hasattr(answer, method)
    out = rejected(grader, answer, capsys)
    assert f"has no method {method}" in out, out


# -- 07: every measure that is lower-is-better -------------------------------------------------

def better_without_hamming(measure, ours, paper):
    lower = measure in LOWER_IS_BETTER - {"hamming"}
    return (paper - ours) / paper if lower else (ours - paper) / paper


def test_a_lower_is_better_list_missing_hamming_is_rejected(capsys):
    out = rejected(course.check_better_than_paper, better_without_hamming, capsys)
    assert "hamming" in out and "is flipped" in out, out


# -- 06: −∞ predicts every label -------------------------------------------------------------

def threshold_minus_infinity_where_every_label_is_best(scores, y):
    t = ex06.best_threshold_one(scores, y)
    return -np.inf if np.all(scores > t) else t


def test_minus_infinity_passes_where_predicting_every_label_is_best(capsys):
    assert any(np.all(dict(named)["scores"] > ex06.best_threshold_one(**dict(named)))
               for _, named in course.check_f1_threshold.cases())      # the cases have one
    assert course.check_f1_threshold(threshold_minus_infinity_where_every_label_is_best), \
        shown(capsys)


@pytest.mark.parametrize("answer, words", [(lambda s, y: -np.inf, "F1"),
                                           (lambda s, y: np.inf, "F1"),
                                           (lambda s, y: np.nan, "NaN")])
def test_an_infinite_or_nan_threshold_is_judged_by_its_f1(answer, words, capsys):
    assert words in rejected(course.check_f1_threshold, answer, capsys)


# -- 01b: update called by its documented names ----------------------------------------------

def train_by_keyword(params, optimizer, X, Y, epochs, batch_size, rng, update):
    for _ in range(epochs):
        order = rng.permutation(X.shape[0])
        for start in range(0, X.shape[0], batch_size):
            batch = order[start:start + batch_size]
            update(params=params, optimizer=optimizer, X_batch=X[batch], Y_batch=Y[batch])


def test_a_training_loop_calling_update_by_keyword_passes(capsys):
    assert course.check_train(train_by_keyword), shown(capsys)


# -- saturation and thresholds -----------------------------------------------------------------

def forward_clipping_z2(X, W1, b1, W2, b2, f_o):
    z1 = X @ W1 + b1
    h = np.maximum(z1, 0)
    z2 = np.clip(h @ W2 + b2, -30, 30)
    return z1, h, z2, f_o(z2)


def ce_guarded(z2, o, Y):
    return np.where(o * (1 - o) > 0, o - Y, 0.0)


def delta1_with_tolerance(delta2, W2, z1):
    return (delta2 @ W2.T) * (z1 > 1e-6)


@pytest.mark.parametrize("grader, answer, hint", [
    (course.check_forward, forward_clipping_z2, "z2 is clipped"),
    (course.check_ce_delta2, ce_guarded, "where the output saturates"),
    (course.check_delta1_relu, delta1_with_tolerance, "not with a tolerance")],
    ids=["forward_clipping_z2", "ce_guarded", "delta1_with_tolerance"])
def test_saturation_and_thresholds_are_tried_beyond_where_they_bite(grader, answer, hint,
                                                                    capsys):
    assert hint in rejected(grader, answer, capsys)


# -- contracts judged by the work done: tests/test_work_limits.py -----------------------------

def grad_W1_rows_from_column_sums(X, delta1):
    """The rows present found from X's column sums: O(nnz) and one vector of D entries."""
    rows = np.flatnonzero(np.asarray(abs(X).sum(axis=0)).ravel())
    return rows, np.asarray(X[:, rows].T @ delta1) / X.shape[0]


def test_rows_found_from_column_sums_pass(capsys):
    assert course.check_grad_W1_rows(grad_W1_rows_from_column_sums), shown(capsys)


# -- dropout masks -----------------------------------------------------------------------------

def inverted_from(keep):
    """An inverted dropout whose kept units are the boolean ``keep(h, rate, rng)``."""
    def inverted_dropout(h, rate, rng):
        mask = (keep(h, rate, rng) / (1 - rate)).astype(h.dtype)
        return h * mask, mask
    return inverted_dropout


def input_from(keep):
    """An input dropout whose kept stored entries are the boolean ``keep(X, rate, rng)``."""
    def input_dropout(X, rate, rng):
        X = X.tocsr(copy=True)
        X.data = X.data * keep(X, rate, rng) / (1 - rate)
        return X
    return input_dropout


def fixed_total(size, rate, rng):
    keep = np.ones(size, dtype=bool)
    keep[rng.choice(size, round(rate * size), replace=False)] = False
    return keep


def half_the_coins(size, rate, rng):
    return np.resize(rng.random(size // 2 + 1) >= rate, size)


def inverted_float32(h, rate, rng):
    mask = ((rng.random(h.shape) >= rate) / (1 - rate)).astype(np.float32)
    return h * mask, mask


def input_float32(X, rate, rng):
    X = X.tocsr(copy=True).astype(np.float32)
    X.data *= (rng.random(X.nnz) >= rate) / (1 - rate)
    return X


def inverted_of_one_shape(h, rate, rng):
    mask = (rng.random((30, 40)) >= rate) / (1 - rate)
    return h * mask, mask


DROPOUT = [
    (course.check_inverted_dropout, inverted_from(
        lambda h, r, g: g.integers(0, 10, size=h.shape) / 10 >= r), "coarse grid"),
    (course.check_inverted_dropout, inverted_from(
        lambda h, r, g: g.integers(0, 100, size=h.shape) >= 100 * r), "coarse grid"),
    (course.check_input_dropout, input_from(
        lambda X, r, g: g.integers(0, 100, size=X.nnz) >= 100 * r), "coarse grid"),
    (course.check_inverted_dropout, inverted_from(
        lambda h, r, g: fixed_total(h.size, r, g).reshape(h.shape)), "same number"),
    (course.check_input_dropout, input_from(lambda X, r, g: fixed_total(X.nnz, r, g)),
     "same number"),
    (course.check_inverted_dropout, inverted_of_one_shape, "h's shape"),
    (course.check_inverted_dropout, inverted_from(
        lambda h, r, g: half_the_coins(h.size, r, g).reshape(h.shape)), "copies of others"),
    (course.check_input_dropout, input_from(lambda X, r, g: half_the_coins(X.nnz, r, g)),
     "copies of others"),
    (course.check_inverted_dropout, inverted_float32, "dtype float32, expected float64"),
    (course.check_input_dropout, input_float32, "dtype float32, expected float64"),
]


@pytest.mark.parametrize("grader, answer, hint", DROPOUT, ids=[f"{g.__name__}-{i}" for i, (
    g, _, _) in enumerate(DROPOUT)])
def test_a_dropout_mask_of_the_wrong_law_shape_or_dtype_is_named(grader, answer, hint, capsys):
    assert hint in rejected(grader, answer, capsys)


@pytest.mark.parametrize("grader, answer", [
    (course.check_inverted_dropout, inverted_from(lambda h, r, g: g.random(h.shape) >= r)),
    (course.check_inverted_dropout, inverted_from(lambda h, r, g: g.binomial(1, 1 - r, h.shape))),
    (course.check_input_dropout, input_from(lambda X, r, g: g.random(X.nnz) >= r))])
def test_independent_coins_pass(grader, answer, capsys):
    assert grader(answer), shown(capsys)


# -- shuffles ----------------------------------------------------------------------------------

def train_by_order(order_of):
    """A training loop whose epoch order is ``order_of(n, rng, previous order)``."""
    def train(params, optimizer, X, Y, epochs, batch_size, rng, update):
        order = None
        for _ in range(epochs):
            order = order_of(X.shape[0], rng, order)
            for start in range(0, X.shape[0], batch_size):
                batch = order[start:start + batch_size]
                update(params, optimizer, X[batch], Y[batch])
    return train


SHUFFLES = [
    (lambda n, rng, last: np.argsort(rng.integers(0, 1000, size=n), kind="stable"),
     "are in their stored order, about 749 in a random order"),
    (lambda n, rng, last: np.argsort(np.round(rng.random(n), 2), kind="stable"),
     "are in their stored order, about 749 in a random order"),
    (lambda n, rng, last: rng.permutation(n) if last is None else last[::-1],
     "follows from the previous one"),
]


@pytest.mark.parametrize("order_of, hint", SHUFFLES, ids=["integer keys", "rounded keys",
                                                          "reversed"])
def test_a_shuffle_with_ties_or_tied_to_the_last_epoch_is_named(order_of, hint, capsys):
    assert hint in rejected(course.check_train, train_by_order(order_of), capsys)


def train_stored_in_the_last_epoch(params, optimizer, X, Y, epochs, batch_size, rng, update):
    for epoch in range(epochs):
        order = rng.permutation(X.shape[0]) if epoch < epochs - 1 else np.arange(X.shape[0])
        for start in range(0, X.shape[0], batch_size):
            batch = order[start:start + batch_size]
            update(params, optimizer, X[batch], Y[batch])


def test_a_last_epoch_in_the_stored_order_is_told_so(capsys):
    out = rejected(course.check_train, train_stored_in_the_last_epoch, capsys)
    assert "stored order" in out, out


def train_sorting_each_minibatch(params, optimizer, X, Y, epochs, batch_size, rng, update):
    """A shuffled order whose minibatches are each sorted: the same documents per minibatch."""
    for _ in range(epochs):
        order = rng.permutation(X.shape[0])
        for start in range(0, X.shape[0], batch_size):
            batch = np.sort(order[start:start + batch_size])
            update(params, optimizer, X[batch], Y[batch])


def test_a_shuffle_that_sorts_each_minibatch_passes(capsys):
    assert course.check_train(train_sorting_each_minibatch), shown(capsys)


def test_a_shuffle_by_random_keys_without_ties_passes(capsys):
    right = train_by_order(lambda n, rng, last: np.argsort(rng.random(n)))
    assert course.check_train(right), shown(capsys)


# -- near ties ---------------------------------------------------------------------------------

def select_C_within_isclose(C_values, S_val, Y_val, S_test, Y_test, variant):
    criteria = selection_values(S_val, Y_val, variant)
    best = (max if variant == "B" else min)(criteria)
    return C_values[next(i for i, c in enumerate(criteria) if np.isclose(c, best))]


def select_C_within(tolerance):
    def select_C(C_values, S_val, Y_val, S_test, Y_test, variant):
        values = selection_values(S_val, Y_val, variant)
        best = (max if variant == "B" else min)(values)
        return C_values[next(i for i, v in enumerate(values) if abs(v - best) <= tolerance)]
    return select_C


@pytest.mark.parametrize("tolerance", [1e-9, 1e-12, 1e-13])
def test_a_c_chosen_within_any_tolerance_of_the_best_is_named(tolerance, capsys):
    assert "however little" in rejected(course.check_select_C, select_C_within(tolerance), capsys)


def test_a_c_chosen_within_a_tolerance_of_the_best_is_named(capsys):
    out = rejected(course.check_select_C, select_C_within_isclose, capsys)
    assert "not within a tolerance" in out, out


# -- 02b: momentum's catch-up (its work: tests/test_work_limits.py) ---------------------------

def momentum_by_steps(theta, v, mu, eta, gamma, skipped):
    for _ in range(skipped):
        v = mu * v - eta * gamma * theta
        theta = theta + v
    return theta, v


def test_the_closed_form_reference_is_the_literal_loop():
    from mlnn.course.update_rules import _momentum_skipped
    rng = np.random.default_rng(0)
    for mu, eta, gamma, skipped in [(0.9, 0.1, 0.0, 7), (0.6, 0.3, 0.2, 40), (0.5, 0.1, 0.0, 0)]:
        theta, v = rng.normal(size=3), rng.normal(size=3)
        for ours, loop in zip(_momentum_skipped(theta, v, mu, eta, gamma, skipped),
                              momentum_by_steps(theta, v, mu, eta, gamma, skipped)):
            np.testing.assert_allclose(ours, loop, rtol=1e-12, atol=1e-15)


# -- near ties: scores one floating-point step apart catch any tie tolerance -------------------

def tied_within(tolerance):
    """s_l ≥ s_k − tolerance: a comparison that takes scores within ``tolerance`` as tied."""
    return lambda s, k: int(np.sum(s >= s[k] - tolerance))


def rank_loss_within(tolerance):
    def rank_loss(s, y):
        y, s = np.asarray(y) > 0, np.asarray(s, dtype=float)
        p, q = s[y][:, None], s[~y][None, :]
        tie = np.abs(p - q) <= tolerance
        return float((np.sum((p < q) & ~tie) + 0.5 * np.sum(tie)) / (y.sum() * (~y).sum()))
    return rank_loss


def coverage_within(tolerance):
    def coverage(s, y):
        s = np.asarray(s, dtype=float)
        return float(max(tied_within(tolerance)(s, k) for k in np.flatnonzero(y)) - 1)
    return coverage


def precision_within(tolerance):
    def average_precision(s, y):
        s, relevant = np.asarray(s, dtype=float), np.flatnonzero(y)
        return float(np.mean([np.sum(s[relevant] >= s[k] - tolerance)
                              / tied_within(tolerance)(s, k) for k in relevant]))
    return average_precision


def one_error_within(tolerance):
    return lambda s, y: float(not np.all(np.asarray(y)[s >= s.max() - tolerance] > 0))


def by_rows(per_document):
    return lambda Y, S: np.array([per_document(s, y) for y, s in zip(Y, S)])


def best_update_within(tolerance):
    def best_update(curve):
        losses = np.asarray(curve["rankloss"])
        best = int(np.flatnonzero(np.isclose(losses, losses.min(), rtol=0, atol=tolerance))[0])
        return curve["updates"][best], losses[-1] - losses[best]
    return best_update


def average_ranks_rounded(decimals):
    def average_ranks(values, lower_is_better):
        values = np.round(values, decimals) * (1 if lower_is_better else -1)
        return scipy.stats.rankdata(values, axis=1).mean(axis=0)
    return average_ranks


NEAR_TIES = [(grader, answer(tolerance), tolerance) for tolerance in (1e-12, 1e-15)
             for grader, answer in [
                 (course.check_rank_loss_one, rank_loss_within),
                 (course.check_coverage_one, coverage_within),
                 (course.check_average_precision_one, precision_within),
                 (course.check_rank_loss, lambda t: by_rows(rank_loss_within(t))),
                 (course.check_coverage, lambda t: by_rows(coverage_within(t))),
                 (course.check_average_precision, lambda t: by_rows(precision_within(t))),
                 (course.check_one_error, lambda t: by_rows(one_error_within(t))),
                 (course.check_best_update, best_update_within)]] + [
    (course.check_best_update, best_update_within(1e-4), 1e-4),
    (course.check_average_ranks, average_ranks_rounded(10), 1e-10),
    (course.check_average_ranks, average_ranks_rounded(6), 1e-6)]


@pytest.mark.parametrize("grader, answer, tolerance", NEAR_TIES,
                         ids=[f"{g.__name__}-{t:g}" for g, _, t in NEAR_TIES])
def test_any_tie_tolerance_is_named(grader, answer, tolerance, capsys):
    out = rejected(grader, answer, capsys)
    assert "however little" in out and "without a tolerance or rounding" in out, out


# -- saturation: a clipped tanh, sigmoid or output is named deep in saturation ------------------

SATURATED = [
    (course.check_delta1, lambda d2, W2, h: ex01.delta1_tanh(d2, W2, np.clip(h, -0.999, 0.999)),
     "h is clipped"),
    (course.check_pwe_delta, lambda o, y: ex01.pwe_delta_one(np.clip(o, -0.99, 0.99), y),
     "o is clipped"),
    (course.check_ce_slope, lambda W1, W2_1: (scipy.special.expit(np.clip(
        W2_1 * np.tanh(W1), -20, 20)) - 1) * np.tanh(W1), "z2 is clipped")]


@pytest.mark.parametrize("grader, answer, hint", SATURATED,
                         ids=[g.__name__ for g, _, _ in SATURATED])
def test_an_answer_clipped_short_of_saturation_is_named(grader, answer, hint, capsys):
    out = rejected(grader, answer, capsys)
    assert hint in out, out


# -- 06: a document with no relevant label needs the threshold above the top score ------------

def threshold_without_the_top_candidate(scores, y):
    """The midpoints and one below the lowest score, but no candidate above the top score."""
    s, relevant = np.sort(np.unique(scores))[::-1], y > 0

    def f1(t):
        size = relevant.sum() + np.sum(scores > t)
        return 1.0 if size == 0 else 2 * np.sum(relevant & (scores > t)) / size
    return max(np.concatenate([(s[:-1] + s[1:]) / 2, [s[-1] - 1]]), key=f1)


def test_a_threshold_search_without_the_candidate_above_the_top_score_is_named(capsys):
    out = rejected(course.check_f1_threshold, threshold_without_the_top_candidate, capsys)
    assert "y is empty" in out and "above the top score" in out, out


# -- 01: central differences at an integer x ---------------------------------------------------

def central_differences_on_an_integer_copy(f, x, h=1e-6):
    x, grad = np.array(x), np.zeros(np.shape(x))
    for i in np.ndindex(x.shape):
        saved = x[i]
        x[i] = saved + h
        f_plus = f(x)
        x[i] = saved - h
        f_minus = f(x)
        x[i] = saved
        grad[i] = (f_plus - f_minus) / (2 * h)
    return grad


def test_central_differences_that_keep_an_integer_x_are_named(capsys):
    out = rejected(course.check_gradient_check, central_differences_on_an_integer_copy, capsys)
    assert "integer dtype" in out, out


# -- dtypes: one rule, stated in the hint --------------------------------------------------------

def test_a_float64_answer_to_float32_inputs_is_told_the_dtype_rule(capsys):
    out = rejected(course.check_pwe_delta2, lambda z2, o, Y: ex01b.pwe_delta2(
        z2, np.asarray(o, dtype=np.float64), Y), capsys)
    assert "expected float32" in out and "float dtype of its inputs" in out, out


@pytest.mark.parametrize("grader, answer", [
    (course.check_one_error, lambda Y, S: ~np.array([np.all(np.asarray(y)[s == s.max()] > 0)
                                                      for y, s in zip(Y, S)])),
    (course.check_coverage, lambda Y, S: np.array([int(np.sum(s >= s[np.asarray(y) > 0].min()))
                                                   - 1 for y, s in zip(Y, S)]))],
    ids=["one-error as bool", "coverage as int"])
def test_a_whole_number_may_be_an_int_or_a_bool(grader, answer, capsys):
    assert grader(answer), shown(capsys)


def test_rows_as_a_python_list_pass(capsys):
    def grad_W1_rows_listed(X, delta1):
        rows, values = ex01b.grad_W1_rows(X, delta1)
        return [int(r) for r in rows], values
    assert course.check_grad_W1_rows(grad_W1_rows_listed), shown(capsys)


def test_an_update_that_hands_the_optimizer_a_copy_of_params_is_told_why(capsys):
    def update_with_a_copy(params, optimizer, X_batch, Y_batch):
        ex01b.update(dict(params), optimizer, X_batch, Y_batch)
    out = rejected(course.check_update, update_with_a_copy, capsys)
    assert "not a copy" in out, out




# == the classes of faults, each closed in the mechanism every grader shares =====================
# Each class is a family of wrong answers (several members each) rejected with a hint that names
# no mistake the answer does not make, and a catalogue of right answers written unusually passes.

ex02, ex04 = solutions("ex02_landscapes"), solutions("ex04_dropout")
ex05, ex06b = solutions("ex05_learning_rates"), solutions("ex06b_measures_and_baseline")


def true_of(grader, out):
    """The line names no mistake of the grader's table (the answer makes none of them)."""
    assert not [m.hint for m in getattr(grader, "mistakes", ()) if m.hint in out], out


def cached_by_shape(answer):
    """An answer that keeps what it answered for the shapes of its array inputs."""
    memory = {}

    def cached(*args):
        key = tuple(np.shape(a) for a in args if isinstance(a, np.ndarray) or sp.issparse(a))
        if key not in memory:
            memory[key] = answer(*args)
        return memory[key]
    return cached


CACHED = [(course.check_gradient_check, ex01.central_differences),
          (course.check_delta1, ex01.delta1_tanh), (course.check_rank_loss_one, ex03.rank_loss_one),
          (course.check_ridge, ex06.ridge_solve),
          (course.check_adagrad_rates, ex03.effective_rates),
          (course.check_average_ranks, ex08.average_ranks_by_hand),
          (course.check_micro_macro, ex06b.micro_macro_by_hand),
          (course.check_ce_slope, ex02.ce_dJ_dW2_1), (course.check_pwe_excluded, ex05.excluded)]


@pytest.mark.parametrize("grader, answer", CACHED, ids=[g.__name__ for g, _ in CACHED])
def test_an_answer_cached_by_the_shape_of_its_inputs_is_rejected(grader, answer, capsys):
    assert grader(answer), shown(capsys)           # the answer itself is right
    capsys.readouterr()
    out = rejected(grader, cached_by_shape(answer), capsys)
    true_of(grader, out)


def test_the_draws_are_set_from_outside_and_change_every_case():
    from mlnn.course import grading
    seen = grading.drawn_cases(course.check_delta1.cases)
    token = grading.drawing(7, 8)
    try:
        secret = grading.drawn_cases(course.check_delta1.cases)
    finally:
        grading.DRAWS.reset(token)
    assert len(seen) == len(secret) == 2 * len(list(course.check_delta1.cases()))
    for (_, first), (_, second) in zip(secret[::2], secret[1::2]):      # the shapes of a pair
        assert [np.shape(v) for _, v in first] == [np.shape(v) for _, v in second]
    assert not any(grading.same(mine, theirs) for (_, mine) in seen for (_, theirs) in secret)


def rank_loss_int8(s, y):
    d = s[y > 0][:, None] - s[y == 0][None, :]
    return float((np.sum(d < 0, dtype=np.int8) + 0.5 * np.sum(d == 0, dtype=np.int8)) / d.size)


def coverage_int8(s, y):
    return int((s[None, :] >= s[y > 0][:, None]).sum(axis=1, dtype=np.int8).max()) - 1


def precision_int8(s, y):
    relevant = s[y > 0]
    above = (relevant[None, :] >= relevant[:, None]).sum(axis=1, dtype=np.int8)
    ranks = (s[None, :] >= relevant[:, None]).sum(axis=1, dtype=np.int8)
    return float(np.mean(above / ranks))


def rank_loss_rows_int16(Y, scores):
    out = []
    for y, s in zip(np.asarray(Y) > 0, scores):
        d = s[y][:, None] - s[~y][None, :]
        out.append((np.sum(d < 0, dtype=np.int16) + 0.5 * np.sum(d == 0, dtype=np.int16))
                   / d.size)
    return np.array(out)


def micro_macro_int16(Y_true, Y_pred):
    t, p = np.asarray(Y_true) > 0, np.asarray(Y_pred) > 0
    counts = [np.sum(a, axis=0, dtype=np.int16) for a in (t & p, ~t & p, t & ~p)]
    right = ex06b.micro_macro_by_hand(Y_true, Y_pred)
    tp, fp, fn = (int(c.sum(dtype=np.int16)) for c in counts)
    return {**right, "miF": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0}


def excluded_int8(Y):
    count = (np.asarray(Y) != 0).sum(axis=1, dtype=np.int8)
    return (count == 0) | (count == np.asarray(Y).shape[1])


NARROW = [(course.check_rank_loss_one, rank_loss_int8), (course.check_coverage_one, coverage_int8),
          (course.check_average_precision_one, precision_int8),
          (course.check_rank_loss, rank_loss_rows_int16),
          (course.check_micro_macro, micro_macro_int16),
          (course.check_pwe_excluded, excluded_int8)]


@pytest.mark.parametrize("grader, answer", NARROW, ids=[a.__name__ for _, a in NARROW])
def test_a_count_in_a_narrow_integer_type_is_rejected(grader, answer, capsys):
    true_of(grader, rejected(grader, answer, capsys))


def select_C_by(criterion):
    """select_C with BR_B's criterion(miF, maF) (higher is better) and BR_R's mean rank loss,
    or BR_R's ``criterion`` = "pooled" (lower is better)."""
    def select_C(C_values, S_val, Y_val, S_test, Y_test, variant):
        if variant == "B" and criterion != "pooled":
            values = [-criterion(*(metrics.selection_score(Y_val, S > 0, criterion=c)
                                   for c in ("miF", "maF"))) for S in S_val]
        elif variant == "R" and criterion == "pooled":
            values = []
            for S in S_val:
                pairs = [(s[y][:, None] - s[~y][None, :]) for y, s in zip(Y_val > 0, S)]
                values.append(sum(np.sum(d < 0) + 0.5 * np.sum(d == 0) for d in pairs)
                              / sum(d.size for d in pairs))
        else:
            return ex06b.select_C(C_values, S_val, Y_val, S_test, Y_test, variant)
        return C_values[int(np.argmin(values))]
    return select_C


CRITERIA = [(lambda a, b: np.sqrt(a * b), "not by another mean"),
            (lambda a, b: 2 * a * b / (a + b) if a + b else 0.0, "not by another mean"),
            ("pooled", "pooled over the documents")]


@pytest.mark.parametrize("criterion, hint", CRITERIA, ids=["geometric", "harmonic", "pooled"])
def test_a_choice_of_C_by_another_criterion_is_named(criterion, hint, capsys):
    assert hint in rejected(course.check_select_C, select_C_by(criterion), capsys)


def test_every_criterion_of_the_table_chooses_another_C_in_some_case():
    cases = [[v for _, v in named] for _, named in course.check_select_C.cases()]
    from mlnn.course.bipartition import select
    for mistake in course.check_select_C.mistakes:
        assert any(mistake.answer(*case) != select(*case) for case in cases), mistake.hint


def keeping_one(keep_of):
    """Input dropout that never drops every word of a document: ``keep_of(X, rate, rng)``."""
    def input_dropout(X, rate, rng):
        keep = keep_of(X, rate, rng)
        for i in range(X.shape[0]):
            row = slice(X.indptr[i], X.indptr[i + 1])
            if X.indptr[i + 1] > X.indptr[i] and not keep[row].any():
                keep[X.indptr[i] + rng.integers(X.indptr[i + 1] - X.indptr[i])] = True
        X = X.tocsr(copy=True)
        X.data = X.data * keep / (1 - rate)
        return X
    return input_dropout


def first_word_kept(X, rate, rng):
    keep = rng.random(X.nnz) >= rate
    keep[X.indptr[:-1][np.diff(X.indptr) > 0]] = True
    X = X.tocsr(copy=True)
    X.data = X.data * keep / (1 - rate)
    return X


def inverted_keeping_one(h, rate, rng):
    keep = rng.random(h.shape) >= rate
    keep[~keep.any(axis=1), 0] = True
    mask = (keep / (1 - rate)).astype(h.dtype)
    return h * mask, mask


POWER = [(course.check_input_dropout, keeping_one(lambda X, r, g: g.random(X.nnz) >= r),
          "however few a document has"),
         (course.check_input_dropout, first_word_kept, "however few a document has"),
         (course.check_inverted_dropout, inverted_keeping_one, "gave the same mask")]


@pytest.mark.parametrize("grader, answer, hint", POWER, ids=["one kept", "first kept", "units"])
def test_dropout_that_never_drops_everything_is_seen_where_it_shows(grader, answer, hint, capsys):
    assert hint in rejected(grader, answer, capsys)


DTYPES = [(course.check_inverted_dropout, lambda h, r, g: (lambda m: (h * m, m))(
              (g.random(h.shape) >= r) / (1 - r)), "has dtype float64, expected float32"),
          (course.check_input_dropout, lambda X, r, g: X.multiply(
              (g.random(X.shape) >= r) / (1 - r)).tocsr(), "has dtype float64, expected float32"),
          (course.check_micro_macro, lambda t, p: {k: np.float32(v) for k, v in
                                                   ex06b.micro_macro_by_hand(t, p).items()},
           "has dtype float32, expected float64"),
          (course.check_rank_loss, lambda Y, S: ex06b.rank_loss_by_hand(Y, S).astype(np.float32),
           "has dtype float32, expected float64")]


@pytest.mark.parametrize("grader, answer, hint", DTYPES, ids=[g.__name__ for g, _, _ in DTYPES])
def test_a_dtype_other_than_the_text_asks_is_told_so(grader, answer, hint, capsys):
    assert hint in rejected(grader, answer, capsys)


def slope_through(sigmoid):
    def ce_dJ_dW2_1(W1, W2_1):
        h = np.tanh(W1)
        with np.errstate(all="ignore"):
            return (sigmoid(W2_1 * h) - 1) * h
    return ce_dJ_dW2_1


EXTREME = [slope_through(lambda z: 1 - np.exp(-z) / (1 + np.exp(-z))),
           slope_through(lambda z: np.exp(z) / (1 + np.exp(z))),
           lambda W1, W2_1: -np.exp(-W2_1 * np.tanh(W1)) / (1 + np.exp(-W2_1 * np.tanh(W1)))
           * np.tanh(W1)]


@pytest.mark.parametrize("answer", EXTREME, ids=["1 - e^-z/(1+e^-z)", "e^z/(1+e^z)", "-e^-z"])
def test_a_formula_that_overflows_at_extreme_inputs_is_rejected(answer, capsys):
    with np.errstate(all="ignore"):
        out = rejected(course.check_ce_slope, answer, capsys)
    assert "NaN or infinite" in out or "±800" in out, out


FORMATS = [lambda X, r, g: ex04.input_dropout(X, r, g).tocsc(),
           lambda X, r, g: ex04.input_dropout(X, r, g).tocoo(),
           lambda X, r, g: ex04.input_dropout(X, r, g).tolil()]


@pytest.mark.parametrize("answer", FORMATS, ids=["csc", "coo", "lil"])
def test_a_sparse_format_other_than_csr_is_told_so(answer, capsys):
    assert "a CSR matrix like X" in rejected(course.check_input_dropout, answer, capsys)


def ranks_of(transform):
    return lambda v, lower: scipy.stats.rankdata(v if lower else transform(v), axis=1).mean(0)


#: Right answers written unusually, each of which must pass.
UNUSUAL = [
    (course.check_average_ranks, ranks_of(lambda v: 1 - v)),
    (course.check_average_ranks, ranks_of(lambda v: -v)),
    (course.check_average_ranks, ranks_of(lambda v: v.max() - v)),
    (course.check_best_update, lambda c: (c["updates"][c["rankloss"].index(min(c["rankloss"]))],
                                          c["rankloss"][-1] - min(c["rankloss"]))),
    (course.check_ce_slope, slope_through(lambda z: 1 / (1 + np.exp(-z)))),
    (course.check_ce_slope, slope_through(scipy.special.expit)),
    (course.check_delta1, lambda d2, W2, h: d2 @ W2.T * (1 - h) * (1 + h)),
    (course.check_rank_loss_one, lambda s, y: float(np.mean(
        np.sign(s[y > 0][:, None] - s[y == 0][None, :]) * -0.5 + 0.5))),
    (course.check_coverage_one, lambda s, y: int(np.sum(s >= s[y > 0].min())) - 1),
    (course.check_select_C, lambda C, S, Y, St, Yt, variant: ex06b.select_C(
        list(C), S, Y, St, Yt, variant)),
    (course.check_inverted_dropout, lambda h, r, g: (lambda m: (h * m, m))(
        np.where(g.uniform(size=h.shape) < r, 0, 1 / (1 - r)).astype(h.dtype))),
    (course.check_input_dropout, lambda X, r, g: (lambda Z: (Z.eliminate_zeros(), Z)[1])(
        ex04.input_dropout(X.copy(), r, g))),
    (course.check_pwe_excluded, lambda Y: np.ptp((np.asarray(Y) > 0).astype(int), axis=1) == 0),
    (course.check_micro_macro, lambda t, p: {k: float(v) for k, v in
                                             ex06b.micro_macro_by_hand(t, p).items()}),
]


@pytest.mark.parametrize("grader, answer", UNUSUAL,
                         ids=[f"{g.__name__}-{i}" for i, (g, _) in enumerate(UNUSUAL)])
def test_a_right_answer_written_unusually_passes(grader, answer, capsys):
    with np.errstate(all="ignore"):
        assert grader(answer), shown(capsys)


#: Hints that used to name a mistake the answer does not make: now what the grader observed.
OBSERVED = [
    (course.check_one_error, lambda Y, S: (lambda r: np.r_[1 - r[:1], r[1:]])(
        ex06b.one_error_by_hand(Y, S))),
    (course.check_rank_loss_one, lambda s, y: ex03.rank_loss_one(s, y) * np.sum(y > 0) * np.sum(
        y == 0) / (len(y) * (len(y) - 1) / 2)),
    (course.check_coverage_one, lambda s, y: ex07.coverage_one(s, y) if len(s) < 10 else 0),
    (course.check_select_C, select_C_by("pooled")),
    (course.check_average_ranks, lambda v, lower: ex08.average_ranks_by_hand(v, True)),
]


@pytest.mark.parametrize("grader, answer", OBSERVED,
                         ids=[f"{g.__name__}-{i}" for i, (g, _) in enumerate(OBSERVED)])
def test_a_hint_names_only_a_mistake_that_explains_every_case(grader, answer, capsys):
    out = rejected(grader, answer, capsys)
    hints = [m.hint for m in grader.mistakes if m.hint in out]
    assert not hints or grader is course.check_select_C and "pooled" in out, out


def test_the_cases_where_the_criteria_disagree_are_as_described():
    from mlnn.course.bipartition import SELECTION_MISTAKES, disagreeing_cases, select
    from mlnn.course.grading import CaseRng
    by_hint = {m.hint: m for m in SELECTION_MISTAKES}
    other_mean = [m for m in SELECTION_MISTAKES if "another mean" in m.hint]
    pooled = next(m for m in SELECTION_MISTAKES if "pooled" in m.hint)
    assert len(other_mean) == 2 and len(by_hint) < len(SELECTION_MISTAKES)
    B, R = ([v for _, v in named] for named in disagreeing_cases(CaseRng(2016, 1)))
    assert select(*B) == 10.0 and {m.answer(*B) for m in other_mean} == {1.0}
    assert select(*R) == 1.0 and pooled.answer(*R) == 0.1


def test_the_input_dropout_x_has_the_documents_its_text_describes():
    from mlnn.course.dropout_masks import input_X
    sizes = np.diff(input_X(0.2).indptr)
    assert len(sizes) == 320 and np.sum(sizes == 1) == 200 and round(sizes[:120].mean()) == 26
    assert input_X(0.7).dtype == np.float32 and input_X(0.2).format == "csr"


def test_the_largest_cases_hold_counts_past_the_narrow_integer_types():
    t, p = dict(list(course.check_micro_macro.cases())[-1][1]).values()
    assert np.sum((t > 0) & (p > 0)) > 2 ** 15
    L = max(len(dict(named)["y"]) for _, named in course.check_rank_loss_one.cases())
    R = max(dict(named)["values"].size for _, named in course.check_average_ranks.cases())
    assert L == 400 and R == 60 * 12
