"""Minibatch training: shuffling, dropout (Sec. 3.5), validation every k updates, early stopping
(ours: the paper gives no number of epochs and no stopping rule).

:func:`train` runs epochs of minibatch updates (:func:`minibatch_update`)

    input mask → optimizer.catch_up(rows of W1 the minibatch reads) → hidden mask
    → forward → J, δ2 = loss.value_and_delta → backward → optimizer.step

and, every ``eval_every`` parameter updates (the x-axis of the paper's Fig. 3; Fig. 4's caption
says only that its x-axis is in log scale), evaluates the network on validation data: one record
of the returned :class:`History`.

``catch_up`` and ``flush`` (:mod:`mlnn.nn.lazy_updates`) make the deferred sparse updates exact.
One ``numpy.random.Generator`` (from ``random_state``) draws, in this order: ``rng.permutation(n)``
at each epoch, then per minibatch the input-dropout mask (only if ``input_dropout`` > 0) and the
hidden-dropout mask (only if ``dropout`` > 0; :mod:`mlnn.nn.dropout`). A loss or parameters that
are not finite stop training with :class:`~mlnn.base.errors.DivergenceError`.

Early stopping (:class:`EarlyStopping`) watches one validation measure (rank loss by default, by
which the paper chooses BR_R's C; it does not say what its networks select on), keeps the best
parameters, stops after ``patience`` evaluations without improvement and restores the best.
"""

import time
from dataclasses import dataclass, field

import numpy as np

from mlnn.base.errors import DivergenceError, MLNNError
from mlnn.base.validation import (check_choice, check_nonnegative_float, check_positive_int,
                                  check_training_data)
from mlnn.evaluation.metrics import ranking_measures
from mlnn.nn.lazy_updates import LazyRows
from mlnn.nn.losses import checked_delta
from mlnn.nn.dropout import apply_input_mask, check_rate, hidden_mask, input_mask


@dataclass
class History:
    """One record per evaluation: ``updates``, ``epoch``, ``elapsed`` (s), ``train_loss`` (mean
    since the previous record), ``excluded`` (documents the loss left out so far) and the
    validation measures."""

    records: list = field(default_factory=list)
    best: dict = None
    stopped_early: bool = False

    def column(self, key):
        """The values of one field over the records, as an array."""
        return np.array([record.get(key, np.nan) for record in self.records], dtype=float)

    def as_dict(self):
        """A plain-data copy (for saving): ``{key: [values...]}``."""
        keys = sorted({key for record in self.records for key in record})
        return {key: self.column(key).tolist() for key in keys}


class EarlyStopping:
    """Stop when ``monitor`` has not improved by more than ``min_delta`` for ``patience``
    evaluations (never, for ``patience=None``: the best evaluation of the whole run is kept).

    ``mode`` is ``"min"`` or ``"max"``. Only a gain of *strictly more* than ``min_delta`` is an
    improvement: on a tie the earlier parameters are kept.
    """

    def __init__(self, monitor="rankloss", mode="min", *, patience, min_delta=0.0):
        self.monitor = monitor
        self.mode = check_choice(mode, "early-stopping mode", ("min", "max"))
        self.patience = None if patience is None else check_positive_int(patience, "patience")
        self.min_delta = check_nonnegative_float(min_delta, "min_delta")
        self.best_value, self.best_params, self.best_record = None, None, None
        self.bad_evaluations = 0

    def improved(self, value):
        """Whether ``value`` beats the best so far by strictly more than ``min_delta``."""
        if self.best_value is None:
            return True
        gain = self.best_value - value if self.mode == "min" else value - self.best_value
        return gain > self.min_delta

    def update(self, record, params):
        """Register one evaluation; returns True when training should stop."""
        if self.monitor not in record:
            raise MLNNError(f"early stopping monitors {self.monitor!r}, which validation does not "
                            f"report; it reports {sorted(record)}")
        value = record[self.monitor]
        if self.improved(value):
            self.best_value, self.best_record, self.bad_evaluations = value, dict(record), 0
            self.best_params = {name: array.copy() for name, array in params.items()}
        else:
            self.bad_evaluations += 1
        return self.patience is not None and self.bad_evaluations >= self.patience

    def restore(self, params):
        """Copy the best parameters back into ``params`` (in place)."""
        if self.best_params is not None:
            for name, array in self.best_params.items():
                params[name][...] = array


