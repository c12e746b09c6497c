"""Progress lines: durations, sizes, the time-left estimate, when lines are shown, epoch and
download lines."""

import io
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlnn.base.progress import (DownloadProgress, Progress, epoch_reporter, format_bytes,
                                format_duration, wanted)


@pytest.mark.parametrize("seconds, text", [
    (0, "0.0s"), (12.34, "12.3s"), (59.9, "59.9s"), (59.96, "1m00s"), (185, "3m05s"),
    (3599.4, "59m59s"), (3600, "1h00m"), (3725, "1h02m"), (90061, "25h01m"),
    (float("nan"), "?"), (float("inf"), "?"), (-1, "?"), (None, "?")])
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


@pytest.mark.parametrize("count, text", [
    (0, "0 B"), (999, "999 B"), (1000, "1.0 kB"), (8_200_000, "8.2 MB"),
    (28_184_000, "28.2 MB"), (1_100_000_000, "1.1 GB"), (5_000_000_000_000, "5000.0 GB")])
def test_format_bytes(count, text):
    assert format_bytes(count) == text


@given(st.floats(0, 1e6), st.integers(1, 1000), st.integers(1, 1000))
def test_the_time_left_is_the_mean_step_times_the_steps_left(elapsed, done, total):
    line = Progress(total, enabled=False).step(done, "x", elapsed=elapsed)
    if done >= total:
        assert line.endswith(", done")
    else:
        left = format_duration(elapsed / done * (total - done))
        assert line.endswith(f", about {left} left")


def test_the_time_left_is_unknown_before_the_first_step():
    assert Progress(10, enabled=False).step(0, "x", elapsed=3.0).endswith("about ? left")


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_progress_lines_count_steps_elapsed_and_time_left(monkeypatch):
    clock, stream = _Clock(), io.StringIO()
    monkeypatch.setattr(time, "perf_counter", clock)
    progress = Progress(8, stream=stream)
    clock.now += 30.0
    assert progress.step(2, "NN_A on medical") == \
        "[2/8] NN_A on medical  elapsed 30.0s, about 1m30s left"      # 15 s a step, 6 to go
    clock.now += 90.0
    progress.step(8, "BR_R on medical")
    assert stream.getvalue().splitlines() == [
        "[2/8] NN_A on medical  elapsed 30.0s, about 1m30s left",
        "[8/8] BR_R on medical  elapsed 2m00s, done"]


def test_a_disabled_progress_prints_nothing_and_counter_and_bound_are_options():
    stream = io.StringIO()
    progress = Progress(10, stream=stream, enabled=False, upper_bound=True, counter=False)
    assert progress.step(5, "epoch 5/10", elapsed=50.0) == "epoch 5/10  elapsed 50.0s, at most " \
                                                           "50.0s left"
    assert stream.getvalue() == ""
    counted = Progress(10, counter=True, enabled=False)
    assert counted.step(3, "x", elapsed=0.0).startswith("[ 3/10] x")


class _Stream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty


@pytest.mark.parametrize("quiet, force, tty, shown", [
    (False, False, True, True),       # a terminal: shown
    (False, False, False, False),     # a file or a pipe: hidden
    (True, False, True, False),       # --quiet
    (False, True, False, True),       # --progress
])
def test_progress_is_shown_on_a_terminal_unless_quiet_or_forced(quiet, force, tty, shown):
    assert wanted(quiet=quiet, force=force, stream=_Stream(tty)) is shown


def test_a_stream_without_isatty_or_closed_counts_as_not_a_terminal():
    closed = io.StringIO()
    closed.close()
    assert not wanted(stream=object()) and not wanted(stream=closed)


def test_epoch_lines_from_training_records():
    stream = io.StringIO()
    report = epoch_reporter(10, stream=stream)
    report({"epoch": 2, "train_loss": 0.5, "rankloss": 0.25, "elapsed": 4.0})
    report({"epoch": 3, "updates": 30, "train_loss": 0.04123, "elapsed": 6.0})  # no validation
    report({"epoch": 10, "train_loss": 0.1, "rankloss": 0.05, "elapsed": 20.0})
    assert stream.getvalue().splitlines() == [
        "epoch 2/10  train loss 0.5000  validation rank loss 0.2500  elapsed 4.0s, "
        "at most 16.0s left",
        "epoch 3/10  train loss 0.0412  elapsed 6.0s, at most 14.0s left",
        "epoch 10/10  train loss 0.1000  validation rank loss 0.0500  elapsed 20.0s, done"]


@given(st.integers(1, 50_000_000), st.integers(1, 500))
def test_a_download_prints_at_most_one_line_per_tenth_and_ends_at_100(total, blocks):
    block = -(-total // blocks)
    stream = io.StringIO()
    progress = DownloadProgress("archive.tar.gz", stream=stream)
    received = 0
    while received < total:
        received = min(received + block, total)
        progress(received, total)
    lines = stream.getvalue().splitlines()
    assert 1 <= len(lines) <= 11
    assert lines[-1].endswith("(100%)") and lines[-1].startswith("downloading archive.tar.gz: ")
    percents = [int(line.rsplit("(", 1)[1].rstrip("%)")) for line in lines]
    assert percents == sorted(percents) and len({p // 10 for p in percents}) == len(percents)


def test_a_download_of_unknown_size_prints_one_line_per_10_MB():
    stream = io.StringIO()
    progress = DownloadProgress("x", stream=stream)
    for received in range(1_000_000, 25_000_001, 1_000_000):
        progress(received, None)
    assert stream.getvalue().splitlines() == [
        "downloading x: 1.0 MB", "downloading x: 10.0 MB", "downloading x: 20.0 MB"]
