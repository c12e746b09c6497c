"""Processed datasets cached as ``.npz`` files (no pickle).

The cache key is the SHA-256 of the source files' checksums, the dataset name, the processing
options and :data:`FORMAT_VERSION`, so a changed source file or option gives a new entry. The
cache directory is :func:`mlnn.datasets.paths.cache_dir`; when it cannot be
written (a read-only file system), loading simply proceeds without caching.
"""

import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from mlnn.datasets.paths import cache_dir

FORMAT_VERSION = 1
_MATRICES = ("X_train", "Y_train", "X_test", "Y_test")


def cache_key(name, source_checksums, options):
    """Hex key from the dataset name, the sources' SHA-256 sums and the options (JSON)."""
    payload = json.dumps({"name": name, "sources": list(source_checksums),
                          "options": options, "version": FORMAT_VERSION},
                         sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def cache_path(name, key):
    """The cache file of dataset ``name`` under the key :func:`cache_key`."""
    return cache_dir() / f"{name}-{key[:20]}.npz"


def save(path, parts, feature_names, label_names, description):
    """Write the four matrices, names and description to ``path`` atomically.

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
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = tempfile.NamedTemporaryFile(dir=path.parent, prefix=path.name + ".",
                                             suffix=".part", delete=False)
        with handle:
            np.savez(handle, **arrays)
        os.replace(handle.name, path)
        return True
    except OSError:
        try:
            os.unlink(handle.name)
        except (OSError, NameError):
            pass
        return False


def load(path):
    """Read a cache file; None if it is missing or unreadable (then the data is reprocessed)."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            parts = {}
            for part in _MATRICES:
                parts[part] = sp.csr_matrix(
                    (archive[f"{part}_data"], archive[f"{part}_indices"],
                     archive[f"{part}_indptr"]), shape=tuple(archive[f"{part}_shape"]))
            feature_names = [str(s) for s in archive["feature_names"]]
            label_names = [str(s) for s in archive["label_names"]]
            description = str(archive["description"])
    except (OSError, ValueError, KeyError, EOFError):
        return None
    for part in _MATRICES:
        parts[part].has_sorted_indices = True
    return parts, feature_names, label_names, description
