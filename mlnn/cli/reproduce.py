"""``reproduce``: the paper's Table 3 on a list of datasets and seeds, next to the paper's numbers.

The datasets and ``--out`` are checked before any work, then ``--out`` is locked against a second
run; each method is stored as it ends, so after Ctrl-C the same command resumes
(:mod:`mlnn.paper.study`).
"""

import sys
import time

from mlnn.base import interrupts
from mlnn.base.errors import MLNNError
from mlnn.base.fileio import output_directory
from mlnn.base.lock import directory_lock
from mlnn.base.validation import check_integer
from mlnn.cli.options import add_option, add_progress, load_dataset, parse_options, show_progress
from mlnn.datasets.registry import check_request
from mlnn.model.stopping_rules import STOPPING_RULES
from mlnn.paper.methods import resolve
from mlnn.paper.results import stem
from mlnn.paper.reproduce import BUDGETS, DECLARED_RULE
from mlnn.paper.selection import CRITERIA
from mlnn.paper.study import run_study


def register(subparsers):
    parser = subparsers.add_parser(
        "reproduce", help="run the paper's methods on a dataset and compare with Table 3",
        description="Runs the methods with model selection on a validation split of the training "
                    "data, evaluates on the test split, and writes CSV, Markdown and JSON results "
                    "next to the paper's numbers.")
    parser.add_argument("--dataset", help="one dataset name (see 'data list')")
    parser.add_argument("--datasets", nargs="+", metavar="NAME",
                        help="several datasets, run one after the other")
    add_option(parser)
    parser.add_argument("--methods", nargs="+", metavar="METHOD",
                        help="methods to run (default: the paper's eight; bpmll-original adds "
                             "BP-MLL as Zhang & Zhou publish it)")
    parser.add_argument("--out", default="figures",
                        help="output directory (default: figures); methods already stored there "
                             "for the same dataset, seed and settings are kept and not rerun")
    parser.add_argument("--seed", "--seeds", dest="seeds", nargs="+", type=int, default=[0],
                        metavar="SEED", help="random seed(s) (default 0); seed 0 is stored as "
                        "run_<dataset>.json, seed k as run_<dataset>_seed<k>.json")
    parser.add_argument("--force", action="store_true",
                        help="run methods again even if their results are stored in --out")
    parser.add_argument("--quick", action="store_true",
                        help="small budget: {hidden_units} hidden units, {max_epochs} epochs, "
                             "one η0 and one C".format(**BUDGETS["quick"]))
    parser.add_argument("--learning-rates", nargs="+", type=float, metavar="ETA",
                        help="grid for η0 (default: the paper's "
                             + " ".join(map(str, BUDGETS["full"]["learning_rates"])) + ")")
    parser.add_argument("--C-values", nargs="+", type=float, metavar="C",
                        help="grid for the SVMs' C (default: the paper's 0.001 ... 1000)")
    parser.add_argument("--select-by", choices=tuple(CRITERIA), default="rankloss",
                        help="validation criterion that selects η0 (default rankloss; meanF: the "
                             "mean of micro- and macro-F1 of the learned thresholds)")
    parser.add_argument("--sensitivity", action="store_true",
                        help="also refit and evaluate the η0 that the other criterion selects")
    parser.add_argument("--stopping", choices=tuple(STOPPING_RULES),
                        default=DECLARED_RULE["rule"],
                        help="how the networks' number of epochs is chosen on validation for "
                             "the main rows (default {rule}, declared in the README; rankloss or "
                             "meanF: early stopping with patience {patience}; fixed: the "
                             "budget's {max_epochs} epochs)".format(**DECLARED_RULE,
                                                                   **BUDGETS["full"]))
    parser.add_argument("--stopping-sensitivity", action="store_true",
                        help="also refit and evaluate the networks under the other stopping "
                             "rules, from the same selection runs (sensitivity rows)")
    parser.add_argument("--no-refit", action="store_true",
                        help="keep the model trained without the validation documents")
    add_progress(parser)
    parser.set_defaults(func=run_reproduce)


def run_reproduce(args):
    methods = [resolve(m) for m in args.methods] if args.methods else None  # fail fast
    datasets = ([args.dataset] if args.dataset else []) + list(args.datasets or [])
    if not datasets:
        raise MLNNError("give --dataset NAME or --datasets NAME ...")
    seeds = [check_integer(seed, "--seed", minimum=0) for seed in dict.fromkeys(args.seeds)]
    other_rules = tuple(rule for rule in STOPPING_RULES if rule != args.stopping) \
        if args.stopping_sensitivity else ()          # the sensitivity rows' rules
    for name in datasets:
        check_request(name, parse_options(args.option))
    started = time.perf_counter()
    try:
        with output_directory(args.out, "--out") as out, directory_lock(out, "--out"):
            jobs = run_study(datasets, seeds, out, lambda name: load_dataset(args, name),
                             methods=methods, force=args.force, quick=args.quick,
                             refit=not args.no_refit, learning_rates=args.learning_rates,
                             C_values=args.C_values, select_by=args.select_by,
                             sensitivity=args.sensitivity, progress=show_progress(args),
                             stopping=args.stopping, other_rules=other_rules)
    except KeyboardInterrupt as stop:            # also SIGTERM (interrupts.Terminated)
        line, code = interrupts.report(stop)
        print(f"{line}; the methods completed so far are stored in {args.out}", file=sys.stderr)
        return code
    if len(jobs) == 1:
        print((out / f"table3_{stem(jobs[0].dataset, jobs[0].seed)}.md").read_text())
    names = ", ".join(f"run_{stem(job.dataset, job.seed)}.json" for job in jobs)
    print(f"results in {out}: {names} with their table3_*.csv and .md "
          f"({time.perf_counter() - started:.0f}s)")
    return 0

