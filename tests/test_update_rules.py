"""The rule a reader finds in mlnn.nn.optimizers is the code training runs; rules from outside
the package -- RMSProp, Adam and AdamW, each one class and a registration, the way the contract
of mlnn.nn.optimizers states it -- train to the parameters of the plain dense loop, also as a
hyper-parameter of MultiLabelNN, and save and load; a rule that breaks the contract is refused
with one error naming it."""

from unittest import mock

import numpy as np
import pytest
from scipy.special import expit

from mlnn.base.errors import MLNNError
from mlnn.datasets.synthetic import make_synthetic
from mlnn.model import estimator
from mlnn.model.estimator import MultiLabelNN
from mlnn.nn.lazy_updates import LazyRows
from mlnn.nn.losses import CrossEntropy
from mlnn.nn.network import Network
from mlnn.nn.optimizers import MUST_RUN, OPTIMIZERS, SGD, AdaGrad, Linear, Momentum, get_rule
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


class Adam:
    """Adam (Kingma & Ba 2015): t ← t + 1; m ← β1 m + (1 − β1) g; v ← β2 v + (1 − β2) g²;
    θ ← θ − η m̂ / (√v̂ + ε) with m̂ = m / (1 − β1^t), v̂ = v / (1 − β2^t). Its step count t
    is one number of the whole parameter, a 0-d array."""

    def __init__(self, learning_rate, beta1=0.9, beta2=0.999, epsilon=1e-8):
        self.learning_rate, self.beta1, self.beta2 = learning_rate, beta1, beta2
        self.epsilon = epsilon

    def new_state(self, theta):
        return {"m": np.zeros_like(theta), "v": np.zeros_like(theta), "t": np.zeros((), int)}

    def update(self, theta, g, state):
        m, v, t = state["m"], state["v"], state["t"]
        t += 1
        m *= self.beta1
        m += (1 - self.beta1) * g
        v *= self.beta2
        v += (1 - self.beta2) * g * g
        m_hat, v_hat = m / (1 - self.beta1 ** t), v / (1 - self.beta2 ** t)
        theta -= self.learning_rate * m_hat / (np.sqrt(v_hat) + self.epsilon)


class AdamW(Adam):
    """AdamW (Loshchilov & Hutter 2019): θ ← (1 − η λ) θ, decay decoupled from the gradient,
    then Adam's step."""

    def __init__(self, learning_rate, decay=0.01, beta1=0.9, beta2=0.999, epsilon=1e-8):
        super().__init__(learning_rate, beta1, beta2, epsilon)
        self.decay = decay

    def update(self, theta, g, state):
        theta *= 1 - self.learning_rate * self.decay
        super().update(theta, g, state)


def dense_rmsprop(eta, rho=0.9, eps=1e-8):
    """RMSProp's step as a plain formula: (θ, its state) → the new θ."""
    def step(theta, g, s):
        s["G"] = rho * s.get("G", 0) + (1 - rho) * g ** 2
        return theta - eta * g / (np.sqrt(s["G"]) + eps)
    return step


def dense_adam(eta, beta1=0.9, beta2=0.999, eps=1e-8, decay=0.0):
    """Adam's step (AdamW's with ``decay``) as a plain formula."""
    def step(theta, g, s):
        s["t"] = t = s.get("t", 0) + 1
        s["m"] = beta1 * s.get("m", 0) + (1 - beta1) * g
        s["v"] = beta2 * s.get("v", 0) + (1 - beta2) * g ** 2
        m_hat, v_hat = s["m"] / (1 - beta1 ** t), s["v"] / (1 - beta2 ** t)
        return theta * (1 - eta * decay) - eta * m_hat / (np.sqrt(v_hat) + eps)
    return step


def problem(n=96, D=300, L=6):
    """Synthetic documents: D features, so that a minibatch of 8 leaves most rows of W1 idle."""
    data = make_synthetic(n_train=n, n_test=0, n_features=D, n_labels=L, random_state=5)
    return data["X_train"], data["Y_train"]


def new_network(D, L, F=7):
    return Network.initialize(D, L, F, "relu", "sigmoid", random_state=2, dtype=np.float64,
                              init="he")


