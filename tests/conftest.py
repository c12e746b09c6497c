"""Shared fixtures: the real-data directory, hypothesis profiles, a model trained on text, and a
child process that signals itself while ``python -m mlnn`` starts."""

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from mlnn.datasets.text import TfidfVectorizer
from mlnn.model.estimator import MultiLabelNN

settings.register_profile(
    "default", deadline=None, max_examples=60,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "ci", deadline=None, max_examples=200,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough", deadline=None, max_examples=500,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True)
def _answers_processes_end():
    """Every answer's process a test started through :func:`tests.across.across` ends with it."""
    yield
    from tests.across import end_all
    end_all()


def _data_dir():
    value = os.environ.get("MLNN_DATA")
    return Path(value) if value else None


@pytest.fixture(scope="session")
def data_dir():
    """The directory of real datasets named by ``MLNN_DATA``.

    Skips the test when it is not set or missing, unless ``MLNN_REQUIRE_DATA=1`` (as in CI), where
    a missing data directory is a failure.
    """
    path = _data_dir()
    if path is None or not path.is_dir():
        reason = ("the real datasets are needed: set MLNN_DATA to the data directory "
                  f"(now {os.environ.get('MLNN_DATA')!r})")
        if os.environ.get("MLNN_REQUIRE_DATA") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return path


def require_file(data_dir, relative):
    """Return ``data_dir / relative``, skipping (or failing under MLNN_REQUIRE_DATA) if absent."""
    path = Path(data_dir) / relative
    if not path.exists():
        reason = f"data file {path} is missing"
        if os.environ.get("MLNN_REQUIRE_DATA") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return path


@pytest.fixture(scope="session")
def text_model():
    """A model trained on a tiny text dataset (labels grain and crude), its vectorizer kept."""
    texts = ["wheat grain harvest", "crude oil barrel", "wheat and oil prices rise",
             "grain exports fall", "oil output cut", "maize wheat crop"] * 4
    Y = np.array([[("wheat" in t or "grain" in t or "maize" in t), ("oil" in t)]
                  for t in texts], dtype=np.int8)
    vectorizer = TfidfVectorizer()
    X = vectorizer.fit_transform(texts)
    model = MultiLabelNN(hidden_units=4, max_epochs=5, random_state=0)
    return model.fit(X, Y, label_names=["grain", "crude"], vectorizer=vectorizer)


#: A ``sitecustomize.py`` that makes the child process send itself the signal named by
#: STOP_SIGNAL when the module named by STOP_AT is first imported.
SIGNAL_AT_IMPORT = """
import os, signal, sys

class SignalAt:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ["STOP_AT"]:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), getattr(signal, os.environ["STOP_SIGNAL"]))
        return None

sys.meta_path.insert(0, SignalAt())
"""


@pytest.fixture
def signal_at_import(tmp_path):
    """``env(module, signal_name)``: the environment of a child process, with the repository and
    a ``sitecustomize.py`` on its path, that sends itself that signal when it first imports
    ``module`` (while ``python -m mlnn`` starts)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SIGNAL_AT_IMPORT)
    root = Path(__file__).resolve().parents[1]
    return lambda module, signal_name: dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(site), str(root)]), STOP_AT=module,
        STOP_SIGNAL=signal_name, OPENBLAS_NUM_THREADS="1", MLNN_CACHE=str(tmp_path / "cache"))
