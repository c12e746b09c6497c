"""Model files: named arrays and a JSON header in one ``.npz``, read back without pickle.

This module knows files, not models: what goes in is decided by
:meth:`mlnn.model.estimator.MultiLabelNN.save`. Every entry is a plain numeric or unicode array:

=====================  ================================================================
``format``             the string ``mlnn-model``
``format_version``     :data:`FORMAT_VERSION`
``meta``               JSON: hyper-parameters (the loss and its options among them), fitted
                       scalars, the hidden activation's name, history
``W1 b1 W2 b2``        the network's parameters
``threshold_coef``     θ of the threshold predictor T(x) = θᵀx + b (empty for a fixed threshold)
``feature_names``      unicode arrays (empty when unknown)
``label_names``
``text/vocabulary``    for a model trained on text: the vectorizer's terms, their idf and its
``text/idf``           stop words; its settings are ``meta["text"]``
``text/stop_words``    (:meth:`mlnn.datasets.text.TfidfVectorizer.get_state`)
``checksum``           SHA-256 over all other entries (name, dtype, shape, bytes)
=====================  ================================================================

A missing, truncated, tampered or foreign file, or one of another format version, raises
:class:`~mlnn.base.errors.ModelFileError` saying which; older versions are read by :func:`upgrade`.
Every entry is also checked against the others (dtype, shape, finite values), so a file altered
and re-sealed is refused naming the entry; :func:`loading` reports what a rebuild misses.
"""

import contextlib
import json
import zipfile
from pathlib import Path

import numpy as np

from mlnn.base.errors import MLNNError, ModelFileError
from mlnn.base.fileio import ArchiveError, arrays_digest, atomic_write, read_json, read_npz

FORMAT = "mlnn-model"
#: Raised whenever what a file holds changes: 3, the loss's options are ``loss_options``
#: (version 2 held PWE's form as ``pwe_form``).
FORMAT_VERSION = 3
#: The versions :func:`upgrade` reads.
READABLE_VERSIONS = (2, 3)
#: The header entries, each a single value of these dtype kinds (unicode, integer).
HEADER = {"format": "U", "format_version": "iu", "meta": "U", "checksum": "U"}


def write_model_file(path, arrays, meta):
    """Write ``arrays`` and the JSON header ``meta`` to ``path`` atomically."""
    clash = sorted(set(arrays) & set(HEADER))
    if clash:
        raise ModelFileError(f"the entries {clash} are reserved for the file header")
    entries = dict(arrays)
    entries["format"] = np.array(FORMAT)
    entries["format_version"] = np.array(FORMAT_VERSION)
    entries["meta"] = np.array(json.dumps(meta, default=json_default))
    entries["checksum"] = np.array(arrays_digest(entries))
    with atomic_write(path, "wb") as handle:
        np.savez(handle, **entries)