def dense_training(params, X, Y, step, *, gamma, batch_size, epochs, seed):
    """The plain loop: every parameter, every entry, every step of the rule's ``step``; ReLU,
    sigmoid outputs, CE (δ2 = o − y), mean over the minibatch; weight decay γ on W1 and W2."""
    P = {name: value.copy() for name, value in params.items()}
    S = {name: {} for name in P}
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
                P[name] = step(P[name], g, S[name])
    return P


@pytest.mark.parametrize("gamma", [0.0, 0.01])
def test_a_rule_that_says_nothing_trains_as_the_dense_loop(gamma):
    """RMSProp's G decays on a row without gradient, so the rule must run on every row at every
    step: the real training loop gives the dense loop's parameters (skipping such rows, as an
    executor that assumes they stay, ends 0.03 away in W1 without decay)."""
    X, Y = problem()
    network = new_network(X.shape[1], Y.shape[1])
    expected = dense_training(network.params, X, Y, dense_rmsprop(0.01), gamma=gamma,
                              batch_size=8, epochs=2, seed=3)
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
    expected = dense_training(network.params, X, Y, dense_rmsprop(0.01), gamma=0.0,
                              batch_size=8, epochs=2, seed=3)
    optimizer = LazyRows(LazyRMSProp(0.01), weight_decay=0.0)
    train(network, CrossEntropy(), optimizer, X, Y, batch_size=8, max_epochs=2, dropout=0.0,
          input_dropout=0.0, random_state=3)
    assert "last_step" in optimizer.state["W1"]
    for name, value in expected.items():
        np.testing.assert_allclose(network.params[name], value, rtol=1e-9, atol=1e-12,
                                   err_msg=name)


def test_a_rule_registered_from_outside_trains_by_name(monkeypatch):
    """A new rule is one class and its registration in OPTIMIZERS; get_rule builds it by name,
    with its options, and the trainer runs it."""
    monkeypatch.setitem(OPTIMIZERS, "rmsprop", RMSProp)
    X, Y = problem()
    network = new_network(X.shape[1], Y.shape[1])
    optimizer = LazyRows(get_rule("rmsprop", 0.01, rho=0.8), weight_decay=0.001)
    assert isinstance(optimizer.rule, RMSProp) and optimizer.rule.rho == 0.8
    history = train(network, CrossEntropy(), optimizer, X, Y, batch_size=8, max_epochs=4,
                    dropout=0.0, input_dropout=0.0, random_state=0)
    losses = history.column("train_loss")
    assert losses[-1] < 0.8 * losses[0]
    assert set(optimizer.state["W1"]) == {"mean_square"}


#: The rules from outside: (class, optimizer_options, weight decay γ, the dense formula).
OUTSIDE = {"rmsprop": (RMSProp, {"rho": 0.8}, 0.01, dense_rmsprop(0.01, rho=0.8)),
           "adam": (Adam, {"beta1": 0.8}, 0.01, dense_adam(0.01, beta1=0.8)),
           "adamw": (AdamW, {"decay": 0.1}, 0.0, dense_adam(0.01, decay=0.1))}


