r"""``python -m mlnn bench``: how fast a network of the paper trains, where the time goes, and how
much memory it takes.

One run trains a method of :mod:`mlnn.methods` (AdaGrad, paper Sec. 3.5) on the training split of
a dataset with the real trainer, :func:`mlnn.training.train`, for ``warmup + epochs`` epochs and
reports:

* seconds per epoch: the median over the timed epochs (the warm-up epochs are left out: they pay
  for first-touch page faults of the AdaGrad state and warm the caches), and documents per second;
* a breakdown of each epoch into the four calls the trainer makes per minibatch — the forward
  pass, the loss (its value and δ2), the backward pass (δ1 and the products of the gradients) and
  the optimizer update — plus the rest (minibatch slicing, dropout masks, bookkeeping). The calls
  are timed by wrapping the network, the loss and the optimizer in :class:`Stopwatch` proxies, so
  the breakdown is of the same run as the epoch times, not of a re-implementation of the loop;
* peak memory: ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` of the whole process (interpreter,
  libraries and data included), next to the bytes of the training data, the parameters and the
  optimizer state;
* the PWE δ2 (paper Sec. 3.4) in its pairwise O(|y||ȳ|) form and its factorised O(L) form against
  the number of labels L on synthetic scores: the pairwise cost grows with L² for a fixed label
  density, the factorised one with L (see :class:`mlnn.losses.PairwiseExponential`).

The numbers are wall-clock times on a possibly shared machine: run it on an idle machine, and
compare implementations in the same session.
"""

import json
import os
import platform
import resource
import sys
import time
from collections import defaultdict

import numpy as np
import scipy
import scipy.sparse as sp

from mlnn.datasets.cli import parse_options
from mlnn.errors import MLNNError
from mlnn.losses import PairwiseExponential, get_loss
from mlnn.methods import ALIASES, METHODS, resolve
from mlnn.network import Network
from mlnn.optimizers import AdaGrad
from mlnn.training import train
from mlnn.validation import check_X, check_Y

#: The phases of the breakdown: which calls of which object each one times.
PHASES = {"network": {"forward": "forward", "backward": "backward"},
          "loss": {None: "loss"},                # every public method: value, delta, excluded
          "optimizer": {"step": "optimizer"}}
PHASE_ORDER = ("forward", "loss", "backward", "optimizer")

PHASE_LABELS = {"forward": "forward (X W1, h, z2, o)",
                "loss": "loss value and δ2",
                "backward": "backward (δ1, Xᵀδ1, hᵀδ2)",
                "optimizer": "optimizer update (AdaGrad)",
                "other": "other (minibatches, masks, bookkeeping)"}

DEFAULT_PWE_LABELS = (10, 30, 100, 300, 1000, 4000)

#: Relevant labels per document in the PWE timing, as a fraction of L (Delicious: 19 of 983).
PWE_DENSITY = 0.02

#: Environment variables that set the BLAS thread count; the report shows the ones that are set.
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


class Stopwatch:
    """Adds the wall-clock time of calls to chosen methods of an object to ``totals[phase]``.

    ``Stopwatch(target, phases, totals)`` behaves like ``target`` (every attribute is looked up on
    it), except that a call of a method named in ``phases`` (method name → phase; the key None
    stands for every other public method) also adds its duration to ``totals[phase]``.
    """

    def __init__(self, target, phases, totals):
        self._target, self._phases, self._totals = target, phases, totals

    def __getattr__(self, name):
        attribute = getattr(self._target, name)
        phase = self._phases.get(name, None if name.startswith("_") else self._phases.get(None))
        if phase is None or not callable(attribute):
            return attribute

        def call(*args, **kwargs):
            start = time.perf_counter()
            try:
                return attribute(*args, **kwargs)
            finally:
                self._totals[phase] += time.perf_counter() - start
        return call


