"""Every ```python block of README.md runs as written.

Each block runs on its own, in a temporary directory, with the real data of ``MLNN_DATA`` when it
loads Reuters-21578 (skipped without it, failed under ``MLNN_REQUIRE_DATA=1``) and with
scikit-learn when it imports it. The README names the one thing changed here for speed: the
``small_networks`` fixture trains each ``MultiLabelNN`` with at most 32 hidden units for at most
3 epochs.
"""

import re
from pathlib import Path

import pytest

from mlnn.estimator import MultiLabelNN

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"),
                    flags=re.MULTILINE | re.DOTALL)

#: The budget of every network trained by a README block in these tests.
SMALL = {"hidden_units": 32, "max_epochs": 3}


@pytest.fixture
def small_networks(monkeypatch):
    """``MultiLabelNN.fit`` with at most ``SMALL``'s hidden units and epochs; the model's own
    hyper-parameters are restored after each fit (so ``clone`` and ``get_params`` are unchanged).
    Returns the list of networks trained, to check that the blocks really trained."""
    fit, trained = MultiLabelNN.fit, []

    def small_fit(self, X, Y, *args, **kwargs):
        saved = {name: getattr(self, name) for name in SMALL}
        self.set_params(**{name: min(saved[name], limit) for name, limit in SMALL.items()})
        try:
            fit(self, X, Y, *args, **kwargs)
        finally:
            self.set_params(**saved)
        trained.append(self.network_)
        return self

    monkeypatch.setattr(MultiLabelNN, "fit", small_fit)
    return trained


def test_the_readme_has_its_python_examples():
    assert len(BLOCKS) >= 4
    assert "small_networks" in README.read_text(encoding="utf-8")      # the fixture is named


@pytest.mark.parametrize("index", [
    pytest.param(i, id=f"block{i + 1}",
                 marks=[pytest.mark.data, pytest.mark.slow] if "reuters21578" in block else [])
    for i, block in enumerate(BLOCKS)])
def test_readme_python_block_runs_as_written(index, small_networks, tmp_path, monkeypatch,
                                             request):
    code = BLOCKS[index]
    if re.search(r"^\s*(from|import) sklearn\b", code, flags=re.MULTILINE):
        pytest.importorskip("sklearn")
    if "reuters21578" in code:
        request.getfixturevalue("data_dir")          # skips (or fails in CI) without MLNN_DATA
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"README.md, Python block {index + 1}", "exec"), {"__name__": "readme"})
    if "MultiLabelNN(" in code:
        assert small_networks, "the block trained no network"
        assert all(network.shape[1] <= SMALL["hidden_units"] for network in small_networks)
