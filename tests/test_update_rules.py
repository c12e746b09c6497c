"""The rule a reader finds in mlnn.nn.optimizers is the code training runs, and a rule from
outside the package (declaring nothing about its zero-gradient steps, or a closed form for them)
trains to the parameters of the plain dense loop, also as a hyper-parameter of MultiLabelNN."""

from unittest import mock

import numpy as np
import pytest
from scipy.special import expit

from mlnn.base.errors import MLNNError
from mlnn.datasets.synthetic import make_synthetic
from mlnn.model import estimator
from mlnn.model.estimator import MultiLabelNN
from mlnn.nn.lazy_updates import LazyRows, get_optimizer
from mlnn.nn.losses import CrossEntropy
from mlnn.nn.network import Network
from mlnn.nn.optimizers import MUST_RUN, OPTIMIZERS, SGD, AdaGrad, Linear, Momentum
from mlnn.nn.training import train

RULES = {"sgd": {}, "momentum": {}, "nesterov": {"nesterov": True}, "adagrad": {}}


class RMSProp:
    """RMSProp (Tieleman & Hinton 2012) as a user or a student writes a rule: ``new_state`` and
    ``update(theta, g, state)`` only, nothing about zero-gradient steps."""

    def __init__(self, learning_rate, rho=0.9, epsilon=1e-8):
        self.learning_rate, self.rho, self.epsilon = learning_rate, rho, epsilon

    def new_state(self, theta):
        return {"mean_square": np.zeros_like(theta)}

    def update(self, theta, g, state):
        G = state["mean_square"]
        G[...] = self.rho * G + (1 - self.rho) * g ** 2                # G ← ρ G + (1 − ρ) g²
        theta -= self.learning_rate * g / (np.sqrt(G) + self.epsilon)  # θ ← θ − η g / (√G + ε)


class LazyRMSProp(RMSProp):
    """RMSProp that says what a zero-gradient step does without decay: G ← ρ G, θ stays, a
    linear map of (θ, G)."""

    def idle_steps(self, gamma):
        return Linear(np.array([[1.0, 0.0], [0.0, self.rho]]), "mean_square") if gamma == 0 \
            else MUST_RUN


def problem(n=96, D=300, L=6):
    """Synthetic documents: D features, so that a minibatch of 8 leaves most rows of W1 idle."""
    data = make_synthetic(n_train=n, n_test=0, n_features=D, n_labels=L, random_state=5)
    return data["X_train"], data["Y_train"]


def new_network(D, L, F=7):
    return Network.initialize(D, L, F, "relu", "sigmoid", random_state=2, dtype=np.float64,
                              init="he")


def dense_rmsprop_training(params, X, Y, *, eta, rho, eps, gamma, batch_size, epochs, seed):
    """The plain loop: every parameter, every entry, every step; ReLU, sigmoid outputs, CE
    (δ2 = o − y), mean over the minibatch; weight decay γ on W1 and W2."""
    P = {name: value.copy() for name, value in params.items()}
    G = {name: np.zeros_like(value) for name, value in P.items()}
    rng = np.random.default_rng(seed)
    for _ in range(epochs):
        order = rng.permutation(X.shape[0])
        X_all, Y_all = X[order].toarray(), Y[order].toarray().astype(float)
        for start in range(0, X.shape[0], batch_size):
            x, y = X_all[start:start + batch_size], Y_all[start:start + batch_size]
            z1 = x @ P["W1"] + P["b1"]
            h = np.maximum(z1, 0)
            delta2 = expit(h @ P["W2"] + P["b2"]) - y
            delta1 = (delta2 @ P["W2"].T) * (z1 > 0)
            grads = {"W1": x.T @ delta1, "b1": delta1.sum(0), "W2": h.T @ delta2,
                     "b2": delta2.sum(0)}
            for name, dJ in grads.items():
                g = dJ / len(x) + (gamma * P[name] if name in ("W1", "W2") else 0)
                G[name] = rho * G[name] + (1 - rho) * g ** 2
                P[name] = P[name] - eta * g / (np.sqrt(G[name]) + eps)
    return P


