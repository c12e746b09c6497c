"""Processed datasets cached as ``.npz`` files (no pickle).

The cache key is the SHA-256 of the source files' checksums, the dataset name, the processing
options and :data:`FORMAT_VERSION`, so a changed source file or option gives a new entry. The
cache directory is :func:`mlnn.datasets.paths.cache_dir`; when it cannot be
written (a read-only file system, a full disk), loading simply proceeds without caching.

Besides the matrices and names, an entry holds the dataset's ``extras``: named arrays the loader
needs to rebuild more than the matrices -- for Reuters-21578 the idf of the fitted tf-idf
vectorizer (its vocabulary is the feature names), so that a dataset read from the cache can still
turn new text into features (:attr:`mlnn.datasets.Dataset.vectorizer`).

Entries are written atomically (:func:`mlnn.base.fileio.atomic_path`) and carry the SHA-256 of their
arrays, so a damaged entry (cut off, a flipped byte, another file under its name) is detected
on reading: :func:`load` then warns once (:class:`~mlnn.base.errors.MLNNWarning`) and returns None,
and the caller rebuilds the entry from the source files, replacing the damaged one.
"""

import hashlib
import json
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from mlnn.base.errors import MLNNError, MLNNWarning
from mlnn.base.fileio import arrays_digest, atomic_path, read_npz
from mlnn.datasets.paths import cache_dir

FORMAT_VERSION = 2
_MATRICES = ("X_train", "Y_train", "X_test", "Y_test")
_EXTRA = "extra_"


def cache_key(name, source_checksums, options):
    """Hex key from the dataset name, the sources' SHA-256 sums and the options (JSON)."""
    payload = json.dumps({"name": name, "sources": list(source_checksums),
                          "options": options, "version": FORMAT_VERSION},
                         sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def cache_path(name, key):
    """The cache file of dataset ``name`` under the key :func:`cache_key`."""
    return cache_dir() / f"{name}-{key[:20]}.npz"


def save(path, parts, feature_names, label_names, description, extras=None):
    """Write the four matrices, names, description, the ``extras`` (named arrays: the idf of a
    text dataset's vectorizer) and their checksum to ``path`` atomically.

    Returns True on success, False if the cache directory cannot be written.
    """
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
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as temporary, open(temporary, "wb") as handle:
            np.savez(handle, **arrays)
        return True
    except (OSError, MLNNError):
        return False


def load(path):
    """Read a cache file: ``(parts, feature_names, label_names, description, extras)``; None if
    it is missing, or damaged (then with a warning), so that the data is reprocessed.

    Damaged means anything that makes the entry untrustworthy: not an archive, cut off, a
    checksum that does not match, an array header declaring more than the file holds (never
    allocated), or matrices that are not consistent CSR matrices of the stored shapes."""
    try:
        arrays = _read_checked(path)
        entry = _entry(arrays)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, IndexError, MemoryError) as error:
        warnings.warn(f"the cached matrices {path} are damaged ({_reason(error)}); rebuilding "
                      "them from the source files", MLNNWarning, stacklevel=2)
        return None
    return entry


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


def _read_checked(path):
    """The arrays of the cache file ``path`` after checking it is an archive with a matching
    checksum (:func:`mlnn.base.fileio.read_npz`: nothing is allocated beyond what the file
    holds); ValueError says what is wrong otherwise."""
    with open(path, "rb") as handle:
        if handle.read(4) != b"PK\x03\x04":
            raise ValueError("not an .npz archive")
        handle.seek(0)
        arrays = read_npz(handle)
    stored = str(arrays.pop("sha256", ""))
    if arrays_digest(arrays) != stored:
        raise ValueError("checksum mismatch")
    return arrays


def _reason(error):
    if isinstance(error, KeyError):
        return f"no entry {error}"
    if isinstance(error, MemoryError):
        return "an array larger than memory"
    if isinstance(error, ValueError) and "allow_pickle" in str(error):
        return "it holds Python objects"
    return f"{type(error).__name__}: {error}" if not isinstance(error, ValueError) else str(error)
