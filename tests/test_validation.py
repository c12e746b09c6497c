"""The shared checks and the one seeded train/validation split."""

import re
import sys
import types
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from mlnn.base.errors import MLNNError, MLNNWarning
from mlnn.base.validation import (NotFittedError, check_bool, check_choice, check_dense_Y,
                                  check_finite_float, check_fitted, check_float_in, check_fraction,
                                  check_integer, check_length, check_nonnegative_float,
                                  check_positive_float, check_positive_int, check_sample_weight,
                                  check_seed, check_training_data, check_X, check_Y,
                                  validation_split)
from mlnn.evaluation.metrics import bipartition_measures
from mlnn.model.estimator import MultiLabelNN
from mlnn.evaluation.thresholds import ThresholdPredictor
from mlnn.nn.activations import get_activation
from mlnn.nn.losses import PairwiseExponential, get_loss
from mlnn.nn.network import Network
from mlnn.nn.optimizers import Momentum, get_rule
from mlnn.nn.training import EarlyStopping


@given(n=st.integers(2, 500), fraction=st.floats(0.01, 0.99), seed=st.integers(0, 2**32 - 1))
def test_validation_split_partitions_and_is_seeded(n, fraction, seed):
    n_val = int(round(fraction * n))
    if n_val < 1 or n_val >= n:
        with pytest.raises(MLNNError, match="leaves no documents"):
            validation_split(n, fraction=fraction, random_state=seed)
        return
    fit, val = validation_split(n, fraction=fraction, random_state=seed)
    assert len(val) == n_val and len(fit) == n - n_val
    np.testing.assert_array_equal(np.sort(np.concatenate([fit, val])), np.arange(n))
    assert np.all(np.diff(fit) > 0) and np.all(np.diff(val) > 0)
    # the convention: the first round(fraction · n) entries of the seed's permutation
    order = np.random.default_rng(seed).permutation(n)
    np.testing.assert_array_equal(val, np.sort(order[:n_val]))
    again = validation_split(n, fraction=fraction, random_state=seed)
    np.testing.assert_array_equal(again[1], val)


@pytest.mark.parametrize("fraction", [0, 0.0, 1.0, -0.1, 1.5, True, "0.1", float("nan")])
def test_validation_split_rejects_bad_fractions(fraction):
    with pytest.raises(MLNNError, match="fraction"):
        validation_split(100, fraction=fraction)


def test_check_fraction_with_and_without_zero():
    assert check_fraction(0.25, "f") == 0.25
    assert check_fraction(0, "f", allow_zero=True) == 0.0
    with pytest.raises(MLNNError, match=r"f must be a number in \(0, 1\), got 0"):
        check_fraction(0, "f")
    with pytest.raises(MLNNError, match=r"g must be a number in \[0, 1\), got 1"):
        check_fraction(1, "g", allow_zero=True)


def test_check_integer_and_length():
    assert check_integer(np.int64(3), "k", minimum=0) == 3
    for bad in (True, 2.0, -1, "3"):
        with pytest.raises(MLNNError, match="k must be an integer >= 0"):
            check_integer(bad, "k", minimum=0)
    assert check_length(("a", "b"), "names", 2) == ["a", "b"]
    with pytest.raises(MLNNError, match="names has 1 entries, expected 2"):
        check_length(["a"], "names", 2)


def test_check_training_data():
    X, Y = np.eye(4)[:3], np.array([[1, 0], [0, 1], [1, 1]])
    X_c, Y_c, X_val, Y_val = check_training_data(X, Y, dtype=np.float32)
    assert sp.isspmatrix_csr(X_c) and X_c.dtype == np.float32 and X_val is None and Y_val is None
    assert (Y_c != sp.csr_matrix(Y)).nnz == 0
    _, _, X_val, Y_val = check_training_data(X, Y, X[:1], Y[:1])
    assert X_val.shape == (1, 4) and Y_val.shape == (1, 2)
    for args, message in [((X, Y[:2]), "Y has 2 rows but X has 3"),
                          ((X[:0], Y[:0]), "no documents"),
                          ((X, Y, X[:1], None), "both X_val and Y_val"),
                          ((X, Y, X[:1, :3], Y[:1]), "X_val has 3 features"),
                          ((X, Y, X[:1], Y[:1, :1]), "Y_val has 1 labels")]:
        with pytest.raises(MLNNError, match=message):
            check_training_data(*args)
    with pytest.raises(MLNNError, match="X has 4 features"):
        check_training_data(X, Y, n_features=5)


