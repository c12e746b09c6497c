"""Graders for notebook 06b: the measures of Sec. 4 by hand, micro and macro averaging, and the
selection of the SVMs' C for the binary-relevance baselines BR_B and BR_R.

Each ``check_*`` runs the student's function on many random cases (n and L varied, tied scores,
documents with one relevant label, negative scores, labels no document has) and on a few cases
built to separate the right answer from the usual mistakes. The reference of every case is
computed twice — by :mod:`mlnn.evaluation.metrics` and by the literal definition written with
loops below — and the two must agree (otherwise the grader reports its own failure). A wrong
answer gets a hint that names the mistake when the answer matches one of the mistakes listed
here on every case, and otherwise describes the first case it gets wrong; a hint never prints
the code or the expected value.

Conventions (those of :mod:`mlnn.evaluation.metrics`): for one document with scores s (length L)
and relevant labels y,

    one-error   1 if a label sharing the top score is irrelevant (ties count against), else 0
    coverage    max_{k ∈ y} rank(k) − 1,   rank(k) = #{l : s_l ≥ s_k}
    rank loss   Eq. 1: (#{(k, l) ∈ y × ȳ : s_k < s_l} + ½ #{(k, l) ∈ y × ȳ : s_k = s_l}) / (|y||ȳ|)
    AP          (1/|y|) Σ_{k ∈ y} #{k' ∈ y : s_k' ≥ s_k} / rank(k)

micro P/R/F1 pool TP, FP, FN over all labels; macro P/R/F1 average the per-label values over the
L labels, a label with TP = FP = FN = 0 scoring 1 and any other zero denominator giving 0.

The BR baselines (:func:`mlnn.paper.selection.fit_br`) choose C from a grid on a validation
split: BR_B by the mean of micro- and macro-F1 of the sign predictions ŷ_l = [s_l > 0], the
macro average over the labels with a positive validation document
(:func:`mlnn.evaluation.metrics.selection_score`); BR_R by the validation rank loss. The first C
of the grid wins ties.
"""

import numpy as np

from mlnn.course.grading import (NotYet, as_array, case_rngs, close, expect_dtype,
                                 expect_shape, grade, run)
# the grader of the choice of C lives in mlnn.course.c_selection; the notebook calls it from here
from mlnn.course.c_selection import check_select_C, reference_C, selection_cases
from mlnn.evaluation import metrics

#: Relative error below which an answer counts as equal to its reference.
TOLERANCE = 1e-9

#: The keys of :func:`check_micro_macro`'s answer, in the paper's order.
BIPARTITION = ("miP", "miR", "miF", "maP", "maR", "maF")


# ---------------------------------------------------------------------------------------------
# the literal definitions, one document at a time (y: bool vector, s: float vector)

def literal_one_error(y, s):
    """1 if some label with the top score is irrelevant, else 0."""
    top = [l for l in range(len(s)) if s[l] == max(s)]
    return float(any(not y[l] for l in top))


def literal_rank(s, k):
    """rank(k) = #{l : s_l ≥ s_k}: ties resolved pessimistically."""
    return sum(1 for l in range(len(s)) if s[l] >= s[k])


def literal_coverage(y, s):
    """max over relevant k of rank(k), minus 1."""
    return float(max(literal_rank(s, k) for k in range(len(s)) if y[k]) - 1)


def literal_rank_loss(y, s):
    """Eq. 1 by a double loop over the (relevant, irrelevant) pairs."""
    wrong, pairs = 0.0, 0
    for k in range(len(s)):
        for l in range(len(s)):
            if y[k] and not y[l]:
                pairs += 1
                wrong += 1.0 if s[k] < s[l] else 0.5 if s[k] == s[l] else 0.0
    return wrong / pairs


def literal_average_precision(y, s):
    """(1/|y|) Σ_{k ∈ y} #{k' ∈ y : s_k' ≥ s_k} / rank(k)."""
    relevant = [k for k in range(len(s)) if y[k]]
    total = sum(sum(1 for j in relevant if s[j] >= s[k]) / literal_rank(s, k) for k in relevant)
    return total / len(relevant)


