"""svmlight line ends (:mod:`mlnn.datasets.svmlight`): LF and CR LF read the same documents; a
lone CR (classic Mac OS) is refused naming the line ends and the line, through the API and the
command line, never read as one run-together document."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlnn.base.errors import DataFormatError
from mlnn.cli import main
from mlnn.datasets.svmlight import read_svmlight
from mlnn.model.estimator import MultiLabelNN

LINES = ["3 5 2", "0 1:1 4:0.5", " 2:0.25", "0,1 0:1 3:2 # a comment"]


def _read(tmp_path, text, name="docs.svm", **options):
    path = tmp_path / name
    path.write_bytes(text.encode())
    return read_svmlight(path, **options), path


def test_lf_and_cr_lf_line_ends_give_the_same_documents(tmp_path):
    (X, Y), _ = _read(tmp_path, "\n".join(LINES) + "\n")
    (X_crlf, Y_crlf), _ = _read(tmp_path, "\r\n".join(LINES) + "\r\n", "crlf.svm")
    assert X.shape == (3, 5) and Y.shape == (3, 2)
    assert (X != X_crlf).nnz == 0 and (Y != Y_crlf).nnz == 0


@pytest.mark.parametrize("lines, line", [
    (LINES, 1),                                        # a file with a header line
    (LINES[1:], 1),                                    # without one: the case
    (LINES[:2] + ["\r".join(LINES[2:])], 3),           # LF first, then a lone CR at line 3
])
def test_a_lone_carriage_return_is_refused_naming_the_line_ends_and_the_line(tmp_path, lines,
                                                                             line):
    text = "\n".join(lines) + "\n" if line == 3 else "\r".join(lines) + "\r"
    with pytest.raises(DataFormatError) as error:
        _read(tmp_path, text, zero_based=True)
    assert str(error.value).startswith(f"{tmp_path / 'docs.svm'}:{line}: a line ends in a lone carriage return "
                                       "(CR")
    assert "LF or CR LF" in str(error.value) and "index:value" not in str(error.value)


def test_predict_refuses_a_cr_only_input_in_one_line(tmp_path, monkeypatch, capsys):
    rng = np.random.default_rng(0)
    X = sp.random(40, 5, density=0.5, random_state=0, format="csr")
    Y = (rng.random((40, 2)) < 0.5).astype(np.int8)
    Y[0] = [1, 0]
    MultiLabelNN(hidden_units=4, max_epochs=1, random_state=0).fit(X, Y).save(tmp_path / "m.npz")
    (tmp_path / "mac.svm").write_bytes("\r".join(LINES).encode() + b"\r")
    monkeypatch.chdir(tmp_path)
    assert main(["predict", "--model", "m.npz", "--input", "mac.svm"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("mlnn: error: ") and err.count("\n") == 1
    assert "mac.svm:1: a line ends in a lone carriage return (CR" in err


def test_blank_and_comment_lines_with_cr_lf_ends_are_no_documents(tmp_path):
    """A blank CR LF line is an empty line, as a blank LF line is, not an empty document."""
    (X, Y), _ = _read(tmp_path, "\n".join(LINES) + "\n")
    spaced = [LINES[0], "", LINES[1], "", "# a comment line", LINES[2], "", LINES[3], ""]
    for end in ("\n", "\r\n"):
        (X_blank, Y_blank), _ = _read(tmp_path, end.join(spaced) + end, "blank.svm")
        assert X_blank.shape == (3, 5) and Y_blank.shape == (3, 2), end    # the header's 3
        assert (X != X_blank).nnz == 0 and (Y != Y_blank).nnz == 0
    no_header = [line for line in spaced if line != LINES[0]]
    (X_crlf, Y_crlf), _ = _read(tmp_path, "\r\n".join(no_header) + "\r\n", "plain.svm",
                                zero_based=True, n_features=5)
    assert X_crlf.shape == (3, 5) and (X != X_crlf).nnz == 0 and (Y != Y_crlf).nnz == 0


def test_a_tab_between_the_labels_and_the_features_reads_as_a_space(tmp_path):
    (X, Y), _ = _read(tmp_path, "\n".join(LINES) + "\n")
    tabbed = [LINES[0], "0\t1:1\t4:0.5", "\t2:0.25", "0,1\t0:1 3:2\t# a comment"]
    for end in ("\n", "\r\n"):
        (X_tab, Y_tab), _ = _read(tmp_path, end.join(tabbed) + end, "tabbed.svm")
        assert X_tab.shape == (3, 5) and (X != X_tab).nnz == 0 and (Y != Y_tab).nnz == 0
