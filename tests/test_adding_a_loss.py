"""A loss added from outside the package is one class and its registration: it trains, its
options go through the hyper-parameters and a model file, its δ2 passes the finite-difference
check, and the figures, the fixed threshold and predict_proba take what they need from it (and
from its output activation, also one added from outside)."""

import numpy as np
import pytest

from mlnn.base.errors import MLNNError
from mlnn.datasets import load
from mlnn.figures import plots
from mlnn.model.builders import build
from mlnn.model.estimator import MultiLabelNN
from mlnn.nn.activations import ACTIVATIONS, Activation
from mlnn.nn.gradcheck import loss_of_param, numerical_gradient, rel_error
from mlnn.nn.losses import LOSSES, Loss, PairwiseExponential, as_labels, get_loss


class SquaredError(Loss):
    """J_i = (scale / 2) Σ_l (o_l − y_l)² over sigmoid outputs;
    δ2_l = scale (o_l − y_l) · o_l (1 − o_l)."""

    name, title, output = "se", "SE", ACTIVATIONS["sigmoid"]

    def __init__(self, scale=1.0):
        self.scale = scale

    def per_document(self, z2, o, Y):
        return self.scale / 2 * np.square(o - as_labels(Y, o)).sum(axis=1)

    def delta(self, z2, o, Y):
        return self.scale * (o - as_labels(Y, o)) * self.output.grad(z2, o)


@pytest.fixture
def squared_error(monkeypatch):
    monkeypatch.setitem(LOSSES, SquaredError.name, SquaredError)      # its registration


@pytest.fixture(scope="module")
def data():
    return load("synthetic", n_train=200, n_test=50, n_features=30, n_labels=5, random_state=0)


def test_its_delta2_and_the_parameter_gradients_match_central_differences(squared_error):
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(6, 4)), (rng.random((6, 3)) < 0.4).astype(float)
    network, loss, _ = build(4, 3, hidden_units=5, loss="se", loss_options={"scale": 3.0},
                             dtype="float64", random_state=0)
    z2 = rng.normal(size=(6, 3))
    numeric = numerical_gradient(lambda z: loss.per_document(z, loss.output.fn(z), Y).sum(), z2)
    assert rel_error(loss.delta(z2, loss.output.fn(z2), Y), numeric) < 1e-6
    cache = network.forward(X)
    analytic = network.backward(cache, loss.delta(cache.z2, cache.o, Y))
    for name in ("W2", "b2", "b1"):
        numeric = numerical_gradient(loss_of_param(network, loss, X, Y, name),
                                     network.params[name])
        assert rel_error(getattr(analytic, name), numeric) < 1e-6, name


def test_it_trains_saves_and_loads_with_its_options(squared_error, data, tmp_path):
    model = MultiLabelNN(loss="se", loss_options={"scale": 2.0}, hidden_units=8, max_epochs=4,
                         learning_rate=0.1, threshold="fixed", random_state=0)
    model.fit(data.X_train, data.Y_train)
    assert isinstance(model.loss_, SquaredError) and model.loss_.scale == 2.0
    assert model.network_.output.name == "sigmoid" and model.thresholds_.fixed == 0.5
    losses = model.history_.column("train_loss")
    assert losses[-1] < losses[0]
    model.save(tmp_path / "se.npz")
    loaded = MultiLabelNN.load(tmp_path / "se.npz")
    assert isinstance(loaded.loss_, SquaredError) and loaded.loss_.options == {"scale": 2.0}
    assert loaded.get_params() == {**model.get_params(), "verbose": False}
    np.testing.assert_array_equal(loaded.predict(data.X_test), model.predict(data.X_test))


def test_its_options_are_checked_by_building_it(squared_error):
    with pytest.raises(MLNNError, match=r"^loss_options: loss 'se' has no option 'form'; its "
                                        r"options: \['scale'\]$"):
        MultiLabelNN(loss="se", loss_options={"form": "pairwise"}).check_params()


def test_an_unregistered_loss_is_refused_and_a_registered_one_is_in_the_figures(
        squared_error, monkeypatch):
    curves = [{"loss": loss, "learning_rate": 0.1, "dropout": 0.0, "hidden_units": 16,
               "hidden_activation": "relu", "optimizer": "adagrad", "dataset": "d",
               "label": loss, "updates": [10, 20], "rankloss": [0.3, 0.2], "MAP": [0.5, 0.6]}
              for loss in ("se", "ce")]
    fig = plots.plot_learning_rates(curves)
    assert [ax.get_title().split(":")[0] for ax in fig.axes] == ["SE", "CE", "SE", "CE"]
    assert "SE vs CE (left to right)" in fig._suptitle.get_text()
    monkeypatch.delitem(LOSSES, "se")
    with pytest.raises(MLNNError, match="unknown loss 'se'"):
        MultiLabelNN(loss="se").check_params()


def softsign(z):
    """a = z / (1 + |z|), in (−1, 1)."""
    return z / (1 + np.abs(z))


def softsign_grad(z, a):
    """f'(z) = 1 / (1 + |z|)² = (1 − |a|)²."""
    return np.square(1 - np.abs(a))


