"""MultiLabelNN inside scikit-learn's tools: clone, cross-validation with multi-label scorers,
grid search, a text pipeline, and scikit-learn's own estimator checks.

Skipped when scikit-learn 1.6 or later is not installed (``pip install -e ".[sklearn]"``; CI
installs it).
Networks are tiny (a few hidden units, a few epochs) so that every fit takes milliseconds.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

sklearn = pytest.importorskip("sklearn", minversion="1.6")     # the Tags API, expected failures

from sklearn.base import clone, is_classifier                                # noqa: E402
from sklearn.exceptions import NotFittedError as SklearnNotFittedError       # noqa: E402
from sklearn.feature_extraction.text import TfidfVectorizer                  # noqa: E402
from sklearn.metrics import (accuracy_score, average_precision_score, f1_score,  # noqa: E402
                             label_ranking_loss, make_scorer)
from sklearn.model_selection import (GridSearchCV, KFold, cross_val_score,   # noqa: E402
                                     cross_validate)
from sklearn.pipeline import make_pipeline                                   # noqa: E402
from sklearn.utils import get_tags                                           # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks           # noqa: E402
from sklearn.utils.validation import check_is_fitted                         # noqa: E402

from mlnn import MLNNError, MultiLabelNN                                     # noqa: E402
from mlnn.datasets import load                                               # noqa: E402

SMALL = {"hidden_units": 16, "max_epochs": 5, "learning_rate": 0.1, "batch_size": 32,
         "random_state": 0}

#: scikit-learn's common checks that cannot apply to an estimator whose labels are a 2-D 0/1
#: matrix (documents × labels), with the reason for each. What they would otherwise cover is
#: tested below (sparse formats, predictions' shape and dtype, training accuracy).
EXPECTED_FAILED_CHECKS = {
    "check_classifiers_one_label": "fits a 1-D y; Y must be a 2-D 0/1 matrix (documents × labels)",
    "check_classifiers_classes": "fits 1-D y of string classes; Y must be a 2-D 0/1 matrix",
    "check_classifiers_regression_target": "fits a 1-D y, rejected as not 2-D before its values",
    "check_decision_proba_consistency": "fits a 1-D y; Y must be a 2-D 0/1 matrix",
    "check_classifier_not_supporting_multiclass": "fits a 1-D multi-class y and expects "
                                                  "'Only binary classification'; ours is "
                                                  "multi-label, Y is a 2-D 0/1 matrix",
    "check_estimators_dtypes": "trains on labels {1, 2}; a label matrix holds only 0 and 1",
    "check_fit2d_1feature": "trains on labels {1, 2}; a label matrix holds only 0 and 1",
    "check_classifier_data_not_an_array": "trains on labels {1, 2}; a label matrix holds 0 "
                                          "and 1",
    "check_classifiers_train": "asserts a 1-D prediction after fitting y of shape (n, 1); a "
                               "multi-label classifier predicts (n, L)",
    "check_estimator_sparse_array": "asserts predict_proba of shape (n, 2); a multi-label "
                                    "classifier gives (n, L), as the multi-label check wants",
    "check_estimator_sparse_matrix": "asserts predict_proba of shape (n, 2); a multi-label "
                                     "classifier gives (n, L), as the multi-label check wants",
    "check_dtype_object": "X of dtype object is refused with an MLNNError naming X (bad input "
                          "never reaches NumPy), not converted or left to NumPy's TypeError",
    "check_classifier_multioutput": "takes decision_function > 0 as the prediction; ours are "
                                    "sigmoid/tanh scores cut by learned thresholds (Sec. 3.3)",
}


@pytest.fixture(scope="module")
def data():
    """A small synthetic problem; Y as the dense 0/1 array scikit-learn's tools need."""
    dataset = load("synthetic", n_train=300, n_test=100, n_features=120, n_labels=8,
                   random_state=0)
    return dataset.X_train, dataset.Y_train.toarray(), dataset.X_test, dataset.Y_test.toarray()


# ---- scikit-learn's own checks ------------------------------------------------------------------

with warnings.catch_warnings():      # mlnn does not import scikit-learn, so no BaseEstimator
    warnings.filterwarnings("ignore", message="Estimator MultiLabelNN does not inherit")
    SCIKIT_LEARN_CHECKS = parametrize_with_checks(
        [MultiLabelNN(hidden_units=8, max_epochs=5, random_state=0)],
        expected_failed_checks=lambda estimator: EXPECTED_FAILED_CHECKS)


