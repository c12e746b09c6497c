"""How fast a network of the paper trains, where the time goes, and how much memory it takes.

:func:`benchmark_training` times epochs of the real trainer, split into phases by
:class:`Stopwatch` proxies in the same run, and the peak memory beside the bytes of data,
parameters and optimizer state; :func:`benchmark_products` the five matrix products of an update
alone (an epoch's floor); :func:`benchmark_pwe_delta` the PWE δ2 (Sec. 3.4) in both forms.
"""

import time
import timeit
from collections import defaultdict

import numpy as np
import scipy.sparse as sp

from mlnn.base.errors import MLNNError
from mlnn.base.validation import check_choice, check_X, check_Y
from mlnn.model.builders import build
from mlnn.model.params import DEFAULT, DEFAULTS
from mlnn.nn.losses import PairwiseExponential
from mlnn.nn.training import train
from mlnn.tools.machine import peak_rss_mb

#: The phases of the breakdown: which calls of which object each one times.
PHASES = {"network": {"forward": "forward", "backward": "backward"},
          "loss": {"value_and_delta": "loss", "excluded": "loss"},
          "optimizer": {"step": "optimizer", "catch_up": "optimizer", "flush": "optimizer"}}
PHASE_ORDER = ("forward", "loss", "backward", "optimizer")

#: Hyper-parameters that a run of fixed epochs does not use: refused, never silently dropped.
NOT_TIMED = ("max_epochs", "patience", "stopping", "eval_every", "validation_fraction",
             "threshold", "threshold_features", "threshold_lambda", "threshold_intercept",
             "threshold_target", "sparse_output", "verbose", "random_state")

DEFAULT_PWE_LABELS = (10, 30, 100, 300, 1000, 4000)

#: Relevant labels per document in the PWE timing, as a fraction of L (Delicious: 19 of 983).
PWE_DENSITY = 0.02


class Stopwatch:
    """Behaves like ``target``, except that a call of a method named in ``phases`` (name →
    phase) adds its wall-clock time to ``totals[phase]``."""

    def __init__(self, target, phases, totals):
        self._target, self._phases, self._totals = target, phases, totals

    def __getattr__(self, name):
        attribute = getattr(self._target, name)
        if name not in self._phases:
            return attribute
        phase = self._phases[name]

        def call(*args, **kwargs):
            start = time.perf_counter()
            try:
                return attribute(*args, **kwargs)
            finally:
                self._totals[phase] += time.perf_counter() - start
        return call


def nbytes(*arrays):
    """The bytes held by dense arrays and CSR matrices (data, indices and indptr)."""
    return sum(a.data.nbytes + a.indices.nbytes + a.indptr.nbytes if sp.issparse(a)
               else np.asarray(a).nbytes for a in arrays)


def benchmark_training(X, Y, epochs, warmup, random_state=0, **params):
    """Train a network of ``params`` (else :data:`~mlnn.model.params.DEFAULTS`) on (X, Y) for
    ``warmup + epochs`` epochs: ``seconds_per_epoch`` (median of the timed), ``breakdown_seconds``
    (per phase of :data:`PHASES`), ``peak_rss_mb``, ``footprint_mb``, ..."""
    for name in params:
        check_choice(name, "hyper-parameter", DEFAULTS)
        if name in NOT_TIMED:
            raise MLNNError(f"hyper-parameter {name!r} has no effect on a timed run of fixed "
                            "epochs (no stopping, no thresholds); leave it out")
    p = {**DEFAULTS, **params}
    X = check_X(X, "X", dtype=np.dtype(p["dtype"]))
    Y = check_Y(Y, "Y", n_samples=X.shape[0])
    network, loss, optimizer = build(X.shape[1], Y.shape[1],
                                     **{**params, "random_state": random_state})
    totals = defaultdict(float)
    marks = [(time.perf_counter(), time.process_time(), {})]    # at every epoch boundary

    def mark_epoch(record, _network):     # the trainer evaluates once per epoch by default
        marks.append((time.perf_counter(), time.process_time(), dict(totals)))

    train(Stopwatch(network, PHASES["network"], totals), Stopwatch(loss, PHASES["loss"], totals),
          Stopwatch(optimizer, PHASES["optimizer"], totals), X, Y, batch_size=p["batch_size"],
          max_epochs=warmup + epochs, dropout=p["dropout"], callbacks=[mark_epoch],
          random_state=random_state, input_dropout=p["input_dropout"])
    peak = peak_rss_mb()
    epoch_seconds, breakdown = _epoch_breakdown(marks[warmup:])
    seconds = float(np.median(epoch_seconds))
    footprint_mb = _footprint_mb(X, Y, network, optimizer)
    return {"epoch_seconds": epoch_seconds, "seconds_per_epoch": seconds,
            "cpu_seconds_per_epoch": float(np.median(np.diff([m[1] for m in marks[warmup:]]))),
            "docs_per_second": X.shape[0] / seconds, "breakdown_seconds": breakdown,
            "peak_rss_mb": peak, "footprint_mb": footprint_mb,
            "peak_rss_ratio": peak / footprint_mb["total"]}


