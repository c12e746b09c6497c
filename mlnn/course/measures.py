"""Graders of notebook 06b: the measures of Sec. 4 by hand (the ranking ones over
:mod:`~mlnn.course.ranking`), micro and macro averaging, and the choice of C for the baselines
BR_B and BR_R (:func:`mlnn.paper.selection.fit_br`). The references are mlnn's
:mod:`mlnn.evaluation.metrics`.
"""

import numpy as np

from mlnn.course.grading import (NO_ANSWER, Mistake, NotYet, as_array, case_rngs, close,
                                 expect_dtype, expect_shape, make_grader, name_mistake, variant)
from mlnn.course.ranking import (RANKING_MISTAKES, SCORE_KINDS, TIES, measure_of,
                                 random_scores)
from mlnn.evaluation import metrics

#: Relative error below which an answer counts as equal to its reference.
MEASURE_TOLERANCE = 1e-9

#: The keys of :func:`check_micro_macro`'s answer, in the paper's order.
BIPARTITION = ("miP", "miR", "miF", "maP", "maR", "maF")

# ---------------------------------------------------------------------------------------------
# the ranking exercises

#: Hand-built documents (y, s) with L = 4 that separate the tie conventions.
SPECIAL_DOCUMENTS = (
    ((1, 0, 0, 1), (0.9, 0.9, 0.1, 0.3)),      # top tie, the relevant label listed first
    ((0, 1, 0, 0), (0.9, 0.9, 0.2, 0.1)),      # top tie, the irrelevant label listed first
    ((0, 1, 0, 1), (0.5, 0.5, 0.5, 0.5)),      # every score tied
    ((0, 0, 0, 1), (0.4, 0.3, 0.2, 0.1)),      # one relevant label, ranked last
    ((1, 0, 0, 0), (3.0, 2.0, 1.0, 0.0)),      # one relevant label, ranked first
    ((0, 1, 1, 0), (-0.2, -1.5, -0.2, -3.0)),  # negative margins, a relevant label tied
    ((1, 1, 0, 0), (2.0, 1.0, 1.0, 1.0)),      # a relevant label tied with two irrelevant
)


def ranking_cases(need_irrelevant=False, count=40, seed=2014):
    """[(Y, scores)]: the special documents one at a time and stacked (n = 7), then ``count``
    random cases with n in 1 … 8 and L in 2 … 12. Every document has a relevant label, and an
    irrelevant one when ``need_irrelevant`` (rank loss); Y's dtype varies (bool, int8, float)."""
    documents = [(np.array(y, dtype=bool), np.array(s)) for y, s in SPECIAL_DOCUMENTS]
    cases = [(y[None, :], s[None, :]) for y, s in documents]
    cases.append((np.array([y for y, _ in documents]), np.array([s for _, s in documents])))
    for rng in case_rngs(seed, count):
        n, L = int(rng.integers(1, 9)), int(rng.integers(2, 13))
        Y = rng.random((n, L)) < rng.uniform(0.1, 0.7)
        for row in Y:
            if not row.any():
                row[rng.integers(L)] = True
            if need_irrelevant and row.all():
                row[rng.integers(L)] = False
        cases.append((Y, random_scores(rng, n, L, SCORE_KINDS[rng.integers(4)])))
    if not need_irrelevant:                      # every label relevant: defined except rank loss
        cases.append((np.ones((2, 5), dtype=bool), np.array([[1.0, 2, 3, 4, 5], [0.0] * 5])))
    dtypes = (bool, np.int8, np.float64)
    return [(Y.astype(dtypes[i % 3]), S.astype(np.float64)) for i, (Y, S) in enumerate(cases)]


def _describe_document(y, s, index, n):
    """Words for one document of a case, to say where an answer goes wrong."""
    parts = [f"document {index + 1} of a case with n = {n}, L = {len(s)}, |y| = {int(y.sum())}"]
    top = s == s.max()
    if top.sum() > 1:
        parts.append(f"its top score shared by {int(top.sum())} labels")
    elif any(np.sum(s == s[k]) > 1 for k in np.flatnonzero(y)):
        parts.append("a relevant label tied with another label")
    if y.sum() == 1:
        parts.append("one relevant label")
    if y.all():
        parts.append("every label relevant")
    if s.min() < 0:
        parts.append("negative scores")
    gaps = np.diff(np.sort(s))
    if np.any((gaps > 0) & (gaps < 1e-9)):
        parts.append("two scores within 1e-9 of each other (not tied)")
    return ", ".join(parts)


