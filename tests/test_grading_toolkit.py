"""The graders' toolkit pinned directly (:mod:`mlnn.course.grading`): the comparison at its
tolerance boundary, the relative error and the binomial statistics against hand-computed
values, and an input whose dtype a student's function changed in place reported."""

import numpy as np
import pytest
import scipy.sparse as sp

from mlnn.course import grading
from mlnn.nn.gradcheck import rel_error
from tests.shown import shown

#: The tolerance the course states (a relative error below 1e-7 means right, notebooks 01, 02b).
STATED = 1e-7


def _at(relative, reference):
    """An answer whose relative error to ``reference`` (entrywise |a − b| / (|a| + |b|)) is
    ``relative`` at every entry: a = b (1 + d) with d / (2 + d) = relative."""
    return reference * (1 + 2 * relative / (1 - relative))


#: The tolerance of each reference precision: a float32 computation is right to about 2e-4.
STATED_BY_DTYPE = {np.float64: STATED, np.float32: 2e-4}


@pytest.mark.parametrize("dtype", list(STATED_BY_DTYPE))
@pytest.mark.parametrize("values", [[[1.0, -2.5], [3e-3, 7e4]], [0.25]])
def test_an_answer_just_inside_the_tolerance_passes_and_just_outside_does_not(values, dtype):
    assert grading.TOLERANCE == STATED
    tolerance = STATED_BY_DTYPE[dtype]
    reference = np.array(values)
    inside, outside = _at(0.9 * tolerance, reference), _at(1.1 * tolerance, reference)
    assert rel_error(inside, reference) == pytest.approx(0.9 * tolerance, rel=1e-6)
    assert rel_error(outside, reference) == pytest.approx(1.1 * tolerance, rel=1e-6)
    if dtype == np.float64:
        assert grading.close(inside, reference) and not grading.close(outside, reference)
    # judged in the reference's precision (float32 rounding, 6e-8, is far inside the margins)
    typed = reference.astype(dtype)
    assert grading.judge(inside.astype(dtype), typed, "A").dtype == dtype
    with pytest.raises(grading.NotYet, match=rf"A is off \(relative error {1.1 * tolerance:.1e}"):
        grading.judge(outside.astype(dtype), typed, "A")


def test_the_relative_error_against_hand_computed_values():
    a, b = np.array([3.0, -1.0, 2.0]), np.array([1.0, -1.5, 2.0])
    # entrywise |a − b| / (|a| + |b|): 2 / 4, 0.5 / 2.5, 0 / 4; the largest is 0.5
    assert rel_error(a, b) == 0.5
    assert rel_error(b, a) == 0.5                         # symmetric
    # below the floor 1e-8 the denominator is the floor: 1e-9 / 1e-8
    assert rel_error(np.array([1e-9]), np.array([0.0])) == pytest.approx(0.1)
    assert rel_error(np.array([4.0]), np.array([-4.0])) == 1.0   # opposite signs
    assert rel_error(np.zeros(0), np.zeros(0)) == 0.0


@pytest.mark.parametrize("count, trials, p, z", [
    (9, 25, 0.2, 2.0),             # mean 5, variance 25 · 0.2 · 0.8 = 4
    (1, 25, 0.2, -2.0),            # the lower tail
    (7, 10, 0.5, 2 / np.sqrt(2.5)),
    (3, 10, 0.5, -2 / np.sqrt(2.5)),
    (75, 100, 0.9, -15 / 3),       # mean 90, variance 9
    (4, 4, 1.0, 0.0), (0, 4, 0.0, 0.0),
])
def test_the_binomial_z_score_of_exact_small_cases(count, trials, p, z):
    assert grading.binomial_z(count, trials, p) == pytest.approx(z, rel=1e-12, abs=1e-15)


