"""Processed datasets cached as ``.npz`` files (no pickle) in :func:`~.paths.cache_dir`.

The key hashes the dataset name, its source files' checksums, the options and
:data:`FORMAT_VERSION`. An entry holds the four matrices, the names, the description, the
loader's ``extras`` (Reuters-21578: its idf) and their SHA-256; it is written atomically, or not
at all. A damaged entry makes :func:`load` warn and return None: the caller rebuilds it.
"""

import hashlib
import json
import warnings

import numpy as np
import scipy.sparse as sp

from mlnn.base.errors import MLNNError, MLNNWarning
from mlnn.base.fileio import arrays_digest, atomic_write, read_npz
from mlnn.base.validation import check_X, check_Y
from mlnn.datasets.paths import cache_dir

FORMAT_VERSION = 2
_MATRICES = ("X_train", "Y_train", "X_test", "Y_test")
_EXTRA = "extra_"


def cache_path(name, source_checksums, options):
    """The cache file of dataset ``name`` with these sources and options (the module's key)."""
    payload = json.dumps({"name": name, "sources": list(source_checksums),
                          "options": options, "version": FORMAT_VERSION},
                         sort_keys=True, default=str)
    key = hashlib.sha256(payload.encode("utf-8")).hexdigest()
    return cache_dir() / f"{name}-{key[:20]}.npz"


def save(path, parts, feature_names, label_names, description, extras=None):
    """Write the entry (matrices, names, description, named ``extras`` arrays, their checksum) to
    ``path`` atomically; False if the cache directory cannot be written."""
    arrays = {}
    for part in _MATRICES:
        matrix = sp.csr_matrix(parts[part])
        arrays.update({f"{part}_data": matrix.data, f"{part}_indices": matrix.indices,
                       f"{part}_indptr": matrix.indptr,
                       f"{part}_shape": np.array(matrix.shape, dtype=np.int64)})
    for key, value in (("feature_names", feature_names), ("label_names", label_names),
                       ("description", description)):
        arrays[key] = np.array(value, dtype=str)
    for name, value in (extras or {}).items():
        arrays[_EXTRA + name] = np.asarray(value)
    arrays["sha256"] = np.array(arrays_digest(arrays))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(path, "wb") as handle:
            np.savez(handle, **arrays)
        return True
    except (OSError, MLNNError):
        return False


def load(path):
    """``(parts, feature_names, label_names, description, extras)`` of a cache file; None if it is
    missing, or damaged (then with a warning): not an archive, cut off, a checksum that does not
    match, or matrices that are not consistent CSR matrices of the stored shapes."""
    try:
        arrays = read_npz(path)
        stored = str(arrays.pop("sha256", ""))
        if arrays_digest(arrays) != stored:
            raise ValueError("checksum mismatch")
        return _entry(arrays)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, IndexError, MemoryError) as error:
        reason = str(error) if isinstance(error, ValueError) else f"{type(error).__name__}: {error}"
        warnings.warn(f"the cached matrices {path} are damaged ({reason}); rebuilding them from "
                      "the source files", MLNNWarning, stacklevel=2)
        return None


def _entry(arrays):
    """The tuple :func:`load` returns, from the checked arrays of an entry; ValueError unless
    the matrices are consistent CSR matrices that fit together (one set of documents per split,
    one set of features and labels, Y of 0/1): checked as any input is
    (:mod:`mlnn.base.validation`)."""
    X, Y, X_test, Y_test = (sp.csr_matrix(
        (arrays[f"{part}_data"], arrays[f"{part}_indices"], arrays[f"{part}_indptr"]),
        shape=tuple(int(n) for n in arrays[f"{part}_shape"])) for part in _MATRICES)
    X_test = check_X(X_test, "X_test", n_features=X.shape[1])
    parts = {"X_train": check_X(X, "X_train"), "X_test": X_test,
             "Y_train": check_Y(Y, "Y_train", shape=(X.shape[0], Y.shape[1])),
             "Y_test": check_Y(Y_test, "Y_test", shape=(X_test.shape[0], Y.shape[1]))}
    feature_names = [str(s) for s in arrays["feature_names"]]
    label_names = [str(s) for s in arrays["label_names"]]
    if len(feature_names) != X.shape[1] or len(label_names) != Y.shape[1]:
        raise ValueError("the names do not match the matrices")
    extras = {name[len(_EXTRA):]: value for name, value in arrays.items()
              if name.startswith(_EXTRA)}
    return parts, feature_names, label_names, str(arrays["description"]), extras