def _rows(per_document):
    """A per-document function f(y, s) as an answer: one value per row of (Y, scores)."""
    return lambda Y, S: np.array([per_document(np.asarray(y) > 0, s) for y, s in zip(Y, S)])


def _expect_ranking(measure):
    """One value per document, each equal to the reference; a wrong answer is named by a
    mistake of the table, else described by its first wrong document."""
    def expect(answer, expected, what, wrongs, inputs):
        array = as_array(answer, what)
        if array.ndim == 0:
            raise NotYet(f"{what} is a single number: return one value per document (an array "
                         f"of length n = {len(expected)}), not their mean")
        expect_shape(array, expected.shape, what)
        expect_dtype(array, expected, what, "biuf")
        values = array.astype(np.float64)
        if not np.all(np.isfinite(values)):
            raise NotYet(f"{what} holds NaN or infinite values; every document here has a "
                         "relevant label (and, for rank loss, an irrelevant one)")
        wrong = [i for i in range(len(values))
                 if not close(values[i], expected[i], MEASURE_TOLERANCE)]
        if not wrong:
            return
        name_mistake(values, expected, wrongs, f"wrong on {len(wrong)} documents",
                     MEASURE_TOLERANCE)
        Y, S = np.asarray(inputs["Y"]) > 0, inputs["scores"]
        ties = all(len(np.unique(S[i])) < S.shape[1] for i in wrong)
        hint = (f"right on every document without tied scores, wrong on some with ties: "
                f"{TIES[measure]}" if ties else "Check the definition and its tie convention "
                "above.")
        raise NotYet(f"wrong on {len(wrong)} documents, the first: "
                     f"{_describe_document(Y[wrong[0]], S[wrong[0]], wrong[0], len(Y))}. {hint}")
    return expect


def _ranking_grader(measure, name):
    def cases():
        for Y, S in ranking_cases(need_irrelevant=measure == "rank loss"):
            yield f"the {measure} of {len(Y)} documents", [("Y", Y), ("scores", S)]
    cases.__doc__ = (f"``{name}(Y, scores)`` → (n,) the {measure} of each document (ties as "
                     ":mod:`mlnn.evaluation.metrics`).")
    return make_grader(f"check_{name.removesuffix('_by_hand')}", f"{measure} by hand",
                    _rows(measure_of(measure)), cases,
                    [Mistake(m.hint, _rows(m.answer)) for m in RANKING_MISTAKES[measure]],
                    expect=_expect_ranking(measure))


check_one_error = _ranking_grader("one-error", "one_error_by_hand")
check_coverage = _ranking_grader("coverage", "coverage_by_hand")
check_rank_loss = _ranking_grader("rank loss", "rank_loss_by_hand")
check_average_precision = _ranking_grader("MAP", "average_precision_by_hand")


# ---------------------------------------------------------------------------------------------
# micro and macro averaging

def _counts(Y_true, Y_pred, axis):
    t, p = np.asarray(Y_true) > 0, np.asarray(Y_pred) > 0
    return [np.sum(a, axis=axis).astype(float) for a in (t & p, ~t & p, t & ~p)]


def _prf(tp, fp, fn, empty_value=1.0, zero_value=0.0):
    """P, R and F1 of counts: ``empty_value`` where TP = FP = FN = 0, ``zero_value`` where only
    the denominator is 0."""
    def ratio(num, den):
        out = np.where(den > 0, num / np.where(den > 0, den, 1.0), zero_value)
        return np.where(tp + fp + fn == 0, empty_value, out)
    return ratio(tp, tp + fp), ratio(tp, tp + fn), ratio(2 * tp, 2 * tp + fp + fn)


def bipartition_reference(Y_true, Y_pred):
    """micro and macro P/R/F1 by :func:`mlnn.evaluation.metrics.bipartition_measures` (MULAN's
    convention: a label with TP = FP = FN = 0 scores 1, any other zero denominator 0)."""
    values = metrics.bipartition_measures(Y_true, Y_pred)
    return {key: float(values[key]) for key in BIPARTITION}


