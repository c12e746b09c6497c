"""The minibatch trainer: equal to a dense reference loop, the schedule of documents, updates and
evaluations, early stopping, learning on a small problem, errors."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import expit

from mlnn.base.errors import DivergenceError, MLNNError
from mlnn.evaluation.metrics import EXTRA_MEASURES, MEASURES, evaluate, rank_loss
from mlnn.evaluation.thresholds import select_lambda
from mlnn.nn.losses import CrossEntropy, PairwiseExponential
from mlnn.nn.network import Network
from mlnn.nn.lazy_updates import LazyRows
from mlnn.nn.optimizers import SGD, AdaGrad, Momentum
from mlnn.model.stopping_rules import (THRESHOLD_ROWS, RuleWatch, stopping_rule,
                                       threshold_rows, threshold_validation)
from mlnn.nn.training import EarlyStopping, train
from tests.strategies_train import (OPTIMIZER_KINDS, OPTIMIZER_SETTINGS, decay_settings,
                                    make_optimizer, training_cases)


def teacher_problem(n=600, D=200, L=8, seed=0):
    """Sparse documents whose labels a random linear teacher assigns (top-scoring ones relevant)."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, D, density=0.05, format="csr", random_state=seed, dtype=np.float64)
    teacher = rng.normal(size=(D, L))
    scores = X @ teacher
    Y = (scores > np.quantile(scores, 0.8, axis=1, keepdims=True)).astype(np.int8)
    Y[np.arange(n), scores.argmax(axis=1)] = 1
    return X, Y


def split(X, Y, n_train):
    return X[:n_train], Y[:n_train], X[n_train:], Y[n_train:]


@pytest.mark.parametrize("loss_name, output", [("ce", "sigmoid"), ("pwe", "tanh")])
def test_training_lowers_the_loss_and_beats_chance(loss_name, output):
    X, Y = teacher_problem()
    X_train, Y_train, X_val, Y_val = split(X, Y, 450)
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=32,
                                 hidden_activation="relu", output=output, random_state=0,
                                 dtype=np.float64, init="glorot")
    loss = CrossEntropy() if loss_name == "ce" else PairwiseExponential()
    before = rank_loss(Y_val, network.scores(X_val))
    history = train(network, loss, AdaGrad(0.1), X_train, Y_train, batch_size=32, max_epochs=15,
                    dropout=0.2, X_val=X_val, Y_val=Y_val, random_state=0, input_dropout=0.0)
    losses = history.column("train_loss")
    assert losses[-1] < 0.6 * losses[0]
    after = rank_loss(Y_val, network.scores(X_val))
    assert after < 0.2 < before          # chance is about 0.5
    assert history.column("rankloss")[-1] == pytest.approx(after)


def test_float32_training_learns_too():
    X, Y = teacher_problem(seed=1)
    X_train, Y_train, X_val, Y_val = split(X, Y, 450)
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=32, hidden_activation="relu",
                                 random_state=1, init="glorot")
    assert network.dtype == np.float32
    train(network, CrossEntropy(), AdaGrad(0.1), X_train, Y_train, batch_size=16,
          max_epochs=10, random_state=1, dropout=0.0, input_dropout=0.0)
    assert network.params["W1"].dtype == np.float32
    assert rank_loss(Y_val, network.scores(X_val)) < 0.2


def test_evaluation_every_k_updates_and_max_updates():
    X, Y = teacher_problem(n=100)
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=4, hidden_activation="relu",
                                 random_state=0, init="glorot")
    history = train(network, CrossEntropy(), AdaGrad(0.1), X, Y, batch_size=10, max_epochs=50,
                    max_updates=35, eval_every=10, X_val=X, Y_val=Y, random_state=0,
                    dropout=0.0, input_dropout=0.0)
    np.testing.assert_array_equal(history.column("updates"), [10, 20, 30, 35])
    np.testing.assert_array_equal(history.column("epoch"), [1, 2, 3, 4])
    assert {"rankloss", "oneError", "coverage", "MAP", "elapsed"} <= set(history.records[0])


