"""mlnn: multi-label text classification with neural networks, from scratch in NumPy/SciPy.

A reference implementation of J. Nam, J. Kim, E. Loza Mencía, I. Gurevych and J. Fürnkranz,
*Large-scale Multi-label Text Classification — Revisiting Neural Networks*, ECML PKDD 2014.
:class:`MultiLabelNN` is the estimator (:mod:`mlnn.model`); ``python -m mlnn`` the command line.
"""

from mlnn.base.errors import (ChecksumError, DataFormatError, DivergenceError, MLNNError,
                              ModelFileError, NotFittedError)

__version__ = "0.1.0"

__all__ = ["MultiLabelNN", "MLNNError", "NotFittedError", "DataFormatError", "ChecksumError",
           "ModelFileError", "DivergenceError", "__version__"]


def __getattr__(name):
    """``MultiLabelNN``, imported on first use: importing mlnn loads no NumPy, so that
    ``python -m mlnn`` can hold back Ctrl-C until it has (:mod:`mlnn.__main__`)."""
    if name == "MultiLabelNN":
        from mlnn.model.estimator import MultiLabelNN
        return MultiLabelNN
    raise AttributeError(f"module 'mlnn' has no attribute {name!r}")
