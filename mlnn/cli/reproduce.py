"""``reproduce``: the paper's Table 3 on one dataset, written next to the paper's numbers."""

import time

from mlnn.cli.options import add_dataset, add_seed, load_dataset
from mlnn.paper.reproduce import merge_previous, reproduce, write_results
from mlnn.paper.methods import resolve
from mlnn.paper.selection import CRITERIA


def register(subparsers):
    """Add ``reproduce`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "reproduce", help="run the paper's methods on a dataset and compare with Table 3",
        description="Runs the methods with model selection on a validation split of the training "
                    "data, evaluates on the test split, and writes CSV, Markdown and JSON results "
                    "next to the paper's numbers.")
    add_dataset(parser)
    parser.add_argument("--methods", nargs="+", metavar="METHOD",
                        help="methods to run (default: the paper's eight; bpmll-original adds "
                             "BP-MLL as Zhang & Zhou publish it)")
    parser.add_argument("--out", default="figures",
                        help="output directory (default: figures); results of other methods from "
                             "an earlier run with the same seed and budget there are kept")
    add_seed(parser)
    parser.add_argument("--quick", action="store_true",
                        help="small budget: 64 hidden units, 3 epochs, one η0 and one C")
    parser.add_argument("--learning-rates", nargs="+", type=float, metavar="ETA",
                        help="grid for η0 (default: the paper's 0.001 0.01 0.1)")
    parser.add_argument("--C-values", nargs="+", type=float, metavar="C",
                        help="grid for the SVMs' C (default: the paper's 0.001 ... 1000)")
    parser.add_argument("--select-by", choices=tuple(CRITERIA), default="rankloss",
                        help="validation criterion that selects η0 (default rankloss; meanF: the "
                             "mean of micro- and macro-F1 of the learned thresholds)")
    parser.add_argument("--sensitivity", action="store_true",
                        help="also refit and evaluate the η0 that the other criterion selects")
    parser.add_argument("--no-refit", action="store_true",
                        help="keep the model trained without the validation documents")
    parser.set_defaults(func=run_reproduce)


def run_reproduce(args):
    methods = [resolve(m) for m in args.methods] if args.methods else None  # fail fast
    dataset = load_dataset(args)
    started = time.perf_counter()

    def save(rows, run):
        run["seconds"] = time.perf_counter() - started
        return write_results(*merge_previous(rows, run, args.out), args.out)

    rows, run = reproduce(dataset, methods=methods, random_state=args.seed, quick=args.quick,
                          refit=not args.no_refit, learning_rates=args.learning_rates,
                          C_values=args.C_values, select_by=args.select_by,
                          sensitivity=args.sensitivity, after_each=save)
    out = save(rows, run)
    print((out / f"table3_{dataset.name}.md").read_text())
    print(f"wrote {out / f'table3_{dataset.name}.csv'}, .md and run_{dataset.name}.json "
          f"({run['seconds']:.0f}s)")
    return 0
