"""Graders of the bipartitions: the F1-best threshold of a document and the ridge regression of
Eq. 5 (Sec. 3.3, notebook 06); micro and macro P/R/F1 by hand and the choice of C for the
baselines BR_B and BR_R (Sec. 4; :func:`mlnn.paper.selection.fit_br`, notebook 06b)."""

import numpy as np

from mlnn.course.grading import (MEASURE_TOLERANCE, NO_ANSWER, CaseRng, Mistake, NotYet, as_array,
                                 case_rngs, close, expect_dtype, make_grader, variant)
from mlnn.course.ranking import one_document_cases
from mlnn.evaluation import metrics
from mlnn.evaluation.thresholds import optimal_thresholds, ridge


# -- notebook 06: the F1-best threshold and the ridge of Eq. 5 -------------------------------------

def _threshold_cases():
    """``best_threshold_one(scores, y)`` → a threshold t whose prediction s > t has the best F1
    (no two scores closer than 1e-12, so that a midpoint splits them); then a document with no
    relevant label, where only a threshold at or above the top score is best, and one with every
    label relevant."""
    yield from one_document_cases(17, 3, 10, "a document", gap=1e-12)
    for y, what in (((0, 0, 0), "no relevant label"), ((1, 1, 1), "every label relevant")):
        yield (f"a document with {what}",
               [("scores", np.array([0.2, 0.8, -0.4])), ("y", np.array(y, dtype=np.int8))])


def _expect_best_f1(answer, expected, what, wrongs, inputs):
    """Any threshold whose F1 is the best F1 of the document; −∞ predicts every label, which
    is right where that is F1-optimal."""
    array = as_array(answer, "the threshold")
    if array.size != 1:
        raise NotYet(f"the threshold must be one number, not an array of shape {array.shape}")
    t = float(array.reshape(()))
    if np.isnan(t):
        raise NotYet("the threshold is NaN")
    s, y = inputs["scores"], inputs["y"][None, :]
    yours, best = (metrics.bipartition_measures(y, s[None, :] > cut)["miF"]
                   for cut in (t, expected))
    if yours < best - 1e-12:
        every = (": here predicting every label is best, so try a threshold below the lowest "
                 "score too (or −∞)" if np.all(s > expected) else
                 ": here y is empty and predicting no label is best (F1 = 1), so try a threshold "
                 "at or above the top score too" if not np.any(y) else "")
        raise NotYet(f"on {what} your threshold {t:.3f} gives F1 {yours:.3f}, and {best:.3f} is "
                     f"possible{every}")


check_f1_threshold = make_grader("check_f1_threshold", "F1-optimal threshold of one document",
                              lambda s, y: optimal_thresholds(s[None, :], y[None, :])[0],
                              _threshold_cases, expect=_expect_best_f1)


def _ridge(Z, t, lam):
    return ridge(Z, t, lam, tol=1e-14)[0]


def _ridge_cases():
    """``ridge_solve(Z, t, lam)`` → θ minimising ‖Z θ − t‖² + λ ‖θ‖² (Eq. 5 as mlnn solves it)."""
    for rng, lam in zip(case_rngs(18, 5), (3.0, 0.5, 100.0, 20.0, 1.0)):
        M, K = int(rng.integers(8, 50)), int(rng.integers(2, 8))
        yield (f"θ for Z of shape {(M, K)}, λ = {lam}",
               [("Z", rng.normal(size=(M, K))), ("t", rng.normal(size=M)), ("lam", lam)])


check_ridge = make_grader("check_ridge", "ridge regression of Eq. 5", _ridge, _ridge_cases, [
    Mistake(hint, lambda Z, t, lam, penalty=penalty: _ridge(Z, t, penalty(lam, len(t))))
    for hint, penalty in (
        ("the penalty λ‖θ‖² is missing", lambda lam, M: 0.0),
        ("the penalty counts half: λ‖θ‖² has weight λ here", lambda lam, M: lam / 2),
        ("the penalty counts twice: λ‖θ‖² has weight λ here", lambda lam, M: 2 * lam),
        ("that θ averages the squared error over the M documents (the paper's 1/(2M) scale); "
         "Eq. 5 is solved here with the plain sum of squares", lambda lam, M: lam * M))])