def _macro_with(keep=None, micro_too=False, **convention):
    """A mistaken convention for the macro average (and, with ``micro_too``, the micro one)."""
    def bipartition(Y_true, Y_pred):
        tp, fp, fn = _counts(Y_true, Y_pred, 0)
        micro = _prf(tp.sum(), fp.sum(), fn.sum(), **(convention if micro_too else {}))
        if keep is not None:
            rows = keep(tp, fp, fn)
            tp, fp, fn = tp[rows], fp[rows], fn[rows]
        macro = [v.mean() if v.size else 1.0 for v in _prf(tp, fp, fn, **convention)]
        return dict(zip(BIPARTITION, [float(v) for v in [*micro, *macro]]))
    return bipartition


def _changed(change):
    """The right answer with the keys ``change(right, Y_true, Y_pred)`` gives replaced."""
    def bipartition(Y_true, Y_pred):
        right = bipartition_reference(Y_true, Y_pred)
        return {**right, **change(right, Y_true, Y_pred)}
    return bipartition


def _per_document(keys):
    return _changed(lambda r, t, p: dict(zip(keys, (v.mean() for v in _prf(*_counts(t, p, 1))))))


EMPTY_ZERO = ("a label with no true and no predicted positive (TP = FP = FN = 0) scores 1 here "
              "(MULAN's convention), and so do the micro measures when nothing is true and "
              "nothing predicted; yours scores it 0")
ZERO_ONE = ("a zero denominator with something to count (nothing predicted while something is "
            "true, or predicted while nothing is true) gives 0, not 1")

BIPARTITION_MISTAKES = [
    Mistake("your macro measures average over the documents (rows); "
            "macro averages over the labels (columns): P, R and F1 of "
            "each label, then their mean over the L labels",
            _per_document(BIPARTITION[3:])),
    Mistake("your micro measures average per-document values; micro "
            "pools TP, FP and FN over every document and label first, "
            "then divides",
            _per_document(BIPARTITION[:3])),
    Mistake("your micro measures are means of per-label values — that is macro averaging; "
            "micro pools TP, FP and FN over all labels first",
            _changed(lambda r, t, p: dict(miP=r["maP"], miR=r["maR"], miF=r["maF"]))),
    Mistake("your micro-F1 is the mean of the per-label F1 — that is macro-F1; micro-F1 is "
            "2TP / (2TP + FP + FN) with the counts pooled",
            _changed(lambda r, t, p: dict(miF=r["maF"]))),
    Mistake("macro-F1 is the mean of the per-label F1 scores, not the harmonic mean of maP and maR",
            _changed(lambda r, t, p: dict(maF=2 * r["maP"] * r["maR"] / (r["maP"] + r["maR"])
            if r["maP"] + r["maR"] > 0 else 0.0))),
    Mistake(EMPTY_ZERO,
            _macro_with(empty_value=0.0, micro_too=True)),
    Mistake(EMPTY_ZERO,
            _macro_with(empty_value=0.0)),
    Mistake("a label with no true and no predicted positive still counts in the macro average (it "
            "scores 1); yours leaves it out",
            _macro_with(keep=lambda tp, fp, fn: tp + fp + fn > 0)),
    Mistake("the paper's macro average runs over all L labels, also those with no true positive "
            "document (a label only predicted scores 0, a label neither true nor predicted 1)",
            _macro_with(keep=lambda tp, fp, fn: tp + fn > 0)),
    Mistake(ZERO_ONE,
            _macro_with(zero_value=1.0, micro_too=True)),
    Mistake(ZERO_ONE,
            _macro_with(zero_value=1.0)),
    Mistake("precision and recall are swapped: precision = TP / (TP + FP) (of what was predicted), "
            "recall = TP / (TP + FN) (of what is relevant)",
            _changed(lambda r, t, p: dict(miP=r["miR"], miR=r["miP"], maP=r["maR"], maR=r["maP"])))]


