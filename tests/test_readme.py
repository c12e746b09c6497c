"""Every ```python block of README.md runs as written, and every command of its ```bash blocks
is one the command line accepts.

Each block runs on its own, in a temporary directory, with the real data of ``MLNN_DATA`` when it
loads Reuters-21578 (skipped without it, failed under ``MLNN_REQUIRE_DATA=1``) and with
scikit-learn when it imports it. The README names the one thing changed here for speed: the
``small_networks`` fixture trains each ``MultiLabelNN`` with at most 32 hidden units for at most
3 epochs. The ``python -m mlnn`` commands of the bash blocks (full reproductions that take an
hour and more) are parsed by the command line's own parser, which checks every option and value
as the real run would, without running them.
"""

import ast
import re
import shlex
from pathlib import Path

import pytest

from mlnn.cli import build_parser
from mlnn.model.estimator import MultiLabelNN

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: Every README of the project whose ```bash blocks hold ``python -m mlnn`` commands.
READMES = (README, ROOT / "figures" / "README.md", ROOT / "notebooks" / "README.md")
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"),
                    flags=re.MULTILINE | re.DOTALL)

#: The budget of every network trained by a README block in these tests.
SMALL = {"hidden_units": 32, "max_epochs": 3}


@pytest.fixture
def small_networks(monkeypatch):
    """``MultiLabelNN.fit`` with at most ``SMALL``'s hidden units and epochs. The model keeps
    the smaller values (so a model file it saves describes the network it holds; ``clone`` copies
    them). Returns the list of networks trained, to check that the blocks really trained."""
    fit, trained = MultiLabelNN.fit, []

    def small_fit(self, X, Y, *args, **kwargs):
        self.set_params(**{name: min(getattr(self, name), limit) for name, limit in SMALL.items()})
        fit(self, X, Y, *args, **kwargs)
        trained.append(self.network_)
        return self

    monkeypatch.setattr(MultiLabelNN, "fit", small_fit)
    return trained


def test_the_readme_has_its_python_examples():
    assert len(BLOCKS) >= 3
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


def _commands(path):
    """Every ``python -m mlnn ...`` command of the bash blocks of the README ``path``, as an
    argument list (line continuations joined; environment assignments, comments and redirections
    dropped)."""
    text = path.read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"^```bash\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
                words.pop(0)
            for index, word in enumerate(words):    # a redirection or pipe ends the command
                if re.match(r"\d?[<>]|\|", word) or word in ("&&", ";", "&"):
                    words = words[:index]
                    break
            if words[:3] == ["python", "-m", "mlnn"]:
                commands.append(words[3:])
    return commands


COMMANDS = [command for path in READMES for command in _commands(path)]


def test_the_readme_shows_commands_of_every_kind():
    assert len(_commands(README)) >= 8
    assert len(_commands(ROOT / "figures" / "README.md")) >= 8
    assert {"train", "predict", "evaluate", "reproduce", "bench"} <= {c[0] for c in COMMANDS}


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c)[:60] for c in COMMANDS])
def test_readme_command_is_accepted_by_the_command_line(command):
    args = build_parser().parse_args(command)
    assert callable(args.func)


def _course():
    """``COURSE`` of tests/test_notebooks.py, the reading order (read, not imported: importing
    it needs the notebook tools)."""
    tree = ast.parse((ROOT / "tests" / "test_notebooks.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "COURSE":
            return ast.literal_eval(node.value)
    raise AssertionError("tests/test_notebooks.py defines no COURSE")


def test_the_course_index_lists_every_notebook_in_reading_order():
    COURSE = _course()
    index = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| \d+ \| \[`([\w]+)`\]\(\1\.ipynb\)", index, flags=re.MULTILINE)
    assert listed == COURSE
    assert sorted(listed) == sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", READMES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_of_a_readme_exists(path):
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8"))
    missing = [link for link in links if not (path.parent / link).exists()]
    assert not missing, missing


def test_the_readme_counts_the_mutation_catalogue():
    """The number of planted bugs the README states is the catalogue's."""
    from tests.mutation.catalogue import MUTANTS
    stated = re.search(r"the catalogue holds (\d+) such bugs", " ".join(README.read_text().split()))
    assert stated and int(stated.group(1)) == len(MUTANTS)
