"""Shared fixtures: the real-data directory and hypothesis profiles."""

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

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
