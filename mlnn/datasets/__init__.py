"""Datasets: Reuters-21578 from SGML, MULAN ARFF + XML, svmlight, tf-idf, downloads, synthetic.

``load(name, data_dir=None, download=False, **options)`` returns a :class:`Dataset` (X_train,
Y_train, X_test, Y_test as CSR; names; for reuters21578 the fitted tf-idf ``vectorizer``);
``Dataset.statistics()`` gives the paper's Table 1 numbers. Sources are read from
:func:`data_dir` (``$MLNN_DATA``), processed matrices cached under ``$MLNN_CACHE``.

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
