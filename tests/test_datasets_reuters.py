"""Reuters-21578 SGML parsing, the ModApte rules, and the real collection's counts."""

import io
import tarfile

import numpy as np
import pytest

from mlnn.base.errors import DataFormatError
from mlnn.datasets.reuters import label_matrix, modapte_split, parse_sgml, read_reuters
from tests.conftest import require_file


def _doc(newid, split, topics, title="", body="", topics_attr="YES", extra=""):
    d = "".join(f"<D>{t}</D>" for t in topics)
    return (f'<REUTERS TOPICS="{topics_attr}" LEWISSPLIT="{split}" CGISPLIT="TRAINING-SET" '
            f'OLDID="1" NEWID="{newid}">\n<DATE>26-FEB-1987</DATE>\n<TOPICS>{d}</TOPICS>\n'
            f'<TEXT>&#2;\n<TITLE>{title}</TITLE>\n<BODY>{body}</BODY>{extra}</TEXT>\n'
            '</REUTERS>\n')


SGML = ('<!DOCTYPE lewis SYSTEM "lewis.dtd">\n'
        + _doc(1, "TRAIN", ["cocoa"], "COCOA &lt;UP&gt;", "Cocoa rose.&#3;")
        + _doc(2, "TRAIN", ["grain", "wheat"], "GRAIN", "Wheat M\xfcnchen &amp; co")
        + _doc(3, "TEST", ["grain"], "T3", "grain test")
        + _doc(4, "TEST", ["cocoa", "gold"], "T4", "cocoa test")
        + _doc(5, "TRAIN", ["gold"], "ONLY GOLD", "train-only category")  # no kept category
        + _doc(6, "TRAIN", ["cocoa"], "BYPASS", "", topics_attr="BYPASS")
        + _doc(7, "NOT-USED", ["cocoa"], "unused", "")
        + '<REUTERS TOPICS="YES" LEWISSPLIT="TEST" CGISPLIT="X" OLDID="2" NEWID="8">\n'
          '<TOPICS><D>wheat</D></TOPICS><TEXT TYPE="UNPROC">&#2;raw wheat text&#3;</TEXT>\n'
          '</REUTERS>\n')


def test_parse_entities_and_text():
    documents = parse_sgml(SGML, "x.sgm")
    assert [d.newid for d in documents] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert documents[0].text == "COCOA <UP>\nCocoa rose."             # TITLE, then BODY
    assert documents[1].text.endswith("M\xfcnchen & co")
    assert documents[1].topics == ["grain", "wheat"]
    assert documents[7].text == "raw wheat text"  # UNPROC: no TITLE/BODY
    assert not documents[5].has_topics


def test_modapte_rules():
    train, test, categories = modapte_split(parse_sgml(SGML, "x.sgm"))
    # gold has one training document (5) and one test document (4), so it is kept; doc 6
    # (TOPICS="BYPASS") and doc 7 (LEWISSPLIT="NOT-USED") are outside ModApte.
    assert categories == ["cocoa", "gold", "grain", "wheat"]
    assert [d.newid for d in train] == [1, 2, 5]
    assert [d.newid for d in test] == [3, 4, 8]
    Y = label_matrix(train, categories).toarray()
    np.testing.assert_array_equal(Y, [[1, 0, 0, 0], [0, 0, 1, 1], [0, 1, 0, 0]])


def test_category_missing_from_test_drops_documents():
    sgml = (_doc(1, "TRAIN", ["acq"]) + _doc(2, "TRAIN", ["rare"]) + _doc(3, "TEST", ["acq"]))
    train, test, categories = modapte_split(parse_sgml(sgml))
    assert categories == ["acq"] and [d.newid for d in train] == [1]


def test_truncated_file_names_file_and_line():
    text = SGML[:SGML.index("</REUTERS>", SGML.index('NEWID="3"'))]
    with pytest.raises(DataFormatError, match=r"x\.sgm:\d+: <REUTERS> element without"):
        parse_sgml(text, "x.sgm")
    line = text[:text.index('NEWID="3"')].count("\n") + 1
    with pytest.raises(DataFormatError, match=f"x.sgm:{line}:"):
        parse_sgml(text, "x.sgm")
    with pytest.raises(DataFormatError, match="lacks NEWID"):
        parse_sgml('<REUTERS TOPICS="YES">x</REUTERS>', "y.sgm")


def test_reads_tar_and_directory_with_non_utf8_bytes(tmp_path):
    raw = SGML.encode("latin-1") + b"\xff\xfe"
    folder = tmp_path / "reuters"
    folder.mkdir()
    (folder / "reut2-000.sgm").write_bytes(raw)
    (folder / "README.txt").write_text("not sgml")
    archive = tmp_path / "r.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo("reut2-000.sgm")
        info.size = len(raw)
        tar.addfile(info, io.BytesIO(raw))
    assert [d.newid for d in read_reuters(folder)] == [d.newid for d in read_reuters(archive)]
    with pytest.raises(DataFormatError, match="no reut2"):
        read_reuters(tmp_path)
    (tmp_path / "broken.tar.gz").write_bytes(b"not a tar")
    with pytest.raises(DataFormatError, match="cannot read"):
        read_reuters(tmp_path / "broken.tar.gz")


def test_real_modapte_counts(data_dir):
    archive = require_file(data_dir, "reuters21578.tar.gz")
    documents = read_reuters(archive)
    assert len(documents) == 21578
    train, test, categories = modapte_split(documents)
    assert len(categories) == 90
    assert len(test) == 3019
    assert len(train) in (7769, 7770)
    counts = np.asarray(label_matrix(train, categories).sum(axis=0)).ravel()
    assert counts[categories.index("earn")] == 2877  # Yang & Liu (1999), Table 1
    assert counts[categories.index("acq")] == 1650


def test_a_utf16_sgml_file_says_the_encoding_is_the_problem(tmp_path):
    (tmp_path / "reut2-000.sgm").write_bytes(SGML.encode("utf-16"))
    with pytest.raises(DataFormatError, match="reut2-000.sgm: the file is encoded as UTF-16"):
        read_reuters(tmp_path)


def test_an_archive_cut_off_mid_stream_is_a_data_format_error(tmp_path):
    archive = tmp_path / "r.tar.gz"
    raw = (SGML * 200).encode("latin-1")
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo("reut2-000.sgm")
        info.size = len(raw)
        tar.addfile(info, io.BytesIO(raw))
    data = archive.read_bytes()
    for cut in (len(data) // 3, len(data) // 2):
        (tmp_path / "cut.tar.gz").write_bytes(data[:cut])
        with pytest.raises(DataFormatError, match="cut.tar.gz: cannot read the archive"):
            read_reuters(tmp_path / "cut.tar.gz")