def _epoch_breakdown(marks):
    epoch_seconds, phases = [], defaultdict(list)
    for (t0, _, before), (t1, _, after) in zip(marks, marks[1:]):
        epoch_seconds.append(t1 - t0)
        for phase in PHASE_ORDER:
            phases[phase].append(after.get(phase, 0.0) - before.get(phase, 0.0))
        phases["other"].append(t1 - t0 - sum(phases[phase][-1] for phase in PHASE_ORDER))
    return epoch_seconds, {phase: float(np.median(values)) for phase, values in phases.items()}


def _footprint_mb(X, Y, network, optimizer):
    footprint = {"data": nbytes(X, Y), "parameters": nbytes(*network.params.values()),
                 "optimizer_state": nbytes(*(array for state in optimizer.state.values()
                                             for array in state.values()))}
    footprint["total"] = sum(footprint.values())
    return {key: value / 2**20 for key, value in footprint.items()}


#: The five matrix products of a minibatch update (Eq. 2 forward, backpropagation backward).
PRODUCTS = ("X W1", "h W2", "δ2 W2ᵀ", "Xᵀ δ1", "hᵀ δ2")


def benchmark_products(X, n_labels, hidden_units, batch_size, dtype=DEFAULT.dtype, epochs=3,
                       random_state=0):
    """Median seconds per epoch of each of :data:`PRODUCTS` on the trainer's minibatches of X
    (seeded order) and random arrays of ``dtype``; X_kᵀ δ1 on the k features present, δ2 W2ᵀ as
    (W2 δ2ᵀ)ᵀ (faster with W2 in C order): ``{"products": ..., "total", "cpu_total"}``."""
    rng = np.random.default_rng(random_state)
    X = check_X(X, "X", dtype=np.dtype(dtype))
    X = X[rng.permutation(X.shape[0])]
    F, L = hidden_units, n_labels
    W1, W2 = (rng.uniform(-0.1, 0.1, size=shape).astype(dtype) for shape in
              ((X.shape[1], F), (F, L)))
    batches = []
    for start in range(0, X.shape[0], batch_size):
        X_b = X[start:start + batch_size]
        n = X_b.shape[0]
        h, delta1 = (rng.uniform(0, 1, size=(n, F)).astype(dtype) for _ in range(2))
        delta2 = rng.uniform(-1, 1, size=(n, L)).astype(dtype)
        batches.append((X_b, _present_columns(X_b).T, h, delta1, delta2))
    z2, dW2 = np.empty((batch_size, L), dtype), np.empty((F, L), dtype)
    dJ_dhT = {n: np.empty((F, n), dtype) for n in {h.shape[0] for _, _, h, _, _ in batches}}
    per_epoch, cpu = [], []
    for _ in range(epochs):
        seconds, cpu_start = dict.fromkeys(PRODUCTS, 0.0), time.process_time()
        for X_b, X_kT, h, delta1, delta2 in batches:
            n = h.shape[0]
            for name, product in (("X W1", lambda: X_b @ W1),
                                  ("h W2", lambda: np.matmul(h, W2, out=z2[:n])),
                                  ("δ2 W2ᵀ", lambda: np.matmul(W2, delta2.T, out=dJ_dhT[n])),
                                  ("Xᵀ δ1", lambda: X_kT @ delta1),
                                  ("hᵀ δ2", lambda: np.matmul(h.T, delta2, out=dW2))):
                start = time.perf_counter()
                product()
                seconds[name] += time.perf_counter() - start
        per_epoch.append(seconds)
        cpu.append(time.process_time() - cpu_start)
    return {"products": {name: float(np.median([s[name] for s in per_epoch])) for name in PRODUCTS},
            "total": float(np.median([sum(s.values()) for s in per_epoch])),
            "cpu_total": float(np.median(cpu))}


def _present_columns(X):
    return X[:, np.flatnonzero(np.bincount(X.indices, minlength=X.shape[1]))]


def benchmark_pwe_delta(label_counts, n_documents, density=PWE_DENSITY, repeats=3,
                        dtype=DEFAULT.dtype, random_state=0):
    """Per L, the fastest of ``repeats`` PWE δ2 of n_documents × L, pairwise and factorised
    (o = tanh(z2), z2 ~ N(0, 1), ``density`` · L relevant labels)."""
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
            loss = PairwiseExponential(form)
            row[f"{form}_seconds"] = min(timeit.repeat(lambda: loss.delta(z2, o, Y), number=1,
                                                       repeat=repeats))
        row["ratio"] = row["pairwise_seconds"] / row["factorised_seconds"]
        rows.append(row)
    return rows