@pytest.mark.parametrize("name", sorted(OUTSIDE))
def test_a_rule_registered_from_outside_is_the_estimators_optimizer_with_its_options(
        monkeypatch, tmp_path, name):
    """Registered after mlnn was imported, each rule is ``optimizer=name`` with its options in
    ``optimizer_options``: fit trains the dense loop's parameters (Adam's step count, a 0-d
    state array, advances once per step), and the model file keeps the options (a loaded
    model predicts the same, and trains again to the same network)."""
    Rule, options, gamma, step = OUTSIDE[name]
    monkeypatch.setitem(OPTIMIZERS, name, Rule)
    initial, real_train = {}, estimator.train

    def recording_train(network, *args, **kwargs):      # the parameters as initialised
        initial.update({key: value.copy() for key, value in network.params.items()})
        return real_train(network, *args, **kwargs)

    monkeypatch.setattr(estimator, "train", recording_train)
    X, Y = problem()
    model = MultiLabelNN(optimizer=name, optimizer_options=options, learning_rate=0.01,
                         weight_decay=gamma, hidden_units=7, batch_size=8, max_epochs=2,
                         validation_fraction=0.0, dtype="float64", random_state=3).fit(X, Y)
    assert type(model.optimizer_.rule) is Rule
    expected = dense_training(initial, X, Y, step, gamma=gamma, batch_size=8, epochs=2, seed=3)
    for key, value in expected.items():
        np.testing.assert_allclose(model.network_.params[key], value, rtol=1e-9, atol=1e-12,
                                   err_msg=key)
        assert np.abs(value - initial[key]).max() > 1e-3, key           # it trained
    if name != "rmsprop":
        assert model.optimizer_.state["W1"]["t"] == model.n_updates_
    model.save(tmp_path / f"{name}.npz")
    loaded = MultiLabelNN.load(tmp_path / f"{name}.npz")
    assert loaded.optimizer_options == options and loaded.get_params() == model.get_params()
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    again = loaded.fit(X, Y)
    for key, value in model.network_.params.items():
        np.testing.assert_array_equal(again.network_.params[key], value, err_msg=key)


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
    with pytest.raises(MLNNError, match="^optimizer_options: optimizer 'rmsprop' has no option "
                                        "'beta'"):           # the options alone set again
        model.set_params(optimizer="rmsprop").check_params().set_params(
            optimizer_options={"beta": 0.5}).check_params()
    monkeypatch.delitem(OPTIMIZERS, "rmsprop")
    with pytest.raises(MLNNError, match="unknown optimizer 'rmsprop'"):
        MultiLabelNN(optimizer="rmsprop").check_params()


@pytest.mark.parametrize("name", sorted(RULES))
def test_a_fit_runs_the_rules_update(name):
    """MultiLabelNN.fit calls the rule's ``update`` (counted), and nothing else moves the
    parameters: an ``update`` doing nothing is refused on the first step."""
    X, Y = problem(n=64)
    rule_name = "momentum" if name == "nesterov" else name
    Rule, calls = OPTIMIZERS[rule_name], []
    original = Rule.update

    def counted(self, theta, g, state, *work):
        calls.append(theta.shape)
        return original(self, theta, g, state, *work)

    settings = dict(hidden_units=5, max_epochs=2, batch_size=16, optimizer=rule_name,
                    random_state=0, **RULES[name])
    with mock.patch.object(Rule, "update", counted):
        MultiLabelNN(**settings).fit(X, Y)
    assert {(5, Y.shape[1]), (5,), (Y.shape[1],)} <= set(calls)     # W2, b1, b2
    assert any(shape[0] < X.shape[1] and shape[1:] == (5,) for shape in calls)   # rows of W1
    with mock.patch.object(Rule, "update", lambda self, theta, g, state, *work: None), \
            pytest.raises(MLNNError, match=f"^update rule {Rule.__name__}: θ did not change in "
                                           "a step with a nonzero gradient"):
        MultiLabelNN(**settings).fit(X, Y)


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


# ---- the contract, held: a rule that breaks it is refused once, naming it ----------------------

class ListState(RMSProp):
    def new_state(self, theta):
        return [np.zeros_like(theta)]


class WrongShape(RMSProp):
    def new_state(self, theta):
        return {"mean_square": np.zeros((theta.shape[0] + 1,) + theta.shape[1:])}


class ReservedSlot(RMSProp):
    def new_state(self, theta):
        return {"last_step": np.zeros_like(theta)}


class TextWork(SGD):
    work_arrays = "2"


class NegativeWork(SGD):
    work_arrays = -1


class RebindsTheta(RMSProp):
    def update(self, theta, g, state):
        theta = theta - self.learning_rate * g          # noqa: F841 -- the fault


def idle_answer(answer):
    """Momentum, saying ``answer`` for a step without gradient."""
    return type("Says", (Momentum,), {"idle_steps": lambda self, gamma: answer})


