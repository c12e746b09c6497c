"""MULAN ARFF reader: sparse and dense rows, XML label names, .gz, errors, round trips."""

import gzip

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, strategies as st

from mlnn.base.errors import DataFormatError
from mlnn.datasets.arff import read_arff, read_mulan_xml
from tests.arff_files import write_arff, write_mulan_xml
from tests.conftest import require_file

XML = """<?xml version="1.0" encoding="utf-8"?>
<labels xmlns="http://mulan.sourceforge.net/labels">
<label name="sport"></label>
<label name="politics"><label name="elections"></label></label>
</labels>
"""

# Labels are attributes 1, 3 and 4 -- not the last ones -- and the XML names them in another order.
HEADER = """% a comment
@relation 'toy data'

@attribute word_a numeric
@attribute politics {0,1}
@attribute 'word b' numeric
@attribute sport {0,1}
@attribute elections {0,1}
@attribute word_c numeric

@data
"""


def _write(tmp_path, body, name="toy.arff", xml=XML):
    path = tmp_path / name
    data = (HEADER + body).encode("utf-8")
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    (tmp_path / "toy.xml").write_text(xml)
    return path, tmp_path / "toy.xml"


def test_sparse_rows_labels_named_by_xml(tmp_path):
    path, xml = _write(tmp_path, "{0 0.5,1 1,5 2}\n\n{}\n% comment\n{3 1,4 1,2 -1.25}\n")
    labels = read_mulan_xml(xml)
    X, Y, features = read_arff(path, labels)
    assert labels == ["sport", "politics", "elections"]          # nested labels depth first
    assert features == ["word_a", "word b", "word_c"]
    np.testing.assert_array_equal(X.toarray(), [[0.5, 0, 2], [0, 0, 0], [0, -1.25, 0]])
    np.testing.assert_array_equal(Y.toarray(), [[0, 1, 0], [0, 0, 0], [1, 0, 1]])
    assert sp.isspmatrix_csr(X) and X.dtype == np.float64 and X.has_sorted_indices
    assert Y.dtype == np.int8


def test_dense_rows_and_gzip(tmp_path):
    path, xml = _write(tmp_path, "1.5,0,2,1,0,-3\n0,1,0,0,1,4e-2\n", name="toy.arff.gz")
    X, Y, _ = read_arff(path, read_mulan_xml(xml))
    np.testing.assert_array_equal(X.toarray(), [[1.5, 2, -3], [0, 0, 0.04]])
    np.testing.assert_array_equal(Y.toarray(), [[1, 0, 0], [0, 1, 1]])


def test_unsorted_sparse_indices_are_accepted(tmp_path):
    path, xml = _write(tmp_path, "{5 3,0 1}\n")
    X, _, _ = read_arff(path, read_mulan_xml(xml))
    np.testing.assert_array_equal(X.toarray(), [[1, 0, 3]])
    assert X.has_sorted_indices


@pytest.mark.parametrize("body, line, message", [
    ("{0 1,1 1}\n{0 1,0 2}\n", 13, "duplicate attribute index 0"),
    ("{0 1}\n{9 1}\n", 13, "attribute index 9 out of range 0..5"),
    ("{0 abc}\n", 12, "not numeric"),
    ("{0 1,1}\n", 12, "not 'index value'"),
    ("{0 1\n", 12, "enclosed"),
    ("1,0,2,1,0\n", 12, "5 values, expected 6"),
    ("1,0,2,1,0,6\n1,0,x,1,0,6\n", 13, "'x' is not numeric"),
    ("{1 2}\n", 12, "other than 0/1"),
    ("{0 1,2 ?}\n", 12, "not numeric"),
])
def test_malformed_rows_name_file_and_line(tmp_path, body, line, message):
    path, xml = _write(tmp_path, body)
    with pytest.raises(DataFormatError) as error:
        read_arff(path, read_mulan_xml(xml))
    assert f"toy.arff:{line}:" in str(error.value)
    assert message in str(error.value)


def test_header_errors(tmp_path):
    path = tmp_path / "bad.arff"
    path.write_text("@relation r\n@attribute a numeric\n")
    with pytest.raises(DataFormatError, match="no @data"):
        read_arff(path, ["a"])
    path.write_text("@relation r\n@attribute a string\n@data\n")
    with pytest.raises(DataFormatError, match="bad.arff:2: .*unsupported type"):
        read_arff(path, ["a"])
    path.write_text("@relation r\n@attribute a numeric\n@data\n1\n")
    with pytest.raises(DataFormatError, match="not attributes of the file"):
        read_arff(path, ["b"])
    with pytest.raises(DataFormatError, match="file not found"):
        read_arff(tmp_path / "missing.arff", ["a"])