@SCIKIT_LEARN_CHECKS
def test_scikit_learn_estimator_checks(estimator, check):
    """One of scikit-learn's estimator checks. Each check is itself the assertion: it raises
    (an AssertionError or the error it expects us to give) when MultiLabelNN breaks the API, and
    the listed EXPECTED_FAILED_CHECKS are marked xfail by parametrize_with_checks (and the next
    test asserts that exactly those fail)."""
    check(estimator)


def test_every_expected_failure_is_a_check_scikit_learn_runs():
    from sklearn.utils.estimator_checks import check_estimator
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(MultiLabelNN(hidden_units=8, max_epochs=5, random_state=0),
                                  expected_failed_checks=EXPECTED_FAILED_CHECKS, on_fail=None)
    ran = {result["check_name"] for result in results}
    assert set(EXPECTED_FAILED_CHECKS) <= ran
    statuses = {result["check_name"]: result["status"] for result in results}
    assert {statuses[name] for name in EXPECTED_FAILED_CHECKS} == {"xfail"}
    assert {"passed", "xfail", "skipped"} >= set(statuses.values())


# ---- tags, clone, fitted state -----------------------------------------------------------------

def test_tags_say_multi_label_classifier_with_sparse_input():
    model = MultiLabelNN()
    tags = get_tags(model)
    assert is_classifier(model) and tags.estimator_type == "classifier"
    assert tags.classifier_tags.multi_label and not tags.classifier_tags.multi_class
    assert tags.target_tags.multi_output and not tags.target_tags.single_output
    assert tags.input_tags.sparse and tags.target_tags.required


def test_clone_copies_the_hyper_parameters_and_nothing_fitted(data):
    X, Y, _, _ = data
    model = MultiLabelNN(**SMALL, dropout=0.5, sparse_output=True).fit(X, Y)
    copy = clone(model)
    assert copy.get_params() == model.get_params() and copy is not model
    assert not hasattr(copy, "network_") and not hasattr(copy, "classes_")
    check_is_fitted(model)
    with pytest.raises(SklearnNotFittedError):
        check_is_fitted(copy)


def test_scikit_learns_not_fitted_error_catches_ours(data):
    X = data[2]
    for method in ("predict", "predict_proba", "decision_function"):
        with pytest.raises(SklearnNotFittedError) as caught:
            getattr(MultiLabelNN(), method)(X)
        assert isinstance(caught.value, MLNNError)


def test_score_and_predict_agree_with_scikit_learns_metrics(data):
    X, Y, X_test, Y_test = data
    model = MultiLabelNN(**SMALL).fit(X, Y)
    Y_pred = model.predict(X_test)
    assert Y_pred.dtype == Y.dtype and Y_pred.shape == Y_test.shape
    assert model.score(X_test, Y_test) == pytest.approx(accuracy_score(Y_test, Y_pred))
    weights = np.linspace(0.5, 2, len(Y_test))
    assert model.score(X_test, Y_test, sample_weight=weights) == pytest.approx(
        accuracy_score(Y_test, Y_pred, sample_weight=weights))


@pytest.mark.filterwarnings("ignore::scipy.sparse.SparseEfficiencyWarning")     # DIA
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dok", "lil", "dia", "bsr", "csr_array",
                                 "csr_int64"])
def test_every_sparse_format_gives_what_dense_input_gives(data, fmt):
    X, Y, X_test, _ = data
    reference = MultiLabelNN(**SMALL).fit(X.toarray(), Y)
    if fmt == "csr_array":
        X_fmt = sp.csr_array(X)
    elif fmt == "csr_int64":
        X_fmt = sp.csr_matrix(X)
        X_fmt.indices, X_fmt.indptr = (a.astype(np.int64) for a in (X_fmt.indices, X_fmt.indptr))
    else:
        X_fmt = X.asformat(fmt)
    model = MultiLabelNN(**SMALL).fit(X_fmt, Y)
    np.testing.assert_array_equal(model.decision_function(X_test),
                                  reference.decision_function(X_test.toarray()))
    np.testing.assert_array_equal(model.predict(X_test), reference.predict(X_test))


# ---- cross-validation and grid search ----------------------------------------------------------

RANK_LOSS = make_scorer(label_ranking_loss, greater_is_better=False,
                        response_method="decision_function")


