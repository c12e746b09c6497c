"""The project's exception types.

Every error that bad input can provoke is raised as (a subclass of) :class:`MLNNError`, with a
message that names the argument, file or line at fault. ``MLNNError`` derives from ``ValueError``
so that code catching ``ValueError`` keeps working.
"""


class MLNNError(ValueError):
    """Bad input or an impossible request: the message says which argument and why."""


class DataFormatError(MLNNError):
    """A data file is malformed; the message names the file and, where known, the line."""


class ChecksumError(MLNNError):
    """A downloaded or cached file does not have the expected SHA-256 checksum."""


class ModelFileError(MLNNError):
    """A model file is truncated, tampered with, or of an unknown format version."""


class DivergenceError(MLNNError):
    """Training produced a non-finite loss: the learning rate is too large for the data."""


class MLNNWarning(UserWarning):
    """Something was wrong but has been repaired (e.g. a damaged cache entry was rebuilt); the
    command line prints it as one line, ``mlnn: warning: ...``."""


class NotFittedError(MLNNError, AttributeError):
    """A model was used before ``fit``: a ``ValueError`` and an ``AttributeError``, as
    scikit-learn's ``NotFittedError`` is. :func:`mlnn.base.validation.check_fitted` raises a
    subclass of scikit-learn's own class when scikit-learn is loaded, so its tools recognise the
    error too."""
