"""Update rules as the graders of notebooks 01b and 02b run them: a problem of four named
parameters with W1's gradients row-sparse."""

import numpy as np

#: Steps of each problem.
STEPS = 6


def rule_problem(rng, D, F, L, dtype=np.float64, steps=STEPS):
    """Parameters W1, b1, W2, b2 and the gradients of each step by name: W1's as (rows, values)
    on a few rows (the words of a minibatch; none at the third step), the others dense arrays
    with some zero entries."""
    shapes = {"W1": (D, F), "b1": (F,), "W2": (F, L), "b2": (L,)}
    params = {name: rng.normal(size=shape).astype(dtype) for name, shape in shapes.items()}
    sequence = []
    for step in range(steps):
        rows = np.sort(rng.choice(D, size=0 if step == 2 else rng.integers(1, D), replace=False))
        grads = {"W1": (rows, rng.normal(size=(len(rows), F)).astype(dtype))}
        for name in ("b1", "W2", "b2"):
            g = rng.normal(size=shapes[name]) * (rng.random(shapes[name]) < 0.7)
            grads[name] = g.astype(dtype)
        sequence.append(grads)
    return params, sequence