def ranking_validation(network, X_val, Y_val):
    """The default validation: the four ranking measures on (X_val, Y_val)."""
    return ranking_measures(Y_val, network.scores(X_val))


def minibatches(X, Y, batch_size, rng):
    """One epoch of (X_batch, Y_batch): X and Y permuted once, then sliced (cheap for CSR);
    Y_batch dense 0/1 in X's dtype."""
    order = rng.permutation(X.shape[0])
    X, Y = X[order], Y[order]
    for start in range(0, X.shape[0], batch_size):
        stop = start + batch_size
        yield X[start:stop], Y[start:stop].toarray().astype(X.dtype)


def minibatch_update(network, loss, optimizer, X_batch, Y_batch, dropout, input_dropout, rng):
    """One parameter update on a minibatch (the order of the module doc); returns J."""
    X_batch = apply_input_mask(X_batch, input_mask(X_batch, input_dropout, rng))
    optimizer.catch_up(network.params, {"W1": np.unique(X_batch.indices)})
    mask = hidden_mask((X_batch.shape[0], network.shape[1]), dropout, rng, network.dtype)
    cache = network.forward(X_batch, mask)
    value, delta2 = loss.value_and_delta(cache.z2, cache.o, Y_batch)
    delta2 = checked_delta(loss, delta2, cache.z2)
    optimizer.step(network.params, network.backward(cache, delta2).params)
    return value


def check_pairing(network, loss):
    """Raise unless ``loss`` is paired with the network's output activation (tanh outputs for PWE,
    sigmoid for CE: the footnote in Sec. 5)."""
    if loss.output.name != network.output.name:
        raise MLNNError(f"loss {loss.name!r} needs {loss.output.name} output units, but the "
                        f"network has {network.output.name} outputs")


def check_finite_params(params, updates):
    """Raise :class:`~mlnn.base.errors.DivergenceError` if a parameter holds inf or NaN after
    ``updates`` updates (the loss of the last minibatch was still finite)."""
    for name, array in params.items():
        if not np.all(np.isfinite(array)):
            raise DivergenceError(f"training diverged at update {updates} ({name} is not "
                                  "finite); lower the learning rate")


class _Run:
    """The bookkeeping of one call of :func:`train`: counts, evaluations and the end."""

    def __init__(self, network, optimizer, validation, early_stopping, callbacks, verbose):
        self.network, self.optimizer = network, optimizer
        self.X_val, self.Y_val, self.validate = validation
        self.early_stopping, self.callbacks, self.verbose = early_stopping, callbacks, verbose
        self.history = History()
        self.updates, self.loss_sum, self.batches, self.excluded = 0, 0.0, 0, 0
        self.early = False
        self.start = time.perf_counter()

    def add(self, value, excluded):
        """Count one parameter update with minibatch loss ``value`` and ``excluded`` documents;
        raise :class:`~mlnn.base.errors.DivergenceError` if ``value`` is not finite."""
        self.updates += 1
        if not np.isfinite(value):
            raise DivergenceError(f"training diverged at update {self.updates} (loss {value}); "
                                  "lower the learning rate")
        self.loss_sum += value
        self.batches += 1
        self.excluded += int(excluded)

    def evaluate(self, epoch):
        """Make one record (after ``optimizer.flush``); returns True when training should stop."""
        self.optimizer.flush(self.network.params)
        record = {"updates": self.updates, "epoch": epoch,
                  "train_loss": self.loss_sum / max(self.batches, 1), "excluded": self.excluded}
        check_finite_params(self.network.params, self.updates)
        if self.X_val is not None:
            record.update(self.validate(self.network, self.X_val, self.Y_val))
        record["elapsed"] = time.perf_counter() - self.start
        self.loss_sum, self.batches = 0.0, 0
        self.history.records.append(record)
        if self.verbose is not None:
            self.verbose(record)
        self.early = self.early_stopping is not None and self.early_stopping.update(
            record, self.network.params)
        stop_asked = [bool(callback(record, self.network)) for callback in self.callbacks]
        return any(stop_asked) or self.early

    def finish(self, epoch, stop):
        """The last record, the final flush and the best parameters restored; the History."""
        self.history.stopped_early = stop and self.early
        if self.batches:
            self.evaluate(epoch)
        self.optimizer.flush(self.network.params)
        if self.early_stopping is not None:
            self.history.best = self.early_stopping.best_record
            self.early_stopping.restore(self.network.params)
        return self.history


