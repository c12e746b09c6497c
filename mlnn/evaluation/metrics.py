"""The ten evaluation measures of the paper (Sec. 4, "Evaluation Measures"), Hamming loss, and the
validation-selection score.

``Y`` (n × L, 0/1, dense or sparse): row k the label set y of document k, ȳ its complement;
``scores`` the dense n × L outputs f(x); ``Y_pred`` the predicted label sets.

    rank loss     Eq. 1: (#{(k,l) ∈ y×ȳ : f_k < f_l} + ½ #{(k,l) ∈ y×ȳ : f_k = f_l}) / (|y||ȳ|)
    one-error     1 if the top-ranked label is not relevant, else 0
    coverage      max_{k ∈ y} rank(k) − 1
    MAP           (1/|y|) Σ_{k ∈ y} |{k' ∈ y : rank(k') ≤ rank(k)}| / rank(k)
    micro P/R/F1  from TP, FP, FN summed over all documents and labels
    macro P/R/F1  per label, then averaged over the L labels (maF: the mean of per-label F1)
    hamming       #{(k, l) : ŷ_kl ≠ y_kl} / (n·L) (not in the paper's tables)

Conventions: rank loss divides by the number of pairs |y||ȳ|, the usual reading of Eq. 1's
normalisation factor w(y), which the paper leaves open (it calls 1/(|y||ȳ|) "a typical choice"
beside the log loss); ties count ½ in rank loss (Eq. 1); elsewhere rank(l) = #{l' : f_l' ≥ f_l}
(pessimistic, scikit-learn's; coverage is its ``coverage_error`` minus one). Documents on which a
ranking measure is undefined are left out of its average, as MULAN does (no relevant label; for
rank loss also no irrelevant one); ``nan`` if none qualifies (:func:`undefined_measures` says
why). A label (or the whole matrix, for micro) with TP = FP = FN = 0 scores 1 (MULAN), another
zero denominator 0. An empty matrix (n = 0 or L = 0) raises :class:`~mlnn.base.errors.MLNNError`.
"""

import numpy as np

from mlnn.base.errors import MLNNError
from mlnn.base.validation import check_choice, check_scores, check_Y

#: The ten measures of the paper's Table 3, in its column order.
MEASURES = ("rankloss", "oneError", "coverage", "MAP", "miP", "miR", "miF", "maP", "maR", "maF")

#: Measures :func:`evaluate` reports besides the paper's ten (after them, in this order).
EXTRA_MEASURES = ("hamming",)

#: Measures for which a smaller value is better.
LOWER_IS_BETTER = frozenset({"rankloss", "oneError", "coverage", "hamming"})

#: Which labels the macro averages run over: every label (MULAN's and the paper's definition),
#: or only the labels with at least one positive document in Y_true (for validation selection).
MACRO_LABELS = ("all", "present")

#: Criteria :func:`selection_score` can maximise; "meanF" is the mean of micro- and macro-F1.
SELECTION_CRITERIA = ("meanF", "miF", "maF", "miP", "miR", "maP", "maR")

# Documents go in blocks of at most this many matrix entries, to bound memory.
_BLOCK_ENTRIES = 1 << 22


# -- ranking measures -----------------------------------------------------------------------------

