"""Progress lines on standard error: step k of N, elapsed time, estimated time remaining.

Shown when standard error is a terminal, else hidden, silenced by ``--quiet`` and forced by
``--progress`` (:func:`wanted`). :class:`Progress` prints the lines of any loop,
:func:`epoch_reporter` those of training, :class:`DownloadProgress` those of a download.
"""

import math
import sys
import time


def format_duration(seconds):
    """``seconds`` as ``12.3s`` (under a minute), ``3m05s`` (under an hour) or ``1h02m``;
    ``?`` when it is not a finite number >= 0."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return "?"
    if seconds < 59.95:
        return f"{seconds:.1f}s"
    hours, rest = divmod(int(round(seconds)), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def format_bytes(count):
    """A byte count in decimal units: ``512 B``, ``3.4 kB``, ``8.2 MB``, ``1.1 GB``."""
    if count < 1000:
        return f"{int(count)} B"
    for unit in ("kB", "MB", "GB"):
        count /= 1000.0
        if count < 1000 or unit == "GB":
            return f"{count:.1f} {unit}"


def wanted(stream, quiet=False, force=False):
    """Whether to show progress on ``stream``: with ``force``, never with ``quiet``, else when
    ``stream`` is a terminal."""
    if force:
        return True
    if quiet:
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """Prints ``[done/total] text  elapsed E, about R left`` to ``stream`` (default standard
    error) at each :meth:`step` of ``total``, when ``enabled``. ``upper_bound`` says "at most R
    left" (a run that may stop early); ``counter=False`` drops ``[done/total]``."""

    def __init__(self, total, stream=None, enabled=True, upper_bound=False, counter=True):
        self.total, self.stream, self.enabled = int(total), stream, enabled
        self.upper_bound, self.counter = upper_bound, counter
        self.started = time.perf_counter()

    def step(self, done, text, elapsed=None):
        """Print (when enabled) and return the line after step ``done`` (``elapsed``: since
        construction); the time left is the mean step so far times the steps left."""
        elapsed = time.perf_counter() - self.started if elapsed is None else elapsed
        left = elapsed / done * (self.total - done) if done > 0 else None
        if done >= self.total:
            tail = "done"
        else:
            tail = f"{'at most' if self.upper_bound else 'about'} {format_duration(left)} left"
        head = f"[{done:>{len(str(self.total))}}/{self.total}] " if self.counter else ""
        line = f"{head}{text}  elapsed {format_duration(elapsed)}, {tail}"
        if self.enabled:
            print(line, file=sys.stderr if self.stream is None else self.stream, flush=True)
        return line


def epoch_reporter(max_epochs, stream=None):
    """A ``verbose`` callable for training that prints one line per evaluation record, ``epoch
    3/100  train loss 0.0412  validation rank loss 0.0123`` (the rank loss only when there is
    validation data), with an upper bound of the time left (early stopping may end training
    before ``max_epochs``)."""
    progress = Progress(max_epochs, stream=stream, upper_bound=True, counter=False)

    def report(record):
        text = f"epoch {record['epoch']}/{max_epochs}  train loss {record['train_loss']:.4f}"
        if "rankloss" in record:
            text += f"  validation rank loss {record['rankloss']:.4f}"
        progress.step(record["epoch"], text, record["elapsed"])
    return report


class DownloadProgress:
    """A ``progress(received, total)`` callable for downloads: prints ``downloading NAME: 3.3 MB
    of 8.2 MB (40%)`` once per tenth of the file (per 10 MB when its size is unknown)."""

    def __init__(self, name, stream=None):
        self.name, self.stream, self.shown = name, stream, -1

    def __call__(self, received, total):
        if total:
            step = min(int(10 * received / total), 10)
            text = (f"downloading {self.name}: {format_bytes(received)} of "
                    f"{format_bytes(total)} ({100 * received // total}%)")
        else:
            step = received // 10_000_000
            text = f"downloading {self.name}: {format_bytes(received)}"
        if step > self.shown:
            print(text, file=sys.stderr if self.stream is None else self.stream, flush=True)
        self.shown = max(self.shown, step)