def train(network, loss, optimizer, X, Y, *, batch_size, max_epochs, max_updates=None,
          dropout, input_dropout, X_val=None, Y_val=None, eval_every=None,
          validate=ranking_validation, early_stopping=None, callbacks=(), random_state=None,
          verbose=None):
    """Train ``network`` in place with minibatch gradient descent; returns a :class:`History`.

    X (n × D, CSR or dense), Y (n × L, 0/1); ``loss`` paired with the network's output. Each
    epoch visits every document once in a new order, in minibatches of ``batch_size``; training
    stops after ``max_epochs`` epochs or exactly ``max_updates`` updates. ``eval_every`` counts
    updates between evaluations (default: once per epoch), plus a last record at the end; a
    record holds ``train_loss`` and, with validation data, ``validate(network, X_val, Y_val)``.
    ``optimizer`` is an update rule or one wrapped in :class:`~mlnn.nn.lazy_updates.LazyRows`.
    ``callbacks(record, network)`` run after each evaluation (True stops training); ``verbose``
    takes each record.
    """
    check_pairing(network, loss)
    D, _, L = network.shape
    X, Y, X_val, Y_val = check_training_data(X, Y, X_val, Y_val, n_features=D, n_labels=L,
                                             dtype=network.dtype)
    if early_stopping is not None and X_val is None:
        raise MLNNError("early stopping needs validation data (X_val, Y_val)")
    batch_size = check_positive_int(batch_size, "batch_size")
    max_epochs = check_positive_int(max_epochs, "max_epochs")
    max_updates = None if max_updates is None else check_positive_int(max_updates, "max_updates")
    dropout, input_dropout = check_rate(dropout), check_rate(input_dropout, "input_dropout")
    eval_every = (-(-X.shape[0] // batch_size) if eval_every is None      # once per epoch
                  else check_positive_int(eval_every, "eval_every"))
    if not hasattr(optimizer, "step"):                    # a bare rule: no weight decay
        optimizer = LazyRows(optimizer, weight_decay=0.0)
    rng = np.random.default_rng(random_state)
    run = _Run(network, optimizer, (X_val, Y_val, validate), early_stopping, callbacks, verbose)
    with np.errstate(over="ignore", invalid="ignore"):    # divergence is detected and reported
        return _epochs(run, network, loss, optimizer, X, Y, rng, batch_size=batch_size,
                       max_epochs=max_epochs, max_updates=max_updates, eval_every=eval_every,
                       dropout=dropout, input_dropout=input_dropout)


def _epochs(run, network, loss, optimizer, X, Y, rng, *, batch_size, max_epochs, max_updates,
            eval_every, dropout, input_dropout):
    """The loop of :func:`train`: epochs of minibatch updates, evaluations; the History."""
    stop = False
    for epoch in range(1, max_epochs + 1):
        for X_batch, Y_batch in minibatches(X, Y, batch_size, rng):
            run.add(minibatch_update(network, loss, optimizer, X_batch, Y_batch, dropout,
                                     input_dropout, rng),
                    np.count_nonzero(loss.excluded(Y_batch)))
            if run.updates % eval_every == 0 or run.updates == max_updates:
                stop = run.evaluate(epoch)
            if stop or run.updates == max_updates:
                return run.finish(epoch, stop)
    return run.finish(epoch, stop)
