"""How the notebooks size their experiments and where figures go, read from the environment:
``MLNN_FAST=1`` (tiny experiments, as the tests run), ``MLNN_RERUN=1`` (retrain instead of
redrawing stored curves), ``MLNN_FIGURES`` (where figures go: by default a scratch directory, or
with ``MLNN_REFRESH_FIGURES=1`` the committed ``figures/``) and ``MLNN_DATA`` (the datasets;
without them a notebook falls back to stored curves and the synthetic collection, and says so).
"""

import os
import tempfile
from pathlib import Path

from mlnn import datasets
from mlnn.base.errors import MLNNError


def fast_mode():
    """True when ``MLNN_FAST=1``: tiny experiments."""
    return os.environ.get("MLNN_FAST", "") == "1"


def rerun_mode():
    """True when ``MLNN_RERUN=1``: retrain instead of reading stored curves."""
    return os.environ.get("MLNN_RERUN", "") == "1"


def project_root(start=None):
    """The nearest directory at or above ``start`` (cwd) holding ``setup.cfg`` and ``mlnn/``."""
    path = Path(start or Path.cwd()).resolve()
    for candidate in (path, *path.parents):
        if (candidate / "setup.cfg").is_file() and (candidate / "mlnn").is_dir():
            return candidate
    return None


def figures_dir():
    """Where to save figures (created): ``$MLNN_FIGURES``, else the project's ``figures/`` in a
    full run with ``MLNN_REFRESH_FIGURES=1``, else a fresh scratch directory."""
    if os.environ.get("MLNN_FIGURES"):
        directory = Path(os.environ["MLNN_FIGURES"])
    elif os.environ.get("MLNN_REFRESH_FIGURES", "") == "1" and not fast_mode():
        directory = (project_root() or Path.cwd()) / "figures"
    else:
        directory = Path(tempfile.mkdtemp(prefix="mlnn-figures-"))
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def banner():
    """The line a notebook prints first: the mode, in fast mode with the smoke-test warning."""
    if fast_mode():
        return ("FAST MODE (MLNN_FAST=1): a smoke test. What this notebook trains or computes "
                "below is shrunk to run\nin seconds: those numbers only show that the code runs "
                "and are NOT the results the text discusses\n(curves and tables read from the "
                "committed files under figures/ are the full run's).")
    return "full mode: the experiments and figures below are those the text discusses."


def claim(holds, statement):
    """Check a statement of a notebook's text about its results: print ``checked: ...`` if it
    ``holds``; else stop a full run (:class:`MLNNError`), or in fast mode say it is not so."""
    if holds:
        print(f"checked: {statement}")
    elif fast_mode():
        print(f"not so in this fast run: {statement}")
    else:
        raise MLNNError(f"the text claims that {statement}, but the results above say otherwise")


def stored_figures():
    """The stored results: ``figures/`` beside the notebook (the current directory, as ``course
    source`` puts them), else the project's ``figures/``, whatever ``MLNN_FIGURES`` says."""
    beside = Path.cwd() / "figures"
    return beside if beside.is_dir() else (project_root() or Path.cwd()) / "figures"


def stored(name):
    """The stored file ``name`` (curves, tables, run files) under :func:`stored_figures`."""
    path = stored_figures() / name
    if not path.is_file():
        raise MLNNError(f"stored file {name!r} not found: {path} does not exist")
    return path


def load_or_synthetic(name, **synthetic_options):
    """``(dataset, real)``: ``name`` from ``MLNN_DATA`` and True, else the synthetic collection
    (``synthetic_options``) and False; one line says which."""
    try:
        data = datasets.load(name)
    except MLNNError as error:
        print(f"{name} is not available ({error}).\nFalling back to the synthetic collection "
              f"{synthetic_options or ''}: the numbers below are NOT {name}'s.")
        return datasets.load("synthetic", **synthetic_options), False
    print(f"loaded {name}: {data.X_train.shape[0]} training documents, "
          f"{data.X_train.shape[1]} features, {data.Y_train.shape[1]} labels")
    return data, True


def relative(path):
    """``path`` relative to the project root when it lies inside it, else ``path``."""
    path, root = Path(path).resolve(), project_root()
    return path.relative_to(root) if root is not None and path.is_relative_to(root) else path
