"""Permissions of the files written atomically (mlnn.base.fileio): a replaced file keeps its own
mode, a new file gets 0666 less the umask — never the 0600 of the temporary file written first
(``tempfile.mkstemp``), whichever of the two writers wrote it."""

import os

import pytest

from mlnn.base.fileio import atomic_write, write_files


def _atomic_write(path, data):
    with atomic_write(path, "wb") as handle:
        handle.write(data)


def _write_files(path, data):
    write_files({path: data})


WRITERS = {"atomic_write": _atomic_write, "write_files": _write_files}


@pytest.fixture
def umask():
    """Set the process umask for one test (``umask(value)``); the old one is restored."""
    old = os.umask(0o022)
    yield os.umask
    os.umask(old)


def mode(path):
    return path.stat().st_mode & 0o7777


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("mask", [0o022, 0o027, 0o002])
def test_a_new_file_gets_0666_less_the_umask(tmp_path, umask, writer, mask):
    umask(mask)
    target = tmp_path / "new.bin"
    WRITERS[writer](target, b"new")
    assert target.read_bytes() == b"new"
    assert mode(target) == 0o666 & ~mask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.bin"]      # no temporary left


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("kept", [0o640, 0o604, 0o664, 0o755, 0o444])
def test_a_replaced_file_keeps_its_mode(tmp_path, umask, writer, kept):
    umask(0o022)                                       # a new file would get 0644
    target = tmp_path / "old.bin"
    target.write_bytes(b"old")
    os.chmod(target, kept)
    WRITERS[writer](target, b"new")
    assert target.read_bytes() == b"new"
    assert mode(target) == kept


@pytest.mark.parametrize("writer", WRITERS)
def test_a_symbolic_link_keeps_its_target_and_the_target_its_mode(tmp_path, umask, writer):
    umask(0o022)
    target, link = tmp_path / "target.bin", tmp_path / "link.bin"
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    link.symlink_to(target)
    WRITERS[writer](link, b"new")
    assert link.is_symlink() and target.read_bytes() == b"new"
    assert mode(target) == 0o640