def test_same_seed_same_result():
    X, Y = teacher_problem(n=120)
    results = []
    for _ in range(2):
        network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=6,
                                     hidden_activation="relu", random_state=5, init="glorot")
        train(network, CrossEntropy(), AdaGrad(0.1), X, Y, batch_size=8, max_epochs=2,
              dropout=0.5, input_dropout=0.1, random_state=7)
        results.append(network.params["W1"].copy())
    np.testing.assert_array_equal(results[0], results[1])


def test_early_stopping_restores_the_best_parameters():
    X, Y = teacher_problem(n=200)
    X_train, Y_train, X_val, Y_val = split(X, Y, 100)
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=64, hidden_activation="relu",
                                 random_state=0, dtype=np.float64, init="glorot")
    stopper = EarlyStopping(monitor="rankloss", patience=2)
    history = train(network, CrossEntropy(), AdaGrad(1.0), X_train, Y_train, batch_size=10,
                    max_epochs=200, X_val=X_val, Y_val=Y_val, early_stopping=stopper,
                    random_state=0, dropout=0.0, input_dropout=0.0)
    assert history.stopped_early
    assert len(history.records) < 200
    best = history.column("rankloss").min()
    assert history.best["rankloss"] == best
    assert rank_loss(Y_val, network.scores(X_val)) == pytest.approx(best)


def test_callback_can_stop_training():
    X, Y = teacher_problem(n=100)
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=4, hidden_activation="relu",
                                 random_state=0, init="glorot")
    seen = []
    history = train(network, CrossEntropy(), AdaGrad(0.1), X, Y, batch_size=10, max_epochs=50,
                    eval_every=5, callbacks=[lambda record, net: seen.append(record) or
                                             record["updates"] >= 15], random_state=0,
                    dropout=0.0, input_dropout=0.0)
    assert [r["updates"] for r in seen] == [5, 10, 15]
    assert len(history.records) == 3


def test_pwe_counts_excluded_documents():
    X, Y = teacher_problem(n=60)
    Y = Y.copy()
    Y[:10] = 0          # no relevant label: PWE is undefined there
    Y[10:15] = 1        # every label relevant: undefined too
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=4, hidden_activation="relu",
                                 output="tanh", random_state=0, init="glorot")
    history = train(network, PairwiseExponential(), AdaGrad(0.1), X, Y, batch_size=20,
                    max_epochs=3, random_state=0, dropout=0.0, input_dropout=0.0)
    np.testing.assert_array_equal(history.column("excluded"), [15, 30, 45])


@pytest.mark.parametrize("kwargs, message", [
    ({"batch_size": 0}, "batch_size must be a positive integer"),
    ({"dropout": 1.0}, r"dropout must be a number in \[0, 1\)"),
    ({"Y": np.full((100, 8), 2)}, "0/1 label matrix"),
    ({"Y": np.zeros((99, 8))}, "Y has 99 rows but X has 100"),
    ({"X_val": np.zeros((3, 200))}, "give both X_val and Y_val"),
    ({"early_stopping": EarlyStopping(patience=5)}, "early stopping needs validation data"),
])
def test_bad_arguments_are_clear_errors(kwargs, message):
    X, Y = teacher_problem(n=100)
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=4, hidden_activation="relu",
                                 random_state=0, init="glorot")
    arguments = {"X": X, "Y": Y, "batch_size": 64, "max_epochs": 1, "dropout": 0.0,
                 "input_dropout": 0.0}
    arguments.update(kwargs)
    X_arg, Y_arg = arguments.pop("X"), arguments.pop("Y")
    with pytest.raises(MLNNError, match=message):
        train(network, CrossEntropy(), AdaGrad(0.1), X_arg, Y_arg, **arguments)


def test_loss_and_output_activation_must_be_paired():
    X, Y = teacher_problem(n=50)
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=4, hidden_activation="relu",
                                 output="sigmoid", init="glorot")
    with pytest.raises(MLNNError, match="needs tanh output units"):
        train(network, PairwiseExponential(), AdaGrad(0.1), X, Y, batch_size=64, max_epochs=1,
              dropout=0.0, input_dropout=0.0)


# ------------------------------------------------------------------------------------------------
# train() equals plain dense gradient descent