def test_the_dispersion_of_exact_small_cases():
    # groups of 25 draws with p = 0.2: variance 4 each; (9 − 5)² / 4 = 4 and (1 − 5)² / 4 = 4
    assert grading.dispersion([9, 1], [25, 25], 0.2) == pytest.approx(4.0)
    assert grading.dispersion([9, 1, 0], [25, 25, 0], 0.2) == pytest.approx(4.0)  # empty group
    # p = 0.9, groups of 100: variance 9; (93 − 90)² / 9 = 1, (84 − 90)² / 9 = 4: mean 2.5
    assert grading.dispersion([93, 84], [100, 100], 0.9) == pytest.approx(2.5)
    assert grading.dispersion([5, 5], [25, 25], 0.2) == 0.0


def _sparse():
    return sp.csr_matrix(np.array([[0.0, 1.5], [2.0, 0.0]]))


def _values(value):
    value = value["W1"] if isinstance(value, dict) else value
    return value.toarray() if sp.issparse(value) else value


def _retype_sparse(X):
    X.data = X.data.astype(np.float32)         # the same values in another dtype


def _retype_array(Y):
    Y.dtype = np.uint8                          # bool 0/1 reinterpreted: the same values


@pytest.mark.parametrize("value, change", [
    (_sparse(), _retype_sparse),
    (np.array([[True, False], [False, True]]), _retype_array),
    ({"W1": np.zeros(3, dtype=np.int64)}, lambda d: d.update(W1=np.zeros(3))),
])
def test_an_input_whose_dtype_the_function_changed_in_place_is_reported(value, change):
    def student(X):
        change(X)
        return 1.0

    copy = grading.pristine(value)
    change(copy)
    assert np.array_equal(_values(copy), _values(value))                     # the same values
    assert _values(copy).dtype != _values(value).dtype                       # another dtype
    with pytest.raises(grading.NotYet, match="modified its input X in place"):
        grading.run(student, ("X", value), name="answer")
    assert grading.run(lambda X: 1.0, ("X", value)) == 1.0


def test_a_right_answer_is_never_called_a_scaled_one():
    reference = np.array([[1.0, -2.5], [3e-3, 7e4]])
    assert grading.scale_of(reference, reference) is None
    assert grading.scale_of(reference * (1 + 1e-9), reference) is None
    assert grading.scale_of(2 * reference, reference) == pytest.approx(2.0)
    assert grading.scale_of(-reference, reference) == pytest.approx(-1.0)


def test_an_answer_that_ignores_a_number_argument_is_named_by_it():
    cases = [("a", [("x", np.arange(3.0)), ("eta", 0.1)]), ("b", [("x", np.ones(2)), ("eta", 0.5)])]

    def reference(x, eta):
        return eta * x

    def fixed(x, eta):
        return 0.1 * x
    what, named = cases[1]
    assert grading.unfollowed(fixed, reference, named, fixed(np.ones(2), 0.5),
                              reference(np.ones(2), 0.5), cases, grading.run, "f") == "η"
    assert grading.unfollowed(reference, reference, named, reference(np.ones(2), 0.5),
                              reference(np.ones(2), 0.5), cases, grading.run, "f") is None
    report = grading.check("a check", fixed, reference, lambda: iter(cases))
    assert not report and "does not follow the η passed in" in report.detail


def test_a_function_of_an_older_signature_is_told_which_argument_to_add():
    def closed_form(W1, W2_1, c):
        return W1 + W2_1 + c
    with pytest.raises(grading.NotYet, match=r"closed_form\(W1, W2_1, c\) takes 3 arguments .* "
                                              r"add the argument y$"):
        grading.run(closed_form, ("W1", 1.0), ("W2_1", 2.0), ("c", 0.0), ("y", (1, 0)))
    assert grading.run(lambda W1, W2_1, c, y=None: W1, ("W1", 1.0), ("W2_1", 2.0), ("c", 0.0),
                       ("y", (1, 0))) == 1.0


