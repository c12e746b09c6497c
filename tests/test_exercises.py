"""The worked solutions in notebooks/solutions/ pass the notebooks' graders, and wrong answers
(the mistakes the hints are written for) fail them."""

import importlib.util
from pathlib import Path

import numpy as np
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
    (course.check_rmsprop_optimizer, "ex02b_optimizers_dropout", "RMSProp"),
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


# The mistakes the hints are written for: each must fail its grader.
ex01 = solutions("ex01_derivatives")
ex02b = solutions("ex02b_optimizers_dropout")


class AdaGradLike(ex02b.RMSProp):
    """Sums the squares instead of averaging them."""

    def _update_rows(self, state, theta, rows, g):
        G = state["mean_square"]
        G[rows] += g * g
        theta[rows] -= self.learning_rate * g / (np.sqrt(G[rows]) + self.epsilon)


class RMSPropStub(ex02b.RMSProp):
    """The exercise as handed out: both methods left as ``...``."""

    def _new_state(self, theta):
        ...

    def _update_rows(self, state, theta, rows, g):
        ...
WRONG = [
    (course.check_delta1, lambda d2, W2, h: (d2 @ W2.T) * h * (1 - h)),           # sigmoid's f'
    (course.check_delta1, lambda d2, W2, h: -(d2 @ W2.T) * (1 - h * h)),           # flipped sign
    (course.check_input_gradient, lambda X, d1: np.asarray(X.T @ d1)),             # no 1/n
    (course.check_pwe_delta, lambda o, y: ex01.pwe_delta_one(o, y) / ((1 + o) * (1 - o))),
    (course.check_pwe_delta, lambda o, y: -ex01.pwe_delta_one(o, y)),
    (course.check_gradient_check, lambda f, x, h: (ex01.central_differences(f, x, h) * 2)),
    (course.check_rmsprop, lambda t, G, g, eta, rho, eps: (t - eta * g / (np.sqrt(G + g * g) + eps),
                                                           G + g * g)),           # AdaGrad
    (course.check_momentum_skip, lambda t, v, mu, d: (t + d * v, mu ** d * v)),
    (course.check_rmsprop_optimizer, AdaGradLike),
    (course.check_rmsprop_optimizer, RMSPropStub),
    (course.check_rmsprop_optimizer, ex02b.rmsprop_step),                      # not a class
    (course.check_inverted_dropout, lambda h, rate, rng: (h * (rng.random(h.shape) >= rate),
                                                          1.0 * (rng.random(h.shape) >= rate))),
    (course.check_rank_loss, lambda s, y: np.mean(s[y > 0][:, None] < s[y == 0][None, :])),
    (course.check_best_update, lambda c: (c["updates"][-1], 0.0)),
    (course.check_pwe_excluded, lambda Y: np.count_nonzero(Y, axis=1) == 0),
    (course.check_coverage, lambda s, y: int((s[None, :] > s[y > 0][:, None]).sum(1).max())),
    (course.check_ridge, lambda Z, t, lam: np.linalg.lstsq(Z, t, rcond=None)[0]),
    (course.check_better_than_paper, lambda m, ours, paper: (ours - paper) / abs(paper)),
    (course.check_f1_threshold, lambda s, y: 0.5),
    (course.check_average_ranks,                                       # ties broken by position
     lambda v, lower: (np.argsort(np.argsort(v if lower else -v, axis=1), axis=1) + 1).mean(0)),
    (course.check_average_ranks,                                       # always lower is better
     lambda v, lower: solutions("ex08_beyond_the_paper").average_ranks_by_hand(v, True)),
    (course.check_friedman,                                            # no − k (k+1)² / 4
     lambda R, N: 12 * N / (len(R) * (len(R) + 1)) * np.sum(np.square(R))),
    (course.check_critical_difference, lambda k, N, q: np.sqrt(k * (k + 1) / (6 * N))),  # no q
    (course.check_critical_difference, lambda k, N, q: q * np.sqrt(k * (k + 1) / N)),    # no 6
]


def test_the_rmsprop_stub_gets_a_hint(capsys):
    assert course.check_rmsprop_optimizer(RMSPropStub) is False
    assert "must be a dict of arrays shaped like theta" in capsys.readouterr().out


@pytest.mark.parametrize("grader, wrong", WRONG, ids=[f"{g.__name__}-{i}" for i, (g, _)
                                                      in enumerate(WRONG)])
def test_a_wrong_answer_fails(grader, wrong, capsys):
    assert grader(wrong) is False
    assert capsys.readouterr().out.startswith("NOT YET")