def dense_reference(case, kind, weight_decay, decay_biases, snapshot_every):
    """Dense minibatch training written out in NumPy: dense X, dense gradients, full-matrix updates.

    It replays the random numbers of :func:`mlnn.nn.training.train` (module doc there): a
    permutation per epoch, then per minibatch one float32 uniform per nonzero of X_batch (row by
    row, the order CSR stores them) if input dropout is on, and n_b × F float32 uniforms if hidden
    dropout is on. Returns the final parameters and a copy of them after every ``snapshot_every``
    updates.
    """
    rule, eta, mu = OPTIMIZER_SETTINGS[kind]
    network, p, p_in = case["network"], case["dropout"], case["input_dropout"]
    P = {name: value.copy() for name, value in network.params.items()}
    slots = {name: np.zeros_like(value) for name, value in P.items()}   # velocity v, or G
    X, Y = case["X"].toarray(), np.asarray(case["Y"], dtype=np.float64)
    rng = np.random.default_rng(case["seed"])
    snapshots, updates = [], 0
    for _ in range(case["max_epochs"]):
        order = rng.permutation(X.shape[0])
        for start in range(0, X.shape[0], case["batch_size"]):
            rows = order[start:start + case["batch_size"]]
            X_b, Y_b, m = X[rows].copy(), Y[rows], len(rows)
            if p_in:
                stored = np.nonzero(X_b)
                X_b[stored] *= (rng.random(len(stored[0]), dtype=np.float32) >= p_in) / (1 - p_in)
            mask = np.ones((m, P["b1"].size))
            if p:
                mask = (rng.random(mask.shape, dtype=np.float32) >= p) / (1 - p)
            z1 = X_b @ P["W1"] + P["b1"]
            if network.hidden_activation.name == "relu":
                h, dh_dz1 = np.maximum(z1, 0), (z1 > 0).astype(float)
            else:
                h = np.tanh(z1)
                dh_dz1 = 1 - h * h
            o = expit((h * mask) @ P["W2"] + P["b2"])
            delta2 = o - Y_b                                    # cross-entropy, sigmoid outputs
            delta1 = (delta2 @ P["W2"].T) * mask * dh_dz1
            grads = {"W1": X_b.T @ delta1 / m, "b1": delta1.sum(axis=0) / m,
                     "W2": (h * mask).T @ delta2 / m, "b2": delta2.sum(axis=0) / m}
            for name, g in grads.items():
                if name in ("W1", "W2") or decay_biases:
                    g = g + weight_decay * P[name]
                if rule == "sgd":
                    P[name] -= eta * g
                elif rule == "adagrad":
                    slots[name] += g * g
                    P[name] -= eta * g / (np.sqrt(slots[name]) + 1e-8)
                else:
                    slots[name] = mu * slots[name] - eta * g
                    P[name] += mu * slots[name] - eta * g if rule == "nesterov" else slots[name]
            updates += 1
            if updates % snapshot_every == 0:
                snapshots.append({name: value.copy() for name, value in P.items()})
    return P, snapshots


def copy_network(network):
    return Network(**{name: value.copy() for name, value in network.params.items()},
                   hidden_activation=network.hidden_activation, output=network.output)


def assert_params_equal(actual, expected, where):
    for name in ("W1", "b1", "W2", "b2"):
        np.testing.assert_allclose(actual[name], expected[name], rtol=1e-12, atol=1e-12,
                                   err_msg=f"{name} {where}")


@pytest.mark.parametrize("kind", OPTIMIZER_KINDS)
@pytest.mark.filterwarnings("ignore::mlnn.base.errors.MLNNWarning")     # degenerate labels warn
@given(case=training_cases(), decay=decay_settings(), eval_every=st.integers(1, 4))
def test_train_equals_the_dense_reference_loop(kind, case, decay, eval_every):
    """Momentum, Nesterov, SGD and AdaGrad, with and without weight decay and dropout (hidden and
    input): the parameters at every evaluation and at the end are those of dense updates."""
    expected, expected_snapshots = dense_reference(case, kind, *decay, snapshot_every=eval_every)
    network = copy_network(case["network"])
    seen = []

    def validate(net, X_val, Y_val):
        seen.append({name: value.copy() for name, value in net.params.items()})
        return {}

    train(network, CrossEntropy(), make_optimizer(kind, *decay), case["X"], case["Y"],
          batch_size=case["batch_size"], max_epochs=case["max_epochs"], dropout=case["dropout"],
          input_dropout=case["input_dropout"], X_val=case["X"], Y_val=case["Y"],
          eval_every=eval_every, validate=validate, random_state=case["seed"])
    assert len(seen) >= len(expected_snapshots)
    for i, snapshot in enumerate(expected_snapshots):
        assert_params_equal(seen[i], snapshot, f"at evaluation {i + 1}")
    assert_params_equal(network.params, expected, "at the end")


