"""MultiLabelNN: the estimator API, refitting, model files, and bad input."""

import zipfile

import numpy as np
import pytest
import scipy.sparse as sp

from mlnn import MultiLabelNN
from mlnn.datasets import load
from mlnn.errors import MLNNError, ModelFileError
from mlnn.estimator import DEFAULTS
from mlnn.metrics import EXTRA_MEASURES, MEASURES

SMALL = {"hidden_units": 16, "max_epochs": 4, "learning_rate": 0.1, "batch_size": 32,
         "random_state": 0}


@pytest.fixture(scope="module")
def data():
    return load("synthetic", n_train=300, n_test=100, n_features=120, n_labels=8, random_state=0)


@pytest.fixture(scope="module")
def fitted(data):
    return MultiLabelNN(**SMALL, dropout=0.5).fit(data.X_train, data.Y_train,
                                                 label_names=data.label_names)


def test_get_params_round_trip_and_constructor_only_stores():
    model = MultiLabelNN(hidden_units=7, loss="pwe", dropout=0.3)
    params = model.get_params()
    assert set(params) == set(DEFAULTS)
    assert params["hidden_units"] == 7 and params["loss"] == "pwe"
    clone = MultiLabelNN(**params)
    assert clone.get_params() == params
    assert model.set_params(learning_rate=0.5) is model
    assert model.get_params()["learning_rate"] == 0.5
    assert not hasattr(model, "network_")
    # the constructor does not validate (scikit-learn convention); fit does
    MultiLabelNN(hidden_activation="softsign")


def test_fit_sets_fitted_attributes(fitted, data):
    assert fitted.network_.shape == (120, 16, 8)
    assert fitted.n_updates_ >= fitted.best_updates_ > 0
    assert len(fitted.history_.records) >= 1
    assert {"rankloss", "MAP", "updates"} <= set(fitted.history_.records[0])
    scores = fitted.decision_function(data.X_test)
    assert scores.shape == (100, 8) and np.all((scores > 0) & (scores < 1))
    Y_pred = fitted.predict(data.X_test)
    assert isinstance(Y_pred, np.ndarray) and Y_pred.shape == (100, 8)
    assert Y_pred.dtype == data.Y_train.dtype and set(np.unique(Y_pred)) <= {0, 1}
    result = fitted.evaluate(data.X_test, data.Y_test)
    assert list(result) == list(MEASURES + EXTRA_MEASURES)
    assert result["rankloss"] < 0.3


def test_refitting_with_the_same_seed_is_deterministic_and_other_params_change_it(data):
    model = MultiLabelNN(**SMALL)
    first = model.fit(data.X_train, data.Y_train).decision_function(data.X_test)
    second = model.fit(data.X_train, data.Y_train).decision_function(data.X_test)
    np.testing.assert_array_equal(first, second)
    model.set_params(hidden_activation="tanh")
    third = model.fit(data.X_train, data.Y_train).decision_function(data.X_test)
    assert model.network_.hidden_activation.name == "tanh"
    assert not np.allclose(first, third)


def test_pwe_model_has_tanh_outputs_and_fixed_threshold_zero(data):
    model = MultiLabelNN(**SMALL, loss="pwe", threshold="fixed")
    model.fit(data.X_train, data.Y_train)
    assert model.network_.output.name == "tanh"
    scores = model.decision_function(data.X_test)
    np.testing.assert_array_equal(model.predict(data.X_test), (scores > 0).astype(int))


def test_explicit_validation_data_is_used(data):
    model = MultiLabelNN(**SMALL).fit(data.X_train[:200], data.Y_train[:200],
                                      data.X_train[200:], data.Y_train[200:])
    assert model.history_.best["rankloss"] == pytest.approx(
        model.evaluate(data.X_train[200:], data.Y_train[200:])["rankloss"])


