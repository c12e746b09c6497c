"""The :class:`Dataset` returned by :func:`mlnn.datasets.load`, and its Table 1 statistics."""

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp


@dataclass
class Dataset:
    """A multi-label dataset with a train/test split: X_train, X_test (n × D CSR float64, sorted
    indices), Y_train, Y_test (n × L CSR int8, 0/1), the names, a ``description`` in words,
    ``info`` (source checksums, options, cache use, load time) and for a dataset made from raw
    text the fitted ``vectorizer`` that turns new text into rows like X's."""
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
        """The paper's Table 1 statistics (``M`` documents, ``D`` features, ``L`` labels, ``C``
        mean labels per document) and more, by name; a mean over no documents is ``nan``."""
        Y_train, Y_test = sp.csr_matrix(self.Y_train), sp.csr_matrix(self.Y_test)
        n_train, n_test = self.X_train.shape[0], self.X_test.shape[0]
        M, L = n_train + n_test, Y_train.shape[1]
        labels_train, labels_test = np.diff(Y_train.indptr), np.diff(Y_test.indptr)
        positives_train, positives_test = (np.bincount(Y.indices, minlength=L)
                                           for Y in (Y_train, Y_test))
        nan = float("nan")                  # a mean over no documents is undefined, not 0
        C = float((labels_train.sum() + labels_test.sum()) / M) if M else nan
        return {
            "name": self.name, "M": int(M), "D": int(self.X_train.shape[1]), "L": int(L), "C": C,
            "n_train": int(n_train), "n_test": int(n_test),
            "C_train": float(labels_train.mean()) if n_train else nan,
            "C_test": float(labels_test.mean()) if n_test else nan,
            "nnz_per_doc": float((self.X_train.nnz + self.X_test.nnz) / M) if M else nan,
            "labels_without_positives": int(np.sum(positives_train + positives_test == 0)),
            "labels_without_train_positives": int(np.sum(positives_train == 0)),
            "labels_without_test_positives": int(np.sum(positives_test == 0)),
            "docs_without_labels_train": int(np.sum(labels_train == 0)),
            "docs_without_labels_test": int(np.sum(labels_test == 0)),
            "label_density": C / L if L else nan,
        }