def _bipartition_cases():
    """``micro_macro_by_hand(Y_true, Y_pred)`` → {"miP", "miR", "miF", "maP", "maR", "maF"}:
    a few built cases (nothing true and nothing predicted; nothing predicted), then random
    0/1 int8 matrices, n in 1 … 25, L in 1 … 12, skewed label frequencies, a label with
    TP = FP = FN = 0 and one only predicted."""
    cases = [(np.zeros((3, 4)), np.zeros((3, 4))),
             (np.array([[1, 0, 0], [1, 1, 0]]), np.zeros((2, 3))),
             (np.array([[1, 0], [0, 0], [1, 0]]), np.array([[1, 1], [0, 0], [0, 0]]))]
    for rng in case_rngs(2015, 30):
        n, L = int(rng.integers(1, 26)), int(rng.integers(1, 13))
        frequency = rng.uniform(0.02, 0.6) / np.arange(1, L + 1) ** rng.uniform(0, 1.5)
        Y_true = rng.random((n, L)) < frequency
        Y_pred = Y_true ^ (rng.random((n, L)) < rng.uniform(0.05, 0.4))
        if L >= 3:
            Y_true[:, -1] = Y_pred[:, -1] = False          # TP = FP = FN = 0
            Y_true[:, -2] = False                          # only predicted (or nothing)
        cases.append((Y_true, Y_pred))
    for number, (t, p) in enumerate(cases):
        t, p = np.asarray(t, dtype=np.int8), np.asarray(p, dtype=np.int8)
        parts = [f"case {number + 1}, with n = {t.shape[0]} documents and L = {t.shape[1]} labels"]
        if (~(t > 0) & ~(p > 0)).all(axis=0).any():
            parts.append("a label no document has and none is predicted")
        if (~t.any(axis=0) & p.any(axis=0)).any():
            parts.append("a label predicted but never true")
        if not t.any():
            parts.append("no label true in any document")
        if not p.any():
            parts.append("nothing predicted")
        yield ", ".join(parts), [("Y_true", t), ("Y_pred", p)]


def _expect_bipartition(answer, expected, what, wrongs, inputs):
    """A dict of six numbers, each equal to the reference."""
    if answer is None:
        raise NotYet(NO_ANSWER)
    if not isinstance(answer, dict):
        raise NotYet(f"return a dict with the keys {', '.join(BIPARTITION)}, not a "
                     f"{type(answer).__name__}")
    missing = [key for key in BIPARTITION if key not in answer]
    if missing:
        raise NotYet(f"your dict lacks the keys {', '.join(missing)}")
    wrong = []
    for key in BIPARTITION:
        array = as_array(answer[key], key)
        if array.size != 1:
            raise NotYet(f"{key} must be one number, not an array of shape {array.shape}")
        if not np.isfinite(float(array.reshape(()))):
            raise NotYet(f"{key} is NaN or infinite: every zero denominator has a value here")
        if not close(float(array.reshape(())), expected[key], MEASURE_TOLERANCE):
            wrong.append(key)
    if wrong:
        raise NotYet(f"{', '.join(wrong)} wrong on {what}. Micro pools the counts over all "
                     "labels; macro averages the per-label values over all L labels.")


check_micro_macro = make_grader("check_micro_macro", "micro and macro P/R/F1 by hand",
                             bipartition_reference, _bipartition_cases, BIPARTITION_MISTAKES,
                             expect=_expect_bipartition, whole=True)


# ---------------------------------------------------------------------------------------------
# the choice of C for BR_B and BR_R

def selection_values(S_list, Y, variant, predict=lambda S: S > 0, **score):
    """The validation criterion of each C: BR_B's mean of micro- and macro-F1 of the label sets
    ``predict(S)`` (:func:`mlnn.evaluation.metrics.selection_score`, higher is better), BR_R's
    rank loss (lower is better)."""
    if variant == "B":
        return [metrics.selection_score(Y, predict(S), **score) for S in S_list]
    return [metrics.rank_loss(Y, S) for S in S_list]


