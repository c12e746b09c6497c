"""MultiLabelNN: the estimator API, refitting, model files, and bad input (scikit-learn itself is
exercised in test_sklearn.py)."""

import ast
import inspect
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from mlnn import MultiLabelNN, NotFittedError
from mlnn.base.errors import MLNNError, ModelFileError
from mlnn.datasets import load
from mlnn.evaluation.metrics import EXTRA_MEASURES, MEASURES
from mlnn.model.modelfile import read_model_file, write_model_file
from mlnn.model.params import DEFAULTS, PARAMS

ROOT = Path(__file__).resolve().parents[1]

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


def test_save_load_round_trip_gives_identical_predictions(fitted, data, tmp_path):
    path = tmp_path / "model.npz"
    fitted.save(path)
    loaded = MultiLabelNN.load(path)
    np.testing.assert_array_equal(loaded.decision_function(data.X_test),
                                  fitted.decision_function(data.X_test))
    np.testing.assert_array_equal(loaded.predict(data.X_test), fitted.predict(data.X_test))
    assert loaded.predict(data.X_test).dtype == fitted.predict(data.X_test).dtype
    assert loaded.get_params() == {**fitted.get_params(), "verbose": False}
    assert len(loaded.classes_) == 8 and loaded.classes_[0].dtype == fitted.classes_[0].dtype
    assert loaded.label_names_ == fitted.label_names_
    assert loaded.history_.records == fitted.history_.records
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
    np.savez(tmp_path / "v1.npz", **dict(arrays, format_version=np.array(1)))   # an older mlnn's
    with pytest.raises(ModelFileError, match=r"format version 1, but this mlnn reads versions "
                                             r"\[2, 3\] only: train the model again"):
        MultiLabelNN.load(tmp_path / "v1.npz")

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
    "loss_options": ({"loss": "pwe"}, {"form": "pairwise"}, lambda m, d: m.loss_.form),
    "optimizer": ({}, "sgd", _scores),
    "optimizer_options": ({}, {"epsilon": 0.5}, _scores),
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
    "stopping": ({}, "meanF", lambda m, d: sorted(m.history_.records[0])),
    "eval_every": ({}, 3, lambda m, d: len(m.history_.records)),
    "validation_fraction": ({}, 0.3, _scores),
    "threshold": ({}, "fixed", _thresholds),
    "threshold_features": ({}, "scores", _thresholds),
    "threshold_lambda": ({}, 1e5, _thresholds),
    "threshold_intercept": ({}, "free", _thresholds),
    "threshold_target": ({"threshold_lambda": 0.01}, "hamming", _thresholds),
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
    N = SMALL["max_epochs"]
    assert len(lines) == N
    assert lines[0].startswith(f"epoch 1/{N}  train loss ")
    assert "validation rank loss" in lines[0] and "left" in lines[0]
    assert lines[-1].endswith("done")


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


# ---- the constructor's signature, check_params, and the scikit-learn-style methods ------------

def test_the_signature_lists_every_hyper_parameter_with_its_default_and_a_docstring_entry():
    signature = inspect.signature(MultiLabelNN)
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in signature.parameters.values())
    assert {name: p.default for name, p in signature.parameters.items()} == DEFAULTS
    parameters = MultiLabelNN.__doc__.split("Parameters\n")[1].split("Attributes\n")[0]
    documented = re.findall(r"^    (\w+) : ", parameters, flags=re.MULTILINE)
    assert documented == list(DEFAULTS), "one numpydoc entry per hyper-parameter, in order"
    model = MultiLabelNN()
    assert model.get_params() == DEFAULTS and set(PARAMS) == set(DEFAULTS)


def test_the_constructor_stores_the_objects_it_is_given():
    seed, callback = np.int64(3), (lambda record: None)
    model = MultiLabelNN(random_state=seed, verbose=callback)
    assert model.random_state is seed and model.verbose is callback


def test_check_params_accepts_the_defaults_and_returns_the_model_unchanged():
    model = MultiLabelNN(dtype=np.float64, random_state=np.int32(4), eval_every=3,
                         threshold_lambda=0, verbose=print)
    before = model.get_params()
    assert model.check_params() is model and model.get_params() == before


