"""Atomic writes and output-path checks: a failure never leaves a partial or temporary file."""

import errno
import os

import pytest

from mlnn.base.errors import MLNNError
from mlnn.base.fileio import (atomic_path, atomic_write, check_input_file, check_output_directory,
                              check_replaceable,
                              check_output_path, describe_os_error, os_error_message, write_files,
                              write_text)


def _listing(directory):
    return sorted(p.name for p in directory.iterdir())


def test_atomic_write_replaces_the_file_only_on_success(tmp_path):
    target = tmp_path / "table.csv"
    write_text(target, "old\n")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as handle:
            handle.write("half of the new")
            raise RuntimeError("crash in the middle")
    assert target.read_text() == "old\n"
    assert _listing(tmp_path) == ["table.csv"]          # the temporary file is gone
    write_text(target, "new\n")
    assert target.read_text() == "new\n" and _listing(tmp_path) == ["table.csv"]


def test_atomic_write_survives_keyboard_interrupt(tmp_path):
    target = tmp_path / "model.npz"
    with pytest.raises(KeyboardInterrupt):
        with atomic_write(target, "wb") as handle:
            handle.write(b"\x00" * 10)
            raise KeyboardInterrupt
    assert _listing(tmp_path) == []


def test_a_full_disk_becomes_one_error_naming_the_file(tmp_path, monkeypatch):
    target = tmp_path / "run.json"

    def no_space(descriptor):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(MLNNError, match=r"cannot write .*run\.json: no space left on device"):
        write_text(target, "x")
    assert _listing(tmp_path) == []


def test_a_missing_directory_is_an_error_before_any_write(tmp_path):
    with pytest.raises(MLNNError, match="cannot write"):
        write_text(tmp_path / "missing" / "f.txt", "x")


@pytest.mark.parametrize("make, message", [
    (lambda d: "", "the output path is empty"),
    (lambda d: d, "is a directory"),
    (lambda d: d / "missing" / "model.npz", "does not exist"),
])
def test_check_output_path_names_the_option_and_the_problem(tmp_path, make, message):
    with pytest.raises(MLNNError, match=f"--model: .*{message}|--model: {message}"):
        check_output_path(make(tmp_path), "--model")


