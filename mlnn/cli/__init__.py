"""The command line, ``python -m mlnn COMMAND ...``: a thin shell over the library.

Each command group is one module of this package with ``register(subparsers)``, which adds its
parsers and sets ``func`` to its handler ``run_<command>(args)`` (returning an exit code):

==============  ===========================================================================
module          commands
==============  ===========================================================================
``data``        ``data info | export | fetch | list``: datasets
``model``       ``train``, ``evaluate``, ``predict``: one network method, its model file
``reproduce``   ``reproduce``: the paper's Table 3 on datasets × seeds, resumable
``experiment``  ``experiment``: the convergence experiments behind Figs. 3-4
``bench``       ``bench``: seconds per epoch, where the time goes, peak memory
``course``      ``course metadata | source``: the course in nbgrader's format
==============  ===========================================================================

Options shared by several commands are spelled the same everywhere (:mod:`mlnn.cli.options`):
``--dataset``, ``-o/--option KEY=VALUE`` (a dataset option), ``--seed``, ``--out``, ``--json``.
Nothing outside this package imports from it.

Data and progress (:mod:`mlnn.cli.options`). Commands that load a dataset download its pinned
archive on first use (Reuters-21578, SHA-256 verified) unless ``--offline`` or
``MLNN_OFFLINE=1``. Progress lines (:mod:`mlnn.base.progress`) go to standard error: shown when it
is a terminal, hidden when it is not, forced by ``--progress``, silenced by ``--quiet``.

Errors and exit codes. :func:`main` is the one place that turns failures into messages: bad
arguments (argparse's), the project's errors (:class:`~mlnn.base.errors.MLNNError`), the operating
system's errors of reading and writing (``OSError``: permission denied, no space left, ...) and
undecodable text are printed as one line, ``mlnn: error: ...``, with exit code 2; Ctrl-C prints
``mlnn: interrupted`` and exits with 130, SIGTERM (``kill``, ``timeout``, a scheduler) likewise
``mlnn: terminated`` with 143, a file being written left as it was (also while the modules load,
see :mod:`mlnn.__main__` and :mod:`mlnn.base.interrupts`);
warnings of the project (a damaged cache entry that was rebuilt, a label without a positive
training document) are one line ``mlnn: warning: ...``, each distinct one once per command.
A closed standard output (``| head``) ends the command quietly. Set ``MLNN_TRACEBACK=1`` to get
the Python traceback instead (for debugging).
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


class ArgumentError(MLNNError):
    """A command-line argument argparse rejects (unknown option, invalid int, ...)."""


class Parser(argparse.ArgumentParser):
    """argparse's parser, reporting a bad argument by raising :class:`ArgumentError` (printed by
    :func:`main` as one line) instead of printing the usage and exiting."""

    def error(self, message):
        raise ArgumentError(f"{message} (see '{self.prog} --help')")


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
    stop = interrupts.release()         # Ctrl-C or SIGTERM while ``python -m mlnn`` started
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
    """Standard output that reports a short write. Unbuffered (``python -u``,
    ``PYTHONUNBUFFERED``), Python's text stream writes straight to the file and ignores a
    partial write (a full disk, a file-size limit), silently dropping the rest of the output;
    a line-buffered writer over the same file retries the rest and raises the error."""
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
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 1
