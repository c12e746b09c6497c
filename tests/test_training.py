"""The minibatch trainer: learning on a small problem, evaluation schedule, early stopping, errors."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlnn.errors import MLNNError
from mlnn.losses import CrossEntropy, PairwiseExponential
from mlnn.metrics import rank_loss
from mlnn.network import Network
from mlnn.optimizers import AdaGrad
from mlnn.training import EarlyStopping, train


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
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=32, hidden="relu",
                                 output=output, random_state=0, dtype=np.float64)
    loss = CrossEntropy() if loss_name == "ce" else PairwiseExponential()
    before = rank_loss(Y_val, network.scores(X_val))
    history = train(network, loss, AdaGrad(0.1), X_train, Y_train, batch_size=32, max_epochs=15,
                    dropout=0.2, X_val=X_val, Y_val=Y_val, random_state=0)
    losses = history.column("train_loss")
    assert losses[-1] < 0.6 * losses[0]
    after = rank_loss(Y_val, network.scores(X_val))
    assert after < 0.2 < before          # chance is about 0.5
    assert history.column("rankloss")[-1] == pytest.approx(after)


def test_float32_training_learns_too():
    X, Y = teacher_problem(seed=1)
    X_train, Y_train, X_val, Y_val = split(X, Y, 450)
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=32, random_state=1)
    assert network.dtype == np.float32
    train(network, CrossEntropy(), AdaGrad(0.1), X_train, Y_train, batch_size=16,
          max_epochs=10, random_state=1)
    assert network.params["W1"].dtype == np.float32
    assert rank_loss(Y_val, network.scores(X_val)) < 0.2


def test_evaluation_every_k_updates_and_max_updates():
    X, Y = teacher_problem(n=100)
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=4, random_state=0)
    history = train(network, CrossEntropy(), AdaGrad(0.1), X, Y, batch_size=10, max_epochs=50,
                    max_updates=35, eval_every=10, X_val=X, Y_val=Y, random_state=0)
    np.testing.assert_array_equal(history.column("updates"), [10, 20, 30, 35])
    np.testing.assert_array_equal(history.column("epoch"), [1, 2, 3, 4])
    assert {"rankloss", "oneError", "coverage", "MAP", "elapsed"} <= set(history.records[0])


def test_same_seed_same_result():
    X, Y = teacher_problem(n=120)
    results = []
    for _ in range(2):
        network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=6, random_state=5)
        train(network, CrossEntropy(), AdaGrad(0.1), X, Y, batch_size=8, max_epochs=2,
              dropout=0.5, input_dropout=0.1, random_state=7)
        results.append(network.params["W1"].copy())
    np.testing.assert_array_equal(results[0], results[1])


def test_early_stopping_restores_the_best_parameters():
    X, Y = teacher_problem(n=200)
    X_train, Y_train, X_val, Y_val = split(X, Y, 100)
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=64, random_state=0,
                                 dtype=np.float64)
    stopper = EarlyStopping(monitor="rankloss", patience=2)
    history = train(network, CrossEntropy(), AdaGrad(1.0), X_train, Y_train, batch_size=10,
                    max_epochs=200, X_val=X_val, Y_val=Y_val, early_stopping=stopper,
                    random_state=0)
    assert history.stopped_early
    assert len(history.records) < 200
    best = history.column("rankloss").min()
    assert history.best["rankloss"] == best
    assert rank_loss(Y_val, network.scores(X_val)) == pytest.approx(best)


def test_callback_can_stop_training():
    X, Y = teacher_problem(n=100)
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=4, random_state=0)
    seen = []
    history = train(network, CrossEntropy(), AdaGrad(0.1), X, Y, batch_size=10, max_epochs=50,
                    eval_every=5, callbacks=[lambda record, net: seen.append(record) or
                                             record["updates"] >= 15], random_state=0)
    assert [r["updates"] for r in seen] == [5, 10, 15]
    assert len(history.records) == 3


def test_pwe_counts_excluded_documents():
    X, Y = teacher_problem(n=60)
    Y = Y.copy()
    Y[:10] = 0          # no relevant label: PWE is undefined there
    Y[10:15] = 1        # every label relevant: undefined too
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=4, output="tanh",
                                 random_state=0)
    history = train(network, PairwiseExponential(), AdaGrad(0.1), X, Y, batch_size=20,
                    max_epochs=3, random_state=0)
    np.testing.assert_array_equal(history.column("excluded"), [15, 30, 45])


@pytest.mark.parametrize("kwargs, message", [
    ({"batch_size": 0}, "batch_size must be a positive integer"),
    ({"dropout": 1.0}, r"dropout must be a number in \[0, 1\)"),
    ({"Y": np.full((100, 8), 2)}, "0/1 label matrix"),
    ({"Y": np.zeros((99, 8))}, "Y has 99 rows but X has 100"),
    ({"X_val": np.zeros((3, 200))}, "give both X_val and Y_val"),
    ({"early_stopping": EarlyStopping()}, "early stopping needs validation data"),
])
def test_bad_arguments_are_clear_errors(kwargs, message):
    X, Y = teacher_problem(n=100)
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=4, random_state=0)
    arguments = {"X": X, "Y": Y}
    arguments.update(kwargs)
    X_arg, Y_arg = arguments.pop("X"), arguments.pop("Y")
    with pytest.raises(MLNNError, match=message):
        train(network, CrossEntropy(), AdaGrad(0.1), X_arg, Y_arg, **arguments)


def test_loss_and_output_activation_must_be_paired():
    X, Y = teacher_problem(n=50)
    network = Network.initialize(X.shape[1], Y.shape[1], hidden_units=4, output="sigmoid")
    with pytest.raises(MLNNError, match="needs tanh output units"):
        train(network, PairwiseExponential(), AdaGrad(0.1), X, Y)
