"""Multi-label svmlight reader/writer: XC header, 0/1-based ids, errors, round trips."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, strategies as st

from mlnn.datasets.svmlight import read_svmlight, write_svmlight
from mlnn.errors import DataFormatError


def test_reads_extreme_classification_file(tmp_path):
    path = tmp_path / "xc.txt"
    path.write_text("3 4 3\n0,2 0:1.5 3:2\n 1:0.25\n1 2:-1 # comment\n")
    X, Y = read_svmlight(path)
    np.testing.assert_array_equal(X.toarray(), [[1.5, 0, 0, 2], [0, 0.25, 0, 0], [0, 0, -1, 0]])
    np.testing.assert_array_equal(Y.toarray(), [[1, 0, 1], [0, 0, 0], [0, 1, 0]])
    assert X.dtype == np.float64 and Y.dtype == np.int8 and X.has_sorted_indices


def test_libsvm_one_based_ids_are_detected(tmp_path):
    path = tmp_path / "lib.txt"
    path.write_text("1 1:1 3:2\n0,1 2:5\n")
    X, Y = read_svmlight(path)
    np.testing.assert_array_equal(X.toarray(), [[1, 0, 2], [0, 5, 0]])
    X, Y = read_svmlight(path, zero_based=True, n_features=4)
    np.testing.assert_array_equal(X.toarray(), [[0, 1, 0, 2], [0, 0, 5, 0]])


@pytest.mark.parametrize("text, line, message", [
    ("2 3 2\n0 0:1\n", 1, "announces 2 documents, the file has 1"),
    ("1 3 2\n0 0:1 0:2\n", 2, "duplicate feature index 0"),
    ("1 3 2\n0 7:1\n", 2, "out of range"),
    ("1 3 2\n5 0:1\n", 2, "label 5 outside 0..1"),
    ("1 3 2\n0 0:x\n", 2, "'x' is not numeric"),
    ("1 3 2\nz 0:1\n", 2, "label 'z' is not an integer"),
    ("1 3 2\n0 0\n", 2, "is not 'index:value'"),
    ("1 3 2\n0 0:nan\n", 2, "not finite"),
])
def test_errors_name_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(DataFormatError) as error:
        read_svmlight(path)
    assert f"bad.txt:{line}:" in str(error.value) and message in str(error.value)


def test_missing_file(tmp_path):
    with pytest.raises(DataFormatError, match="not found"):
        read_svmlight(tmp_path / "none.txt")


@st.composite
def matrices(draw):
    n = draw(st.integers(0, 6))
    D = draw(st.integers(1, 6))
    L = draw(st.integers(1, 5))
    values = st.one_of(st.just(0.0), st.floats(allow_nan=False, allow_infinity=False,
                                               width=64).filter(bool))
    X = np.array(draw(st.lists(st.lists(values, min_size=D, max_size=D), min_size=n,
                               max_size=n)), dtype=float).reshape(n, D)
    Y = np.array(draw(st.lists(st.lists(st.integers(0, 1), min_size=L, max_size=L),
                               min_size=n, max_size=n)), dtype=np.int8).reshape(n, L)
    return X, Y


@given(matrices(), st.booleans(), st.booleans(), st.booleans())
def test_round_trip(tmp_path_factory, data, header, zero_based, gz):
    X, Y = data
    path = tmp_path_factory.mktemp("svm") / ("d.svm.gz" if gz else "d.svm")
    write_svmlight(path, sp.csr_matrix(X), sp.csr_matrix(Y), header=header,
                   zero_based=zero_based)
    kwargs = {"zero_based": zero_based}
    if not header:
        kwargs.update(n_features=X.shape[1], n_labels=Y.shape[1])
    X2, Y2 = read_svmlight(path, **kwargs)
    np.testing.assert_array_equal(X2.toarray(), X)  # repr precision: exact floats
    np.testing.assert_array_equal(Y2.toarray(), Y)


@given(st.data())
def test_random_corruptions_raise_only_data_format_error(tmp_path_factory, data):
    text = "3 4 3\n0,2 0:1.5 3:2\n 1:0.25\n1 2:-1\n"
    position = data.draw(st.integers(0, len(text) - 1))
    junk = data.draw(st.text(st.sampled_from(" ,:0123456789.-e#x\n"), min_size=1, max_size=4))
    if data.draw(st.booleans()):
        text = text[:position] + junk + text[position:]
    else:
        text = text[:position] + text[position + len(junk):]
    path = tmp_path_factory.mktemp("c") / "c.svm"
    path.write_text(text)
    try:
        X, Y = read_svmlight(path)
        assert X.shape[0] == Y.shape[0]
    except DataFormatError:
        pass
