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
        arrays[f"{part}_data"] = matrix.data
        arrays[f"{part}_indices"] = matrix.indices
        arrays[f"{part}_indptr"] = matrix.indptr
        arrays[f"{part}_shape"] = np.array(matrix.shape, dtype=np.int64)
    arrays["feature_names"] = np.array(feature_names, dtype=str)
    arrays["label_names"] = np.array(label_names, dtype=str)
    arrays["description"] = np.array(description, dtype=str)
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
    """The tuple :func:`load` returns, from the checked arrays of an entry; ValueError if the
    matrices are not consistent."""
    parts = {}
    for part in _MATRICES:
        shape = tuple(int(n) for n in arrays[f"{part}_shape"])
        parts[part] = sp.csr_matrix(
            (arrays[f"{part}_data"], arrays[f"{part}_indices"], arrays[f"{part}_indptr"]),
            shape=shape)
        parts[part].check_format(full_check=True)
        if not np.all(np.isfinite(parts[part].data)):
            raise ValueError(f"{part} holds a non-finite value")
        parts[part].has_sorted_indices = True
    _check_parts(parts)
    feature_names = [str(s) for s in arrays["feature_names"]]
    label_names = [str(s) for s in arrays["label_names"]]
    if len(feature_names) != parts["X_train"].shape[1] or \
            len(label_names) != parts["Y_train"].shape[1]:
        raise ValueError("the names do not match the matrices")
    extras = {name[len(_EXTRA):]: value for name, value in arrays.items()
              if name.startswith(_EXTRA)}
    return parts, feature_names, label_names, str(arrays["description"]), extras


def _check_parts(parts):
    """ValueError unless the four matrices fit together: X and Y of a split have the same
    documents, both splits the same features and labels, and Y holds only 0 and 1."""
    for split in ("train", "test"):
        X, Y = parts[f"X_{split}"], parts[f"Y_{split}"]
        if X.shape[0] != Y.shape[0]:
            raise ValueError(f"X_{split} and Y_{split} have {X.shape[0]} and {Y.shape[0]} rows")
        if not np.all((Y.data == 0) | (Y.data == 1)):
            raise ValueError(f"Y_{split} holds values other than 0 and 1")
    if parts["X_train"].shape[1] != parts["X_test"].shape[1] or \
            parts["Y_train"].shape[1] != parts["Y_test"].shape[1]:
        raise ValueError("the training and test matrices have different widths")

