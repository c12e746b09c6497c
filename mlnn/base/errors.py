"""The project's exception types (every error bad input can provoke is an :class:`MLNNError`, a
``ValueError``) and the one line an ``OSError`` is told in. Imports nothing: ``python -m mlnn
--help`` loads no NumPy."""

import errno
import os


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
    """Something was wrong, or repaired; the command line prints it as ``mlnn: warning: ...``."""


class NotFittedError(MLNNError, AttributeError):
    """A model was used before ``fit``: a ``ValueError`` and an ``AttributeError``, as
    scikit-learn's is (:func:`mlnn.base.validation.check_fitted` joins the two classes)."""


def describe_os_error(error):
    """A short reason for an ``OSError`` (e.g. "no space left on device"), without the path."""
    reasons = {errno.ENOSPC: "no space left on device", errno.EACCES: "permission denied",
               errno.EPERM: "permission denied", errno.EROFS: "read-only file system"}
    return reasons.get(error.errno) or (error.strerror or str(error)).lower()


def os_error_message(error, action="cannot access"):
    """One line for an ``OSError``: "cannot read FILE: permission denied"."""
    reason = describe_os_error(error)
    if error.filename is None:
        return f"{action}: {reason}"
    return f"{action} {os.fsdecode(error.filename)}: {reason}"
