"""The model description (:mod:`mlnn.model.params`) held to what the project states about it: the
defaults are what the reproduction uses (README, "Where the paper is silent"), and a bad value
is named as the caller spells the option (``check_params``'s ``names``)."""

import re
from pathlib import Path

import pytest

from mlnn.base.errors import MLNNError
from mlnn.model.estimator import MultiLabelNN
from mlnn.model.params import DEFAULTS, PARAMS, check_params
from mlnn.paper.reproduce import BUDGETS


@pytest.fixture(scope="module")
def readme():
    path = Path(__file__).resolve().parents[1] / "README.md"
    if not path.is_file():             # a copy of the package and its tests alone (mutate.py)
        pytest.skip("no README.md beside the tests")
    return path.read_text()


def test_the_readme_says_the_defaults_are_what_the_reproduction_uses(readme):
    assert "the defaults are what the reproduction uses" in readme


def test_the_full_budget_is_the_papers_network_and_the_estimators_defaults():
    full = BUDGETS["full"]
    assert full["hidden_units"] == 1000                    # Sec. 4: 1,000 hidden units
    assert (full["max_epochs"], full["patience"]) == (100, 5)  # README: the 100-epoch budget
    for name in set(full) & set(DEFAULTS):
        assert MultiLabelNN().get_params()[name] == full[name]


def test_the_budget_sets_patience_and_the_readme_states_the_default_patience(readme):
    assert "patience" in BUDGETS["full"]
    stated = {int(n) for n in re.findall(r"patience (\d+)", readme)}
    assert stated == {DEFAULTS["patience"]}


@pytest.mark.parametrize("name", [name for name in PARAMS if name.endswith("_options")])
def test_the_readme_shows_each_options_hyper_parameter_and_its_help_names_an_example(
        readme, name):
    """loss_options and optimizer_options: the README shows how a loss or a rule is named with
    its options, and MultiLabelNN's doc gives an example of them."""
    assert f"{name}={{" in readme
    assert "e.g. {" in PARAMS[name].help and f"    {name} : dict or None" in MultiLabelNN.__doc__


#: A value no hyper-parameter accepts.
NOTHING = object()


@pytest.mark.parametrize("name", list(PARAMS))
def test_check_params_names_a_bad_value_as_the_caller_spells_its_option(name):
    option = "--" + name.replace("_", "-") + "-option"
    with pytest.raises(MLNNError) as error:
        check_params(dict(DEFAULTS, **{name: NOTHING}), names={name: option})
    assert option in str(error.value)
    assert not re.search(rf"(?<![-\w]){name}\b", str(error.value)), str(error.value)
    with pytest.raises(MLNNError, match=rf"\b{name}\b"):            # unspelled: its own name
        check_params({name: NOTHING}, names={})


def test_check_params_names_only_the_bad_one_and_accepts_the_defaults():
    check_params(dict(DEFAULTS), names={name: "--x" for name in DEFAULTS})
    with pytest.raises(MLNNError, match=r"^--epochs must be a positive integer, got 0$"):
        check_params(dict(DEFAULTS, max_epochs=0), names={"max_epochs": "--epochs",
                                                          "patience": "--patience"})


@pytest.fixture(scope="module")
def eta_path(tmp_path_factory):
    """``train --learning-rate`` to the line of AdaGrad that uses η, traced: the checks of η (by
    name), the files of the calls that check it, build the rule with it and run its first
    update, and whether that update ran."""
    import sys

    import mlnn
    from mlnn.cli import main
    from mlnn.nn.optimizers import AdaGrad

    eta, root = 0.0123, Path(mlnn.__file__).parent
    checks, files, updates = [], set(), []
    validation = str(root / "base" / "validation.py")

    def on_path(frame):
        while frame is not None:
            path = Path(frame.f_code.co_filename)
            if root in path.parents:
                files.add(path.relative_to(root.parent).as_posix())
            frame = frame.f_back

    def profile(frame, event, arg):
        code = frame.f_code
        if event != "call" or code not in (AdaGrad.__init__.__code__, AdaGrad.update.__code__) \
                and code.co_filename != validation:
            return
        if code is AdaGrad.update.__code__:
            if not updates and frame.f_locals["self"].learning_rate == eta:
                updates.append(on_path(frame))
        elif any(type(value) is float and value == eta for value in frame.f_locals.values()):
            if code.co_filename == validation != frame.f_back.f_code.co_filename:
                checks.append(code.co_name)          # a check (not one of its own helpers)
            on_path(frame)

    argv = ["train", "--dataset", "synthetic", "-o", "n_train=40", "-o", "n_test=10", "-o",
            "n_features=20", "-o", "n_labels=3", "--learning-rate", str(eta), "--epochs", "1",
            "--hidden-units", "4", "--quiet", "--out", str(tmp_path_factory.mktemp("eta") / "m")]
    sys.setprofile(profile)
    try:
        assert main(argv) == 0
    finally:
        sys.setprofile(None)
    return checks, files, bool(updates)


def test_learning_rate_is_checked_once_on_its_way_from_train_to_adagrad(eta_path):
    """One check, at the boundary (:mod:`mlnn.model.params`); the rule trusts it."""
    checks, _, updated = eta_path
    assert checks == ["check_positive_float"] and updated


def test_the_readme_counts_the_files_of_that_path(eta_path, readme):
    stated = re.search(r"update cross (\d+) files", " ".join(readme.split()))
    assert stated and int(stated.group(1)) == len(eta_path[1]), " ".join(sorted(eta_path[1]))
