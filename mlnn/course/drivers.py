"""Class answers driven where they live: in the answer's process for a notebook's answer, so
that their state stays there between calls as it does in a notebook (an object's state copied
across at every call would hide a state shared between objects or parameters).

A driver takes the class and the case's inputs and returns the parameters after its steps; a
broken rule of the exercise raises :class:`Misstep`, whose message is the hint. This module
imports nothing of mlnn: in an answer's process it loads no library routine.
"""

import copy

import numpy as np


class Misstep(Exception):
    """A class answer broke a rule of its exercise while it was driven; the message is the hint."""


def _equal(a, b):
    """Whether two parameter or gradient values (arrays, tuples, dicts of them) are identical."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_equal, a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    try:
        return a is b or bool(a == b)
    except Exception:                        # an object without a usable ==
        return False


def _state(optimizer):
    """Copies of the data attributes an optimizer reaches (its own and its class's; arrays and
    containers copied, other objects as they are)."""
    values = {name: getattr(optimizer, name) for name in dir(optimizer)
              if not name.startswith("__") and not callable(getattr(optimizer, name))}
    return {name: copy.deepcopy(v) if isinstance(v, (np.ndarray, dict, list, tuple)) else v
            for name, v in values.items()}


def _take_steps(optimizer, params, steps):
    """``optimizer.step`` on each gradient dict, each step's rules checked: the gradients left
    unchanged, the parameters updated in place, W1 on the rows given only."""
    arrays = dict(params)
    for grads in steps:
        given, W1 = copy.deepcopy(grads), params["W1"].copy()
        optimizer.step(params, given)
        if not _equal(grads, given):
            raise Misstep("step modified the gradients it was given; leave them unchanged")
        for name, array in arrays.items():
            if params.get(name) is not array:
                raise Misstep(f"step replaced params[{name!r}] by a new array; update it in "
                              "place (on W1's rows only), otherwise every step copies all of W1")
        others = np.ones(len(W1), dtype=bool)
        others[grads["W1"][0]] = False
        if not _equal(W1[others], params["W1"][others]):
            raise Misstep("step wrote rows of W1 that have no gradient in this step; W1's "
                          "gradient (rows, values) applies to the rows listed in rows only")


def drive_adagrad(AdaGrad, eta0, epsilon, start, steps, watch=True):
    """The parameters after the steps of notebook 01b's ``AdaGrad(eta0, epsilon)`` from
    ``start``: with ``watch``, on a copy, once a step of another optimizer has left its state
    untouched, and each step's rules checked (:class:`Misstep` otherwise); without, on
    ``start`` itself."""
    optimizer = AdaGrad(eta0, epsilon)
    if not watch:
        for grads in steps:
            optimizer.step(start, grads)
        return start
    params = copy.deepcopy(start)
    other, before = AdaGrad(0.5, 0.01), _state(optimizer)
    _take_steps(other, copy.deepcopy(start), steps[:1])
    if not _equal(before, _state(optimizer)):
        raise Misstep("two AdaGrad objects used side by side interfere: each must keep its own "
                      "G, made in __init__, not shared between objects")
    _take_steps(optimizer, params, steps)
    return params


#: The driver of each class answer (its exercise's name → module, attribute).
DRIVERS = {"AdaGrad": ("mlnn.course.drivers", "drive_adagrad"),
           "RMSProp": ("mlnn.course.standins", "drive_rule")}
