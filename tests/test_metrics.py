"""Tests of mlnn.evaluation.metrics: each measure against a literal loop over its definition."""


import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mlnn.base.errors import MLNNError
from mlnn.evaluation import metrics


# ------------------------------------------------------------------------------------------------
# literal reference implementations of the definitions in the module docstring

def _defined_mean(values):
    return float(np.mean(values)) if values else float("nan")


def ref_rank_loss(Y, S):
    per_doc = []
    for y, f in zip(Y, S):
        relevant = [k for k in range(len(y)) if y[k]]
        irrelevant = [l for l in range(len(y)) if not y[l]]
        if not relevant or not irrelevant:
            continue
        wrong = 0.0
        for k in relevant:
            for l in irrelevant:
                if f[k] < f[l]:
                    wrong += 1.0
                elif f[k] == f[l]:
                    wrong += 0.5
        per_doc.append(wrong / (len(relevant) * len(irrelevant)))
    return _defined_mean(per_doc)


def ref_rank(f, k):
    """Pessimistic rank: the number of labels scoring at least as high as label k."""
    return sum(1 for l in range(len(f)) if f[l] >= f[k])


def ref_one_error(Y, S):
    per_doc = []
    for y, f in zip(Y, S):
        if not any(y):
            continue
        top = [l for l in range(len(f)) if ref_rank(f, l) == ref_rank(f, int(np.argmax(f)))]
        per_doc.append(1.0 if any(not y[l] for l in top) else 0.0)
    return _defined_mean(per_doc)


def ref_coverage(Y, S):
    per_doc = []
    for y, f in zip(Y, S):
        relevant = [k for k in range(len(y)) if y[k]]
        if not relevant:
            continue
        per_doc.append(max(ref_rank(f, k) for k in relevant) - 1.0)
    return _defined_mean(per_doc)


def ref_average_precision(Y, S):
    per_doc = []
    for y, f in zip(Y, S):
        relevant = [k for k in range(len(y)) if y[k]]
        if not relevant:
            continue
        total = 0.0
        for k in relevant:
            above = sum(1 for k2 in relevant if ref_rank(f, k2) <= ref_rank(f, k))
            total += above / ref_rank(f, k)
        per_doc.append(total / len(relevant))
    return _defined_mean(per_doc)


def ref_prf(tp, fp, fn):
    """MULAN's convention: all three are 1 when there is nothing to find and nothing found."""
    if tp + fp + fn == 0:
        return 1.0, 1.0, 1.0
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * tp / (2 * tp + fp + fn)
    return p, r, f


def ref_bipartition(Y, P, present_only=False):
    """With ``present_only`` the macro averages run over the labels with a positive in Y."""
    n, L = Y.shape
    counts = []
    for l in range(L):
        tp = sum(1 for i in range(n) if Y[i, l] and P[i, l])
        fp = sum(1 for i in range(n) if not Y[i, l] and P[i, l])
        fn = sum(1 for i in range(n) if Y[i, l] and not P[i, l])
        counts.append((tp, fp, fn))
    TP, FP, FN = (sum(c[j] for c in counts) for j in range(3))
    miP, miR, miF = ref_prf(TP, FP, FN)
    per_label = [ref_prf(*c) for l, c in enumerate(counts)
                 if not present_only or any(Y[i, l] for i in range(n))]
    maP, maR, maF = (float(np.mean([x[j] for x in per_label])) if per_label else float("nan")
                     for j in range(3))
    return dict(miP=miP, miR=miR, miF=miF, maP=maP, maR=maR, maF=maF)


def ref_hamming(Y, P):
    n, L = Y.shape
    wrong = sum(1 for i in range(n) for l in range(L) if bool(Y[i, l]) != bool(P[i, l]))
    return wrong / (n * L)


# ------------------------------------------------------------------------------------------------
# strategies: score matrices with and without ties, random label sets

@st.composite
def problems(draw, ties=None):
    n = draw(st.integers(1, 7))
    L = draw(st.integers(1, 7))
    if ties is None:
        ties = draw(st.booleans())
    if ties:  # few distinct values: many ties within and across documents
        S = draw(arrays(np.float64, (n, L), elements=st.sampled_from([-1.0, 0.0, 0.25, 0.5, 1.0])))
    else:
        S = draw(arrays(np.float64, (n, L), elements=st.floats(-10, 10), unique=True))
    Y = draw(arrays(np.int8, (n, L), elements=st.integers(0, 1)))
    P = draw(arrays(np.int8, (n, L), elements=st.integers(0, 1)))
    return Y, S, P