def test_the_minimal_momentum_case_in_train():
    """Two one-feature documents, one per minibatch: the row of document 0 must be brought up to
    date before it is read again (stale rows gave W1[0] = 0.638896 where dense momentum gives
    0.638110 after the order 0, 1, 0)."""
    X, Y = sp.csr_matrix(np.eye(2)), np.array([[1], [0]])
    case = {"network": Network(0.5 * np.ones((2, 1)), np.zeros(1), np.ones((1, 1)), np.zeros(1),
                                   "relu"),
            "X": X, "Y": Y, "batch_size": 1, "max_epochs": 3, "dropout": 0.0,
            "input_dropout": 0.0, "seed": 0}
    expected, _ = dense_reference(case, "momentum", 0.0, False, snapshot_every=1)
    network = copy_network(case["network"])
    train(network, CrossEntropy(), Momentum(0.1, momentum=0.9), X, Y, batch_size=1,
          max_epochs=3, random_state=0, dropout=0.0, input_dropout=0.0)
    assert_params_equal(network.params, expected, "at the end")


def test_only_the_rows_of_the_minibatch_are_brought_up_to_date():
    """Before each forward pass the optimizer catches up exactly the features of the minibatch."""
    calls = []

    class Recording(LazyRows):
        def catch_up(self, params, rows):
            calls.append(dict(rows))
            super().catch_up(params, rows)

        def flush(self, params):       # flush brings every row up to date: not counted here
            saved = list(calls)
            super().flush(params)
            calls[:] = saved

    X, Y = teacher_problem(n=30, D=400)
    batches = []
    train(recording_network(400, Y.shape[1], batches), CrossEntropy(),
          Recording(Momentum(0.1, 0.9), weight_decay=0.0), X, Y,
          batch_size=7, max_epochs=2, input_dropout=0.5, random_state=0, dropout=0.0)
    assert len(calls) == len(batches) == 10
    for call, X_b in zip(calls, batches):
        assert set(call) == {"W1"}
        np.testing.assert_array_equal(call["W1"], np.unique(X_b.indices))
        assert len(call["W1"]) < 400


# ------------------------------------------------------------------------------------------------
# The schedule: documents, minibatches, updates, evaluations


def indexed_documents(n, L=3):
    """n documents where document i is feature i alone (so a minibatch names its documents)."""
    X = sp.identity(n, format="csr")
    Y = np.zeros((n, L))
    Y[np.arange(n), np.arange(n) % L] = 1
    return X, Y


def recording_network(n_features, n_labels, batches):
    network = Network.initialize(n_features, n_labels, hidden_units=2, hidden_activation="relu",
                                 random_state=0, dtype=np.float64, init="glorot")
    original_forward = network.forward
    network.forward = lambda X_b, mask=None: batches.append(X_b) or original_forward(X_b, mask)
    return network


def test_every_document_once_per_epoch_in_a_new_order():
    X, Y = indexed_documents(23)
    batches = []
    train(recording_network(23, 3, batches), CrossEntropy(), SGD(0.1), X, Y, batch_size=5,
          max_epochs=2, random_state=3, dropout=0.0, input_dropout=0.0)
    assert [X_b.shape[0] for X_b in batches] == [5, 5, 5, 5, 3] * 2   # the last batch is used
    epochs = [np.concatenate([X_b.indices for X_b in batches[e * 5:(e + 1) * 5]]) for e in (0, 1)]
    for order in epochs:
        np.testing.assert_array_equal(np.sort(order), np.arange(23))   # each document once
        assert not np.array_equal(order, np.arange(23))                # shuffled
    assert not np.array_equal(epochs[0], epochs[1])                    # a new order in epoch 2


