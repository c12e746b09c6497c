"""Arguments shared by several commands, spelled the same in each, and their parsing."""

from mlnn.datasets import load
from mlnn.errors import MLNNError


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


def load_dataset(args, name=None):
    """The dataset named by ``--dataset`` (or ``name``), with the ``-o`` options applied."""
    return load(name or args.dataset, **parse_options(args.option))


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
    return options