# ---------------------------------------------------------------------------------------------
# the usual mistakes, one document at a time

def _first_top_error(y, s):
    return float(not y[int(np.argmax(s))])


def _optimistic_one_error(y, s):
    return float(not np.any(y[s == s.max()]))


def _strict_rank(s, k):
    return 1 + int(np.sum(s > s[k]))


def _order_rank(s, k):
    return 1 + int(np.flatnonzero(np.argsort(-s, kind="stable") == k)[0])


def _coverage_with(rank):
    return lambda y, s: float(max(rank(s, k) for k in np.flatnonzero(y)) - 1)


def _rank_loss_with(tie, norm):
    def rank_loss(y, s):
        p, q = s[y][:, None], s[~y][None, :]
        wrong = np.sum(p < q) + tie * np.sum(p == q)
        return float(wrong / norm(y))
    return rank_loss


def _ap_with(rank, over):
    def average_precision(y, s):
        relevant = np.flatnonzero(y)
        total = sum(np.sum(s[relevant] >= s[k]) / rank(s, k) for k in relevant)
        return float(total / over(y))
    return average_precision


def _ap_by_position(y, s):
    order = np.argsort(-s, kind="stable")
    hits = y[order]
    return float(np.sum(np.cumsum(hits) / np.arange(1, len(s) + 1) * hits) / y.sum())


def _ap_all_precisions(y, s):
    return float(np.mean([np.sum(y & (s >= s[k])) / literal_rank(s, k) for k in range(len(s))]))


TOLERANT = ("scores that differ, however little, are not tied: compare them exactly, without a "
            "tolerance or rounding")


def _rounded(literal):
    """A measure that takes scores within 1e-6 of each other as tied (rounds them)."""
    return lambda y, s: literal(y, np.round(s, 6))


RANKING_MISTAKES = {
    "one-error": [
        (_rounded(literal_one_error), TOLERANT),
        (_first_top_error, "ties at the top: your answer depends on which tied label comes first "
                           "in the row; count an error whenever any label sharing the top score "
                           "is irrelevant"),
        (_optimistic_one_error, "ties at the top count against the ranking: a document is an "
                                "error when any label sharing the top score is irrelevant, not "
                                "only when all of them are"),
        (lambda y, s: 1.0 - literal_one_error(y, s), "one-error is 1 when the top label is "
                                                     "NOT relevant; yours is inverted")],
    "coverage": [
        (_rounded(literal_coverage), TOLERANT),
        (lambda y, s: literal_coverage(y, s) + 1, "off by one: the paper's coverage counts the "
                                                  "steps past the top label, rank − 1 (a single "
                                                  "relevant label ranked first has coverage 0)"),
        (lambda y, s: literal_coverage(y, s) - 1, "off by one: rank(k) counts label k itself"),
        (_coverage_with(_strict_rank), "ties: rank(k) counts every label scoring at least as "
                                       "high as k (s_l ≥ s_k), not only those scoring higher"),
        (_coverage_with(_order_rank), "ties: your rank depends on the order of tied labels in "
                                      "the row; a tie puts k behind every label it ties with"),
        (lambda y, s: float(min(literal_rank(s, k) for k in np.flatnonzero(y)) - 1),
         "coverage looks for the relevant label ranked LAST (how far down one must go to see "
         "all of y), not the first")],
    "rank loss": [
        (_rounded(literal_rank_loss), TOLERANT),
        (_rank_loss_with(0.5, lambda y: len(y)), "normalise by the number of (relevant, "
                                                 "irrelevant) pairs |y||ȳ|, not by L"),
        (_rank_loss_with(0.5, lambda y: len(y) ** 2), "normalise by |y||ȳ|, not by L²"),
        (_rank_loss_with(0.5, lambda y: y.sum() * len(y)), "normalise by |y||ȳ|, not by |y|·L"),
        (_rank_loss_with(1.0, lambda y: y.sum() * (~y).sum()), "a tie between a relevant and an "
                                                               "irrelevant label counts ½ (Eq. 1), "
                                                               "not as a whole error"),
        (_rank_loss_with(0.0, lambda y: y.sum() * (~y).sum()), "a tie between a relevant and an "
                                                               "irrelevant label counts ½ (Eq. 1), "
                                                               "not 0"),
        (lambda y, s: 1.0 - literal_rank_loss(y, s), "rank loss counts the pairs ordered "
                                                     "WRONGLY (relevant below irrelevant)")],
    "MAP": [
        (_rounded(literal_average_precision), TOLERANT),
        (_ap_with(literal_rank, lambda y: len(y)), "average the precisions over the relevant "
                                                   "labels (divide by |y|), not over all L"),
        (_ap_all_precisions, "average the precisions at the ranks of the relevant labels only, "
                             "not at every label"),
        (_ap_with(literal_rank, lambda y: 1.0), "average precision is a mean over the relevant "
                                                "labels: divide the sum by |y|"),
        (_ap_with(_strict_rank, lambda y: y.sum()), "ties: rank(k) counts every label scoring at "
                                                    "least as high as k (s_l ≥ s_k)"),
        (_ap_by_position, "ties: your rank depends on the order of tied labels in the row; a "
                          "tie puts k behind every label it ties with")],
}