def machine_info():
    """Cores, CPU model, Python, NumPy and SciPy versions and the BLAS NumPy uses."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    threads = {name: os.environ[name] for name in THREAD_VARIABLES if name in os.environ}
    return {"cores": os.cpu_count(), "cpu": cpu, "python": platform.python_version(),
            "numpy": np.__version__, "scipy": scipy.__version__, "blas": blas_info(),
            "thread_settings": threads}


def blas_info():
    """The BLAS library (and its thread count, from threadpoolctl when it is installed)."""
    try:
        from threadpoolctl import threadpool_info
        pools = [pool for pool in threadpool_info() if pool.get("user_api") == "blas"]
        if pools:
            return "; ".join(f"{pool.get('internal_api')} {pool.get('version')} "
                             f"({pool.get('num_threads')} threads)" for pool in pools)
    except ImportError:
        pass
    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        return f"{blas.get('name')} {blas.get('version')}"
    except Exception:     # numpy < 1.25 has no mode="dicts"; the BLAS name is then not reported
        return "unknown"


def peak_rss_mb():
    """The peak resident set size of this process so far, in MiB (``ru_maxrss``)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10   # bytes on macOS, KiB else


def nbytes(*arrays):
    """The bytes held by dense arrays and CSR matrices."""
    total = 0
    for array in arrays:
        if sp.issparse(array):
            total += array.data.nbytes + array.indices.nbytes + array.indptr.nbytes
        else:
            total += np.asarray(array).nbytes
    return total


def load_training_data(name, options, max_documents, dtype):
    """The training split of a dataset of :mod:`mlnn.datasets` as (X, Y): X CSR in ``dtype``."""
    from mlnn import datasets
    data = datasets.load(name, **options)
    X, Y = data.X_train, data.Y_train
    if max_documents is not None:
        X, Y = X[:max_documents], Y[:max_documents]
    return check_X(X, "X", dtype=dtype), check_Y(Y, "Y", n_samples=X.shape[0])


def benchmark_training(X, Y, method="nn-ad", batch_size=64, hidden_units=1000, epochs=5, warmup=1,
                       learning_rate=0.01, dtype=np.float32, random_state=0):
    """Train ``method`` on (X, Y) for ``warmup + epochs`` epochs and time it; returns a dict.

    Keys: ``epoch_seconds`` (the timed epochs), ``seconds_per_epoch`` (their median),
    ``docs_per_second``, ``breakdown_seconds`` (median seconds per epoch of each phase of
    :data:`PHASES` and ``other``), ``peak_rss_mb`` and ``footprint_mb`` (``data``, ``parameters``,
    ``optimizer_state``, ``total``) with ``peak_rss_ratio`` = peak_rss_mb / footprint total.
    """
    spec = METHODS[resolve(method)]
    if spec["kind"] != "nn":
        raise MLNNError(f"{method} is not a neural-network method; bench times the networks")
    loss = get_loss(spec["loss"])
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=hidden_units,
                                 hidden=spec["hidden_activation"], output=loss.output,
                                 random_state=random_state, dtype=dtype)
    optimizer = AdaGrad(learning_rate)
    totals = defaultdict(float)
    timed = {role: Stopwatch(target, PHASES[role], totals)
             for role, target in (("network", network), ("loss", loss), ("optimizer", optimizer))}
    marks = []      # (time, phase totals) at the start and at the end of every epoch

    def mark_epoch(record, _network):     # the trainer evaluates once per epoch by default
        marks.append((time.perf_counter(), dict(totals)))

    marks.append((time.perf_counter(), {}))
    train(timed["network"], timed["loss"], timed["optimizer"], X, Y, batch_size=batch_size,
          max_epochs=warmup + epochs, dropout=spec["dropout"], callbacks=[mark_epoch],
          random_state=random_state)
    peak = peak_rss_mb()

    epoch_seconds, phases = [], defaultdict(list)
    for (t0, before), (t1, after) in list(zip(marks, marks[1:]))[warmup:]:
        epoch_seconds.append(t1 - t0)
        spent = 0.0
        for phase in PHASE_ORDER:
            phases[phase].append(after.get(phase, 0.0) - before.get(phase, 0.0))
            spent += phases[phase][-1]
        phases["other"].append(t1 - t0 - spent)
    seconds = float(np.median(epoch_seconds))
    footprint = {"data": nbytes(X, Y),
                 "parameters": nbytes(*network.params.values()),
                 "optimizer_state": nbytes(*(array for state in optimizer.state.values()
                                             for array in state.values()))}
    footprint["total"] = sum(footprint.values())
    footprint_mb = {key: value / 2**20 for key, value in footprint.items()}
    return {"epoch_seconds": epoch_seconds, "seconds_per_epoch": seconds,
            "docs_per_second": X.shape[0] / seconds,
            "breakdown_seconds": {phase: float(np.median(values))
                                  for phase, values in phases.items()},
            "peak_rss_mb": peak, "footprint_mb": footprint_mb,
            "peak_rss_ratio": peak / footprint_mb["total"]}


