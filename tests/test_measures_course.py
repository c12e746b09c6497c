"""Notebook 06b's graders (in mlnn.course.ranking_measures and mlnn.course.bipartition): the
worked solutions pass, and plausible wrong answers — each written the way a student would write
it — fail with a hint naming the mistake."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from mlnn.base.validation import validation_split
from mlnn.baselines.svm import LinearSVMBR
from mlnn import course
from mlnn.course.bipartition import reference_C, selection_cases
from mlnn.course.ranking_measures import ranking_cases
from mlnn.datasets.synthetic import make_synthetic
from mlnn.evaluation import metrics
from mlnn.paper.selection import fit_br, warm_start
from tests.across import judged
from tests.shown import shown

SOLUTIONS = Path(__file__).resolve().parents[1] / "notebooks" / "solutions"


def _solutions():
    path = SOLUTIONS / "ex06b_measures_and_baseline.py"
    spec = importlib.util.spec_from_file_location("ex06b_measures_and_baseline", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ex = _solutions()

EXERCISES = [
    (course.check_one_error, ex.one_error_by_hand),
    (course.check_coverage, ex.coverage_by_hand),
    (course.check_rank_loss, ex.rank_loss_by_hand),
    (course.check_average_precision, ex.average_precision_by_hand),
    (course.check_micro_macro, ex.micro_macro_by_hand),
    (course.check_select_C, ex.select_C),
]
IDS = [grader.__name__ for grader, _ in EXERCISES]


@pytest.mark.parametrize("grader, solution", EXERCISES, ids=IDS)
def test_worked_solution_passes(grader, solution, capsys):
    report = grader(solution)
    out = shown(capsys)
    assert report and out.startswith("PASS"), out


@pytest.mark.parametrize("grader", [g for g, _ in EXERCISES], ids=IDS)
def test_an_exercise_left_open_is_reported_not_raised(grader, capsys):
    def not_done(*args):
        ...
    assert not grader(not_done)
    out = shown(capsys)
    assert out.startswith("NOT YET") and "no answer yet" in out, out


@pytest.mark.parametrize("grader", [g for g, _ in EXERCISES], ids=IDS)
def test_an_exception_in_the_answer_is_the_students(grader, capsys):
    def broken(*args):
        raise KeyError("oops")
    assert not grader(broken)
    out = shown(capsys)
    assert out.startswith("NOT YET") and "raised KeyError" in out, out


# -- wrong answers, as a student would write them ---------------------------------------------

def _rows(function):
    """A per-document function f(y, s) applied to every row of (Y, scores)."""
    return lambda Y, S: np.array([function(np.asarray(y) > 0, s) for y, s in zip(Y, S)], float)


def _pairs(Y, S):
    relevant = np.asarray(Y) > 0
    p = relevant[:, :, None] & ~relevant[:, None, :]
    return relevant, p, S[:, :, None], S[:, None, :]


def rank_loss_over_L(Y, S):
    relevant, p, sk, sl = _pairs(Y, S)
    return np.sum(p * ((sk < sl) + 0.5 * (sk == sl)), axis=(1, 2)) / S.shape[1]


def rank_loss_ties_whole(Y, S):
    relevant, p, sk, sl = _pairs(Y, S)
    return np.sum(p * (sk <= sl), axis=(1, 2)) / (relevant.sum(1) * (~relevant).sum(1))


def rank_loss_ties_ignored(Y, S):
    relevant, p, sk, sl = _pairs(Y, S)
    return np.sum(p * (sk < sl), axis=(1, 2)) / (relevant.sum(1) * (~relevant).sum(1))


def rank_loss_over_all_pairs(Y, S):
    relevant, p, sk, sl = _pairs(Y, S)
    return np.sum(p * ((sk < sl) + 0.5 * (sk == sl)), axis=(1, 2)) / S.shape[1] ** 2


def rank_loss_right_pairs(Y, S):
    return 1 - ex.rank_loss_by_hand(Y, S)


def coverage_sklearn(Y, S):
    return ex.coverage_by_hand(Y, S) + 1                     # sklearn's coverage_error


def coverage_strict(Y, S):
    relevant = np.asarray(Y) > 0
    higher = np.sum(S[:, None, :] > S[:, :, None], axis=2)   # labels strictly above k
    return np.max(np.where(relevant, higher, -1), axis=1).astype(float)


def coverage_by_position(Y, S):
    order = np.argsort(-S, axis=1, kind="stable")
    positions = np.argsort(order, axis=1)                    # 0-based position of each label
    return np.max(np.where(np.asarray(Y) > 0, positions, -1), axis=1).astype(float)


def coverage_first_relevant(Y, S):
    ranks = np.sum(S[:, None, :] >= S[:, :, None], axis=2)
    return np.min(np.where(np.asarray(Y) > 0, ranks, 10 ** 6), axis=1) - 1.0


def coverage_rank_only(Y, S):
    return ex.coverage_by_hand(Y, S) + 1 - 1 - 1             # "rank − 1" applied twice


def one_error_argmax(Y, S):
    top = np.argmax(S, axis=1)
    return 1.0 - (np.asarray(Y) > 0)[np.arange(len(S)), top]


def one_error_optimistic(Y, S):
    top = S == S.max(axis=1, keepdims=True)
    return 1.0 - np.any(top & (np.asarray(Y) > 0), axis=1)


def one_error_inverted(Y, S):
    return 1.0 - ex.one_error_by_hand(Y, S)


def one_error_mean(Y, S):
    return float(np.mean(ex.one_error_by_hand(Y, S)))


def one_error_in_place(Y, S):
    S -= S.max(axis=1, keepdims=True)                        # shifts the caller's scores
    return ex.one_error_by_hand(Y, S)


def ap_over_all_labels(Y, S):
    relevant = np.asarray(Y) > 0
    return ex.average_precision_by_hand(Y, S) * relevant.sum(1) / S.shape[1]


def ap_sum_not_mean(Y, S):
    return ex.average_precision_by_hand(Y, S) * (np.asarray(Y) > 0).sum(1)


def ap_strict_ranks(Y, S):
    relevant = np.asarray(Y) > 0
    rank = 1 + np.sum(S[:, None, :] > S[:, :, None], axis=2)
    above = np.sum((S[:, None, :] >= S[:, :, None]) & relevant[:, None, :], axis=2)
    return np.sum(np.where(relevant, above / rank, 0), axis=1) / relevant.sum(1)


def ap_by_position(Y, S):
    relevant = np.asarray(Y) > 0
    order = np.argsort(-S, axis=1, kind="stable")
    hits = np.take_along_axis(relevant, order, axis=1)
    precision = np.cumsum(hits, axis=1) / np.arange(1, S.shape[1] + 1)
    return np.sum(precision * hits, axis=1) / relevant.sum(1)


def ap_every_label(Y, S):
    relevant = np.asarray(Y) > 0
    at_least = S[:, None, :] >= S[:, :, None]
    return np.mean(np.sum(at_least & relevant[:, None, :], axis=2) / at_least.sum(2), axis=1)


def ap_transposed(Y, S):
    return ex.average_precision_by_hand(Y, S)[:, None]


RANKING_WRONG = [
    (course.check_one_error, one_error_argmax, "depends on which tied label comes first"),
    (course.check_one_error, one_error_optimistic, "not only when all of them are"),
    (course.check_one_error, one_error_inverted, "inverted"),
    (course.check_one_error, one_error_mean, "not their mean"),
    (course.check_one_error, one_error_in_place, "modified its input scores"),
    (course.check_coverage, coverage_sklearn, "off by one"),
    (course.check_coverage, coverage_strict, "at least as high"),
    (course.check_coverage, coverage_by_position, "order of tied labels"),
    (course.check_coverage, coverage_first_relevant, "ranked LAST"),
    (course.check_coverage, coverage_rank_only, "off by one"),
    (course.check_rank_loss, rank_loss_over_L, "not by L"),
    (course.check_rank_loss, rank_loss_over_all_pairs, "not by L²"),
    (course.check_rank_loss, rank_loss_ties_whole, "not as a whole error"),
    (course.check_rank_loss, rank_loss_ties_ignored, "counts ½ (Eq. 1), not 0"),
    (course.check_rank_loss, rank_loss_right_pairs, "ordered wrongly"),
    (course.check_rank_loss, _rows(lambda y, s: np.mean(s[y][:, None] < s[~y][None, :])),
     "counts ½ (Eq. 1), not 0"),
    (course.check_average_precision, ap_over_all_labels, "not over all L"),
    (course.check_average_precision, ap_sum_not_mean, "divide the sum by |y|"),
    (course.check_average_precision, ap_strict_ranks, "at least as high"),
    (course.check_average_precision, ap_by_position, "order of tied"),
    (course.check_average_precision, ap_every_label, "not at every label"),
    (course.check_average_precision, ap_transposed, "shape"),
]


def _counts(Y_true, Y_pred, axis=0):
    t, p = np.asarray(Y_true) > 0, np.asarray(Y_pred) > 0
    return [np.sum(a, axis=axis).astype(float) for a in (t & p, ~t & p, t & ~p)]


def _safe(num, den, empty=1.0, zero=0.0, tp_fp_fn=None):
    out = np.where(den > 0, num / np.where(den > 0, den, 1), zero)
    return out if tp_fp_fn is None else np.where(tp_fp_fn == 0, empty, out)


def _micro(tp, fp, fn):
    total = tp.sum() + fp.sum() + fn.sum()
    return [float(_safe(a, b, tp_fp_fn=total)) for a, b in
            ((tp.sum(), tp.sum() + fp.sum()), (tp.sum(), tp.sum() + fn.sum()),
             (2 * tp.sum(), 2 * tp.sum() + fp.sum() + fn.sum()))]


def _per_label(tp, fp, fn, empty=1.0, zero=0.0):
    total = tp + fp + fn
    return [_safe(a, b, empty, zero, total) for a, b in
            ((tp, tp + fp), (tp, tp + fn), (2 * tp, 2 * tp + fp + fn))]


def _result(micro, macro):
    return dict(zip(("miP", "miR", "miF", "maP", "maR", "maF"), list(micro) + list(macro)))


def macro_over_documents(Y_true, Y_pred):
    micro = _micro(*_counts(Y_true, Y_pred))
    return _result(micro, [float(v.mean()) for v in _per_label(*_counts(Y_true, Y_pred, 1))])


def micro_over_documents(Y_true, Y_pred):
    right = ex.micro_macro_by_hand(Y_true, Y_pred)
    per_doc = [float(v.mean()) for v in _per_label(*_counts(Y_true, Y_pred, 1))]
    return {**right, "miP": per_doc[0], "miR": per_doc[1], "miF": per_doc[2]}


def micro_empty_zero(Y_true, Y_pred):
    right = ex.micro_macro_by_hand(Y_true, Y_pred)
    if np.any(Y_true) or np.any(Y_pred):
        return right
    return {**right, "miP": 0.0, "miR": 0.0, "miF": 0.0}


def micro_as_mean_of_label_f1(Y_true, Y_pred):
    tp, fp, fn = _counts(Y_true, Y_pred)
    P, R, F = _per_label(tp, fp, fn)
    return _result(_micro(tp, fp, fn)[:2] + [float(F.mean())],
                   [float(P.mean()), float(R.mean()), float(F.mean())])


def micro_as_label_means(Y_true, Y_pred):
    tp, fp, fn = _counts(Y_true, Y_pred)
    macro = [float(v.mean()) for v in _per_label(tp, fp, fn)]
    return _result(macro, macro)


def macro_f1_harmonic(Y_true, Y_pred):
    right = ex.micro_macro_by_hand(Y_true, Y_pred)
    P, R = right["maP"], right["maR"]
    return {**right, "maF": 2 * P * R / (P + R) if P + R else 0.0}


def empty_labels_zero(Y_true, Y_pred):                # scikit-learn's zero_division=0
    tp, fp, fn = _counts(Y_true, Y_pred)
    return _result(_micro(tp, fp, fn), [float(v.mean()) for v in _per_label(tp, fp, fn, 0.0)])


def zero_division_zero_everywhere(Y_true, Y_pred):  # every 0/0 is 0, micro included
    tp, fp, fn = _counts(Y_true, Y_pred)
    micro = [float(_safe(a, b)) for a, b in ((tp.sum(), tp.sum() + fp.sum()),
                                             (tp.sum(), tp.sum() + fn.sum()),
                                             (2 * tp.sum(), 2 * tp.sum() + fp.sum() + fn.sum()))]
    return _result(micro, [float(_safe(a, b).mean()) for a, b in
                           ((tp, tp + fp), (tp, tp + fn), (2 * tp, 2 * tp + fp + fn))])


def empty_labels_skipped(Y_true, Y_pred):
    tp, fp, fn = _counts(Y_true, Y_pred)
    keep = tp + fp + fn > 0
    macro = [float(v[keep].mean()) if keep.any() else 1.0 for v in _per_label(tp, fp, fn)]
    return _result(_micro(tp, fp, fn), macro)


def only_present_labels(Y_true, Y_pred):
    tp, fp, fn = _counts(Y_true, Y_pred)
    keep = tp + fn > 0
    macro = [float(v[keep].mean()) if keep.any() else 1.0 for v in _per_label(tp, fp, fn)]
    return _result(_micro(tp, fp, fn), macro)


def zero_denominator_one(Y_true, Y_pred):
    tp, fp, fn = _counts(Y_true, Y_pred)
    return _result(_micro(tp, fp, fn),
                   [float(v.mean()) for v in _per_label(tp, fp, fn, zero=1.0)])


def precision_recall_swapped(Y_true, Y_pred):
    right = ex.micro_macro_by_hand(Y_true, Y_pred)
    return {**right, "miP": right["miR"], "miR": right["miP"], "maP": right["maR"],
            "maR": right["maP"]}


def as_tuple(Y_true, Y_pred):
    return tuple(ex.micro_macro_by_hand(Y_true, Y_pred).values())


def per_label_arrays(Y_true, Y_pred):
    tp, fp, fn = _counts(Y_true, Y_pred)
    return _result(_micro(tp, fp, fn), _per_label(tp, fp, fn))


BIPARTITION_WRONG = [
    (course.check_micro_macro, macro_over_documents, "average over the documents"),
    (course.check_micro_macro, micro_over_documents, "average per-document values"),
    (course.check_micro_macro, micro_as_mean_of_label_f1, "that is macro-F1"),
    (course.check_micro_macro, micro_as_label_means, "that is macro averaging"),
    (course.check_micro_macro, macro_f1_harmonic, "not the harmonic mean"),
    (course.check_micro_macro, empty_labels_zero, "yours scores it 0"),
    (course.check_micro_macro, zero_division_zero_everywhere, "yours scores it 0"),
    (course.check_micro_macro, empty_labels_skipped, "yours leaves it out"),
    (course.check_micro_macro, only_present_labels, "over all L labels"),
    (course.check_micro_macro, zero_denominator_one, "gives 0, not 1"),
    (course.check_micro_macro, precision_recall_swapped, "swapped"),
    (course.check_micro_macro, micro_empty_zero, "no label true in any document"),
    (course.check_micro_macro, as_tuple, "return a dict"),
    (course.check_micro_macro, per_label_arrays, "must be one number"),
]


def _criterion(S_list, Y, variant, predict=lambda S: S > 0, **score):
    if variant == "B":
        return [-metrics.selection_score(Y, predict(S), **score) for S in S_list]
    return [metrics.rank_loss(Y, S) for S in S_list]


def select_on_test(C_values, S_val, Y_val, S_test, Y_test, variant):
    return C_values[int(np.argmin(_criterion(S_test, Y_test, variant)))]


def select_last_of_ties(C_values, S_val, Y_val, S_test, Y_test, variant):
    values = _criterion(S_val, Y_val, variant)
    return C_values[max(i for i, v in enumerate(values) if v == min(values))]


def select_macro_all_labels(C_values, S_val, Y_val, S_test, Y_test, variant):
    if variant == "R":
        return ex.select_C(C_values, S_val, Y_val, S_test, Y_test, variant)
    values = [metrics.bipartition_measures(Y_val, S > 0) for S in S_val]
    return C_values[int(np.argmax([(v["miF"] + v["maF"]) / 2 for v in values]))]


def select_by_micro_f1(C_values, S_val, Y_val, S_test, Y_test, variant):
    if variant == "R":
        return ex.select_C(C_values, S_val, Y_val, S_test, Y_test, variant)
    return C_values[int(np.argmin(_criterion(S_val, Y_val, "B", criterion="miF")))]


def select_by_macro_f1(C_values, S_val, Y_val, S_test, Y_test, variant):
    if variant == "R":
        return ex.select_C(C_values, S_val, Y_val, S_test, Y_test, variant)
    return C_values[int(np.argmin(_criterion(S_val, Y_val, "B", criterion="maF")))]


def select_with_nonnegative_margins(C_values, S_val, Y_val, S_test, Y_test, variant):
    predict = (lambda S: S >= 0)
    return C_values[int(np.argmin(_criterion(S_val, Y_val, variant, predict)))]


def select_at_one_half(C_values, S_val, Y_val, S_test, Y_test, variant):
    predict = (lambda S: S > 0.5)
    return C_values[int(np.argmin(_criterion(S_val, Y_val, variant, predict)))]


def select_both_by_rank_loss(C_values, S_val, Y_val, S_test, Y_test, variant):
    return C_values[int(np.argmin(_criterion(S_val, Y_val, "R")))]


def select_both_by_f1(C_values, S_val, Y_val, S_test, Y_test, variant):
    return C_values[int(np.argmin(_criterion(S_val, Y_val, "B")))]


def select_the_worst(C_values, S_val, Y_val, S_test, Y_test, variant):
    return C_values[int(np.argmax(_criterion(S_val, Y_val, variant)))]


def select_index(C_values, S_val, Y_val, S_test, Y_test, variant):
    return int(np.argmin(_criterion(S_val, Y_val, variant)))


def select_largest_C(C_values, S_val, Y_val, S_test, Y_test, variant):
    return C_values[-1]


def select_all_scores(C_values, S_val, Y_val, S_test, Y_test, variant):
    return np.array(_criterion(S_val, Y_val, variant))


SELECTION_WRONG = [
    (course.check_select_C, select_on_test, "TEST split"),
    (course.check_select_C, select_last_of_ties, "not the last"),
    (course.check_select_C, select_macro_all_labels, "not over all labels"),
    (course.check_select_C, select_by_micro_f1, "not by micro-F1 alone"),
    (course.check_select_C, select_by_macro_f1, "not by macro-F1 alone"),
    (course.check_select_C, select_with_nonnegative_margins, "strictly positive"),
    (course.check_select_C, select_at_one_half, "not 0.5"),
    (course.check_select_C, select_both_by_rank_loss, "not by rank loss (that is BR_R)"),
    (course.check_select_C, select_both_by_f1, "not by F1 (that is BR_B)"),
    (course.check_select_C, select_the_worst, "the wrong way"),
    (course.check_select_C, select_index, "not its position"),
    (course.check_select_C, select_largest_C, "wrong C on"),
    (course.check_select_C, select_all_scores, "return one C value"),
]

WRONG = RANKING_WRONG + BIPARTITION_WRONG + SELECTION_WRONG


def test_at_least_thirty_wrong_answers():
    assert len(WRONG) >= 30


@pytest.mark.parametrize("grader, wrong, problem", WRONG,
                         ids=[f"{g.__name__}-{w.__name__}-{i}" for i, (g, w, _)
                              in enumerate(WRONG)])
def test_a_wrong_answer_fails_naming_its_problem(grader, wrong, problem, capsys):
    assert not judged(grader, wrong)
    out = shown(capsys)
    assert out.startswith("NOT YET") and problem in out, out


# -- the graders' own references ----------------------------------------------------------------

def test_the_cases_vary_what_an_answer_could_hard_code():
    cases = ranking_cases()
    shapes = {Y.shape for Y, _ in cases}
    assert len({n for n, _ in shapes}) >= 5 and len({L for _, L in shapes}) >= 5
    assert any((S == S.max(axis=1, keepdims=True)).sum(axis=1).max() > 1 for _, S in cases)
    assert any(((np.asarray(Y) > 0).sum(axis=1) == 1).any() for Y, _ in cases)
    selection = [dict(named) for _, named in selection_cases()]
    assert {case["variant"] for case in selection} == {"B", "R"}
    assert len({tuple(case["C_values"]) for case in selection}) >= 5


def test_the_rule_is_fit_brs():
    """The selection reference follows mlnn.paper.selection's rule: with margins of real SVMs on
    a small synthetic collection, reference_C picks the C that fit_br picks."""
    data = make_synthetic(n_train=200, n_test=10, n_features=60, n_labels=6, random_state=3)
    X, Y = data["X_train"], data["Y_train"]
    fit_rows, val_rows = validation_split(X.shape[0], 0.25, random_state=0)
    grid = [0.01, 0.1, 1.0, 10.0]
    margins, previous = [], None
    for C in grid:
        previous = LinearSVMBR(C=C).fit(X[fit_rows], Y[fit_rows], **warm_start(previous))
        margins.append(previous.decision_function(X[val_rows]))
    Y_val = Y[val_rows].toarray()
    for variant in "BR":
        chosen = fit_br(X, Y, variant, grid, validation=(fit_rows, val_rows), refit=False).C
        assert reference_C(grid, margins, Y_val, variant) == chosen


# -- near ties, scores off any grid, float32 ------------------------------------------------------

def rank_loss_with_tolerance(Y, S):
    relevant = np.asarray(Y) > 0
    p = relevant[:, :, None] & ~relevant[:, None, :]
    tied = np.isclose(S[:, :, None], S[:, None, :], rtol=0, atol=1e-9)
    wrong = (S[:, :, None] < S[:, None, :]) & ~tied
    return np.sum(p * (wrong + 0.5 * tied), axis=(1, 2)) / (relevant.sum(1) * (~relevant).sum(1))


def coverage_on_a_grid(Y, S):
    return ex.coverage_by_hand(Y, np.round(S, 1))


def one_error_float32(Y, S):
    return ex.one_error_by_hand(Y, S).astype(np.float32)


def ap_with_rounded_scores(Y, S):
    return ex.average_precision_by_hand(Y, np.round(S, 8))


GRID_WRONG = [
    (course.check_rank_loss, rank_loss_with_tolerance, "not tied"),
    (course.check_coverage, coverage_on_a_grid, "wrong on"),
    (course.check_one_error, one_error_float32, "dtype float32, expected float64"),
    (course.check_average_precision, ap_with_rounded_scores, "not tied"),
]


@pytest.mark.parametrize("grader, wrong, problem", GRID_WRONG,
                         ids=[w.__name__ for _, w, _ in GRID_WRONG])
def test_near_ties_scores_off_a_grid_and_float32_are_rejected(grader, wrong, problem, capsys):
    assert not judged(grader, wrong)
    out = shown(capsys)
    assert out.startswith("NOT YET") and problem in out, out
