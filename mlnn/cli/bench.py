"""``bench``: training (:mod:`mlnn.tools.bench`), ``--svm`` the BR SVMs beside liblinear
(:mod:`mlnn.tools.svm_bench`), ``--startup`` the command line's start (:mod:`mlnn.tools.startup`),
each reported with the machine it ran on."""

import json
import sys

from mlnn.base.errors import MLNNError
from mlnn.base.fileio import check_input_file
from mlnn.base.validation import check_integer
from mlnn.baselines.svm import DEFAULT_C_VALUES, DEFAULT_TOL
from mlnn.cli.options import (add_dataset, add_param, add_seed, check_options, given_params,
                              load_dataset)
from mlnn.model.params import DEFAULTS, check_params
from mlnn.paper.methods import PAPER_NETWORK_ALIASES, network_params, resolve
from mlnn.tools.bench import (DEFAULT_PWE_LABELS, PWE_DENSITY, benchmark_products,
                              benchmark_pwe_delta, benchmark_training)
from mlnn.tools.machine import machine_info
from mlnn.tools.startup import benchmark_startup, format_startup
from mlnn.tools.svm_bench import (LIBLINEAR_DUAL_TOL, SOLVERS, benchmark_svm,
                                  format_svm_report)

#: The hyper-parameters ``bench`` takes, and their options.
BENCH_OPTIONS = {"batch_size": "--batch-size", "hidden_units": "--hidden-units",
                 "dtype": "--dtype", "learning_rate": "--learning-rate"}

PHASE_LABELS = {"forward": "forward (X W1, h, z2, o)",
                "loss": "loss value and δ2",
                "backward": "backward (δ1, Xᵀδ1, hᵀδ2)",
                "optimizer": "optimizer update (AdaGrad)",
                "other": "other (minibatches, masks, bookkeeping)"}