def benchmark_pwe_delta(label_counts=DEFAULT_PWE_LABELS, n_documents=64, density=None, repeats=3,
                        dtype=np.float32, random_state=0):
    """Seconds for one PWE δ2 of an n_documents × L minibatch, pairwise vs factorised, per L.

    Scores o = tanh(z2) with z2 ~ N(0, 1); every document has max(1, round(density · L))
    relevant labels (at most L − 1), so |y||ȳ| grows like L² at a fixed density. Each time is
    the fastest of ``repeats`` calls. Returns a list of dicts ``labels``, ``relevant``,
    ``pairwise_seconds``, ``factorised_seconds``, ``ratio``.
    """
    density = PWE_DENSITY if density is None else density
    rng = np.random.default_rng(random_state)
    rows = []
    for L in label_counts:
        z2 = rng.normal(size=(n_documents, L)).astype(dtype)
        o = np.tanh(z2)
        relevant = min(max(1, round(density * L)), L - 1)
        Y = np.zeros((n_documents, L), dtype=dtype)
        for i in range(n_documents):
            Y[i, rng.choice(L, relevant, replace=False)] = 1
        row = {"labels": int(L), "relevant": int(relevant)}
        for form in PairwiseExponential.FORMS:
            loss, best = PairwiseExponential(form), float("inf")
            for _ in range(repeats):
                start = time.perf_counter()
                loss.delta(z2, o, Y)
                best = min(best, time.perf_counter() - start)
            row[f"{form}_seconds"] = best
        row["ratio"] = row["pairwise_seconds"] / row["factorised_seconds"]
        rows.append(row)
    return rows


def _parse_label_counts(text):
    if text.strip().lower() in ("", "none"):
        return ()
    try:
        counts = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise MLNNError(f"--pwe-labels must be comma-separated integers, got {text!r}") from None
    if any(count < 2 for count in counts):
        raise MLNNError(f"--pwe-labels needs at least 2 labels each, got {text!r}")
    return counts


def run(args):
    """Run the benchmark described by the parsed command-line ``args``; returns the result dict."""
    for name in ("batch_size", "hidden_units", "epochs"):
        if getattr(args, name) < 1:
            raise MLNNError(f"--{name.replace('_', '-')} must be a positive integer")
    if args.warmup < 0:
        raise MLNNError("--warmup must be 0 or more")
    if args.max_documents is not None and args.max_documents < 1:
        raise MLNNError("--max-documents must be a positive integer")
    dtype = np.dtype(args.dtype).type
    method = resolve(args.method)
    label_counts = _parse_label_counts(args.pwe_labels)
    X, Y = load_training_data(args.dataset, parse_options(args.option), args.max_documents, dtype)
    result = {"dataset": args.dataset, "method": method, "n_documents": X.shape[0],
              "n_features": X.shape[1], "n_labels": Y.shape[1],
              "nnz_per_document": X.nnz / max(X.shape[0], 1), "batch_size": args.batch_size,
              "hidden_units": args.hidden_units, "dtype": np.dtype(dtype).name,
              "learning_rate": args.learning_rate, "warmup": args.warmup, "epochs": args.epochs,
              "machine": machine_info()}
    result.update(benchmark_training(X, Y, method, args.batch_size, args.hidden_units, args.epochs,
                                     args.warmup, args.learning_rate, dtype, args.seed))
    result["pwe_delta"] = benchmark_pwe_delta(label_counts, n_documents=args.batch_size,
                                              dtype=dtype, random_state=args.seed)
    return result


