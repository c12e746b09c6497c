"""Graders of the ranking measures of Sec. 4 (one-error, coverage, rank loss, MAP): of one
document (notebooks 03–07) and by hand over a set of documents (06b), against mlnn's
:mod:`mlnn.evaluation.metrics`; the references and mistakes are :mod:`~mlnn.course.ranking`'s."""

import numpy as np

from mlnn.course.grading import (MEASURE_TOLERANCE, Mistake, NotYet, as_array, case_rngs, close,
                                 expect_dtype, expect_shape, make_grader)
from mlnn.course.ranking import (NEAR_TIES, RANKING_MISTAKES, SCORE_KINDS, TIES, large_documents,
                                 measure_of, one_document_cases, random_scores, scores_first)


# -- notebooks 03, 05, 07: one document ------------------------------------------------------------

def _one_document_grader(label, measure, seed, noun=None):
    """The grader of ``measure`` of one document (notebooks 03, 05 and 07), with 06b's table."""
    noun = noun or measure

    def cases():
        yield from one_document_cases(seed, 4, 12, f"the {noun} of a document")
    cases.__doc__ = f"``(scores, y)`` of one document → the {noun} (Sec. 4)."
    return make_grader(label, f"{noun} of one document", scores_first(measure_of(measure)), cases,
                    [Mistake(m.hint, scores_first(m.answer)) for m in RANKING_MISTAKES[measure]],
                    kind="biuf")


check_rank_loss_one = _one_document_grader("check_rank_loss_one", "rank loss", 11)
check_average_precision_one = _one_document_grader("check_average_precision_one", "MAP", 12,
                                          "average precision")
check_coverage_one = _one_document_grader("check_coverage_one", "coverage", 13)


# -- notebook 06b: the measures by hand over a set of documents ------------------------------------

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
    """[(Y, scores)]: the special documents and those of :data:`NEAR_TIES` one at a time, each
    set stacked (n = 7 and 3), the two of :func:`large_documents` (L = 400), then ``count``
    random cases with n in 1 … 8 and L in 2 … 12. Every document has a relevant label, and an
    irrelevant one when ``need_irrelevant`` (rank loss); Y's dtype varies (bool, int8, float)."""
    cases = []
    for special in (SPECIAL_DOCUMENTS, NEAR_TIES):
        documents = [(np.array(y, dtype=bool), np.array(s)) for y, s in special]
        cases += [(y[None, :], s[None, :]) for y, s in documents]
        cases.append((np.array([y for y, _ in documents]), np.array([s for _, s in documents])))
    large = large_documents(seed)
    cases.append((np.array([y for y, _ in large]) > 0, np.array([s for _, s in large])))
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
    top, gaps = int(np.sum(s == s.max())), np.diff(np.sort(s))
    notes = {f"its top score shared by {top} labels": top > 1,
             "a relevant label tied with another label":
                 top == 1 and any(np.sum(s == s[k]) > 1 for k in np.flatnonzero(y)),
             "one relevant label": y.sum() == 1, "every label relevant": y.all(),
             "negative scores": s.min() < 0,
             "two scores less than 1e-9 apart (not tied)": np.any((gaps > 0) & (gaps < 1e-9))}
    return ", ".join([f"document {index + 1} of a case with n = {n}, L = {len(s)}, |y| = "
                      f"{int(y.sum())}", *(note for note in notes if notes[note])])


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
