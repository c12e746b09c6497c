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
    """χ²_F = 12 N / (k (k+1)) · (Σ_j R_j² − k (k+1)² / 4)."""
    k = len(R)
    return 12.0 * N / (k * (k + 1)) * (np.sum(np.square(R)) - k * (k + 1) ** 2 / 4.0)


def nemenyi_cd(k, N, q_alpha):
    """CD = q_α √(k (k+1) / (6 N))."""
    return q_alpha * np.sqrt(k * (k + 1) / (6.0 * N))