def test_xml_errors(tmp_path):
    xml = tmp_path / "l.xml"
    xml.write_text(XML)
    with pytest.raises(DataFormatError, match="expected 4 labels, the XML names 3"):
        read_mulan_xml(xml, expected_count=4)
    xml.write_text(XML.replace("elections", "sport"))
    with pytest.raises(DataFormatError, match="duplicate label"):
        read_mulan_xml(xml)
    xml.write_text(XML[:-20])
    with pytest.raises(DataFormatError, match="l.xml:.*malformed XML"):
        read_mulan_xml(xml)


names = st.text(st.characters(min_codepoint=33, max_codepoint=0x2FF,
                              blacklist_characters="\\"), min_size=1, max_size=8)


@st.composite
def datasets(draw):
    n = draw(st.integers(0, 6))
    D = draw(st.integers(1, 5))
    L = draw(st.integers(1, 4))
    values = st.one_of(st.just(0.0), st.floats(-1e6, 1e6, allow_nan=False).filter(bool))
    X = np.array(draw(st.lists(st.lists(values, min_size=D, max_size=D),
                               min_size=n, max_size=n)) or np.zeros((0, D))).reshape(n, D)
    Y = np.array(draw(st.lists(st.lists(st.integers(0, 1), min_size=L, max_size=L),
                               min_size=n, max_size=n)) or np.zeros((0, L))).reshape(n, L)
    all_names = draw(st.lists(names, min_size=D + L, max_size=D + L, unique=True))
    return X, Y, all_names[:D], all_names[D:]


@given(datasets(), st.booleans(), st.booleans())
def test_write_read_round_trip(tmp_path_factory, data, sparse, gz):
    X, Y, features, labels = data
    folder = tmp_path_factory.mktemp("rt")
    path = folder / ("d.arff.gz" if gz else "d.arff")
    write_arff(path, sp.csr_matrix(X), sp.csr_matrix(Y), features, labels, sparse=sparse)
    write_mulan_xml(folder / "d.xml", labels)
    labels2 = read_mulan_xml(folder / "d.xml")
    X2, Y2, features2 = read_arff(path, labels2)
    np.testing.assert_array_equal(X2.toarray(), X)
    np.testing.assert_array_equal(Y2.toarray(), Y)
    assert features2 == features and labels2 == labels


@given(st.data())
def test_random_corruptions_raise_only_data_format_error(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("bad")
    text = HEADER + "{0 0.5,1 1,5 2}\n{2 3,3 1}\n1,0,2,1,0,-3\n"
    position = data.draw(st.integers(0, len(text) - 1))
    kind = data.draw(st.sampled_from(["delete", "insert", "truncate"]))
    junk = data.draw(st.text(st.sampled_from("{}, 0123456789.-e?x'\"%@\n"), min_size=1,
                             max_size=4))
    if kind == "delete":
        text = text[:position] + text[position + len(junk):]
    elif kind == "insert":
        text = text[:position] + junk + text[position:]
    else:
        text = text[:position]
    (folder / "c.arff").write_text(text)
    (folder / "toy.xml").write_text(XML)
    try:
        X, Y, _ = read_arff(folder / "c.arff", read_mulan_xml(folder / "toy.xml"))
    except DataFormatError as error:
        assert "c.arff" in str(error)          # the message names the file
    else:                                      # a corruption that left a valid file
        assert X.shape[0] == Y.shape[0]


def test_real_delicious_matches_table1(data_dir):
    train = require_file(data_dir, "mulan/delicious/delicious-train.arff")
    xml = require_file(data_dir, "mulan/delicious/delicious.xml")
    labels = read_mulan_xml(xml, expected_count=983)
    X, Y, features = read_arff(train, labels)
    assert X.shape == (12920, 500) and Y.shape == (12920, 983)
    assert len(features) == 500 and len(labels) == 983
    assert set(np.unique(X.data)) == {1.0}


def test_a_utf16_label_file_says_the_encoding_is_the_problem(tmp_path):
    path = tmp_path / "labels.xml"
    path.write_bytes('<?xml version="1.0" encoding="utf-16"?>\n<labels><label name="a"/>'
                     '</labels>\n'.encode("utf-16"))
    with pytest.raises(DataFormatError, match="labels.xml: the file is encoded as UTF-16"):
        read_mulan_xml(path)
