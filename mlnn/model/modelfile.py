"""Model files: named arrays and a JSON header in one ``.npz``, read back without pickle.

This module knows files, not models: :func:`write_model_file` stores a dict of arrays and a
JSON-serialisable ``meta`` dict, :func:`read_model_file` returns them after checking the format,
its version and a checksum. What goes in (the parameters W1, b1, W2, b2, the threshold
predictor, the optimizer state, the hyper-parameters) is decided by
:meth:`mlnn.model.estimator.MultiLabelNN.save`.

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
``text/vocabulary``    for a model trained on a text dataset: the vectorizer's terms (unicode),
``text/idf``           their idf (float64) and the stop words it removed (unicode); its
``text/stop_words``    settings (stemming, token pattern, tf, norm) are ``meta["text"]``
                       (:meth:`mlnn.datasets.text.TfidfVectorizer.get_state`)
``checksum``           SHA-256 over all other entries (name, dtype, shape, bytes)
=====================  ================================================================

A missing, truncated or tampered file, or one of another format version, raises
:class:`~mlnn.base.errors.ModelFileError` saying which; so does any other file (a ``.npy`` array
renamed ``.npz``, an archive with object arrays, a header entry of the wrong type, a ``meta``
that is not a JSON object). Code that rebuilds a model from the entries does it inside
:func:`loading`, so that a file that passes the checksum but lacks what the model needs is
reported the same way, never as a ``KeyError`` or ``TypeError``.
"""

import contextlib
import json
import zipfile
import zlib
from pathlib import Path

import numpy as np

from mlnn.base.errors import MLNNError, ModelFileError
from mlnn.base.fileio import arrays_digest, atomic_write

FORMAT = "mlnn-model"
#: What a model file holds; raised whenever that changes. A file of any other version (an older
#: mlnn's) is refused with one error: there are no branches for reading older files.
FORMAT_VERSION = 2
HEADER = ("format", "format_version", "meta", "checksum")


#: The file's checksum: SHA-256 over the entries' names, dtypes, shapes and bytes, in name order.
checksum = arrays_digest


def names_array(names):
    """A list of names (or None) as a unicode array; empty when unknown."""
    return np.array([] if names is None else list(names), dtype=str)


def write_model_file(path, arrays, meta):
    """Write ``arrays`` and the JSON header ``meta`` to ``path`` atomically
    (:func:`mlnn.base.fileio.atomic_write`: a temporary file, then a rename)."""
    clash = sorted(set(arrays) & set(HEADER))
    if clash:
        raise ModelFileError(f"the entries {clash} are reserved for the file header")
    entries = dict(arrays)
    entries["format"] = np.array(FORMAT)
    entries["format_version"] = np.array(FORMAT_VERSION)
    entries["meta"] = np.array(json.dumps(meta, default=_json_default))
    entries["checksum"] = np.array(checksum(entries))
    with atomic_write(path, "wb") as handle:
        np.savez(handle, **entries)


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot store {type(value).__name__} in a model file")


def read_model_file(path):
    """(arrays, meta) of a file written by :func:`write_model_file`, checked for format, version
    and checksum; ``arrays`` without the header entries."""
    path = Path(path)
    arrays = _read_entries(path)
    _check_header(path, arrays)
    stored = str(arrays.pop("checksum"))
    if checksum(arrays) != stored:
        raise ModelFileError(f"model file {path} fails its checksum: it was modified or corrupted")
    try:
        meta = json.loads(str(arrays.pop("meta")))
    except ValueError:
        raise _not_a_model(path, "its 'meta' entry is not valid JSON") from None
    if not isinstance(meta, dict):
        raise _not_a_model(path, "its 'meta' entry is not a JSON object")
    for name in ("format", "format_version"):
        arrays.pop(name)
    return arrays, meta


@contextlib.contextmanager
def loading(path):
    """Turn any error of rebuilding a model from the entries of ``path`` (a missing key, a value
    of the wrong type or shape) into :class:`~mlnn.base.errors.ModelFileError`."""
    try:
        yield
    except MLNNError as error:
        if isinstance(error, ModelFileError):
            raise
        raise _not_a_model(path, f"its content is inconsistent: {error}") from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        what = f"the entry {error} is missing" if isinstance(error, KeyError) else \
            f"{type(error).__name__}: {error}"
        raise _not_a_model(path, what) from None


def _not_a_model(path, reason):
    return ModelFileError(f"not an mlnn model file: {path}: {reason}")


#: The first bytes of a zip archive (an ``.npz``) and of a ``.npy`` array.
_ZIP_MAGIC, _NPY_MAGIC = (b"PK\x03\x04", b"PK\x05\x06"), b"\x93NUMPY"


def is_model_file(path):
    """Whether ``path`` looks like a file of :func:`write_model_file` (a zip archive with the
    header entries); its content is not checked (see :func:`read_model_file`)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return {f"{name}.npy" for name in HEADER} <= set(archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def _read_entries(path):
    if path.is_dir():
        raise ModelFileError(f"model file {path} is a directory, not a file")
    if not path.is_file():
        raise ModelFileError(f"model file {path} does not exist")
    with open(path, "rb") as handle:
        return _entries(path, handle)


def _entries(path, handle):
    start = handle.read(6)
    if start.startswith(_NPY_MAGIC):
        raise _not_a_model(path, "it is a single NumPy array (.npy), not an .npz archive")
    if not start.startswith(_ZIP_MAGIC):
        raise _not_a_model(path, "it is not an .npz (zip) archive")
    handle.seek(0)
    try:
        with np.load(handle, allow_pickle=False) as npz:
            return {name: npz[name] for name in npz.files}
    except ValueError as error:
        reason = "it holds Python objects" if "allow_pickle" in str(error) else \
            "an entry is not a valid array"
        raise _not_a_model(path, reason) from None
    except (zipfile.BadZipFile, EOFError, OSError, KeyError, zlib.error) as error:
        raise ModelFileError(f"model file {path} is truncated or not an mlnn model file "
                             f"({type(error).__name__}: {error})") from None


def _header_entry(path, arrays, name, kinds):
    entry = arrays[name]
    if entry.shape != () or entry.dtype.kind not in kinds:
        raise _not_a_model(path, f"its {name!r} entry is a {entry.dtype} array of shape "
                                 f"{entry.shape}, not a single "
                                 f"{'string' if kinds == 'U' else 'integer'}")
    return entry.item()


def _check_header(path, arrays):
    for name in HEADER:
        if name not in arrays:
            raise _not_a_model(path, f"it has no {name!r} entry")
    kinds = {"format": "U", "format_version": "iu", "meta": "U", "checksum": "U"}
    values = {name: _header_entry(path, arrays, name, kind) for name, kind in kinds.items()}
    if values["format"] != FORMAT:
        raise _not_a_model(path, f"its format is {values['format']!r}, expected {FORMAT!r}")
    if values["format_version"] != FORMAT_VERSION:
        raise ModelFileError(f"model file {path} has format version {values['format_version']}, "
                             f"but this mlnn reads version {FORMAT_VERSION} only: train the "
                             "model again with this version")