#: The keys of :func:`check_micro_macro`'s answer, in the paper's order, as
#: :func:`mlnn.evaluation.metrics.bipartition_measures` (the reference) gives them, by MULAN's
#: convention: a label with TP = FP = FN = 0 scores 1, any other zero denominator 0.
BIPARTITION = ("miP", "miR", "miF", "maP", "maR", "maF")


# -- notebook 06b: micro and macro averaging -------------------------------------------------------

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
        right = metrics.bipartition_measures(Y_true, Y_pred)
        return {**right, **change(right, Y_true, Y_pred)}
    return bipartition


def _per_document(keys):
    return _changed(lambda r, t, p: dict(zip(keys, (v.mean() for v in _prf(*_counts(t, p, 1))))))


BIPARTITION_MISTAKES = [
    Mistake("your macro measures average over the documents (rows); macro averages over the "
            "labels (columns): P, R and F1 of each label, then their mean over the L labels",
            _per_document(BIPARTITION[3:])),
    Mistake("your micro measures average per-document values; micro pools TP, FP and FN over "
            "every document and label first, then divides", _per_document(BIPARTITION[:3])),
    Mistake("your micro measures are means of per-label values — that is macro averaging; "
            "micro pools TP, FP and FN over all labels first",
            _changed(lambda r, t, p: dict(miP=r["maP"], miR=r["maR"], miF=r["maF"]))),
    Mistake("your micro-F1 is the mean of the per-label F1 — that is macro-F1; micro-F1 is "
            "2TP / (2TP + FP + FN) with the counts pooled",
            _changed(lambda r, t, p: dict(miF=r["maF"]))),
    Mistake("macro-F1 is the mean of the per-label F1 scores, not the harmonic mean of maP and maR",
            _changed(lambda r, t, p: dict(maF=2 * r["maP"] * r["maR"] / (r["maP"] + r["maR"])
            if r["maP"] + r["maR"] > 0 else 0.0))),
    *(Mistake("a label with no true and no predicted positive (TP = FP = FN = 0) scores 1 here "
              "(MULAN's convention), and so do the micro measures when nothing is true and "
              "nothing predicted; yours scores it 0", _macro_with(empty_value=0.0, micro_too=m))
      for m in (True, False)),
    Mistake("a label with no true and no predicted positive still counts in the macro average (it "
            "scores 1); yours leaves it out",
            _macro_with(keep=lambda tp, fp, fn: tp + fp + fn > 0)),
    Mistake("the paper's macro average runs over all L labels, also those with no true positive "
            "document (a label only predicted scores 0, a label neither true nor predicted 1)",
            _macro_with(keep=lambda tp, fp, fn: tp + fn > 0)),
    *(Mistake("a zero denominator with something to count (nothing predicted while something is "
              "true, or predicted while nothing is true) gives 0, not 1",
              _macro_with(zero_value=1.0, micro_too=m)) for m in (True, False)),
    Mistake("precision and recall are swapped: precision = TP / (TP + FP) (of what was predicted), "
            "recall = TP / (TP + FN) (of what is relevant)",
            _changed(lambda r, t, p: dict(miP=r["miR"], miR=r["miP"], maP=r["maR"], maR=r["maP"])))]


