"""Multi-label svmlight reader/writer: XC header, 0/1-based ids, errors, round trips."""

import gzip

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, strategies as st

from mlnn.base.errors import DataFormatError
from mlnn.datasets.svmlight import format_svmlight, parse_svmlight, read_svmlight


def test_reads_extreme_classification_file(tmp_path):
    path = tmp_path / "xc.txt"
    path.write_text("3 4 3\n0,2 0:1.5 3:2\n 1:0.25\n1 2:-1 # comment\n")
    X, Y = read_svmlight(path)
    np.testing.assert_array_equal(X.toarray(), [[1.5, 0, 0, 2], [0, 0.25, 0, 0], [0, 0, -1, 0]])
    np.testing.assert_array_equal(Y.toarray(), [[1, 0, 1], [0, 0, 0], [0, 1, 0]])
    assert X.dtype == np.float64 and Y.dtype == np.int8 and X.has_sorted_indices


def test_an_explicit_base_reads_libsvm_and_zero_based_files(tmp_path):
    path = tmp_path / "lib.txt"
    path.write_text("1 1:1 3:2\n0,1 2:5\n")
    X, Y = read_svmlight(path, zero_based=False)
    np.testing.assert_array_equal(X.toarray(), [[1, 0, 2], [0, 5, 0]])
    X, Y = read_svmlight(path, zero_based=True, n_features=4)
    np.testing.assert_array_equal(X.toarray(), [[0, 1, 0, 2], [0, 0, 5, 0]])


def test_the_base_is_never_guessed_from_ids_that_fit_both(tmp_path):
    # 0-based ids that happen not to use feature 0: reading them as 1-based would shift every
    # feature by one, so without a header or an explicit base the file is refused
    path = tmp_path / "ambiguous.txt"
    path.write_text("1 1:1 3:2\n0,1 2:5\n")
    for n_features in (None, 4, 5):
        with pytest.raises(DataFormatError, match="--zero-based or --one-based"):
            read_svmlight(path, n_features=n_features)


@pytest.mark.parametrize("text, n_features, expected", [
    ("0 0:1 2:2\n", None, [[1, 0, 2]]),            # an id 0: 0-based, whatever the width
    ("0 1:1 3:2\n", 3, [[1, 0, 2]]),               # an id equal to D: 1-based
    ("1 3 1\n0 1:1 2:2\n", None, [[0, 1, 2]]),     # a header: 0-based (XC convention)
])
def test_ids_that_leave_no_doubt_fix_the_base(tmp_path, text, n_features, expected):
    path = tmp_path / "d.txt"
    path.write_text(text)
    X, _ = read_svmlight(path, n_features=n_features)
    np.testing.assert_array_equal(X.toarray(), expected)


def test_parse_svmlight_reads_text_from_anywhere():
    X, Y = parse_svmlight("2 3 2\n0 0:1\n1 2:4\n", "<stdin>")
    np.testing.assert_array_equal(X.toarray(), [[1, 0, 0], [0, 0, 4]])
    with pytest.raises(DataFormatError, match="<stdin>:3: value 'x' is not numeric"):
        parse_svmlight("2 3 2\n0 0:1\n1 2:x\n", "<stdin>")


def test_a_value_beyond_float32_names_its_line_and_feature(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("2 3 1\n0 0:1\n0 1:2 2:1e308\n")
    X, _ = read_svmlight(path)                        # fine in float64
    assert X[1, 2] == 1e308
    with pytest.raises(DataFormatError, match=r"big.txt:3: value 1e308 of feature 2 overflows "
                                              r"float32 \(largest 3.403e\+38\)"):
        read_svmlight(path, dtype=np.float32)


@pytest.mark.parametrize("encoding, name", [("utf-16", "UTF-16"), ("utf-16-le", "UTF-16"),
                                            ("utf-16-be", "UTF-16"), ("utf-32", "UTF-32")])
def test_a_utf16_or_utf32_file_is_refused_naming_its_encoding(tmp_path, encoding, name):
    path = tmp_path / "wide.svm"
    path.write_bytes("1 3 1\n0 0:1\n".encode(encoding))
    with pytest.raises(DataFormatError, match=f"wide.svm: the file is encoded as {name}; mlnn "
                                              "reads UTF-8"):
        read_svmlight(path)


@pytest.mark.parametrize("text, line, message", [
    ("2 3 2\n0 0:1\n", 1, "announces 2 documents, the file has 1"),
    ("1 3 2\n0 0:1 0:2\n", 2, "duplicate feature index 0"),
    ("1 3 2\n0 7:1\n", 2, "out of range"),
    ("1 3 2\n5 0:1\n", 2, "label index 5 out of range 0..1"),
    ("1 3 2\n0 0:x\n", 2, "'x' is not numeric"),
    ("1 3 2\nz 0:1\n", 2, "label index 'z' is not an integer"),
    ("1 3 2\n0 0\n", 2, "is not 'index:value'"),
    ("1 3 2\n0 0:nan\n", 2, "not finite"),
    ("1 3 2\n0,0 0:1\n", 2, "duplicate label index 0"),
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
    data = format_svmlight(sp.csr_matrix(X), sp.csr_matrix(Y), header=header,
                           zero_based=zero_based)
    path.write_bytes(gzip.compress(data) if gz else data)
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
