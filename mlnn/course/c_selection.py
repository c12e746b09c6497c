"""Grader of notebook 06b's last exercise: choosing the SVMs' C for the binary-relevance baselines
on a validation split (Sec. 4). BR_B takes the mean of micro- and macro-F1 of the sign
predictions ŷ_l = [s_l > 0], the macro average over the labels with a positive validation
document (:func:`mlnn.evaluation.metrics.selection_score`); BR_R the validation rank loss. The
first C of the grid wins ties (:func:`mlnn.paper.selection.fit_br`). The test margins are given
to the student's function too, so that a choice made on them can be caught and named. The
notebook calls :func:`check_select_C` through :mod:`mlnn.course.measures`.
"""

import numpy as np

from mlnn.course.grading import NotYet, as_array, case_rngs, grade, run
from mlnn.evaluation import metrics


def selection_values(S_list, Y, variant, predict=lambda S: S > 0, **score):
    """The validation criterion of each C: BR_B's mean of micro- and macro-F1 of the label sets
    ``predict(S)`` (:func:`mlnn.evaluation.metrics.selection_score`, higher is better), BR_R's
    rank loss (lower is better)."""
    if variant == "B":
        return [metrics.selection_score(Y, predict(S), **score) for S in S_list]
    return [metrics.rank_loss(Y, S) for S in S_list]


def _first_best(values, higher):
    """Index of the best value, the first on ties (a literal loop)."""
    best = 0
    for i, value in enumerate(values):
        if (value > values[best]) if higher else (value < values[best]):
            best = i
    return best


def reference_C(C_values, S_val, Y_val, variant):
    """The C that :func:`mlnn.paper.selection.fit_br` chooses from these validation margins."""
    values = selection_values(S_val, Y_val, variant)
    return C_values[_first_best(values, variant == "B")]


def _choice(criterion, higher, split="val", last=False):
    def select(C_values, S_val, Y_val, S_test, Y_test, variant):
        S, Y = (S_val, Y_val) if split == "val" else (S_test, Y_test)
        values = criterion(S, Y, variant)
        if last:
            return C_values[len(values) - 1 - _first_best(values[::-1], higher(variant))]
        return C_values[_first_best(values, higher(variant))]
    return select


def _br_b_by(**score):
    """BR_B chosen by another score (BR_R right): for a mistake only BR_B can make."""
    return _choice(lambda S, Y, variant: selection_values(S, Y, variant, **score),
                   lambda variant: variant == "B")


def _right(S, Y, variant):
    return selection_values(S, Y, variant)


def _higher(variant):
    return variant == "B"


SELECTION_MISTAKES = [
    (_choice(_right, _higher, split="test"), "your C is the one the TEST split prefers: choose C "
                                             "on the validation split; the test split only "
                                             "reports the result"),
    (_choice(_right, _higher, last=True), "ties: when several C values score the same, take the "
                                          "first of the grid (the smallest C), not the last"),
    (_br_b_by(macro_labels="all"), "BR_B's macro-F1 runs over the labels that have a positive "
                                   "validation document (the project's selection convention), "
                                   "not over all labels"),
    (_br_b_by(criterion="miF"), "BR_B chooses by the MEAN of micro- and macro-F1, not by "
                                "micro-F1 alone"),
    (_br_b_by(criterion="maF"), "BR_B chooses by the MEAN of micro- and macro-F1, not by "
                                "macro-F1 alone"),
    (_br_b_by(predict=lambda S: S >= 0), "BR_B predicts label l when its margin is strictly "
                                         "positive, s_l > 0; a margin of exactly 0 is not a "
                                         "prediction"),
    (_br_b_by(predict=lambda S: S > 0.5), "the SVM margins are not probabilities: BR_B's sign "
                                          "prediction thresholds them at 0, not 0.5"),
    (_choice(lambda S, Y, v: selection_values(S, Y, "R"), lambda v: False),
     "BR_B chooses C by F1 of its sign predictions, not by rank loss (that is BR_R)"),
    (_choice(lambda S, Y, v: selection_values(S, Y, "B"), lambda v: True),
     "BR_R chooses C by the validation rank loss of the margins, not by F1 (that is BR_B)"),
    (_choice(_right, lambda variant: variant != "B"), "lower rank loss is better, higher F1 is "
                                                      "better: your comparison runs the wrong "
                                                      "way"),
    (lambda C_values, S_val, Y_val, S_test, Y_test, variant:
     C_values.index(reference_C(C_values, S_val, Y_val, variant)),
     "return the C value itself (an element of C_values), not its position in the grid"),
]