def test_the_last_partial_minibatch_is_an_update():
    X, Y = indexed_documents(7)
    optimizer = LazyRows(SGD(0.1), weight_decay=0.0)
    history = train(recording_network(7, 3, []), CrossEntropy(), optimizer, X, Y, batch_size=3,
                    max_epochs=2, random_state=0, dropout=0.0, input_dropout=0.0)
    assert optimizer.t == 6                                          # 3 + 3 + 1 documents
    np.testing.assert_array_equal(history.column("updates"), [3, 6])


class RecordingLoss(CrossEntropy):
    """Cross-entropy that appends every minibatch loss J it computes to ``values``."""

    def __init__(self, values):
        super().__init__()
        self.values = values

    def value_and_delta(self, z2, o, Y):
        value, delta2 = super().value_and_delta(z2, o, Y)
        self.values.append(value)
        return value, delta2


def test_train_loss_is_the_mean_over_the_minibatches_since_the_last_record():
    values = []
    X, Y = indexed_documents(11)
    history = train(recording_network(11, 3, []), RecordingLoss(values), SGD(0.5), X, Y,
                    batch_size=2, max_epochs=2, eval_every=4, random_state=0,
                    dropout=0.0, input_dropout=0.0)
    np.testing.assert_array_equal(history.column("updates"), [4, 8, 12])
    for record, window in zip(history.records, (values[0:4], values[4:8], values[8:12])):
        assert record["train_loss"] == pytest.approx(np.mean(window), rel=1e-12)


@pytest.mark.parametrize("make", [lambda: LazyRows(Momentum(0.1, momentum=0.9), weight_decay=0.0),
                                  lambda: LazyRows(Momentum(0.1, 0.9, nesterov=True),
                                                   weight_decay=0.0),
                                  lambda: LazyRows(SGD(0.1), weight_decay=0.1)])
def test_validation_sees_every_row_up_to_date(make):
    """The optimizer is flushed before each validation: every row of W1 is at the current step."""
    optimizer = make()
    X, Y = teacher_problem(n=40, D=300)
    seen = []

    def validate(net, X_val, Y_val):
        seen.append(optimizer.state["W1"]["last_step"].copy())
        return {"t": optimizer.t}

    history = train(Network.initialize(300, Y.shape[1], hidden_units=3, hidden_activation="relu",
                                       random_state=0, init="glorot"),
                    CrossEntropy(), optimizer, X, Y, batch_size=8, max_epochs=3, eval_every=2,
                    X_val=X, Y_val=Y, validate=validate, random_state=0,
                    dropout=0.0, input_dropout=0.0)
    assert len(seen) == 8
    for last_step, t in zip(seen, history.column("t")):
        np.testing.assert_array_equal(last_step, t)


def test_max_updates_is_respected_exactly():
    X, Y = indexed_documents(10)
    optimizer = LazyRows(SGD(0.1), weight_decay=0.0)
    history = train(recording_network(10, 3, []), CrossEntropy(), optimizer, X, Y, batch_size=3,
                    max_epochs=50, max_updates=7, eval_every=3, random_state=0,
                    dropout=0.0, input_dropout=0.0)
    assert optimizer.t == 7
    np.testing.assert_array_equal(history.column("updates"), [3, 6, 7])
    np.testing.assert_array_equal(history.column("epoch"), [1, 2, 2])


def test_max_epochs_bounds_a_larger_max_updates():
    X, Y = indexed_documents(10)
    optimizer = LazyRows(SGD(0.1), weight_decay=0.0)
    history = train(recording_network(10, 3, []), CrossEntropy(), optimizer, X, Y, batch_size=3,
                    max_epochs=2, max_updates=100, random_state=0, dropout=0.0, input_dropout=0.0)
    assert optimizer.t == 8
    np.testing.assert_array_equal(history.column("updates"), [4, 8])


@pytest.mark.parametrize("eval_every, updates, epochs", [
    (3, [3, 6, 9, 12], [1, 2, 3, 3]),        # the count runs on across epochs
    (5, [5, 10, 12], [2, 3, 3]),             # a last record for the updates after the last one
    (None, [4, 8, 12], [1, 2, 3]),           # default: once per epoch
])
def test_evaluations_every_k_updates(eval_every, updates, epochs):
    X, Y = indexed_documents(10)
    history = train(recording_network(10, 3, []), CrossEntropy(), SGD(0.1), X, Y, batch_size=3,
                    max_epochs=3, eval_every=eval_every, random_state=0,
                    dropout=0.0, input_dropout=0.0)
    np.testing.assert_array_equal(history.column("updates"), updates)
    np.testing.assert_array_equal(history.column("epoch"), epochs)


