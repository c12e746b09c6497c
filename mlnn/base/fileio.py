"""Writing files so that nobody ever reads half of one, checking paths before work, reading
archives and JSON without trusting them.

Every file the project writes goes through :func:`atomic_write` (or :func:`write_text`, or
:func:`write_files` for several files that belong together): the content goes to a temporary file
beside the final name, is flushed to disk, and only then renamed over it. A crash, a full disk,
Ctrl-C or SIGTERM leaves the previous file, or none, and no temporary file. The new file gets the
permissions of the file it replaces (a new one: 0666 less the umask).
"""

import contextlib
import hashlib
import json
import math
import os
import tempfile
import zipfile
import zlib
from pathlib import Path

import numpy as np

from mlnn.base.errors import MLNNError, describe_os_error


def check_input_file(path, name):
    """``path`` as a :class:`~pathlib.Path` (or ``-``, standard input); raise naming ``name``
    unless it is an existing, readable regular file."""
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


def check_output_path(path, name="--out", looks_right=None, what=None):
    """``path`` as a :class:`~pathlib.Path`; raise naming ``name`` unless a file can be written
    there. With ``looks_right``, a non-empty file there must be ``what`` ("an mlnn model file")
    by ``looks_right(path)``: a typo must not overwrite it."""
    if path is None or str(path) == "":
        raise MLNNError(f"{name}: the output path is empty")
    path = Path(path)
    if path.is_dir():
        raise MLNNError(f"{name}: {path} is a directory; give a file name")
    parent = path.parent
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
    if looks_right and path.is_file() and path.stat().st_size > 0 and not looks_right(path):
        raise MLNNError(f"{name}: {path} exists and is not {what}; refusing to overwrite it "
                        "(remove it or choose another name)")
    return path


def check_output_directory(path, name="--out"):
    """``path`` as a :class:`~pathlib.Path`; raise naming ``name`` unless it is, or can be made
    as, a writable directory (its parent must exist)."""
    if path is None or str(path) == "":
        raise MLNNError(f"{name}: the output directory is empty")
    path = Path(path)
    if path.exists():
        if not path.is_dir():
            raise MLNNError(f"{name}: {path} exists and is not a directory")
        if not os.access(path, os.W_OK | os.X_OK):
            raise MLNNError(f"{name}: the directory {path} is not writable")
        return path
    return check_output_path(path, name)


@contextlib.contextmanager
def output_directory(path, name="--out"):
    """The directory ``path``, checked and made if missing, for the ``with`` block; if the block
    fails and leaves a directory it made empty, it is removed again."""
    path = check_output_directory(path, name)
    made = not path.exists()
    try:
        path.mkdir(exist_ok=True)
    except OSError as error:
        raise MLNNError(f"{name}: cannot create {path}: {describe_os_error(error)}") from None
    try:
        yield path
    except BaseException:
        if made:
            with contextlib.suppress(OSError):         # not empty: it holds results
                path.rmdir()
        raise


@contextlib.contextmanager
def atomic_write(path, mode="w", encoding="utf-8"):
    """``path`` opened for writing in ``mode`` "w" (text, ``encoding``) or "wb", and written as
    the module docstring says (a symbolic link is followed); an ``OSError`` becomes an
    :class:`MLNNError` naming ``path``."""
    path = _target(path)
    temporary = _temporary(path)
    try:
        with open(temporary, mode, encoding=encoding if mode == "w" else None) as handle:
            yield handle
            _seal(handle, temporary, path)
        os.replace(temporary, path)
    except OSError as error:
        raise MLNNError(f"cannot write {path}: {describe_os_error(error)}") from None
    finally:
        _remove(temporary)                 # gone already once renamed


def write_files(contents):
    """Write the bytes ``contents[path]`` to each path, all or none: every temporary file is
    flushed to disk before the first rename. Failures as in :func:`atomic_write`."""
    temporaries, path = {}, None
    try:
        for path, data in contents.items():
            path = _target(path)
            temporaries[path] = _temporary(path)
            with open(temporaries[path], "wb") as handle:
                handle.write(data)
                _seal(handle, temporaries[path], path)
        for path, temporary in temporaries.items():
            os.replace(temporary, path)
    except OSError as error:
        raise MLNNError(f"cannot write {path}: {describe_os_error(error)}") from None
    finally:
        for temporary in temporaries.values():        # those renamed are gone already
            _remove(temporary)


def _target(path):
    """The file to replace for ``path``: a symbolic link is followed, so that it survives."""
    path = Path(path)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _temporary(path):
    """The name of a new empty file beside ``path`` (hidden, ending in .part)."""
    try:
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                                                 suffix=".part")
    except OSError as error:
        raise MLNNError(f"cannot write {path}: {describe_os_error(error)}") from None
    os.close(descriptor)
    return temporary


def _seal(handle, temporary, path):
    """Flush ``handle``, open on ``temporary``, to disk; give ``temporary`` the permissions
    ``path`` has (or would get)."""
    handle.flush()
    os.fsync(handle.fileno())
    os.chmod(temporary, _mode_for(path))


def _mode_for(path):
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_text(path, text, encoding="utf-8"):
    with atomic_write(path, "w", encoding) as handle:
        handle.write(text)


def _remove(temporary):
    with contextlib.suppress(OSError):
        os.unlink(temporary)


