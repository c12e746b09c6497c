"""The ranking measures of Sec. 4 (one-error, coverage, rank loss, average precision) as the
graders judge them, one document at a time: mlnn's :mod:`mlnn.evaluation.metrics` as reference,
the usual mistakes (tie conventions, normalisers, off by one) and random scores of several kinds.
Notebooks 03, 05 and 07 grade one document, 06b a matrix of them, with the same tables."""

import numpy as np

from mlnn.course.grading import CaseRng, Mistake, case_rngs, label_rows
from mlnn.evaluation import metrics

#: The key of each measure in :func:`mlnn.evaluation.metrics.ranking_measures`.
METRIC_KEY = {"one-error": "oneError", "coverage": "coverage", "rank loss": "rankloss",
              "MAP": "MAP"}


def measure_of(measure):
    """``measure`` of one document (y a bool vector, s the scores) by mlnn's metrics."""
    key = METRIC_KEY[measure]
    return lambda y, s: float(metrics.ranking_measures(y[None, :], s[None, :])[key])


def scores_first(per_document):
    """A per-document f(y, s) as the answer of notebooks 03, 05 and 07: f(scores, y)."""
    return lambda s, y: per_document(np.asarray(y) > 0, np.asarray(s, dtype=np.float64))


# ---------------------------------------------------------------------------------------------
# the usual mistakes, one document at a time (y: bool vector, s: float vector)

def pessimistic_rank(s, k):
    """rank(k) = #{l : s_l ≥ s_k}: ties resolved pessimistically."""
    return int(np.sum(s >= s[k]))


def _strict_rank(s, k):
    return 1 + int(np.sum(s > s[k]))


def _order_rank(s, k):
    return 1 + int(np.flatnonzero(np.argsort(-s, kind="stable") == k)[0])


def _coverage_with(rank, pick=max):
    return lambda y, s: float(pick(rank(s, k) for k in np.flatnonzero(y)) - 1)


def _rank_loss_with(tie, norm):
    def rank_loss(y, s):
        p, q = s[y][:, None], s[~y][None, :]
        return float((np.sum(p < q) + tie * np.sum(p == q)) / norm(y))
    return rank_loss


def _pairs(y):
    return y.sum() * (~y).sum()


def _ap_with(rank, over):
    def average_precision(y, s):
        relevant = np.flatnonzero(y)
        return float(sum(np.sum(s[relevant] >= s[k]) / rank(s, k) for k in relevant) / over(y))
    return average_precision


def _ap_by_position(y, s):
    hits = y[np.argsort(-s, kind="stable")]
    return float(np.sum(np.cumsum(hits) / np.arange(1, len(s) + 1) * hits) / y.sum())


def _ap_all_precisions(y, s):
    return float(np.mean([np.sum(y & (s >= s[k])) / pessimistic_rank(s, k)
                          for k in range(len(s))]))


TOLERANT = ("scores that differ, however little, are not tied: compare them exactly, without a "
            "tolerance or rounding")


def _rounded(measure):
    """A measure that takes scores within 1e-6 of each other as tied (rounds them)."""
    return lambda y, s: measure_of(measure)(y, np.round(s, 6))


def _plus(measure, c, sign=1):
    return lambda y, s: c + sign * measure_of(measure)(y, s)


TIES_ORDER = ("ties: your rank depends on the order of tied labels in the row; a tie puts k "
              "behind every label it ties with")

#: The mistakes of each ranking measure, as wrong answers f(y, s) of one document; first of
#: each, scores within 1e-6 taken as tied.
RANKING_MISTAKES = {measure: [Mistake(TOLERANT, _rounded(measure)), *table]
                    for measure, table in {
    "one-error": [
        Mistake("ties at the top: your answer depends on which tied label comes first in the row; "
                "count an error whenever any label sharing the top score is irrelevant",
                lambda y, s: float(not y[int(np.argmax(s))])),
        Mistake("ties at the top count against the ranking: a document is an error when any label "
                "sharing the top score is irrelevant, not only when all of them are",
                lambda y, s: float(not np.any(y[s == s.max()]))),
        Mistake("one-error is 1 when the top label is NOT relevant; yours is inverted",
                _plus("one-error", 1, -1))],
    "coverage": [
        Mistake(TIES_ORDER, _coverage_with(_order_rank)),
        Mistake("ties: rank(k) counts every label scoring at least as high as k (s_l ≥ s_k), not "
                "only those scoring higher", _coverage_with(_strict_rank)),
        Mistake("off by one, 1 too large: the paper's coverage counts the steps past the top "
                "label, rank − 1 (a single relevant label ranked first has coverage 0)",
                _plus("coverage", 1)),
        Mistake("off by one, 1 too small: rank(k) counts label k itself", _plus("coverage", -1)),
        Mistake("coverage looks for the relevant label ranked LAST (how far down one must go to "
                "see all of y), not the first", _coverage_with(pessimistic_rank, min))],
    "rank loss": [
        *(Mistake(hint, _rank_loss_with(tie, norm)) for hint, tie, norm in (
            ("normalise by the number of (relevant, irrelevant) pairs |y||ȳ|, not by L", 0.5, len),
            ("normalise by |y||ȳ|, not by L²", 0.5, lambda y: len(y) ** 2),
            ("normalise by |y||ȳ|, not by |y|·L", 0.5, lambda y: y.sum() * len(y)),
            ("a tie between a relevant and an irrelevant label counts ½ (Eq. 1), not as a whole "
             "error", 1.0, _pairs),
            ("a tie between a relevant and an irrelevant label counts ½ (Eq. 1), not 0", 0.0,
             _pairs),
            ("divide by |y||ȳ|, the number of (relevant, irrelevant) pairs", 0.5, lambda y: 1))),
        Mistake("rank loss counts the pairs ordered wrongly (relevant below irrelevant), not those "
                "ordered rightly", _plus("rank loss", 1, -1))],
    "MAP": [
        Mistake("average the precisions over the relevant labels (divide by |y|), not over all L",
                _ap_with(pessimistic_rank, len)),
        Mistake("average the precisions at the ranks of the relevant labels only, not at every "
                "label", _ap_all_precisions),
        Mistake("average precision is a mean over the relevant labels: divide the sum by |y|",
                _ap_with(pessimistic_rank, lambda y: 1.0)),
        Mistake("ties: rank(k) counts every label scoring at least as high as k (s_l ≥ s_k)",
                _ap_with(_strict_rank, np.sum)),
        Mistake(TIES_ORDER, _ap_by_position)],
}.items()}