def test_every_callback_is_called_and_one_stops_training():
    X, Y = indexed_documents(10)
    calls = {"first": 0, "second": 0}

    def first(record, network):
        calls["first"] += 1
        return record["updates"] >= 4

    def second(record, network):
        calls["second"] += 1

    history = train(recording_network(10, 3, []), CrossEntropy(), SGD(0.1), X, Y, batch_size=3,
                    max_epochs=10, eval_every=2, callbacks=[first, second], random_state=0,
                    dropout=0.0, input_dropout=0.0)
    assert calls == {"first": 2, "second": 2}
    np.testing.assert_array_equal(history.column("updates"), [2, 4])
    assert not history.stopped_early


# ------------------------------------------------------------------------------------------------
# Early stopping


def test_early_stopping_a_tie_is_not_an_improvement():
    stopper = EarlyStopping(monitor="rankloss", patience=2)
    params = {"W1": np.zeros(1)}
    assert not stopper.update({"rankloss": 0.25, "updates": 1}, {"W1": np.full(1, 1.0)})
    assert not stopper.update({"rankloss": 0.25, "updates": 2}, {"W1": np.full(1, 2.0)})
    assert stopper.update({"rankloss": 0.25, "updates": 3}, {"W1": np.full(1, 3.0)})
    assert stopper.best_record["updates"] == 1
    stopper.restore(params)
    np.testing.assert_array_equal(params["W1"], [1.0])


@pytest.mark.parametrize("mode, values, best", [
    ("min", [1.0, 0.75, 0.875], 1),       # a gain of exactly min_delta = 0.25 does not count
    ("min", [1.0, 0.75, 0.5], 3),         # a gain of 0.5 over the best (1.0) does
    ("min", [1.0, 0.5, 0.75], 2),
    ("max", [0.5, 0.75, 0.625], 1),
    ("max", [0.5, 1.0, 0.25], 2),
])
def test_early_stopping_improvement_must_exceed_min_delta(mode, values, best):
    stopper = EarlyStopping(monitor="MAP", mode=mode, patience=5, min_delta=0.25)
    for i, value in enumerate(values, 1):
        stopper.update({"MAP": value, "updates": i}, {"W1": np.zeros(1)})
    assert stopper.best_record["updates"] == best


def test_early_stopping_restores_the_best_not_the_last_parameters():
    """Scripted validation: best at the 2nd evaluation, a tie at the 4th, stop at the 5th."""
    script = iter([0.5, 0.25, 0.375, 0.25, 0.75])
    snapshots = []

    def validate(net, X_val, Y_val):
        snapshots.append({name: value.copy() for name, value in net.params.items()})
        return {"rankloss": next(script)}

    X, Y = teacher_problem(n=40, D=50)
    network = Network.initialize(50, Y.shape[1], hidden_units=4, hidden_activation="relu",
                                 random_state=0, dtype=np.float64, init="glorot")
    history = train(network, CrossEntropy(), Momentum(0.5, momentum=0.9), X, Y, batch_size=4, max_epochs=20,
                    eval_every=3, X_val=X, Y_val=Y, validate=validate,
                    early_stopping=EarlyStopping(patience=3), random_state=0,
                    dropout=0.0, input_dropout=0.0)
    assert history.stopped_early
    np.testing.assert_array_equal(history.column("updates"), [3, 6, 9, 12, 15])
    assert history.best["updates"] == 6
    for name, value in network.params.items():
        np.testing.assert_array_equal(value, snapshots[1][name])
        assert not np.array_equal(value, snapshots[-1][name])


def _diverging_run(optimizer, dtype):
    X, Y = teacher_problem(n=120, D=40, L=5)
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=8, hidden_activation="relu",
                                 random_state=0, dtype=dtype, init="glorot")
    values = []
    with pytest.raises(DivergenceError) as error:
        train(network, RecordingLoss(values), optimizer, X, Y, batch_size=10, max_epochs=5,
              X_val=X, Y_val=Y, random_state=0, dropout=0.0, input_dropout=0.0)
    return str(error.value), values


