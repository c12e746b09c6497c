"""A synthetic multi-label text collection: the embedded default that needs no files.

Generative model (all draws from one ``numpy.random.default_rng(random_state)``):

1. Label popularity: label ``l`` has prior weight ``pi_l ∝ 1 / (l + 1)`` (Zipf).
2. Correlated labels: the labels fall at random into ``max(1, L // 4)`` groups. A document gets
   ``k = 1 + Poisson(1)`` distinct labels (at most ``L``): the first from ``pi``, each further
   one from ``pi`` restricted to the first one's group with probability ``correlation``, else
   from ``pi`` over all labels.
3. Label-dependent words: a Zipfian background ``phi_0`` over the ``D`` words; each group a topic
   ``psi_g`` and each label a topic ``chi_l``, Dirichlet(0.1) on ``min(D, max(5, D // 10))``
   random words; ``phi_l = (psi_g + chi_l) / 2``, so related labels share vocabulary.
4. Length: ``n_d = max(5, round(LogNormal))`` with mean 80 and log-scale 0.6.
5. Words: ``counts_d ~ Multinomial(n_d, phi_0 / 2 + the mean of the phi_l of the document's
   labels / 2)``.
6. Features: tf-idf with ``idf = log(N_train / df)`` of the training rows (0 for words absent
   from them), rows of unit length (:func:`mlnn.datasets.text.tfidf_weight`).

The first ``n_train`` documents form the training split, the next ``n_test`` the test split.
"""

import numpy as np
import scipy.sparse as sp

from mlnn.base.validation import check_float_in, check_integer, check_seed
from mlnn.datasets.text import idf_from_counts, tfidf_weight


def make_synthetic(n_train=400, n_test=200, n_features=500, n_labels=20, random_state=0,
                   correlation=0.7):
    """The collection of the module docstring: a dict with ``X_train`` (n_train × D CSR float64),
    ``Y_train`` (n_train × L CSR int8), ``X_test``, ``Y_test``, ``feature_names`` (``w0000``...)
    and ``label_names`` (``label000``...)."""
    for name, value, minimum in (("n_train", n_train, 1), ("n_test", n_test, 0),
                                 ("n_features", n_features, 2), ("n_labels", n_labels, 1)):
        check_integer(value, f"synthetic: {name}", minimum)
    check_float_in(correlation, "synthetic: correlation", 0, 1, closed="both")
    rng = np.random.default_rng(check_seed(random_state, "synthetic: random_state"))
    n, D, L = n_train + n_test, n_features, n_labels
    n_groups, words_per_topic = max(1, L // 4), min(max(5, D // 10), D)

    pi = 1.0 / (np.arange(L) + 1.0)                                           # 1. popularity
    pi /= pi.sum()
    group_of = np.empty(L, dtype=np.int64)
    group_of[rng.permutation(L)] = np.arange(L) % n_groups
    Y = _label_sets(rng, n, pi, group_of, correlation)                        # 2. labels
    phi0, phi = _word_distributions(rng, D, L, n_groups, group_of, words_per_topic)   # 3.
    counts = _word_counts(rng, Y, phi0, phi)                                  # 4-5.
    counts_train, counts_test = counts[:n_train], counts[n_train:]            # 6. tf-idf
    idf = idf_from_counts(counts_train)
    return {
        "X_train": tfidf_weight(counts_train, idf), "Y_train": Y[:n_train],
        "X_test": tfidf_weight(counts_test, idf), "Y_test": Y[n_train:],
        "feature_names": [f"w{j:04d}" for j in range(D)],
        "label_names": [f"label{j:03d}" for j in range(L)],
    }


def _label_sets(rng, n, pi, group_of, correlation):
    """Step 2: n label sets (CSR int8 n x L); related labels follow the first one's group."""
    L = pi.size
    sizes = np.minimum(1 + rng.poisson(1.0, size=n), L)
    first = rng.choice(L, size=n, p=pi)
    uniform = rng.random((n, L))
    Y = np.zeros((n, L), dtype=np.int8)
    for d in range(n):
        available = np.ones(L, dtype=bool)
        available[first[d]] = False
        same_group = group_of == group_of[first[d]]
        for j in range(1, sizes[d]):
            pool = available & same_group
            if not (uniform[d, j] < correlation and pool.any()):
                pool = available
            weights = pi * pool
            label = rng.choice(L, p=weights / weights.sum())
            available[label] = False
        Y[d] = ~available                                   # the labels drawn
    return sp.csr_matrix(Y)


def _word_distributions(rng, D, L, n_groups, group_of, words_per_topic):
    """Step 3: the Zipfian background phi_0 (D,) and the label distributions phi (L x D)."""
    def topic(count):
        phi = np.zeros((count, D))
        for k in range(count):
            words = rng.choice(D, size=words_per_topic, replace=False)
            phi[k, words] = rng.dirichlet(np.full(words_per_topic, 0.1))
        return phi

    phi0 = (np.arange(D) + 1.0) ** -1.1
    phi0 = rng.permutation(phi0 / phi0.sum())
    return phi0, 0.5 * topic(n_groups)[group_of] + 0.5 * topic(L)


def _word_counts(rng, Y, phi0, phi, mean_length=80.0, length_sigma=0.6):
    """Steps 4-5: log-normal lengths and multinomial counts (CSR n x D), in chunks so that the
    dense n x D mixture stays small."""
    n, D = Y.shape[0], phi0.size
    mu = np.log(mean_length) - length_sigma ** 2 / 2
    lengths = np.maximum(5, np.round(rng.lognormal(mu, length_sigma, size=n))).astype(np.int64)
    label_share = sp.diags(1.0 / np.asarray(Y.sum(axis=1)).ravel()) @ Y.astype(np.float64)
    blocks = []
    chunk = max(1, 2_000_000 // D)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        p = 0.5 * phi0 + 0.5 * (label_share[start:stop] @ phi)
        p /= p.sum(axis=1, keepdims=True)
        blocks.append(sp.csr_matrix(rng.multinomial(lengths[start:stop], p).astype(np.float64)))
    return sp.vstack(blocks, format="csr")
