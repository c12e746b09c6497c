"""MULAN multi-label ARFF files (sparse and dense) with the XML label file.

An ARFF file has a header of ``@relation`` / ``@attribute NAME TYPE`` lines and a ``@data``
section. Data rows are either dense (``v1,v2,...,vK``: one value per attribute) or sparse
(``{i v,i v,...}``: 0-based attribute indices, omitted attributes are 0). MULAN stores the
labels as ordinary ``{0,1}`` attributes and names them in a separate XML file
(``<labels><label name="..."/>...</labels>``); they need not be the last attributes.

Parsing is vectorised: every row's text is checked and split with string methods, all numbers
of the data section are converted by NumPy in one call, and the sparse matrix is assembled
from the flat arrays. Only when that fast path finds a problem does the reader walk the rows
one by one to name the offending line in the :class:`~mlnn.base.errors.DataFormatError`.

Supported attribute types: ``numeric``/``real``/``integer`` and nominal attributes whose
values are numbers (``{0,1}``). Missing values (``?``), strings and dates are rejected with an
error, because none of the multi-label benchmarks use them.
"""

import gzip
import re
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from mlnn.base.errors import DataFormatError
from mlnn.base.fileio import atomic_write
from mlnn.datasets.text import decode

_NUMERIC_TYPES = {"numeric", "real", "integer"}


def read_text(path):
    """Return the text of ``path`` (``.gz`` is decompressed), decoded by
    :func:`mlnn.datasets.text.decode` (UTF-8, else Latin-1; UTF-16/32 and binary files refused).

    Raises DataFormatError if the file is missing, unreadable or not valid gzip.
    """
    path = Path(path)
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rb") as handle:
                raw = handle.read()
        else:
            raw = path.read_bytes()
    except FileNotFoundError:
        raise DataFormatError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise DataFormatError(f"{path}: is a directory, not a file") from None
    except PermissionError:
        raise DataFormatError(f"{path}: cannot read the file (permission denied)") from None
    except (OSError, EOFError, zlib.error) as error:
        raise DataFormatError(f"{path}: cannot read ({error})") from None
    return decode(raw, path)


def read_mulan_xml(path, expected_count=None):
    """Label names, in file order, from a MULAN XML label file.

    Nested (hierarchical) ``<label>`` elements are all returned, depth first.

    Parameters
    ----------
    path : str or Path
    expected_count : int, optional
        If given, the number of labels the XML must name.

    Returns
    -------
    list of str
    """
    path = Path(path)
    try:
        root = ET.fromstring(read_text(path))
    except ET.ParseError as error:
        line = error.position[0] if hasattr(error, "position") else "?"
        raise DataFormatError(f"{path}:{line}: malformed XML ({error})") from None
    names = [element.get("name") for element in root.iter()
             if element.tag.rsplit("}", 1)[-1] == "label"]
    if any(name is None for name in names):
        raise DataFormatError(f"{path}: a <label> element has no name attribute")
    if not names:
        raise DataFormatError(f"{path}: no <label> elements found")
    duplicates = sorted({name for name in names if names.count(name) > 1}) \
        if len(set(names)) != len(names) else []
    if duplicates:
        raise DataFormatError(f"{path}: duplicate label names {duplicates[:5]}")
    if expected_count is not None and len(names) != expected_count:
        raise DataFormatError(
            f"{path}: expected {expected_count} labels, the XML names {len(names)}")
    return names