def test_a_dtype_hint_states_the_one_rule():
    with pytest.raises(grading.NotYet, match="float dtype of its inputs"):
        grading.judge(np.ones(2, dtype=np.float32), np.ones(2), "δ2")
    with pytest.raises(grading.NotYet, match="float dtype of its inputs"):
        grading.judge(np.ones(2), np.ones(2, dtype=np.float32), "δ2")
    grading.judge(np.ones(2, dtype=np.int64), np.ones(2), "coverage", kind="biuf")


def test_a_tie_tolerance_however_small_is_named_on_scores_one_step_apart(capsys):
    """Scores one floating-point step apart are not tied: any tolerance changes rank loss."""
    from mlnn import course

    def rank_loss_within_1e_15(s, y):
        y, s = np.asarray(y) > 0, np.asarray(s, dtype=float)
        p, q = s[y][:, None], s[~y][None, :]
        tie = np.abs(p - q) <= 1e-15
        return float((np.sum((p < q) & ~tie) + 0.5 * np.sum(tie)) / (y.sum() * (~y).sum()))
    assert not course.check_rank_loss_one(rank_loss_within_1e_15)
    assert "without a tolerance or rounding" in shown(capsys)


def test_a_training_loop_that_sorts_each_minibatch_passes(capsys):
    """The minibatches are judged as sets of documents: the order inside one changes nothing."""
    from mlnn import course

    def train(params, optimizer, X, Y, epochs, batch_size, rng, update):
        for _ in range(epochs):
            order = rng.permutation(X.shape[0])
            for start in range(0, X.shape[0], batch_size):
                batch = np.sort(order[start:start + batch_size])
                update(params, optimizer, X[batch], Y[batch])
    assert course.check_train(train), shown(capsys)


# -- every case on two draws, and a mistake named only where it explains every case -----------

def _toy_cases():
    """Four cases of x: one shape each, drawn on the case generators."""
    for rng, shape in zip(grading.case_rngs(5, 4), ((3,), (2, 2), (4,), (1, 3))):
        yield f"x of shape {shape}", [("x", rng.normal(size=shape))]


TWICE = grading.Mistake("twice the right value", lambda x: 2 * x)


def _toy(answer):
    return grading.check("toy", answer, lambda x: x + 1, _toy_cases, [TWICE])


def test_each_case_is_drawn_twice_with_its_shapes_and_new_values():
    every = grading.drawn_cases(_toy_cases)
    assert len(every) == 8
    for (_, first), (_, second) in zip(every[::2], every[1::2]):
        assert first[0][1].shape == second[0][1].shape
        assert not np.allclose(first[0][1], second[0][1])


def test_the_draws_can_be_set_so_that_no_case_is_one_the_student_saw():
    seen = [named[0][1] for _, named in grading.drawn_cases(_toy_cases)]
    token = grading.drawing(101, 202)
    try:
        secret = [named[0][1] for _, named in grading.drawn_cases(_toy_cases)]
    finally:
        grading.DRAWS.reset(token)
    assert all(a.shape == b.shape and not np.allclose(a, b) for a, b in zip(seen, secret))


def test_an_answer_cached_by_shape_is_seen_at_the_second_draw(capsys):
    memory = {}

    def cached(x):
        return memory.setdefault(x.shape, x + 1)
    assert not _toy(cached)
    assert "(another draw)" in shown(capsys)


def test_a_mistake_is_named_only_when_it_explains_every_case(capsys):
    assert not _toy(lambda x: 2 * x)
    assert "twice the right value" in shown(capsys)
    assert not _toy(lambda x: 2 * x if x.shape == (3,) else x + 1)
    out = shown(capsys)
    assert "twice" not in out and "is off" in out, out


def test_the_second_draw_keeps_the_sizes_drawn_for_the_first():
    def cases():
        for rng in grading.case_rngs(6, 5):
            n, d = rng.integers(1, 50), rng.integers(1, 50)
            yield "x", [("x", rng.normal(size=(n, d)))]
    every = grading.drawn_cases(cases)
    assert len(every) == 10
    assert all(a[1][0][1].shape == b[1][0][1].shape for a, b in zip(every[::2], every[1::2]))
