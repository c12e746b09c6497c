"""mlnn: multi-label text classification with neural networks, from scratch in NumPy/SciPy.

A reference implementation of J. Nam, J. Kim, E. Loza Mencía, I. Gurevych and J. Fürnkranz,
*Large-scale Multi-label Text Classification — Revisiting Neural Networks*, ECML PKDD 2014.
"""

import sys

from mlnn.base import interrupts


def _started_as_command():
    """Whether this import is the start of ``python -m mlnn`` (the command line)."""
    argv = list(getattr(sys, "orig_argv", []))
    return "-m" in argv and argv[argv.index("-m") + 1:argv.index("-m") + 2] == ["mlnn"]


if _started_as_command():       # Ctrl-C or SIGTERM while NumPy and SciPy load: see mlnn.__main__
    interrupts.hold()

from mlnn.base.errors import (ChecksumError, DataFormatError, DivergenceError,  # noqa: E402
                              MLNNError, ModelFileError, NotFittedError)
from mlnn.model.estimator import MultiLabelNN  # noqa: E402

__version__ = "0.1.0"

__all__ = ["MultiLabelNN", "MLNNError", "NotFittedError", "DataFormatError", "ChecksumError",
           "ModelFileError", "DivergenceError", "__version__"]
