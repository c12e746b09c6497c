"""Each activation's derivative against central differences; names and purity."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mlnn.base.errors import MLNNError
from mlnn.nn.activations import ACTIVATIONS, get_activation
from mlnn.nn.gradcheck import numerical_jacobian_diagonal

finite = st.floats(-8, 8, allow_nan=False, allow_infinity=False)
z_arrays = arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 5)), elements=finite)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@given(z=z_arrays)
def test_derivative_matches_central_differences(name, z):
    activation = ACTIVATIONS[name]
    if name == "relu":
        z = np.where(np.abs(z) < 1e-3, 0.5, z)   # away from the kink
    a = activation.fn(z)
    numeric = numerical_jacobian_diagonal(activation.fn, z)
    np.testing.assert_allclose(activation.grad(z, a), numeric, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@given(z=z_arrays)
def test_activations_do_not_modify_their_input(name, z):
    activation = ACTIVATIONS[name]
    before = z.copy()
    a = activation.fn(z)
    a_before = a.copy()
    activation.grad(z, a)
    np.testing.assert_array_equal(z, before)
    np.testing.assert_array_equal(a, a_before)


def test_known_values():
    z = np.array([-2.0, 0.0, 3.0])
    np.testing.assert_allclose(ACTIVATIONS["relu"].fn(z), [0, 0, 3])
    np.testing.assert_allclose(ACTIVATIONS["sigmoid"].fn(z), 1 / (1 + np.exp(-z)))
    np.testing.assert_allclose(ACTIVATIONS["tanh"].fn(z), np.tanh(z))
    # ReLU's derivative at exactly 0 is the sub-gradient 0
    np.testing.assert_array_equal(ACTIVATIONS["relu"].grad(z, ACTIVATIONS["relu"].fn(z)), [0, 0, 1])


def test_sigmoid_is_stable_for_large_inputs():
    z = np.array([-1000.0, 1000.0])
    with np.errstate(all="raise"):
        np.testing.assert_array_equal(ACTIVATIONS["sigmoid"].fn(z), [0.0, 1.0])


def test_unknown_activation_is_a_clear_error():
    with pytest.raises(MLNNError, match="unknown activation 'softplus'"):
        get_activation("softplus")


@pytest.mark.parametrize("name", ["sigmoid", "tanh"])
def test_an_output_activations_midpoint_is_the_middle_of_its_range(name):
    """The range is f's limits; the fixed threshold (0.5 for sigmoid, 0 for tanh) is f(0),
    halfway between them."""
    activation = ACTIVATIONS[name]
    low, middle, high = activation.fn(np.array([-50.0, 0.0, 50.0]))
    assert activation.range == pytest.approx((low, high))
    assert activation.midpoint == middle == pytest.approx((low + high) / 2)
    assert ACTIVATIONS["relu"].range is ACTIVATIONS["relu"].midpoint is None   # hidden only


def test_titles_name_the_activations_for_the_figures():
    assert [ACTIVATIONS[name].title for name in ("relu", "tanh", "sigmoid")] == \
        ["ReLU", "tanh", "sigmoid"]