#: For each hyper-parameter, values that check_params must reject (the error names the parameter).
BAD_VALUES = {
    "hidden_units": [2.5, 0, -5, True, "10", None],
    "hidden_activation": ["softsign", None, ["relu"]],
    "loss": ["hinge", None],
    "loss_options": [{"form": "pairwise"}, ["form"], "pairwise", {1: "pairwise"},
                     {"form": ["pairwise"]}],
    "optimizer": ["adam", None],
    "optimizer_options": [{"rho": 0.9}, ["epsilon"], {"epsilon": -1.0}, {"momentum": 0.5},
                          {"epsilon": [1e-8]}],
    "learning_rate": [0, -0.1, np.nan, np.inf, "0.1", None],
    "momentum": [1.0, -0.1, np.nan, None],
    "nesterov": [1, "yes", None],
    "weight_decay": [-1e-3, np.inf, None],
    "decay_biases": [0, None],
    "dropout": [1.0, -0.1, np.nan, True, None],
    "input_dropout": [1.0, -0.1, None],
    "batch_size": [0, 1.5, -1, None],
    "max_epochs": [0, 2.0, None],
    "patience": [0, 1.5, None],
    "stopping": ["F1", None, ["rankloss"]],
    "eval_every": [0, 1.5, "epoch"],
    "validation_fraction": [1.0, -0.1, np.nan, None],
    "threshold": ["magic", None],
    "threshold_features": ["hidden", None],
    "threshold_lambda": [-1.0, np.inf, "auto"],
    "threshold_intercept": ["penalized", None],
    "threshold_target": ["accuracy", None],
    "init": ["zeros", None],
    "dtype": ["float16", np.int32, None],
    "sparse_output": [1, "csr", None],
    "random_state": [-1, 1.5, True, "0", np.random.default_rng(0)],
    "verbose": [1, "yes", None],
}


def test_every_hyper_parameter_has_bad_values_to_reject():
    assert set(BAD_VALUES) == set(DEFAULTS)


@pytest.mark.parametrize("name, value", [(name, value) for name, values in BAD_VALUES.items()
                                         for value in values])
def test_check_params_names_the_bad_hyper_parameter(name, value):
    model = MultiLabelNN(**{name: value})
    with pytest.raises(MLNNError, match=rf"\b{name}\b"):
        model.check_params()
    assert model.get_params()[name] is value


def test_loss_options_are_checked_with_the_loss_they_go_with():
    """An option of another loss, or a bad value of the loss's own, is refused naming
    loss_options as the caller spells it; setting the loss again checks the options again."""
    with pytest.raises(MLNNError, match=r"^--opts: unknown PWE form 'loop'; choose one of"):
        MultiLabelNN(loss="pwe", loss_options={"form": "loop"}).check_params(
            {"loss_options": "--opts"})
    model = MultiLabelNN(loss="pwe", loss_options={"form": "pairwise"}).check_params()
    with pytest.raises(MLNNError, match=r"^loss_options: loss 'ce' has no option 'form'"):
        model.set_params(loss="ce").check_params()
    with pytest.raises(MLNNError, match=r"^loss_options: unknown PWE form 'loop'"):   # alone
        model.set_params(loss="pwe").check_params().set_params(
            loss_options={"form": "loop"}).check_params()


def test_fit_checks_the_hyper_parameters_before_the_data():
    with pytest.raises(MLNNError, match="hidden_units must be a positive integer, got 2.5"):
        MultiLabelNN(hidden_units=2.5).fit("not data", None)


def test_a_value_is_checked_once_but_a_value_set_after_the_check_is_checked_again(data):
    model = MultiLabelNN(**SMALL).check_params({"learning_rate": "--learning-rate"})
    with pytest.raises(MLNNError, match="^learning_rate must be a positive finite number"):
        model.set_params(learning_rate=-1.0).fit(data.X_train, data.Y_train)
    model.learning_rate = 0.0                       # set directly, not through set_params
    with pytest.raises(MLNNError, match="^learning_rate must be a positive finite number"):
        model.check_params()


def test_data_without_features_or_labels_is_rejected(data):
    with pytest.raises(MLNNError, match=r"X has 0 feature\(s\) \(shape=\(300, 0\)\)"):
        MultiLabelNN(**SMALL).fit(data.X_train[:, :0], data.Y_train)
    with pytest.raises(MLNNError, match=r"Y has 0 labels \(shape=\(300, 0\)\)"):
        MultiLabelNN(**SMALL).fit(data.X_train, np.zeros((300, 0)))
    with pytest.raises(MLNNError, match="the labels Y are missing"):
        MultiLabelNN(**SMALL).fit(data.X_train, None)


