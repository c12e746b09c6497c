"""Arguments shared by several commands, spelled the same in each, and their parsing.

Values are checked here, before any work, with the project's own checks
(:mod:`mlnn.validation`), and a bad one is reported naming the option as the user typed it
(``--seed``, ``-o random_state``), not the Python parameter behind it.
"""

from mlnn.datasets import load
from mlnn.datasets.paths import check_data_dir, data_dir
from mlnn.datasets.registry import SPECS
from mlnn.errors import MLNNError
from mlnn.validation import check_integer, check_positive_float, check_positive_int


def add_dataset(parser, required=True, default=None):
    """``--dataset NAME`` and ``-o/--option KEY=VALUE`` (repeatable dataset options)."""
    parser.add_argument("--dataset", required=required, default=default,
                        help="dataset name (see 'data list')"
                             + (f"; default {default}" if default else ""))
    add_option(parser)


def add_option(parser):
    """``-o/--option KEY=VALUE``: a dataset option, repeatable."""
    parser.add_argument("-o", "--option", action="append", metavar="KEY=VALUE",
                        help="dataset option (repeatable), e.g. -o stem=false or -o n_train=1000")


def add_seed(parser):
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def check_seed(value, name="--seed"):
    """``value`` as an int; raise naming ``name`` unless it is an integer >= 0."""
    return check_integer(value, name, minimum=0)


#: Checks of numeric options that only the command line has, by option name.
OPTION_CHECKS = {"--seed": check_seed, "--max-updates": check_positive_int,
                 "--learning-rate": check_positive_float}


def check_options(args, *names):
    """Check the options ``names`` (keys of :data:`OPTION_CHECKS`) that were given."""
    for name in names:
        value = getattr(args, name.lstrip("-").replace("-", "_"))
        if value is not None:
            OPTION_CHECKS[name](value, name)


def load_dataset(args, name=None, directory=None):
    """The dataset named by ``--dataset`` (or ``name``), with the ``-o`` options applied.

    Its data directory (``directory``, from ``--data-dir``, else ``$MLNN_DATA``) is checked
    first, for datasets that read files.
    """
    name = name or args.dataset
    options = parse_options(args.option)
    spec = SPECS.get(name)
    if spec is not None and spec.kind != "synthetic":
        check_data_dir(directory if directory is not None else data_dir(),
                       "--data-dir" if directory is not None else "MLNN_DATA")
    return load(name, data_dir=directory, **options)


def parse_value(text):
    """A command-line value as bool, None, int or float where it reads as one, else the text."""
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "none":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_options(pairs):
    """``["key=value", ...]`` (from ``-o/--option``) as a dict, values read by :func:`parse_value`."""
    options = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise MLNNError(f"option {pair!r} is not KEY=VALUE")
        options[key] = parse_value(value)
        if key == "random_state" and options[key] is not None:
            check_seed(options[key], "-o random_state")
    return options
