"""Graders of notebook 02: loss landscapes on the network of Fig. 2 (x = 1, one tanh hidden unit),
PWE's in closed form (Eq. 3) and the slope of CE (Sec. 3.4) along W2_1."""

import numpy as np
from scipy.special import expit

from mlnn.course.grading import Mistake, case_rngs, make_grader, variant
from mlnn.figures.landscapes import loss_surface, surface_gradient


#: The label vectors of the PWE landscapes: the first label relevant, |y| ≠ |ȳ| in most, L from
#: 3 to 7 (a normaliser |y||ȳ| = L = |y|² = |ȳ|² only for y = (1, 1, 0, 0)).
LANDSCAPE_LABELS = ((1, 1, 0, 0), (1, 0, 0), (1, 1, 1, 0, 0), (1, 0, 0, 0, 0, 0),
                    (1, 1, 0, 1, 0, 1, 1), (1, 0, 1))


def _landscape_cases(title, names):
    """(W1, W2_1, c, y) grids of several shapes: a non-square meshgrid, a 1-d array, a scalar,
    the last deep in saturation (|W1|, |W2_1| up to 12); the labels y of
    :data:`LANDSCAPE_LABELS`."""
    shapes = ((5, 8), (9, 3), (6,), (), (4, 4), (7,))
    for rng, shape, y in zip(case_rngs(5, len(shapes)), shapes, LANDSCAPE_LABELS):
        scale = 12 if shape == (7,) else 3      # the last deep in the tanh's saturation
        values = {"W1": rng.uniform(-scale, scale, size=shape),
                  "W2_1": rng.uniform(-scale, scale, size=shape),
                  "c": float(rng.uniform(-2, 2)), "y": y}
        where = f" for y = {y}" if "y" in names else ""
        deep = ", |W1| and |W2_1| up to 12" if scale > 3 else ""
        yield (f"{title} on an array of shape {shape}{where}{deep}",
               [(name, values[name]) for name in names])


def _on_grid(values, W1, W2_1):
    """The entries (W1[i], W2_1[i]) of a surface function ``values(grid_W1, grid_W2_1)``."""
    a, b = np.append(np.ravel(W1), 0.5), np.append(np.ravel(W2_1), 0.5)   # grids of ≥ 2 points
    return np.diag(values(a, b))[:-1].reshape(np.shape(W1))


def _pwe_landscape(W1, W2_1, c, y):
    return _on_grid(lambda a, b: loss_surface("pwe", "tanh", a, b, y=y, c=c).J, W1, W2_1)


def _pwe_pairs(W1, W2_1, c, y, norm=lambda p, q, L: p * q, output=np.tanh, shared=True,
               others=True):
    """PWE's J in closed form, or with one mistake: the pair sum |ȳ| exp(−(o_1 − o_c)) (the pairs
    of label 1) + (|y| − 1)|ȳ| (the ``others``, each exp(0)), divided by ``norm(|y|, |ȳ|, L)``;
    o = ``output``(z), o_c = 0 unless ``shared``."""
    h = np.tanh(W1)
    o_1, o_c = output(W2_1 * h), output(c * h) if shared else 0.0
    p, q = int(np.sum(y)), len(y) - int(np.sum(y))
    return (q * np.exp(-(o_1 - o_c)) + (p - 1) * q * others) / norm(p, q, len(y))


def _pwe_landscape_cases():
    """``pwe_closed_form(W1, W2_1, c, y)`` → PWE's J for labels y (label 1 relevant) and the
    other output weights W2_2 = … = W2_L = c."""
    yield from _landscape_cases("J", ("W1", "W2_1", "c", "y"))


check_pwe_landscape = make_grader("check_pwe_landscape", "PWE landscape in closed form",
                               _pwe_landscape, _pwe_landscape_cases, [
    Mistake("that is J of the network in the text (y = (1, 0, 0, 0), c = 0); this one has the "
            "labels y and the weights c",
            lambda W1, W2_1, c, y: _pwe_pairs(W1, W2_1, 0.0, (1, 0, 0, 0))),
    *(Mistake("J divides the pair sum by |y||ȳ|, the number of (relevant, irrelevant) pairs, not "
              f"by {name}", variant(_pwe_pairs, norm=norm)) for name, norm in (
        ("L", lambda p, q, L: L), ("|y|²", lambda p, q, L: p * p),
        ("|ȳ|²", lambda p, q, L: q * q))),
    Mistake("the pair sum is not averaged: J divides it by |y||ȳ|, the number of (relevant, "
            "irrelevant) pairs", variant(_pwe_pairs, norm=lambda p, q, L: 1)),
    Mistake("the pairs of the other relevant labels count too: each (p, n) with o_p = o_n = o_c "
            "adds exp(0) = 1", variant(_pwe_pairs, others=False)),
    Mistake("the outputs that share the weight c are not 0 here: o_l = tanh(c h) for l > 1",
            variant(_pwe_pairs, shared=False)),
    Mistake("the output units of PWE are tanh, not the sigmoid",
            variant(_pwe_pairs, output=expit))],
                               scale="check how the pair terms are counted and averaged")


def _ce_slope(W1, W2_1):
    return _on_grid(lambda a, b: surface_gradient(loss_surface("ce", "tanh", a, b))[1], W1, W2_1)


def _slope(W1, W2_1, output=expit, y=1, factor=np.tanh, clip=np.inf):
    """∂J/∂W2_1 = (o − y) h with one mistake: o = ``output``(z2) of z2 clipped to ±``clip``,
    another label ``y``, another ``factor`` of W1 than h = tanh(W1)."""
    return (output(np.clip(W2_1 * np.tanh(W1), -clip, clip)) - y) * factor(W1)


def _ce_slope_cases():
    """``ce_dJ_dW2_1(W1, W2_1)`` → ∂J/∂W2_1 of CE, y = 1 for the one output; the last case deep
    in saturation (z2 = W2_1 tanh(W1) from 25 to 32, −30 and ±800: (σ(z2) − 1) h holds there,
    where a formula through e^z2 or e^−z2 overflows)."""
    yield from _landscape_cases("∂J/∂W2_1", ("W1", "W2_1"))
    W1 = np.array([3.0, 2.5, 4.0, -3.0, 3.0, 3.0, 3.0])
    yield ("∂J/∂W2_1 deep in saturation (z2 = W2_1 tanh(W1) from 25 to 32, −30, and ±800 where "
           "e^z2 or e^−z2 overflows)",
           [("W1", W1), ("W2_1", np.array([30.0, 25.5, 32.0, -26.0, -30.1, 800.0, -800.0]))])


check_ce_slope = make_grader("check_ce_slope", "CE slope along W2_1", _ce_slope, _ce_slope_cases, [
    Mistake("the sign is flipped", lambda W1, W2_1: -_ce_slope(W1, W2_1)),
    Mistake("δ2 alone: ∂z2/∂W2_1 contributes a factor", variant(_slope, factor=np.ones_like)),
    Mistake("the factor from z2 = W2_1 h is the hidden unit's output h, not its input W1",
            variant(_slope, factor=np.asarray)),
    Mistake("CE's output unit is the sigmoid, not tanh", variant(_slope, output=np.tanh)),
    Mistake("δ2 = o − y has a label in it: y = 1 for this output", variant(_slope, y=0)),
    Mistake("z2 is clipped: σ(z2) − 1 holds however large z2 is, and needs no clipping",
            variant(_slope, clip=20))])
