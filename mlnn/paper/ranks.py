"""Comparing methods over several datasets: average ranks, the Friedman test, Nemenyi's CD.

The paper's Table 2 gives the average rank of every method on every measure over five datasets.
Here, as Demšar (2006, JMLR 7, Sec. 3.2.2) recommends:

* ranks per dataset and measure, 1 the best (:data:`mlnn.evaluation.metrics.LOWER_IS_BETTER`),
  ties sharing the average rank; R_j the average over the N datasets (of their seed means);
* the Friedman test, χ²_F = 12 N / (k (k+1)) · (Σ_j R_j² − k (k+1)² / 4) with k − 1 d.o.f.,
  and Iman–Davenport's F_F = (N − 1) χ²_F / (N (k − 1) − χ²_F) (no tie correction);
* Nemenyi's critical difference CD = q_α √(k (k+1) / (6 N)), q_α from Demšar's Table 5(a).
"""

import csv
from dataclasses import dataclass
from importlib import resources

import numpy as np
import scipy.stats

from mlnn.base.errors import MLNNError

#: q_α of the Nemenyi test for k = 2 … 10 methods (Demšar 2006, Table 5(a)).
Q_ALPHA = {
    0.05: (1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164),
    0.10: (1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920),
}


def average_ranks(values, lower_is_better):
    """R_j (k,): each method's mean rank (1 = best, ties averaged) over the N datasets, from the
    values (N datasets × k methods) of one measure."""
    values = np.asarray(values, dtype=float)
    if values.ndim != 2 or values.shape[1] < 2:
        raise MLNNError(f"values must be a (datasets × methods) array with at least two methods, "
                        f"got shape {values.shape}")
    if np.isnan(values).any():
        raise MLNNError("values contains NaN: every method needs a value on every dataset")
    return scipy.stats.rankdata(values if lower_is_better else -values, axis=1).mean(axis=0)


@dataclass(frozen=True)
class Friedman:
    """The Friedman test on N datasets and k methods (Demšar 2006, Sec. 3.2.2)."""

    chi2: float        # χ²_F
    p_chi2: float      # P(χ² with k − 1 d.o.f. ≥ χ²_F)
    F: float           # Iman–Davenport F_F
    p_F: float         # P(F(k − 1, (k − 1)(N − 1)) ≥ F_F)
    N: int
    k: int


def friedman_test(R, N):
    """The Friedman test from the average ranks R_j (array (k,)) of k methods over N datasets."""
    R = np.asarray(R, dtype=float)
    k = R.size
    if N < 2 or k < 2:
        raise MLNNError(f"the Friedman test needs at least two datasets and two methods, "
                        f"got N = {N}, k = {k}")
    chi2 = 12.0 * N / (k * (k + 1)) * (np.sum(R ** 2) - k * (k + 1) ** 2 / 4.0)
    denominator = N * (k - 1) - chi2
    F = (N - 1) * chi2 / denominator if denominator > 0 else np.inf
    return Friedman(chi2=float(chi2), p_chi2=float(scipy.stats.chi2.sf(chi2, k - 1)),
                    F=float(F), p_F=float(scipy.stats.f.sf(F, k - 1, (k - 1) * (N - 1))),
                    N=N, k=k)


def critical_difference(k, N, alpha=0.05):
    """Nemenyi's critical difference for ``k`` methods on ``N`` datasets at level ``alpha``."""
    if alpha not in Q_ALPHA:
        raise MLNNError(f"alpha must be one of {sorted(Q_ALPHA)}, got {alpha}")
    if not 2 <= k <= 1 + len(Q_ALPHA[alpha]):
        raise MLNNError(f"the q_alpha table covers 2 to 10 methods, got k = {k}")
    if N < 1:
        raise MLNNError(f"N must be at least 1, got {N}")
    return Q_ALPHA[alpha][k - 2] * np.sqrt(k * (k + 1) / (6.0 * N))


def cliques(R, cd):
    """The maximal groups (index tuples by rank) of two or more methods whose average ranks lie
    within ``cd`` of each other: the bars of a CD diagram."""
    order = np.argsort(R, kind="stable")
    sorted_R = np.asarray(R)[order]
    groups = []
    for i in range(len(order)):
        j = i + int(np.searchsorted(sorted_R[i:], sorted_R[i] + cd, side="left")) - 1
        if j > i and not (groups and groups[-1][1] >= j):
            groups.append((i, j))
    return [tuple(int(m) for m in order[i:j + 1]) for i, j in groups]


def rank_table(means, lower_is_better):
    """Average ranks R (k × measures) and a :class:`Friedman` test per measure, from ``means``
    (N datasets × k methods × measures) and ``lower_is_better`` (a bool per measure)."""
    means = np.asarray(means, dtype=float)
    R = [average_ranks(means[:, :, index], lower) for index, lower in enumerate(lower_is_better)]
    return np.array(R).T, [friedman_test(r, means.shape[0]) for r in R]


def paper_table2():
    """The paper's Table 2 (average ranks over five datasets): ``{method: {measure: rank}}``."""
    text = resources.files("mlnn").joinpath("data/paper_table2.csv").read_text()
    return {row["method"]: {m: float(v) for m, v in row.items() if m != "method"}
            for row in csv.DictReader(text.splitlines())}