@pytest.mark.parametrize("method", ["predict", "predict_proba", "decision_function", "evaluate",
                                    "score", "save"])
def test_a_model_used_before_fit_raises_a_not_fitted_error(data, method):
    args = {"predict": (data.X_test,), "predict_proba": (data.X_test,),
            "decision_function": (data.X_test,), "evaluate": (data.X_test, data.Y_test),
            "score": (data.X_test, data.Y_test), "save": ("model.npz",)}[method]
    model = MultiLabelNN()
    with pytest.raises(NotFittedError, match="this MultiLabelNN is not fitted yet") as caught:
        getattr(model, method)(*args)
    assert isinstance(caught.value, (MLNNError, ValueError, AttributeError))
    assert not hasattr(model, "network_")


def test_classes_and_n_features_in(fitted, data):
    assert fitted.n_features_in_ == 120
    assert len(fitted.classes_) == 8
    for classes in fitted.classes_:
        np.testing.assert_array_equal(classes, [0, 1])
        assert classes.dtype == data.Y_train.dtype


def test_predict_answers_in_the_dtype_of_the_labels_and_sparse_output_gives_the_same_sets(data):
    dense = MultiLabelNN(**SMALL).fit(data.X_train, data.Y_train.toarray().astype(bool))
    Y_pred = dense.predict(data.X_test)
    assert isinstance(Y_pred, np.ndarray) and Y_pred.dtype == bool
    sparse = dense.set_params(sparse_output=True).predict(data.X_test)
    assert sp.issparse(sparse) and sparse.format == "csr" and sparse.dtype == bool
    np.testing.assert_array_equal(sparse.toarray(), Y_pred)
    scores = dense.decision_function(data.X_test)
    T = dense.thresholds_.predict_threshold(data.X_test, scores)
    np.testing.assert_array_equal(Y_pred, scores > T[:, None])


def test_predict_proba_is_o_for_ce_and_a_rescaled_tanh_score_for_pwe(fitted, data):
    o = fitted.decision_function(data.X_test)
    proba = fitted.predict_proba(data.X_test)
    assert proba.dtype == np.float64 and proba.shape == (100, 8)
    np.testing.assert_array_equal(proba, o.astype(np.float64))
    pwe = MultiLabelNN(**SMALL, loss="pwe").fit(data.X_train, data.Y_train)
    o = pwe.decision_function(data.X_test).astype(np.float64)
    assert o.min() < 0                                   # tanh scores, not probabilities
    proba = pwe.predict_proba(data.X_test)
    np.testing.assert_allclose(proba, (1 + o) / 2, rtol=0, atol=1e-15)
    assert np.all((proba >= 0) & (proba <= 1))


def test_score_is_subset_accuracy_by_a_literal_loop(fitted, data):
    Y = data.Y_test.toarray()
    Y_pred = fitted.predict(data.X_test)
    exact = [all(Y[i, l] == Y_pred[i, l] for l in range(Y.shape[1])) for i in range(len(Y))]
    assert 0 < sum(exact) < len(Y)                       # a score that can tell right from wrong
    assert fitted.score(data.X_test, data.Y_test) == pytest.approx(sum(exact) / len(Y))
    weights = np.arange(1, len(Y) + 1, dtype=float)
    expected = sum(w for w, ok in zip(weights, exact) if ok) / weights.sum()
    assert fitted.score(data.X_test, Y, sample_weight=weights) == pytest.approx(expected)
    with pytest.raises(MLNNError, match="sample_weight has shape"):
        fitted.score(data.X_test, Y, sample_weight=weights[:3])
    with pytest.raises(MLNNError, match="y has 8 labels|expected 8"):
        fitted.score(data.X_test, Y[:, :5])


def test_wrong_width_input_names_the_expected_number_of_features(fitted):
    for method in (fitted.predict, fitted.predict_proba, fitted.decision_function):
        with pytest.raises(MLNNError, match="X has 3 features, but MultiLabelNN is expecting "
                                            "120 features as input"):
            method(np.zeros((2, 3)))


