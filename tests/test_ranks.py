"""Average ranks, the Friedman test and Nemenyi's critical difference (Demšar 2006)."""

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mlnn.base.errors import MLNNError
from mlnn.evaluation.metrics import MEASURES
from mlnn.paper.methods import PAPER_METHODS
from mlnn.paper.ranks import (Q_ALPHA, average_ranks, cliques, critical_difference,
                              friedman_test, paper_table2, rank_table)
from mlnn.paper.report import (dataset_markdown, paired_differences, plot_cd_diagram,
                               plot_cd_grid, rank_markdown, seed_markdown, seed_values,
                               significant_pairs)
from mlnn.paper.reproduce import write_results
from mlnn.paper.results import load_runs, summarise


def test_ranks_by_hand_with_ties_and_both_directions():
    values = [[0.1, 0.2, 0.2],
              [0.3, 0.1, 0.2]]
    # lower is better: 0.1 is first; the two 0.2 share ranks 2 and 3
    np.testing.assert_array_equal(average_ranks(values[:1], True), [1, 2.5, 2.5])
    np.testing.assert_array_equal(average_ranks(values[1:], True), [3, 1, 2])
    np.testing.assert_array_equal(average_ranks(values[:1], False), [3, 1.5, 1.5])
    np.testing.assert_array_equal(average_ranks(values[1:], False), [1, 3, 2])
    np.testing.assert_array_equal(average_ranks(values, True), [2, 1.75, 2.25])


def test_ranks_refuse_nan_and_a_single_method():
    with pytest.raises(MLNNError, match="NaN"):
        average_ranks([[0.1, np.nan]], True)
    with pytest.raises(MLNNError, match="two methods"):
        average_ranks([[0.1], [0.2]], True)


def test_demsar_worked_example():
    """Demšar (2006), Sec. 3.2.4: four variants of C4.5 on 14 datasets, average ranks 3.143,
    2.000, 2.893, 1.964: χ²_F = 9.28, F_F = 3.69 (critical F(3, 39) = 2.85 at α = 0.05),
    CD = 1.25 at α = 0.05 and 1.12 at α = 0.10."""
    test = friedman_test([3.143, 2.000, 2.893, 1.964], 14)
    assert test.chi2 == pytest.approx(9.28, abs=0.005)
    assert test.F == pytest.approx(3.69, abs=0.005)
    assert scipy.stats.f.ppf(0.95, 3, 39) == pytest.approx(2.85, abs=0.005)
    assert test.p_F < 0.05
    assert critical_difference(4, 14, 0.05) == pytest.approx(1.25, abs=0.005)
    assert critical_difference(4, 14, 0.10) == pytest.approx(1.12, abs=0.005)


@pytest.mark.parametrize("alpha", sorted(Q_ALPHA))
def test_q_alpha_is_the_studentized_range_over_root_two(alpha):
    for k, q in enumerate(Q_ALPHA[alpha], start=2):
        exact = scipy.stats.studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2)
        assert q == pytest.approx(exact, abs=0.001)        # three decimals in the table


def test_critical_difference_refuses_what_the_table_does_not_cover():
    with pytest.raises(MLNNError, match="2 to 10 methods"):
        critical_difference(11, 5)
    with pytest.raises(MLNNError, match="alpha"):
        critical_difference(4, 5, alpha=0.01)


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(2, 9), st.integers(3, 8)),
              elements=st.floats(0, 1, allow_nan=False)))
def test_friedman_matches_scipy_without_ties(values):
    if any(len(np.unique(row)) < row.size for row in values):
        return                                       # Demšar's χ²_F has no tie correction
    test = friedman_test(average_ranks(values, True), values.shape[0])
    reference = scipy.stats.friedmanchisquare(*values.T)
    assert test.chi2 == pytest.approx(reference.statistic, rel=1e-9, abs=1e-9)
    assert test.p_chi2 == pytest.approx(reference.pvalue, rel=1e-7, abs=1e-12)


def test_perfect_agreement_gives_an_infinite_f():
    values = np.tile([0.1, 0.2, 0.3], (5, 1))
    test = friedman_test(average_ranks(values, True), 5)
    assert test.chi2 == pytest.approx(10.0)           # 12·5/(3·4)·(1+4+9 − 12) = 10
    assert np.isinf(test.F) and test.p_F == 0.0


def test_cliques_by_hand():
    R = np.array([1.0, 4.5, 2.0, 3.2])               # sorted: m0 1.0, m2 2.0, m3 3.2, m1 4.5
    assert cliques(R, 1.5) == [(0, 2), (2, 3), (3, 1)]
    assert cliques(R, 2.6) == [(0, 2, 3), (2, 3, 1)]
    # a difference of exactly CD is significant: 4.5 − 2.0 = 2.5 splits m2 from m1
    assert cliques(R, 2.5) == [(0, 2, 3), (3, 1)]
    assert cliques(R, 0.5) == []
    assert cliques(R, 10.0) == [(0, 2, 3, 1)]


def _run(dataset, seed, values):
    methods = {m: {"test": {measure: v + 0.01 * i for i, measure in enumerate(MEASURES)},
                   "seconds": 1.0} for m, v in values.items()}
    return {"dataset": dataset, "seed": seed, "budget": "full", "settings": {},
            "methods": methods}