def test_cross_validate_with_multi_label_and_ranking_scorers_is_a_loop_over_the_folds(data):
    X, Y, _, _ = data
    folds = KFold(n_splits=3, shuffle=True, random_state=0)
    scoring = {"f1_micro": "f1_micro", "f1_samples": "f1_samples", "rankloss": RANK_LOSS,
               "average_precision": "average_precision"}
    result = cross_validate(MultiLabelNN(**SMALL), X, Y, cv=folds, scoring=scoring,
                            error_score="raise")
    for k, (fit_rows, test_rows) in enumerate(folds.split(X)):
        model = MultiLabelNN(**SMALL).fit(X[fit_rows], Y[fit_rows])
        Y_pred, scores = model.predict(X[test_rows]), model.decision_function(X[test_rows])
        expected = {"f1_micro": f1_score(Y[test_rows], Y_pred, average="micro"),
                    "f1_samples": f1_score(Y[test_rows], Y_pred, average="samples"),
                    "rankloss": -label_ranking_loss(Y[test_rows], scores),
                    "average_precision": average_precision_score(Y[test_rows], scores)}
        for name, value in expected.items():
            assert result[f"test_{name}"][k] == pytest.approx(value), name
    assert np.all(result["test_f1_micro"] > 0.5) and np.all(result["test_rankloss"] > -0.2)


def test_cross_val_score_default_scorer_is_subset_accuracy(data):
    X, Y, _, _ = data
    folds = KFold(n_splits=3)
    scores = cross_val_score(MultiLabelNN(**SMALL), X, Y, cv=folds, error_score="raise")
    by_hand = [MultiLabelNN(**SMALL).fit(X[a], Y[a]).score(X[b], Y[b])
               for a, b in folds.split(X)]
    np.testing.assert_allclose(scores, by_hand)
    f1 = cross_val_score(MultiLabelNN(**SMALL), X, Y, cv=folds, scoring="f1_samples")
    assert not np.any(np.isnan(f1))


def test_grid_search_over_learning_rate_and_dropout_picks_the_best_mean_score(data):
    X, Y, _, _ = data
    grid = {"learning_rate": [0.001, 0.1], "dropout": [0.0, 0.5]}
    search = GridSearchCV(MultiLabelNN(**SMALL), grid, scoring="f1_micro", cv=3)
    search.fit(X, Y)                                     # error_score=nan: failures would hide
    means = search.cv_results_["mean_test_score"]
    assert not np.any(np.isnan(means)) and len(means) == 4
    assert np.ptp(means) > 0.05                          # the grid matters, so argmax is a choice
    assert search.best_params_ == search.cv_results_["params"][int(np.argmax(means))]
    assert search.best_estimator_.learning_rate == search.best_params_["learning_rate"]
    check_is_fitted(search.best_estimator_)


# ---- a pipeline from raw text ------------------------------------------------------------------

TOPICS = {"sport": "match goal team season coach league player score",
          "money": "bank market shares profit investor price trade rates",
          "weather": "rain storm wind forecast snow cloud temperature sunny"}
FILLER = "the a of and to in said on for with was report today news".split()


def _corpus(n, seed):
    """``n`` short documents, each about one or two of the topics, and their 0/1 labels."""
    rng = np.random.default_rng(seed)
    names = sorted(TOPICS)
    texts, Y = [], np.zeros((n, len(names)), dtype=int)
    for i in range(n):
        chosen = rng.choice(len(names), size=rng.integers(1, 3), replace=False)
        Y[i, chosen] = 1
        words = [w for k in chosen for w in rng.choice(TOPICS[names[k]].split(), 4)]
        words += list(rng.choice(FILLER, 6))
        texts.append(" ".join(rng.permutation(words)))
    return texts, Y


def test_a_pipeline_from_raw_text_trains_predicts_and_is_grid_searched():
    texts, Y = _corpus(240, seed=0)
    test_texts, Y_test = _corpus(60, seed=1)
    pipeline = make_pipeline(TfidfVectorizer(), MultiLabelNN(**SMALL))
    pipeline.fit(texts, Y)
    Y_pred = pipeline.predict(test_texts)
    assert Y_pred.shape == Y_test.shape and Y_pred.dtype == Y.dtype
    assert f1_score(Y_test, Y_pred, average="micro") > 0.9
    assert pipeline.decision_function(test_texts).shape == Y_test.shape
    assert pipeline.predict_proba(test_texts).shape == Y_test.shape
    search = GridSearchCV(pipeline, {"multilabelnn__learning_rate": [0.001, 0.1]},
                          scoring="f1_samples", cv=3).fit(texts, Y)
    means = search.cv_results_["mean_test_score"]
    assert not np.any(np.isnan(means))
    assert search.best_params_ == search.cv_results_["params"][int(np.argmax(means))]
