"""Building a network, its loss and its optimizer from names."""

import numpy as np
import pytest

from mlnn.base.errors import MLNNError
from mlnn.model.builders import build, build_loss
from mlnn.model.params import DEFAULTS, rule_options
from mlnn.nn.losses import CrossEntropy
from mlnn.nn.network import check_dtype
from mlnn.nn.optimizers import OPTIMIZERS, AdaGrad, Momentum, SGD


@pytest.mark.parametrize("loss, output", [("ce", "sigmoid"), ("pwe", "tanh")])
def test_the_output_activation_is_the_losss_own(loss, output):
    network, built, _ = build(7, 3, loss=loss, hidden_units=4, hidden_activation="tanh",
                              random_state=0)
    assert built.name == loss and network.output.name == output == built.output.name
    assert network.hidden_activation.name == "tanh" and network.shape == (7, 4, 3)


def test_loss_options_and_loss_types():
    assert isinstance(build_loss("ce"), CrossEntropy)
    assert build_loss("pwe", {"form": "pairwise"}).form == "pairwise"
    assert build_loss("pwe").form == build_loss("pwe", {}).form == "factorised"
    network, loss, _ = build(5, 2, hidden_units=3, loss="pwe", loss_options={"form": "pairwise"})
    assert loss.options == {"form": "pairwise"} and network.output is loss.output


def test_build_rejects_a_name_that_is_not_a_hyper_parameter():
    with pytest.raises(MLNNError, match="unknown hyper-parameter 'pwe_form'"):
        build(4, 2, pwe_form="pairwise")


@pytest.mark.parametrize("dtype", ["float32", np.float32, np.dtype("float64"), "float64"])
def test_dtype_by_name_or_numpy_type(dtype):
    network, _, _ = build(5, 2, hidden_units=3, dtype=dtype)
    assert network.dtype == np.dtype(dtype)
    assert all(p.dtype == np.dtype(dtype) for p in network.params.values())


def test_same_seed_same_weights():
    a, _, _ = build(5, 2, hidden_units=3, random_state=4)
    b, _, _ = build(5, 2, hidden_units=3, random_state=4)
    for name in ("W1", "W2"):
        np.testing.assert_array_equal(a.params[name], b.params[name])


def _optimizer(name, learning_rate, **options):
    return build(3, 2, hidden_units=2, optimizer=name, learning_rate=learning_rate, **options)[2]


def test_optimizers_and_their_options():
    executor = _optimizer("momentum", 0.05, momentum=0.7, nesterov=True, weight_decay=0.01)
    momentum = executor.rule
    assert isinstance(momentum, Momentum) and executor.weight_decay == 0.01
    assert (momentum.learning_rate, momentum.momentum, momentum.nesterov) == (0.05, 0.7, True)
    assert isinstance(_optimizer("adagrad", 0.1, momentum=0.7).rule, AdaGrad)
    assert isinstance(_optimizer("sgd", 0.1).rule, SGD)
    assert _optimizer("adagrad", 0.1, optimizer_options={"epsilon": 1e-3}).rule.epsilon == 1e-3


def test_momentum_and_nesterov_go_to_a_rule_that_takes_them_beside_its_other_options(
        monkeypatch):
    """A rule with options of those names gets the hyper-parameters momentum and nesterov;
    optimizer_options gives the others."""
    class Heavy(Momentum):
        def __init__(self, learning_rate, momentum, nesterov=False, damping=1.0):
            super().__init__(learning_rate, momentum, nesterov)
            self.damping = damping

    monkeypatch.setitem(OPTIMIZERS, "heavy", Heavy)
    params = {**DEFAULTS, "optimizer": "heavy", "momentum": 0.6, "nesterov": True,
              "optimizer_options": {"damping": 0.5}}
    assert rule_options(params) == {"momentum": 0.6, "nesterov": True, "damping": 0.5}
    rule = _optimizer("heavy", 0.1, momentum=0.6, nesterov=True,
                      optimizer_options={"damping": 0.5}).rule
    assert (rule.momentum, rule.nesterov, rule.damping) == (0.6, True, 0.5)
    assert rule_options({**params, "optimizer": "adagrad", "optimizer_options": None}) == {}


@pytest.mark.parametrize("kwargs, message", [
    ({"loss": "hinge"}, "unknown loss 'hinge'"),
    ({"loss_options": {"form": "pairwise"}}, "loss 'ce' has no option 'form'; its options: none"),
    ({"loss": "pwe", "loss_options": {"form": "loop"}}, "unknown PWE form 'loop'"),
    ({"hidden_activation": "softsign"}, "unknown activation 'softsign'"),
    ({"optimizer": "adam"}, "unknown optimizer 'adam'"),
    ({"optimizer_options": {"rho": 0.9}}, r"optimizer 'adagrad' has no option 'rho'; its "
                                          r"options: \['epsilon'\]"),
    ({"dtype": "float16"}, "unknown dtype 'float16'"),
    ({"init": "zeros"}, "unknown initialisation 'zeros'"),
    ({"hidden_units": 2.5}, r"hidden_units must be a positive integer, got 2\.5"),
    ({"hidden_units": 0}, "hidden_units must be a positive integer, got 0"),
    ({"hidden_units": True}, "hidden_units must be a positive integer, got True"),
])
def test_bad_names_are_clear_errors(kwargs, message):
    with pytest.raises(MLNNError, match=message):
        build(4, 2, **{"hidden_units": 3, **kwargs})


@pytest.mark.parametrize("dtype, name", [("float32", "float32"), (np.float64, "float64"),
                                         (np.dtype("float32"), "float32")])
def test_check_dtype_gives_the_name(dtype, name):
    assert check_dtype(dtype) == name


@pytest.mark.parametrize("dtype", ["float16", np.int32, None, ["float32"]])
def test_check_dtype_rejects_other_precisions(dtype):
    with pytest.raises(MLNNError, match="unknown dtype"):
        check_dtype(dtype)