def format_report(result):
    """The human-readable report of a :func:`run` result."""
    machine = result["machine"]
    lines = [
        f"{result['method']} on {result['dataset']}: {result['n_documents']:,} documents × "
        f"{result['n_features']:,} features ({result['nnz_per_document']:.1f} nonzeros each), "
        f"{result['n_labels']} labels; batch {result['batch_size']}, "
        f"{result['hidden_units']} hidden units, {result['dtype']}, AdaGrad η0 = "
        f"{result['learning_rate']}",
        f"machine: {machine['cores']} cores, {machine['cpu']}; Python {machine['python']}, "
        f"NumPy {machine['numpy']}, SciPy {machine['scipy']}, BLAS {machine['blas']}"
        + "".join(f", {name}={value}"
                  for name, value in machine.get("thread_settings", {}).items()),
        f"epochs: {result['warmup']} warm-up + {result['epochs']} timed: "
        + " ".join(f"{seconds:.3f}" for seconds in result["epoch_seconds"]) + " s",
        f"seconds per epoch (median): {result['seconds_per_epoch']:.3f}    "
        f"documents per second: {result['docs_per_second']:,.0f}",
        "time per epoch (median of the timed epochs):",
    ]
    total = sum(result["breakdown_seconds"].values()) or 1.0
    for phase, seconds in result["breakdown_seconds"].items():
        share = 100 * seconds / total
        lines.append(f"  {PHASE_LABELS[phase]:42s} {seconds:8.3f} s  {share:5.1f} %")
    footprint = result["footprint_mb"]
    lines.append(f"peak memory (ru_maxrss, whole process): {result['peak_rss_mb']:.0f} MiB; data "
                 f"{footprint['data']:.1f} + parameters {footprint['parameters']:.1f} + optimizer "
                 f"state {footprint['optimizer_state']:.1f} = {footprint['total']:.1f} MiB "
                 f"(peak / that = {result['peak_rss_ratio']:.2f})")
    if result["pwe_delta"]:
        lines.append(f"PWE δ2 of a {result['batch_size']}-document minibatch, pairwise vs "
                     f"factorised, |y| = {100 * PWE_DENSITY:g} % of L (fastest of 3):")
        lines.append(f"  {'L':>6s} {'|y|':>5s} {'pairwise ms':>12s} {'factorised ms':>14s} "
                     f"{'ratio':>8s}")
        for row in result["pwe_delta"]:
            lines.append(f"  {row['labels']:6d} {row['relevant']:5d} "
                         f"{1000 * row['pairwise_seconds']:12.3f} "
                         f"{1000 * row['factorised_seconds']:14.3f} {row['ratio']:8.1f}")
    return "\n".join(lines)


def _bench(args):
    result = run(args)
    print(json.dumps(result) if args.json else format_report(result))
    return 0


def register(subparsers):
    parser = subparsers.add_parser(
        "bench", help="time training: seconds per epoch, breakdown, peak memory, PWE δ2 cost",
        description="Trains a network method with AdaGrad on the training split of a dataset and "
                    "reports seconds per epoch (median after warm-up), documents per second, "
                    "where the time goes, peak memory, and the PWE δ2 in its pairwise and "
                    "factorised forms against the number of labels.")
    parser.add_argument("--dataset", default="reuters21578",
                        help="dataset name (see 'data info'; default reuters21578)")
    parser.add_argument("--option", action="append", metavar="KEY=VALUE",
                        help="a dataset option (repeatable), e.g. n_train=7770 for synthetic")
    parser.add_argument("--max-documents", type=int, default=None,
                        help="use only the first N training documents")
    parser.add_argument("--method", default="nn-ad",
                        choices=sorted(a for a, m in ALIASES.items() if METHODS[m]["kind"] == "nn"),
                        help="network method (default nn-ad)")
    parser.add_argument("--batch-size", type=int, default=64, help="minibatch size (default 64)")
    parser.add_argument("--hidden-units", type=int, default=1000, help="F (default 1000)")
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32",
                        help="floating-point type of training (default float32)")
    parser.add_argument("--epochs", type=int, default=5, help="timed epochs (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="warm-up epochs (default 1)")
    parser.add_argument("--learning-rate", type=float, default=0.01, help="η0 (default 0.01)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--pwe-labels", default=",".join(map(str, DEFAULT_PWE_LABELS)),
                        help="label counts L for the PWE δ2 timing, comma-separated, or 'none' "
                             f"(default {','.join(map(str, DEFAULT_PWE_LABELS))})")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=_bench)
