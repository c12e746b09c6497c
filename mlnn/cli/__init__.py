"""The command line, ``python -m mlnn COMMAND ...``: a thin shell over the library.

Each command group is one module of this package with ``register(subparsers)``, which adds its
parsers and sets ``func`` to its handler ``run_<command>(args)`` (returning an exit code):

==============  ===========================================================================
module          commands
==============  ===========================================================================
``data``        ``data info | export | fetch | list``: datasets
``model``       ``train``, ``evaluate``, ``predict``: one network method, its model file
``reproduce``   ``reproduce``: the paper's Table 3 on one dataset
``experiment``  ``experiment``: the convergence experiments behind Figs. 3-4
``bench``       ``bench``: seconds per epoch, where the time goes, peak memory
==============  ===========================================================================

Options shared by several commands are spelled the same everywhere (:mod:`mlnn.cli.options`):
``--dataset``, ``-o/--option KEY=VALUE`` (a dataset option), ``--seed``, ``--out``, ``--json``.
Errors of the project's own type are printed as one line, ``mlnn: error: ...``, with exit
code 2. Nothing outside this package imports from it.
"""

import argparse
import sys

from mlnn.cli import bench, data, experiment, model, reproduce
from mlnn.errors import MLNNError

#: The command groups, in the order ``--help`` lists them.
COMMAND_GROUPS = (data, model, reproduce, bench, experiment)


def build_parser():
    """The argument parser of ``python -m mlnn`` with every command."""
    parser = argparse.ArgumentParser(
        prog="python -m mlnn",
        description="Multi-label text classification with neural networks (Nam et al., 2014).")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for group in COMMAND_GROUPS:
        group.register(subparsers)
    return parser


def main(argv=None):
    """Parse ``argv`` (default: ``sys.argv[1:]``), run the command, return its exit code."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args) or 0
    except MLNNError as error:
        print(f"mlnn: error: {error}", file=sys.stderr)
        return 2