@pytest.mark.parametrize("include_optimizer", [False, True])
def test_save_load_round_trip_gives_identical_predictions(fitted, data, tmp_path,
                                                          include_optimizer):
    path = tmp_path / "model.npz"
    fitted.save(path, include_optimizer=include_optimizer)
    loaded = MultiLabelNN.load(path)
    np.testing.assert_array_equal(loaded.decision_function(data.X_test),
                                  fitted.decision_function(data.X_test))
    np.testing.assert_array_equal(loaded.predict(data.X_test), fitted.predict(data.X_test))
    assert loaded.predict(data.X_test).dtype == fitted.predict(data.X_test).dtype
    assert loaded.get_params() == {**fitted.get_params(), "verbose": False}
    assert len(loaded.classes_) == 8 and loaded.classes_[0].dtype == fitted.classes_[0].dtype
    assert loaded.label_names_ == fitted.label_names_
    assert loaded.history_.records == fitted.history_.records
    if include_optimizer:
        np.testing.assert_array_equal(loaded.optimizer_.state["W1"]["sum_squares"],
                                      fitted.optimizer_.state["W1"]["sum_squares"])
    else:
        assert loaded.optimizer_.state == {}
    with np.load(path, allow_pickle=False) as npz:       # no pickled objects inside
        assert "W1" in npz.files


