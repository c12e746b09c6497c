"""The command line, ``python -m mlnn COMMAND ...``: a thin shell over the library.

Each command group is one module whose ``register(subparsers)`` adds its parsers and sets
``func`` to a handler ``run_<command>(args)`` that returns the exit code; shared options are
spelled the same everywhere (:mod:`mlnn.cli.options`). Nothing outside this package imports it.

:func:`main` is the one place that turns failures into messages: bad arguments, the project's
errors, the operating system's and undecodable text are one line ``mlnn: error: ...`` (exit code
2); Ctrl-C is ``mlnn: interrupted`` (130), SIGTERM ``mlnn: terminated`` (143), a file being
written left as it was. Each distinct warning is one line ``mlnn: warning: ...``, printed once; a
closed standard output (``| head``) ends the command quietly; ``MLNN_TRACEBACK=1`` gives the
Python traceback instead.
"""

import argparse
import contextlib
import errno
import io
import os
import sys
import warnings

from mlnn.base import interrupts
from mlnn.base.errors import MLNNError, MLNNWarning
from mlnn.base.fileio import os_error_message
from mlnn.cli import bench, course, data, experiment, model, reproduce

#: The command groups, in the order ``--help`` lists them.
COMMAND_GROUPS = (data, model, reproduce, bench, experiment, course)


class Parser(argparse.ArgumentParser):
    """argparse's parser, reporting a bad argument (unknown option, invalid int, ...) by raising
    :class:`MLNNError` (printed by :func:`main` as one line) instead of printing the usage and
    exiting."""

    def error(self, message):
        raise MLNNError(f"{message} (see '{self.prog} --help')")


def build_parser():
    """The argument parser of ``python -m mlnn`` with every command."""
    parser = Parser(
        prog="python -m mlnn",
        description="Multi-label text classification with neural networks (Nam et al., 2014).")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for group in COMMAND_GROUPS:
        group.register(subparsers)
    return parser


def main(argv=None):
    """Parse ``argv`` (default: ``sys.argv[1:]``), run the command, return its exit code."""
    stop = interrupts.release()         # Ctrl-C or SIGTERM while ``python -m mlnn`` loaded
    if stop is not None:
        return _fail(*interrupts.report(stop))
    if os.environ.get("MLNN_TRACEBACK") == "1":
        args = build_parser().parse_args(argv)
        return args.func(args) or 0
    with warnings.catch_warnings(), _whole_writes(), interrupts.sigterm_stops():
        warnings.simplefilter("default", MLNNWarning)     # each distinct warning once
        warnings.showwarning = _show_warning
        try:
            args = build_parser().parse_args(argv)
            code = args.func(args) or 0
            sys.stdout.flush()          # a failure to write the output is this command's
            return code
        except KeyboardInterrupt as stop:        # also SIGTERM (interrupts.Terminated)
            return _fail(*interrupts.report(stop))
        except BrokenPipeError:
            return _closed_stdout()
        except MLNNError as error:
            return _fail(f"mlnn: error: {_one_line(error)}")
        except OSError as error:
            return _fail(f"mlnn: error: {_one_line(_os_error_line(error))}")
        except MemoryError:
            return _fail("mlnn: error: out of memory; try a smaller dataset, --hidden-units or "
                         "--batch-size")
        except UnicodeError as error:
            return _fail(f"mlnn: error: cannot decode the input: {_one_line(error)}; "
                         "save it as UTF-8")


#: Errors of writing that name no file: every file the library writes is named in its error,
#: so these come from writing the command's output (standard output redirected to a file).
_UNNAMED_WRITE_ERRORS = (errno.EFBIG, errno.ENOSPC, errno.EDQUOT)


def _os_error_line(error):
    if error.filename is None and error.errno in _UNNAMED_WRITE_ERRORS:
        _closed_stdout()                # what could not be written is dropped, not retried
        return os_error_message(error, "cannot write standard output")
    return os_error_message(error)


@contextlib.contextmanager
def _whole_writes():
    """Standard output that reports a short write: unbuffered (``python -u``), Python drops the
    rest of a partial write (a full disk) silently; a line-buffered writer raises the error."""
    stream = sys.stdout
    if not isinstance(getattr(stream, "buffer", None), io.FileIO):
        yield
        return
    stream.flush()
    raw = io.FileIO(os.dup(stream.fileno()), "w")      # closing it leaves standard output open
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(raw), encoding=stream.encoding,
                                  errors=stream.errors, line_buffering=True)
    try:
        yield
    finally:
        writer, sys.stdout = sys.stdout, stream
        with contextlib.suppress(OSError, ValueError):
            writer.close()


def _one_line(message):
    return " ".join(str(message).split("\n")).strip()


def _fail(line, code=2):
    print(line, file=sys.stderr, flush=True)
    return code


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Print a warning as one line: ``mlnn: warning: ...``."""
    text = str(message) if issubclass(category, MLNNWarning) else \
        f"{category.__name__}: {message}"
    print(f"mlnn: warning: {_one_line(text)}", file=sys.stderr, flush=True)


def _closed_stdout():
    """The reader of standard output went away (``| head``): stop quietly, as ``cat`` does."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 1