#: What each measure does with tied scores, for a hint when only documents with ties go wrong.
TIES = {"one-error": "a document is an error whenever any label sharing the top score is "
                     "irrelevant",
        "coverage": "rank(k) = #{l : s_l ≥ s_k} counts every label tied with k",
        "rank loss": "a (relevant, irrelevant) pair with equal scores counts ½",
        "MAP": "rank(k) = #{l : s_l ≥ s_k} and the relevant k' with s_k' ≥ s_k both count the "
               "labels tied with k"}

LITERAL = {"one-error": literal_one_error, "coverage": literal_coverage,
           "rank loss": literal_rank_loss, "MAP": literal_average_precision}

#: The key of each measure in :func:`mlnn.evaluation.metrics.ranking_measures`.
METRIC_KEY = {"one-error": "oneError", "coverage": "coverage", "rank loss": "rankloss",
              "MAP": "MAP"}


# ---------------------------------------------------------------------------------------------
# the cases of the ranking exercises

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


def _random_scores(rng, n, L):
    kind = rng.integers(4)
    if kind == 3 and L > 1:                      # two scores within 1e-9 of each other: no tie
        S = rng.normal(size=(n, L))
        S[:, 1] = S[:, 0] + rng.choice([-1, 1], size=n) * rng.uniform(1e-12, 1e-10, size=n)
        return S
    if kind == 0:                                # a few distinct values: many ties
        return rng.choice(rng.normal(size=rng.integers(2, 5)) * 2, size=(n, L))
    if kind == 1:                                # margins rounded to one decimal
        return np.round(rng.normal(scale=1.5, size=(n, L)) - 0.5, 1)
    return rng.random((n, L))                    # distinct scores in [0, 1)


def _random_labels(rng, n, L, need_irrelevant):
    Y = rng.random((n, L)) < rng.uniform(0.1, 0.7)
    for row in Y:
        if not row.any():
            row[rng.integers(L)] = True
        if need_irrelevant and row.all():
            row[rng.integers(L)] = False
    return Y


def ranking_cases(need_irrelevant=False, count=40, seed=2014):
    """[(Y, scores)]: the special documents one at a time and stacked (n = 7), then ``count``
    random cases with n in 1 … 8 and L in 2 … 12. Every document has a relevant label, and an
    irrelevant one when ``need_irrelevant`` (rank loss); Y's dtype varies (bool, int8, float)."""
    documents = [(np.array(y, dtype=bool), np.array(s)) for y, s in SPECIAL_DOCUMENTS]
    cases = [(y[None, :], s[None, :]) for y, s in documents]
    cases.append((np.array([y for y, _ in documents]), np.array([s for _, s in documents])))
    for rng in case_rngs(seed, count):
        n, L = int(rng.integers(1, 9)), int(rng.integers(2, 13))
        cases.append((_random_labels(rng, n, L, need_irrelevant), _random_scores(rng, n, L)))
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