def test_truncated_tampered_and_wrong_version_files_are_clear_errors(fitted, tmp_path):
    path = tmp_path / "model.npz"
    fitted.save(path)
    data = path.read_bytes()
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFileError, match="truncated or not an mlnn model file"):
        MultiLabelNN.load(truncated)

    with np.load(path, allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    tampered = dict(arrays, W2=arrays["W2"] + 1)
    np.savez(tmp_path / "tampered.npz", **tampered)
    with pytest.raises(ModelFileError, match="fails its checksum"):
        MultiLabelNN.load(tmp_path / "tampered.npz")

    np.savez(tmp_path / "v99.npz", **dict(arrays, format_version=np.array(99)))
    with pytest.raises(ModelFileError, match="format version 99"):
        MultiLabelNN.load(tmp_path / "v99.npz")

    with pytest.raises(ModelFileError, match="does not exist"):
        MultiLabelNN.load(tmp_path / "missing.npz")
    with zipfile.ZipFile(tmp_path / "other.npz", "w") as archive:
        archive.writestr("x.npy", b"not an array")
    with pytest.raises(ModelFileError):
        MultiLabelNN.load(tmp_path / "other.npz")


@pytest.mark.parametrize("params, message", [
    ({"hidden_activation": "softsign"}, "unknown hidden_activation 'softsign'"),
    ({"loss": "hinge"}, "unknown loss 'hinge'"),
    ({"optimizer": "adam"}, "unknown optimizer 'adam'"),
    ({"dtype": "float16"}, "unknown dtype 'float16'"),
    ({"threshold": "magic"}, "unknown threshold 'magic'"),
    ({"validation_fraction": 1.5}, "validation_fraction must be a number in"),
    ({"dropout": -0.1}, "dropout must be a number"),
    ({"batch_size": 0}, "batch_size must be a positive integer"),
])
def test_bad_hyper_parameters_are_clear_errors_at_fit(data, params, message):
    with pytest.raises(MLNNError, match=message):
        MultiLabelNN(**{**SMALL, **params}).fit(data.X_train, data.Y_train)


def test_unknown_hyper_parameter_names_are_rejected():
    with pytest.raises(TypeError, match="unexpected keyword argument 'hidden_size'"):
        MultiLabelNN(hidden_size=10)
    with pytest.raises(MLNNError, match="unknown hyper-parameter"):
        MultiLabelNN().set_params(lr=0.1)


def test_bad_data_is_a_clear_error(fitted, data):
    with pytest.raises(MLNNError, match="not fitted yet"):
        MultiLabelNN().predict(data.X_test)
    with pytest.raises(MLNNError, match="has 7 features"):
        fitted.predict(np.zeros((2, 7)))
    with pytest.raises(MLNNError, match="NaN or infinite"):
        fitted.decision_function(np.full((1, 120), np.nan))
    with pytest.raises(MLNNError, match="Y has 5 rows but X has 300"):
        MultiLabelNN(**SMALL).fit(data.X_train, data.Y_train[:5])
    with pytest.raises(MLNNError, match="label_names has 3 entries, expected 8"):
        MultiLabelNN(**SMALL).fit(data.X_train, data.Y_train, label_names=["a", "b", "c"])


def _trained_params(model):
    return {name: array.copy() for name, array in model.network_.params.items()}


def test_weight_decay_and_decay_biases_reach_the_optimizer_and_change_training(data):
    plain = MultiLabelNN(**SMALL, optimizer="sgd").fit(data.X_train, data.Y_train)
    decayed = MultiLabelNN(**SMALL, optimizer="sgd", weight_decay=0.05).fit(data.X_train,
                                                                             data.Y_train)
    biases = MultiLabelNN(**SMALL, optimizer="sgd", weight_decay=0.05,
                          decay_biases=True).fit(data.X_train, data.Y_train)
    assert decayed.optimizer_.weight_decay == 0.05 and not decayed.optimizer_.decay_biases
    assert biases.optimizer_.decay_biases
    p, d, b = (_trained_params(m) for m in (plain, decayed, biases))
    assert np.linalg.norm(d["W2"]) < np.linalg.norm(p["W2"])       # decay shrinks the weights
    assert not np.allclose(b["b2"], d["b2"])                         # and the biases only if asked


@pytest.mark.parametrize("options", [{"threshold_intercept": "free"},
                                     {"threshold_intercept": "none"},
                                     {"threshold_target": "hamming"},
                                     {"threshold_features": "scores", "threshold_lambda": 0.0}])
def test_threshold_options_reach_the_predictor_and_survive_a_model_file(data, tmp_path, options):
    model = MultiLabelNN(**SMALL, **options).fit(data.X_train, data.Y_train)
    t = model.thresholds_
    assert t.intercept == model.threshold_intercept and t.target == model.threshold_target
    assert t.features == model.threshold_features
    reference = MultiLabelNN(**SMALL).fit(data.X_train, data.Y_train)
    assert not np.allclose(t.predict_threshold(data.X_test, model.decision_function(data.X_test)),
                           reference.thresholds_.predict_threshold(
                               data.X_test, reference.decision_function(data.X_test)))
    model.save(tmp_path / "m.npz")
    loaded = MultiLabelNN.load(tmp_path / "m.npz")
    assert (loaded.thresholds_.intercept, loaded.thresholds_.target) == (t.intercept, t.target)
    assert loaded.get_params() == {**model.get_params(), "verbose": False}
    np.testing.assert_array_equal(loaded.predict(data.X_test), model.predict(data.X_test))


def test_selected_lambda_and_its_validation_scores_are_recorded(data):
    model = MultiLabelNN(**SMALL).fit(data.X_train, data.Y_train)
    assert model.threshold_lambda_ in model.threshold_scores_
    best = max(model.threshold_scores_.values())
    assert model.threshold_scores_[model.threshold_lambda_] == best


def test_without_validation_data_lambda_is_the_number_of_documents(data):
    model = MultiLabelNN(**SMALL, validation_fraction=0.0).fit(data.X_train, data.Y_train)
    assert model.threshold_lambda_ == data.X_train.shape[0] and model.threshold_scores_ == {}
    fixed = MultiLabelNN(**SMALL, validation_fraction=0.0, threshold_lambda=2.5)
    assert fixed.fit(data.X_train, data.Y_train).threshold_lambda_ == 2.5


def _scores(model, data):
    return model.decision_function(data.X_test)


def _thresholds(model, data):
    return model.thresholds_.predict_threshold(data.X_test, _scores(model, data))


def _weights(model, data):
    return np.concatenate([np.ravel(a).astype(np.float64) for a in model.network_.params.values()])


#: For every hyper-parameter: (extra settings of the base model, a changed value, what it changes).
#: Each changed value must change what is trained (or how it is thresholded), so a parameter that
#: never reaches the code it names fails here.
WIRING = {
    "hidden_units": ({}, 12, lambda m, d: m.network_.shape),
    "hidden_activation": ({}, "tanh", _scores),
    "loss": ({}, "pwe", _scores),
    "optimizer": ({}, "sgd", _scores),
    "learning_rate": ({}, 0.05, _scores),
    "momentum": ({"optimizer": "momentum"}, 0.5, _scores),
    "nesterov": ({"optimizer": "momentum"}, True, _scores),
    "weight_decay": ({}, 0.01, _scores),
    "decay_biases": ({"weight_decay": 0.05}, True, _weights),
    "dropout": ({}, 0.5, _scores),
    "input_dropout": ({}, 0.3, _scores),
    "batch_size": ({}, 16, _scores),
    "max_epochs": ({}, 2, lambda m, d: m.n_updates_),
    "patience": ({"max_epochs": 40, "learning_rate": 0.5}, 1, lambda m, d: m.n_updates_),
    "eval_every": ({}, 3, lambda m, d: len(m.history_.records)),
    "validation_fraction": ({}, 0.3, _scores),
    "threshold": ({}, "fixed", _thresholds),
    "threshold_features": ({}, "scores", _thresholds),
    "threshold_lambda": ({}, 1e5, _thresholds),
    "threshold_intercept": ({}, "free", _thresholds),
    "threshold_target": ({"threshold_lambda": 0.01}, "hamming", _thresholds),
    "pwe_form": ({"loss": "pwe"}, "pairwise", lambda m, d: m.loss_.form),
    "init": ({}, "he", _scores),
    "dtype": ({}, "float64", lambda m, d: m.network_.dtype),
    "sparse_output": ({}, True, lambda m, d: type(m.predict(d.X_test))),
    "random_state": ({}, 1, _scores),
}


def test_every_hyper_parameter_has_a_wiring_check():
    assert set(WIRING) | {"verbose"} == set(DEFAULTS)


@pytest.mark.parametrize("name", sorted(WIRING))
def test_each_hyper_parameter_changes_what_is_trained(name, data):
    base, changed, observe = WIRING[name]
    settings = {**SMALL, **base}
    before = observe(MultiLabelNN(**settings).fit(data.X_train, data.Y_train), data)
    after = observe(MultiLabelNN(**{**settings, name: changed}).fit(data.X_train, data.Y_train),
                    data)
    if isinstance(before, np.ndarray) and isinstance(after, np.ndarray) \
            and before.shape == after.shape:
        assert not np.allclose(before, after), f"{name}={changed!r} changed nothing"
    else:
        assert before != after, f"{name}={changed!r} changed nothing"


def test_verbose_prints_one_line_per_evaluation(data, capsys):
    MultiLabelNN(**SMALL).fit(data.X_train, data.Y_train)
    assert capsys.readouterr().out == ""
    MultiLabelNN(**SMALL, verbose=True).fit(data.X_train, data.Y_train)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == SMALL["max_epochs"] and lines[0].startswith("epoch   1")


def test_best_updates_is_the_update_count_of_the_lowest_validation_rank_loss(data):
    """With validation data, best_updates_ is where the validation rank loss was lowest (the first
    such record), found here by a literal loop over the history; training went on past it."""
    params = {**SMALL, "max_epochs": 30, "learning_rate": 1.0, "eval_every": 2, "patience": 5}
    model = MultiLabelNN(**params).fit(data.X_train[:200], data.Y_train[:200],
                                       data.X_train[200:], data.Y_train[200:])
    best_value, best_updates = np.inf, None
    for record in model.history_.records:
        if record["rankloss"] < best_value:
            best_value, best_updates = record["rankloss"], record["updates"]
    assert model.best_updates_ == best_updates
    assert model.n_updates_ > model.best_updates_
