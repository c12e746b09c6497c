"""A synthetic multi-label text collection: the embedded default that needs no files.

Generative model (all draws from one ``numpy.random.default_rng(random_state)``):

1. **Label popularity.** Label ``l`` has prior weight ``pi_l ∝ (l + 1) ** -zipf_exponent``
   (a few frequent labels, a long tail, as in real collections).
2. **Correlated labels.** The labels are split at random into ``n_groups`` groups of related
   labels. A document gets ``k = 1 + Poisson(label_cardinality - 1)`` labels (at most ``L``):
   the first from ``pi``; each further one, with probability ``correlation``, from ``pi``
   restricted to the first label's group, else from ``pi`` over all labels (no repeats).
   Every document has at least one label.
3. **Label-dependent words.** A background distribution ``phi_0`` over the ``D`` words is
   Zipfian (word frequencies of natural text). Each group ``g`` has a topic ``psi_g`` and each
   label a topic ``chi_l``, both Dirichlet(0.1) on ``words_per_topic`` random words;
   ``phi_l = (psi_g + chi_l) / 2``, so related labels share vocabulary.
4. **Document length.** ``n_d ~ round(LogNormal)`` with mean ``mean_length`` and log-scale
   ``length_sigma`` (a right-skewed length distribution like news articles), at least 5.
5. **Words.** ``counts_d ~ Multinomial(n_d, background * phi_0 + (1 - background) *
   mean_{l in labels(d)} phi_l)``.
6. **Features.** tf-idf with ``idf = log(N_train / df)`` fitted on the training rows (words
   absent from training get idf 0), each row L2-normalised
   (:func:`mlnn.datasets.text.tfidf_weight`).

The first ``n_train`` documents form the training split, the next ``n_test`` the test split.
"""

import numpy as np
import scipy.sparse as sp

from mlnn.datasets.text import idf_from_counts, tfidf_weight
from mlnn.errors import MLNNError


def _check_positive(name, value, minimum=1):
    if not isinstance(value, (int, np.integer)) or value < minimum:
        raise MLNNError(f"synthetic: {name} must be an integer >= {minimum}, got {value!r}")


def make_synthetic(n_train=400, n_test=200, n_features=500, n_labels=20, random_state=0,
                   label_cardinality=2.0, correlation=0.7, n_groups=None, mean_length=80.0,
                   length_sigma=0.6, background=0.5, words_per_topic=None, zipf_exponent=1.0):
    """Generate the synthetic collection described in the module docstring.

    Returns
    -------
    dict with ``X_train`` (n_train x D CSR float64), ``Y_train`` (n_train x L CSR int8),
    ``X_test``, ``Y_test``, ``feature_names`` (``w0000``...), ``label_names`` (``label000``...)
    and ``counts_train``/``counts_test`` (the raw term counts, CSR).
    """
    _check_positive("n_train", n_train)
    _check_positive("n_test", n_test, minimum=0)
    _check_positive("n_features", n_features, minimum=2)
    _check_positive("n_labels", n_labels)
    if not label_cardinality >= 1:
        raise MLNNError(f"synthetic: label_cardinality must be >= 1, got {label_cardinality!r}")
    for name, value in (("correlation", correlation), ("background", background)):
        if not 0 <= value <= 1:
            raise MLNNError(f"synthetic: {name} must be in [0, 1], got {value!r}")
    if not (mean_length > 0 and length_sigma >= 0):
        raise MLNNError("synthetic: mean_length must be > 0 and length_sigma >= 0")
    rng = np.random.default_rng(random_state)
    n, D, L = n_train + n_test, n_features, n_labels
    n_groups = max(1, L // 4) if n_groups is None else int(n_groups)
    if not 1 <= n_groups <= L:
        raise MLNNError(f"synthetic: n_groups must be in 1..{L}, got {n_groups!r}")
    words_per_topic = max(5, D // 10) if words_per_topic is None else int(words_per_topic)
    words_per_topic = min(words_per_topic, D)

    # 1-2. Labels.
    pi = (np.arange(L) + 1.0) ** -zipf_exponent
    pi /= pi.sum()
    group_of = np.empty(L, dtype=np.int64)
    group_of[rng.permutation(L)] = np.arange(L) % n_groups
    sizes = np.minimum(1 + rng.poisson(label_cardinality - 1.0, size=n), L)
    first = rng.choice(L, size=n, p=pi)
    uniform = rng.random((n, L))
    rows, cols = [], []
    for d in range(n):
        chosen = [first[d]]
        available = np.ones(L, dtype=bool)
        available[first[d]] = False
        same_group = group_of == group_of[first[d]]
        for j in range(1, sizes[d]):
            pool = available & same_group
            if not (uniform[d, j] < correlation and pool.any()):
                pool = available
            weights = pi * pool
            label = rng.choice(L, p=weights / weights.sum())
            chosen.append(label)
            available[label] = False
        rows.extend([d] * len(chosen))
        cols.extend(chosen)
    Y = sp.csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n, L))
    Y.sort_indices()

    # 3. Word distributions.
    def topic(count):
        phi = np.zeros((count, D))
        for k in range(count):
            words = rng.choice(D, size=words_per_topic, replace=False)
            phi[k, words] = rng.dirichlet(np.full(words_per_topic, 0.1))
        return phi

    phi0 = (np.arange(D) + 1.0) ** -1.1
    phi0 = rng.permutation(phi0 / phi0.sum())
    phi = 0.5 * topic(n_groups)[group_of] + 0.5 * topic(L)

    # 4-5. Lengths and counts, in chunks so that the dense n x D mixture stays small.
    mu = np.log(mean_length) - length_sigma ** 2 / 2
    lengths = np.maximum(5, np.round(rng.lognormal(mu, length_sigma, size=n))).astype(np.int64)
    label_share = sp.diags(1.0 / np.asarray(Y.sum(axis=1)).ravel()) @ Y.astype(np.float64)
    blocks = []
    chunk = max(1, 2_000_000 // D)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        p = background * phi0 + (1 - background) * (label_share[start:stop] @ phi)
        p /= p.sum(axis=1, keepdims=True)
        blocks.append(sp.csr_matrix(rng.multinomial(lengths[start:stop], p).astype(np.float64)))
    counts = sp.vstack(blocks, format="csr")

    # 6. tf-idf fitted on the training rows.
    counts_train, counts_test = counts[:n_train], counts[n_train:]
    idf = idf_from_counts(counts_train)
    return {
        "X_train": tfidf_weight(counts_train, idf), "Y_train": Y[:n_train],
        "X_test": tfidf_weight(counts_test, idf), "Y_test": Y[n_train:],
        "feature_names": [f"w{j:04d}" for j in range(D)],
        "label_names": [f"label{j:03d}" for j in range(L)],
        "counts_train": counts_train, "counts_test": counts_test,
    }