def json_default(value):
    """``json.dumps``'s ``default`` for NumPy scalars and arrays (model files, run files)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def read_model_file(path):
    """(arrays, meta) of a file written by :func:`write_model_file`, checked for format, version
    and checksum; ``arrays`` without the header entries."""
    path = Path(path)
    arrays = _read_entries(path)
    _check_header(path, arrays)
    stored = str(arrays.pop("checksum"))
    if arrays_digest(arrays) != stored:
        raise ModelFileError(f"model file {path} fails its checksum: it was modified or corrupted")
    try:
        meta = read_json(str(arrays.pop("meta")))
    except ValueError as error:
        raise _not_a_model(path, f"its 'meta' entry is not valid JSON ({error})") from None
    if not isinstance(meta, dict):
        raise _not_a_model(path, "its 'meta' entry is not a JSON object")
    arrays.pop("format")
    meta = upgrade(path, int(arrays.pop("format_version")), meta)
    if "W1" in arrays:
        check_model_arrays(path, arrays, meta)
    return arrays, meta


def upgrade(path, version, meta):
    """The header ``meta`` of a file of format ``version`` as a current one. Version 2: PWE's
    ``pwe_form`` becomes ``loss_options`` (refused if its ``loss_options`` say otherwise)."""
    params = meta.get("params")
    if version == FORMAT_VERSION or not isinstance(params, dict) or "pwe_form" not in params:
        return meta
    params = dict(params)
    form = params.pop("pwe_form")
    options = {"form": form} if params.get("loss") == "pwe" else None
    if params.setdefault("loss_options", options) != options:
        raise _not_a_model(path, f"its header holds both pwe_form {form!r} and loss_options "
                                 f"{params['loss_options']!r}, which contradict each other")
    return {**meta, "params": params}


#: The network's parameters and the number of dimensions of each.
NETWORK = {"W1": 2, "b1": 1, "W2": 2, "b2": 1}


def check_model_arrays(path, arrays, meta):
    """Raise :class:`ModelFileError` naming the entry unless ``arrays`` and ``meta`` make a
    consistent network with its names, threshold coefficients and vectorizer, all finite."""
    D, F, L = _network_sizes(path, arrays, meta)
    expected = {"W1": [(D, F)], "b1": [(F,)], "W2": [(F, L)], "b2": [(L,)],
                "threshold_coef": _threshold_widths(path, meta, D, L),
                "feature_names": [(0,), (D,)], "label_names": [(0,), (L,)],
                "text/vocabulary": [(D,)], "text/idf": [(D,)], "text/stop_words": None}
    for name, array in arrays.items():
        if name not in expected:
            _inconsistent(path, name, "is not an entry of a model file")
        text = name.endswith(("names", "vocabulary", "stop_words"))
        _check_entry(path, name, array, "U" if text else "f", expected[name])
    _check_label_dtype(path, meta.get("label_dtype", "|i1"))
    if ("text/vocabulary" in arrays) != ("text" in meta):
        _inconsistent(path, "text/vocabulary", "and the header's text settings must come together")


def _network_sizes(path, arrays, meta):
    """(D, F, L) from W1 and W2, checked against each other and the header."""
    params = meta.get("params") if isinstance(meta.get("params"), dict) else {}
    dtype = params.get("dtype")
    for name, ndim in NETWORK.items():
        if name not in arrays:
            raise _not_a_model(path, f"it has no {name!r} entry")
        array = arrays[name]
        if array.ndim != ndim:
            _inconsistent(path, name, f"has shape {array.shape}, expected a {ndim}-D array")
        if dtype is not None and str(array.dtype) != str(dtype):
            _inconsistent(path, name, f"has dtype {array.dtype}, but the header says the model "
                                      f"computes in {dtype}")
    (D, F), L = arrays["W1"].shape, arrays["W2"].shape[1]
    if D == 0 or F == 0 or L == 0:
        _inconsistent(path, "W1", f"and W2 make an empty network (D={D}, F={F}, L={L})")
    fitted = meta.get("fitted") if isinstance(meta.get("fitted"), dict) else {}
    for key, size, entry in (("n_features_in_", D, "W1"), ("n_labels_", L, "W2")):
        if key in fitted and fitted[key] != size:
            _inconsistent(path, entry, f"has {size} {'rows' if entry == 'W1' else 'columns'} "
                                       f"but the header's {key} is {fitted[key]!r}")
    hidden = params.get("hidden_units")
    if isinstance(hidden, int) and hidden != F:      # a non-integer is the params' check
        _inconsistent(path, "W1", f"has {F} columns (hidden units) but the header's "
                                  f"hidden_units is {hidden!r}")
    return D, F, L


def _check_label_dtype(path, label_dtype):
    """The header's ``label_dtype`` must name a bool, integer or real dtype."""
    try:
        kind = np.dtype(label_dtype).kind if isinstance(label_dtype, str) else None
    except TypeError:
        kind = None
    if kind is None or kind not in "biuf":
        raise _not_a_model(path, f"its header's label_dtype {label_dtype!r} is not the name of a "
                                 "bool, integer or real dtype")