def register(subparsers):
    parser = subparsers.add_parser(
        "bench", help="time training: seconds per epoch, breakdown, peak memory, PWE δ2 cost",
        description="Trains a network method with AdaGrad on the training split of a dataset and "
                    "reports seconds per epoch (median after warm-up), where the time goes, the "
                    "five matrix products alone (the floor of an epoch), peak memory, and the "
                    "PWE δ2 in its pairwise and factorised forms against the number of labels.")
    add_dataset(parser, required=False, default="reuters21578")
    parser.add_argument("--max-documents", type=int, default=None,
                        help="use only the first N training documents")
    parser.add_argument("--method", default="nn-ad", choices=PAPER_NETWORK_ALIASES,
                        help="network method (default nn-ad)")
    for param, option in BENCH_OPTIONS.items():
        add_param(parser, option, param, default=DEFAULTS[param])
    parser.add_argument("--epochs", type=int, default=5, help="timed epochs (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="warm-up epochs (default 1)")
    add_seed(parser)
    parser.add_argument("--pwe-labels", default=",".join(map(str, DEFAULT_PWE_LABELS)),
                        help="label counts L for the PWE δ2 timing, comma-separated, or 'none' "
                             "(default %(default)s)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    _add_svm_options(parser)
    group = parser.add_argument_group(
        "start-up (--startup)", "time 'python -m mlnn --help' and 'predict --text' on one "
        "sentence in fresh processes (median of --repeats runs), beside 'pip --version'")
    group.add_argument("--startup", action="store_true",
                       help="benchmark the start-up of the command line instead of training")
    group.add_argument("--model", default=None,
                       help="model file trained on text for predict --text (default: a small one "
                            "made for the run)")
    parser.set_defaults(func=run_bench)


def _add_svm_options(parser):
    group = parser.add_argument_group(
        "BR linear SVMs (--svm)",
        "time the squared-hinge SVMs of binary relevance at every C, mlnn's solvers beside "
        "liblinear (through scikit-learn, when installed) on the same problem and tolerance, "
        "and report the primal objective each reaches")
    group.add_argument("--svm", action="store_true",
                       help="benchmark the BR SVM solvers instead of network training")
    group.add_argument("--C-values", dest="C_values",
                       default=",".join(f"{C:g}" for C in DEFAULT_C_VALUES),
                       help="comma-separated C grid (default the paper's 0.001,...,1000)")
    for option, kind, default, text in (
            ("--tol", float, DEFAULT_TOL, "tolerance of the primal solvers"),
            ("--dual-tol", float, LIBLINEAR_DUAL_TOL, "tolerance of liblinear-dual"),
            ("--bias", float, 1.0, "the constant feature, liblinear's -B"),
            ("--repeats", int, 3, "runs per solver and C (per command with --startup); the "
                                  "median is reported"),
            ("--max-iter", int, 1000, "iteration limit of every solver")):
        group.add_argument(option, type=kind, default=default, help=f"{text} (default {default:g})")
    group.add_argument("--solvers", default=",".join(SOLVERS),
                       help=f"comma-separated, from {','.join(SOLVERS)} (default %(default)s)")


def run_bench(args):
    check_options(args, "--seed", "--max-documents")
    if args.startup:
        model = check_input_file(args.model, "--model") if args.model is not None else None
        result = benchmark_startup(check_integer(args.repeats, "--repeats", minimum=1), model)
        report = format_startup
    elif args.svm:
        result, report = measure_svm(args), format_svm_report
        if args.json:   # JSON object keys are strings: C as printed by %g
            result.update({key: {f"{C:g}": ratio for C, ratio in result[key].items()}
                           for key in ("ratios", "cold_ratios")})
    else:
        result, report = measure(args), format_report
    print(json.dumps(result) if args.json else report(result))
    return 0


def _training_split(args):
    dataset = load_dataset(args)
    return dataset.X_train[:args.max_documents], dataset.Y_train[:args.max_documents]


def _parse_list(text, kind, option):
    try:
        return tuple(kind(part) for part in text.split(","))
    except ValueError:
        what = "integers" if kind is int else "numbers"
        raise MLNNError(f"{option} must be comma-separated {what}, got {text!r}") from None


def measure_svm(args):
    C_values = _parse_list(args.C_values, float, "--C-values")
    solvers = tuple(part.strip() for part in args.solvers.split(",") if part.strip())
    X, Y = _training_split(args)
    result = benchmark_svm(X, Y, C_values=C_values, tol=args.tol, dual_tol=args.dual_tol,
                           bias=args.bias, repeats=args.repeats, max_iter=args.max_iter,
                           solvers=solvers, log=lambda line: print(line, file=sys.stderr))
    return {"dataset": args.dataset, **result, "machine": machine_info()}


def _parse_label_counts(text):
    if text.strip().lower() == "none":
        return ()
    counts = _parse_list(text, int, "--pwe-labels")
    if any(count < 2 for count in counts):
        raise MLNNError(f"--pwe-labels needs at least 2 labels each, got {text!r}")
    return counts


def measure(args):
    check_options(args, "--epochs", "--warmup")
    given = given_params(args, BENCH_OPTIONS)
    check_params(given, BENCH_OPTIONS)
    method = resolve(args.method)
    label_counts = _parse_label_counts(args.pwe_labels)
    X, Y = _training_split(args)
    result = {"dataset": args.dataset, "method": method, "n_documents": X.shape[0],
              "n_features": X.shape[1], "n_labels": Y.shape[1],
              "nnz_per_document": X.nnz / max(X.shape[0], 1), **given, "warmup": args.warmup,
              "epochs": args.epochs, "machine": machine_info()}
    result.update(benchmark_training(X, Y, epochs=args.epochs, warmup=args.warmup,
                                     random_state=args.seed, **network_params(method), **given))
    result["floor"] = benchmark_products(X, Y.shape[1], args.hidden_units, args.batch_size,
                                         args.dtype, epochs=args.epochs, random_state=args.seed)
    result["floor_ratio"] = result["seconds_per_epoch"] / result["floor"]["total"]
    result["cpu_floor_ratio"] = result["cpu_seconds_per_epoch"] / result["floor"]["cpu_total"]
    result["pwe_delta"] = benchmark_pwe_delta(label_counts, n_documents=args.batch_size,
                                              dtype=args.dtype, random_state=args.seed)
    return result


def format_report(result):
    machine, floor, footprint = result["machine"], result["floor"], result["footprint_mb"]
    lines = [
        "{method} on {dataset}: {n_documents:,} documents × {n_features:,} features "
        "({nnz_per_document:.1f} nonzeros each), {n_labels} labels; batch {batch_size}, "
        "{hidden_units} hidden units, {dtype}, AdaGrad η0 = {learning_rate}".format(**result),
        "machine: {cores} cores, {cpu}; Python {python}, NumPy {numpy}, SciPy {scipy}, "
        "BLAS {blas}".format(**machine) + "".join(
            f", {name}={value}" for name, value in machine.get("thread_settings", {}).items()),
        f"epochs: {result['warmup']} warm-up + {result['epochs']} timed: "
        + " ".join(f"{seconds:.3f}" for seconds in result["epoch_seconds"]) + " s",
        "seconds per epoch (median): {seconds_per_epoch:.3f} (CPU {cpu_seconds_per_epoch:.3f})"
        "    documents per second: {docs_per_second:,.0f}".format(**result),
        "time per epoch (median of the timed epochs):"]
    total = sum(result["breakdown_seconds"].values()) or 1.0
    lines += [f"  {PHASE_LABELS[phase]:42s} {seconds:8.3f} s  {100 * seconds / total:5.1f} %"
              for phase, seconds in result["breakdown_seconds"].items()]
    lines.append(f"the five products alone (median of {result['epochs']} epochs): "
                 f"{floor['total']:.3f} s (" + ", ".join(
                     f"{name} {seconds:.3f}" for name, seconds in floor["products"].items())
                 + f"); the epoch takes {result['floor_ratio']:.2f}× that floor (CPU time: "
                 f"{floor['cpu_total']:.3f} s, {result['cpu_floor_ratio']:.2f}×)")
    lines.append("peak memory (ru_maxrss, whole process): {0:.0f} MiB; data {data:.1f} + "
                 "parameters {parameters:.1f} + optimizer state {optimizer_state:.1f} = "
                 "{total:.1f} MiB (peak / that = {1:.2f})".format(
                     result["peak_rss_mb"], result["peak_rss_ratio"], **footprint))
    if result["pwe_delta"]:
        lines += [f"PWE δ2 of a {result['batch_size']}-document minibatch, pairwise vs "
                  f"factorised, |y| = {100 * PWE_DENSITY:g} % of L (fastest of 3):",
                  f"  {'L':>6s} {'|y|':>5s} {'pairwise ms':>12s} {'factorised ms':>14s} "
                  f"{'ratio':>8s}"]
    lines += [f"  {row['labels']:6d} {row['relevant']:5d} {1000 * row['pairwise_seconds']:12.3f} "
              f"{1000 * row['factorised_seconds']:14.3f} {row['ratio']:8.1f}"
              for row in result["pwe_delta"]]
    return "\n".join(lines)