@pytest.mark.parametrize("gamma", [0.0, 0.01])
def test_a_rule_that_says_nothing_trains_as_the_dense_loop(gamma):
    """RMSProp's G decays on a row without gradient, so the rule must run on every row at every
    step: the real training loop gives the dense loop's parameters (skipping such rows, as an
    executor that assumes they stay, ends 0.03 away in W1 without decay)."""
    X, Y = problem()
    network = new_network(X.shape[1], Y.shape[1])
    expected = dense_rmsprop_training(network.params, X, Y, eta=0.01, rho=0.9, eps=1e-8,
                                      gamma=gamma, batch_size=8, epochs=2, seed=3)
    train(network, CrossEntropy(), LazyRows(RMSProp(0.01), weight_decay=gamma), X, Y,
          batch_size=8, max_epochs=2, dropout=0.0, input_dropout=0.0, random_state=3)
    for name, value in expected.items():
        np.testing.assert_allclose(network.params[name], value, rtol=1e-9, atol=1e-12,
                                   err_msg=name)


def test_a_rule_with_a_closed_form_for_idle_rows_defers_them_to_the_same_parameters():
    """The same RMSProp, saying that a zero-gradient step is (θ, G) ← diag(1, ρ) (θ, G): the
    idle rows are deferred (untouched between steps) and end where the dense loop ends."""
    X, Y = problem()
    network = new_network(X.shape[1], Y.shape[1])
    expected = dense_rmsprop_training(network.params, X, Y, eta=0.01, rho=0.9, eps=1e-8,
                                      gamma=0.0, batch_size=8, epochs=2, seed=3)
    optimizer = LazyRows(LazyRMSProp(0.01), weight_decay=0.0)
    train(network, CrossEntropy(), optimizer, X, Y, batch_size=8, max_epochs=2, dropout=0.0,
          input_dropout=0.0, random_state=3)
    assert "last_step" in optimizer.state["W1"]
    for name, value in expected.items():
        np.testing.assert_allclose(network.params[name], value, rtol=1e-9, atol=1e-12,
                                   err_msg=name)


def test_a_rule_registered_from_outside_trains_by_name(monkeypatch):
    """A new rule is one class and its registration in OPTIMIZERS; get_optimizer builds it by
    name, with its options, and the trainer runs it."""
    monkeypatch.setitem(OPTIMIZERS, "rmsprop", RMSProp)
    X, Y = problem()
    network = new_network(X.shape[1], Y.shape[1])
    optimizer = get_optimizer("rmsprop", 0.01, weight_decay=0.001, rho=0.8)
    assert isinstance(optimizer.rule, RMSProp) and optimizer.rule.rho == 0.8
    history = train(network, CrossEntropy(), optimizer, X, Y, batch_size=8, max_epochs=4,
                    dropout=0.0, input_dropout=0.0, random_state=0)
    losses = history.column("train_loss")
    assert losses[-1] < 0.8 * losses[0]
    assert set(optimizer.state["W1"]) == {"mean_square"}


def test_a_rule_registered_from_outside_is_the_estimators_optimizer_with_its_options(
        monkeypatch, tmp_path):
    """Registered after mlnn was imported, RMSProp is ``optimizer="rmsprop"`` with ρ in
    ``optimizer_options``: fit trains the dense loop's parameters, and the model file keeps the
    options (a loaded model predicts the same, and trains again to the same network)."""
    monkeypatch.setitem(OPTIMIZERS, "rmsprop", RMSProp)
    initial, real_train = {}, estimator.train

    def recording_train(network, *args, **kwargs):      # the parameters as initialised
        initial.update({key: value.copy() for key, value in network.params.items()})
        return real_train(network, *args, **kwargs)

    monkeypatch.setattr(estimator, "train", recording_train)
    X, Y = problem()
    model = MultiLabelNN(optimizer="rmsprop", optimizer_options={"rho": 0.8}, learning_rate=0.01,
                         weight_decay=0.01, hidden_units=7, batch_size=8, max_epochs=2,
                         validation_fraction=0.0, dtype="float64", random_state=3).fit(X, Y)
    assert isinstance(model.optimizer_.rule, RMSProp) and model.optimizer_.rule.rho == 0.8
    expected = dense_rmsprop_training(initial, X, Y, eta=0.01, rho=0.8, eps=1e-8, gamma=0.01,
                                      batch_size=8, epochs=2, seed=3)
    for name, value in expected.items():
        np.testing.assert_allclose(model.network_.params[name], value, rtol=1e-9, atol=1e-12,
                                   err_msg=name)
    model.save(tmp_path / "rmsprop.npz")
    loaded = MultiLabelNN.load(tmp_path / "rmsprop.npz")
    assert loaded.optimizer_options == {"rho": 0.8} and loaded.get_params() == model.get_params()
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    again = loaded.fit(X, Y)
    for name, value in model.network_.params.items():
        np.testing.assert_array_equal(again.network_.params[name], value, err_msg=name)


