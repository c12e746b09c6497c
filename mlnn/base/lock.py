"""One writer per output directory: a lock file holding the writer's process id.

``reproduce`` merges each finished method into the run files of its output directory, so a run
holds :func:`directory_lock` and a second run on the same directory is refused, naming the
process that holds it. The lock file is created complete in one step (a temporary file with the
pid, hard-linked to the lock's name) and removed when the run ends, however it ends; a lock whose
pid no longer runs (``SIGKILL``, a power cut) is stale and removed by the next run.
"""

import contextlib
import os
import time
from pathlib import Path

from mlnn.base.errors import MLNNError, describe_os_error

#: Name of the lock file inside the locked directory.
LOCK_NAME = ".mlnn-reproduce.lock"

#: A lock file without a readable pid younger than this (seconds) is being written, not stale.
FRESH_SECONDS = 10.0


@contextlib.contextmanager
def directory_lock(directory, name="--out"):
    """Hold the lock of ``directory`` (which must exist) for the body of a ``with`` block; raise
    :class:`MLNNError` naming ``name`` if another live process holds it."""
    path = Path(directory) / LOCK_NAME
    _acquire(path, name)
    try:
        yield path
    finally:
        with contextlib.suppress(OSError):
            if lock_holder(path) == os.getpid():
                path.unlink()


def _acquire(path, name):
    for _ in range(3):
        try:
            _create(path)
        except FileExistsError:
            _remove_if_stale(path, name)
            continue
        except OSError as error:
            raise MLNNError(f"{name}: cannot lock {path.parent}: cannot write the lock file "
                            f"{path}: {describe_os_error(error)}") from None
        _remove_leftovers(path)
        return
    raise MLNNError(f"{name}: cannot lock {path.parent}: the lock file {path} keeps reappearing")


def _create(path):
    """Create the lock file ``path`` holding this process's pid: a temporary file hard-linked to
    ``path`` (``FileExistsError`` if it exists); where hard links are not supported,
    ``O_CREAT | O_EXCL``, removed again if the write fails."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.part")
    try:
        with open(temporary, "w") as handle:
            handle.write(f"{os.getpid()}\n")
        try:
            os.link(temporary, path)
        except FileExistsError:
            raise
        except OSError:
            _create_exclusive(path)
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()


def _remove_leftovers(path):
    """Remove the temporary lock files ``<lock>.<pid>.part`` of processes that no longer exist
    (killed between writing one and linking it)."""
    for leftover in path.parent.glob(f"{path.name}.*.part"):
        pid = leftover.name[len(path.name) + 1:-len(".part")]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            with contextlib.suppress(OSError):
                leftover.unlink()


def _create_exclusive(path):
    descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    try:
        os.write(descriptor, f"{os.getpid()}\n".encode())
    except BaseException:
        with contextlib.suppress(OSError):
            path.unlink()
        raise
    finally:
        os.close(descriptor)


def _remove_if_stale(path, name):
    """Remove the lock at ``path`` unless a live process holds it (then raise)."""
    holder = lock_holder(path)
    if holder is None:
        with contextlib.suppress(FileNotFoundError):
            if time.time() - path.stat().st_mtime < FRESH_SECONDS:
                raise MLNNError(f"{name}: another reproduce is starting to write to "
                                f"{path.parent}; wait for it or choose another {name}")
    elif holder == os.getpid() or _alive(holder):
        raise MLNNError(f"{name}: another reproduce (pid {holder}) is writing to {path.parent}; "
                        f"wait for it to finish or choose another {name} (if no such run is "
                        f"going on, delete {path})")
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def lock_holder(path):
    """The pid written in the lock file ``path``, or None if it is missing or unreadable."""
    try:
        return int(Path(path).read_text().strip())
    except (OSError, ValueError):
        return None


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
