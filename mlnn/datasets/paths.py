"""Where datasets live: :func:`data_dir` (``$MLNN_DATA``, else ``~/.cache/mlnn``: the source
files, read only), :func:`cache_dir` (``$MLNN_CACHE``, else ``~/.cache/mlnn/processed``: the
processed matrices), and whether ``$MLNN_OFFLINE`` forbids downloads (:func:`offline`)."""

import os
from pathlib import Path

from mlnn.base.errors import MLNNError


def data_dir():
    return Path(os.environ.get("MLNN_DATA") or Path.home() / ".cache" / "mlnn")


def cache_dir():
    return Path(os.environ.get("MLNN_CACHE") or Path.home() / ".cache" / "mlnn" / "processed")


def offline():
    """Whether ``$MLNN_OFFLINE`` is set, and not empty, ``0``, ``false`` or ``no`` (any case)."""
    return os.environ.get("MLNN_OFFLINE", "").strip().lower() not in ("", "0", "false", "no")


def check_data_dir(path, name="MLNN_DATA", create=False):
    """``path`` as a Path; raise naming ``name`` if it exists but is not a readable (with
    ``create``: writable) directory. A missing one is left to the caller, which names the file."""
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
