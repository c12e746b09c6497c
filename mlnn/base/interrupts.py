"""Stopping a command cleanly: Ctrl-C and SIGTERM, held back while something must not be cut.

In a command, SIGTERM raises :class:`Terminated`, a kind of ``KeyboardInterrupt``
(:func:`sigterm_stops`), so that it is handled as Ctrl-C is: an atomic write is undone and the
command prints one line and exits with 128 + the signal's number (:func:`report`). Two moments
must not be cut: writing the files of a finished result (:func:`deferred`) and loading NumPy and
SciPy as ``python -m mlnn`` starts (:func:`hold`, :func:`release`). Only the handlers named here
are replaced (an ignored signal stays ignored). This module imports nothing but :mod:`signal`.
"""

import contextlib
import signal

_held = {}


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Python is, as Ctrl-C raises ``KeyboardInterrupt``."""


def _terminate(signum, frame):
    raise Terminated


#: The stops: each signal, the exception it raises, and the handlers this module may replace
#: (SIGTERM's default action only while the command line starts, see :func:`hold`).
STOPS = {signal.SIGINT: KeyboardInterrupt, signal.SIGTERM: Terminated}
_OURS = {signal.SIGINT: (signal.default_int_handler,), signal.SIGTERM: (_terminate,)}
_AT_START = {signal.SIGINT: (signal.default_int_handler,),
             signal.SIGTERM: (_terminate, signal.SIG_DFL)}


def _replace(received, replaceable=_OURS):
    """{signal: the handler replaced} by one that appends the stop's exception to ``received``,
    for each stop whose handler is ``replaceable``; empty unless this is the main thread."""
    previous = {}
    for signum, stop in STOPS.items():
        if signal.getsignal(signum) in replaceable[signum]:
            try:
                previous[signum] = signal.signal(signum, lambda n, f, s=stop: received.append(s))
            except ValueError:
                return {}
    return previous


def _restore(previous):
    for signum, handler in previous.items():
        signal.signal(signum, handler)


def hold():
    """Record SIGINT and SIGTERM instead of acting until :func:`release` (as the command line
    starts); idempotent."""
    if _held:
        return
    received = []
    previous = _replace(received, _AT_START)
    if previous:
        _held.update(previous=previous, received=received)


def release():
    """Restore the handlers :func:`hold` replaced; the first stop that arrived meanwhile (a
    ``KeyboardInterrupt`` or :class:`Terminated`), or None."""
    if not _held:
        return None
    _restore(_held.pop("previous"))
    received = _held.pop("received")
    return received[0]() if received else None


@contextlib.contextmanager
def deferred():
    """Run the body with SIGINT and SIGTERM held back; the first stop that arrived meanwhile is
    raised after the body has finished (not if the body raised)."""
    received = []
    previous = _replace(received)
    try:
        yield
    finally:
        _restore(previous)
    if received:
        raise received[0]


@contextlib.contextmanager
def sigterm_stops():
    """Within the body, SIGTERM raises :class:`Terminated` (if it has its default action and this
    is the main thread); its previous handler is restored after."""
    previous = {}
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        with contextlib.suppress(ValueError):               # not the main thread
            previous[signal.SIGTERM] = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        _restore(previous)


def report(stop):
    """(the line, the exit code) of a command ended by ``stop``: 128 + the signal's number."""
    if isinstance(stop, Terminated):
        return "mlnn: terminated", 128 + signal.SIGTERM
    return "mlnn: interrupted", 128 + signal.SIGINT
