"""Writing files so that nobody ever reads half of one, and checking an output path before work.

Every file the project writes (model files, result tables, run records, exported data, cached
matrices) goes through :func:`atomic_write`: the content is written to a temporary file in the
same directory, flushed to disk, and only then renamed over the final name (``os.replace`` is
atomic on POSIX and Windows). A crash, a full disk or Ctrl-C leaves the previous file, or none,
under the final name — never a partial one — and the temporary file is removed.

:func:`check_output_path` is called by the command line *before* a long computation, so that a
missing or read-only directory is reported at once rather than after an hour of training.
"""

import contextlib
import errno
import os
import tempfile
from pathlib import Path

from mlnn.errors import MLNNError


def describe_os_error(error):
    """A short reason for an ``OSError`` (e.g. "no space left on device"), without the path."""
    if error.errno == errno.ENOSPC:
        return "no space left on device"
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "permission denied" if error.errno != errno.EROFS else "read-only file system"
    return (error.strerror or str(error)).lower()


def check_output_path(path, name="--out"):
    """Raise :class:`MLNNError` naming ``name`` unless a file can be written at ``path``.

    The path must be non-empty, must not be an existing directory, and its directory must exist
    and be writable. Returns ``path`` as a :class:`~pathlib.Path`.
    """
    if path is None or str(path) == "":
        raise MLNNError(f"{name}: the output path is empty")
    path = Path(path)
    if path.is_dir():
        raise MLNNError(f"{name}: {path} is a directory; give a file name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.exists():
        raise MLNNError(f"{name}: the directory {parent} does not exist")
    if not parent.is_dir():
        raise MLNNError(f"{name}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise MLNNError(f"{name}: the directory {parent} is not writable")
    if path.exists() and not os.access(path, os.W_OK):
        raise MLNNError(f"{name}: {path} exists and is not writable")
    return path


def check_output_directory(path, name="--out"):
    """Raise :class:`MLNNError` naming ``name`` unless ``path`` is, or can be made as, a writable
    directory (its parent must exist). Returns ``path`` as a :class:`~pathlib.Path`."""
    if path is None or str(path) == "":
        raise MLNNError(f"{name}: the output directory is empty")
    path = Path(path)
    if path.exists():
        if not path.is_dir():
            raise MLNNError(f"{name}: {path} exists and is not a directory")
        if not os.access(path, os.W_OK | os.X_OK):
            raise MLNNError(f"{name}: the directory {path} is not writable")
        return path
    check_output_path(path, name)
    return path


@contextlib.contextmanager
def atomic_write(path, mode="w", encoding="utf-8"):
    """Open a temporary file beside ``path`` for writing; on success move it to ``path``.

    ``mode`` is "w" (text, ``encoding``) or "wb". If the body raises (including
    ``KeyboardInterrupt``) or the disk fills, the temporary file is removed, ``path`` keeps its
    previous content, and an ``OSError`` is re-raised as :class:`MLNNError` naming the file.
    """
    if mode not in ("w", "wb"):
        raise MLNNError(f"atomic_write: mode must be 'w' or 'wb', got {mode!r}")
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    try:
        descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.",
                                                 suffix=".part")
    except OSError as error:
        raise MLNNError(f"cannot write {path}: {describe_os_error(error)}") from None
    try:
        with os.fdopen(descriptor, mode, **({"encoding": encoding} if mode == "w" else {})) \
                as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as error:
        _remove(temporary)
        raise MLNNError(f"cannot write {path}: {describe_os_error(error)}") from None
    except BaseException:
        _remove(temporary)
        raise


def write_text(path, text, encoding="utf-8"):
    """Write ``text`` to ``path`` atomically (:func:`atomic_write`)."""
    with atomic_write(path, "w", encoding) as handle:
        handle.write(text)


def _remove(temporary):
    with contextlib.suppress(OSError):
        os.unlink(temporary)
