"""Inputs a user can build that NumPy or SciPy cannot read safely: labels as lists of names or
rows of different lengths, dense float16 features, and sparse matrices whose index arrays do not
fit their shape (what scipy's ``check_format(full_check=True)`` refuses). Each is refused with
one line naming the argument before anything reads through it (float16 is widened, as
scikit-learn does), at every public entry point that takes X or Y; never a crash."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from mlnn.base.errors import MLNNError
from mlnn.base.validation import check_dense_Y, check_X, check_Y
from mlnn.baselines.svm import LinearSVMBR
from mlnn.evaluation.thresholds import ThresholdPredictor
from mlnn.model.estimator import MultiLabelNN

ROOT = Path(__file__).resolve().parents[1]


def _data(n=40, D=6, L=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, D)) * (rng.random((n, D)) < 0.6)
    Y = (rng.random((n, L)) < 0.4).astype(np.int64)
    Y[np.arange(n), rng.integers(0, L, n)] = 1
    return X, Y


@pytest.fixture(scope="module")
def fitted():
    X, Y = _data()
    return MultiLabelNN(hidden_units=8, max_epochs=3, random_state=0).fit(X, Y), X, Y


@pytest.mark.parametrize("Y, row", [
    ([["sports", "politics"], ["economy"]] * 20, 1),
    ([[1, 0, 1], [0, 1]] + [[1, 0, 0]] * 38, 1),
    ([(1, 0, 1)] * 39 + [(1, 0)], 39),
])
def test_label_sets_as_lists_of_names_or_ragged_rows_are_refused_in_one_line(Y, row):
    X, _ = _data()
    with pytest.raises(MLNNError) as error:
        MultiLabelNN(max_epochs=1).fit(X, Y)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("Y must be a 2-D matrix (documents × labels)")
    assert f"rows have different lengths (row 0 has {len(Y[0])} entries, row {row} has" in message
    assert "give one 0/1 column per label" in message


def test_ragged_features_are_refused_naming_X():
    with pytest.raises(MLNNError, match=r"^X must be a 2-D matrix \(documents × features\), but "
                                        r"its rows have different lengths .*column per feature$"):
        check_X([[1.0, 2.0], [3.0]])


def test_label_names_of_equal_count_are_refused_as_not_0_1():
    X, _ = _data()
    with pytest.raises(MLNNError, match=r"^Y must hold 0/1 values .* got dtype <U8; label names "
                                        r"must first become a 0/1 matrix with one column per "
                                        r"label$"):
        MultiLabelNN(max_epochs=1).fit(X, [["sports", "politics"]] * 40)


def test_dense_float16_features_are_widened_in_fit_and_predict():
    X, Y = _data()
    X16 = X.astype(np.float16)
    model = MultiLabelNN(hidden_units=8, max_epochs=3, random_state=0).fit(X16, Y)
    reference = MultiLabelNN(hidden_units=8, max_epochs=3, random_state=0).fit(
        X16.astype(np.float64), Y)
    np.testing.assert_array_equal(model.decision_function(X16), reference.decision_function(
        X16.astype(np.float64)))
    np.testing.assert_array_equal(model.predict(X16), reference.predict(X16.astype(np.float64)))
    assert model.evaluate(X16, Y) == reference.evaluate(X16.astype(np.float64), Y)


def test_float16_labels_with_sparse_output_answer_in_float32():
    X, Y = _data()
    model = MultiLabelNN(hidden_units=8, max_epochs=2, sparse_output=True, random_state=0)
    Y_pred = model.fit(X, Y.astype(np.float16)).predict(X)
    assert sp.issparse(Y_pred) and Y_pred.dtype == np.float32
    assert model.set_params(sparse_output=False).predict(X).dtype == np.float16


def _csr(indices, indptr, shape=(3, 6)):
    """A CSR matrix built the way scipy lets a user build it, without the full check."""
    return sp.csr_matrix((np.ones(len(indices)), np.array(indices), np.array(indptr)),
                         shape=shape)


def _reassigned(attribute, position, value, matrix=None):
    """A valid 3 × 6 matrix whose index array ``attribute`` is edited after construction."""
    matrix = _csr([0, 2, 5], [0, 1, 2, 3]) if matrix is None else matrix
    getattr(matrix, attribute)[position] = value
    return matrix


def _shortened(attribute, matrix=None):
    """A valid 3 × 6 matrix whose array ``attribute`` loses its last entry after construction."""
    matrix = _csr([0, 2, 5], [0, 1, 2, 3]) if matrix is None else matrix
    setattr(matrix, attribute, getattr(matrix, attribute)[:-1])
    return matrix


#: (id, a malformed sparse 3 × 6 X, the words of its message)
MALFORMED = [
    ("column-past-width", lambda: _csr([0, 6, 2], [0, 1, 2, 3]), "column index 6, outside [0, 6)"),
    ("column-2**40", lambda: _csr([0, 2 ** 40, 2], [0, 1, 2, 3]),
     "column index 1099511627776, outside [0, 6)"),
    ("negative-column", lambda: _csr([0, -1, 2], [0, 1, 2, 3]), "column index -1, outside"),
    ("negative-after-construction", lambda: _reassigned("indices", 1, -5),
     "column index -5, outside"),
    ("indptr-decreasing", lambda: _reassigned("indptr", 1, 3), "indptr is not a non-decreasing"),
    ("indptr-not-from-0", lambda: _reassigned("indptr", 0, 1), "indptr is not a non-decreasing"),
    ("indptr-past-the-entries", lambda: _reassigned("indptr", 3, 4),
     "indptr is not a non-decreasing"),
    ("csc-row-past-height", lambda: _reassigned("indices", 0, 3, _csr([0, 2, 5], [0, 1, 2, 3])
                                                 .tocsc()), "row index 3, outside [0, 3)"),
    ("coo-negative-column", lambda: _reassigned("col", 0, -2, _csr([0, 2, 5], [0, 1, 2, 3])
                                                 .tocoo()), "column index -2, outside"),
    ("data-one-short-of-indptr", lambda: _shortened("data"),
     "its data (shape (2,)) and indices (shape (3,)) differ in length"),
    ("indices-one-short-of-data", lambda: _shortened("indices"),
     "its data (shape (3,)) and indices (shape (2,)) differ in length"),
    ("csc-data-one-short", lambda: _shortened("data", _csr([0, 2, 5], [0, 1, 2, 3]).tocsc()),
     "its data (shape (2,)) and indices (shape (3,)) differ in length"),
    ("bsr-data-one-short", lambda: _shortened("data", _csr([0, 2, 5], [0, 1, 2, 3]).tobsr()),
     "its data (shape (2, 1, 1)) and indices (shape (3,)) differ in length"),
    ("coo-data-one-short", lambda: _shortened("data", _csr([0, 2, 5], [0, 1, 2, 3]).tocoo()),
     "row, column and data arrays differ in length"),
    ("coo-row-one-short", lambda: _shortened("row", _csr([0, 2, 5], [0, 1, 2, 3]).tocoo()),
     "row, column and data arrays differ in length"),
    ("coo-col-one-short", lambda: _shortened("col", _csr([0, 2, 5], [0, 1, 2, 3]).tocoo()),
     "row, column and data arrays differ in length"),
]
MALFORMED_IDS = [case[0] for case in MALFORMED]


def test_scipy_itself_refuses_every_malformed_compressed_case():
    for _, make, _ in MALFORMED:
        matrix = make()
        if matrix.format != "coo":
            with pytest.raises(ValueError):
                matrix.check_format(full_check=True)


def _expect_refusal(call, name, words):
    with pytest.raises(MLNNError) as error:
        call()
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"{name} is a malformed "), message
    assert words in message and "rebuild it from valid index arrays" in message, message


@pytest.mark.parametrize("case", MALFORMED, ids=MALFORMED_IDS)
def test_malformed_sparse_X_is_refused_at_every_entry_point(case, fitted):
    model, _, Y = fitted
    _, make, words = case
    X_bad, Y_3 = make(), Y[:3]
    assert X_bad.shape[1] == model.n_features_in_
    calls = [lambda: MultiLabelNN(max_epochs=1).fit(X_bad, Y_3),
             lambda: model.predict(X_bad), lambda: model.decision_function(X_bad),
             lambda: model.predict_proba(X_bad), lambda: model.score(X_bad, Y_3),
             lambda: model.evaluate(X_bad, Y_3), lambda: model.network_.scores(X_bad),
             lambda: LinearSVMBR().fit(X_bad, Y_3),
             lambda: ThresholdPredictor(lam=1.0).fit(X_bad, np.zeros((3, 3)), Y_3),
             lambda: model.thresholds_.predict(X_bad, np.zeros((3, 3)))]
    for call in calls:
        _expect_refusal(call, "X", words)


@pytest.mark.parametrize("case", MALFORMED, ids=MALFORMED_IDS)
def test_malformed_sparse_X_val_and_Y_are_refused_naming_them(case):
    X, Y = _data(n=3)
    X = X[:, :6]
    _, make, words = case
    _expect_refusal(lambda: MultiLabelNN(max_epochs=1).fit(X, Y, X_val=make(), Y_val=Y),
                    "X_val", words)
    Y_bad = make()
    Y_bad.data[:] = 1
    _expect_refusal(lambda: check_Y(Y_bad), "Y", words)
    _expect_refusal(lambda: check_dense_Y(Y_bad), "Y", words)


def test_unsorted_and_duplicate_indices_are_summed_as_scipy_reads_them(fitted):
    model, X, _ = fitted
    messy = sp.csr_matrix((np.array([0.5, 0.25, 0.125, 1.0, 0.75]), np.array([4, 1, 4, 5, 0]),
                           np.array([0, 3, 3, 5])), shape=(3, 6))
    before = (messy.data.copy(), messy.indices.copy())
    assert not messy.has_canonical_format
    dense = messy.toarray()                     # the duplicates summed: 0.625 in column 4
    np.testing.assert_array_equal(check_X(messy).toarray(), dense)
    assert check_X(messy).has_canonical_format
    np.testing.assert_array_equal(model.decision_function(messy), model.decision_function(dense))
    np.testing.assert_array_equal(messy.data, before[0])     # the user's matrix is untouched
    np.testing.assert_array_equal(messy.indices, before[1])


FIT_TWICE = """
import numpy as np, scipy.sparse as sp
from mlnn.model.estimator import MultiLabelNN
rng = np.random.default_rng(0)
n, D = 200, 50
X = sp.random(n, D, density=0.1, format="csr", random_state=0)
X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
X.indices[7] = {index}
Y = (rng.random((n, 4)) < 0.3).astype(int)
Y[:, 0] = 1
scores = [MultiLabelNN(hidden_units=16, max_epochs=2, random_state=0).fit(X, Y)
          .decision_function(X[:5]) for _ in range(2)]