def arrays_digest(arrays):
    """SHA-256 (hex) of the dict ``arrays``: every entry's name, dtype, shape and bytes, in name
    order (stored by model files and cached datasets to detect damage)."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}|{array.dtype.str}|{array.shape}|".encode())
        digest.update(array.reshape(-1).view(np.uint8))      # its bytes, without a copy
    return digest.hexdigest()


class ArchiveError(MLNNError):
    """An ``.npz`` archive that cannot be read as plain arrays; ``reason`` says why."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


#: The kinds of array an archive of ours may hold: bool, integers, reals, unicode strings.
ARCHIVE_KINDS = "biufU"

#: Largest ratio of the bytes a member declares to the bytes it occupies in the archive
#: (deflate cannot compress more than about 1032 : 1).
_DEFLATE_RATIO = 1100


def read_npz(path):
    """The arrays of the ``.npz`` archive ``path`` as ``{name: ndarray}``, read without pickle:
    each ``.npy`` header must declare a plain dtype (:data:`ARCHIVE_KINDS`) and exactly the bytes
    the archive stores for it before anything is allocated; else :class:`ArchiveError` says why."""
    try:
        with zipfile.ZipFile(path) as archive:
            return dict(_read_member(archive, info) for info in archive.infolist())
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error,
            NotImplementedError, RuntimeError) as error:
        reason = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        raise ArchiveError(f"it is truncated or not an .npz archive ({reason})") from None


def _read_member(archive, info):
    """(name, array) of one member, its header checked against its size first."""
    if not info.filename.endswith(".npy"):
        raise ArchiveError(f"its member {info.filename!r} is not a .npy array")
    name = info.filename[:-len(".npy")]
    if info.compress_type != zipfile.ZIP_STORED and \
            info.file_size > _DEFLATE_RATIO * info.compress_size + 1024:
        raise ArchiveError(f"the entry {name!r} claims {info.file_size} bytes but occupies "
                           f"{info.compress_size} in the file")
    with archive.open(info) as member:
        dtype, shape, fortran = _npy_header(member, name)
        expected, held = math.prod(shape) * dtype.itemsize, info.file_size - member.tell()
        if expected != held:
            raise ArchiveError(f"the entry {name!r} declares shape {shape} of {dtype} "
                               f"({expected} bytes) but holds {held} bytes")
        buffer = bytearray(expected)
        if member.readinto(buffer) != expected:
            raise ArchiveError(f"the entry {name!r} is truncated")
    return name, np.frombuffer(buffer, dtype=dtype).reshape(shape, order="F" if fortran else "C")


def _npy_header(member, name):
    """(dtype, shape, fortran_order) from the ``.npy`` header of ``member``, checked."""
    readers = {(1, 0): np.lib.format.read_array_header_1_0,
               (2, 0): np.lib.format.read_array_header_2_0}
    try:
        version = np.lib.format.read_magic(member)
        reader = readers.get(version)
        shape, fortran, dtype = reader(member) if reader else (None, None, None)
    except (ValueError, TypeError, SyntaxError, OverflowError) as error:
        reason = "a header longer than 10,000 bytes" if "max_header_size" in str(error) else \
            f"an invalid .npy header ({error})"
        raise ArchiveError(f"the entry {name!r} has {reason}") from None
    if reader is None:
        raise ArchiveError(f"the entry {name!r} has .npy format version {version}")
    if dtype.hasobject:
        raise ArchiveError(f"it holds Python objects (its entry {name!r})")
    if dtype.kind not in ARCHIVE_KINDS or dtype.itemsize == 0 or dtype.fields is not None \
            or dtype.subdtype is not None:
        raise ArchiveError(f"the entry {name!r} has the dtype {dtype}, not a plain number or "
                           "string type")
    if not all(isinstance(n, int) and n >= 0 for n in shape):
        raise ArchiveError(f"the entry {name!r} declares the invalid shape {shape}")
    return dtype, tuple(shape), fortran


#: The deepest nesting and the longest integer of a JSON text the project reads (model files,
#: run files): far beyond what it writes, far below what Python's parser (its recursion limit)
#: and its int conversion (``sys.get_int_max_str_digits``) survive. Our choice.
JSON_MAX_DEPTH = 100
JSON_MAX_DIGITS = 100


def read_json(text):
    """The value of the JSON ``text``; ``ValueError`` saying why if it is not JSON, nests deeper
    than :data:`JSON_MAX_DEPTH`, holds an integer of more than :data:`JSON_MAX_DIGITS` digits or
    a number too large for a float. Every JSON the project reads goes through here."""
    try:
        value = json.loads(text, parse_int=_json_int, parse_float=_json_float)
    except RecursionError:
        raise ValueError(f"it nests deeper than {JSON_MAX_DEPTH} levels") from None
    stack = [(value, 1)]
    while stack:                        # iterative: a deep value must not recurse either
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > JSON_MAX_DEPTH:
                raise ValueError(f"it nests deeper than {JSON_MAX_DEPTH} levels")
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return value


def _json_int(text):
    digits = len(text.lstrip("-"))
    if digits > JSON_MAX_DIGITS:
        raise ValueError(f"it holds an integer of {digits} digits (at most {JSON_MAX_DIGITS})")
    return int(text)


def _json_float(text):
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"it holds a number too large for a float ({text[:20]}...)")
    return value