#: Not real numbers: every numeric check rejects them, whatever their value.
NOT_REAL = (True, np.bool_(False), "1", None, 1j, np.complex128(0.5), [0.5], np.array([0.5]))

#: The interval each value of ``closed`` means, for low = -1 and high = 2, written out.
INTERVALS = {"left": ("[-1, 2)", lambda v: -1 <= v < 2),
             "right": ("(-1, 2]", lambda v: -1 < v <= 2),
             "both": ("[-1, 2]", lambda v: -1 <= v <= 2),
             "neither": ("(-1, 2)", lambda v: -1 < v < 2)}


@given(value=st.floats() | st.integers(-3, 3) | st.sampled_from([-1, 2, -1.0, 2.0, 10**400]),
       closed=st.sampled_from(sorted(INTERVALS)))
def test_check_float_in_is_the_interval(value, closed):
    written, inside = INTERVALS[closed]
    if inside(value):
        result = check_float_in(value, "v", -1, 2, closed=closed)
        assert result == float(value) and type(result) is float
    else:
        message = "^" + re.escape(f"v must be a number in {written}, got")
        with pytest.raises(MLNNError, match=message):
            check_float_in(value, "v", -1, 2, closed=closed)


@pytest.mark.parametrize("check, requirement, good, bad", [
    (check_finite_float, "a finite number", [-3, 0.0, np.float32(-2.5), np.int64(7)],
     [float("nan"), float("inf"), -float("inf"), 10**400]),
    (check_nonnegative_float, "a finite number ≥ 0", [0, 0.0, np.float32(2.5), 3],
     [-0.1, -1, float("nan"), float("inf"), 10**400]),
    (check_positive_float, "a positive finite number", [1e-300, 2, np.float16(0.5)],
     [0, 0.0, -1.0, float("nan"), float("inf")]),
])
def test_the_real_number_checks(check, requirement, good, bad):
    for value in good:
        assert check(value, "x") == float(value) and type(check(value, "x")) is float
    for value in list(bad) + list(NOT_REAL):
        with pytest.raises(MLNNError, match="^" + re.escape(f"x must be {requirement}, got")):
            check(value, "x")


def test_check_float_in_rejects_what_is_not_a_real_number_and_unknown_ends():
    for value in NOT_REAL:
        with pytest.raises(MLNNError, match=r"^x must be a number in \[0, 1\), got"):
            check_float_in(value, "x", 0, 1)
    with pytest.raises(MLNNError, match="unknown closed 'open'"):
        check_float_in(0.5, "x", 0, 1, closed="open")


def test_integer_checks_share_one_message_form():
    assert check_positive_int(np.int32(4), "n") == 4 and type(check_positive_int(4, "n")) is int
    for bad in (0, -2, True, 1.0, "1", None):
        with pytest.raises(MLNNError, match="^n must be a positive integer, got"):
            check_positive_int(bad, "n")
        with pytest.raises(MLNNError, match="^n must be a positive integer, got"):
            check_integer(bad, "n", minimum=1)


def test_check_bool_and_check_choice():
    assert check_bool(np.bool_(True), "flag") is True and check_bool(False, "flag") is False
    for bad in (1, 0, "yes", None, np.array([True])):
        with pytest.raises(MLNNError, match="^flag must be True or False, got"):
            check_bool(bad, "flag")
    assert check_choice("he", "init", ("glorot", "he")) == "he"
    for bad in ("xavier", None, ["he"], {"he": 1}, np.array(["he", "glorot"]), np.array(["he"])):
        with pytest.raises(MLNNError, match=r"^unknown init .*; choose one of \['glorot', 'he'\]"):
            check_choice(bad, "init", ("glorot", "he"))


