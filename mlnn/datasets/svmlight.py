"""The svmlight / LIBSVM multi-label text format, with the Extreme-Classification header.

One document per line::

    l1,l2,... i:v i:v ...

``l1,l2`` are integer label ids (possibly none: the line then starts with a space), ``i:v`` the
non-zero features. Files of the Extreme Classification Repository start with a header line
``n_documents n_features n_labels`` and use 0-based feature ids; classic LIBSVM files use
1-based ids. The reader never guesses which: the base comes from the caller, from the
header line, or from ids that leave no doubt (an id 0; an id equal to the known number of
features); otherwise it refuses the file, since reading 0-based ids as 1-based shifts every
feature. Text after ``#`` is a comment. A line of blanks is a document without labels or
features; empty lines are skipped.

The reader is vectorised like the ARFF reader: rows are split with string methods, all numbers
are converted by NumPy at once, and the rows are walked one by one only to name the line of a
problem in the :class:`~mlnn.base.errors.DataFormatError`.
"""

import gzip
import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from mlnn.base.errors import DataFormatError
from mlnn.base.fileio import atomic_write
from mlnn.datasets.arff import read_text

#: The largest finite value of each floating-point type X can be read into.
_LARGEST = {np.dtype(np.float32): float(np.finfo(np.float32).max),
            np.dtype(np.float64): float(np.finfo(np.float64).max)}


def _split_line(line):
    """Split a data line into (label text, feature text); None for an empty line.

    A line of blanks only is a document without labels and features (the writer emits one
    space for it); an empty line or a comment line is skipped.
    """
    line = line.split("#", 1)[0].rstrip("\r")
    if not line:
        return None
    if not line.strip():
        return "", ""
    if line[0].isspace():
        return "", line.strip()
    head, _, rest = line.partition(" ")
    if ":" in head:
        return "", line.strip()
    return head, rest.strip()


def _diagnose(path, labels, features, numbers, n_features, n_labels, offset,
              dtype=np.float64):
    """Walk the rows one by one and raise the first problem found."""
    for row, (label_text, feature_text) in enumerate(zip(labels, features)):
        where = f"{path}:{numbers[row]}"
        for label in (label_text.split(",") if label_text else []):
            try:
                value = int(label)
            except ValueError:
                raise DataFormatError(f"{where}: label {label!r} is not an integer") from None
            if value < 0 or (n_labels is not None and value >= n_labels):
                raise DataFormatError(f"{where}: label {value} outside 0..{n_labels - 1}"
                                      if n_labels is not None else
                                      f"{where}: negative label {value}")
        seen = set()
        for token in feature_text.split():
            index, colon, value = token.partition(":")
            if not colon:
                raise DataFormatError(f"{where}: feature {token!r} is not 'index:value'")
            try:
                column = int(index) - offset
            except ValueError:
                raise DataFormatError(f"{where}: feature index {index!r} is not an integer") \
                    from None
            if column < 0 or (n_features is not None and column >= n_features):
                raise DataFormatError(f"{where}: feature index {index} out of range")
            if column in seen:
                raise DataFormatError(f"{where}: duplicate feature index {index}")
            seen.add(column)
            try:
                number = float(value)
            except ValueError:
                raise DataFormatError(f"{where}: value {value!r} is not numeric") from None
            if not np.isfinite(number):
                raise DataFormatError(f"{where}: value {value!r} is not finite")
            if abs(number) > _LARGEST[np.dtype(dtype)]:
                raise DataFormatError(f"{where}: value {value} of feature {index} overflows "
                                      f"{np.dtype(dtype).name} (largest "
                                      f"{_LARGEST[np.dtype(dtype)]:.4g})")
    raise DataFormatError(f"{path}: malformed svmlight data")  # pragma: no cover


def _to_csr(path, rows, cols, values, n_rows, n_cols, diagnose):
    order = np.lexsort((cols, rows))
    rows, cols = rows[order], cols[order]
    if np.any((rows[1:] == rows[:-1]) & (cols[1:] == cols[:-1])):
        diagnose()
    counts = np.bincount(rows, minlength=n_rows)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    return sp.csr_matrix((values[order], cols, indptr), shape=(n_rows, n_cols))


