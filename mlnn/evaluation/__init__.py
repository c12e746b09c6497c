"""From scores to labels, and how both are judged.

``thresholds`` — Sec. 3.3, Eq. 5: per-document F1-optimal thresholds on the training data,
learned by ℓ2-regularised linear regression and applied at test time
``metrics`` — Sec. 4: the ten evaluation measures (rank loss, one-error, coverage, MAP,
micro/macro precision, recall and F1) and the Hamming loss
"""