def test_check_X_counts_documents_with_n_samples():
    X = np.eye(3)[:2]
    assert check_X(X, n_samples=2).shape == (2, 3)
    with pytest.raises(MLNNError, match=r"^X_val has 2 rows \(documents\), expected 3$"):
        check_X(X, "X_val", n_samples=3)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")   # np.matrix input
@pytest.mark.parametrize("make", [np.array, sp.csr_matrix, sp.coo_matrix, np.asmatrix,
                                  lambda a: a.tolist()])
def test_check_dense_Y_agrees_with_check_Y(make):
    Y = np.array([[1, 0, 1], [0, 0, 1]], dtype=np.int64)
    dense = check_dense_Y(make(Y), shape=(2, 3))
    assert type(dense) is np.ndarray
    np.testing.assert_array_equal(dense, Y)
    np.testing.assert_array_equal(dense, check_Y(make(Y)).toarray())
    bad = Y * 3
    for check in (check_dense_Y, check_Y):
        with pytest.raises(MLNNError, match="^Y must be a 0/1 label matrix; found the value 3"):
            check(make(bad))
        with pytest.raises(MLNNError, match=r"^Y has shape \(2, 3\), expected \(3, 2\)"):
            check(make(Y), shape=(3, 2))


def test_check_dense_Y_keeps_a_dense_array_as_it_is():
    Y = np.array([[True, False]])
    assert check_dense_Y(Y) is Y
    with pytest.raises(MLNNError, match="^labels must be 2-D"):
        check_dense_Y(np.ones(3), "labels")
    with pytest.raises(MLNNError, match="^Y must hold 0/1 values .* got dtype <U1"):
        check_dense_Y(np.array([["a"]]))


def _core_option_calls():
    """(call, expected message) for options of the core checked by the helpers above."""
    return [
        (lambda: ThresholdPredictor(tol=0), r"^tol must be a positive finite number, got 0$"),
        (lambda: ThresholdPredictor(tol=float("inf")), "^tol must be a positive finite number"),
        (lambda: ThresholdPredictor(lam=True), r"^lam must be a finite number ≥ 0, got True"),
        (lambda: ThresholdPredictor(fixed=1j), r"^fixed must be a finite number, got 1j"),
        (lambda: ThresholdPredictor(intercept=["none"]), r"^unknown intercept \['none'\]"),
        (lambda: get_rule(["sgd"], 0.1), r"^unknown optimizer \['sgd'\]"),
        (lambda: EarlyStopping(mode="median", patience=5), "^unknown early-stopping mode 'median'"),
        (lambda: EarlyStopping(min_delta=float("nan"), patience=5), "^min_delta must be a finite number ≥ 0"),
        (lambda: PairwiseExponential("fast"), "^unknown PWE form 'fast'"),
        (lambda: get_loss({"ce": 1}), r"^unknown loss \{'ce': 1\}"),
        (lambda: get_activation(np.array(["relu"])), "^unknown activation"),
        (lambda: Network.initialize(3, 2, hidden_units=2, hidden_activation="relu", init="xavier"),
         "^unknown initialisation 'xavier'"),
        (lambda: bipartition_measures(np.eye(2), np.eye(2), macro_labels="some"),
         "^unknown macro_labels 'some'"),
    ]


def test_the_core_checks_its_options_with_these_helpers():
    for call, message in _core_option_calls():
        with pytest.raises(MLNNError, match=message):
            call()


def test_the_core_accepts_numpy_scalars_for_its_options():
    momentum = Momentum(np.float32(0.5), momentum=np.float32(0.25), nesterov=np.bool_(True))
    assert (momentum.momentum, momentum.nesterov) == (0.25, True)
    predictor = ThresholdPredictor(lam=np.int64(2), tol=np.float32(0.5))
    assert (predictor.lam, predictor.tol) == (2.0, 0.5)
    assert EarlyStopping(min_delta=np.float16(0.5), mode="max", patience=5).min_delta == 0.5


