"""MULAN multi-label ARFF files (sparse or dense rows, optionally ``.gz``) and their XML label file.

``@relation`` and ``@attribute NAME TYPE`` lines precede ``@data``; a row is dense
(``v1,...,vK``) or sparse (``{i v,i v,...}``, 0-based indices, omitted ones 0). The labels are
``{0,1}`` attributes, anywhere among the others, named by the XML file (``<label name="..."/>``).
Types: ``numeric``, ``real``, ``integer`` and nominal with numeric values; missing values,
strings and dates are refused. All numbers are converted by NumPy at once; only when that finds
a problem are the rows walked one by one, to name its line.
"""

import gzip
import re
import xml.etree.ElementTree as ET
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from mlnn.base.errors import DataFormatError, describe_os_error
from mlnn.datasets.text import decode

#: The largest magnitude a feature value may have: float32's, the precision the networks compute
#: in by default (a larger value would overflow when the data meet a model, far from its line).
_LARGEST = float(np.finfo(np.float32).max)


def read_text(path):
    """The text of the file ``path`` (``.gz`` decompressed), by :func:`.text.decode`."""
    path = Path(path)
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rb") as handle:
                return decode(handle.read(), path)
        return decode(path.read_bytes(), path)
    except FileNotFoundError:
        raise DataFormatError(f"{path}: file not found") from None
    except (OSError, EOFError, zlib.error) as error:
        reason = describe_os_error(error) if isinstance(error, OSError) else error
        raise DataFormatError(f"{path}: cannot read ({reason})") from None


def read_mulan_xml(path, expected_count=None):
    """The label names of a MULAN XML file, in file order (nested labels depth first), of which
    there must be ``expected_count`` if given."""
    try:
        root = ET.fromstring(read_text(path))
    except ET.ParseError as error:
        raise DataFormatError(f"{path}:{error.position[0]}: malformed XML ({error})") from None
    names = [element.get("name") for element in root.iter()
             if element.tag.rsplit("}", 1)[-1] == "label"]
    if None in names:
        raise DataFormatError(f"{path}: a <label> element has no name attribute")
    if not names:
        raise DataFormatError(f"{path}: no <label> elements found")
    duplicates = sorted(name for name, count in Counter(names).items() if count > 1)
    if duplicates:
        raise DataFormatError(f"{path}: duplicate label names {duplicates[:5]}")
    if expected_count is not None and len(names) != expected_count:
        raise DataFormatError(
            f"{path}: expected {expected_count} labels, the XML names {len(names)}")
    return names


def read_arff(path, label_names):
    """``(X, Y, feature_names)`` of a MULAN ARFF file: Y (n × L CSR int8) holds the attributes
    ``label_names`` (as :func:`read_mulan_xml` reads them) in that order, X (n × D CSR float64,
    sorted indices) the others in file order."""
    path = Path(path)
    lines = read_text(path).split("\n")
    names, start = _parse_header(lines, path)
    position = {name: i for i, name in enumerate(names)}
    if len(position) != len(names):
        raise DataFormatError(f"{path}: duplicate attribute names in the header")
    missing = [name for name in label_names if name not in position]
    if missing:
        raise DataFormatError(f"{path}: labels named in the XML are not attributes of the file "
                              f"({len(missing)} missing, e.g. {missing[:3]})")
    numbered = [(number + 1, line.strip()) for number, line in enumerate(lines[start:], start)
                if line.strip() and not line.strip().startswith("%")]
    numbers, rows = [n for n, _ in numbered], [row for _, row in numbered]
    matrix = _parse_data(path, rows, numbers, len(names)) if rows else \
        sp.csr_matrix((0, len(names)))
    labels = np.array([position[name] for name in label_names], dtype=np.int64)
    features = np.setdiff1d(np.arange(len(names)), labels)
    matrix = matrix.tocsc()
    X, Y = (matrix[:, columns].tocsr() for columns in (features, labels))
    if not np.all(Y.data == 1):
        bad_row = Y.nonzero()[0][np.flatnonzero(Y.data != 1)[0]]
        raise DataFormatError(f"{path}:{numbers[bad_row]}: a label attribute has a value other "
                              "than 0/1")
    Y = Y.astype(np.int8)
    X.sort_indices()
    Y.sort_indices()
    return X, Y, [names[i] for i in features]


def _parse_header(lines, path):
    """(attribute names, index of the first line after ``@data``)."""
    names = []
    for number, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith("%"):
            continue
        where = f"{path}:{number + 1}"
        keyword = stripped.split(None, 1)[0].lower()
        if keyword == "@attribute":
            names.append(_parse_attribute(stripped[len("@attribute"):].strip(), where))
        elif keyword == "@data":
            if not names:
                raise DataFormatError(f"{where}: @data before any @attribute")
            return names, number + 1
        elif keyword != "@relation":
            raise DataFormatError(f"{where}: unexpected header line {stripped[:60]!r}")
    raise DataFormatError(f"{path}: no @data section (file truncated?)")


