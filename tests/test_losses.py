"""CE and PWE: values, both δ2 against central differences, the two PWE forms, excluded rows."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlnn.errors import MLNNError
from mlnn.gradcheck import numerical_gradient
from mlnn.losses import CrossEntropy, PairwiseExponential, get_loss
from tests.strategies import label_matrices


@st.composite
def outputs_and_labels(draw, max_L=8):
    n = draw(st.integers(1, 6))
    L = draw(st.integers(1, max_L))
    seed = draw(st.integers(0, 2**32 - 1))
    scale = draw(st.sampled_from([0.1, 1.0, 3.0]))
    z2 = np.random.default_rng(seed).normal(scale=scale, size=(n, L))
    return z2, draw(label_matrices(n, L))


def total_loss(loss):
    """Σ_i J_i as a function of z2, whose gradient is the stack of the per-document δ2."""
    def f(z2, Y):
        return loss.per_document(z2, loss.output.fn(z2), Y).sum()
    return f


@pytest.mark.parametrize("loss", [CrossEntropy(), PairwiseExponential("factorised"),
                                  PairwiseExponential("pairwise")], ids=repr)
@given(case=outputs_and_labels())
def test_delta2_matches_central_differences(loss, case):
    z2, Y = case
    o = loss.output.fn(z2)
    numeric = numerical_gradient(lambda z: total_loss(loss)(z, Y), z2)
    np.testing.assert_allclose(loss.delta(z2, o, Y), numeric, rtol=1e-5, atol=1e-8)


@given(case=outputs_and_labels(max_L=12))
def test_pwe_factorised_equals_pairwise(case):
    z2, Y = case
    o = np.tanh(z2)
    factorised, pairwise = PairwiseExponential("factorised"), PairwiseExponential("pairwise")
    np.testing.assert_allclose(factorised.per_document(z2, o, Y), pairwise.per_document(z2, o, Y),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(factorised.delta(z2, o, Y), pairwise.delta(z2, o, Y),
                               rtol=1e-12, atol=1e-14)


@given(case=outputs_and_labels())
def test_pwe_excludes_documents_with_no_or_all_labels(case):
    z2, Y = case
    o = np.tanh(z2)
    loss = PairwiseExponential()
    n_relevant = Y.sum(axis=1)
    expected = (n_relevant == 0) | (n_relevant == Y.shape[1])
    np.testing.assert_array_equal(loss.excluded(Y), expected)
    assert np.all(loss.per_document(z2, o, Y)[expected] == 0)
    assert np.all(loss.delta(z2, o, Y)[expected] == 0)
    assert np.all(loss.per_document(z2, o, Y)[~expected] > 0)


def test_pwe_hand_computed_value():
    # o = (0.5, −0.5, 0) with y = {label 0}: pairs (0,1) and (0,2), |y||ȳ| = 2,
    # J = (exp(−(0.5 − (−0.5))) + exp(−(0.5 − 0))) / 2 = (e^−1 + e^−0.5) / 2
    o = np.array([[0.5, -0.5, 0.0]])
    z2 = np.arctanh(o)
    Y = np.array([[1.0, 0.0, 0.0]])
    expected = (math.exp(-1.0) + math.exp(-0.5)) / 2
    for form in PairwiseExponential.FORMS:
        assert PairwiseExponential(form).value(z2, o, Y) == pytest.approx(expected, rel=1e-14)
    # ∂J/∂o_0 = −(e^−1 + e^−0.5)/2, times tanh' = 1 − 0.25
    delta = PairwiseExponential().delta(z2, o, Y)
    assert delta[0, 0] == pytest.approx(-(math.exp(-1.0) + math.exp(-0.5)) / 2 * 0.75, rel=1e-14)


def test_ce_hand_computed_value_and_delta():
    # z2 = 0 → o = 0.5, every label contributes log 2, whatever y is
    z2 = np.zeros((1, 3))
    Y = np.array([[1.0, 0.0, 1.0]])
    loss = CrossEntropy()
    o = loss.output.fn(z2)
    assert loss.value(z2, o, Y) == pytest.approx(3 * math.log(2), rel=1e-14)
    np.testing.assert_allclose(loss.delta(z2, o, Y), [[-0.5, 0.5, -0.5]])


def test_ce_is_finite_for_extreme_logits():
    z2 = np.array([[-800.0, 800.0, 40.0]])
    Y = np.array([[1.0, 0.0, 1.0]])
    loss = CrossEntropy()
    with np.errstate(all="raise"):
        value = loss.value(z2, loss.output.fn(z2), Y)
    # −log σ(−800) = 800, −log(1 − σ(800)) = 800, −log σ(40) ≈ e^−40
    assert value == pytest.approx(1600.0, rel=1e-12)


def test_ce_matches_the_naive_formula_for_moderate_logits():
    rng = np.random.default_rng(0)
    z2 = rng.normal(size=(4, 5))
    Y = (rng.random((4, 5)) < 0.5).astype(float)
    o = 1 / (1 + np.exp(-z2))
    naive = -(Y * np.log(o) + (1 - Y) * np.log(1 - o)).sum(axis=1)
    np.testing.assert_allclose(CrossEntropy().per_document(z2, o, Y), naive, rtol=1e-12)


def test_losses_are_paired_with_their_output_activation():
    assert CrossEntropy().output.name == "sigmoid"
    assert PairwiseExponential().output.name == "tanh"


def test_unknown_loss_and_form_are_clear_errors():
    with pytest.raises(MLNNError, match="unknown loss 'hinge'"):
        get_loss("hinge")
    with pytest.raises(MLNNError, match="unknown PWE form"):
        PairwiseExponential("quadratic")


@given(case=outputs_and_labels())
def test_ce_equals_the_log_expit_formula(case):
    """The softplus form of CE against SciPy's log-sigmoid, including very large logits."""
    from scipy.special import log_expit
    z2, Y = case
    z2 = z2 * 100          # up to a few hundred: far into the saturated region
    expected = -(Y * log_expit(z2) + (1 - Y) * log_expit(-z2)).sum(axis=1)
    np.testing.assert_allclose(CrossEntropy().per_document(z2, None, Y), expected,
                               rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("loss", [CrossEntropy(), PairwiseExponential("factorised"),
                                  PairwiseExponential("pairwise")], ids=repr)
@given(case=outputs_and_labels())
def test_value_and_delta_equal_value_and_delta(loss, case):
    z2, Y = case
    o = loss.output.fn(z2)
    value, delta = loss.value_and_delta(z2, o, Y)
    assert value == pytest.approx(loss.value(z2, o, Y), rel=1e-14, abs=0)
    np.testing.assert_array_equal(delta, loss.delta(z2, o, Y))