def test_check_fitted_names_the_class():
    predictor = ThresholdPredictor()
    with pytest.raises(MLNNError, match="^this ThresholdPredictor is not fitted yet; call fit"):
        check_fitted(predictor, "coef_")
    predictor.coef_ = np.zeros(1)
    check_fitted(predictor, "coef_")


def test_not_fitted_error_is_a_value_and_attribute_error_without_scikit_learn(monkeypatch):
    monkeypatch.delitem(sys.modules, "sklearn.exceptions", raising=False)
    with pytest.raises(NotFittedError) as caught:
        check_fitted(ThresholdPredictor(), "coef_")
    assert type(caught.value) is NotFittedError
    assert isinstance(caught.value, MLNNError) and isinstance(caught.value, AttributeError)
    assert not hasattr(ThresholdPredictor(), "coef_")        # hasattr is unaffected


def test_not_fitted_error_joins_a_loaded_scikit_learn_class(monkeypatch):
    """With a module standing in for sklearn.exceptions in sys.modules (nothing is imported), the
    error raised is also an instance of its NotFittedError, and one class is made per class."""
    class ForeignNotFitted(ValueError, AttributeError):
        pass
    module = types.ModuleType("sklearn.exceptions")
    module.NotFittedError = ForeignNotFitted
    monkeypatch.setitem(sys.modules, "sklearn.exceptions", module)
    with pytest.raises(ForeignNotFitted, match="not fitted yet") as caught:
        check_fitted(ThresholdPredictor(), "coef_")
    assert isinstance(caught.value, NotFittedError) and isinstance(caught.value, MLNNError)
    with pytest.raises(ForeignNotFitted) as again:
        check_fitted(ThresholdPredictor(), "coef_")
    assert type(again.value) is type(caught.value)
    module.NotFittedError = "not a class"
    with pytest.raises(NotFittedError) as plain:
        check_fitted(ThresholdPredictor(), "coef_")
    assert type(plain.value) is NotFittedError


@pytest.mark.parametrize("seed", [None, 0, 7, np.int64(3), 2**40])
def test_check_seed_accepts_none_and_non_negative_integers(seed):
    assert check_seed(seed) is seed


@pytest.mark.parametrize("seed", [-1, 1.5, True, np.bool_(False), "0", [0],
                                  np.random.default_rng(0)])
def test_check_seed_rejects_everything_else(seed):
    with pytest.raises(MLNNError, match=r"^random_state must be None or an integer >= 0"):
        check_seed(seed)


def test_check_sample_weight():
    np.testing.assert_array_equal(check_sample_weight([1, 0, 2], 3), [1.0, 0.0, 2.0])
    for bad, message in [([1, 2], r"shape \(2,\), expected \(3,\)"),
                         ([[1, 2, 3]], "shape"), ([1, -1, 1], ">= 0"), ([0, 0, 0], "not all 0"),
                         ([1, np.nan, 1], "finite"), (["a", "b", "c"], "array of numbers")]:
        with pytest.raises(MLNNError, match=message):
            check_sample_weight(bad, 3)


def test_training_data_needs_labels_features_and_label_columns():
    X, Y = np.ones((4, 3)), np.eye(4, 2)
    with pytest.raises(MLNNError, match="^the labels Y are missing"):
        check_training_data(X, None)
    with pytest.raises(MLNNError, match=r"^X has 0 feature\(s\) \(shape=\(4, 0\)\)"):
        check_training_data(X[:, :0], Y)
    with pytest.raises(MLNNError, match=r"^Y has 0 labels \(shape=\(4, 0\)\)"):
        check_training_data(X, Y[:, :0])


