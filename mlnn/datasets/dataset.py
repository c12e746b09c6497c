"""The :class:`Dataset` returned by :func:`mlnn.datasets.load`, and its Table 1 statistics."""

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp


@dataclass
class Dataset:
    """A multi-label dataset with a train/test split.

    Attributes
    ----------
    name : str
    X_train : scipy.sparse.csr_matrix, shape (n_train, D), float64, sorted indices
    Y_train : scipy.sparse.csr_matrix, shape (n_train, L), int8, entries 0/1
    X_test : scipy.sparse.csr_matrix, shape (n_test, D)
    Y_test : scipy.sparse.csr_matrix, shape (n_test, L)
    feature_names : list of str, length D
    label_names : list of str, length L
    description : str, source, split and preprocessing in words
    info : dict, provenance (source checksums, options, whether it came from the cache,
        load time in seconds)
    vectorizer : :class:`~mlnn.datasets.text.TfidfVectorizer` or None
        For a dataset built from raw text (reuters21578): the fitted vectorizer that made X, so
        that ``vectorizer.transform([text])`` gives a new document's row exactly as X_train's
        rows were computed. None for datasets distributed as feature vectors.

    Labels for scikit-learn. mlnn takes Y dense or sparse, but scikit-learn's model selection
    (``cross_validate``, ``GridSearchCV``) refuses a sparse Y: pass ``dataset.Y_train.toarray()``,
    a dense int8 array of n × L bytes (0.7 MB for Reuters-21578's training set, 12.7 MB for
    Delicious'). X can stay sparse.
    """
    name: str
    X_train: sp.csr_matrix
    Y_train: sp.csr_matrix
    X_test: sp.csr_matrix
    Y_test: sp.csr_matrix
    feature_names: list
    label_names: list
    description: str = ""
    info: dict = field(default_factory=dict)
    vectorizer: object = None

    def statistics(self):
        """The statistics of the paper's Table 1 and a few more; see :func:`statistics`."""
        return statistics(self)


def statistics(dataset):
    """Table 1 statistics of a :class:`Dataset`.

    Returns
    -------
    dict with
      ``M`` documents (train + test), ``D`` features, ``L`` labels,
      ``C`` label cardinality (mean labels per document over train + test),
      ``n_train``, ``n_test``, ``C_train``, ``C_test``,
      ``nnz_per_doc`` (mean non-zero features per document, train + test),
      ``labels_without_positives`` (labels with no positive document at all),
      ``labels_without_train_positives``, ``labels_without_test_positives``,
      ``docs_without_labels_train``, ``docs_without_labels_test``,
      ``label_density`` (C / L);
    a mean over a split without documents is ``nan`` (undefined), not 0.
    """
    def row_counts(Y):
        return np.diff(sp.csr_matrix(Y).indptr) if Y.shape[0] else np.zeros(0, dtype=int)

    def column_positives(Y):
        return np.bincount(sp.csr_matrix(Y).indices, minlength=Y.shape[1])

    n_train, n_test = dataset.X_train.shape[0], dataset.X_test.shape[0]
    M = n_train + n_test
    L = dataset.Y_train.shape[1]
    labels_train, labels_test = row_counts(dataset.Y_train), row_counts(dataset.Y_test)
    positives_train = column_positives(dataset.Y_train)
    positives_test = column_positives(dataset.Y_test)
    nan = float("nan")                  # a mean over no documents is undefined, not 0
    C = float((labels_train.sum() + labels_test.sum()) / M) if M else nan
    return {
        "name": dataset.name,
        "M": int(M),
        "D": int(dataset.X_train.shape[1]),
        "L": int(L),
        "C": C,
        "n_train": int(n_train),
        "n_test": int(n_test),
        "C_train": float(labels_train.mean()) if n_train else nan,
        "C_test": float(labels_test.mean()) if n_test else nan,
        "nnz_per_doc": float((dataset.X_train.nnz + dataset.X_test.nnz) / M) if M else nan,
        "labels_without_positives": int(np.sum(positives_train + positives_test == 0)),
        "labels_without_train_positives": int(np.sum(positives_train == 0)),
        "labels_without_test_positives": int(np.sum(positives_test == 0)),
        "docs_without_labels_train": int(np.sum(labels_train == 0)),
        "docs_without_labels_test": int(np.sum(labels_test == 0)),
        "label_density": C / L if L else nan,
    }