def select(C_values, S_val, Y_val, S_test, Y_test, variant, split="val", by=None, flip=False,
           last=False, position=False, near=False, **score):
    """The C that :func:`mlnn.paper.selection.fit_br` chooses, by a literal loop (the first C
    wins ties); or with one mistake: the ``split`` "test", the criterion of variant ``by``, the
    comparison ``flip`` ped, the ``last`` C of ties, its ``position``, the first C within
    np.isclose of the best (``near``), BR_B's ``score`` changed."""
    S, Y = (S_val, Y_val) if split == "val" else (S_test, Y_test)
    by = by or variant
    values = selection_values(S, Y, by, **(score if variant == "B" else {}))
    sign = -1 if (by == "B") != flip else 1      # F1: higher is better; rank loss: lower
    order = range(len(values))[::-1] if last else range(len(values))
    best = min(order, key=lambda i: sign * values[i])          # min keeps the first of ties
    if near:
        best = next(i for i in order if np.isclose(values[i], values[best]))
    return best if position else C_values[best]


def reference_C(C_values, S_val, Y_val, variant):
    """The C that :func:`mlnn.paper.selection.fit_br` chooses from these validation margins."""
    return select(C_values, S_val, Y_val, None, None, variant)


SELECTION_MISTAKES = [
    Mistake("your C is the one the TEST split prefers: choose C on the validation split; the test "
            "split only reports the result",
            variant(select, split="test")),
    Mistake("ties: when several C values score the same, take the first of the grid (the "
            "smallest C), not the last",
            variant(select, last=True)),
    Mistake("BR_B's macro-F1 runs over the labels that have a positive validation document (the "
            "project's selection convention), not over all labels",
            variant(select, macro_labels="all")),
    Mistake("BR_B chooses by the MEAN of micro- and macro-F1, not by micro-F1 alone",
            variant(select, criterion="miF")),
    Mistake("BR_B chooses by the MEAN of micro- and macro-F1, not by macro-F1 alone",
            variant(select, criterion="maF")),
    Mistake("BR_B predicts label l when its margin is strictly positive, s_l > 0; a margin of "
            "exactly 0 is not a prediction",
            variant(select, predict=lambda S: S >= 0)),
    Mistake("the SVM margins are not probabilities: BR_B's sign prediction thresholds them at "
            "0, not 0.5",
            variant(select, predict=lambda S: S > 0.5)),
    Mistake("BR_B chooses C by F1 of its sign predictions, not by rank loss (that is BR_R)",
            variant(select, by="R")),
    Mistake("BR_R chooses C by the validation rank loss of the margins, not by F1 (that is BR_B)",
            variant(select, by="B")),
    Mistake("lower rank loss is better, higher F1 is better: your comparison runs the wrong way",
            variant(select, flip=True)),
    Mistake("return the C value itself (an element of C_values), not its position in the grid",
            variant(select, position=True)),
    Mistake("criteria that differ, however little, are not tied: compare them exactly (the first C "
            "wins only an exact tie), not within a tolerance such as np.isclose's",
            variant(select, near=True))]


