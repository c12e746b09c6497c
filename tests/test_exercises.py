"""The worked solutions in notebooks/solutions/ pass the notebooks' graders, and wrong answers
(the mistakes the hints are written for) fail them."""

import importlib.util
from pathlib import Path

import pytest

from mlnn.course import graders as course

SOLUTIONS = Path(__file__).resolve().parents[1] / "notebooks" / "solutions"


def solutions(stem):
    spec = importlib.util.spec_from_file_location(stem, SOLUTIONS / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: (grader, solution file, function name) for every exercise.
EXERCISES = [
    (course.check_delta1, "ex01_derivatives", "delta1_tanh"),
    (course.check_input_gradient, "ex01_derivatives", "grad_W1_dense"),
    (course.check_pwe_delta, "ex01_derivatives", "pwe_delta_one"),
    (course.check_gradient_check, "ex01_derivatives", "central_differences"),
    (course.check_pwe_landscape, "ex02_landscapes", "pwe_closed_form"),
    (course.check_ce_slope, "ex02_landscapes", "ce_dJ_dW2_1"),
    (course.check_rmsprop, "ex02b_optimizers_dropout", "rmsprop_step"),
    (course.check_rmsprop_rule, "ex02b_optimizers_dropout", "RMSProp"),
    (course.check_momentum_skip, "ex02b_optimizers_dropout", "momentum_skip"),
    (course.check_inverted_dropout, "ex02b_optimizers_dropout", "inverted_dropout"),
    (course.check_rank_loss, "ex03_convergence", "rank_loss_one"),
    (course.check_adagrad_rates, "ex03_convergence", "effective_rates"),
    (course.check_input_dropout, "ex04_dropout", "input_dropout"),
    (course.check_best_update, "ex04_dropout", "best_update"),
    (course.check_pwe_excluded, "ex05_learning_rates", "excluded"),
    (course.check_average_precision, "ex05_learning_rates", "average_precision_one"),
    (course.check_f1_threshold, "ex06_thresholds", "best_threshold_one"),
    (course.check_ridge, "ex06_thresholds", "ridge_solve"),
    (course.check_better_than_paper, "ex07_paper_table", "better_than_paper"),
    (course.check_coverage, "ex07_paper_table", "coverage_one"),
    (course.check_average_ranks, "ex08_beyond_the_paper", "average_ranks_by_hand"),
    (course.check_friedman, "ex08_beyond_the_paper", "friedman_chi2"),
    (course.check_critical_difference, "ex08_beyond_the_paper", "nemenyi_cd"),
]
IDS = [grader.__name__ for grader, _, _ in EXERCISES]


@pytest.mark.parametrize("grader, stem, name", EXERCISES, ids=IDS)
def test_worked_solution_passes(grader, stem, name, capsys):
    assert grader(getattr(solutions(stem), name)) is True
    assert capsys.readouterr().out.startswith("PASS")


@pytest.mark.parametrize("grader", [g for g, _, _ in EXERCISES], ids=IDS)
def test_an_exercise_left_open_is_reported_not_raised(grader, capsys):
    def not_done(*args):
        ...
    assert grader(not_done) is False
    assert capsys.readouterr().out.startswith("NOT YET")


def test_a_failing_function_is_reported_not_raised(capsys):
    def broken(*args):
        raise ZeroDivisionError("oops")
    assert course.check_delta1(broken) is False
    assert "ZeroDivisionError" in capsys.readouterr().out


#: Every grader with a table of mistakes: each mistake is also a wrong answer.
TABLES = [(grader, mistake) for grader, _, _ in EXERCISES
          for mistake in getattr(grader, "mistakes", ())]


@pytest.mark.parametrize("grader, mistake", TABLES,
                         ids=[f"{g.__name__}-{i}" for i, (g, _) in enumerate(TABLES)])
def test_every_mistake_of_a_table_is_rejected_with_its_own_hint(grader, mistake, capsys):
    assert grader(mistake.answer) is False
    out = capsys.readouterr().out
    assert out.startswith("NOT YET") and mistake.hint in out, out


def test_without_nbgrader_a_wrong_answer_prints_and_the_notebook_goes_on(monkeypatch, capsys):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert course.check_delta1(course.DELTA1_MISTAKES[0].answer) is False
    assert capsys.readouterr().out.startswith("NOT YET")


@pytest.mark.parametrize("mode", ["autograde", "validate"])
def test_under_nbgrader_a_wrong_answer_fails_the_cell_with_the_same_message(monkeypatch, capsys,
                                                                            mode):
    monkeypatch.setenv("NBGRADER_EXECUTION", mode)
    mistake = course.DELTA1_MISTAKES[1]
    with pytest.raises(AssertionError) as failure:
        course.check_delta1(mistake.answer)
    out = capsys.readouterr().out
    assert out.startswith("NOT YET") and str(failure.value) == out.strip()
    assert mistake.hint in str(failure.value)
    with pytest.raises(AssertionError, match="no answer yet"):
        course.check_delta1(lambda *args: None)


def test_under_nbgrader_a_right_answer_passes_quietly(monkeypatch, capsys):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert course.check_delta1(solutions("ex01_derivatives").delta1_tanh) is True
    assert capsys.readouterr().out.startswith("PASS")
