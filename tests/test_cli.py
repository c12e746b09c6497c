"""The command line: train → evaluate → predict on real data, reproduce --quick, error paths."""

import collections
import contextlib
import dataclasses
import io
import json
import subprocess
import sys

import pytest

from mlnn.cli import build_parser, main
from mlnn.cli.bench import BENCH_OPTIONS
from mlnn.cli.model import TRAIN_OPTIONS
from mlnn.evaluation.metrics import MEASURES
from mlnn.model.estimator import MultiLabelNN
from mlnn.model.params import DEFAULTS, PARAMS
from mlnn.paper.methods import ALIASES, METHODS, resolve
from mlnn.paper.reproduce import DECLARED_RULE


def run(*args, env=None):
    """Run ``python -m mlnn ARGS`` in a subprocess; returns the CompletedProcess."""
    return subprocess.run([sys.executable, "-m", "mlnn", *args], capture_output=True, text=True,
                          env=env, timeout=600)


def test_every_method_has_an_alias_and_resolves():
    assert sorted(ALIASES.values()) == sorted(METHODS)
    assert resolve("nn-ad") == "NN_AD"
    assert resolve("bpmll-rad") == "BP-MLL_RAD"
    assert resolve("BR_R") == "BR_R"


@pytest.mark.parametrize("argv, message", [
    (["train", "--dataset", "synthetic", "--method", "nn-x"], "unknown method 'nn-x'"),
    (["train", "--dataset", "synthetic", "--method", "br-b"], "is not a neural-network method"),
    (["train", "--dataset", "nope", "--method", "nn-a"], "unknown dataset 'nope'"),
    (["reproduce", "--dataset", "synthetic", "--methods", "svm"], "unknown method 'svm'"),
    (["evaluate", "--model", "/nonexistent/model.npz", "--dataset", "synthetic"],
     "does not exist"),
])
def test_errors_are_one_line_messages_with_exit_code_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.startswith("mlnn: error:") and "Traceback" not in err


