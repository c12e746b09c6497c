"""The command line, ``python -m mlnn COMMAND ...``: a thin shell over the library.

Each module's ``register(subparsers)`` adds the commands :data:`COMMANDS` gives it, each with a
handler ``run_<command>(args)`` returning the exit code. A command imports its own module only
(``--help`` none), so that it starts in the time of the libraries it uses (``bench --startup``).

:func:`main` turns failures into one line ``mlnn: error: ...`` (exit code 2); Ctrl-C is
``mlnn: interrupted`` (130), SIGTERM ``mlnn: terminated`` (143); each distinct warning is one line
``mlnn: warning: ...``; a closed standard output (``| head``) ends quietly; ``MLNN_TRACEBACK=1``
gives the traceback instead.
"""

import argparse
import contextlib
import errno
import importlib
import io
import os
import sys
import warnings

from mlnn.base import interrupts
from mlnn.base.errors import MLNNError, MLNNWarning, os_error_message

#: Each command in ``--help``'s order: the module under ``mlnn.cli`` that adds it, its help line.
COMMANDS = {
    "data": ("data", "dataset statistics, export and download"),
    "train": ("model", "train one network method on a dataset"),
    "evaluate": ("model", "the ten measures of a saved model on a dataset split"),
    "predict": ("model", "label names for raw text or each document of an svmlight file"),
    "reproduce": ("reproduce", "run the paper's methods on a dataset and compare with Table 3"),
    "bench": ("bench", "time training: seconds per epoch, breakdown, peak memory, PWE δ2 cost"),
    "experiment": ("experiment", "run a convergence experiment behind Figs. 3-4 and save its "
                                 "curves"),
    "course": ("course", "the course in nbgrader's format"),
}


class Parser(argparse.ArgumentParser):
    """argparse's parser, raising :class:`MLNNError` on a bad argument instead of exiting."""

    def error(self, message):
        raise MLNNError(f"{message} (see '{self.prog} --help')")


def build_parser(argv=None):
    """The parser of ``python -m mlnn``: in full for the command ``argv`` names (every command
    without ``argv``), the others by name and help line only."""
    parser = Parser(
        prog="python -m mlnn",
        description="Multi-label text classification with neural networks (Nam et al., 2014).")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    named = next((word for word in argv if not word.startswith("-")), None) \
        if argv is not None else None
    wanted = {module for name, (module, _) in COMMANDS.items() if argv is None or name == named}
    for module in dict.fromkeys(module for module, _ in COMMANDS.values()):
        if module in wanted:
            importlib.import_module(f"mlnn.cli.{module}").register(subparsers)
    for name, (module, line) in COMMANDS.items():
        if module not in wanted:
            subparsers.add_parser(name, help=line)
    return parser


def main(argv=None):
    """Parse ``argv`` (default: ``sys.argv[1:]``), run the command, return its exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)         # imports the command's module
    stop = interrupts.release()         # Ctrl-C or SIGTERM while ``python -m mlnn`` loaded
    if stop is not None:
        return _fail(*interrupts.report(stop))
    if os.environ.get("MLNN_TRACEBACK") == "1":
        args = parser.parse_args(argv)
        return args.func(args) or 0
    with warnings.catch_warnings(), _whole_writes(), interrupts.sigterm_stops():
        warnings.simplefilter("default", MLNNWarning)     # each distinct warning once
        warnings.showwarning = _show_warning
        try:
            args = parser.parse_args(argv)
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


#: Errors of writing that name no file: those of the command's output (every file the library
#: writes is named in its error).
_UNNAMED_WRITE_ERRORS = (errno.EFBIG, errno.ENOSPC, errno.EDQUOT)


def _os_error_line(error):
    if error.filename is None and error.errno in _UNNAMED_WRITE_ERRORS:
        _closed_stdout()                # what could not be written is dropped, not retried
        return os_error_message(error, "cannot write standard output")
    return os_error_message(error)


@contextlib.contextmanager
def _whole_writes():
    """Standard output that reports a short write (a full disk), which Python drops silently
    when unbuffered (``python -u``)."""
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
    text = str(message) if issubclass(category, MLNNWarning) else \
        f"{category.__name__}: {message}"
    print(f"mlnn: warning: {_one_line(text)}", file=sys.stderr, flush=True)


def _closed_stdout():
    """The reader of standard output went away (``| head``): stop quietly, as ``cat`` does."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 1