def _parse_attribute(rest, where):
    """Split the text after ``@attribute`` into (name, type string)."""
    rest = rest.strip()
    if not rest:
        raise DataFormatError(f"{where}: @attribute without a name")
    if rest[0] in "'\"":
        quote = rest[0]
        i = 1
        chars = []
        while i < len(rest) and rest[i] != quote:
            if rest[i] == "\\" and i + 1 < len(rest):
                i += 1
            chars.append(rest[i])
            i += 1
        if i >= len(rest):
            raise DataFormatError(f"{where}: unterminated quoted attribute name")
        name, kind = "".join(chars), rest[i + 1:].strip()
    else:
        parts = rest.split(None, 1)
        if len(parts) < 2:
            raise DataFormatError(f"{where}: @attribute {parts[0]!r} has no type")
        name, kind = parts
    if not kind:
        raise DataFormatError(f"{where}: @attribute {name!r} has no type")
    low = kind.lower()
    if low in _NUMERIC_TYPES:
        return name, "numeric"
    if low.startswith("{") and low.endswith("}"):
        values = [v.strip().strip("'\"") for v in kind[1:-1].split(",")]
        try:
            [float(v) for v in values]
        except ValueError:
            raise DataFormatError(
                f"{where}: nominal attribute {name!r} has non-numeric values {kind}; "
                "only numeric nominal values such as {0,1} are supported") from None
        return name, "nominal"
    raise DataFormatError(f"{where}: attribute {name!r} has unsupported type {kind!r}")


def _parse_header(lines, path):
    """Return (relation, attribute names, index of the first data line)."""
    relation = None
    names = []
    for number, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith("%"):
            continue
        where = f"{path}:{number + 1}"
        keyword = stripped.split(None, 1)[0].lower()
        if keyword == "@relation":
            relation = stripped[len("@relation"):].strip().strip("'\"")
        elif keyword == "@attribute":
            names.append(_parse_attribute(stripped[len("@attribute"):], where)[0])
        elif keyword == "@data":
            if not names:
                raise DataFormatError(f"{where}: @data before any @attribute")
            return relation, names, number + 1
        else:
            raise DataFormatError(f"{where}: unexpected header line {stripped[:60]!r}")
    raise DataFormatError(f"{path}: no @data section (file truncated?)")


def _row_error(path, line_number, message):
    return DataFormatError(f"{path}:{line_number}: {message}")


def _diagnose_sparse(path, rows, numbers, n_attributes):
    """Walk the sparse rows one by one and raise the first problem found."""
    for row, line in enumerate(rows):
        inner = line.strip()[1:-1].strip()
        if not inner:
            continue
        seen = set()
        for entry in inner.split(","):
            parts = entry.split()
            if len(parts) != 2:
                raise _row_error(path, numbers[row],
                                 f"sparse entry {entry.strip()!r} is not 'index value'")
            try:
                index = int(parts[0])
            except ValueError:
                raise _row_error(path, numbers[row],
                                 f"attribute index {parts[0]!r} is not an integer") from None
            if not 0 <= index < n_attributes:
                raise _row_error(path, numbers[row], f"attribute index {index} outside "
                                 f"0..{n_attributes - 1}")
            if index in seen:
                raise _row_error(path, numbers[row], f"duplicate attribute index {index}")
            seen.add(index)
            try:
                value = float(parts[1])
            except ValueError:
                raise _row_error(path, numbers[row],
                                 f"value {parts[1]!r} is not numeric") from None
            if not np.isfinite(value):
                raise _row_error(path, numbers[row], f"value {parts[1]!r} is not finite")
            _check_range(path, numbers[row], parts[1], value)
    raise DataFormatError(f"{path}: malformed sparse data")  # pragma: no cover


#: The largest magnitude a feature value may have: float32's, the precision the networks compute
#: in by default (a larger value would overflow when the data meet a model, far from its line).
_LARGEST = float(np.finfo(np.float32).max)


def _check_range(path, line, text, value):
    if abs(value) > _LARGEST:
        raise _row_error(path, line, f"value {text} overflows float32 (largest {_LARGEST:.4g}), "
                                     "the precision the networks compute in; rescale this "
                                     "attribute")