def _labels(rng, n, L):
    frequency = rng.uniform(0.1, 0.5) / np.arange(1, L + 1) ** rng.uniform(0.3, 1.5)
    Y = rng.random((n, L)) < frequency
    Y[:, rng.choice(L, size=max(1, L // 4), replace=False)] = False   # no validation positive
    Y[0, 0] = True
    return Y.astype(np.int8)


def _margins(rng, Y, count):
    sign = 2.0 * Y - 1
    S = [rng.uniform(0.2, 2.0) * sign + rng.normal(size=Y.shape) + rng.uniform(-1.5, 0.3)
         for _ in range(count)]
    for margins in S:                                    # some margins exactly 0
        margins[rng.random(Y.shape) < 0.05] = 0.0
    return [np.round(margins, 2) for margins in S]


def _plant_tie(C_values, S, Y, variant):
    """Replace a neighbour of the best C by twice its margins (same signs, same ranking): two
    C values tie on either criterion. Returns the pair of tied indices."""
    best = C_values.index(reference_C(C_values, S, Y, variant))
    other = best + 1 if best + 1 < len(S) else best - 1
    S[other] = 2.0 * S[best]
    return {best, other}


def selection_cases(count=36, seed=2016):
    """``select_C(C_values, S_val, Y_val, S_test, Y_test, variant)`` → the C that BR_B (variant
    "B") or BR_R ("R") chooses; ``S_val[j]``, ``S_test[j]`` are the margins of the SVMs trained
    with ``C_values[j]``. Grids of 3 … 7 powers of ten within the paper's 10⁻³ … 10³, margins
    of 2 decimals (some exactly 0), labels with no validation positive, a planted tie at the
    best C in two cases of three, the variants alternating, and no other tie."""
    for k, rng in enumerate(case_rngs(seed, count)):
        variant = "BR"[k % 2]
        while True:
            C_values = [float(10.0 ** e) for e in range(int(rng.integers(-3, 1)), 4)]
            C_values = C_values[:int(rng.integers(3, len(C_values) + 1))]
            n_val, n_test, L = (int(v) for v in rng.integers((20, 20, 3), (61, 61, 11)))
            Y_val, Y_test = _labels(rng, n_val, L), _labels(rng, n_test, L)
            S_val, S_test = _margins(rng, Y_val, len(C_values)), _margins(rng, Y_test,
                                                                          len(C_values))
            planted = _plant_tie(C_values, S_val, Y_val, variant) if k % 3 else set()
            values = selection_values(S_val, Y_val, variant)
            if not any(abs(values[i] - values[j]) < 1e-9 and {i, j} != planted
                       for i in range(len(values)) for j in range(i + 1, len(values))):
                break
        yield f"case {k + 1}", [("C_values", C_values), ("S_val", S_val), ("Y_val", Y_val),
                                ("S_test", S_test), ("Y_test", Y_test), ("variant", variant)]
    yield f"case {count + 1}", near_tie_case(np.random.default_rng(seed))


def near_tie_case(rng, n=2000, L=50):
    """BR_R on 2,000 validation documents of 50 labels, where C = 1 has the lowest rank loss and
    C = 0.1 one more wrongly ordered pair, in a document of 25 × 25 pairs: their criteria differ
    by 1/(2000 · 625) = 8e-7, closer than np.isclose's tolerance, and are not tied."""
    C_values = [0.01, 0.1, 1.0, 10.0]
    Y = _labels(rng, n, L)
    Y[0] = np.repeat([1, 0], L // 2)
    best = 2.0 * Y - 1 + rng.normal(scale=3.0, size=Y.shape)
    best[0] = np.concatenate([np.arange(L // 2) + L / 2 - 0.5, np.arange(L // 2)])
    near = best.copy()
    near[0, 0] = L / 2 - 1.5                     # the lowest relevant score below an irrelevant
    S_val = [best + rng.normal(scale=2.0, size=Y.shape), near, best,
             best + rng.normal(size=Y.shape)]
    return [("C_values", C_values), ("S_val", S_val), ("Y_val", Y), ("S_test", S_val),
            ("Y_test", Y), ("variant", "R")]


def _expect_selection(answer, expected, what, wrongs, inputs):
    """The C chosen, equal to the rule's; the case described if not."""
    array = as_array(answer, "your C")
    if array.size != 1:
        raise NotYet(f"return one C value, not an array of shape {array.shape}")
    value, C_values = float(array.reshape(())), inputs["C_values"]
    if not value.is_integer() and not any(np.isclose(value, C, rtol=1e-6, atol=0)
                                          for C in C_values):     # an integer may be a position
        raise NotYet(f"your answer {value:g} is not one of the grid's C values")
    if np.isclose(value, expected, rtol=1e-6, atol=0):            # a float32 C too
        return
    variant, Y_val = inputs["variant"], inputs["Y_val"]
    values = selection_values(inputs["S_val"], Y_val, variant)
    tied = values.count((max if variant == "B" else min)(values))
    raise NotYet(f"wrong C on {what}: variant {variant}, a grid of {len(C_values)} C values from "
                 f"{C_values[0]:g} to {C_values[-1]:g}, {len(Y_val)} validation documents, "
                 f"{Y_val.shape[1]} labels ({int(np.sum(~(Y_val > 0).any(axis=0)))} without a "
                 "validation positive)"
                 + (f", {tied} C values tied for the best validation criterion" if tied > 1
                    else "")
                 + ". BR_B: the mean of micro- and macro-F1 of the sign predictions; BR_R: the "
                 "rank loss of the margins; both on the validation split, the first C winning "
                 "ties.")


check_select_C = make_grader("check_select_C", "choosing C for BR_B and BR_R", select,
                          selection_cases, SELECTION_MISTAKES, expect=_expect_selection,
                          whole=True)