print(np.array_equal(*scores))
"""


@pytest.mark.parametrize("index", [2 ** 40, -1, -(2 ** 40)])
def test_a_fit_on_an_index_outside_the_matrix_ends_with_one_line_not_a_crash(index, tmp_path):
    """As the user met it: the process died (SIGSEGV) or two identical fits differed."""
    script = "from mlnn.cli import main  # noqa\n" + FIT_TWICE.format(index=index)
    process = subprocess.run(
        [sys.executable, "-c", _as_command(script)], cwd=tmp_path, capture_output=True,
        timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1"))
    err = process.stderr.decode()
    assert process.returncode == 1, (process.returncode, err)
    assert err.count("\n") == 1 and err.startswith(
        f"mlnn.base.errors.MLNNError: X is a malformed CSR matrix of shape (200, 50): it stores "
        f"the column index {index}, outside [0, 50)"), err


def _as_command(script):
    """``script`` with any exception printed as its one line (``module.Class: message``)."""
    body = "\n".join("    " + line for line in script.splitlines())
    return ("import sys\ntry:\n" + body + "\nexcept Exception as error:\n"
            "    cls = type(error)\n"
            "    print(f'{cls.__module__}.{cls.__qualname__}: {error}', file=sys.stderr)\n"
            "    sys.exit(1)\n")