def read_svmlight(path, n_features=None, n_labels=None, zero_based="auto", dtype=np.float64):
    """Read a multi-label svmlight file (optionally ``.gz``, optionally with an XC header).

    Parameters
    ----------
    path : str or Path
    n_features, n_labels : int, optional
        The widths of X and Y. Default: from the header line, else the largest id + 1.
    zero_based : bool or "auto"
        Whether feature ids start at 0. "auto": True if the file has a header line (the
        Extreme-Classification convention); else decided by the ids only when they leave no doubt
        (an id 0 means 0-based; an id equal to ``n_features`` means 1-based); otherwise a
        DataFormatError asks for the base.
    dtype : float32 or float64
        The precision the values are meant for: a value that overflows it is an error naming
        its line (X itself is float64).

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (n, D), float64, sorted indices
    Y : scipy.sparse.csr_matrix, shape (n, L), int8, 0/1
    """
    return parse_svmlight(read_text(path), Path(path), n_features, n_labels, zero_based, dtype)


def parse_svmlight(text, source="<string>", n_features=None, n_labels=None, zero_based="auto",
                   dtype=np.float64):
    """:func:`read_svmlight` on the ``text`` of a file (``source`` names it in messages)."""
    _check_line_ends(text, source)
    lines = text.split("\n")
    header, first = _read_header(lines)
    if header is not None:
        n_features = header[1] if n_features is None else n_features
        n_labels = header[2] if n_labels is None else n_labels
        if n_features != header[1] or n_labels != header[2]:
            raise DataFormatError(f"{source}:1: header says {header[1]} features and "
                                  f"{header[2]} labels, expected {n_features} and {n_labels}")
    labels, features, numbers = _data_lines(lines, first)
    if header is not None and header[0] != len(numbers):
        raise DataFormatError(f"{source}:1: header announces {header[0]} documents, "
                              f"the file has {len(numbers)} (truncated?)")
    if zero_based == "auto":
        zero_based = True if header is not None else None
    return _parse_documents(source, labels, features, numbers, (n_features, n_labels),
                            zero_based, np.dtype(dtype))


def _check_line_ends(text, source):
    """Raise unless every line ends in LF or CR LF: a lone CR (classic Mac OS line ends) would
    run the lines together into one document."""
    lone = re.search("\r(?!\n)", text)
    if lone:
        line = text.count("\n", 0, lone.start()) + 1
        raise DataFormatError(f"{source}:{line}: a line ends in a lone carriage return (CR, the "
                              "line end of classic Mac OS); save the file with LF or CR LF line "
                              "ends")


def _read_header(lines):
    """(n_documents, n_features, n_labels) of an Extreme-Classification header line, or None,
    and the index of the first line after it (and after leading empty lines)."""
    first = 0
    while first < len(lines) and _split_line(lines[first]) is None:
        first += 1
    if first < len(lines):
        parts = lines[first].split("#", 1)[0].split()
        if len(parts) == 3 and all(p.isdigit() for p in parts):
            return tuple(int(p) for p in parts), first + 1
    return None, first


def _data_lines(lines, first):
    """(label texts, feature texts, 1-based line numbers) of the documents from ``first`` on."""
    labels, features, numbers = [], [], []
    for number in range(first, len(lines)):
        split = _split_line(lines[number])
        if split is not None:
            labels.append(split[0])
            features.append(split[1])
            numbers.append(number + 1)
    return labels, features, numbers


def _index_base(source, ids, n_features):
    """The feature-id offset (0 or 1) of a file without a header, when the ids leave no doubt."""
    if ids.size and ids.min() == 0:
        return 0
    if ids.size and n_features is not None and ids.max() == n_features:
        return 1
    if ids.size == 0:
        return 0
    raise DataFormatError(
        f"{source}: no header line, and the feature ids ({ids.min()}..{ids.max()}) could start "
        "at 0 or at 1; say which: --zero-based or --one-based (zero_based=True or False in "
        "Python)")


