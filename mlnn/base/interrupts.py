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
nothing but :mod:`signal`, so that it loads before anything else.
"""

import contextlib
import signal

_held = {}


def _replace(received):
    """Install a SIGINT handler that appends to ``received``; the handler it replaced, or None
    if SIGINT is not Python's default handler's to hold (another handler, SIG_IGN) or this is
    not the main thread (where ``signal.signal`` raises ValueError)."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return None
    try:
        return signal.signal(signal.SIGINT, lambda signum, frame: received.append(1))
    except ValueError:
        return None


def hold():
    """From now on, record SIGINT instead of raising (until :func:`release`); idempotent."""
    if _held:
        return
    received = []
    previous = _replace(received)
    if previous is not None:
        _held.update(previous=previous, received=received)


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
    received = []
    previous = _replace(received)
    if previous is None:
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt
