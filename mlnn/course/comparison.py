"""Graders of comparing methods (Sec. 5): better than the paper by (notebook 07), and over datasets
(notebook 08, Demšar 2006): average ranks with ties, Friedman's statistic, Nemenyi's critical
difference."""

import numpy as np
from scipy.stats import rankdata

from mlnn.course.grading import CaseRng, Mistake, case_rngs, make_grader
from mlnn.course.ranking import TOLERANT, step_above
from mlnn.evaluation.metrics import EXTRA_MEASURES, LOWER_IS_BETTER, MEASURES
from mlnn.paper.ranks import average_ranks, friedman_test


# -- notebook 07: better than the paper ------------------------------------------------------------

def _better(measure, ours, paper, sign=1):
    return sign * (-1 if measure in LOWER_IS_BETTER else 1) * (ours - paper) / paper


def _better_cases():
    """``better_than_paper(measure, ours, paper)`` → the relative difference, > 0 when ours is
    better."""
    rng = CaseRng(19)
    for measure in MEASURES + EXTRA_MEASURES:
        ours, paper = (float(v) for v in rng.uniform(0.02, 20, size=2).round(4))
        yield (f"the difference for {measure}",
               [("measure", measure), ("ours", ours), ("paper", paper)])


check_better_than_paper = make_grader("check_better_than_paper", "better than the paper by",
                                   _better, _better_cases, [
    Mistake("the sign is wrong for this measure (is lower or higher better?)",
            lambda m, ours, paper: _better(m, ours, paper, -1)),
    Mistake("it is not relative to the paper's value",
            lambda m, ours, paper: _better(m, ours, paper) * paper),
    Mistake("it is relative to our value, not the paper's",
            lambda m, ours, paper: _better(m, ours, paper) * paper / ours)], kind="biuf")


# -- notebook 08: comparing methods over datasets (Demšar 2006) ------------------------------------

def _rank_cases():
    """``average_ranks_by_hand(values, lower_is_better)`` → R_j, the mean rank (1 = best, ties
    averaged) of each method (column) over the datasets (rows)."""
    for rng, lower in zip(case_rngs(20, 6), (True, False) * 3):
        N, k = rng.integers(2, 9), rng.integers(2, 9)
        yield (f"R for {N} datasets × {k} methods with lower_is_better={lower}",
               [("values", rng.integers(1, 5, size=(N, k)) / 10.0), ("lower_is_better", lower)])
    rng = CaseRng(20, 60)                    # rank sums to 720: past the int8 range
    yield ("R for 60 datasets × 12 methods with lower_is_better=False",
           [("values", rng.integers(1, 9, size=(60, 12)) / 10.0), ("lower_is_better", False)])
    near = np.array([[0.5, step_above(0.5), 0.75], [step_above(0.625), 0.625, 0.875],
                     [0.6, 0.6, step_above(0.6)]])      # in [0.5, 1): 1 − v is exact there
    for lower in (True, False):
        yield (f"R for 3 datasets × 3 methods, values one floating-point step apart, with "
               f"lower_is_better={lower}", [("values", near), ("lower_is_better", lower)])


def _ranks_with(method, decimals=None):
    """Average ranks whose ties take ``method`` of scipy.stats.rankdata ("ordinal": broken by
    position, "min" / "max": the lowest / highest rank of the tie) instead of their mean, or of
    values rounded to ``decimals`` (values that differ a little taken as tied)."""
    def ranks(values, lower_is_better):
        values = np.asarray(values) if decimals is None else np.round(values, decimals)
        oriented = values if lower_is_better else -values
        return rankdata(oriented, method=method, axis=1).mean(axis=0)
    return ranks


check_average_ranks = make_grader("check_average_ranks", "average ranks with ties", average_ranks,
                               _rank_cases, [
    Mistake("the ranks run the wrong way", lambda v, lower: average_ranks(v, not lower)),
    Mistake("tied values get different ranks (by their position): ties share the mean of the "
            "ranks they span", _ranks_with("ordinal")),
    Mistake("tied values share the lowest rank of their tie; they share the mean of the ranks "
            "they span", _ranks_with("min")),
    Mistake("tied values share the highest rank of their tie; they share the mean of the ranks "
            "they span", _ranks_with("max")),
    Mistake(TOLERANT, _ranks_with("average", decimals=6))])


def _friedman_cases():
    """``friedman_chi2(R, N)`` → Friedman's χ²_F from the average ranks R of k methods over N
    datasets (Demšar 2006, Sec. 3.2.2)."""
    for rng, k in zip(case_rngs(21, 10), (2, 3, 5, 7, 11, 4, 14, 6, 9, 20)):
        N = int(rng.integers(2, 40))
        yield (f"χ²_F for k = {k} methods, N = {N}",
               [("R", average_ranks(rng.random((N, k)), True)), ("N", N)])


def _chi2(R, N, centre=True, pairs=1):
    """χ²_F = 12 N / (k (k + 1)) (Σ R_j² − k (k + 1)² / 4), or with one mistake: no ``centre``
    term, k (k + ``pairs``)."""
    k = len(R)
    return 12.0 * N / (k * (k + pairs)) * (np.sum(np.square(R)) - k * (k + 1) ** 2 / 4.0 * centre)


check_friedman = make_grader("check_friedman", "Friedman's statistic",
                          lambda R, N: friedman_test(R, N).chi2, _friedman_cases, [
    Mistake("Σ R_j² is not centred: subtract k (k + 1)² / 4, the value of Σ R_j² when every "
            "method has the mean rank (k + 1)/2", lambda R, N: _chi2(R, N, centre=False)),
    Mistake("the factor is 12 N / (k (k + 1)), not 12 N / (k (k − 1))",
            lambda R, N: _chi2(R, N, pairs=-1)),
    Mistake("N and k are swapped: N counts the datasets, k the methods (the length of R)",
            lambda R, N: 12.0 * len(R) / (N * (N + 1)) * (np.sum(np.square(R))
                                                          - N * (N + 1) ** 2 / 4.0)),
    Mistake("the factor N is missing: χ²_F grows with the number of datasets",
            lambda R, N: _chi2(R, N) / N),
    Mistake("that is Iman and Davenport's F_F; the exercise asks for Friedman's χ²_F",
            lambda R, N: friedman_test(R, N).F)])


def _cd_cases():
    """``nemenyi_cd(k, N, q_alpha)`` → Nemenyi's CD, q_α times the standard deviation of a
    difference of two average ranks (Demšar 2006)."""
    for rng, k in zip(case_rngs(22, 8), (2, 3, 6, 10, 4, 15, 8, 25)):
        N, q = int(rng.integers(2, 60)), float(rng.uniform(1.5, 4.0))
        yield f"CD for k = {k}, N = {N}, q_α = {q:.3f}", [("k", k), ("N", N), ("q_alpha", q)]


check_critical_difference = make_grader(
    "check_critical_difference", "Nemenyi's critical difference",
    lambda k, N, q: q * np.sqrt(k * (k + 1) / (6.0 * N)), _cd_cases, [
        Mistake("the square root is missing: the CD is q_α times a standard deviation, the root "
                "of the variance k (k + 1) / (6 N)", lambda k, N, q: q * k * (k + 1) / (6.0 * N)),
        Mistake("the standard error is that of one average rank; a difference of two average "
                "ranks varies more", lambda k, N, q: q * np.sqrt((k * k - 1) / (12.0 * N)))])
