"""The svmlight / LIBSVM multi-label format, with the Extreme-Classification header.

One document per line, ``l1,l2,... i:v i:v ...``: label ids (none: the line starts with a blank),
then the non-zero features; ``#`` starts a comment. Extreme Classification files start with a
header ``n_documents n_features n_labels`` and number features from 0, LIBSVM files from 1. The
base is never guessed: it comes from the caller, the header, or ids that leave no doubt;
otherwise the file is refused. Numbers are converted at once, as in :mod:`mlnn.datasets.arff`.
"""

import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from mlnn.base.errors import DataFormatError
from mlnn.datasets.arff import check_entry, csr_rows, read_text


def read_svmlight(path, n_features=None, n_labels=None, zero_based="auto", dtype=np.float64):
    """``(X, Y)`` of a multi-label svmlight file (``.gz`` decompressed): X (n × D CSR float64,
    sorted indices), Y (n × L CSR int8, 0/1). D and L are ``n_features``/``n_labels``, else the
    header's, else the largest id + 1. ``zero_based`` "auto": True with a header, else decided by
    ids that leave no doubt. A value that overflows ``dtype`` is an error naming its line."""
    return parse_svmlight(read_text(path), Path(path), n_features, n_labels, zero_based, dtype)


def parse_svmlight(text, source="<string>", n_features=None, n_labels=None, zero_based="auto",
                   dtype=np.float64):
    """:func:`read_svmlight` on the ``text`` of a file named ``source``."""
    lone = re.search("\r(?!\n)", text)         # classic Mac OS line ends: one run-together line
    if lone:
        line = text.count("\n", 0, lone.start()) + 1
        raise DataFormatError(f"{source}:{line}: a line ends in a lone carriage return (CR, the "
                              "line end of classic Mac OS); save the file with LF or CR LF line "
                              "ends")
    lines = [_split_line(line) for line in text.split("\n")]
    documents = [(number + 1, *split) for number, split in enumerate(lines) if split is not None]
    first = " ".join(documents[0][1:]).split() if documents else []
    header = None
    if len(first) == 3 and all(part.isdigit() for part in first):   # the header line
        header = tuple(int(part) for part in first)      # n_documents n_features n_labels
        n_features = header[1] if n_features is None else n_features
        n_labels = header[2] if n_labels is None else n_labels
        if (n_features, n_labels) != header[1:]:
            raise DataFormatError(f"{source}:1: header says {header[1]} features and "
                                  f"{header[2]} labels, expected {n_features} and {n_labels}")
        documents = documents[1:]
        if header[0] != len(documents):
            raise DataFormatError(f"{source}:1: header announces {header[0]} documents, "
                                  f"the file has {len(documents)} (truncated?)")
    if zero_based == "auto":
        zero_based = True if header is not None else None
    return _parse_documents(source, documents, n_features, n_labels, zero_based, np.dtype(dtype))


def _split_line(line):
    """(label text, feature text) of a data line; None for an empty or comment line (a line of
    blanks, spaces or tabs, is a document without labels and features)."""
    line = line.split("#", 1)[0].rstrip("\r")
    if not line:
        return None
    head, *rest = line.split(maxsplit=1) or [""]
    if line[0].isspace() or ":" in head:                    # no labels
        return "", line.strip()
    return head, "".join(rest).strip()


def _parse_documents(source, documents, n_features, n_labels, zero_based, dtype):
    """X and Y of the (line number, label text, feature text) ``documents``, all numbers
    converted at once; any problem is located by :func:`_raise_first_error`."""
    labels, features = [d[1] for d in documents], [d[2] for d in documents]
    feature_counts = [text.count(":") for text in features]
    tokens = " ".join(features).replace(":", " ").split()
    label_counts = [text.count(",") + 1 if text else 0 for text in labels]
    label_tokens = ",".join(text for text in labels if text).split(",") if any(labels) else []
    good = len(tokens) == 2 * sum(feature_counts) and len(label_tokens) == sum(label_counts)
    try:
        ids = np.array(tokens[0::2], dtype=np.int64)
        values = np.array(tokens[1::2], dtype=np.float64)
        label_ids = np.array(label_tokens, dtype=np.int64)
    except (ValueError, OverflowError):
        good = False
    offset = 0 if zero_based in (True, None) else 1
    if good and zero_based is None:
        offset = _index_base(source, ids, n_features)
    if good:
        columns = ids - offset
        if n_features is None:
            n_features = int(columns.max()) + 1 if columns.size else 0
        if n_labels is None:
            n_labels = int(label_ids.max()) + 1 if label_ids.size else 0
        X = csr_rows(feature_counts, columns, values, n_features)
        Y = csr_rows(label_counts, label_ids, np.ones(label_ids.size, dtype=np.int8), n_labels)
        good = X is not None and Y is not None and np.all(np.abs(values) <= np.finfo(dtype).max)
    if not good:
        _raise_first_error(source, documents, n_features, n_labels, offset, dtype)
    X.eliminate_zeros()
    return X, Y


def _index_base(source, ids, n_features):
    """The feature-id offset (0 or 1) of a file without a header, when the ids leave no doubt."""
    if ids.size == 0 or ids.min() == 0:
        return 0
    if n_features is not None and ids.max() == n_features:
        return 1
    raise DataFormatError(
        f"{source}: no header line, and the feature ids ({ids.min()}..{ids.max()}) could start "
        "at 0 or at 1; say which: --zero-based or --one-based (zero_based=True or False in "
        "Python)")


def _raise_first_error(source, documents, n_features, n_labels, offset, dtype):
    """Raise the DataFormatError of the first bad label or feature, walking the lines."""
    for number, label_text, feature_text in documents:
        where, seen = f"{source}:{number}", set()
        for label in (label_text.split(",") if label_text else []):
            check_entry(where, "label", label, "1", n_labels, seen, dtype)
        seen = set()
        for token in feature_text.split():
            index, colon, value = token.partition(":")
            if not colon:
                raise DataFormatError(f"{where}: feature {token!r} is not 'index:value'")
            check_entry(where, "feature", index, value, n_features, seen, dtype, offset)
    raise DataFormatError(f"{source}: malformed svmlight data")  # pragma: no cover


def format_svmlight(X, Y, header=True, zero_based=True):
    """The bytes (ASCII) of ``X`` (n × D) and 0/1 ``Y`` (n × L) as a multi-label svmlight file:
    with the Extreme-Classification header line ``n D L`` first, feature ids from 0 or 1
    (label ids always from 0), values with ``repr`` precision (read back as the same floats)."""
    X, Y = sp.csr_matrix(X, dtype=np.float64), sp.csr_matrix(Y)
    X.sort_indices()
    Y.sort_indices()
    offset = 0 if zero_based else 1
    out = [f"{X.shape[0]} {X.shape[1]} {Y.shape[1]}"] if header else []
    for i in range(X.shape[0]):
        xs, ys = slice(X.indptr[i], X.indptr[i + 1]), slice(Y.indptr[i], Y.indptr[i + 1])
        labels = ",".join(str(j) for j in Y.indices[ys][Y.data[ys] != 0])
        out.append(labels + " " + " ".join(f"{c + offset}:{_number(v)}"
                                           for c, v in zip(X.indices[xs], X.data[xs])))
    return ("\n".join(out) + "\n").encode("ascii")


def _number(value):
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
