"""mlnn: multi-label text classification with neural networks, from scratch in NumPy/SciPy.

A reference implementation of J. Nam, J. Kim, E. Loza Mencía, I. Gurevych and J. Fürnkranz,
*Large-scale Multi-label Text Classification — Revisiting Neural Networks*, ECML PKDD 2014.
"""

from mlnn.base.errors import (ChecksumError, DataFormatError, DivergenceError, MLNNError,
                              ModelFileError, NotFittedError)
from mlnn.model.estimator import MultiLabelNN

__version__ = "0.1.0"

__all__ = ["MultiLabelNN", "MLNNError", "NotFittedError", "DataFormatError", "ChecksumError",
           "ModelFileError", "DivergenceError", "__version__"]