@pytest.mark.parametrize("optimizer, dtype", [
    (AdaGrad(1e20), np.float32), (SGD(1e20), np.float32), (AdaGrad(1e300), np.float32),
    (SGD(1e300), np.float64)], ids=["adagrad-1e20-f32", "sgd-1e20-f32", "adagrad-1e300-f32",
                                    "sgd-1e300-f64"])
def test_a_non_finite_loss_stops_training_naming_the_update(optimizer, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("error")                      # and NumPy's overflow noise is quiet
        message, values = _diverging_run(optimizer, dtype)
    # the first non-finite minibatch loss (counted by an independent recording loss) is the one
    first = next(i for i, value in enumerate(values) if not np.isfinite(value)) + 1
    assert len(values) == first                                   # no update after it
    assert message == (f"training diverged at update {first} (loss {values[first - 1]}); "
                       "lower the learning rate")


def test_parameters_that_overflow_before_an_evaluation_stop_training():
    X, Y = teacher_problem(n=40, D=20, L=4)
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=4, hidden_activation="relu",
                                 random_state=0, dtype=np.float64, init="glorot")

    class Overflow(LazyRows):
        def step(self, params, grads):
            super().step(params, grads)
            params["W2"][0, 0] = np.inf
    with pytest.raises(DivergenceError, match=r"^training diverged at update 1 \(W2 is not "
                                              r"finite\); lower the learning rate$"):
        train(network, CrossEntropy(), Overflow(SGD(0.1), 0.0), X, Y, batch_size=40, max_epochs=1,
              eval_every=1, random_state=0, dropout=0.0, input_dropout=0.0)


def test_divergence_is_an_mlnn_error():
    assert issubclass(DivergenceError, MLNNError)


def stop_from_curve(records, rule, patience):
    """The record at which ``rule`` stops, replayed over the ``records`` of a run: the best
    record up to where it would have stopped, or the last one for "fixed" or if it never stops."""
    stopper = stopping_rule(rule, patience)
    if stopper is None:
        return dict(records[-1])
    for record in records:
        if stopper.update(record, {}):
            break
    return stopper.best_record


def _rule_run(rules, early_stopping=None, max_epochs=30):
    """One run on a small teacher problem with every measure validated at every epoch."""
    X, Y = teacher_problem(n=260, D=120, L=8, seed=3)
    X_fit, Y_fit, X_val, Y_val = split(X, Y, 200)
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=24, hidden_activation="relu",
                                 random_state=1, dtype=np.float64, init="glorot")
    watch = RuleWatch(rules, patience=3)
    history = train(network, CrossEntropy(), AdaGrad(0.5), X_fit, Y_fit, batch_size=16,
                    max_epochs=max_epochs, dropout=0.3, X_val=X_val, Y_val=Y_val,
                    validate=threshold_validation(X_fit, Y_fit, lams=(0.1, 10.0)),
                    early_stopping=early_stopping, callbacks=[watch], random_state=2,
                    input_dropout=0.0)
    return network, history, watch.finish(history, network)


@pytest.mark.parametrize("rule", ["rankloss", "meanF"])
def test_a_rule_stops_live_where_it_stops_on_the_curve_of_a_longer_run(rule):
    _, long_history, watched = _rule_run(("rankloss", "meanF", "meanF_best", "fixed"))
    assert len(long_history.records) == 30                       # "fixed" runs the whole budget
    live_network, live_history, _ = _rule_run((rule,), stopping_rule(rule, 3))
    assert live_history.stopped_early and len(live_history.records) < 30
    replayed = stop_from_curve(long_history.records, rule, patience=3)
    assert live_history.best["epoch"] == replayed["epoch"] == watched[rule][0]["epoch"]
    assert live_history.best[rule] == replayed[rule]
    for live, long in zip(live_history.records, long_history.records):
        assert {k: v for k, v in live.items() if k != "elapsed"} == \
            {k: v for k, v in long.items() if k != "elapsed"}
    for name, array in live_network.params.items():
        np.testing.assert_array_equal(array, watched[rule][1][name])


