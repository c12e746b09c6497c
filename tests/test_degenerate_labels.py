"""Degenerate label sets at their boundaries: a single label without a positive training document
is warned about like several (:func:`mlnn.base.validation.check_training_data`), a validation split
is judged by whether some document has both kinds of label
(:func:`mlnn.base.validation.check_validation_labels`), and an undefined one-error is explained
by its own condition, not rank loss's (:func:`mlnn.evaluation.metrics.undefined_measures`)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from mlnn.base.errors import MLNNWarning
from mlnn.base.validation import check_training_data, check_validation_labels
from mlnn.evaluation import metrics


def _data(n=30, L=5, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(rng.random((n, 4)) + 0.1)
    Y = (rng.random((n, L)) < 0.5).astype(np.int8)
    Y[0] = 1                                         # every label has a positive document
    return X, Y


def _no_warning(check, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check(*args)


@pytest.mark.parametrize("columns", [[0], [4], [1, 3]])
def test_every_label_without_a_positive_is_named_even_a_single_one(columns):
    X, Y = _data()
    Y[:, columns] = 0
    shown = ", ".join(map(str, columns))
    with pytest.warns(MLNNWarning, match=rf"^{len(columns)} of the 5 labels have no positive "
                                         rf"training document \(columns {shown} of Y\)"):
        check_training_data(X, sp.csr_matrix(Y), warn=True)


def test_a_label_with_a_single_positive_is_not_warned_about():
    X, Y = _data()
    Y[:, 2] = 0
    Y[7, 2] = 1
    _no_warning(lambda: check_training_data(X, sp.csr_matrix(Y), warn=True))


def test_a_validation_split_is_judged_by_a_document_with_both_kinds_of_label():
    full = np.ones((3, 4), dtype=np.int8)            # every label relevant: no rank loss
    with pytest.warns(MLNNWarning, match="none of the 3 validation documents has both"):
        check_validation_labels(sp.csr_matrix(full), "Y_val")
    full[1, 3] = 0                                   # one document with L - 1 relevant labels
    _no_warning(check_validation_labels, sp.csr_matrix(full), "Y_val")
    single = np.zeros((3, 4), dtype=np.int8)
    single[2, 0] = 1                                 # one document with 1 relevant label
    _no_warning(check_validation_labels, sp.csr_matrix(single), "Y_val")
    with pytest.warns(MLNNWarning, match="with a single label the validation rank loss"):
        check_validation_labels(sp.csr_matrix(np.array([[1], [0]], dtype=np.int8)), "Y_val")


def test_an_undefined_one_error_gives_its_own_reason_not_rank_losss():
    Y = np.zeros((3, 4), dtype=int)                  # no relevant label anywhere
    result = metrics.evaluate(Y, np.random.default_rng(0).random((3, 4)), Y)
    reasons = metrics.undefined_measures(result)
    # one-error, coverage and MAP skip the same documents (no relevant label), rank loss others
    assert reasons["oneError"] == reasons["coverage"] == reasons["MAP"]
    assert reasons["oneError"] != reasons["rankloss"]
    assert "relevant label" in reasons["oneError"] and "irrelevant" not in reasons["oneError"]
    all_relevant = np.ones((2, 3), dtype=int)        # one-error defined (0), rank loss not
    result = metrics.evaluate(all_relevant, np.zeros((2, 3)), all_relevant)
    assert result["oneError"] == 0.0 and set(metrics.undefined_measures(result)) == {"rankloss"}
