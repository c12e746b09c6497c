"""Holding Ctrl-C back while something must not be cut in half.

An interrupt (Ctrl-C, ``kill -INT``) normally raises ``KeyboardInterrupt`` wherever Python is.
Two moments must not be cut:

* writing the files of a finished result (:func:`deferred`): a run record and the tables made
  from it are written as one step, so an interrupt during the writes takes effect just after
  them, and the result that just finished is kept in every file;
* starting the command line (:func:`hold` and :func:`release`): an interrupt while NumPy and SciPy
  load would surface as a traceback, or as an ``ImportError`` from inside their C code; held
  back, it ends the command with the one line ``mlnn: interrupted``.

Only the main thread can handle signals, and only Python's own handler is replaced (an ignored
SIGINT stays ignored, a handler someone else installed stays in charge). This module imports
nothing but the standard library, so that it can be loaded before anything else.
"""

import contextlib
import signal
import threading

_held = {}


def _ours():
    """Whether SIGINT may be held here: the main thread, with Python's default handler."""
    return threading.current_thread() is threading.main_thread() and \
        signal.getsignal(signal.SIGINT) is signal.default_int_handler


def hold():
    """From now on, record SIGINT instead of raising (until :func:`release`); idempotent."""
    if _held or not _ours():
        return
    received = []
    _held["previous"] = signal.signal(signal.SIGINT, lambda signum, frame: received.append(1))
    _held["received"] = received


def release():
    """Restore the handler :func:`hold` replaced; whether a SIGINT arrived meanwhile."""
    if not _held:
        return False
    signal.signal(signal.SIGINT, _held.pop("previous"))
    return bool(_held.pop("received"))


@contextlib.contextmanager
def deferred():
    """Run the body with SIGINT held back; one that arrived meanwhile raises
    ``KeyboardInterrupt`` after the body has finished (not if the body raised)."""
    if not _ours():
        yield
        return
    received = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(1))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt
