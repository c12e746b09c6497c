"""Model files: named arrays and a JSON header in one ``.npz``, read back without pickle.

This module knows files, not models: :func:`write_model_file` stores a dict of arrays and a
JSON-serialisable ``meta`` dict, :func:`read_model_file` returns them after checking the format,
its version and a checksum. What goes in (the parameters W1, b1, W2, b2, the threshold
predictor, the optimizer state, the hyper-parameters) is decided by
:meth:`mlnn.estimator.MultiLabelNN.save`.

Entries (every one a plain numeric or unicode array, so ``np.load(..., allow_pickle=False)`` reads
the file):

=====================  ================================================================
``format``             the string ``mlnn-model``
``format_version``     :data:`FORMAT_VERSION`
``meta``               JSON: hyper-parameters, fitted scalars, activation/loss names, history
``W1 b1 W2 b2``        the network's parameters
``threshold_coef``     θ of the threshold predictor T(x) = θᵀx + b (empty for a fixed threshold)
``feature_names``      unicode arrays (empty when unknown)
``label_names``
``optimizer/<p>/<s>``  optimizer state (only with ``include_optimizer=True``)
``checksum``           SHA-256 over all other entries (name, dtype, shape, bytes)
=====================  ================================================================

A missing, truncated or tampered file, or one of another format version, raises
:class:`~mlnn.errors.ModelFileError` saying which.
"""

import hashlib
import json
import os
import zipfile
from pathlib import Path

import numpy as np

from mlnn.errors import ModelFileError

FORMAT = "mlnn-model"
FORMAT_VERSION = 1
HEADER = ("format", "format_version", "meta", "checksum")


def checksum(arrays):
    """SHA-256 (hex) over the entries' names, dtypes, shapes and bytes, in name order."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}|{array.dtype.str}|{array.shape}|".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def names_array(names):
    """A list of names (or None) as a unicode array; empty when unknown."""
    return np.array([] if names is None else list(names), dtype=str)


def write_model_file(path, arrays, meta):
    """Write ``arrays`` and the JSON header ``meta`` to ``path`` (a temporary file, then a rename)."""
    clash = sorted(set(arrays) & set(HEADER))
    if clash:
        raise ModelFileError(f"the entries {clash} are reserved for the file header")
    entries = dict(arrays)
    entries["format"] = np.array(FORMAT)
    entries["format_version"] = np.array(FORMAT_VERSION)
    entries["meta"] = np.array(json.dumps(meta, default=_json_default))
    entries["checksum"] = np.array(checksum(entries))
    path = Path(path)
    temporary = path.with_name(path.name + ".part")
    with open(temporary, "wb") as handle:
        np.savez(handle, **entries)
    os.replace(temporary, path)


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot store {type(value).__name__} in a model file")


def read_model_file(path):
    """(arrays, meta) of a file written by :func:`write_model_file`, checked for format, version
    and checksum; ``arrays`` without the header entries."""
    arrays = _read_entries(Path(path))
    _check_header(path, arrays)
    stored = str(arrays.pop("checksum"))
    if checksum(arrays) != stored:
        raise ModelFileError(f"model file {path} fails its checksum: it was modified or corrupted")
    meta = json.loads(str(arrays.pop("meta")))
    for name in ("format", "format_version"):
        arrays.pop(name)
    return arrays, meta


def _read_entries(path):
    if not path.is_file():
        raise ModelFileError(f"model file {path} does not exist")
    try:
        with np.load(path, allow_pickle=False) as npz:
            return {name: npz[name] for name in npz.files}
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError) as error:
        raise ModelFileError(f"model file {path} is truncated or not an mlnn model file "
                             f"({type(error).__name__}: {error})") from None


def _check_header(path, arrays):
    for name in HEADER:
        if name not in arrays:
            raise ModelFileError(f"model file {path} has no {name!r} entry: not an mlnn model file")
    if str(arrays["format"]) != FORMAT:
        raise ModelFileError(f"model file {path} has format {str(arrays['format'])!r}, "
                             f"expected {FORMAT!r}")
    version = int(arrays["format_version"])
    if version != FORMAT_VERSION:
        raise ModelFileError(f"model file {path} has format version {version}; this mlnn reads "
                             f"version {FORMAT_VERSION}")