def test_summary_and_rank_table_from_stored_files(tmp_path):
    write_results(_run("a", 0, {"NN_A": 0.1, "BR_R": 0.3}), tmp_path)
    write_results(_run("a", 1, {"NN_A": 0.3, "BR_R": 0.2}), tmp_path)
    write_results(_run("b", 0, {"NN_A": 0.5, "BR_R": 0.4}), tmp_path)
    write_results(_run("c", 0, {"NN_A": 0.5}), tmp_path)  # lacks BR_R: left out
    summary = summarise(load_runs(tmp_path), ("NN_A", "BR_R"))
    assert summary.datasets == ("a", "b") and summary.seeds == ((0, 1), (0,))
    np.testing.assert_allclose(summary.means[0, :, 0], [0.2, 0.25])
    np.testing.assert_allclose(summary.stds[0, :, 0], [np.std([0.1, 0.3], ddof=1),
                                                       np.std([0.3, 0.2], ddof=1)])
    assert np.isnan(summary.stds[1]).all()
    lower = [m in ("rankloss", "oneError", "coverage") for m in MEASURES]
    R, tests = rank_table(summary.means, lower)
    # rankloss (lower is better): a → NN_A 0.2 < 0.25, b → BR_R 0.4 < 0.5
    np.testing.assert_array_equal(R[:, 0], [1.5, 1.5])
    # MAP (higher is better): the same values, so the ranks flip on each dataset
    np.testing.assert_array_equal(R[:, MEASURES.index("MAP")], [1.5, 1.5])
    assert tests[0].N == 2 and tests[0].k == 2 and tests[0].chi2 == pytest.approx(0.0)


def test_cd_diagram_names_every_method_and_the_cd():
    fig = plot_cd_diagram([1.5, 3.0, 2.2, 3.3], ["NN_A", "BR_B", "NN_AD", "BR_R"], 1.0, "test")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "CD = 1.00" in texts
    assert {"NN_A (1.50)", "BR_B (3.00)", "NN_AD (2.20)", "BR_R (3.30)"} <= set(texts)
    # one bar per clique: (NN_A, NN_AD), (NN_AD, BR_B), (BR_B, BR_R); NN_AD–BR_R is 1.1 ≥ CD
    bars = [c for c in fig.axes[0].collections if max(c.get_linewidths()) == 3]
    assert len(bars) == 3


def test_paper_table2_is_a_rank_table_of_the_eight_methods():
    table = paper_table2()
    assert list(table) == list(PAPER_METHODS)
    assert table["NN_AD"]["rankloss"] == 1.2 and table["BR_B"]["maR"] == 6.8
    for measure in MEASURES:
        # average ranks of 8 methods sum to 1 + … + 8 = 36 (up to the paper's rounding)
        assert sum(table[m][measure] for m in PAPER_METHODS) == pytest.approx(36, abs=0.35)


def test_report_tables_from_a_summary(tmp_path):
    write_results(_run("a", 0, {"NN_A": 0.1, "BR_R": 0.3}), tmp_path)
    write_results(_run("a", 1, {"NN_A": 0.3, "BR_R": 0.2}), tmp_path)
    runs = load_runs(tmp_path)
    summary = summarise(runs, ("NN_A", "BR_R"))
    lines = dataset_markdown(summary, 0).splitlines()
    assert lines[0] == "| method | " + " | ".join(MEASURES) + " |"
    # rankloss: NN_A's mean 0.2 is the lower, so it is bold; std of (0.1, 0.3) is 0.1414
    assert lines[2].startswith("| NN_A | **0.2000 ± 0.1414** | ")
    assert lines[3].startswith("| BR_R | 0.2500 ± 0.0707 | ")
    R = np.array([[1.0] * len(MEASURES), [2.0] * len(MEASURES)])
    ranks = rank_markdown(summary, R, paper_table2()).splitlines()
    assert ranks[2] == "| NN_A | ours | " + " | ".join(["1.00"] * len(MEASURES)) + " | 1.00 |"
    assert ranks[3].startswith("|  | paper | 2.20 | 2.40 |")
    # rankloss: lower is better, so NN_A beats BR_R by 0.3 − 0.1 on seed 0, loses on seed 1
    differences = paired_differences(runs, "a", "NN_A", "BR_R", "rankloss")
    assert differences == pytest.approx({0: 0.2, 1: -0.1})
    assert paired_differences(runs, "a", "NN_A", "BR_R", "MAP") == pytest.approx({0: -0.2,
                                                                                 1: 0.1})
    fig = plot_cd_grid(R.T[:3].T, ["NN_A", "BR_R"], MEASURES[:3], 1.0)
    assert [ax.get_title() for ax in fig.axes[:3]] == list(MEASURES[:3])


def test_seed_table_uses_the_seeds_each_method_has(tmp_path):
    write_results(_run("a", 0, {"NN_A": 0.1, "BR_R": 0.3}), tmp_path)
    write_results(_run("a", 1, {"NN_A": 0.3}), tmp_path)
    runs = load_runs(tmp_path)
    assert seed_values(runs, "a", "NN_A", "rankloss") == pytest.approx({0: 0.1, 1: 0.3})
    lines = seed_markdown(runs, "a", ["NN_A", "BR_R", "BR_B"], ["rankloss"]).splitlines()
    assert lines[2:] == ["| NN_A | 2 | 0.2000 ± 0.1414 |", "| BR_R | 1 | 0.3000 |"]


def test_significant_pairs_are_those_at_least_cd_apart():
    pairs = significant_pairs([1.0, 4.5, 2.0, 3.2], ["a", "b", "c", "d"], 2.5)
    assert [(p[0], p[1]) for p in pairs] == [("a", "b"), ("c", "b")]   # 3.5, then exactly 2.5
    assert pairs[0][2] == pytest.approx(3.5)
