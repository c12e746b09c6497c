"""Graders of PWE's δ2 (Eq. 10, Sec. 3.4) in all its forms: one document
(notebook 01), a minibatch by the pair sum and factorised in O(L) per document (01b), and the
documents PWE excludes (05). The reference and its mistakes are :mod:`~mlnn.course.pairwise`'s."""

import numpy as np

from mlnn.course.grading import (CASES, CaseRng, Mistake, NotYet, as_array, case_rngs, judge,
                                 make_grader, run, within)
from mlnn.course.pairwise import PWE_MISTAKES, pwe_reference
from mlnn.course.pieces import delta_cases, labels, piece
from mlnn.nn.losses import PairwiseExponential


# -- notebook 01: one document ---------------------------------------------------------------------

def _of_one(batch):
    """A δ2 function of documents (z2, o, Y) as one of one document (o, y)."""
    return lambda o, y: batch(np.arctanh(o)[None, :], np.asarray(o)[None, :],
                              np.asarray(y)[None, :])[0]


def _pwe_document_cases():
    """``pwe_delta_one(o, y)`` → δ2 of one document for PWE over tanh outputs (1-d arrays, Eq. 10,
    Sec. 3.4); the last two deep in saturation (|z2| from 3 to 15, o up to 1 − 2e-13)."""
    for i, rng in enumerate(case_rngs(3, CASES)):
        L = int(rng.integers(3, 11))
        size = {0: 1, 1: L // 2, 2: L - 1}.get(i, rng.integers(1, L))   # |y| = 1, ≈ |ȳ|, …
        y = np.zeros(L)
        y[rng.choice(L, size=size, replace=False)] = 1.0
        z2, saturated = rng.normal(size=L), i >= CASES - 2
        if saturated:
            z2 = np.sign(z2) * rng.uniform(3, 15, size=L)
        yield (f"δ2 for L = {L}, |y| = {size}, |ȳ| = {L - size}"
               f"{', saturated outputs (|z2| ≥ 3)' if saturated else ''}",
               [("o", np.tanh(z2)), ("y", y)])


check_pwe_delta = make_grader(   # the last mistake, a division by n, means nothing for one document
    "check_pwe_delta", "PWE δ2 of one document", _of_one(pwe_reference), _pwe_document_cases,
    [Mistake(m.hint, _of_one(m.answer)) for m in PWE_MISTAKES[:-1]],
    scale="the sum over pairs is normalised by the wrong count (try a document with |y| ≠ |ȳ|)")


# -- notebook 05: the documents PWE excludes -------------------------------------------------------

def _excluded_cases():
    """``excluded(Y)`` → the boolean mask of documents without a (relevant, irrelevant) pair."""
    for rng, dtype in zip(case_rngs(14, 4), (np.int64, np.float64, np.int32, np.int8)):
        n, L = rng.integers(4, 12), rng.integers(2, 9)
        Y = (rng.random((n, L)) < rng.uniform(0.2, 0.8)).astype(dtype)
        Y[0], Y[1] = 0, 1                       # one without relevant labels, one all relevant
        yield f"the mask for n = {n}, L = {L}", [("Y", Y[rng.permutation(n)])]
    Y = np.ones((3, 300), dtype=np.int8)     # counts past 127
    Y[1, ::2] = 0
    yield "the mask for n = 3, L = 300", [("Y", Y)]


check_pwe_excluded = make_grader(
    "check_pwe_excluded", "PWE's excluded documents", PairwiseExponential().excluded,
    _excluded_cases, [
        Mistake("a document whose labels are all relevant has no pair either",
                lambda Y: np.count_nonzero(Y, axis=1) == 0),
        Mistake("a document with no relevant label has no pair either",
                lambda Y: np.count_nonzero(Y, axis=1) == Y.shape[1])], kind="b")


# -- notebook 01b: a minibatch, by the pair sum and factorised -------------------------------------

def _expect_pwe(answer, expected, what, wrongs, inputs):
    """An excluded document's δ2 row is 0; then the values, a known mistake named."""
    array = as_array(answer, what)
    if array.shape == expected.shape:
        rows = array[PairwiseExponential().excluded(np.asarray(inputs["Y"]))].astype(float)
        if not np.all(np.isfinite(rows)) or np.any(rows != 0):
            raise NotYet("a document with no relevant label, or with every label relevant, has "
                         "no pair: PWE excludes it and its δ2 row must be 0 (no division by zero)")
    judge(answer, expected, what, wrongs)


def _pwe_batch_cases():
    """``pwe_delta2_pairs(z2, o, Y)`` → PWE's δ2 (Eq. 10, Sec. 3.4) through tanh outputs."""
    return delta_cases("tanh", 30)


def _large_pwe_cases():
    """``pwe_delta2(z2, o, Y)`` → PWE's δ2 in O(L) per document, all documents at once; also on
    2 documents of 1,500 labels, where no array of all pairs may be formed and no loop may run
    over them, and on 3,000 documents of 4 labels, where no loop may run over the documents."""
    yield from _pwe_batch_cases()
    rng = CaseRng(31)
    for n, L in ((2, 1500), (3000, 4)):
        z2 = rng.normal(size=(n, L))
        yield (f"δ2 for n = {n}, L = {L}",
               [("z2", z2), ("o", np.tanh(z2)), ("Y", labels(rng, n, L))])


#: The sizes (n, L) where the work of PWE's δ2 shows, and the hints of too much memory or CPU
#: time there: an array of all pairs or a loop over the labels (2 documents of 200,000 labels),
#: an n × n array or a loop over the documents (200,000 documents of 4 labels).
WORK_SHOWN = {
    "labels": ((2, 200_000), {
        "memory": "your δ2 does work for every (relevant, irrelevant) pair: the factorised form "
                  "needs only two sums over the labels of each document, O(L) per document",
        "cpu": "on 2 documents of 200,000 labels your δ2 takes far longer than array work of O(L) "
               "per document: it loops over the labels or the pairs one at a time; the "
               "factorised form needs only two sums over the labels of each document"}),
    "documents": ((200_000, 4), {
        "memory": "your δ2 forms an array with a row per document for every document (n × n, "
                  "such as a product over the documents whose diagonal is kept): each "
                  "document's sums need only its own row, O(L) per document",
        "cpu": "your δ2 loops over the documents (or the labels) one at a time: compute it for "
               "all documents at once, with array operations over the whole minibatch"})}


def run_linear(function, *named, name="function"):
    """:func:`~mlnn.course.grading.run`; on a large case first the work at a size where its
    order shows, whatever form the code takes: O(L) memory and CPU time per document (many
    labels), no n × n array and no loop over the documents (many documents)."""
    n, L = np.shape(named[1][1])
    if max(n, L) >= 1000:
        rng = CaseRng(32)
        size, hint = WORK_SHOWN["labels" if L >= 1000 else "documents"]
        z2 = rng.normal(size=size)
        Y = (rng.random(size) < rng.uniform(0.2, 0.8, size=(size[0], 1))).astype(float)
        Y[:, 0], Y[:, 1] = 1, 0                # every document has a pair
        big = [("z2", z2), ("o", np.tanh(z2)), ("Y", Y)]
        within(function, *big, name=name, memory=64 * z2.size * 8, reference=pwe_reference,
               hint=hint)
    return run(function, *named, name=name)


check_pwe_delta2_pairs = piece(make_grader("check_pwe_delta2_pairs", "PWE's δ2 by the pair sum",
                                        pwe_reference, _pwe_batch_cases, PWE_MISTAKES,
                                        expect=_expect_pwe, name="pwe_delta2_pairs"))


check_pwe_delta2 = piece(make_grader("check_pwe_delta2", "PWE's δ2 factorised", pwe_reference,
                                  _large_pwe_cases, PWE_MISTAKES, expect=_expect_pwe,
                                  runner=run_linear, name="pwe_delta2"))