def _parse_sparse(path, rows, numbers, n_attributes):
    """Sparse rows ``{i v,...}`` -> CSR (n_rows x n_attributes), float64."""
    for row, line in enumerate(rows):
        if not (line.startswith("{") and line.endswith("}")):
            raise _row_error(path, numbers[row], "sparse row must be enclosed in { }")
    inners = [line[1:-1].strip() for line in rows]
    counts = np.array([inner.count(",") + 1 if inner else 0 for inner in inners],
                      dtype=np.int64)
    tokens = " ".join(inners).replace(",", " ").split()
    if len(tokens) != 2 * counts.sum():
        _diagnose_sparse(path, rows, numbers, n_attributes)
    try:
        indices = np.array(tokens[0::2], dtype=np.int64)
        values = np.array(tokens[1::2], dtype=np.float64)
    except (ValueError, OverflowError):
        _diagnose_sparse(path, rows, numbers, n_attributes)
    if (indices.size and (indices.min() < 0 or indices.max() >= n_attributes)) \
            or not np.all(np.isfinite(values)) or np.any(np.abs(values) > _LARGEST):
        _diagnose_sparse(path, rows, numbers, n_attributes)
    row_of = np.repeat(np.arange(len(rows)), counts)
    order = np.lexsort((indices, row_of))
    sorted_rows, sorted_cols = row_of[order], indices[order]
    same = (sorted_rows[1:] == sorted_rows[:-1]) & (sorted_cols[1:] == sorted_cols[:-1])
    if same.any():
        _diagnose_sparse(path, rows, numbers, n_attributes)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    matrix = sp.csr_matrix((values[order], sorted_cols, indptr),
                           shape=(len(rows), n_attributes))
    matrix.eliminate_zeros()
    return matrix


def _parse_dense(path, rows, numbers, n_attributes):
    """Dense rows ``v1,...,vK`` -> CSR (n_rows x n_attributes), float64."""
    counts = np.array([line.count(",") + 1 for line in rows], dtype=np.int64)
    bad = np.flatnonzero(counts != n_attributes)
    if bad.size:
        row = bad[0]
        raise _row_error(path, numbers[row],
                         f"dense row has {counts[row]} values, expected {n_attributes}")
    try:
        values = np.array(",".join(rows).split(","), dtype=np.float64)
    except ValueError:
        values = None
    if values is None or not np.all(np.isfinite(values)) or np.any(np.abs(values) > _LARGEST):
        for row, line in enumerate(rows):
            for field in line.split(","):
                try:
                    value = float(field)
                except ValueError:
                    raise _row_error(path, numbers[row],
                                     f"value {field.strip()!r} is not numeric") from None
                if not np.isfinite(value):
                    raise _row_error(path, numbers[row], f"value {field!r} is not finite")
                _check_range(path, numbers[row], field.strip(), value)
        raise DataFormatError(f"{path}: malformed dense data")  # pragma: no cover
    return sp.csr_matrix(values.reshape(len(rows), n_attributes))


def read_arff(path, label_names=None, xml_path=None, n_labels=None):
    """Read a (MULAN) ARFF file, sparse or dense, optionally ``.gz``.

    Parameters
    ----------
    path : str or Path
    label_names : list of str, optional
        Names of the label attributes. If omitted, they are read from ``xml_path``.
    xml_path : str or Path, optional
        MULAN XML label file naming the label attributes.
    n_labels : int, optional
        If given, the number of labels the XML must name.

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (n, D), float64, sorted indices
        All attributes that are not labels, in file order.
    Y : scipy.sparse.csr_matrix, shape (n, L), int8, 0/1
        The label attributes in the order of ``label_names`` / the XML.
    feature_names : list of str, length D
    label_names : list of str, length L
    """
    path = Path(path)
    if label_names is None:
        if xml_path is None:
            raise DataFormatError(f"{path}: give label_names or the MULAN xml_path")
        label_names = read_mulan_xml(xml_path, expected_count=n_labels)
    label_names = list(label_names)
    lines = read_text(path).split("\n")
    relation, names, start = _parse_header(lines, path)
    position = _label_positions(path, names, label_names)
    rows, numbers = _data_rows(lines, start)
    n_attributes = len(names)
    if not rows:
        matrix = sp.csr_matrix((0, n_attributes))
    elif rows[0].startswith("{"):
        matrix = _parse_sparse(path, rows, numbers, n_attributes)
    else:
        matrix = _parse_dense(path, rows, numbers, n_attributes)
    X, Y, feature_columns = _split_labels(path, matrix, numbers, position, label_names)
    return X, Y, [names[i] for i in feature_columns], label_names