def ranking_reference(measure, Y, S):
    """Per-document values of ``measure``: the literal definition, checked against
    :func:`mlnn.evaluation.metrics.ranking_measures` on each row (a disagreement is the
    grader's own failure and raises RuntimeError)."""
    Y = np.asarray(Y) > 0
    literal = np.array([LITERAL[measure](y, s) for y, s in zip(Y, S)])
    library = np.array([metrics.ranking_measures(Y[i:i + 1], S[i:i + 1])[METRIC_KEY[measure]]
                        for i in range(len(Y))])
    if not close(literal, library, TOLERANCE):
        raise RuntimeError(f"the literal {measure} and mlnn.evaluation.metrics disagree")
    return literal


def _per_document(answer, n, what):
    array = as_array(answer, what)
    if array.ndim == 0:
        raise NotYet(f"{what} is a single number: return one value per document (an array of "
                     f"length n = {n}), not their mean")
    expect_shape(array, (n,), what)
    expect_dtype(array, np.float64(0), what, "biuf")
    values = array.astype(np.float64)
    if not np.all(np.isfinite(values)):
        raise NotYet(f"{what} holds NaN or infinite values; every document here has a relevant "
                     "label (and, for rank loss, an irrelevant one)")
    return values


def _has_ties(s):
    return len(np.unique(s)) < len(s)


def _mistake_values(mistake, cases):
    try:
        return [np.array([mistake(np.asarray(y) > 0, s) for y, s in zip(Y, S)])
                for Y, S in cases]
    except (ArithmeticError, ValueError, IndexError):
        return None


def _named_mistake(mistakes, cases, answers, references):
    """The hint of the first mistake that reproduces every answer and differs from the
    reference somewhere; None if no mistake does."""
    for mistake, hint in mistakes:
        values = _mistake_values(mistake, cases)
        if values is None:
            continue
        matches = all(close(a, v, TOLERANCE) for a, v in zip(answers, values))
        differs = not all(close(v, r, TOLERANCE) for v, r in zip(values, references))
        if matches and differs:
            return hint
    return None


def _check_ranking(measure, function):
    name = f"{measure} function"

    def attempt():
        cases = ranking_cases(need_irrelevant=measure == "rank loss")
        answers, references = [], []
        for Y, S in cases:
            answer = run(function, ("Y", Y), ("scores", S), name=name)
            answers.append(_per_document(answer, len(Y), f"the {measure} of the documents"))
            references.append(ranking_reference(measure, Y, S))
        wrong = [(c, i) for c, (a, r) in enumerate(zip(answers, references))
                 for i in range(len(a)) if not close(a[i], r[i], TOLERANCE)]
        if not wrong:
            return (f"{len(cases)} cases, {sum(len(a) for a in answers)} documents, equal to "
                    "mlnn.evaluation.metrics and to the literal definition")
        hint = _named_mistake(RANKING_MISTAKES[measure], cases, answers, references)
        if hint is None and all(_has_ties(cases[c][1][i]) for c, i in wrong):
            hint = ("right on every document without tied scores, wrong on some with ties: "
                    + TIES[measure])
        c, i = wrong[0]
        Y, S = cases[c]
        where = _describe_document(np.asarray(Y[i]) > 0, S[i], i, len(Y))
        raise NotYet(f"wrong on {len(wrong)} documents, the first: {where}. "
                     + (hint or "Check the definition and its tie convention above."))
    return grade(f"{measure} by hand", attempt)


def check_one_error(one_error_by_hand):
    """``one_error_by_hand(Y, scores)`` → (n,) one-error of each document (ties count against)."""
    return _check_ranking("one-error", one_error_by_hand)


