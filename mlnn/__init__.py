"""mlnn: multi-label text classification with neural networks, from scratch in NumPy/SciPy.

A reference implementation of J. Nam, J. Kim, E. Loza Mencía, I. Gurevych and J. Fürnkranz,
*Large-scale Multi-label Text Classification — Revisiting Neural Networks*, ECML PKDD 2014.
"""

from mlnn.errors import ChecksumError, DataFormatError, MLNNError, ModelFileError
from mlnn.estimator import MultiLabelNN
from mlnn.validation import NotFittedError

__version__ = "0.1.0"

__all__ = ["MultiLabelNN", "MLNNError", "NotFittedError", "DataFormatError", "ChecksumError",
           "ModelFileError", "__version__"]
