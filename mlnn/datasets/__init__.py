"""Datasets: Reuters-21578 from SGML, MULAN ARFF + XML, svmlight, tf-idf, downloads, synthetic.

``load(name, data_dir=None, download=False, **options)`` returns a :class:`Dataset` (X_train,
Y_train, X_test, Y_test as CSR; names; for reuters21578 the fitted tf-idf ``vectorizer``);
``Dataset.statistics()`` gives the paper's Table 1 numbers. Sources are read from
:func:`data_dir` (``$MLNN_DATA``), processed matrices cached under ``$MLNN_CACHE``.

Modules: ``paths`` (the data and cache directories), ``download`` (pinned archives, verified by
SHA-256), ``registry`` (the named datasets and :func:`load`), ``cache``, ``dataset`` (the
:class:`Dataset`, Table 1), the readers ``reuters``, ``arff`` and ``svmlight``, ``text``
(tokens, stop words, Porter stemming, tf-idf) and ``synthetic`` (a collection that needs no file).
"""

from mlnn.datasets.dataset import Dataset
from mlnn.datasets.download import fetch
from mlnn.datasets.paths import data_dir
from mlnn.datasets.registry import load, names

__all__ = ["Dataset", "load", "names", "data_dir", "fetch"]
