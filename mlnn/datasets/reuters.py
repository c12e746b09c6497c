"""Reuters-21578, Distribution 1.0 (D. D. Lewis), read from its SGML files, and the ModApte split.

The 22 files ``reut2-*.sgm`` are read from ``reuters21578.tar.gz`` (as the UCI KDD archive has
it) or from a directory. They are not valid XML: the bytes are decoded as Latin-1 and entities
replaced; a ``<REUTERS>`` element without its end or without ``NEWID``/``LEWISSPLIT`` is a
:class:`~mlnn.base.errors.DataFormatError` naming file and line. A document's text is TITLE +
BODY, or the raw TEXT of a ``TYPE="UNPROC"`` document, which has neither.

ModApte (the distribution's README.txt, Sec. VIII.B; Yang & Liu 1999): the documents with
``TOPICS="YES"``, ``LEWISSPLIT`` TRAIN or TEST, and one of the 90 categories that have a training
and a test document: 7,770 training and 3,019 test documents, one training document more than
ApteMod's list (README.md, "Where the paper is silent").
"""

import re
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from mlnn.base.errors import DataFormatError
from mlnn.datasets.text import check_text_bytes

_OPEN = re.compile(r"<REUTERS\b([^>]*)>")
_CLOSE = "</REUTERS>"
_ATTR = re.compile(r'(\w+)="([^"]*)"')
_ENTITY = re.compile(r"&#(\d+);")
_FILE_NAME = re.compile(r"^reut2-\d{3}\.sgm$")


@dataclass
class ReutersDocument:
    """One ``<REUTERS>`` element: its attributes, topic categories and text."""
    newid: int
    lewissplit: str
    has_topics: bool
    topics: list
    text: str


def _unescape(text):
    text = _ENTITY.sub(" ", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"') \
        .replace("&amp;", "&")


def _elements(tag, content):
    """The texts of the elements ``<tag ...>...</tag>`` in ``content``."""
    return re.findall(rf"<{tag}\b[^>]*>(.*?)</{tag}>", content, re.S)


def _element(tag, content):
    """The text of the first element ``tag`` in ``content``; "" if there is none."""
    return (_elements(tag, content) or [""])[0]


def parse_sgml(text, source="<string>"):
    """Parse the text of one ``reut2-*.sgm`` file into a list of :class:`ReutersDocument`."""
    documents, line, counted_to = [], 1, 0
    for match in _OPEN.finditer(text):
        line += text.count("\n", counted_to, match.start())
        counted_to = match.start()
        end = text.find(_CLOSE, match.end())
        following = _OPEN.search(text, match.end())
        if end < 0 or (following is not None and following.start() < end):
            raise DataFormatError(f"{source}:{line}: <REUTERS> element without </REUTERS> "
                                  "(truncated file?)")
        attributes = dict(_ATTR.findall(match.group(1)))
        if "NEWID" not in attributes or "LEWISSPLIT" not in attributes:
            raise DataFormatError(f"{source}:{line}: <REUTERS> lacks NEWID or LEWISSPLIT")
        try:
            newid = int(attributes["NEWID"])
        except ValueError:
            raise DataFormatError(f"{source}:{line}: NEWID {attributes['NEWID']!r} is not an "
                                  "integer") from None
        content = text[match.end():end]
        if ("<TOPICS>" in content) != ("</TOPICS>" in content):
            raise DataFormatError(f"{source}:{line}: unclosed <TOPICS> in document {newid}")
        topics = [_unescape(t).strip() for t in _elements("D", _element("TOPICS", content))]
        title, body = (_unescape(_element(tag, content)).strip() for tag in ("TITLE", "BODY"))
        full = title + "\n" + body if title or body else \
            _unescape(re.sub(r"<[^>]*>", " ", _element("TEXT", content))).strip()
        documents.append(ReutersDocument(
            newid=newid, lewissplit=attributes["LEWISSPLIT"],
            has_topics=attributes.get("TOPICS") == "YES", topics=topics, text=full))
    return documents


def _sgml_files(source):
    """Yield (name, bytes) of the ``reut2-*.sgm`` files in a tar(.gz) archive or directory."""
    source = Path(source)
    if source.is_dir():
        paths = sorted(p for p in source.iterdir() if _FILE_NAME.match(p.name))
        if not paths:
            raise DataFormatError(f"{source}: no reut2-*.sgm files in this directory")
        for path in paths:
            yield str(path), path.read_bytes()
        return
    found = 0
    try:
        with tarfile.open(source, "r:*") as archive:
            for member in archive:
                name = member.name.rsplit("/", 1)[-1]
                if member.isfile() and _FILE_NAME.match(name):
                    found += 1
                    yield f"{source}!{member.name}", archive.extractfile(member).read()
    except (tarfile.TarError, OSError, EOFError, zlib.error) as error:
        raise DataFormatError(f"{source}: cannot read the archive ({error})") from None
    if not found:
        raise DataFormatError(f"{source}: no reut2-*.sgm files in this archive")


def read_reuters(source):
    """All documents of the distribution (21,578 for the real one), in file order."""
    documents = []
    for name, raw in _sgml_files(source):
        check_text_bytes(raw, name)                     # UTF-16 or binary: say so
        documents.extend(parse_sgml(raw.decode("latin-1"), name))
    return documents


def modapte_split(documents):
    """``(train, test, categories)``: the ModApte documents (each with a kept category) and the
    sorted categories that have a training and a test document (90 for the real collection)."""
    train, test = ([d for d in documents if d.has_topics and d.lewissplit == split]
                   for split in ("TRAIN", "TEST"))
    keep = {t for d in train for t in d.topics} & {t for d in test for t in d.topics}
    train, test = ([d for d in split if keep.intersection(d.topics)] for split in (train, test))
    return train, test, sorted(keep)


def label_matrix(documents, categories):
    """0/1 CSR (n x L, int8) with Y[i, j] = 1 iff document i has category j."""
    Y = np.array([[c in d.topics for c in categories] for d in documents], dtype=np.int8)
    return sp.csr_matrix(Y.reshape(len(documents), len(categories)))
