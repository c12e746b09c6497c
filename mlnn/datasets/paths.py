"""Where datasets live: the data directory of the source files and the cache of processed ones.

* :func:`data_dir` -- ``$MLNN_DATA`` if set, else ``~/.cache/mlnn``: the downloaded or
  hand-placed source files, read only;
* :func:`cache_dir` -- ``$MLNN_CACHE`` if set, else ``~/.cache/mlnn/processed``: the processed
  matrices (:mod:`mlnn.datasets.cache`);
* :func:`offline` -- ``$MLNN_OFFLINE`` set (to anything but nothing, ``0``, ``false`` or
  ``no``): the command line never downloads a missing archive (as with ``--offline``).

:func:`check_data_dir` tells, before any work, that a data directory is a file or unreadable.
"""

import os
from pathlib import Path

from mlnn.base.errors import MLNNError


def data_dir():
    """The data directory: ``$MLNN_DATA`` if set, else ``~/.cache/mlnn``."""
    value = os.environ.get("MLNN_DATA")
    return Path(value) if value else Path.home() / ".cache" / "mlnn"


def cache_dir():
    """The cache of processed matrices: ``$MLNN_CACHE`` if set, else ``~/.cache/mlnn/processed``."""
    value = os.environ.get("MLNN_CACHE")
    return Path(value) if value else Path.home() / ".cache" / "mlnn" / "processed"


def offline():
    """Whether ``$MLNN_OFFLINE`` forbids downloads: set, and not empty, ``0``, ``false`` or
    ``no`` (in any case)."""
    return os.environ.get("MLNN_OFFLINE", "").strip().lower() not in ("", "0", "false", "no")


def check_data_dir(path, name="MLNN_DATA", create=False):
    """``path`` as a Path; raise :class:`MLNNError` naming ``name`` (the option or variable that
    gave it) if it exists but is not a directory, or is not readable (or, with ``create``,
    writable: files are downloaded into it). A missing directory is left to the caller (the
    loaders name the file they need; a download creates it)."""
    path = Path(path)
    if not path.exists():
        return path
    if not path.is_dir():
        raise MLNNError(f"{name}: {path} is not a directory")
    mode = os.R_OK | os.X_OK | (os.W_OK if create else 0)
    if not os.access(path, mode):
        raise MLNNError(f"{name}: the directory {path} is not "
                        f"{'writable' if create else 'readable'} (permission denied)")
    return path