def check_coverage(coverage_by_hand):
    """``coverage_by_hand(Y, scores)`` → (n,) max_{k ∈ y} rank(k) − 1 of each document."""
    return _check_ranking("coverage", coverage_by_hand)


def check_rank_loss(rank_loss_by_hand):
    """``rank_loss_by_hand(Y, scores)`` → (n,) Eq. 1 of each document (ties count ½)."""
    return _check_ranking("rank loss", rank_loss_by_hand)


def check_average_precision(average_precision_by_hand):
    """``average_precision_by_hand(Y, scores)`` → (n,) average precision of each document; their
    mean is MAP."""
    return _check_ranking("MAP", average_precision_by_hand)


# ---------------------------------------------------------------------------------------------
# micro and macro averaging

def _ratios(num, den, empty, empty_value=1.0, zero_value=0.0):
    """num / den; ``empty_value`` where TP = FP = FN = 0, ``zero_value`` where only den is 0."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    out = np.where(den > 0, num / np.where(den > 0, den, 1.0), zero_value)
    return np.where(empty, empty_value, out)


def _counts(Y_true, Y_pred, axis):
    t, p = np.asarray(Y_true) > 0, np.asarray(Y_pred) > 0
    return (np.sum(t & p, axis=axis).astype(float), np.sum(~t & p, axis=axis).astype(float),
            np.sum(t & ~p, axis=axis).astype(float))


def _prf(tp, fp, fn, **convention):
    empty = tp + fp + fn == 0
    return (_ratios(tp, tp + fp, empty, **convention), _ratios(tp, tp + fn, empty, **convention),
            _ratios(2 * tp, 2 * tp + fp + fn, empty, **convention))


def literal_bipartition(Y_true, Y_pred):
    """micro and macro P/R/F1 counted with loops over documents and labels (MULAN's
    convention: a label with TP = FP = FN = 0 scores 1, any other zero denominator 0)."""
    t, p = np.asarray(Y_true) > 0, np.asarray(Y_pred) > 0
    n, L = t.shape
    tp, fp, fn = np.zeros(L), np.zeros(L), np.zeros(L)
    for i in range(n):
        for l in range(L):
            tp[l] += t[i, l] and p[i, l]
            fp[l] += p[i, l] and not t[i, l]
            fn[l] += t[i, l] and not p[i, l]
    micro = _prf(np.array(tp.sum()), np.array(fp.sum()), np.array(fn.sum()))
    macro = _prf(tp, fp, fn)
    return dict(zip(BIPARTITION, [float(v) for v in micro] + [float(v.mean()) for v in macro]))


def _macro_with(keep=None, micro_too=False, **convention):
    """A mistaken convention for the macro average (and, with ``micro_too``, the micro one)."""
    def bipartition(Y_true, Y_pred):
        tp, fp, fn = _counts(Y_true, Y_pred, 0)
        micro = _prf(tp.sum(), fp.sum(), fn.sum(), **(convention if micro_too else {}))
        if keep is not None:
            rows = keep(tp, fp, fn)
            tp, fp, fn = tp[rows], fp[rows], fn[rows]
        macro = [v.mean() if v.size else np.nan for v in _prf(tp, fp, fn, **convention)]
        return dict(zip(BIPARTITION, [float(v) for v in micro] + [float(v) for v in macro]))
    return bipartition


def _over_documents(which):
    def bipartition(Y_true, Y_pred):
        result = literal_bipartition(Y_true, Y_pred)
        per_doc = [float(v.mean()) for v in _prf(*_counts(Y_true, Y_pred, 1))]
        result.update(zip(("miP", "miR", "miF") if which == "micro" else ("maP", "maR", "maF"),
                          per_doc))
        return result
    return bipartition


def _micro_as_label_mean(Y_true, Y_pred):
    result = literal_bipartition(Y_true, Y_pred)
    result.update(miP=result["maP"], miR=result["maR"], miF=result["maF"])
    return result


def _micro_f1_as_label_mean(Y_true, Y_pred):
    result = literal_bipartition(Y_true, Y_pred)
    return {**result, "miF": result["maF"]}


def _harmonic_maF(Y_true, Y_pred):
    result = literal_bipartition(Y_true, Y_pred)
    P, R = result["maP"], result["maR"]
    return {**result, "maF": 2 * P * R / (P + R) if P + R > 0 else 0.0}


def _swapped(Y_true, Y_pred):
    result = literal_bipartition(Y_true, Y_pred)
    return {**result, "miP": result["miR"], "miR": result["miP"], "maP": result["maR"],
            "maR": result["maP"]}


_EMPTY_ZERO = ("a label with no true and no predicted positive (TP = FP = FN = 0) scores 1 here "
               "(MULAN's convention), and so do the micro measures when nothing is true and "
               "nothing predicted; yours scores it 0")

_ZERO_ONE = ("a zero denominator with something to count (nothing predicted while something is "
             "true, or predicted while nothing is true) gives 0, not 1")

BIPARTITION_MISTAKES = [
    (_over_documents("macro"), "your macro measures average over the documents (rows); macro "
                               "averages over the labels (columns): P, R and F1 of each label, "
                               "then their mean over the L labels"),
    (_over_documents("micro"), "your micro measures average per-document values; micro pools "
                               "TP, FP and FN over every document and label first, then divides"),
    (_micro_as_label_mean, "your micro measures are means of per-label values — that is macro "
                           "averaging; micro pools TP, FP and FN over all labels first"),
    (_micro_f1_as_label_mean, "your micro-F1 is the mean of the per-label F1 — that is macro-F1; "
                              "micro-F1 is 2TP / (2TP + FP + FN) with the counts pooled"),
    (_harmonic_maF, "macro-F1 is the mean of the per-label F1 scores, not the harmonic mean of "
                    "maP and maR"),
    (_macro_with(empty_value=0.0, micro_too=True), _EMPTY_ZERO),
    (_macro_with(empty_value=0.0), _EMPTY_ZERO),
    (_macro_with(keep=lambda tp, fp, fn: tp + fp + fn > 0),
     "a label with no true and no predicted positive still counts in the macro average (it "
     "scores 1); yours leaves it out"),
    (_macro_with(keep=lambda tp, fp, fn: tp + fn > 0),
     "the paper's macro average runs over all L labels, also those with no true positive "
     "document (a label only predicted scores 0, a label neither true nor predicted 1)"),
    (_macro_with(zero_value=1.0, micro_too=True), _ZERO_ONE),
    (_macro_with(zero_value=1.0), _ZERO_ONE),
    (_swapped, "precision and recall are swapped: precision = TP / (TP + FP) (of what was "
               "predicted), recall = TP / (TP + FN) (of what is relevant)"),
]


def bipartition_cases(count=30, seed=2015):
    """[(Y_true, Y_pred)] 0/1 int8 matrices: a few built cases (nothing true and nothing
    predicted; nothing predicted), then ``count`` random cases with n in 1 … 25 and L in 1 … 12,
    skewed label frequencies, a label with TP = FP = FN = 0 and one only predicted."""
    cases = [(np.zeros((3, 4)), np.zeros((3, 4))),
             (np.array([[1, 0, 0], [1, 1, 0]]), np.zeros((2, 3))),
             (np.array([[1, 0], [0, 0], [1, 0]]), np.array([[1, 1], [0, 0], [0, 0]]))]
    for rng in case_rngs(seed, count):
        n, L = int(rng.integers(1, 26)), int(rng.integers(1, 13))
        frequency = rng.uniform(0.02, 0.6) / np.arange(1, L + 1) ** rng.uniform(0, 1.5)
        Y_true = rng.random((n, L)) < frequency
        Y_pred = Y_true ^ (rng.random((n, L)) < rng.uniform(0.05, 0.4))
        if L >= 3:
            Y_true[:, -1] = Y_pred[:, -1] = False          # TP = FP = FN = 0
            Y_true[:, -2] = False                          # only predicted (or nothing)
        cases.append((Y_true, Y_pred))
    return [(np.asarray(t, dtype=np.int8), np.asarray(p, dtype=np.int8)) for t, p in cases]


def bipartition_reference(Y_true, Y_pred):
    """The literal counts, checked against :func:`mlnn.evaluation.metrics.bipartition_measures`
    (RuntimeError, the grader's own failure, if they disagree)."""
    literal = literal_bipartition(Y_true, Y_pred)
    library = metrics.bipartition_measures(Y_true, Y_pred)
    if not all(close(literal[k], library[k], TOLERANCE) for k in BIPARTITION):
        raise RuntimeError("the literal micro/macro measures and mlnn.evaluation.metrics disagree")
    return literal


def _bipartition_answer(answer):
    if answer is None:
        raise NotYet("no answer yet (the function returned None)")
    if not isinstance(answer, dict):
        raise NotYet(f"return a dict with the keys {', '.join(BIPARTITION)}, not a "
                     f"{type(answer).__name__}")
    missing = [key for key in BIPARTITION if key not in answer]
    if missing:
        raise NotYet(f"your dict lacks the keys {', '.join(missing)}")
    values = {}
    for key in BIPARTITION:
        array = as_array(answer[key], key)
        if array.size != 1:
            raise NotYet(f"{key} must be one number, not an array of shape {array.shape}")
        values[key] = float(array.reshape(()))
        if not np.isfinite(values[key]):
            raise NotYet(f"{key} is NaN or infinite: every zero denominator has a value here")
    return values


def _agrees(answer, mistake):
    """Whether an answer equals a mistake's values wherever the mistake is defined (a mistake
    averaging over no label gives NaN, where a student's version may give anything)."""
    return all(close(answer[k], mistake[k], TOLERANCE) for k in BIPARTITION
               if np.isfinite(mistake[k]))


def _describe_bipartition(Y_true, Y_pred):
    t, p = Y_true > 0, Y_pred > 0
    n, L = t.shape
    parts = [f"a case with n = {n} documents and L = {L} labels"]
    if (~t & ~p).all(axis=0).any():
        parts.append("a label no document has and none is predicted")
    if (~t.any(axis=0) & p.any(axis=0)).any():
        parts.append("a label predicted but never true")
    if not t.any():
        parts.append("no label true in any document")
    if not p.any():
        parts.append("nothing predicted")
    return ", ".join(parts)


def check_micro_macro(micro_macro_by_hand):
    """``micro_macro_by_hand(Y_true, Y_pred)`` → {"miP", "miR", "miF", "maP", "maR", "maF"}."""
    def attempt():
        cases = bipartition_cases()
        answers, references = [], []
        for Y_true, Y_pred in cases:
            answer = run(micro_macro_by_hand, ("Y_true", Y_true), ("Y_pred", Y_pred),
                         name="micro/macro function")
            answers.append(_bipartition_answer(answer))
            references.append(bipartition_reference(Y_true, Y_pred))
        wrong = [c for c, (a, r) in enumerate(zip(answers, references))
                 if not all(close(a[k], r[k], TOLERANCE) for k in BIPARTITION)]
        if not wrong:
            return f"{len(cases)} cases, equal to mlnn.evaluation.metrics and to the counts"
        for mistake, hint in BIPARTITION_MISTAKES:
            if all(_agrees(a, mistake(*case)) for a, case in zip(answers, cases)):
                raise NotYet(hint)
        first = wrong[0]
        keys = [k for k in BIPARTITION if not close(answers[first][k], references[first][k],
                                                    TOLERANCE)]
        raise NotYet(f"{', '.join(keys)} wrong on {len(wrong)} of {len(cases)} cases, the "
                     f"first: {_describe_bipartition(*cases[first])}. Micro pools the counts "
                     "over all labels; macro averages the per-label values over all L labels.")
    return grade("micro and macro P/R/F1 by hand", attempt)