def _parse_attribute(rest, where):
    """The name of the attribute ``rest`` (the text after ``@attribute``) declares, whose type
    must be numeric or nominal with numeric values."""
    if not rest:
        raise DataFormatError(f"{where}: @attribute without a name")
    if rest[0] in "'\"":                              # a quoted name, with backslash escapes
        quoted = re.match(r"(['\"])((?:\\.|(?!\1)[^\\])*)\1(.*)", rest, re.S)
        if not quoted:
            raise DataFormatError(f"{where}: unterminated quoted attribute name")
        name, kind = re.sub(r"\\(.)", r"\1", quoted[2], flags=re.S), quoted[3].strip()
    else:
        name, kind = (rest.split(None, 1) + [""])[:2]
    if not kind:
        raise DataFormatError(f"{where}: @attribute {name!r} has no type")
    if kind.lower() in ("numeric", "real", "integer"):
        return name
    if not (kind.startswith("{") and kind.endswith("}")):
        raise DataFormatError(f"{where}: attribute {name!r} has unsupported type {kind!r}")
    try:
        [float(value.strip().strip("'\"")) for value in kind[1:-1].split(",")]
    except ValueError:
        raise DataFormatError(f"{where}: nominal attribute {name!r} has non-numeric values "
                              f"{kind}; only numeric nominal values such as {{0,1}} are "
                              "supported") from None
    return name


def _parse_data(path, rows, numbers, n_attributes):
    """The data rows (sparse ``{i v,...}`` if the first one is, else dense) as a CSR matrix
    (rows × attributes, float64), every number converted at once; any problem is located by
    :func:`_raise_first_error`."""
    sparse = rows[0].startswith("{")
    if sparse:
        inners = [row[1:-1].strip() for row in rows]
        counts = [inner.count(",") + 1 if inner else 0 for inner in inners]
        tokens = " ".join(inners).replace(",", " ").split()
        columns, values = tokens[0::2], tokens[1::2]
        good = len(tokens) == 2 * sum(counts) and all(
            row.startswith("{") and row.endswith("}") for row in rows)
    else:
        counts = [row.count(",") + 1 for row in rows]
        columns = np.tile(np.arange(n_attributes), len(rows))
        values = ",".join(rows).split(",")
        good = all(count == n_attributes for count in counts)
    try:
        columns = np.array(columns, dtype=np.int64)
        values = np.array(values, dtype=np.float64)
    except (ValueError, OverflowError):
        good = False
    matrix = csr_rows(counts, columns, values, n_attributes) if good else None
    if matrix is None or not np.all(np.abs(values) <= _LARGEST):        # False for NaN too
        _raise_first_error(path, rows, numbers, n_attributes, sparse)
    matrix.eliminate_zeros()
    return matrix


def csr_rows(counts, columns, values, width):
    """The CSR matrix (rows × ``width``) of rows with ``counts`` entries each (``columns``,
    ``values`` in row order); None if a column is outside ``[0, width)`` or repeated in a row."""
    rows = np.repeat(np.arange(len(counts)), counts)
    order = np.lexsort((columns, rows))
    rows, columns = rows[order], columns[order]
    if np.any((columns < 0) | (columns >= width)) or \
            np.any((rows[1:] == rows[:-1]) & (columns[1:] == columns[:-1])):
        return None
    indptr = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
    return sp.csr_matrix((values[order], columns, indptr), shape=(len(counts), width))


def _raise_first_error(path, rows, numbers, n_attributes, sparse):
    """Raise the DataFormatError of the first bad entry, walking the rows one by one."""
    for row, number in zip(rows, numbers):
        where, seen = f"{path}:{number}", set()
        for index, value in _entries(row, where, n_attributes, sparse):
            check_entry(where, "attribute", index, value, n_attributes, seen, np.float32)
    raise DataFormatError(f"{path}: malformed data")  # pragma: no cover


def check_entry(where, kind, index, value, width, seen, dtype, offset=0):
    """Raise a DataFormatError at ``where`` unless the texts ``index`` and ``value`` are an
    integer, less ``offset`` in ``[0, width)`` (any width if None) and not yet ``seen`` in its
    line, and a finite number within ``dtype``; ``kind`` names the index ("feature")."""
    try:
        column = int(index) - offset
    except ValueError:
        raise DataFormatError(f"{where}: {kind} index {index!r} is not an integer") from None
    if column < 0 or (width is not None and column >= width):
        bounds = "" if width is None else f" {offset}..{width - 1 + offset}"
        raise DataFormatError(f"{where}: {kind} index {index} out of range{bounds}")
    if column in seen:
        raise DataFormatError(f"{where}: duplicate {kind} index {index}")
    seen.add(column)
    try:
        number = float(value)
    except ValueError:
        raise DataFormatError(f"{where}: value {value!r} is not numeric") from None
    if not np.isfinite(number):
        raise DataFormatError(f"{where}: value {value!r} is not finite")
    largest = float(np.finfo(dtype).max)
    if abs(number) > largest:
        raise DataFormatError(f"{where}: value {value} of {kind} {index} overflows "
                              f"{np.dtype(dtype).name} (largest {largest:.4g})")


def _entries(row, where, n_attributes, sparse):
    """The (index, value) texts of one data row, whose form is checked."""
    if not sparse:
        fields = row.split(",")
        if len(fields) != n_attributes:
            raise DataFormatError(f"{where}: dense row has {len(fields)} values, "
                                  f"expected {n_attributes}")
        return [(str(k), field.strip()) for k, field in enumerate(fields)]
    if not (row.startswith("{") and row.endswith("}")):
        raise DataFormatError(f"{where}: sparse row must be enclosed in {{ }}")
    entries = row[1:-1].split(",") if row[1:-1].strip() else []
    for entry in entries:
        if len(entry.split()) != 2:
            raise DataFormatError(f"{where}: sparse entry {entry.strip()!r} is not 'index value'")
    return [entry.split() for entry in entries]