def test_a_model_file_with_an_unknown_hyper_parameter_is_a_clear_error(fitted, tmp_path):
    path = tmp_path / "model.npz"
    fitted.save(path)
    arrays, meta = read_model_file(path)
    meta["params"]["hidden_layers"] = 2
    write_model_file(tmp_path / "future.npz", arrays, meta)
    with pytest.raises(ModelFileError, match=r"hyper-parameters \['hidden_layers'\]"):
        MultiLabelNN.load(tmp_path / "future.npz")


@pytest.mark.parametrize("forge, message", [
    (lambda arrays, meta: meta.pop("fitted"), "the entry 'fitted' is missing"),
    (lambda arrays, meta: meta["params"].update(hidden_units=-5), "hidden_units"),
    (lambda arrays, meta: meta["params"].update(random_state="abc"), "random_state"),
    (lambda arrays, meta: meta.update(history="not a list"), "not an mlnn model file"),
    (lambda arrays, meta: arrays.pop("W1"), "W1"),
])
def test_a_forged_model_file_with_a_valid_checksum_is_not_a_model(fitted, tmp_path, forge,
                                                                   message):
    path = tmp_path / "model.npz"
    fitted.save(path)
    arrays, meta = read_model_file(path)
    forge(arrays, meta)
    write_model_file(tmp_path / "forged.npz", arrays, meta)
    with pytest.raises(ModelFileError, match=message):
        MultiLabelNN.load(tmp_path / "forged.npz")


def test_the_repr_shows_only_what_differs_from_the_defaults():
    assert repr(MultiLabelNN()) == "MultiLabelNN()"
    assert repr(MultiLabelNN(dropout=0.5, sparse_output=True)) == \
        "MultiLabelNN(dropout=0.5, sparse_output=True)"
    assert "random_state=array" in repr(MultiLabelNN(random_state=np.array([1, 2])))


