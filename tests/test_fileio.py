"""Atomic writes and output-path checks: a failure never leaves a partial or temporary file;
archives read without trusting their headers; Ctrl-C held back; the lock file never empty."""

import errno
import json
import os
import re
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from mlnn.base import interrupts
from mlnn.base.errors import MLNNError, describe_os_error, os_error_message
from mlnn.base.fileio import (JSON_MAX_DEPTH, JSON_MAX_DIGITS, ArchiveError, atomic_write,
                              check_input_file, check_output_directory, check_output_path,
                              read_json, read_npz, write_files, write_text)
from mlnn.base.lock import LOCK_NAME, directory_lock, lock_holder


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


def test_atomic_write_writes_beside_the_target_until_it_succeeds(tmp_path):
    target = tmp_path / "curves.csv"
    with atomic_write(target) as handle:
        assert Path(handle.name).parent == tmp_path and Path(handle.name) != target
        handle.write("a,b\n")
        assert not target.exists()
    assert target.read_text() == "a,b\n" and _listing(tmp_path) == ["curves.csv"]
    with pytest.raises(KeyboardInterrupt):
        with atomic_write(target) as handle:
            handle.write("half")
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


def test_check_output_path_refuses_to_overwrite_a_file_of_another_kind(tmp_path):
    looks_right = lambda path: path.read_text().startswith("model")     # noqa: E731
    (tmp_path / "model.txt").write_text("model 1")
    (tmp_path / "data.txt").write_text("precious data")
    (tmp_path / "empty.txt").write_text("")
    for name in ("model.txt", "empty.txt", "new.txt"):
        assert check_output_path(tmp_path / name, "--out", looks_right, "a model") == \
            tmp_path / name
    with pytest.raises(MLNNError, match="--out: .*data.txt exists and is not a model; refusing"):
        check_output_path(tmp_path / "data.txt", "--out", looks_right, "a model")


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


# ------------------------------------------------------------------------------------------
# archives read without trusting them; Ctrl-C held back; the lock never left empty


def test_read_npz_gives_back_plain_arrays_in_their_order_and_layout(tmp_path):
    arrays = {"a": np.arange(6.0).reshape(2, 3), "f": np.asfortranarray(np.eye(3, 2)),
              "s": np.array(["ab", "c"]), "e": np.array([], dtype=str), "z": np.array(3),
              "b": np.array([True, False])}
    np.savez(tmp_path / "plain.npz", **arrays)
    np.savez_compressed(tmp_path / "packed.npz", **arrays)
    for name in ("plain.npz", "packed.npz"):
        back = read_npz(tmp_path / name)
        assert list(back) == list(arrays)
        for key, value in arrays.items():
            np.testing.assert_array_equal(back[key], value)
            assert back[key].dtype == value.dtype and back[key].flags.writeable


def _member(descr, shape, data):
    header = repr({"descr": descr, "fortran_order": False, "shape": shape}).encode()
    header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + data


@pytest.mark.parametrize("member, message", [
    (_member("<f8", (2 ** 40, 2 ** 20), b"\0" * 16), "declares shape (1099511627776, 1048576)"),
    (_member("<f8", (4,), b"\0" * 40), "(32 bytes) but holds 40 bytes"),
    (_member("|O", (2,), b"\0" * 16), "it holds Python objects"),
    (_member("|V8", (2,), b"\0" * 16), "has the dtype |V8, not a plain number or string"),
    (b"\x93NUMPY\x01\x00" + (20000).to_bytes(2, "little") + b" " * 20000,
     "has a header longer than 10,000 bytes"),
    (b"not an array at all", "invalid .npy header"),
])
def test_read_npz_refuses_a_forged_member_before_allocating(tmp_path, member, message):
    with zipfile.ZipFile(tmp_path / "forged.npz", "w") as archive:
        archive.writestr("good.npy", _member("<i8", (1,), b"\1" + b"\0" * 7))
        archive.writestr("W1.npy", member)
    with pytest.raises(ArchiveError, match=re.escape(message)):
        read_npz(tmp_path / "forged.npz")


def test_read_npz_refuses_a_compressed_member_claiming_more_than_deflate_can_hold(tmp_path):
    np.savez_compressed(tmp_path / "packed.npz", W1=np.zeros(1000))
    raw = bytearray((tmp_path / "packed.npz").read_bytes())
    with zipfile.ZipFile(tmp_path / "packed.npz") as archive:
        info = archive.getinfo("W1.npy")
    for offset in (raw.index(b"PK\x03\x04") + 22, raw.index(b"PK\x01\x02") + 24):
        raw[offset:offset + 4] = (2 ** 31).to_bytes(4, "little")   # uncompressed size
    (tmp_path / "bomb.npz").write_bytes(bytes(raw))
    with pytest.raises(ArchiveError, match=f"claims {2 ** 31} bytes but occupies "
                                           f"{info.compress_size}"):
        read_npz(tmp_path / "bomb.npz")