def test_a_registered_rules_options_are_checked_by_building_it(monkeypatch):
    """An option the rule does not take, or one given both as a hyper-parameter and in
    optimizer_options, is refused naming optimizer_options; an unregistered rule is unknown."""
    monkeypatch.setitem(OPTIMIZERS, "rmsprop", RMSProp)
    with pytest.raises(MLNNError, match=r"^optimizer_options: optimizer 'rmsprop' has no option "
                                        r"'beta'; its options: \['rho', 'epsilon'\]$"):
        MultiLabelNN(optimizer="rmsprop", optimizer_options={"beta": 0.5}).check_params()
    with pytest.raises(MLNNError, match=r"^--options: 'nesterov' is the hyper-parameter "
                                        r"--nesterov; give it there, not in both$"):
        MultiLabelNN(optimizer="momentum", optimizer_options={"nesterov": True}).check_params(
            {"optimizer_options": "--options", "nesterov": "--nesterov"})
    with pytest.raises(MLNNError, match="^optimizer_options: 'learning_rate' is the "):
        MultiLabelNN(optimizer="rmsprop", optimizer_options={"learning_rate": 0.1}).check_params()
    model = MultiLabelNN(optimizer="rmsprop", optimizer_options={"rho": 0.5}).check_params()
    with pytest.raises(MLNNError, match="^optimizer_options: optimizer 'sgd' has no option 'rho'"):
        model.set_params(optimizer="sgd").check_params()
    monkeypatch.delitem(OPTIMIZERS, "rmsprop")
    with pytest.raises(MLNNError, match="unknown optimizer 'rmsprop'"):
        MultiLabelNN(optimizer="rmsprop").check_params()


@pytest.mark.parametrize("name", sorted(RULES))
def test_a_fit_runs_the_rules_update(name):
    """MultiLabelNN.fit calls the rule's ``update`` (counted), and nothing else moves the
    parameters: with ``update`` doing nothing, training leaves them as initialised."""
    X, Y = problem(n=64)
    rule_name = "momentum" if name == "nesterov" else name
    Rule, calls, initial = OPTIMIZERS[rule_name], [], {}
    original, real_train = Rule.update, estimator.train

    def counted(self, theta, g, state, *work):
        calls.append(theta.shape)
        return original(self, theta, g, state, *work)

    def recording_train(network, *args, **kwargs):      # the parameters as initialised
        initial.update({key: value.copy() for key, value in network.params.items()})
        return real_train(network, *args, **kwargs)

    settings = dict(hidden_units=5, max_epochs=2, batch_size=16, optimizer=rule_name,
                    random_state=0, **RULES[name])
    with mock.patch.object(Rule, "update", counted):
        MultiLabelNN(**settings).fit(X, Y)
    assert {(5, Y.shape[1]), (5,), (Y.shape[1],)} <= set(calls)     # W2, b1, b2
    assert any(shape[0] < X.shape[1] and shape[1:] == (5,) for shape in calls)   # rows of W1
    with mock.patch.object(Rule, "update", lambda self, theta, g, state, *work: None), \
            mock.patch.object(estimator, "train", recording_train):
        still = MultiLabelNN(**settings).fit(X, Y)
    assert still.n_updates_ > 0
    for key, value in initial.items():
        np.testing.assert_array_equal(still.network_.params[key], value, err_msg=key)


@pytest.mark.parametrize("Rule, options", [(SGD, {}), (Momentum, {"momentum": 0.9}),
                                           (Momentum, {"momentum": 0.8, "nesterov": True}),
                                           (AdaGrad, {})])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_update_with_reused_work_arrays_equals_update_without_them(Rule, options, dtype):
    """The buffers a caller passes in, whatever they held, change no bit of the step."""
    rng = np.random.default_rng(3)
    rule = Rule(0.1, **options)
    theta0 = rng.normal(size=(6, 5)).astype(dtype)
    theta, theta_work = theta0.copy(), theta0.copy()
    state, state_work = rule.new_state(theta0), rule.new_state(theta0)
    work = [np.full_like(theta0, np.nan) for _ in range(rule.work_arrays)]
    for _ in range(4):
        g = rng.normal(size=theta0.shape).astype(dtype)
        rule.update(theta, g, state)
        rule.update(theta_work, g, state_work, work)
    np.testing.assert_array_equal(theta_work, theta)
    for slot in state:
        np.testing.assert_array_equal(state_work[slot], state[slot])
    assert theta_work.dtype == dtype
