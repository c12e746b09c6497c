"""Solutions to the exercises of notebook 07 (the paper's table)."""

import numpy as np

from mlnn.evaluation.metrics import LOWER_IS_BETTER


def better_than_paper(measure, ours, paper):
    """(ours − paper) / |paper|, with the sign turned so that > 0 means better than the paper."""
    sign = -1 if measure in LOWER_IS_BETTER else 1
    return sign * (ours - paper) / abs(paper)


def coverage_one(scores, y):
    """max over relevant k of rank(k) − 1, with rank(k) = #{l : s_l ≥ s_k}."""
    ranks = (scores[None, :] >= scores[y > 0][:, None]).sum(axis=1)
    return int(ranks.max()) - 1