class BipolarSquaredError(Loss):
    """J_i = ½ Σ_l (o_l − t_l)² with targets t = 2y − 1 over softsign outputs (range (−1, 1));
    δ2_l = (o_l − t_l) · f'(z2_l)."""

    name, title = "bse", "bipolar SE"
    output = Activation("softsign", softsign, softsign_grad, title="softsign", range=(-1.0, 1.0))

    def per_document(self, z2, o, Y):
        return 0.5 * np.square(o - (2 * as_labels(Y, o) - 1)).sum(axis=1)

    def delta(self, z2, o, Y):
        return (o - (2 * as_labels(Y, o) - 1)) * self.output.grad(z2, o)


def test_a_new_output_activation_gives_the_fixed_threshold_and_predict_proba(
        monkeypatch, data, tmp_path):
    """A loss over a new output activation in (−1, 1): its δ2 matches central differences, the
    fixed threshold is the middle of the range, and predict_proba maps the range onto [0, 1],
    (1 + o)/2, also for the model loaded from its file."""
    monkeypatch.setitem(ACTIVATIONS, "softsign", BipolarSquaredError.output)
    monkeypatch.setitem(LOSSES, BipolarSquaredError.name, BipolarSquaredError)
    loss, rng = BipolarSquaredError(), np.random.default_rng(1)
    z2, Y = rng.normal(size=(6, 3)), (rng.random((6, 3)) < 0.4).astype(float)
    numeric = numerical_gradient(lambda z: loss.per_document(z, softsign(z), Y).sum(), z2)
    assert rel_error(loss.delta(z2, softsign(z2), Y), numeric) < 1e-6
    model = MultiLabelNN(loss="bse", hidden_units=8, max_epochs=4, learning_rate=0.1,
                         threshold="fixed", random_state=0).fit(data.X_train, data.Y_train)
    assert model.network_.output.name == "softsign" and model.thresholds_.fixed == 0.0
    o = model.decision_function(data.X_test).astype(np.float64)
    assert o.min() < 0
    proba = model.predict_proba(data.X_test)
    np.testing.assert_array_equal(proba, (1 + o) / 2)
    assert 0 <= proba.min() and proba.max() <= 1
    model.save(tmp_path / "bse.npz")
    np.testing.assert_array_equal(MultiLabelNN.load(tmp_path / "bse.npz").predict_proba(
        data.X_test), proba)


# ---- the contract, held: a loss that breaks it is refused once, naming it ----------------------

class WideDelta(SquaredError):
    name = "wide"

    def delta(self, z2, o, Y):
        return np.zeros((len(z2), z2.shape[1] + 1))             # (n, L + 1)


class ListDelta(SquaredError):
    name = "listed"

    def delta(self, z2, o, Y):
        return super().delta(z2, o, Y).tolist()


class RenamedOption(SquaredError):
    name = "renamed"

    def __init__(self, scale=1.0):
        self.factor = scale


@pytest.mark.parametrize("Kind, problem", [
    (WideDelta, r"its δ2 must be a real NumPy array of z2's shape \(\d+, 5\), got ndarray of "
                r"shape \(\d+, 6\)"),
    (ListDelta, r"its δ2 must be a real NumPy array of z2's shape \(\d+, 5\), got list of shape "
                "None"),
])
def test_a_loss_whose_delta2_is_not_an_array_of_z2s_shape_is_refused_naming_it(
        monkeypatch, data, Kind, problem):
    monkeypatch.setitem(LOSSES, Kind.name, Kind)
    with pytest.raises(MLNNError, match=f"^loss {Kind.name!r}: {problem}$"):
        MultiLabelNN(loss=Kind.name, hidden_units=4, max_epochs=1, threshold="fixed",
                     random_state=0).fit(data.X_train, data.Y_train)


def test_a_loss_whose_option_is_stored_under_another_name_or_that_is_no_class_is_refused(
        monkeypatch):
    """Its options could not be saved, or it could not be a Loss: refused when the
    hyper-parameters are checked."""
    monkeypatch.setitem(LOSSES, "renamed", RenamedOption)
    with pytest.raises(MLNNError, match=r"^loss_options: loss 'renamed': its option 'scale' must "
                                        r"be stored under its own name \(self.scale = scale\)"):
        MultiLabelNN(loss="renamed").check_params()
    monkeypatch.setitem(LOSSES, "lam", lambda: SquaredError())
    with pytest.raises(MLNNError, match=r"^loss 'lam': registered as <function .*>, not a "
                                        r"subclass of mlnn.nn.losses.Loss$"):
        MultiLabelNN(loss="lam").check_params()
    monkeypatch.setitem(LOSSES, 7, SquaredError)                   # no name: breaks nothing
    MultiLabelNN(loss="pwe").check_params()


def test_get_loss_refuses_options_with_a_built_loss_rather_than_ignoring_them():
    built = PairwiseExponential()
    assert get_loss(built) is built and get_loss("pwe", form="pairwise").form == "pairwise"
    with pytest.raises(MLNNError, match=r"^get_loss: PairwiseExponential\(form='factorised'\) is "
                                        r"built with its options already; give its name 'pwe' "
                                        "with the options instead$"):
        get_loss(built, form="pairwise")