def _labels(rng, n, L):
    frequency = rng.uniform(0.1, 0.5) / np.arange(1, L + 1) ** rng.uniform(0.3, 1.5)
    Y = rng.random((n, L)) < frequency
    Y[:, rng.choice(L, size=max(1, L // 4), replace=False)] = False   # no validation positive
    Y[0, 0] = True
    return Y.astype(np.int8)


def _margins(rng, Y, count):
    sign = 2.0 * Y - 1
    S = [rng.uniform(0.2, 2.0) * sign + rng.normal(size=Y.shape) + rng.uniform(-1.5, 0.3)
         for _ in range(count)]
    for margins in S:                                    # some margins exactly 0
        margins[rng.random(Y.shape) < 0.05] = 0.0
    return [np.round(margins, 2) for margins in S]


def _plant_tie(rng, C_values, S, Y, variant):
    """Replace a neighbour of the best C by twice its margins (same signs, same ranking): two
    C values tie on either criterion. Returns the pair of tied indices."""
    best = C_values.index(reference_C(C_values, S, Y, variant))
    other = best + 1 if best + 1 < len(S) else best - 1
    S[other] = 2.0 * S[best]
    return {best, other}


def _near_ties(values, planted):
    return any(abs(values[i] - values[j]) < 1e-9 and {i, j} != planted
               for i in range(len(values)) for j in range(i + 1, len(values)))


def selection_cases(count=36, seed=2016):
    """[(C_values, S_val, Y_val, S_test, Y_test, variant)]: grids of 3 … 7 powers of ten within
    the paper's 10⁻³ … 10³,
    validation and test margins (2 decimals, some exactly 0), labels with no validation
    positive, a planted tie at the best C in two cases of three, the variants alternating, and
    no tie on the validation criterion other than the planted one."""
    cases = []
    for k, rng in enumerate(case_rngs(seed, count)):
        variant = "BR"[k % 2]
        while True:
            C_values = [float(10.0 ** e) for e in range(int(rng.integers(-3, 1)), 4)]
            C_values = C_values[:int(rng.integers(3, len(C_values) + 1))]
            size = len(C_values)
            n_val, n_test, L = (int(v) for v in rng.integers((20, 20, 3), (61, 61, 11)))
            Y_val, Y_test = _labels(rng, n_val, L), _labels(rng, n_test, L)
            S_val, S_test = _margins(rng, Y_val, size), _margins(rng, Y_test, size)
            planted = _plant_tie(rng, C_values, S_val, Y_val, variant) if k % 3 else set()
            if not _near_ties(selection_values(S_val, Y_val, variant), planted):
                break
        cases.append((C_values, S_val, Y_val, S_test, Y_test, variant))
    return cases


def _chosen(answer, C_values):
    array = as_array(answer, "your C")
    if array.size != 1:
        raise NotYet(f"return one C value, not an array of shape {array.shape}")
    value = float(array.reshape(()))
    for C in C_values:                           # a float32 C still names its grid value
        if np.isclose(value, C, rtol=1e-6, atol=0):
            return C
    if not value.is_integer():                   # an integer may be a position: diagnosed later
        raise NotYet(f"your answer {value:g} is not one of the grid's C values")
    return value


def _describe_selection(C_values, S_val, Y_val, variant):
    values = selection_values(S_val, Y_val, variant)
    best = values[_first_best(values, variant == "B")]
    tied = sum(1 for v in values if v == best)
    absent = int(np.sum(~(Y_val > 0).any(axis=0)))
    return (f"variant {variant}, a grid of {len(C_values)} C values from {C_values[0]:g} to "
            f"{C_values[-1]:g}, {len(Y_val)} validation documents, {Y_val.shape[1]} labels "
            f"({absent} without a validation positive)"
            + (f", {tied} C values tied for the best validation criterion" if tied > 1 else ""))


def check_select_C(select_C):
    """``select_C(C_values, S_val, Y_val, S_test, Y_test, variant)`` → the C that BR_B
    (variant "B") or BR_R ("R") chooses; ``S_val[j]``, ``S_test[j]`` are the margins of the
    SVMs trained with ``C_values[j]``."""
    def attempt():
        cases = selection_cases()
        answers, references = [], []
        for C_values, S_val, Y_val, S_test, Y_test, variant in cases:
            answer = run(select_C, ("C_values", C_values), ("S_val", S_val), ("Y_val", Y_val),
                         ("S_test", S_test), ("Y_test", Y_test), ("variant", variant),
                         name="select_C")
            answers.append(_chosen(answer, C_values))
            references.append(reference_C(C_values, S_val, Y_val, variant))
        wrong = [c for c, (a, r) in enumerate(zip(answers, references)) if a != r]
        if not wrong:
            return (f"{len(cases)} cases (BR_B and BR_R, ties, labels without a validation "
                    "positive), the C of mlnn.paper.selection.fit_br's rule")
        for mistake, hint in SELECTION_MISTAKES:
            if all(a == float(mistake(*case)) for a, case in zip(answers, cases)):
                raise NotYet(hint)
        C_values, S_val, Y_val, _, _, variant = cases[wrong[0]]
        raise NotYet(f"wrong C on {len(wrong)} of {len(cases)} cases, the first: "
                     f"{_describe_selection(C_values, S_val, Y_val, variant)}. BR_B: the mean "
                     "of micro- and macro-F1 of the sign predictions; BR_R: the rank loss of the "
                     "margins; both on the validation split, the first C winning ties.")
    return grade("choosing C for BR_B and BR_R", attempt)