def assert_same(a, b):
    if np.isnan(b):
        assert np.isnan(a)
    else:
        assert a == pytest.approx(b, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("ties", [False, True])
@given(data=st.data())
def test_ranking_measures_equal_literal_definitions(ties, data):
    Y, S, _ = data.draw(problems(ties=ties))
    got = metrics.ranking_measures(Y, S)
    assert_same(got["rankloss"], ref_rank_loss(Y, S))
    assert_same(got["oneError"], ref_one_error(Y, S))
    assert_same(got["coverage"], ref_coverage(Y, S))
    assert_same(got["MAP"], ref_average_precision(Y, S))
    # rank loss alone agrees with the combined function
    assert_same(metrics.rank_loss(Y, S), got["rankloss"])


@given(problems())
def test_bipartition_measures_equal_literal_definitions(problem):
    Y, _, P = problem
    got = metrics.bipartition_measures(Y, P)
    for key, value in ref_bipartition(Y, P).items():
        assert got[key] == pytest.approx(value, abs=1e-12), key


@given(problems())
def test_bipartition_measures_over_present_labels_equal_literal_definitions(problem):
    Y, _, P = problem
    got = metrics.bipartition_measures(Y, P, macro_labels="present")
    for key, value in ref_bipartition(Y, P, present_only=True).items():
        assert_same(got[key], value)


@given(problems())
def test_hamming_loss_equals_the_literal_loop(problem):
    Y, S, P = problem
    expected = ref_hamming(Y, P)
    assert metrics.hamming_loss(Y, P) == pytest.approx(expected, abs=1e-15)
    assert metrics.evaluate(Y, S, P)["hamming"] == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize("criterion", metrics.SELECTION_CRITERIA)
@given(problem=problems())
def test_selection_score_uses_present_labels_by_default(criterion, problem):
    Y, _, P = problem
    present = ref_bipartition(Y, P, present_only=True)
    every = ref_bipartition(Y, P)
    pick = (lambda r: (r["miF"] + r["maF"]) / 2) if criterion == "meanF" else \
        (lambda r: r[criterion])
    assert_same(metrics.selection_score(Y, P, criterion), pick(present))
    assert_same(metrics.selection_score(Y, P, criterion, macro_labels="all"), pick(every))


def test_present_labels_leave_out_only_labels_without_positives():
    # label 1 has no positive document and nothing predicted (1 by MULAN's convention),
    # label 2 has no positive document but one false positive (0 either way)
    Y = np.array([[1, 0, 0], [0, 0, 0], [1, 0, 0]])
    P = np.array([[1, 0, 1], [0, 0, 0], [0, 0, 0]])
    every = metrics.bipartition_measures(Y, P)
    present = metrics.bipartition_measures(Y, P, macro_labels="present")
    # label 0: tp 1, fn 1 -> P 1, R 1/2, F 2/3
    assert every["maF"] == pytest.approx((2 / 3 + 1 + 0) / 3)
    assert present["maF"] == pytest.approx(2 / 3)
    assert present["maP"] == 1.0 and present["maR"] == 0.5
    for key in ("miP", "miR", "miF"):
        assert present[key] == every[key]
    assert np.isnan(metrics.bipartition_measures(np.zeros((2, 3)), P[:2],
                                                 macro_labels="present")["maF"])


def test_counts_beyond_the_int8_range():
    # 300 documents with every label relevant: per-label counts exceed 127
    Y = np.ones((300, 2), dtype=np.int8)
    P = Y.copy()
    P[:100, 1] = 0
    m = metrics.bipartition_measures(Y, P)
    assert m["miR"] == pytest.approx(500 / 600)
    assert m["maR"] == pytest.approx((1 + 200 / 300) / 2)
    assert metrics.hamming_loss(Y, P) == pytest.approx(100 / 600)


@given(problems())
def test_evaluate_has_the_ten_keys_then_hamming_and_accepts_sparse_input(problem):
    Y, S, P = problem
    dense = metrics.evaluate(Y, S, P)
    sparse = metrics.evaluate(sp.csr_matrix(Y), S, sp.csr_matrix(P))
    assert list(metrics.MEASURES) == ["rankloss", "oneError", "coverage", "MAP",
                                      "miP", "miR", "miF", "maP", "maR", "maF"]
    assert list(metrics.EXTRA_MEASURES) == ["hamming"]
    assert list(dense) == list(metrics.MEASURES) + ["hamming"]
    for key in dense:
        assert isinstance(dense[key], float)
        assert_same(sparse[key], dense[key])
    # evaluate reports the paper's macro averages, over all labels
    for key, value in ref_bipartition(Y, P).items():
        assert_same(dense[key], value)


@given(problems())
def test_rank_measures_depend_only_on_the_order(problem):
    Y, S, _ = problem
    S = np.round(S * 100)  # integer-valued, so the map below keeps distinct values distinct
    a = metrics.ranking_measures(Y, S)
    b = metrics.ranking_measures(Y, np.exp(S / 1000.0) * 7 - 2)  # strictly increasing map
    for key in a:
        assert_same(b[key], a[key])


def test_hand_worked_document_with_a_tie():
    # scores 0.9, 0.5, 0.5, 0.1 with labels 1 and 3 relevant
    S = np.array([[0.9, 0.5, 0.5, 0.1]])
    Y = np.array([[0, 1, 0, 1]])
    m = metrics.ranking_measures(Y, S)
    # pairs (1,0): wrong; (1,2): tie -> 1/2; (3,0), (3,2): wrong  => 3.5 / (2*2)
    assert m["rankloss"] == pytest.approx(3.5 / 4)
    assert m["oneError"] == 1.0                 # label 0 is on top and irrelevant
    assert m["coverage"] == 3.0                 # label 3 has rank 4
    # pessimistic ranks: rank(1) = 3 (labels 0, 1, 2 score >= 0.5), rank(3) = 4
    assert m["MAP"] == pytest.approx((1 / 3 + 2 / 4) / 2)


def test_perfect_ranking():
    S = np.array([[3.0, 2.0, 1.0, 0.0], [0.0, 5.0, 1.0, 4.0]])
    Y = np.array([[1, 1, 0, 0], [0, 1, 0, 1]])
    m = metrics.ranking_measures(Y, S)
    assert m == {"rankloss": 0.0, "oneError": 0.0, "coverage": 1.0, "MAP": 1.0}


def test_documents_without_relevant_or_irrelevant_labels():
    S = np.array([[0.1, 0.9, 0.5], [0.3, 0.2, 0.1], [0.7, 0.1, 0.2]])
    Y_none = np.array([[0, 0, 0]])
    Y_all = np.array([[1, 1, 1]])
    # no relevant label: every ranking measure undefined
    m = metrics.ranking_measures(Y_none, S[:1])
    assert all(np.isnan(v) for v in m.values())
    # all labels relevant: rank loss undefined, the others perfect-but-long
    m = metrics.ranking_measures(Y_all, S[:1])
    assert np.isnan(m["rankloss"])
    assert (m["oneError"], m["coverage"], m["MAP"]) == (0.0, 2.0, 1.0)
    # mixed: undefined documents are left out of the averages
    Y = np.array([[0, 0, 0], [1, 1, 1], [1, 0, 0]])
    m = metrics.ranking_measures(Y, S)
    assert m["rankloss"] == 0.0                  # only document 3 counts
    assert m["oneError"] == 0.0                  # documents 2 and 3
    assert m["coverage"] == pytest.approx((2.0 + 0.0) / 2)


def test_all_scores_tied_is_pessimistic_except_rank_loss():
    S = np.zeros((1, 5))
    Y = np.array([[1, 0, 0, 0, 0]])
    m = metrics.ranking_measures(Y, S)
    assert m["rankloss"] == 0.5
    assert m["oneError"] == 1.0
    assert m["coverage"] == 4.0
    assert m["MAP"] == pytest.approx(1 / 5)


def test_macro_labels_without_positives_or_predictions_count_as_perfect():
    Y = np.array([[1, 0, 0], [0, 0, 1]])
    P = np.array([[1, 0, 1], [0, 0, 0]])
    m = metrics.bipartition_measures(Y, P)
    # label 0: P=R=F=1; label 1: nothing to find, nothing found -> 1; label 2: tp=0, fp=1, fn=1
    assert m["maP"] == pytest.approx(2 / 3)
    assert m["maR"] == pytest.approx(2 / 3)
    assert m["maF"] == pytest.approx(2 / 3)
    assert m["miP"] == pytest.approx(1 / 2)
    assert m["miR"] == pytest.approx(1 / 2)
    assert m["miF"] == pytest.approx(1 / 2)
    # no predictions at all: precision 0 where something was to be found
    m = metrics.bipartition_measures(Y, np.zeros_like(Y))
    assert m["miP"] == 0.0 and m["miR"] == 0.0 and m["miF"] == 0.0
    assert m["maF"] == pytest.approx(1 / 3)      # only the empty label 1 scores


def test_blocks_give_the_same_result(monkeypatch):
    rng = np.random.default_rng(1)
    S = np.round(rng.random((50, 13)), 1)
    Y = rng.random((50, 13)) < 0.3
    whole = metrics.ranking_measures(Y, S)
    monkeypatch.setattr(metrics, "_BLOCK_ENTRIES", 40)  # blocks of 3 documents
    blocked = metrics.ranking_measures(Y, S)
    for key in whole:
        assert blocked[key] == pytest.approx(whole[key], abs=1e-12)


@pytest.mark.parametrize("Y, S, P, message", [
    (np.ones((2, 3)), np.ones((2, 4)), np.ones((2, 3)), "shape"),
    (np.ones((2, 3)), np.ones((2, 3)), np.ones((3, 3)), "shape"),
    (np.full((2, 3), 2), np.ones((2, 3)), np.ones((2, 3)), "0/1"),
    (np.ones((2, 3)), np.ones((2, 3)), np.full((2, 3), 0.5), "0/1"),
    (np.ones((2, 3)), np.array([[1.0, np.nan, 0], [0, 0, 0]]), np.ones((2, 3)), "NaN"),
    (np.ones((2, 3)), np.array([[1.0, np.inf, 0], [0, 0, 0]]), np.ones((2, 3)), "infinite"),
    (np.ones((2, 3)), sp.csr_matrix(np.ones((2, 3))), np.ones((2, 3)), "dense"),
    (np.ones(3), np.ones(3), np.ones(3), "2-D"),
    (np.array([["a", "b"]]), np.ones((1, 2)), np.ones((1, 2)), "0/1"),
])
def test_bad_input_raises_mlnn_error(Y, S, P, message):
    with pytest.raises(MLNNError, match=message):
        metrics.evaluate(Y, S, P)


def test_bad_options_raise_mlnn_error():
    Y = np.array([[1, 0]])
    with pytest.raises(MLNNError, match="macro_labels"):
        metrics.bipartition_measures(Y, Y, macro_labels="some")
    with pytest.raises(MLNNError, match="criterion"):
        metrics.selection_score(Y, Y, criterion="accuracy")
    with pytest.raises(MLNNError, match="Y_pred"):
        metrics.hamming_loss(Y, np.array([[1, 0, 0]]))


# ------------------------------------------------------------------------------------------------
# degenerate data: an empty split has no measure; an undefined one is named, never a number


@pytest.mark.parametrize("shape", [(0, 4), (3, 0), (0, 0)])
def test_an_empty_matrix_has_no_measure(shape):
    Y, S = np.zeros(shape), np.zeros(shape)
    calls = [lambda: metrics.evaluate(Y, S, Y), lambda: metrics.ranking_measures(Y, S),
             lambda: metrics.bipartition_measures(Y, Y), lambda: metrics.hamming_loss(Y, Y),
             lambda: metrics.rank_loss(Y, S), lambda: metrics.selection_score(Y, Y)]
    for call in calls:
        with pytest.raises(MLNNError, match=r"Y_true has no (documents|labels) .*empty split"):
            call()


def test_a_split_of_one_document_gives_that_documents_values():
    Y, S, P = np.array([[1, 0, 0]]), np.array([[0.2, 0.9, 0.1]]), np.array([[1, 1, 0]])
    m = metrics.evaluate(Y, S, P)
    assert m["rankloss"] == 0.5 and m["oneError"] == 1.0 and m["coverage"] == 1.0
    assert m["MAP"] == 0.5 and m["hamming"] == pytest.approx(1 / 3)
    assert (m["miP"], m["miR"]) == (0.5, 1.0)
    assert m["maP"] == pytest.approx((1 + 0 + 1) / 3)        # label 2: nothing to find, none found


def test_undefined_measures_are_named_with_the_reason():
    Y = np.zeros((3, 4), dtype=int)
    m = metrics.evaluate(Y, np.random.default_rng(0).random((3, 4)), Y)
    undefined = metrics.undefined_measures(m)
    assert set(undefined) == {"rankloss", "oneError", "coverage", "MAP"}
    assert "no document has a relevant label" in undefined["MAP"]
    assert (m["miP"], m["miF"], m["maF"], m["hamming"]) == (1.0, 1.0, 1.0, 0.0)
    Y_all = np.ones((2, 3), dtype=int)
    m = metrics.evaluate(Y_all, np.zeros((2, 3)), Y_all)
    assert list(metrics.undefined_measures(m)) == ["rankloss"]
    assert "both a relevant and an irrelevant" in metrics.undefined_measures(m)["rankloss"]
    assert metrics.undefined_measures(metrics.evaluate(np.eye(2), np.eye(2), np.eye(2))) == {}