def _rank_statistics(Y, scores):
    """Per-document rank loss, one-error, coverage and average precision, four (n,) arrays
    (``nan`` where undefined), from Y (dense bool) and scores (float64), n × L.

    Each row sorted once, viewed as one flat array; ties are runs of equal scores. For a relevant
    label at flat position p in the run [first, stop) of a row starting at row·L, ``first −
    row·L`` labels score higher, ``stop − row·L`` at least as high (its rank); relevant counts in
    such ranges come from binary search in the relevant positions.
    """
    n, L = scores.shape
    order = np.argsort(-scores, axis=1)
    s = np.take_along_axis(scores, order, axis=1)            # each row in descending order
    rel = np.take_along_axis(Y, order, axis=1)               # relevance in that order
    new_run = np.diff(s, axis=1, prepend=np.inf) != 0        # a run of equal scores starts
    run_first = np.flatnonzero(new_run)                      # first flat position of each run
    run_stop = np.append(run_first[1:], n * L)               # one past its last position

    p = np.flatnonzero(rel)                                  # relevant flat positions, sorted
    row = p // L
    row_start = row * L
    run = np.searchsorted(run_first, p, side="right") - 1
    first, stop = run_first[run], run_stop[run]
    rel_in_row_before = np.searchsorted(p, row_start)
    rel_before_run = np.searchsorted(p, first) - rel_in_row_before
    rel_to_run_end = np.searchsorted(p, stop) - rel_in_row_before
    rank = stop - row_start                                  # #{l : f_l >= f_k}

    n_rel = np.bincount(row, minlength=n)
    n_irr = L - n_rel
    has_rel = n_rel > 0
    # Eq. 1: irrelevant labels strictly above each relevant one, plus half of those tied with it
    irr_above = (first - row_start) - rel_before_run
    irr_tied = (stop - first) - (rel_to_run_end - rel_before_run)
    wrong_pairs = np.bincount(row, weights=irr_above + 0.5 * irr_tied, minlength=n)
    # precision at the rank of each relevant label: |{k' in y : f_k' >= f_k}| / rank(k)
    prec_sum = np.bincount(row, weights=rel_to_run_end / rank, minlength=n)
    # the last relevant label of a row (p is sorted) has the largest rank
    last = np.cumsum(n_rel) - 1
    max_rank = np.zeros(n)
    max_rank[has_rel] = rank[last[has_rel]]
    # the top run of row i starts at flat position i·L
    doc_start = np.arange(n) * L
    top_stop = run_stop[np.searchsorted(run_first, doc_start)]
    rel_in_top = np.searchsorted(p, top_stop) - np.searchsorted(p, doc_start)

    with np.errstate(invalid="ignore", divide="ignore"):
        rankloss = np.where(has_rel & (n_irr > 0), wrong_pairs / (n_rel * n_irr), np.nan)
        avg_prec = np.where(has_rel, prec_sum / n_rel, np.nan)
    one_error = np.where(has_rel, (rel_in_top < top_stop - doc_start).astype(float), np.nan)
    coverage = np.where(has_rel, max_rank - 1.0, np.nan)
    return rankloss, one_error, coverage, avg_prec


def check_not_empty(Y):
    """Raise :class:`MLNNError` if ``Y`` has no document or no label."""
    n, L = Y.shape
    if n == 0 or L == 0:
        what = "no documents" if n == 0 else "no labels"
        raise MLNNError(f"Y_true has {what} (shape {Y.shape}): the measures of an empty split "
                        "are undefined; evaluate on a split with at least one document")
    return Y


def undefined_measures(result):
    """``{measure: reason}`` for each ``nan`` in a ``result`` of :func:`evaluate`."""
    reasons = {"rankloss": "no document has both a relevant and an irrelevant label",
               "oneError": "no document has a relevant label",
               "coverage": "no document has a relevant label",
               "MAP": "no document has a relevant label"}
    return {measure: reasons.get(measure, "it is undefined on these labels")
            for measure, value in result.items()
            if isinstance(value, float) and np.isnan(value)}


def _mean_defined(values):
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else float("nan")


