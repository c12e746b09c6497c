"""Solutions to the exercises of notebook 06b (the measures of Sec. 4 and the BR baseline).

The ranking measures take the true label sets Y (n × L, 0/1) and the scores (n × L) and return
one value per document; ties follow mlnn.evaluation.metrics: rank(k) = #{l : s_l ≥ s_k}.
"""

import numpy as np

from mlnn.evaluation import metrics


def one_error_by_hand(Y, scores):
    """1 where a label sharing the document's top score is irrelevant."""
    relevant = np.asarray(Y) > 0
    top = scores == scores.max(axis=1, keepdims=True)
    return np.any(top & ~relevant, axis=1).astype(float)


def _ranks(scores):
    """rank[i, k] = #{l : s_il ≥ s_ik} (pessimistic ranks)."""
    return np.sum(scores[:, None, :] >= scores[:, :, None], axis=2)


def coverage_by_hand(Y, scores):
    """max over the relevant labels of rank(k), minus 1."""
    relevant = np.asarray(Y) > 0
    return np.max(np.where(relevant, _ranks(scores), 0), axis=1) - 1.0


def rank_loss_by_hand(Y, scores):
    """Eq. 1: wrongly ordered (relevant, irrelevant) pairs, ties ½, over |y||ȳ|."""
    relevant = np.asarray(Y) > 0
    s_k, s_l = scores[:, :, None], scores[:, None, :]          # k relevant, l irrelevant
    pairs = relevant[:, :, None] & ~relevant[:, None, :]
    wrong = np.sum(pairs * ((s_k < s_l) + 0.5 * (s_k == s_l)), axis=(1, 2))
    return wrong / (relevant.sum(axis=1) * (~relevant).sum(axis=1))


def average_precision_by_hand(Y, scores):
    """(1/|y|) Σ_{k ∈ y} #{k' ∈ y : s_k' ≥ s_k} / rank(k)."""
    relevant = np.asarray(Y) > 0
    at_least = scores[:, None, :] >= scores[:, :, None]        # [i, k, l]: s_l ≥ s_k
    precision = np.sum(at_least & relevant[:, None, :], axis=2) / at_least.sum(axis=2)
    return np.sum(np.where(relevant, precision, 0.0), axis=1) / relevant.sum(axis=1)


def _ratio(num, den, empty):
    """num / den; 1 where TP = FP = FN = 0, 0 where only the denominator is 0."""
    safe = np.where(den > 0, den, 1)
    return np.where(empty, 1.0, np.where(den > 0, num / safe, 0.0))


def micro_macro_by_hand(Y_true, Y_pred):
    """micro: pool TP, FP, FN over all labels; macro: per-label P/R/F1, mean over the L labels."""
    t, p = np.asarray(Y_true) > 0, np.asarray(Y_pred) > 0
    tp = np.sum(t & p, axis=0).astype(float)
    fp = np.sum(~t & p, axis=0).astype(float)
    fn = np.sum(t & ~p, axis=0).astype(float)
    result = {}
    for prefix, (a, b, c) in (("mi", (tp.sum(), fp.sum(), fn.sum())), ("ma", (tp, fp, fn))):
        empty = a + b + c == 0
        values = (_ratio(a, a + b, empty), _ratio(a, a + c, empty),
                  _ratio(2 * a, 2 * a + b + c, empty))
        for name, value in zip("PRF", values):
            result[prefix + name] = float(np.mean(value))
    return result


def select_C(C_values, S_val, Y_val, S_test, Y_test, variant):
    """BR_B: the best mean of micro- and macro-F1 of the sign predictions (macro over the labels
    with a validation positive); BR_R: the lowest validation rank loss. The first C wins ties;
    the test split is not looked at."""
    if variant == "B":
        values = [-metrics.selection_score(Y_val, S > 0) for S in S_val]
    else:
        values = [metrics.rank_loss(Y_val, S) for S in S_val]
    return C_values[int(np.argmin(values))]      # argmin returns the first of equal values
