"""Datasets: Reuters-21578 from SGML, MULAN ARFF + XML, svmlight, tf-idf, downloads, synthetic.

``mlnn.datasets.load(name, data_dir=None, download=False, **options)`` returns a
:class:`Dataset` with ``X_train``, ``Y_train``, ``X_test``, ``Y_test`` (CSR; X float64, Y int8
0/1), ``feature_names``, ``label_names``, ``description`` and, for the text collection
reuters21578, ``vectorizer`` (the fitted tf-idf that made X from raw text, to classify new
text); ``Dataset.statistics()`` gives the paper's Table 1 numbers (M, D, L, C) and more. With
``download=True`` a missing pinned archive (Reuters-21578) is fetched and verified first.
scikit-learn's model selection needs a dense Y: ``dataset.Y_train.toarray()``. Data files are
looked up under :func:`data_dir` (``$MLNN_DATA`` or ``~/.cache/mlnn``); processed matrices are
cached under ``$MLNN_CACHE`` (or ``~/.cache/mlnn/processed``); see :mod:`mlnn.datasets.paths`.

=============  ==============================================================================
module         job
=============  ==============================================================================
``paths``      the data and cache directories
``download``   pinned archives, fetched and verified by SHA-256
``registry``   the named datasets and :func:`load`
``cache``      processed matrices as ``.npz``
``dataset``    the :class:`Dataset` and its Table 1 statistics
``reuters``    readers: Reuters-21578 SGML and the ModApte split
``arff``       readers: MULAN ARFF and XML
``svmlight``   readers: svmlight / LIBSVM / Extreme-Classification files
``text``       tokenising, stop words, Porter stemming, tf-idf
``synthetic``  a generated collection that needs no files
=============  ==============================================================================
"""

from mlnn.datasets.dataset import Dataset, statistics
from mlnn.datasets.download import fetch
from mlnn.datasets.paths import data_dir
from mlnn.datasets.registry import load, names

__all__ = ["Dataset", "statistics", "load", "names", "data_dir", "fetch"]