#: What each measure does with tied scores, for a hint when only documents with ties go wrong.
TIES = {"one-error": "a document is an error whenever any label sharing the top score is "
                     "irrelevant",
        "coverage": "rank(k) = #{l : s_l ≥ s_k} counts every label tied with k",
        "rank loss": "a (relevant, irrelevant) pair with equal scores counts ½",
        "MAP": "rank(k) = #{l : s_l ≥ s_k} and the relevant k' with s_k' ≥ s_k both count the "
               "labels tied with k"}


#: The kinds of random scores, as a case's description names them.
SCORE_KINDS = ("tied scores rounded to one decimal", "two scores one floating-point step apart "
               "(not tied)", "scores on no coarse grid", "tied scores on a few values")


def random_scores(rng, n, L, kind, gap=None):
    """n × L scores of a ``kind`` of :data:`SCORE_KINDS`; two scores of the second kind are
    ``gap`` to 100 ``gap`` apart if it is given."""
    if kind == SCORE_KINDS[3]:
        return rng.choice(rng.normal(size=rng.integers(2, 5)) * 2, size=(n, L))
    S = rng.random((n, L))
    if kind == SCORE_KINDS[0]:
        return np.round(S, 1)
    if kind == SCORE_KINDS[1]:
        side = rng.choice([-1.0, 1.0], size=n)
        S[:, 1] = (np.nextafter(S[:, 0], side * np.inf) if gap is None
                   else S[:, 0] + side * rng.uniform(gap, 100 * gap, size=n))
    return S


def step_above(value):
    """The float64 just above ``value``: a score that differs by the least amount there is, so
    that a comparison with any tolerance (or rounding) takes the two as tied."""
    return float(np.nextafter(value, np.inf))


#: Documents (y, s), |y| = 2 of L = 5 (so that every normaliser differs), with two scores one
#: floating-point step apart: the upper one relevant and ranked last of y (any tie tolerance
#: changes coverage, rank loss and MAP), relevant at the top (one-error), irrelevant (rank loss).
NEAR_TIES = (((1, 1, 0, 0, 0), (0.9, step_above(0.3), 0.3, 0.2, 0.1)),
             ((1, 0, 1, 0, 0), (step_above(0.3), 0.3, 0.1, 0.2, 0.05)),
             ((0, 1, 1, 0, 0), (step_above(-0.5), -0.5, -1.0, -2.0, -3.0)))


def large_documents(seed, L=400):
    """(y, s) of two documents of L = 400 labels, |y| = 200: every pair ordered wrongly, and
    scores in a random order. Their counts (40,000 pairs, ranks to 400) do not fit the narrow
    integer types (int8, int16)."""
    rng = CaseRng(seed, 400)
    y = (np.arange(L) % 2 == 0).astype(np.int8)
    return [(y, np.where(y > 0, 0.0, 1.0) + 0.5 * rng.random(L)), (y, rng.permutation(L) / L)]


def one_document_cases(seed, count, n, what, gap=None):
    """(scores, y) of one document at a time, from ``count`` cases of n documents: L from 3 to
    12, labels of several dtypes, every document with a relevant and an irrelevant label, the
    scores of each kind; then the documents of :data:`NEAR_TIES` and :func:`large_documents`.
    With a ``gap``, no two scores are closer than ``gap`` (and no document of :data:`NEAR_TIES`)."""
    for rng, dtype, kind in zip(case_rngs(seed, count), (np.int8, np.float64, np.int32, np.int64),
                                SCORE_KINDS):
        L = int(rng.integers(3, 13))
        scores, Y = random_scores(rng, n, L, kind, gap), label_rows(rng, n, L).astype(dtype)
        for s, y in zip(scores, Y):
            yield (f"{what} with L = {L}, |y| = {np.sum(y > 0)} and {kind}",
                   [("scores", s), ("y", y)])
    for y, s in NEAR_TIES if gap is None else ():
        yield (f"{what} with two scores one floating-point step apart (not tied)",
               [("scores", np.array(s)), ("y", np.array(y, dtype=np.int8))])
    for y, s in large_documents(seed):
        yield f"{what} with L = {len(y)}, |y| = {int(y.sum())}", [("scores", s), ("y", y)]
