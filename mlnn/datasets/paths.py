"""Where datasets live: the data directory of the source files and the cache of processed ones.

* :func:`data_dir` -- ``$MLNN_DATA`` if set, else ``~/.cache/mlnn``: the downloaded or
  hand-placed source files, read only;
* :func:`cache_dir` -- ``$MLNN_CACHE`` if set, else ``~/.cache/mlnn/processed``: the processed
  matrices (:mod:`mlnn.datasets.cache`).
"""

import os
from pathlib import Path


def data_dir():
    """The data directory: ``$MLNN_DATA`` if set, else ``~/.cache/mlnn``."""
    value = os.environ.get("MLNN_DATA")
    return Path(value) if value else Path.home() / ".cache" / "mlnn"


def cache_dir():
    """The cache of processed matrices: ``$MLNN_CACHE`` if set, else ``~/.cache/mlnn/processed``."""
    value = os.environ.get("MLNN_CACHE")
    return Path(value) if value else Path.home() / ".cache" / "mlnn" / "processed"