#: Each faulty rule, and the end of its one error line (after "update rule <its class>: ").
FAULTY = [
    (ListState, "new_state must return a dict of arrays, got list"),
    (WrongShape, r"new_state's 'mean_square' must be a NumPy array of θ's shape \(\d+, 7\) or a "
                 r"0-d array, got ndarray of shape \(\d+, 7\)"),
    (ReservedSlot, "new_state names a state array 'last_step'; a name is a string other than"),
    (TextWork, "work_arrays must be an integer >= 0, got '2'"),
    (NegativeWork, "work_arrays must be an integer >= 0, got -1"),
    (RebindsTheta, "θ did not change in a step with a nonzero gradient: update must change "
                   r"theta in place \(theta -= ...\), not bind a new array to the name$"),
    (idle_answer(None), "idle_steps answered None; it must answer UNCHANGED, MUST_RUN or a "
                        "Linear map"),
    (idle_answer("must_run"), "idle_steps answered 'must_run'; it must answer"),
    (idle_answer(True), "idle_steps answered True; it must answer"),
    (idle_answer(0.5), "idle_steps answered 0.5; it must answer"),
    (idle_answer(Linear(np.eye(3), "velocity")), r"idle_steps answered Linear\(.*, 'velocity'\); "
                                                  "A must be a finite NumPy array, 1 × 1 without"),
    (idle_answer(Linear([[1.0]])), r"idle_steps answered Linear\(\[\[1.0\]\], None\); A must be"),
    (idle_answer(Linear(np.eye(2))), r"idle_steps answered Linear\(.*, None\); A must be"),
    (idle_answer(Linear(np.eye(2), "nope")), "idle_steps answered a Linear map of the state array "
                                             r"'nope', which is not one of θ's shape in its "
                                             r"state: \['velocity'\]"),
]


@pytest.mark.parametrize("Rule, problem_", FAULTY, ids=[rule.__name__ + str(i)
                                                        for i, (rule, _) in enumerate(FAULTY)])
def test_a_rule_breaking_the_contract_is_refused_naming_it(monkeypatch, Rule, problem_):
    """Each answer is checked when first used: through MultiLabelNN.fit, one MLNNError line
    naming the rule and what is wrong (never a traceback from NumPy, never trained silently
    wrong, never a wrong idle_steps answer read as UNCHANGED)."""
    monkeypatch.setitem(OPTIMIZERS, "faulty", Rule)
    X, Y = problem(n=32)
    options = {"momentum": 0.9} if issubclass(Rule, Momentum) else {}
    with pytest.raises(MLNNError, match=f"^update rule {Rule.__name__}: {problem_}") as error:
        MultiLabelNN(optimizer="faulty", hidden_units=7, batch_size=8, max_epochs=1,
                     validation_fraction=0.0, random_state=0, **options).fit(X, Y)
    assert "\n" not in str(error.value)


class NoEta:
    def __init__(self, rho=0.9):
        self.rho = rho


class TakesMomentum(RMSProp):
    def __init__(self, learning_rate, momentum=0.99):
        super().__init__(learning_rate)
        self.momentum = momentum


class TakesAnything(RMSProp):
    def __init__(self, learning_rate, **options):
        super().__init__(learning_rate)


@pytest.mark.parametrize("entry, problem_", [
    (NoEta, r"its constructor must take η first, named learning_rate; it takes \['rho'\]"),
    (TakesMomentum, "its option 'momentum' is the name of the hyper-parameter of Momentum; name "
                    "it otherwise"),
    (TakesAnything, r"its constructor must name each option \(no \*args, \*\*kwargs or "
                    r"positional-only arguments\)"),
    (lambda learning_rate: SGD(learning_rate), "registered as <function .*>, not a class"),
])
def test_a_registered_rule_whose_constructor_breaks_the_contract_is_refused(
        monkeypatch, entry, problem_):
    """The registered class is checked when the hyper-parameters are: a constructor without η
    would get η as its first option, an option named ``momentum`` would silently be the
    hyper-parameter of that name."""
    monkeypatch.setitem(OPTIMIZERS, "faulty", entry)
    with pytest.raises(MLNNError, match=f"^update rule 'faulty': {problem_}$"):
        MultiLabelNN(optimizer="faulty").check_params()