@pytest.mark.parametrize("argv, message", [
    (["train", "--dataset", "synthetic", "--bogus"], "unrecognized arguments: --bogus"),
    (["fly"], "argument COMMAND: invalid choice: 'fly'"),
    ([], "the following arguments are required: COMMAND"),
])
def test_unknown_options_and_commands_are_one_line_errors(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mlnn: error: {message}") and "--help" in err
    assert err.count("\n") == 1 and "usage:" not in err


@pytest.mark.parametrize("command", ["train", "evaluate", "predict", "reproduce", "data"])
def test_help_for_each_command(command):
    result = run(command, "--help")
    assert result.returncode == 0
    assert "usage:" in result.stdout


def test_train_evaluate_predict_on_reuters(data_dir, tmp_path):
    model = tmp_path / "model.npz"
    result = run("train", "--dataset", "reuters21578", "--method", "nn-ad", "--hidden-units", "32",
                 "--epochs", "2", "--learning-rate", "0.1", "--out", str(model), "--progress")
    assert result.returncode == 0, result.stderr
    assert "saved" in result.stdout and "epoch" not in result.stdout     # progress: stderr only
    epochs = [line for line in result.stderr.splitlines() if line.startswith("epoch ")]
    assert [line.split()[1] for line in epochs] == ["1/2", "2/2"]
    assert "validation rank loss" in epochs[0] and "left" in epochs[0]
    result = run("evaluate", "--model", str(model), "--dataset", "reuters21578", "--json")
    assert result.returncode == 0, result.stderr
    measures = json.loads(result.stdout)
    assert measures["rankloss"] < 0.05 and measures["miF"] > 0.5

    result = run("evaluate", "--model", str(model), "--dataset", "delicious")
    assert result.returncode == 2
    assert "trained on another dataset" in result.stderr

    export = tmp_path / "export"
    assert run("data", "export", "reuters21578", "--format", "svmlight",
               "--out", str(export)).returncode == 0
    test_file = export / "reuters21578-test.svm"
    documents = test_file.read_text().splitlines()
    head = tmp_path / "head.svm"
    n_features, n_labels = documents[0].split()[1:]
    head.write_text(f"5 {n_features} {n_labels}\n" + "\n".join(documents[1:6]) + "\n")
    result = run("predict", "--model", str(model), "--input", str(head))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 5
    assert "earn" in " ".join(lines) or "acq" in " ".join(lines)


def test_reproduce_quick_on_reuters(data_dir, tmp_path):
    result = run("reproduce", "--dataset", "reuters21578", "--quick", "--out", str(tmp_path),
                 "--methods", "nn-a", "bpmll-ta", "br-b", "br-r")
    assert result.returncode == 0, result.stderr
    rows = (tmp_path / "table3_reuters21578.csv").read_text().splitlines()
    assert rows[0] == "dataset,method,measure,ours,paper,difference"
    assert len(rows) == 1 + 4 * len(MEASURES)
    run_record = json.loads((tmp_path / "run_reuters21578.json").read_text())
    assert set(run_record["methods"]) == {"NN_A", "BP-MLL_TA", "BR_B", "BR_R"}
    assert run_record["methods"]["NN_A"]["test"]["rankloss"] < 0.05
    markdown = (tmp_path / "table3_reuters21578.md").read_text()
    assert "| NN_A | ours |" in markdown and "|  | paper | 0.0037 |" in markdown


def test_a_reproduced_network_is_retrained_by_the_train_command(tmp_path, capsys):
    """The README's claim: the refit of ``reproduce`` is ``train`` with the selected η0, epochs
    and λ, on all training documents (``--validation-fraction 0``), to the last digit."""
    data = ["--dataset", "synthetic", "-o", "n_train=200", "-o", "n_test=80", "-o",
            "n_features=60", "-o", "n_labels=6"]
    assert main(["reproduce", *data, "--methods", "nn-ad", "--quick", "--seed", "3",
                 "--learning-rates", "0.05", "--out", str(tmp_path)]) == 0
    (run,) = tmp_path.glob("run_synthetic*.json")          # named after the dataset and seed
    record = json.loads(run.read_text())["methods"]["NN_AD"]
    params = record["params"]
    model = tmp_path / "model.npz"
    assert main(["train", *data, "--method", "nn-ad", "--seed", "3",
                 "--learning-rate", str(params["learning_rate"]),
                 "--epochs", str(params["max_epochs"]), "--hidden-units",
                 str(params["hidden_units"]), "--validation-fraction", "0",
                 "--threshold-lambda", repr(params["threshold_lambda"]), "--quiet",
                 "--out", str(model)]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", str(model), *data, "--json"]) == 0
    measures = json.loads(capsys.readouterr().out)
    assert {key: measures[key] for key in record["test"]} == record["test"]


# ---- options that set a hyper-parameter: the model description's parsing, help and checks -----

def _help(argv):
    """The ``--help`` text of a command, its whitespace collapsed (argparse wraps lines)."""
    parser = build_parser()
    with pytest.raises(SystemExit):
        with contextlib.redirect_stdout(io.StringIO()) as out:
            parser.parse_args([*argv, "--help"])
    return " ".join(out.getvalue().split())


@pytest.mark.parametrize("command, options, shown", [
    (["train"], TRAIN_OPTIONS, "default: the method's, else {}"),
    (["bench"], BENCH_OPTIONS, "default {}"),
    (["experiment", "dropout"], {"learning_rate": "--learning-rate"},
     "dropout experiment only; default {}"),
])
def test_the_help_shows_the_descriptions_help_and_defaults(command, options, shown):
    text = _help(command)
    for param, option in options.items():
        if option == "--seed":
            continue
        entry = text.split(f"{option} {option.lstrip('-').replace('-', '_').upper()} ")[1]
        words = " ".join(PARAMS[param].help.rstrip(".").split()[:6])
        assert entry.startswith(f"{param}: {words}"), (option, entry[:80])
        expected = shown.format(DEFAULTS[param])
        assert expected in entry.split(" --")[0], (option, expected)


SYNTHETIC = ["--dataset", "synthetic", "-o", "n_train=60", "-o", "n_test=20", "-o",
             "n_features=30", "-o", "n_labels=4"]


@pytest.mark.parametrize("argv, message", [
    (["train", *SYNTHETIC, "--learning-rate", "-inf"],
     "--learning-rate must be a positive finite number, got -inf"),
    (["train", *SYNTHETIC, "--learning-rate", "-1e-3"],
     "--learning-rate must be a positive finite number, got -0.001"),
    (["train", *SYNTHETIC, "--epochs", "-2"], "--epochs must be a positive integer, got -2"),
    (["train", *SYNTHETIC, "--validation-fraction", "-.5"],
     r"--validation-fraction must be a number in [0, 1), got -0.5"),
    (["train", *SYNTHETIC, "--threshold-lambda", "-1"],
     "--threshold-lambda must be a finite number ≥ 0, got -1.0"),
    (["train", *SYNTHETIC, "--hidden-units", "1e20"],
     "argument --hidden-units: invalid int value: '1e20'"),
    (["train", *SYNTHETIC, "--hidden-units", str(10**20)],
     f"hidden_units={10**20} is too large: the weights W1 and W2 would hold"),
    (["bench", *SYNTHETIC, "--seed", "-1"], "--seed must be an integer >= 0, got -1"),
    (["bench", *SYNTHETIC, "--learning-rate", "-inf"],
     "--learning-rate must be a positive finite number, got -inf"),
    (["bench", *SYNTHETIC, "--dtype", "float16"], "unknown --dtype 'float16'"),
    (["experiment", "dropout", "--learning-rate", "-0.1", "--out", "curves.csv"],
     "--learning-rate must be a positive finite number, got -0.1"),
])
def test_bad_hyper_parameter_options_are_one_line_errors(argv, message, tmp_path, monkeypatch,
                                                         capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("mlnn: error: ") and message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


def _counting_checks(monkeypatch):
    """Count the checks of each hyper-parameter's values by its description."""
    counts = collections.Counter()

    def counted(name, param):
        def check(value, label):
            counts[name] += 1
            return param.check(value, label)
        return dataclasses.replace(param, check=check)
    monkeypatch.setattr("mlnn.model.params.PARAMS",
                        {name: counted(name, param) for name, param in PARAMS.items()})
    return counts


def test_train_checks_the_options_before_the_data_and_builds_one_model(tmp_path, monkeypatch,
                                                                       capsys):
    """``train`` builds the method's model once and checks each of its values once, before
    loading the data, naming the option; ``fit`` checks none of them again; a loaded model is
    checked by ``load`` alone."""
    import mlnn.cli.model as command
    counts = _counting_checks(monkeypatch)
    before_data, built = [], []
    load_dataset = command.load_dataset
    monkeypatch.setattr(command, "load_dataset",
                        lambda args: before_data.append(dict(counts)) or load_dataset(args))

    class Counted(MultiLabelNN):
        def __init__(self, **params):
            built.append(params)
            super().__init__(**params)
    monkeypatch.setattr(command, "MultiLabelNN", Counted)
    model = tmp_path / "m.npz"
    assert main(["train", *SYNTHETIC, "--hidden-units", "4", "--learning-rate", "0.05",
                 "--epochs", "1", "--quiet", "--out", str(model)]) == 0
    assert before_data == [{name: 1 for name in PARAMS}]          # every value, once
    assert len(built) == 1 and built[0]["dropout"] == 0.5 and built[0]["hidden_units"] == 4
    assert counts == {name: 1 for name in PARAMS}                  # fit checks none again
    counts.clear()
    assert main(["evaluate", "--model", str(model), *SYNTHETIC]) == 0
    assert counts == {name: 1 for name in PARAMS}
    capsys.readouterr()


def test_train_builds_published_bpmll_once_with_the_datas_sizes(tmp_path, monkeypatch, capsys):
    """BP-MLL as published sizes its hidden layer and weight decay by D and N: the one model
    ``train`` builds has them, with no placeholder sizes set before the data."""
    import mlnn.cli.model as command
    built = []

    class Counted(MultiLabelNN):
        def __init__(self, **params):
            built.append((params, self))
            super().__init__(**params)
    monkeypatch.setattr(command, "MultiLabelNN", Counted)
    assert main(["train", *SYNTHETIC, "--method", "bpmll-original", "--epochs", "1", "--quiet",
                 "--out", str(tmp_path / "m.npz")]) == 0
    ((params, model),) = built
    assert not {"hidden_units", "weight_decay"} & set(params)
    assert (model.network_.shape[1], model.optimizer_.weight_decay) == (6, 2 * 0.1 / 60)
    capsys.readouterr()


@pytest.mark.parametrize("argv, stopping, others", [
    ([], DECLARED_RULE["rule"], ()),
    (["--stopping", "meanF_best", "--stopping-sensitivity"], "meanF_best",
     ("rankloss", "meanF", "fixed")),
    (["--stopping", "rankloss", "--stopping-sensitivity"], "rankloss",
     ("meanF", "meanF_best", "fixed"))])
def test_reproduce_passes_the_main_rule_and_the_sensitivity_rules_on(argv, stopping, others,
                                                                     tmp_path, monkeypatch):
    seen = {}

    def study(datasets, seeds, out, load, **options):
        seen.update(options)
        return []
    monkeypatch.setattr("mlnn.cli.reproduce.run_study", study)
    assert main(["reproduce", "--dataset", "synthetic", "--out", str(tmp_path), *argv]) == 0
    assert (seen["stopping"], seen["other_rules"]) == (stopping, others)

