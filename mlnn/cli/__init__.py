"""The command line, ``python -m mlnn COMMAND ...``.

Each command lives in the module of its concept and exposes ``register(subparsers)``, which adds
its parser and sets ``func`` (called with the parsed arguments, returning an exit code). Errors of
the project's own type are printed as one line, ``mlnn: error: ...``, with exit code 2.
"""

import argparse
import importlib
import sys

from mlnn.errors import MLNNError

#: Modules that contribute commands, in the order ``--help`` lists them.
COMMAND_MODULES = [
    "mlnn.datasets.cli",
    "mlnn.commands",
    "mlnn.reproduce",
    "mlnn.bench",
    "mlnn.experiments",
]


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m mlnn",
        description="Multi-label text classification with neural networks (Nam et al., 2014).")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except MLNNError as error:
        print(f"mlnn: error: {error}", file=sys.stderr)
        return 2
