"""Arguments shared by several commands, spelled the same in each, and their parsing.

A bad value is reported naming the option as typed (``--seed``, ``-o random_state``); an option
setting a hyper-parameter is parsed, helped and checked by :mod:`mlnn.model.params`. A negative
number (``-1``, ``-1e-3``, ``-inf``) is taken as a value, so that its check says what is wrong.
"""

import contextlib
import re
import sys

from mlnn.base.errors import MLNNError
from mlnn.base.progress import DownloadProgress, wanted
from mlnn.base.validation import check_integer
from mlnn.datasets import load
from mlnn.datasets.paths import check_data_dir, offline
from mlnn.datasets.registry import SPECS
from mlnn.model.params import PARAMS

#: What argparse should take for a negative number, hence a value: -1, -0.5, -1e-3, -inf, -nan.
NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$|^-(inf|infinity|nan)$",
                             re.IGNORECASE)

#: The least value of each integer option that only the command line has.
MINIMUMS = {"--seed": 0, "--warmup": 0, "--max-updates": 1, "--max-documents": 1, "--epochs": 1}


def add_dataset(parser, required=True, default=None):
    """``--dataset NAME`` and ``-o/--option KEY=VALUE``."""
    parser.add_argument("--dataset", required=required, default=default,
                        help="dataset name (see 'data list')"
                             + (f"; default {default}" if default else ""))
    add_option(parser)


def add_offline(parser):
    parser.add_argument("--offline", action="store_true",
                        help="never download: fail, saying which files to place where, when the "
                             "dataset's files are missing (also MLNN_OFFLINE=1)")


def add_progress(parser):
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--progress", action="store_true",
                       help="show progress lines on standard error even when it is not a "
                            "terminal")
    group.add_argument("--quiet", action="store_true", help="no progress lines")


def add_option(parser):
    parser.add_argument("-o", "--option", action="append", metavar="KEY=VALUE",
                        help="dataset option (repeatable), e.g. -o stem=false or -o n_train=1000")


def add_seed(parser):
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def add_param(parser, option, param, default=None, shown=None):
    """``option`` (``--epochs``) setting the hyper-parameter ``param`` (``max_epochs``); without
    a ``default`` it stays None when not given, and ``shown`` says which default then applies."""
    spec = PARAMS[param]
    parser._negative_number_matcher = NEGATIVE_NUMBER     # see the module doc
    shown = shown or f"default {default}"
    parser.add_argument(option, type=spec.parse, default=default,
                        help=f"{param}: {spec.help.rstrip('.')} ({shown})".replace("%", "%%"))


def show_progress(args):
    """Whether to print progress lines (:func:`mlnn.base.progress.wanted`)."""
    return wanted(quiet=getattr(args, "quiet", False), force=getattr(args, "progress", False),
                  stream=sys.stderr)


def download_progress(args):
    """A download's ``progress=``: a line per tenth of the file on standard error, or None."""
    if show_progress(args):
        return lambda filename: DownloadProgress(filename, stream=sys.stderr)
    return None


def given_params(args, options):
    """``{hyper-parameter: value}`` of the ``options`` (hyper-parameter → option) given in
    ``args``, unchecked."""
    values = {param: getattr(args, option.lstrip("-").replace("-", "_"))
              for param, option in options.items()}
    return {param: value for param, value in values.items() if value is not None}


def check_options(args, *names):
    """Check the integer options ``names`` (keys of :data:`MINIMUMS`) that were given."""
    for name in names:
        value = getattr(args, name.lstrip("-").replace("-", "_"))
        if value is not None:
            check_integer(value, name, minimum=MINIMUMS[name])


def load_dataset(args, name=None, directory=None):
    """The dataset ``--dataset`` (or ``name``) with the ``-o`` options, from ``directory``
    (``--data-dir``, else ``$MLNN_DATA``), downloaded if missing unless ``--offline`` or
    ``MLNN_OFFLINE`` forbid it."""
    name = name or args.dataset
    options = parse_options(args.option)
    if directory is not None and name in SPECS and SPECS[name].files:
        check_data_dir(directory, "--data-dir")     # named as typed (load names it data_dir)
    download = not (getattr(args, "offline", False) or offline())
    return load(name, data_dir=directory, download=download, progress=download_progress(args),
                **options)


def parse_value(text):
    """A command-line value as bool, None, int or float where it reads as one, else the text."""
    words = {"true": True, "false": False, "none": None}
    if text.lower() in words:
        return words[text.lower()]
    for kind in (int, float):
        with contextlib.suppress(ValueError):
            return kind(text)
    return text


def parse_options(pairs):
    """``["key=value", ...]`` (``-o/--option``) as a dict of :func:`parse_value` values."""
    options = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise MLNNError(f"option {pair!r} is not KEY=VALUE")
        options[key] = parse_value(value)
        if key == "random_state" and options[key] is not None:
            check_integer(options[key], "-o random_state", minimum=0)
    return options
