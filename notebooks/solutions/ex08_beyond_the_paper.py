"""Solutions to the exercises of notebook 08 (beyond the paper: ranks over datasets)."""

import numpy as np
import scipy.stats


def average_ranks_by_hand(values, lower_is_better):
    """Rank each dataset's row (1 = best; ties share the mean of the ranks they span), then
    average each method's column over the datasets."""
    oriented = values if lower_is_better else -values
    ranks = scipy.stats.rankdata(oriented, axis=1)
    return ranks.mean(axis=0)


def friedman_chi2(R, N):
    """Friedman's χ²_F, derived from the null distribution of the ranks.

    Under the null hypothesis a method's rank on one dataset is uniform on 1, …, k: mean
    (k + 1)/2, variance (k² − 1)/12; over N independent datasets R_j has mean (k + 1)/2 and
    variance (k² − 1)/(12 N). So χ²_F = (k − 1)/k · Σ_j (R_j − (k + 1)/2)² · 12 N / (k² − 1)
    = 12 N / (k (k + 1)) · Σ_j (R_j − (k + 1)/2)² = 12 N / (k (k+1)) · (Σ_j R_j² − k (k+1)² / 4).
    """
    k = len(R)
    return 12.0 * N / (k * (k + 1)) * (np.sum(np.square(R)) - k * (k + 1) ** 2 / 4.0)


def nemenyi_cd(k, N, q_alpha):
    """CD = q_α · s, s the standard deviation of R_i − R_j under the null hypothesis.

    On one dataset Var(r_i) = (k² − 1)/12 and Cov(r_i, r_j) = −(k + 1)/12, so
    Var(r_i − r_j) = 2 (k² − 1)/12 + 2 (k + 1)/12 = k (k + 1)/6, and over N datasets
    Var(R_i − R_j) = k (k + 1)/(6 N): CD = q_α √(k (k+1) / (6 N)).
    """
    return q_alpha * np.sqrt(k * (k + 1) / (6.0 * N))
