"""Labels of any accepted form give the same numbers: bool, integer or real 0/1, dense
(ndarray, np.matrix, nested lists) or sparse (CSR, CSC, COO) — losses, metrics, thresholds,
check_Y, training, the estimator and the SVMs."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from mlnn.base.errors import MLNNError
from mlnn.base.validation import check_Y
from mlnn.evaluation import metrics
from mlnn.evaluation.thresholds import ThresholdPredictor, optimal_thresholds, select_lambda
from mlnn.nn.losses import CrossEntropy, PairwiseExponential

pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")   # np.matrix input

DTYPES = (np.bool_, np.int8, np.uint8, np.int32, np.int64, np.float32, np.float64)
CONTAINERS = ("ndarray", "matrix", "list", "csr", "csc", "coo")
LOSSES = (CrossEntropy(), PairwiseExponential("factorised"), PairwiseExponential("pairwise"))


def as_form(Y, dtype, container):
    """The 0/1 float matrix Y in the given dtype and container."""
    Y = np.asarray(Y).astype(dtype)
    if container == "matrix":
        return np.asmatrix(Y)
    if container == "list":
        return Y.tolist()
    if container in ("csr", "csc", "coo"):
        return getattr(sp, f"{container}_matrix")(Y)
    return Y


forms = st.tuples(st.sampled_from(DTYPES), st.sampled_from(CONTAINERS))


@st.composite
def labelled(draw, min_L=1):
    """(Y float64 0/1, scores) with rows of no label and of all labels among the cases."""
    n = draw(st.integers(1, 6))
    L = draw(st.integers(min_L, 7))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    Y = (rng.random((n, L)) < draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))).astype(np.float64)
    if draw(st.booleans()):
        Y[rng.integers(n)] = draw(st.sampled_from([0.0, 1.0]))
    scores = np.round(rng.random((n, L)), draw(st.sampled_from([1, 6])))   # ties or not
    return Y, scores


def assert_same(a, b):
    if isinstance(a, float) and np.isnan(a):
        assert np.isnan(b)
    else:
        assert a == b


# ------------------------------------------------------------------------------------------
# check_Y

@given(case=labelled(), form=forms)
def test_check_Y_gives_the_same_matrix(case, form):
    Y, _ = case
    got = check_Y(as_form(Y, *form))
    assert sp.isspmatrix_csr(got) and got.dtype == np.int8
    np.testing.assert_array_equal(got.toarray(), Y)
    assert np.all(got.data == 1)


def test_check_Y_does_not_modify_its_input():
    # an explicit zero, unsorted column indices in row 0 and a duplicate entry (summing to 1)
    # in row 1: each would be rewritten in place by a canonicalising scipy call
    Y = sp.csr_matrix((np.array([1, 0, 1, 1, 0], dtype=np.int8), np.array([2, 1, 0, 1, 1]),
                       np.array([0, 3, 5])), shape=(2, 3))
    before = (Y.data.copy(), Y.indices.copy(), Y.indptr.copy())
    got = check_Y(Y)
    np.testing.assert_array_equal(got.toarray(), [[1, 0, 1], [0, 1, 0]])
    assert got.nnz == 3
    for after, saved in zip((Y.data, Y.indices, Y.indptr), before):
        np.testing.assert_array_equal(after, saved)


def _csr_with_a_duplicate():
    """Row 0 stores column 1 twice with value 1: the matrix entry is 2."""
    return sp.csr_matrix((np.array([1, 1]), np.array([1, 1]), np.array([0, 2])), shape=(1, 2))


@pytest.mark.parametrize("Y, message", [
    (np.array([[0, 2]]), "value 2"),
    (np.array([[0.0, np.nan]]), "value nan"),
    (np.array([[0.5, 1.0]]), "value 0.5"),
    (np.array([[-1, 1]], dtype=np.int8), "value -1"),
    (np.array([["0", "1"]]), "dtype"),
    (np.array([[1 + 0j, 0]]), "dtype"),
    (np.array([[None, 1]], dtype=object), "dtype"),
    (sp.coo_matrix(([1, 1], ([0, 0], [1, 1])), shape=(1, 2)), "value 2"),   # a duplicate entry
    (_csr_with_a_duplicate(), "value 2"),
    (np.ones(3), "2-D"),
])
def test_check_Y_rejects_non_labels_clearly(Y, message):
    with pytest.raises(MLNNError, match=message):
        check_Y(Y, "Y_val")
    with pytest.raises(MLNNError, match="Y_val"):
        check_Y(Y, "Y_val")


# ------------------------------------------------------------------------------------------
# losses

@pytest.mark.parametrize("loss", LOSSES, ids=repr)
@given(case=labelled(), form=forms, dtype=st.sampled_from([np.float32, np.float64]))
def test_losses_give_the_same_numbers(loss, case, form, dtype):
    Y, scores = case
    z2 = ((scores - 0.5) * 4).astype(dtype)
    o = loss.output.fn(z2)
    Y_form = as_form(Y, *form)
    reference = Y.astype(dtype)
    for method in ("per_document", "delta"):
        got = getattr(loss, method)(z2, o, Y_form)
        expected = getattr(loss, method)(z2, o, reference)
        assert type(got) is np.ndarray and got.dtype == dtype
        np.testing.assert_array_equal(got, expected)
    assert loss.value(z2, o, Y_form) == loss.value(z2, o, reference)
    value, delta = loss.value_and_delta(z2, o, Y_form)
    assert type(delta) is np.ndarray and delta.dtype == dtype
    assert value == loss.value_and_delta(z2, o, reference)[0]
    np.testing.assert_array_equal(delta, loss.value_and_delta(z2, o, reference)[1])
    excluded = loss.excluded(Y_form)
    assert type(excluded) is np.ndarray
    np.testing.assert_array_equal(excluded, loss.excluded(reference))


def test_pwe_with_integer_and_bool_labels_is_not_zero_or_unnormalised():
    o = np.array([[0.5, 0.25, 0.0, -0.5]])
    z2 = np.arctanh(o)
    y = np.array([[1, 0, 1, 0]])
    for form in PairwiseExponential.FORMS:
        loss = PairwiseExponential(form)
        expected = loss.value(z2, o, y.astype(float))
        assert expected > 0
        for dtype in (np.int64, np.int8, np.uint8, np.bool_):
            assert loss.value(z2, o, y.astype(dtype)) == expected
            np.testing.assert_array_equal(loss.delta(z2, o, y.astype(dtype)),
                                          loss.delta(z2, o, y.astype(float)))


def test_ce_with_unsigned_labels_does_not_wrap_around():
    z2 = np.array([[2.0, -1.0]])
    loss = CrossEntropy()
    y = np.array([[1, 0]])
    assert loss.value(z2, None, y.astype(np.uint8)) == loss.value(z2, None, y.astype(float))


# ------------------------------------------------------------------------------------------
# metrics

@given(case=labelled(), form_true=forms, form_pred=forms)
def test_metrics_give_the_same_numbers(case, form_true, form_pred):
    Y, scores = case
    P = (scores > 0.5).astype(np.float64)
    Yf, Pf = as_form(Y, *form_true), as_form(P, *form_pred)
    got, expected = metrics.ranking_measures(Yf, scores), metrics.ranking_measures(Y, scores)
    for key in expected:
        assert_same(got[key], expected[key])
    for macro_labels in metrics.MACRO_LABELS:
        got = metrics.bipartition_measures(Yf, Pf, macro_labels=macro_labels)
        expected = metrics.bipartition_measures(Y, P, macro_labels=macro_labels)
        for key in expected:
            assert_same(got[key], expected[key])
    assert metrics.hamming_loss(Yf, Pf) == metrics.hamming_loss(Y, P)
    assert_same(metrics.selection_score(Yf, Pf), metrics.selection_score(Y, P))
    got, expected = metrics.evaluate(Yf, scores, Pf), metrics.evaluate(Y, scores, P)
    assert list(got) == list(expected)
    for key in expected:
        assert_same(got[key], expected[key])


# ------------------------------------------------------------------------------------------
# thresholds

@given(case=labelled(), form=forms, criterion=st.sampled_from(["f1", "hamming"]))
def test_optimal_thresholds_give_the_same_numbers(case, form, criterion):
    Y, scores = case
    np.testing.assert_array_equal(optimal_thresholds(scores, as_form(Y, *form), criterion),
                                  optimal_thresholds(scores, Y, criterion))


@settings(max_examples=25)
@given(case=labelled(), form=forms, intercept=st.sampled_from(["penalised", "none", "free"]))
def test_threshold_predictor_gives_the_same_numbers(case, form, intercept):
    Y, scores = case
    X = sp.csr_matrix(np.round(scores * 3) / 3)
    got = ThresholdPredictor(lam=0.5, intercept=intercept).fit(X, scores, as_form(Y, *form))
    expected = ThresholdPredictor(lam=0.5, intercept=intercept).fit(X, scores, Y)
    np.testing.assert_array_equal(got.coef_, expected.coef_)
    assert got.intercept_ == expected.intercept_


@settings(max_examples=25)
@given(case=labelled(), form=forms)
def test_select_lambda_gives_the_same_numbers(case, form):
    Y, scores = case
    X = sp.csr_matrix(np.round(scores * 3) / 3)
    lams = [0.1, 10.0]
    _, lam, table = select_lambda(X, scores, as_form(Y, *form), X, scores, as_form(Y, *form),
                                  lams=lams)
    _, lam_ref, table_ref = select_lambda(X, scores, Y, X, scores, Y, lams=lams)
    assert lam == lam_ref
    for key in table_ref:
        assert_same(table[key], table_ref[key])


# ------------------------------------------------------------------------------------------
# training, the estimator, the SVMs

def _small_data(n=30, D=8, L=4, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, D, density=0.5, format="csr", random_state=seed)
    Y = (rng.random((n, L)) < 0.4).astype(np.float64)
    Y[0] = 1.0
    return X, Y


@pytest.mark.parametrize("form", [(np.bool_, "ndarray"), (np.int64, "csr"), (np.uint8, "matrix"),
                                  (np.float32, "coo")])
def test_training_gives_the_same_network(form):
    from mlnn.nn.losses import get_loss
    from mlnn.nn.network import Network
    from mlnn.nn.lazy_updates import LazyRows
    from mlnn.nn.optimizers import get_rule
    from mlnn.nn.training import train
    X, Y = _small_data()
    params = []
    for labels in (Y, as_form(Y, *form)):
        network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=5,
                                     hidden_activation="relu", random_state=0,
                                     dtype=np.float64, init="glorot")
        train(network, get_loss("ce"), LazyRows(get_rule("adagrad", 0.1), weight_decay=0.0),
              X, labels, batch_size=8,
              max_epochs=2, random_state=0, dropout=0.0, input_dropout=0.0)
        params.append(network.params)
    for name in params[0]:
        np.testing.assert_array_equal(params[0][name], params[1][name])


@pytest.mark.parametrize("form", [(np.bool_, "ndarray"), (np.int64, "csr"), (np.uint8, "matrix")])
def test_estimator_gives_the_same_model(form):
    from mlnn.model.estimator import MultiLabelNN
    X, Y = _small_data(n=40)
    results = []
    for labels in (Y, as_form(Y, *form)):
        model = MultiLabelNN(hidden_units=5, max_epochs=2, batch_size=8, random_state=0,
                             dtype="float64")
        model.fit(X, labels)
        results.append((model.decision_function(X), model.predict(X),
                        model.evaluate(X, labels), model.score(X, labels)))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert results[1][1].dtype == np.dtype(form[0])       # predictions in the labels' own dtype
    assert results[0][3] == results[1][3]
    for key in results[0][2]:
        assert_same(results[0][2][key], results[1][2][key])


@pytest.mark.parametrize("form", [(np.bool_, "ndarray"), (np.int64, "csr"), (np.uint8, "matrix")])
def test_svm_gives_the_same_model(form):
    from mlnn.baselines.svm import LinearSVMBR
    X, Y = _small_data(n=40)
    reference = LinearSVMBR(C=1.0).fit(X, Y)
    model = LinearSVMBR(C=1.0).fit(X, as_form(Y, *form))
    np.testing.assert_array_equal(model.coef_, reference.coef_)
    np.testing.assert_array_equal(model.decision_function(X), reference.decision_function(X))