def test_read_npz_says_what_is_not_an_archive(tmp_path):
    (tmp_path / "text.npz").write_text("hello")
    with pytest.raises(ArchiveError, match="truncated or not an .npz archive"):
        read_npz(tmp_path / "text.npz")


@pytest.fixture
def python_sigint():
    """SIGINT handled by Python's own handler during the test, as in an interactive run (a
    process started in the background, or by a runner that ignores SIGINT, inherits SIG_IGN,
    which :mod:`mlnn.base.interrupts` rightly leaves alone)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_inside_deferred_takes_effect_after_the_body(python_sigint):
    done = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts.deferred():
            os.kill(os.getpid(), signal.SIGINT)
            done.append("after the signal")
    assert done == ["after the signal"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with interrupts.deferred():                       # no signal: nothing raised
        done.append("quiet")
    assert interrupts.release() is None               # nothing held


def test_held_interrupts_are_reported_once_by_release(python_sigint):
    interrupts.hold()
    os.kill(os.getpid(), signal.SIGINT)
    assert type(interrupts.release()) is KeyboardInterrupt
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert interrupts.release() is None


@pytest.mark.parametrize("failure", [errno.EFBIG, errno.ENOSPC])
def test_a_lock_that_cannot_be_written_is_an_error_naming_it_and_leaves_nothing(
        tmp_path, monkeypatch, failure):
    real_open = open

    def failing_open(path, *args, **kwargs):
        if ".mlnn-reproduce.lock" in str(path):
            raise OSError(failure, os.strerror(failure))
        return real_open(path, *args, **kwargs)
    monkeypatch.setattr("builtins.open", failing_open)
    with pytest.raises(MLNNError, match=f"--out: cannot lock {tmp_path}: cannot write the lock "
                                        f"file {tmp_path / LOCK_NAME}: "):
        with directory_lock(tmp_path):
            pass
    assert _listing(tmp_path) == []


def test_the_lock_holds_the_pid_with_or_without_hard_links(tmp_path, monkeypatch):
    with directory_lock(tmp_path) as path:
        assert lock_holder(path) == os.getpid() and _listing(tmp_path) == [LOCK_NAME]
    assert _listing(tmp_path) == []

    def no_links(source, target):
        raise OSError(errno.EPERM, "hard links not supported")
    monkeypatch.setattr(os, "link", no_links)
    with directory_lock(tmp_path) as path:
        assert lock_holder(path) == os.getpid() and _listing(tmp_path) == [LOCK_NAME]
    assert _listing(tmp_path) == []


def test_a_temporary_lock_file_of_a_killed_process_is_removed(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    (tmp_path / f"{LOCK_NAME}.{dead}.part").write_text(f"{dead}\n")
    (tmp_path / f"{LOCK_NAME}.1.part").write_text("1\n")          # pid 1 is alive: kept
    with directory_lock(tmp_path):
        assert _listing(tmp_path) == [LOCK_NAME, f"{LOCK_NAME}.1.part"]


def _nested(depth):
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("text, reason", [
    (_nested(100_000), f"it nests deeper than {JSON_MAX_DEPTH} levels"),     # the parser's limit
    (_nested(JSON_MAX_DEPTH + 1), f"it nests deeper than {JSON_MAX_DEPTH} levels"),
    ('{"a": [' + _nested(JSON_MAX_DEPTH - 1) + "]}", "it nests deeper"),
    ('{"seed": ' + "9" * 5000 + "}", "it holds an integer of 5000 digits (at most 100)"),
    ("[-" + "1" * (JSON_MAX_DIGITS + 1) + "]", f"an integer of {JSON_MAX_DIGITS + 1} digits"),
    ("[" + "1" * 5000 + ".5]", "it holds a number too large for a float"),
    ("[1e400]", "it holds a number too large for a float"),
    ("{not json", "Expecting property name"),
])
def test_json_too_deep_too_long_or_invalid_is_one_value_error(text, reason):
    with pytest.raises(ValueError) as error:
        read_json(text)
    assert reason in str(error.value) and "\n" not in str(error.value)


def test_json_within_the_limits_reads_as_json_does():
    deepest = _nested(JSON_MAX_DEPTH)
    assert read_json(deepest) == json.loads(deepest)
    longest = "-" + "9" * JSON_MAX_DIGITS
    assert read_json(f'{{"n": {longest}, "x": 1.5e300, "y": NaN}}')["n"] == int(longest)
    assert read_json('{"a": [1, {"b": null}], "s": "[[[["}') == {"a": [1, {"b": None}],
                                                                   "s": "[[[["}