def _bipartition_cases():
    """``micro_macro_by_hand(Y_true, Y_pred)`` → {"miP", "miR", "miF", "maP", "maR", "maF"}:
    a few built cases (nothing true and nothing predicted; nothing predicted), then random
    0/1 int8 matrices, n in 1 … 25, L in 1 … 12, skewed label frequencies, a label with
    TP = FP = FN = 0 and one only predicted; last 300 × 120, with more than 2¹⁵ true positives."""
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
    rng = CaseRng(2015, 300)                 # counts past 2¹⁵: no narrow integer type holds them
    Y_true = rng.random((300, 120)) < 0.95
    cases.append((Y_true, Y_true ^ (rng.random((300, 120)) < 0.03)))
    for number, (t, p) in enumerate(cases):
        t, p = np.asarray(t, dtype=np.int8), np.asarray(p, dtype=np.int8)
        notes = {"a label no document has and none is predicted": not (t | p).any(axis=0).all(),
                 "a label predicted but never true": (~t.any(axis=0) & p.any(axis=0)).any(),
                 "no label true in any document": not t.any(), "nothing predicted": not p.any()}
        yield (", ".join([f"case {number + 1}, with n = {t.shape[0]} documents and L = "
                          f"{t.shape[1]} labels", *(note for note in notes if notes[note])]),
               [("Y_true", t), ("Y_pred", p)])


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
        expect_dtype(array, expected[key], key, "biuf")
        if not np.isfinite(float(array.reshape(()))):
            raise NotYet(f"{key} is NaN or infinite: every zero denominator has a value here")
        if not close(float(array.reshape(())), expected[key], MEASURE_TOLERANCE):
            wrong.append(key)
    if wrong:
        raise NotYet(f"{', '.join(wrong)} wrong on {what}. Micro pools the counts over all "
                     "labels; macro averages the per-label values over all L labels.")


check_micro_macro = make_grader("check_micro_macro", "micro and macro P/R/F1 by hand",
                             metrics.bipartition_measures, _bipartition_cases, BIPARTITION_MISTAKES,
                             expect=_expect_bipartition)


# -- notebook 06b: the choice of C for BR_B and BR_R -----------------------------------------------

#: The arguments of ``select_C``, in order.
SELECT_ARGUMENTS = ("C_values", "S_val", "Y_val", "S_test", "Y_test", "variant")


def selection_values(S_list, Y, variant, predict=lambda S: S > 0, combine=None, pooled=False,
                     **score):
    """The validation criterion of each C: BR_B's mean of micro- and macro-F1 of the label sets
    ``predict(S)`` (:func:`mlnn.evaluation.metrics.selection_score`, higher is better), BR_R's
    rank loss (lower is better); or with a mistake: micro- and macro-F1 ``combine`` d otherwise,
    the rank loss ``pooled`` over all the pairs of all documents."""
    if variant == "R":
        return [(_pooled_rank_loss if pooled else metrics.rank_loss)(Y, S) for S in S_list]
    if combine:
        return [combine(*(metrics.selection_score(Y, predict(S), criterion=c, **score)
                          for c in ("miF", "maF"))) for S in S_list]
    return [metrics.selection_score(Y, predict(S), **score) for S in S_list]


def _pooled_rank_loss(Y, S):
    """The wrongly ordered pairs (ties ½) of all documents over all their pairs."""
    wrong = pairs = 0
    for y, s in zip(np.asarray(Y) > 0, S):
        d = s[y][:, None] - s[~y][None, :]
        wrong, pairs = wrong + np.sum(d < 0) + 0.5 * np.sum(d == 0), pairs + d.size
    return wrong / pairs


def select(C_values, S_val, Y_val, S_test, Y_test, variant, split="val", by=None, flip=False,
           last=False, position=False, near=False, **score):
    """The C that :func:`mlnn.paper.selection.fit_br` chooses, by a literal loop (the first C
    wins ties); or with one mistake: the ``split`` "test", the criterion of variant ``by``, the
    comparison ``flip`` ped, the ``last`` C of ties, its ``position``, the first C within
    np.isclose of the best (``near`` True) or within ``near`` of it, the ``score`` changed
    (:func:`selection_values`)."""
    S, Y = (S_val, Y_val) if split == "val" else (S_test, Y_test)
    by = by or variant
    values = selection_values(S, Y, by, **(score if variant == by else {}))
    sign = -1 if (by == "B") != flip else 1      # F1: higher is better; rank loss: lower
    order = range(len(values))[::-1] if last else range(len(values))
    best = min(order, key=lambda i: sign * values[i])          # min keeps the first of ties
    if near is True:
        best = next(i for i in order if np.isclose(values[i], values[best]))
    elif near:
        best = next(i for i in order if abs(values[i] - values[best]) <= near)
    return best if position else C_values[best]


def reference_C(C_values, S_val, Y_val, variant):
    """The C that :func:`mlnn.paper.selection.fit_br` chooses from these validation margins."""
    return select(C_values, S_val, Y_val, None, None, variant)


