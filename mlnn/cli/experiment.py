"""``experiment``: one convergence experiment behind Figs. 3-4, its curves saved as CSV."""

from mlnn.base.errors import MLNNError
from mlnn.base.fileio import check_output_path
from mlnn.cli.options import (add_option, add_param, add_seed, check_options, given_params,
                              load_dataset)
from mlnn.figures.curves import CSV_COLUMNS
from mlnn.figures.experiments import DATASETS, EXPERIMENTS
from mlnn.model.params import DEFAULTS, check_params

#: The hyper-parameter ``experiment`` takes, and its option.
OPTIONS = {"learning_rate": "--learning-rate"}


def register(subparsers):
    parser = subparsers.add_parser(
        "experiment", help="run a convergence experiment behind Figs. 3-4 and save its curves",
        description="Train the networks of one convergence experiment (Figs. 3-4) and write the "
                    "validation curves as CSV.")
    parser.add_argument("name", choices=sorted(EXPERIMENTS))
    parser.add_argument("--dataset", default=None, help="dataset name (default: the figure's)")
    add_option(parser)
    parser.add_argument("--fast", action="store_true", help="tiny run to check the pipeline")
    parser.add_argument("--max-updates", type=int, default=None,
                        help="parameter updates per network (default: the figure's)")
    add_param(parser, "--learning-rate", "learning_rate",
              shown=f"dropout experiment only; default {DEFAULTS['learning_rate']}")
    add_seed(parser)
    parser.add_argument("--out", required=True, help="CSV file to write")
    parser.set_defaults(func=run_experiment)


def run_experiment(args):
    check_options(args, "--seed", "--max-updates")
    given = given_params(args, OPTIONS)
    check_params(given, OPTIONS)
    check_output_path(args.out, "--out", _is_curves_file, "a curves CSV file")
    kwargs = {"fast": args.fast, "random_state": args.seed, "csv_path": args.out,
              "verbose": True, "max_updates": args.max_updates}
    if given:
        if args.name != "dropout":
            raise MLNNError("--learning-rate applies to the dropout experiment only; the others "
                            "compare fixed learning rates")
        kwargs.update(given)
    if args.dataset is not None or args.option:
        kwargs["dataset"] = load_dataset(args, args.dataset or DATASETS[args.name])
    EXPERIMENTS[args.name](**kwargs)
    print(f"wrote {args.out}")
    return 0


def _is_curves_file(path):
    with open(path, "rb") as handle:
        return handle.read(64).startswith(",".join(CSV_COLUMNS[:2]).encode())