def test_a_key_of_the_registry_that_is_no_name_breaks_no_other_rule(monkeypatch):
    """A non-string key names no rule: it is refused when given, and every other rule trains."""
    monkeypatch.setitem(OPTIMIZERS, 3, SGD)
    X, Y = problem(n=32)
    model = MultiLabelNN(hidden_units=5, max_epochs=1, random_state=0).fit(X, Y)
    assert model.n_updates_ > 0 and isinstance(model.optimizer_.rule, AdaGrad)
    with pytest.raises(MLNNError, match=r"^unknown optimizer 3; choose one of \['adagrad', "):
        MultiLabelNN(optimizer=3).check_params()


def test_a_rules_answers_are_checked_once_per_parameter(monkeypatch):
    """new_state and idle_steps are asked once per parameter, and the in-place check copies θ
    only until a step with a gradient moved it (the first)."""
    asked = []

    class Counting(Momentum):
        def idle_steps(self, gamma):
            asked.append(gamma)
            return super().idle_steps(gamma)

    X, Y = problem(n=32)
    optimizer = LazyRows(Counting(0.01, 0.9), weight_decay=0.0)
    train(new_network(X.shape[1], Y.shape[1]), CrossEntropy(), optimizer, X, Y, batch_size=8,
          max_epochs=2, dropout=0.0, input_dropout=0.0, random_state=0)
    assert len(asked) == 4 and optimizer._checking is None


def test_a_rule_with_a_step_count_is_called_once_per_step_whatever_the_row_blocks(monkeypatch):
    """Adam's t is one value of the whole parameter: with blocks of one row (every other rule's
    rows go block by block), its update still runs once per step, to the dense loop's
    parameters."""
    import mlnn.nn.lazy_updates
    monkeypatch.setattr(mlnn.nn.lazy_updates, "ROW_BLOCK_BYTES", 1)
    X, Y = problem()
    network = new_network(X.shape[1], Y.shape[1])
    expected = dense_training(network.params, X, Y, dense_adam(0.01), gamma=0.0, batch_size=8,
                              epochs=1, seed=3)
    optimizer = LazyRows(Adam(0.01), weight_decay=0.0)
    train(network, CrossEntropy(), optimizer, X, Y, batch_size=8, max_epochs=1, dropout=0.0,
          input_dropout=0.0, random_state=3)
    assert optimizer.state["W1"]["t"] == optimizer.t == 12
    for name, value in expected.items():
        np.testing.assert_allclose(network.params[name], value, rtol=1e-9, atol=1e-12,
                                   err_msg=name)


class RebindsState(LazyRMSProp):
    """Puts a new G in the state instead of writing into the one new_state gave (and defers
    idle rows, so that the rows of a row-sparse gradient are gathered)."""

    def update(self, theta, g, state):
        state["mean_square"] = self.rho * state["mean_square"] + (1 - self.rho) * g * g
        theta -= self.learning_rate * g / (np.sqrt(state["mean_square"]) + self.epsilon)


def test_a_new_array_put_in_the_state_is_never_seen_gathered_rows_or_not():
    """The engine keeps the arrays new_state gave (the contract): G stays 0 for the rows a
    row-sparse gradient gathers as for a dense one, so both run the same steps."""
    from mlnn.nn.network import RowSparseGradient
    rng = np.random.default_rng(0)
    theta0, rows = rng.normal(size=(6, 3)), np.array([1, 4])
    sparse, dense = theta0.copy(), theta0.copy()
    run_sparse, run_dense = (LazyRows(RebindsState(0.1), 0.0) for _ in range(2))
    for _ in range(3):
        values = rng.normal(size=(2, 3))
        g = np.zeros_like(theta0)
        g[rows] = values
        run_sparse.step({"W1": sparse}, {"W1": RowSparseGradient(rows, values, theta0.shape)})
        run_dense.step({"W1": dense}, {"W1": g})
    np.testing.assert_array_equal(sparse, dense)
    assert not run_sparse.state["W1"]["mean_square"].any()