def test_check_output_path_rejects_a_parent_that_is_a_file(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(MLNNError, match="is not a directory"):
        check_output_path(tmp_path / "afile" / "model.npz")


def test_check_output_path_rejects_a_read_only_directory(tmp_path, monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir()
    # the permission bits do not bind root, so ask os.access as an unprivileged user would
    monkeypatch.setattr(os, "access", lambda path, mode: os.fspath(path) != os.fspath(locked))
    with pytest.raises(MLNNError, match="not writable"):
        check_output_path(locked / "model.npz")


def test_check_output_directory(tmp_path):
    assert check_output_directory(tmp_path) == tmp_path
    assert check_output_directory(tmp_path / "new") == tmp_path / "new"
    (tmp_path / "afile").write_text("x")
    with pytest.raises(MLNNError, match="exists and is not a directory"):
        check_output_directory(tmp_path / "afile")
    with pytest.raises(MLNNError, match="does not exist"):
        check_output_directory(tmp_path / "a" / "b")


def test_describe_os_error():
    assert describe_os_error(OSError(errno.ENOSPC, "x")) == "no space left on device"
    assert describe_os_error(OSError(errno.EACCES, "x")) == "permission denied"
    assert describe_os_error(OSError(errno.EROFS, "x")) == "read-only file system"
    assert describe_os_error(OSError(errno.ENOENT, "No such file")) == "no such file"


def test_atomic_path_for_writers_that_open_the_file_themselves(tmp_path):
    target = tmp_path / "curves.csv"
    with atomic_path(target) as temporary:
        assert temporary.parent == tmp_path and temporary != target
        temporary.write_text("a,b\n")
        assert not target.exists()
    assert target.read_text() == "a,b\n" and _listing(tmp_path) == ["curves.csv"]
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(target) as temporary:
            temporary.write_text("half")
            raise KeyboardInterrupt
    assert target.read_text() == "a,b\n" and _listing(tmp_path) == ["curves.csv"]


def test_a_new_file_gets_the_umask_permissions_and_a_replaced_one_keeps_its_own(tmp_path):
    umask = os.umask(0o022)
    try:
        write_text(tmp_path / "new.txt", "x")
        assert (tmp_path / "new.txt").stat().st_mode & 0o777 == 0o644
        os.chmod(tmp_path / "new.txt", 0o600)
        write_text(tmp_path / "new.txt", "y")
        assert (tmp_path / "new.txt").stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(umask)


def test_check_output_path_rejects_an_existing_special_file(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(MLNNError, match="--out: .*fifo exists and is not a regular file"):
        check_output_path(tmp_path / "fifo")


@pytest.mark.parametrize("make, message", [
    (lambda d: "", "--model: the file name is empty"),
    (lambda d: d, "is a directory, not a file"),
    (lambda d: d / "none.npz", "none.npz does not exist"),
])
def test_check_input_file(tmp_path, make, message):
    with pytest.raises(MLNNError, match=message):
        check_input_file(make(tmp_path), "--model")
    (tmp_path / "m.npz").write_bytes(b"x")
    assert check_input_file(tmp_path / "m.npz", "--model") == tmp_path / "m.npz"
    assert check_input_file("-", "--input") == "-"


def test_os_error_message_names_the_file_and_the_reason():
    error = PermissionError(errno.EACCES, "Permission denied", "/data/x.arff")
    assert os_error_message(error, "cannot read") == "cannot read /data/x.arff: permission denied"
    assert os_error_message(OSError(errno.ENOSPC, "No space")) == \
        "cannot access: no space left on device"


@pytest.mark.parametrize("fault", [OSError(errno.ENOSPC, "No space left"), KeyboardInterrupt()])
def test_write_files_replaces_all_or_none(tmp_path, monkeypatch, fault):
    paths = [tmp_path / f"f{i}.txt" for i in range(4)]
    for path in paths[:2]:
        write_text(path, f"old {path.name}")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    calls, fsync = [], os.fsync

    def fails_third(descriptor):
        calls.append(descriptor)
        if len(calls) == 3:
            raise fault
        fsync(descriptor)
    monkeypatch.setattr(os, "fsync", fails_third)
    with pytest.raises(MLNNError if isinstance(fault, OSError) else KeyboardInterrupt):
        write_files({path: b"new" for path in paths})
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    monkeypatch.setattr(os, "fsync", fsync)
    write_files({path: path.name.encode() for path in paths})
    assert sorted(p.name for p in tmp_path.iterdir()) == [p.name for p in paths]
    assert [p.read_bytes() for p in paths] == [p.name.encode() for p in paths]


def test_check_replaceable_refuses_to_overwrite_a_file_of_another_kind(tmp_path):
    looks_right = lambda path: path.read_text().startswith("model")     # noqa: E731
    (tmp_path / "model.txt").write_text("model 1")
    (tmp_path / "data.txt").write_text("precious data")
    (tmp_path / "empty.txt").write_text("")
    for name in ("model.txt", "empty.txt", "new.txt"):
        assert check_replaceable(tmp_path / name, "--out", looks_right, "a model") == \
            tmp_path / name
    with pytest.raises(MLNNError, match="--out: .*data.txt exists and is not a model; refusing"):
        check_replaceable(tmp_path / "data.txt", "--out", looks_right, "a model")


def test_a_write_that_fails_inside_the_body_is_one_error_naming_the_file(tmp_path):
    target = tmp_path / "export.svm"
    write_text(target, "old\n")
    with pytest.raises(MLNNError, match=r"cannot write .*export\.svm: no space left on device"):
        with atomic_write(target) as handle:
            handle.write("new, half")
            raise OSError(errno.ENOSPC, "No space left on device")   # as a write() would
    assert target.read_text() == "old\n" and _listing(tmp_path) == ["export.svm"]


def test_a_symbolic_link_survives_and_its_target_is_replaced(tmp_path):
    (tmp_path / "real.csv").write_text("old\n")
    (tmp_path / "link.csv").symlink_to(tmp_path / "real.csv")
    write_text(tmp_path / "link.csv", "new\n")
    assert (tmp_path / "link.csv").is_symlink() and (tmp_path / "real.csv").read_text() == "new\n"
    assert _listing(tmp_path) == ["link.csv", "real.csv"]