SELECTION_MISTAKES = [
    Mistake("your C is the one the TEST split prefers: choose C on the validation split; the test "
            "split only reports the result", variant(select, split="test")),
    Mistake("ties: when several C values score the same, take the first of the grid (the "
            "smallest C), not the last", variant(select, last=True)),
    Mistake("BR_B's macro-F1 runs over the labels that have a positive validation document (the "
            "project's selection convention), not over all labels",
            variant(select, macro_labels="all")),
    *(Mistake(f"BR_B chooses by the MEAN of micro- and macro-F1, not by {name} alone",
              variant(select, criterion=key)) for key, name in (("miF", "micro-F1"),
                                                                ("maF", "macro-F1"))),
    Mistake("BR_B predicts label l when its margin is strictly positive, s_l > 0; a margin of "
            "exactly 0 is not a prediction", variant(select, predict=lambda S: S >= 0)),
    Mistake("the SVM margins are not probabilities: BR_B's sign prediction thresholds them at "
            "0, not 0.5", variant(select, predict=lambda S: S > 0.5)),
    Mistake("BR_B chooses C by F1 of its sign predictions, not by rank loss (that is BR_R)",
            variant(select, by="R")),
    Mistake("BR_R chooses C by the validation rank loss of the margins, not by F1 (that is BR_B)",
            variant(select, by="B")),
    Mistake("lower rank loss is better, higher F1 is better: your comparison runs the wrong way",
            variant(select, flip=True)),
    Mistake("return the C value itself (an element of C_values), not its position in the grid",
            variant(select, position=True)),
    *(Mistake("criteria that differ, however little, are not tied: compare them exactly (the "
              "first C wins only an exact tie), not within a tolerance such as np.isclose's",
              variant(select, near=near)) for near in (True, 1e-12)),
    *(Mistake("BR_B chooses by the arithmetic mean (miF + maF) / 2 of micro- and macro-F1, not by "
              "another mean of the two (such as the geometric or the harmonic one)",
              variant(select, combine=mean)) for mean in (
        lambda a, b: np.sqrt(a * b), lambda a, b: 2 * a * b / (a + b) if a + b else 0.0)),
    Mistake("BR_R's rank loss is the mean over the documents of each one's fraction of pairs "
            "ordered wrongly, not the fraction of all pairs pooled over the documents",
            variant(select, pooled=True))]


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


def _random_selection_case(rng, k):
    """A random case of variant "B" or "R" (k even or odd), a tie planted at the best C if k is
    not a multiple of 3 and no other tie."""
    variant = "BR"[k % 2]
    while True:
        C_values = [float(10.0 ** e) for e in range(int(rng.integers(-3, 1)), 4)]
        C_values = C_values[:int(rng.integers(3, len(C_values) + 1))]
        n_val, n_test, L = (int(v) for v in rng.integers((20, 20, 3), (61, 61, 11)))
        Y_val, Y_test = _labels(rng, n_val, L), _labels(rng, n_test, L)
        S_val, S_test = (_margins(rng, Y, len(C_values)) for Y in (Y_val, Y_test))
        planted = _plant_tie(C_values, S_val, Y_val, variant) if k % 3 else set()
        values = selection_values(S_val, Y_val, variant)
        if not any(abs(values[i] - values[j]) < 1e-9 and {i, j} != planted
                   for i in range(len(values)) for j in range(i + 1, len(values))):
            return list(zip(SELECT_ARGUMENTS, (C_values, S_val, Y_val, S_test, Y_test, variant)))


def selection_cases(count=36, seed=2016):
    """``select_C(C_values, S_val, Y_val, S_test, Y_test, variant)`` → the C that BR_B (variant
    "B") or BR_R ("R") chooses; ``S_val[j]``, ``S_test[j]`` are the margins of the SVMs trained
    with ``C_values[j]``. Grids of 3 … 7 powers of ten within the paper's 10⁻³ … 10³, margins
    of 2 decimals (some exactly 0), labels with no validation positive, a planted tie at the
    best C in two cases of three, the variants alternating, and no other tie; then cases where
    the plausible criteria choose different C (:func:`disagreeing_cases`), and near ties."""
    cases = [_random_selection_case(rng, k) for k, rng in enumerate(case_rngs(seed, count))]
    cases += [*disagreeing_cases(CaseRng(seed, 1)), near_tie_case(CaseRng(seed)),
              nearer_tie_case()]
    for k, named in enumerate(cases):
        yield f"case {k + 1}", named


