"""How the notebooks size their experiments and where figures go, read from the environment.

* ``MLNN_FAST=1`` -- fast mode: tiny experiments that exercise the whole pipeline in seconds
  (the test suite runs every notebook this way);
* ``MLNN_RERUN=1`` -- train the networks of a figure again instead of redrawing it from the
  curves stored next to it;
* ``MLNN_FIGURES`` -- the directory figures are written to. Unset, fast mode writes to a fresh
  temporary directory (so quick runs never overwrite the committed figures), and the full mode
  to the ``figures/`` folder of the project.
"""

import os
import tempfile
from pathlib import Path


def fast_mode():
    """True when ``MLNN_FAST=1``: notebooks then run tiny experiments (as the tests do)."""
    return os.environ.get("MLNN_FAST", "") == "1"


def rerun_mode():
    """True when ``MLNN_RERUN=1``: notebooks retrain instead of reading stored curves."""
    return os.environ.get("MLNN_RERUN", "") == "1"


def project_root(start=None):
    """The nearest directory at or above ``start`` (default: cwd) holding ``setup.cfg`` and
    ``mlnn/``, or None."""
    path = Path(start or Path.cwd()).resolve()
    for candidate in (path, *path.parents):
        if (candidate / "setup.cfg").is_file() and (candidate / "mlnn").is_dir():
            return candidate
    return None


def figures_dir(fast=None):
    """Where to save figures: ``$MLNN_FIGURES``; else a temp dir in fast mode; else ``figures/``.

    The directory is created if needed.
    """
    fast = fast_mode() if fast is None else fast
    if os.environ.get("MLNN_FIGURES"):
        directory = Path(os.environ["MLNN_FIGURES"])
    elif fast:
        directory = Path(tempfile.mkdtemp(prefix="mlnn-figures-"))
    else:
        root = project_root()
        directory = (root if root is not None else Path.cwd()) / "figures"
    directory.mkdir(parents=True, exist_ok=True)
    return directory