def _parse_documents(source, labels, features, numbers, widths, zero_based, dtype):
    """X and Y from the split lines, all numbers converted at once; any problem is located by
    :func:`_diagnose`. ``zero_based`` None: decided by :func:`_index_base`."""
    n, (n_features, n_labels) = len(numbers), widths
    offset = [0 if zero_based in (True, None) else 1]

    def diagnose():
        _diagnose(source, labels, features, numbers, n_features, n_labels, offset[0], dtype)

    feature_counts = np.array([text.count(":") for text in features], dtype=np.int64)
    tokens = " ".join(features).replace(":", " ").split()
    label_counts = np.array([text.count(",") + 1 if text else 0 for text in labels],
                            dtype=np.int64)
    label_tokens = ",".join(text for text in labels if text).split(",") if any(labels) else []
    if len(tokens) != 2 * feature_counts.sum() or len(label_tokens) != label_counts.sum():
        diagnose()
    try:
        ids = np.array(tokens[0::2], dtype=np.int64)
        values = np.array(tokens[1::2], dtype=np.float64)
        label_ids = np.array(label_tokens, dtype=np.int64)
    except (ValueError, OverflowError):
        diagnose()
    if zero_based is None:
        offset[0] = _index_base(source, ids, n_features)
    columns = ids - offset[0]
    if n_features is None:
        n_features = int(columns.max()) + 1 if columns.size else 0
    if n_labels is None:
        n_labels = int(label_ids.max()) + 1 if label_ids.size else 0
    if (columns.size and (columns.min() < 0 or columns.max() >= n_features)) \
            or (label_ids.size and (label_ids.min() < 0 or label_ids.max() >= n_labels)) \
            or not np.all(np.isfinite(values)) or np.any(np.abs(values) > _LARGEST[dtype]):
        diagnose()
    X = _to_csr(source, np.repeat(np.arange(n), feature_counts), columns, values, n,
                n_features, diagnose)
    X.eliminate_zeros()
    Y = _to_csr(source, np.repeat(np.arange(n), label_counts), label_ids,
                np.ones(label_ids.size, dtype=np.int8), n, n_labels, diagnose)
    return X, Y


def _format_value(value):
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def write_svmlight(path, X, Y, header=True, zero_based=True):
    """Write ``X`` (n x D) and 0/1 ``Y`` (n x L) as a multi-label svmlight file.

    Parameters
    ----------
    header : bool
        Write the Extreme-Classification header line ``n D L`` first.
    zero_based : bool
        Feature ids start at 0 (XC convention) or 1 (LIBSVM). Label ids are always 0-based.
    Values are written with ``repr`` precision, so reading the file back gives the same floats.
    ``.gz`` paths are compressed. The file is written atomically (:mod:`mlnn.base.fileio`).
    """
    data = format_svmlight(X, Y, header, zero_based, source=path)
    if Path(path).name.endswith(".gz"):
        data = gzip.compress(data)
    with atomic_write(path, "wb") as handle:
        handle.write(data)


def format_svmlight(X, Y, header=True, zero_based=True, source="<svmlight>"):
    """The bytes (ASCII) of the svmlight file of :func:`write_svmlight`."""
    X = sp.csr_matrix(X, dtype=np.float64)
    Y = sp.csr_matrix(Y)
    if X.shape[0] != Y.shape[0]:
        raise DataFormatError(f"{source}: X has {X.shape[0]} rows but Y has {Y.shape[0]}")
    X.sort_indices()
    Y.sort_indices()
    offset = 0 if zero_based else 1
    out = [f"{X.shape[0]} {X.shape[1]} {Y.shape[1]}"] if header else []
    for i in range(X.shape[0]):
        label_ids = Y.indices[Y.indptr[i]:Y.indptr[i + 1]][Y.data[Y.indptr[i]:Y.indptr[i + 1]] != 0]
        start, end = X.indptr[i], X.indptr[i + 1]
        feature_text = " ".join(f"{c + offset}:{_format_value(v)}"
                                for c, v in zip(X.indices[start:end], X.data[start:end]))
        out.append(",".join(str(j) for j in label_ids) + " " + feature_text)
    return ("\n".join(out) + "\n").encode("ascii")