def _label_positions(path, names, label_names):
    """Attribute name → column; raise on duplicate names or labels that are not attributes."""
    position = {name: i for i, name in enumerate(names)}
    if len(position) != len(names):
        raise DataFormatError(f"{path}: duplicate attribute names in the header")
    missing = [name for name in label_names if name not in position]
    if missing:
        raise DataFormatError(f"{path}: labels named in the XML are not attributes of the file "
                              f"({len(missing)} missing, e.g. {missing[:3]})")
    return position


def _data_rows(lines, start):
    """The non-empty, non-comment data lines from ``start`` on, stripped, with their 1-based
    line numbers."""
    rows, numbers = [], []
    for number in range(start, len(lines)):
        stripped = lines[number].strip()
        if stripped and not stripped.startswith("%"):
            rows.append(stripped)
            numbers.append(number + 1)
    return rows, numbers


def _split_labels(path, matrix, numbers, position, label_names):
    """(X CSR float64, Y CSR int8 0/1, feature columns) from the n × attributes matrix."""
    n_attributes = matrix.shape[1]
    label_columns = np.array([position[name] for name in label_names], dtype=np.int64)
    is_label = np.zeros(n_attributes, dtype=bool)
    is_label[label_columns] = True
    feature_columns = np.flatnonzero(~is_label)
    matrix = matrix.tocsc()
    Y = matrix[:, label_columns].tocsr()
    if Y.nnz and not np.all(Y.data == 1):
        bad_row = Y.nonzero()[0][np.flatnonzero(Y.data != 1)[0]]
        raise _row_error(path, numbers[bad_row], "a label attribute has a value other than 0/1")
    X = matrix[:, feature_columns].tocsr()
    X.sort_indices()
    Y = Y.astype(np.int8)
    Y.sort_indices()
    return X, Y, feature_columns


def write_arff(path, X, Y, feature_names, label_names, relation="mlnn", sparse=True):
    """Write ``X`` and ``Y`` as a MULAN ARFF file (features first, then labels).

    Used by the round-trip tests and for exporting. Values are written with ``repr`` precision.
    """
    X = sp.csr_matrix(X)
    Y = sp.csr_matrix(Y)
    out = [f"@relation {_quote(relation)}", ""]
    out += [f"@attribute {_quote(name)} numeric" for name in feature_names]
    out += [f"@attribute {_quote(name)} {{0,1}}" for name in label_names]
    out += ["", "@data"]
    A = sp.hstack([X, Y], format="csr")
    A.sort_indices()
    for i in range(A.shape[0]):
        start, end = A.indptr[i], A.indptr[i + 1]
        cols, vals = A.indices[start:end], A.data[start:end]
        if sparse:
            out.append("{" + ",".join(f"{c} {_number(v)}" for c, v in zip(cols, vals)) + "}")
        else:
            dense = np.zeros(A.shape[1])
            dense[cols] = vals
            out.append(",".join(_number(v) for v in dense))
    data = ("\n".join(out) + "\n").encode("utf-8")
    if Path(path).name.endswith(".gz"):
        data = gzip.compress(data)
    with atomic_write(path, "wb") as handle:
        handle.write(data)


def write_mulan_xml(path, label_names):
    """Write a MULAN XML label file naming ``label_names``."""
    root = ET.Element("labels", xmlns="http://mulan.sourceforge.net/labels")
    for name in label_names:
        ET.SubElement(root, "label", name=name)
    with atomic_write(path, "wb") as handle:
        handle.write(b'<?xml version="1.0" encoding="utf-8"?>\n')
        handle.write(ET.tostring(root, encoding="utf-8"))


_PLAIN_NAME = re.compile(r"^[^\s'\"{}%,]+$")


def _quote(name):
    if _PLAIN_NAME.match(name):
        return name
    return "'" + name.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _number(value):
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
