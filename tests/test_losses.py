"""CE and PWE: values, both δ2 against central differences, the two PWE forms, excluded rows."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlnn.base.errors import MLNNError
from mlnn.nn.gradcheck import numerical_gradient
from mlnn.nn.losses import CrossEntropy, PairwiseExponential, get_loss
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


@pytest.mark.parametrize("form", PairwiseExponential.FORMS)
def test_pwe_excludes_only_no_or_all_relevant_labels_not_a_single_pair(form):
    # L = 2: documents 0 and 3 have one relevant and one irrelevant label, a single pair (p, n)
    # with J = exp(−(o_p − o_n)) and δ2 = ∓J (1 − o²); documents 1 (none) and 2 (all) are out
    o = np.array([[0.5, -0.25], [0.5, -0.25], [0.5, -0.25], [0.1, 0.3]])
    z2 = np.arctanh(o)
    Y = np.array([[1, 0], [0, 0], [1, 1], [0, 1]])
    loss = PairwiseExponential(form)
    np.testing.assert_array_equal(loss.excluded(Y), [False, True, True, False])
    J = np.array([math.exp(-0.75), 0.0, 0.0, math.exp(-0.2)])
    np.testing.assert_allclose(loss.per_document(z2, o, Y), J, rtol=1e-14)
    sign = np.array([[-1, 1], [0, 0], [0, 0], [1, -1]])
    np.testing.assert_allclose(loss.delta(z2, o, Y), sign * J[:, None] * (1 - o ** 2),
                               rtol=1e-14)
    assert loss.value(z2, o, Y) == pytest.approx(J.sum() / 4, rel=1e-14)


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


# Hand-computed PWE references with |y| ≥ 2 and several label-set shapes. tanh'(z) = 1 − o²:
# 0.75 at o = ±0.5, 0.9375 at o = 0.25, 1 at o = 0. Pair terms are exp(−(o_p − o_n)).
E = math.exp
PWE_CASES = {
    # L = 3, o = (0.5, 0, −0.5), y = {0, 1} (|y| = L − 1 = 2, |ȳ| = 1): |y||ȳ| = 2
    # pairs (0,2): e^−(0.5+0.5) = e^−1, (1,2): e^−(0+0.5) = e^−0.5
    # J = (e^−1 + e^−0.5) / 2
    # ∂J/∂o = (−e^−1/2, −e^−0.5/2, (e^−1 + e^−0.5)/2), times (0.75, 1, 0.75)
    "L3_y2": ([0.5, 0.0, -0.5], [1, 1, 0],
              (E(-1) + E(-0.5)) / 2,
              [-0.75 * E(-1) / 2, -E(-0.5) / 2, 0.75 * (E(-1) + E(-0.5)) / 2]),
    # L = 3, o = (0.5, 0, −0.5), y = {2} (|y| = 1, |ȳ| = 2): |y||ȳ| = 2
    # pairs (2,0): e^−(−0.5−0.5) = e^1, (2,1): e^−(−0.5−0) = e^0.5
    # J = (e + e^0.5) / 2;  ∂J/∂o = (e/2, e^0.5/2, −(e + e^0.5)/2), times (0.75, 1, 0.75)
    "L3_y1": ([0.5, 0.0, -0.5], [0, 0, 1],
              (E(1) + E(0.5)) / 2,
              [0.75 * E(1) / 2, E(0.5) / 2, -0.75 * (E(1) + E(0.5)) / 2]),
    # L = 4, o = (0.5, 0.25, 0, −0.5), y = {0, 2}, ȳ = {1, 3}: |y||ȳ| = 4
    # pairs (0,1): e^−0.25, (0,3): e^−1, (2,1): e^0.25, (2,3): e^−0.5
    # J = (e^−0.25 + e^−1 + e^0.25 + e^−0.5) / 4
    # ∂J/∂o_0 = −(e^−0.25 + e^−1)/4, ∂J/∂o_1 = (e^−0.25 + e^0.25)/4,
    # ∂J/∂o_2 = −(e^0.25 + e^−0.5)/4, ∂J/∂o_3 = (e^−1 + e^−0.5)/4; times (0.75, 0.9375, 1, 0.75)
    "L4_y2": ([0.5, 0.25, 0.0, -0.5], [1, 0, 1, 0],
              (E(-0.25) + E(-1) + E(0.25) + E(-0.5)) / 4,
              [-0.75 * (E(-0.25) + E(-1)) / 4, 0.9375 * (E(-0.25) + E(0.25)) / 4,
               -(E(0.25) + E(-0.5)) / 4, 0.75 * (E(-1) + E(-0.5)) / 4]),
    # L = 4, same o, y = {0, 1, 3} (|y| = L − 1 = 3), ȳ = {2}: |y||ȳ| = 3
    # pairs (0,2): e^−0.5, (1,2): e^−0.25, (3,2): e^−(−0.5−0) = e^0.5
    # J = (e^−0.5 + e^−0.25 + e^0.5) / 3
    # ∂J/∂o = (−e^−0.5/3, −e^−0.25/3, (e^−0.5 + e^−0.25 + e^0.5)/3, −e^0.5/3),
    # times (0.75, 0.9375, 1, 0.75)
    "L4_y3": ([0.5, 0.25, 0.0, -0.5], [1, 1, 0, 1],
              (E(-0.5) + E(-0.25) + E(0.5)) / 3,
              [-0.75 * E(-0.5) / 3, -0.9375 * E(-0.25) / 3, (E(-0.5) + E(-0.25) + E(0.5)) / 3,
               -0.75 * E(0.5) / 3]),
    # L = 4, same o, y = {1} (|y| = 1), ȳ = {0, 2, 3}: |y||ȳ| = 3
    # pairs (1,0): e^−(0.25−0.5) = e^0.25, (1,2): e^−0.25, (1,3): e^−0.75
    # J = (e^0.25 + e^−0.25 + e^−0.75) / 3
    # ∂J/∂o = (e^0.25/3, −(e^0.25 + e^−0.25 + e^−0.75)/3, e^−0.25/3, e^−0.75/3),
    # times (0.75, 0.9375, 1, 0.75)
    "L4_y1": ([0.5, 0.25, 0.0, -0.5], [0, 1, 0, 0],
              (E(0.25) + E(-0.25) + E(-0.75)) / 3,
              [0.75 * E(0.25) / 3, -0.9375 * (E(0.25) + E(-0.25) + E(-0.75)) / 3,
               E(-0.25) / 3, 0.75 * E(-0.75) / 3]),
}


@pytest.mark.parametrize("form", PairwiseExponential.FORMS)
@pytest.mark.parametrize("case", sorted(PWE_CASES))
def test_pwe_hand_computed_values_and_deltas(form, case):
    o, y, J, delta = PWE_CASES[case]
    o = np.array([o])
    z2 = np.arctanh(o)
    Y = np.array([y], dtype=float)
    loss = PairwiseExponential(form)
    assert loss.per_document(z2, o, Y)[0] == pytest.approx(J, rel=1e-14)
    assert loss.value(z2, o, Y) == pytest.approx(J, rel=1e-14)
    np.testing.assert_allclose(loss.delta(z2, o, Y)[0], delta, rtol=1e-14)
    value, both_delta = loss.value_and_delta(z2, o, Y)
    assert value == pytest.approx(J, rel=1e-14)
    np.testing.assert_allclose(both_delta[0], delta, rtol=1e-14)


@pytest.mark.parametrize("form", PairwiseExponential.FORMS)
def test_pwe_hand_computed_batch_is_the_mean(form):
    # the three L = 4 documents as one minibatch, plus one with no relevant label (J = 0)
    cases = [PWE_CASES[c] for c in ("L4_y1", "L4_y2", "L4_y3")]
    o = np.array([c[0] for c in cases] + [[0.5, 0.25, 0.0, -0.5]])
    Y = np.array([c[1] for c in cases] + [[0, 0, 0, 0]], dtype=float)
    z2 = np.arctanh(o)
    loss = PairwiseExponential(form)
    expected = [c[2] for c in cases] + [0.0]
    np.testing.assert_allclose(loss.per_document(z2, o, Y), expected, rtol=1e-14)
    assert loss.value(z2, o, Y) == pytest.approx(sum(expected) / 4, rel=1e-14)
    np.testing.assert_allclose(loss.delta(z2, o, Y), [c[3] for c in cases] + [[0.0] * 4],
                               rtol=1e-14)


def test_losses_reject_bad_labels():
    z2 = np.zeros((2, 3))
    o = np.tanh(z2)
    for loss in (CrossEntropy(), PairwiseExponential()):
        with pytest.raises(MLNNError, match="0/1"):
            loss.value(z2, o, np.full((2, 3), 2.0))
        with pytest.raises(MLNNError, match="shape"):
            loss.delta(z2, o, np.ones((2, 4)))
        with pytest.raises(MLNNError, match="dtype"):
            loss.value_and_delta(z2, o, np.array([["a"] * 3] * 2))
        with pytest.raises(MLNNError, match="0/1"):
            loss.excluded(np.array([[0.5, 0, 1]]))


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
    with pytest.raises(MLNNError, match="unknown PWE form 'quadratic'"):
        get_loss("pwe", form="quadratic")
    with pytest.raises(MLNNError, match=r"^loss 'pwe' has no option 'scale'; its options: "
                                        r"\['form'\]$"):
        get_loss("pwe", scale=2)


@pytest.mark.parametrize("loss", [CrossEntropy(), PairwiseExponential("pairwise")], ids=repr)
def test_a_loss_carries_its_options_title_and_midpoint(loss):
    again = get_loss(loss.name, **loss.options)
    assert type(again) is type(loss) and again.options == loss.options
    assert repr(again) == repr(loss) == {"ce": "CrossEntropy()",
                                         "pwe": "PairwiseExponential(form='pairwise')"}[loss.name]
    assert loss.title == loss.name.upper()
    assert loss.output.midpoint == {"ce": 0.5, "pwe": 0.0}[loss.name]


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
