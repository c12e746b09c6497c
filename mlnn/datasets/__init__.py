"""Datasets: Reuters-21578 from SGML, MULAN ARFF + XML, svmlight, tf-idf, downloads, synthetic.

``mlnn.datasets.load(name, data_dir=None, **options)`` returns a :class:`Dataset` with
``X_train``, ``Y_train``, ``X_test``, ``Y_test`` (CSR; X float64, Y int8 0/1),
``feature_names``, ``label_names`` and ``description``; ``Dataset.statistics()`` gives the
paper's Table 1 numbers (M, D, L, C) and more. Data files are looked up under
:func:`data_dir` (``$MLNN_DATA`` or ``~/.cache/mlnn``); processed matrices are cached under
``$MLNN_CACHE`` (or ``~/.cache/mlnn/processed``).
"""

from mlnn.datasets.dataset import Dataset, statistics
from mlnn.datasets.download import fetch
from mlnn.datasets.registry import data_dir, load, names

__all__ = ["Dataset", "statistics", "load", "names", "data_dir", "fetch"]