def _threshold_widths(path, meta, D, L):
    """The shapes the threshold coefficients may have under the header's ``thresholds``."""
    saved = meta.get("thresholds")
    if not isinstance(saved, dict):
        return [(0,), (D,), (L,)]        # a missing header entry is reported by the rebuild
    if saved.get("fixed") is not None:
        return [(0,)]
    width = L if saved.get("features") == "scores" else D
    if saved.get("n_features_in") not in (None, width):
        _inconsistent(path, "threshold_coef", f"must have {width} entries, but the header's "
                                              f"n_features_in is {saved.get('n_features_in')!r}")
    intercept = saved.get("intercept")
    if isinstance(intercept, bool) or not isinstance(intercept, (int, float)) \
            or not np.isfinite(intercept):
        _inconsistent(path, "threshold_coef", f"comes with the intercept {intercept!r} in the "
                                              "header, not a finite number")
    return [(width,)]


def _check_entry(path, name, array, kind, shapes):
    """Raise unless ``array`` is of ``kind`` ("f", "U"), of one of ``shapes`` (None: 1-D) and
    finite."""
    if array.dtype.kind != kind:
        what = "floating-point numbers" if kind == "f" else "strings"
        _inconsistent(path, name, f"has dtype {array.dtype}, expected {what}")
    if shapes is None and array.ndim != 1:
        _inconsistent(path, name, f"has shape {array.shape}, expected a 1-D array")
    if shapes is not None and array.shape not in shapes:
        alternatives = " or ".join(str(shape) for shape in shapes)
        _inconsistent(path, name, f"has shape {array.shape}, expected {alternatives}")
    if kind == "f" and not np.all(np.isfinite(array)):
        position = np.unravel_index(np.flatnonzero(~np.isfinite(array))[0], array.shape)
        _inconsistent(path, name, f"holds a non-finite value ({array[position]} at index "
                                  f"{tuple(int(i) for i in position)})")


def _inconsistent(path, name, problem):
    raise ModelFileError(f"model file {path} is inconsistent: its array {name!r} {problem}; "
                         "the file was altered or written by another program: train the model "
                         "again")


@contextlib.contextmanager
def loading(path):
    """Turn any error of rebuilding a model from ``path`` into ModelFileError."""
    try:
        yield
    except ModelFileError:
        raise
    except MLNNError as error:
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
    """Whether ``path`` is a zip archive with the header entries (content not checked)."""
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
        start = handle.read(6)
        if start.startswith(_NPY_MAGIC):
            raise _not_a_model(path, "it is a single NumPy array (.npy), not an .npz archive")
        if not start.startswith(_ZIP_MAGIC):
            raise _not_a_model(path, "it is not an .npz (zip) archive")
        handle.seek(0)
        try:
            return read_npz(handle)
        except ArchiveError as error:
            if error.reason.startswith("it is truncated"):
                raise ModelFileError(f"model file {path} is truncated or not an mlnn model file "
                                     f"({error.reason.split('(', 1)[-1].rstrip(')')})") from None
            raise _not_a_model(path, error.reason) from None


def _header_entry(path, arrays, name, kinds):
    if name not in arrays:
        raise _not_a_model(path, f"it has no {name!r} entry")
    entry = arrays[name]
    if entry.shape != () or entry.dtype.kind not in kinds:
        raise _not_a_model(path, f"its {name!r} entry is a {entry.dtype} array of shape "
                                 f"{entry.shape}, not a single "
                                 f"{'string' if kinds == 'U' else 'integer'}")
    return entry.item()


def _check_header(path, arrays):
    values = {name: _header_entry(path, arrays, name, kind) for name, kind in HEADER.items()}
    if values["format"] != FORMAT:
        raise _not_a_model(path, f"its format is {values['format']!r}, expected {FORMAT!r}")
    if values["format_version"] not in READABLE_VERSIONS:
        raise ModelFileError(f"model file {path} has format version {values['format_version']}, "
                             f"but this mlnn reads versions {list(READABLE_VERSIONS)} only: train "
                             "the model again with this version")
