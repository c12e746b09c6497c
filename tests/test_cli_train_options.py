"""``train --optimizer NAME --optimizer-option KEY=VALUE``: the update rule and its options named
on the command line, checked before the data is read, trained and saved."""

import numpy as np
import pytest

from mlnn.cli import main
from mlnn.datasets import load
from mlnn.model.estimator import MultiLabelNN
from mlnn.paper.methods import network_params

SYNTHETIC = ["--dataset", "synthetic", "-o", "n_train=60", "-o", "n_test=20", "-o",
             "n_features=30", "-o", "n_labels=4"]


def test_train_names_the_optimizer_and_its_options(tmp_path, capsys):
    """``--optimizer`` and ``--optimizer-option KEY=VALUE`` (μ and Nesterov's form among them):
    the model file holds them, and its network is the one MultiLabelNN trains with them."""
    path = tmp_path / "m.npz"
    assert main(["train", *SYNTHETIC, "--method", "nn-a", "--optimizer", "momentum",
                 "--optimizer-option", "momentum=0.5", "--optimizer-option", "nesterov=true",
                 "--epochs", "2", "--hidden-units", "8", "--quiet", "--out", str(path)]) == 0
    model = MultiLabelNN.load(path)
    assert (model.optimizer, model.momentum, model.nesterov, model.optimizer_options) == (
        "momentum", 0.5, True, None)
    data = load("synthetic", n_train=60, n_test=20, n_features=30, n_labels=4)
    same = MultiLabelNN(**{**network_params("NN_A"), "optimizer": "momentum", "momentum": 0.5,
                           "nesterov": True, "max_epochs": 2, "hidden_units": 8,
                           "random_state": 0}).fit(data.X_train, data.Y_train)
    assert model.get_params() == {**same.get_params(), "verbose": False}
    np.testing.assert_array_equal(model.decision_function(data.X_test),
                                  same.decision_function(data.X_test))
    assert main(["train", *SYNTHETIC, "--optimizer", "adagrad", "--optimizer-option",
                 "epsilon=1e-6", "--epochs", "1", "--hidden-units", "4", "--quiet", "--out",
                 str(path)]) == 0
    assert MultiLabelNN.load(path).optimizer_options == {"epsilon": 1e-6}


@pytest.mark.parametrize("options, message", [
    (["--optimizer", "adam"], "unknown --optimizer 'adam'; choose one of"),
    (["--optimizer-option", "epsilon=-1"],
     "--optimizer-option: epsilon must be a positive finite number, got -1"),
    (["--optimizer-option", "rho=0.5"],
     "--optimizer-option: optimizer 'adagrad' has no option 'rho'; its options: ['epsilon']"),
    (["--optimizer-option", "momentum=2"],
     "--optimizer-option momentum must be a number in [0, 1), got 2"),
    (["--optimizer-option", "learning_rate=0.1"],
     "--optimizer-option: 'learning_rate' is the hyper-parameter --learning-rate; give it there"),
    (["--optimizer-option", "epsilon"], "--optimizer-option: option 'epsilon' is not KEY=VALUE"),
])
def test_a_bad_optimizer_option_is_one_line_before_the_data_is_read(options, message, tmp_path,
                                                                    capsys):
    """The dataset "nope" is unknown, but the option is reported: it is checked first."""
    argv = ["train", "--dataset", "nope", *options, "--out", str(tmp_path / "m.npz")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("mlnn: error: ") and message in err and err.count("\n") == 1, err