def test_messages_say_what_to_do():
    with pytest.raises(MLNNError, match="got shape \\(3,\\). Reshape your data"):
        check_X(np.ones(3))
    with pytest.raises(MLNNError, match="Complex data not supported"):
        check_X(np.ones((2, 2), dtype=complex))
    with pytest.raises(MLNNError, match=r"found the value 0.25 \(a continuous target"):
        check_Y([[0.25, 1.0]])
    with pytest.raises(MLNNError, match="found the value 2$"):
        check_Y([[2, 1]])
    with pytest.raises(MLNNError, match=r"n_samples=1\)$"):
        validation_split(1, fraction=0.1)


def test_a_value_that_overflows_the_training_dtype_says_overflow_and_where():
    X = sp.csr_matrix(([1.0, 1e308], [0, 3], [0, 1, 2]), shape=(2, 5))
    assert check_X(X).data[1] == 1e308                      # fine in float64
    with pytest.raises(MLNNError, match=r"X has a value too large for float32 "
                                        r"\(overflow at row 1, column 3\)"):
        check_X(X, dtype=np.float32)
    with pytest.raises(MLNNError, match=r"NaN or infinite values \(first at row 0, column 2\)"):
        check_X(sp.csr_matrix(([np.inf], [2], [0, 1, 1]), shape=(2, 5)), dtype=np.float32)


# ------------------------------------------------------------------------------------------------
# degenerate training data: refused when nothing can be learned, named when a part cannot


def _data(n=40, D=6, L=4, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, D, density=0.5, random_state=seed, format="csr")
    Y = (rng.random((n, L)) < 0.5).astype(np.int8)
    Y[:, 0], Y[0, 0] = 1, 0
    return X, Y


def test_labels_without_any_positive_are_refused():
    X, Y = _data()
    with pytest.raises(MLNNError, match="Y has no positive label: none of its 40 documents"):
        check_training_data(X, np.zeros_like(Y))
    with pytest.raises(MLNNError, match="Y has no positive label"):
        MultiLabelNN(hidden_units=3, max_epochs=1).fit(X, sp.csr_matrix(Y.shape))


def test_documents_that_are_all_empty_are_refused():
    X, Y = _data()
    empty = sp.csr_matrix(([0.0, 0.0], ([0, 1], [0, 1])), shape=X.shape)   # explicit zeros
    for X_empty in (sp.csr_matrix(X.shape), empty, np.zeros(X.shape)):
        with pytest.raises(MLNNError, match="every one of the 40 documents of X is empty"):
            check_training_data(X_empty, Y)
    X = X.tolil()
    X[:20] = 0                                  # some empty documents: allowed, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_training_data(X.tocsr(), Y, warn=True)


def test_a_label_without_a_positive_document_is_named_in_one_warning():
    X, Y = _data(L=6)
    Y[:, [2, 5]] = 0
    with pytest.warns(MLNNWarning, match=r"2 of the 6 labels have no positive training document "
                                         r"\(columns 2, 5 of Y\)") as record:
        MultiLabelNN(hidden_units=3, max_epochs=1, random_state=0).fit(X, Y)
    assert len([w for w in record if issubclass(w.category, MLNNWarning)]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_training_data(X, Y)              # only when asked (the estimator asks once)


def test_validation_labels_without_a_rank_loss_are_named():
    X, Y = _data()
    with pytest.raises(MLNNError, match="X_val has no documents"):
        check_training_data(X, Y, X[:0], Y[:0])
    Y_val = np.zeros((3, 4), dtype=np.int8)
    with pytest.warns(MLNNWarning, match="Y_val: none of the 3 validation documents has both"):
        check_training_data(X, Y, X[:3], Y_val)
    with pytest.warns(MLNNWarning, match="validation_fraction=0.5: none of the 1 validation"):
        MultiLabelNN(hidden_units=3, max_epochs=1, validation_fraction=0.5,
                     random_state=0).fit(np.eye(2, 6), np.ones((2, 4)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_training_data(X, Y, X[:3], Y[:3])
    with pytest.warns(MLNNWarning, match="Y_val: with a single label the validation rank loss "
                                         "is never defined"):
        check_training_data(X, Y[:, :1], X[:3], Y[:3, :1])
