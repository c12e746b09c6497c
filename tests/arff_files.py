"""MULAN ARFF and XML files written for the tests of the reader (mlnn reads them, never writes)."""

import gzip
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import scipy.sparse as sp

_PLAIN_NAME = re.compile(r"^[^\s'\"{}%,]+$")


def write_arff(path, X, Y, feature_names, label_names, sparse=True):
    """Write X and Y as a MULAN ARFF file (features first, then labels; ``.gz`` compressed),
    values with ``repr`` precision."""
    out = [f"@attribute {_quote(name)} numeric" for name in feature_names]
    out += [f"@attribute {_quote(name)} {{0,1}}" for name in label_names]
    out = ["@relation test", ""] + out + ["", "@data"]
    A = sp.hstack([sp.csr_matrix(X), sp.csr_matrix(Y)], format="csr")
    A.sort_indices()
    for row in A:
        if sparse:
            out.append("{" + ",".join(f"{c} {_number(v)}" for c, v in zip(row.indices, row.data))
                       + "}")
        else:
            out.append(",".join(_number(v) for v in row.toarray().ravel()))
    data = ("\n".join(out) + "\n").encode("utf-8")
    Path(path).write_bytes(gzip.compress(data) if str(path).endswith(".gz") else data)


def write_mulan_xml(path, label_names):
    """Write a MULAN XML label file naming ``label_names``."""
    root = ET.Element("labels", xmlns="http://mulan.sourceforge.net/labels")
    for name in label_names:
        ET.SubElement(root, "label", name=name)
    Path(path).write_bytes(b'<?xml version="1.0" encoding="utf-8"?>\n' +
                           ET.tostring(root, encoding="utf-8"))


def _quote(name):
    if _PLAIN_NAME.match(name):
        return name
    return "'" + name.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _number(value):
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
