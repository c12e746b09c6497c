"""Writing files so that nobody ever reads half of one, and checking an output path before work.

Every file the project writes (model files, result tables, run records, exported data, cached
matrices) goes through :func:`atomic_write` (or :func:`atomic_path` for writers that open the
file themselves, :func:`write_files` for several files that belong together): the content is
written to a temporary file in the same directory, flushed to disk, and only then renamed over
the final name (``os.replace`` is atomic on POSIX and Windows). A crash, a full disk or Ctrl-C leaves the previous file, or none,
under the final name — never a partial one — and the temporary file is removed.

:func:`check_output_path` is called by the command line *before* a long computation, so that a
missing or read-only directory is reported at once rather than after an hour of training.
:func:`check_input_file` does the same for a file the command will read, and
:func:`os_error_message` turns any ``OSError`` into the one line the command line prints.
"""

import contextlib
import errno
import hashlib
import os
import tempfile
from pathlib import Path

import numpy as np

from mlnn.base.errors import MLNNError


def describe_os_error(error):
    """A short reason for an ``OSError`` (e.g. "no space left on device"), without the path."""
    if error.errno == errno.ENOSPC:
        return "no space left on device"
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "permission denied" if error.errno != errno.EROFS else "read-only file system"
    return (error.strerror or str(error)).lower()


def os_error_message(error, action="cannot access"):
    """One line for an ``OSError``: "cannot read FILE: permission denied" (``action`` is the
    verb phrase used when the error names no operation)."""
    reason = describe_os_error(error)
    if error.filename is None:
        return f"{action}: {reason}"
    return f"{action} {os.fsdecode(error.filename)}: {reason}"


def check_input_file(path, name):
    """Raise :class:`MLNNError` naming ``name`` unless ``path`` is an existing, readable regular
    file (or ``-``, standard input). Returns ``path`` as a :class:`~pathlib.Path` (or ``-``)."""
    if path is None or str(path) == "":
        raise MLNNError(f"{name}: the file name is empty")
    if str(path) == "-":
        return "-"
    path = Path(path)
    if path.is_dir():
        raise MLNNError(f"{name}: {path} is a directory, not a file")
    if not path.exists():
        raise MLNNError(f"{name}: {path} does not exist")
    if not os.access(path, os.R_OK):
        raise MLNNError(f"{name}: {path} is not readable (permission denied)")
    return path


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
    if path.exists() and not path.is_file():
        raise MLNNError(f"{name}: {path} exists and is not a regular file")
    if path.exists() and not os.access(path, os.W_OK):
        raise MLNNError(f"{name}: {path} exists and is not writable")
    return path


def check_replaceable(path, name, looks_right, what):
    """Raise :class:`MLNNError` naming ``name`` if ``path`` is an existing non-empty file for
    which ``looks_right(path)`` is False: a typo must not overwrite a file of another kind.
    ``what`` describes the right kind ("an mlnn model file")."""
    path = Path(path)
    if path.is_file() and path.stat().st_size > 0 and not looks_right(path):
        raise MLNNError(f"{name}: {path} exists and is not {what}; refusing to overwrite it "
                        "(remove it or choose another name)")
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
def atomic_path(path):
    """A temporary path beside ``path`` for a writer that opens files itself (``np.savez``, a
    CSV writer); on success the file is flushed to disk and moved to ``path``.

    The same guarantees as :func:`atomic_write`: on any failure (including ``KeyboardInterrupt``)
    the temporary file is removed and ``path`` keeps its previous content; an ``OSError`` is
    re-raised as :class:`MLNNError` naming ``path``.
    """
    path = _target(path)
    temporary = _temporary(path)
    try:
        yield Path(temporary)
        _commit(temporary, path)
    except OSError as error:
        _remove(temporary)
        raise MLNNError(f"cannot write {path}: {describe_os_error(error)}") from None
    except BaseException:
        _remove(temporary)
        raise


@contextlib.contextmanager
def atomic_write(path, mode="w", encoding="utf-8"):
    """Open a temporary file beside ``path`` for writing; on success move it to ``path``.

    ``mode`` is "w" (text, ``encoding``) or "wb". If the body raises (including
    ``KeyboardInterrupt``) or the disk fills, the temporary file is removed, ``path`` keeps its
    previous content, and an ``OSError`` is re-raised as :class:`MLNNError` naming the file.
    The new file gets the permissions of the one it replaces (of a new file: 0666 less the umask);
    a symbolic link is followed, and its target replaced.
    """
    if mode not in ("w", "wb"):
        raise MLNNError(f"atomic_write: mode must be 'w' or 'wb', got {mode!r}")
    with atomic_path(path) as temporary:
        try:
            handle = open(temporary, mode, **({"encoding": encoding} if mode == "w" else {}))
        except OSError as error:
            raise MLNNError(f"cannot write {path}: {describe_os_error(error)}") from None
        with handle:
            yield handle


def write_files(contents):
    """Write several files as one: ``contents`` maps each path to its bytes; all of them are
    replaced, or none (every temporary file is written and flushed to disk before the first
    rename). Failures as in :func:`atomic_write`."""
    temporaries, path = {}, None
    try:
        for path, data in contents.items():
            path = _target(path)
            temporaries[path] = _temporary(path)
            with open(temporaries[path], "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temporaries[path], _mode_for(path))
        for path, temporary in list(temporaries.items()):
            os.replace(temporary, path)
            del temporaries[path]
    except OSError as error:
        raise MLNNError(f"cannot write {path}: {describe_os_error(error)}") from None
    finally:
        for temporary in temporaries.values():
            _remove(temporary)


def _target(path):
    """The file to replace for ``path``: a symbolic link is followed, so that it survives."""
    path = Path(path)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _temporary(path):
    """A new empty file beside ``path`` (hidden, ending in .part); its name."""
    directory = path.parent if str(path.parent) else Path(".")
    try:
        descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.",
                                                 suffix=".part")
    except OSError as error:
        raise MLNNError(f"cannot write {path}: {describe_os_error(error)}") from None
    os.close(descriptor)
    return temporary


def _commit(temporary, path):
    """fsync ``temporary``, give it the permissions ``path`` has (or would get), rename it."""
    with open(temporary, "rb+") as handle:
        os.fsync(handle.fileno())
    os.chmod(temporary, _mode_for(path))
    os.replace(temporary, path)


def _mode_for(path):
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_text(path, text, encoding="utf-8"):
    """Write ``text`` to ``path`` atomically (:func:`atomic_write`)."""
    with atomic_write(path, "w", encoding) as handle:
        handle.write(text)


def _remove(temporary):
    with contextlib.suppress(OSError):
        os.unlink(temporary)


def arrays_digest(arrays):
    """SHA-256 (hex) over the entries of ``arrays`` (a dict of arrays): their names, dtypes,
    shapes and bytes, in name order. Model files and cached datasets store it to detect any
    later change or damage."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}|{array.dtype.str}|{array.shape}|".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()