def ranking_measures(Y_true, scores):
    """``rankloss``, ``oneError``, ``coverage``, ``MAP`` of Y_true (n, L, 0/1) and scores (n, L),
    each averaged over the documents that define it."""
    scores = check_scores(scores)
    Y = check_not_empty(check_Y(Y_true, "Y_true", shape=scores.shape))
    n, L = scores.shape
    per_document = np.empty((4, n))
    block = max(1, _BLOCK_ENTRIES // L)
    for lo in range(0, n, block):
        per_document[:, lo:lo + block] = _rank_statistics(
            Y[lo:lo + block].toarray().astype(bool), scores[lo:lo + block])
    return {measure: _mean_defined(values)
            for measure, values in zip(("rankloss", "oneError", "coverage", "MAP"), per_document)}


def rank_loss(Y_true, scores):
    """Rank loss (Eq. 1): the fraction of (relevant, irrelevant) pairs ordered wrongly, ties ½."""
    return ranking_measures(Y_true, scores)["rankloss"]


# -- bipartition measures -------------------------------------------------------------------------

def _ratio(num, den, empty):
    """num / den elementwise; 1 where ``empty`` (TP = FP = FN = 0), 0 where only den is 0."""
    out = np.divide(num, den, out=np.zeros(np.shape(den)), where=den > 0)
    return np.where(empty, 1.0, out)


def _column_sums(Y):
    return np.asarray(Y.sum(axis=0), dtype=float).ravel()


def bipartition_measures(Y_true, Y_pred, macro_labels="all"):
    """``miP, miR, miF, maP, maR, maF`` of Y_pred against Y_true (n, L, 0/1); macro averages over
    ``macro_labels`` "all" or "present" (with a positive in Y_true; ``nan`` if none)."""
    check_choice(macro_labels, "macro_labels", MACRO_LABELS)
    Yt = check_not_empty(check_Y(Y_true, "Y_true"))
    Yp = check_Y(Y_pred, "Y_pred", shape=Yt.shape)
    tp = _column_sums(Yt.multiply(Yp))                  # per label
    fp, fn = _column_sums(Yp) - tp, _column_sums(Yt) - tp

    TP, FP, FN = tp.sum(), fp.sum(), fn.sum()
    empty = TP + FP + FN == 0
    result = {"miP": _ratio(TP, TP + FP, empty), "miR": _ratio(TP, TP + FN, empty),
              "miF": _ratio(2 * TP, 2 * TP + FP + FN, empty)}
    if macro_labels == "present":
        keep = tp + fn > 0
        tp, fp, fn = tp[keep], fp[keep], fn[keep]
    empty_labels = tp + fp + fn == 0
    result["maP"] = _ratio(tp, tp + fp, empty_labels).mean() if tp.size else np.nan
    result["maR"] = _ratio(tp, tp + fn, empty_labels).mean() if tp.size else np.nan
    result["maF"] = _ratio(2 * tp, 2 * tp + fp + fn, empty_labels).mean() if tp.size else np.nan
    return {key: float(value) for key, value in result.items()}


def hamming_loss(Y_true, Y_pred):
    """The fraction of wrong decisions, (|Y_true| + |Y_pred| − 2 |Y_true ∘ Y_pred|) / (n·L)."""
    Yt = check_not_empty(check_Y(Y_true, "Y_true"))
    Yp = check_Y(Y_pred, "Y_pred", shape=Yt.shape)
    wrong = Yt.nnz + Yp.nnz - 2 * Yt.multiply(Yp).nnz
    return float(wrong / (Yt.shape[0] * Yt.shape[1]))


def selection_score(Y_true, Y_pred, criterion="meanF", macro_labels="present"):
    """The value maximised when a hyper-parameter is chosen on validation documents:
    ``criterion`` ("meanF" = (miF + maF) / 2). Ours: macro averages over the labels with a
    validation positive unless ``macro_labels="all"``."""
    check_choice(criterion, "criterion", SELECTION_CRITERIA)
    result = bipartition_measures(Y_true, Y_pred, macro_labels=macro_labels)
    if criterion == "meanF":
        return (result["miF"] + result["maF"]) / 2.0
    return result[criterion]


def evaluate(Y_true, scores, Y_pred):
    """The ten measures of the paper's Table 3 (:data:`MEASURES`), then Hamming loss."""
    result = ranking_measures(Y_true, scores)           # both functions check their inputs
    result.update(bipartition_measures(Y_true, Y_pred))
    result["hamming"] = hamming_loss(Y_true, Y_pred)
    return {key: result[key] for key in MEASURES + EXTRA_MEASURES}