def disagreeing_cases(rng, n=200, L=10):
    """A BR_B case where (miF + maF) / 2 chooses C = 10 (a high micro-F1, a low macro-F1) and
    the geometric and harmonic means C = 1 (micro- and macro-F1 about equal); a BR_R case where
    the mean rank loss of the documents chooses C = 1 (half the documents, of 100 pairs each, in
    a random order) and the rank loss pooled over all pairs C = 0.1 (the other half, of 19
    pairs, all wrong)."""
    Y = np.zeros((n, L), dtype=np.int8)
    Y[rng.permutation(n)[:80], 0] = 1                          # a frequent label, 9 rare ones
    for label in range(1, L):
        Y[rng.permutation(n)[:2], label] = 1
    best_micro, balanced = Y.copy(), Y.copy()
    best_micro[:, 4:] = 0                                      # 3 rare labels right, 6 missed
    positives, negatives = np.flatnonzero(Y[:, 0]), np.flatnonzero(Y[:, 0] == 0)
    balanced[rng.permutation(positives)[:30], 0] = 0           # F1 ≈ 0.65 on every label
    balanced[rng.permutation(negatives)[:30], 0] = 1
    balanced[np.argmax(Y[:, 1:], axis=0), np.arange(1, L)] = 0
    S = [np.round(np.where(P > 0, 1, -1) * rng.uniform(0.2, 2, size=P.shape), 2)
         for P in (np.zeros_like(Y), balanced, best_micro)]
    yield list(zip(SELECT_ARGUMENTS, ([0.1, 1.0, 10.0], S, Y, S, Y, "B")))
    Y = np.zeros((n, 20), dtype=np.int8)
    Y[: n // 2, :10], Y[n // 2:, 0] = 1, 1                     # 100 pairs, and 19
    ordered = np.where(Y > 0, 1.0, -1.0) + rng.uniform(0, 0.5, size=Y.shape)
    shuffled = rng.random(Y.shape)
    mixed = np.vstack([ordered[: n // 2], -ordered[n // 2:]])  # many pairs right, few wrong
    rights = np.vstack([shuffled[: n // 2], ordered[n // 2:]])  # many pairs random, few right
    S = [shuffled, mixed, rights]
    yield list(zip(SELECT_ARGUMENTS, ([0.01, 0.1, 1.0], S, Y, S, Y, "R")))


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
    return list(zip(SELECT_ARGUMENTS, (C_values, S_val, Y, S_val, Y, "R")))


def nearer_tie_case(m=2000):
    """BR_R on 4 documents of 2m labels, where C = 1 has the lowest rank loss, about 0.25, and
    C = 0.1 a rank loss 1/(4 m² (m² − 1)) = 1.6e-14 higher (its one wrongly ordered pair in a
    document of m² − 1 pairs instead of m²): closer than any tolerance of 1e-13, and not tied."""
    L = 2 * m
    Y = np.zeros((4, L), dtype=np.int8)
    Y[0, :m], Y[1, :m - 1], Y[2:, ::2] = 1, 1, 1
    best = np.tile(np.arange(L, 0, -1, dtype=float), (4, 1))   # relevant first: no pair wrong
    best[2:] = np.arange(L)                  # relevant and irrelevant alternating: about half
    near, worse = best.copy(), best.copy()
    best[0, [m - 1, m]] = best[0, [m, m - 1]]            # one pair wrong of m²
    near[1, [m - 2, m - 1]] = near[1, [m - 1, m - 2]]    # one pair wrong of m² − 1
    worse[0, :m] = worse[0, :m][::-1] - m                 # every pair of document 1 wrong
    S_val = [worse, near, best, worse[::-1]]
    return list(zip(SELECT_ARGUMENTS, ([0.01, 0.1, 1.0, 10.0], S_val, Y, S_val, Y, "R")))


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
                          selection_cases, SELECTION_MISTAKES, expect=_expect_selection)