def test_importing_mlnn_does_not_import_scikit_learn():
    code = ("import sys, mlnn, mlnn.model.estimator, mlnn.datasets; "
            "print(any(m == 'sklearn' or m.startswith('sklearn.') for m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=Path(__file__).resolve().parents[1])
    assert result.stdout.strip() == "False"


@pytest.mark.parametrize("dtype", [bool, np.float64, np.uint8])
def test_a_model_file_keeps_the_labels_dtype_and_sparse_output(data, tmp_path, dtype):
    model = MultiLabelNN(**SMALL, sparse_output=True).fit(data.X_train,
                                                         data.Y_train.toarray().astype(dtype))
    model.save(tmp_path / "m.npz")
    loaded = MultiLabelNN.load(tmp_path / "m.npz")
    assert loaded.sparse_output and loaded.classes_[0].dtype == np.dtype(dtype)
    Y_pred = loaded.predict(data.X_test)
    assert sp.issparse(Y_pred) and Y_pred.dtype == np.dtype(dtype)
    assert (Y_pred != model.predict(data.X_test)).nnz == 0


# ---- one default, one check: the model description ----------------------------------------------

#: The modules that describe a model above the core: they read every default from
#: mlnn/model/params.py. (A core class used on its own, in mlnn/nn, keeps its own signature.)
DESCRIBING = sorted({*Path(ROOT, "mlnn", "model").glob("*.py"),
                     *(Path(ROOT, "mlnn", name) for name in (
                         "paper/methods.py", "paper/reproduce.py", "paper/selection.py",
                         "paper/stopping.py", "figures/experiments.py", "figures/curves.py",
                         "figures/landscapes.py",
                         "tools/bench.py", "cli/model.py", "cli/bench.py", "cli/options.py",
                         "cli/experiment.py"))} - {Path(ROOT, "mlnn", "model", "params.py")})


def _stated(node):
    """The (name, value node) pairs a node states: a signature's defaults, a dict literal's
    entries, a dataclass field's default, an ``add_argument``'s default by its destination."""
    if isinstance(node, (ast.FunctionDef, ast.Lambda)):
        args = node.args.posonlyargs + node.args.args
        pairs = list(zip([a.arg for a in args[len(args) - len(node.args.defaults):]],
                         node.args.defaults))
        return pairs + [(a.arg, d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults)
                        if d is not None]
    if isinstance(node, ast.Dict):
        return [(k.value, v) for k, v in zip(node.keys, node.values)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    if isinstance(node, ast.ClassDef):
        return [(s.target.id, s.value) for s in node.body if isinstance(s, ast.AnnAssign)
                and isinstance(s.target, ast.Name) and s.value is not None]
    if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument":
        keywords = {k.arg: k.value for k in node.keywords}
        options = [a.value for a in node.args if isinstance(a, ast.Constant)]
        if "default" in keywords and options:
            dest = options[-1].lstrip("-").replace("-", "_")
            return [(keywords["dest"].value if "dest" in keywords else dest, keywords["default"])]
    return []


def restated_defaults(source):
    """``[(line, name, value)]``: a hyper-parameter's default value (a number or a name; None
    and booleans are switches, not values) written again as a literal in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        for name, value in _stated(node):
            if name not in PARAMS:
                continue
            try:
                value = ast.literal_eval(value)
            except ValueError:
                continue
            default = PARAMS[name].default
            if isinstance(default, (int, float, str)) and not isinstance(default, bool) \
                    and type(value) is type(default) and value == default:
                found.append((node.lineno, name, value))
    return found


def test_the_scan_finds_a_default_restated_in_each_form():
    source = ('def f(x, hidden_units=1000, *, loss="ce"):\n    return {"learning_rate": 0.01}\n'
              "class S:\n    momentum: float = 0.9\n"
              'p.add_argument("--batch-size", type=int, default=64)\n'
              'def g(hidden_units=999, verbose=False, dropout=DEFAULT.dropout):\n    pass\n')
    assert sorted((name, value) for _, name, value in restated_defaults(source)) == [
        ("batch_size", 64), ("hidden_units", 1000), ("learning_rate", 0.01), ("loss", "ce"),
        ("momentum", 0.9)]


@pytest.mark.parametrize("path", DESCRIBING, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_default_is_stated_once_in_the_model_description(path):
    assert restated_defaults(path.read_text(encoding="utf-8")) == [], \
        f"{path.relative_to(ROOT)} restates defaults of mlnn.model.params"


def test_the_description_states_each_default_once_and_checks_it():
    source = Path(ROOT, "mlnn", "model", "params.py").read_text(encoding="utf-8")
    entries = re.findall(r'^    "(\w+)": Param\(', source, flags=re.MULTILINE)
    assert entries == list(PARAMS) == list(inspect.signature(MultiLabelNN).parameters)
    for name, param in PARAMS.items():
        param.check(param.default, name)              # every default passes its own check


@pytest.mark.parametrize("stopping", ["meanF", "meanF_best"])
def test_a_rule_that_needs_validation_data_is_refused_without_it(stopping, data):
    X, Y = data.X_train, data.Y_train
    model = MultiLabelNN(hidden_units=4, max_epochs=2, stopping=stopping, validation_fraction=0,
                         random_state=0)
    with pytest.raises(MLNNError, match=f"^stopping rule '{stopping}' needs validation data"):
        model.fit(X, Y)
    MultiLabelNN(hidden_units=4, max_epochs=2, stopping="fixed", validation_fraction=0,
                 random_state=0).fit(X, Y)          # a fixed budget needs none


def test_a_model_saves_the_hyper_parameters_it_was_fitted_with(data, tmp_path):
    """fit(loss="pwe"), then set_params(loss="ce"): the file holds what was fitted (the loaded
    model scores as the fitted one), and the next fit takes the new value."""
    model = MultiLabelNN(**SMALL, loss="pwe", loss_options={"form": "pairwise"}).fit(
        data.X_train, data.Y_train)
    model.set_params(loss="ce", loss_options=None, learning_rate=0.5)
    model.save(tmp_path / "m.npz")
    loaded = MultiLabelNN.load(tmp_path / "m.npz")
    assert (loaded.loss, loaded.loss_options, loaded.learning_rate) == (
        "pwe", {"form": "pairwise"}, SMALL["learning_rate"])
    assert loaded.loss_.name == "pwe" and loaded.network_.output.name == "tanh"
    np.testing.assert_array_equal(loaded.decision_function(data.X_test),
                                  model.decision_function(data.X_test))
    assert model.fit(data.X_train, data.Y_train).loss_.name == "ce"
