"""Fig. 2 loss landscapes: against the network class, closed forms and finite differences."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlnn.base.errors import MLNNError
from mlnn.figures.landscapes import (PANELS, figure2_surfaces, loss_surface, plateau_fraction,
                                     surface_gradient)
from mlnn.nn.losses import get_loss
from mlnn.nn.network import Network

label_vectors = st.lists(st.integers(0, 1), min_size=2, max_size=6)
values = st.floats(-3, 3, allow_nan=False)


@given(loss=st.sampled_from(["ce", "pwe"]), hidden=st.sampled_from(["relu", "tanh", "sigmoid"]),
       x=values, c=values, y=label_vectors, seed=st.integers(0, 2**32 - 1))
def test_surface_matches_the_network_class(loss, hidden, x, c, y, seed):
    """Each grid value equals the mean loss of a 1-input, 1-hidden-unit Network on (x, y)."""
    rng = np.random.default_rng(seed)
    W1_grid, W2_grid = np.sort(rng.uniform(-4, 4, 5)), np.sort(rng.uniform(-4, 4, 4))
    surface = loss_surface(loss, hidden, W1_grid, W2_grid, x=x, y=y, c=c)
    loss_obj = get_loss(loss)
    L = len(y)
    for i, w2 in enumerate(W2_grid):
        for j, w1 in enumerate(W1_grid):
            W2 = np.full((1, L), c)
            W2[0, 0] = w2
            net = Network(np.array([[w1]]), np.zeros(1), W2, np.zeros(L), hidden,
                          loss_obj.output.name)
            cache = net.forward(np.array([[x]]))
            expected = loss_obj.value(cache.z2, cache.o, np.array([y], dtype=float))
            assert surface.J[i, j] == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_closed_forms_of_the_paper_setting():
    """x = 1, y = (1, 0, 0, 0), c = 0: PWE = exp(−tanh(W2_1 h)),
    CE = log(1 + e^(−W2_1 h)) + 3 log 2."""
    grid = np.linspace(-4, 4, 9)
    W1, W2_1 = np.meshgrid(grid, grid)
    pwe = loss_surface("pwe", "tanh", grid, grid)
    np.testing.assert_allclose(pwe.J, np.exp(-np.tanh(W2_1 * np.tanh(W1))), rtol=1e-12)
    ce = loss_surface("ce", "tanh", grid, grid)
    np.testing.assert_allclose(ce.J, np.log1p(np.exp(-W2_1 * np.tanh(W1))) + 3 * np.log(2),
                               rtol=1e-12)
    relu = loss_surface("ce", "relu", grid, grid)
    np.testing.assert_allclose(relu.J, np.log1p(np.exp(-W2_1 * np.maximum(W1, 0))) + 3 * np.log(2),
                               rtol=1e-12)


@given(loss=st.sampled_from(["ce", "pwe"]), hidden=st.sampled_from(["relu", "tanh", "sigmoid"]),
       x=st.floats(0.2, 2), c=values, y=label_vectors, seed=st.integers(0, 2**32 - 1))
def test_surface_gradient_matches_central_differences(loss, hidden, x, c, y, seed):
    rng = np.random.default_rng(seed)
    # keep x·W1 away from ReLU's kink at 0
    W1 = rng.uniform(0.1, 3, 6) * rng.choice([-1, 1], 6)
    W2_1 = rng.uniform(-3, 3, 5)
    h = 1e-6
    surface = loss_surface(loss, hidden, W1, W2_1, x=x, y=y, c=c)
    dJ_dW1, dJ_dW2_1 = surface_gradient(surface)
    numeric_W1 = (loss_surface(loss, hidden, W1 + h, W2_1, x=x, y=y, c=c).J
                  - loss_surface(loss, hidden, W1 - h, W2_1, x=x, y=y, c=c).J) / (2 * h)
    numeric_W2_1 = (loss_surface(loss, hidden, W1, W2_1 + h, x=x, y=y, c=c).J
                    - loss_surface(loss, hidden, W1, W2_1 - h, x=x, y=y, c=c).J) / (2 * h)
    np.testing.assert_allclose(dJ_dW1, numeric_W1, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(dJ_dW2_1, numeric_W2_1, rtol=1e-5, atol=1e-8)


def test_pwe_has_plateaus_where_ce_keeps_its_slope():
    """Where W2_1 h is strongly negative (wrong ranking), PWE is flat but CE is not (Fig. 2a)."""
    grid = np.linspace(-4, 4, 81)
    pwe, ce = loss_surface("pwe", "tanh", grid, grid), loss_surface("ce", "tanh", grid, grid)
    W1, W2_1 = np.meshgrid(grid, grid)
    wrong = W2_1 * np.tanh(W1) < -3
    assert wrong.any()
    pwe_norm = np.hypot(*surface_gradient(pwe))[wrong]
    ce_norm = np.hypot(*surface_gradient(ce))[wrong]
    assert pwe_norm.max() < 0.05
    assert ce_norm.min() > 0.5
    assert plateau_fraction(pwe, 0.05) > plateau_fraction(ce, 0.05)


def test_relu_hidden_unit_gives_a_steeper_surface_than_tanh():
    """Under CE the largest slope with a ReLU hidden unit exceeds the largest with tanh
    (Fig. 2b)."""
    grid = np.linspace(-4, 4, 81)
    tanh = np.hypot(*surface_gradient(loss_surface("ce", "tanh", grid, grid)))
    relu = np.hypot(*surface_gradient(loss_surface("ce", "relu", grid, grid)))
    assert relu.max() > 2 * tanh.max()


def test_figure2_surfaces_cover_both_panels():
    surfaces = figure2_surfaces(n_points=11)
    assert set(surfaces) == {key for panel in PANELS.values() for key in panel}
    for (loss, hidden), surface in surfaces.items():
        assert surface.J.shape == (11, 11)
        assert (surface.loss, surface.hidden_activation) == (loss, hidden)


@pytest.mark.parametrize("kwargs, message", [
    ({"W1": [1.0]}, "W1"),
    ({"W2_1": [[1.0, 2.0]]}, "W2_1"),
    ({"W1": [0.0, np.nan]}, "W1"),
    ({"y": (1, 2, 0)}, "y"),
    ({"y": (1,)}, "y"),
    ({"loss": "hinge"}, "loss"),
    ({"hidden_activation": "softplus"}, "activation"),
])
def test_bad_arguments_raise(kwargs, message):
    grid = np.linspace(-4, 4, 5)
    with pytest.raises(MLNNError, match=message):
        loss_surface(**{"loss": "ce", "hidden_activation": "tanh", "W1": grid, "W2_1": grid,
                        **kwargs})