def test_the_best_of_the_budget_is_the_best_of_the_whole_curve():
    network, history, watched = _rule_run(("meanF_best",), stopping_rule("meanF_best", 3))
    assert len(history.records) == 30 and not history.stopped_early
    curve = history.column("meanF")
    assert history.best["epoch"] == watched["meanF_best"][0]["epoch"] == np.argmax(curve) + 1
    for name, array in network.params.items():                  # restored to the best
        np.testing.assert_array_equal(array, watched["meanF_best"][1][name])


def test_the_fixed_rule_keeps_the_last_epoch_and_watching_stops_when_every_rule_has():
    network, history, watched = _rule_run(("fixed",), max_epochs=4)
    assert watched["fixed"][0]["epoch"] == 4
    np.testing.assert_array_equal(watched["fixed"][1]["W2"], network.params["W2"])
    assert stop_from_curve(history.records, "fixed", patience=3)["epoch"] == 4
    _, both, watched = _rule_run(("rankloss", "meanF"))
    last = max(watched[rule][0]["epoch"] for rule in ("rankloss", "meanF"))
    assert len(both.records) == last + 3                  # the later stop, after its patience


@pytest.mark.parametrize("rule, values, best_epoch", [
    ("rankloss", [0.5, 0.4, 0.45, 0.39, 0.41, 0.42, 0.3], 4),       # stops at 6: best 4
    ("rankloss", [0.5, 0.4, 0.45, 0.4, 0.3], 2),                    # a tie counts as no gain
    ("meanF", [0.1, 0.3, 0.3, 0.2, 0.25], 2),                      # a tie is no improvement
    ("meanF", [0.1, 0.2, 0.3], 3),                                 # never stops: best so far
    ("meanF_best", [0.1, 0.3, 0.2, 0.2, 0.2, 0.25, 0.31, 0.3], 7),  # no patience: the best
    ("fixed", [0.1, 0.9, 0.2], 3)])                                # the last record
def test_stop_from_curve_on_hand_made_curves(rule, values, best_epoch):
    records = [{"epoch": e, "rankloss": v, "meanF": v} for e, v in enumerate(values, 1)]
    assert stop_from_curve(records, rule, patience=2)["epoch"] == best_epoch
    with pytest.raises(MLNNError, match="stopping rule"):
        stopping_rule("MAP", 2)


def test_threshold_validation_records_every_measure_with_the_final_models_thresholds():
    X, Y = teacher_problem(n=160, D=80, L=6, seed=4)
    X_fit, Y_fit, X_val, Y_val = split(X, Y, 120)
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=8, hidden_activation="relu",
                                 random_state=0, dtype=np.float64, init="glorot")
    train(network, CrossEntropy(), AdaGrad(0.5), X_fit, Y_fit, batch_size=64, max_epochs=3,
          random_state=0, dropout=0.0, input_dropout=0.0)
    record = threshold_validation(X_fit, Y_fit, lams=(0.01, 1.0, 100.0))(network, X_val, Y_val)
    assert set(record) == set(MEASURES + EXTRA_MEASURES) | {"meanF", "threshold_lambda"}
    predictor, lam, table = select_lambda(X_fit, network.scores(X_fit), Y_fit, X_val,
                                          network.scores(X_val), Y_val, lams=(0.01, 1.0, 100.0))
    Y_pred = predictor.predict(X_val, network.scores(X_val))
    assert record["threshold_lambda"] == lam and record["meanF"] == table[lam]
    assert record == {**evaluate(Y_val, network.scores(X_val), Y_pred),
                      "meanF": table[lam], "threshold_lambda": lam}
    fixed = threshold_validation(X_fit, Y_fit, fixed=0.5)(network, X_val, Y_val)
    assert fixed["threshold_lambda"] is None
    assert fixed["miF"] == evaluate(Y_val, network.scores(X_val),
                                    network.scores(X_val) > 0.5)["miF"]


def test_threshold_rows_are_a_fixed_sorted_subsample():
    rows = threshold_rows(5000, random_state=3)
    assert len(rows) == len(np.unique(rows)) == THRESHOLD_ROWS and np.all(np.diff(rows) > 0)
    np.testing.assert_array_equal(rows, threshold_rows(5000, random_state=3))
    assert not np.array_equal(rows, threshold_rows(5000, random_state=4))
    np.testing.assert_array_equal(threshold_rows(THRESHOLD_ROWS), np.arange(THRESHOLD_ROWS))
