"""``python -m mlnn data ...`` commands."""

import json

import numpy as np

from mlnn.cli import main
from mlnn.datasets import load
from mlnn.datasets.svmlight import read_svmlight


def test_info_json_on_synthetic(capsys):
    assert main(["data", "info", "synthetic", "--json", "-o", "n_train=120", "-o",
                 "n_labels=7"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["n_train"] == 120 and stats["L"] == 7 and stats["n_test"] == 200
    assert {"M", "D", "L", "C", "nnz_per_doc", "labels_without_positives",
            "docs_without_labels_train", "load_seconds"} <= set(stats)


def test_info_text_and_errors(capsys):
    assert main(["data", "info", "synthetic"]) == 0
    out = capsys.readouterr().out
    assert "label cardinality C" in out and "600 (400 / 200)" in out
    assert main(["data", "info", "nope"]) == 2
    assert "unknown dataset 'nope'" in capsys.readouterr().err
    assert main(["data", "info", "synthetic", "-o", "n_train"]) == 2


def test_export_svmlight_round_trip(tmp_path, capsys):
    assert main(["data", "export", "synthetic", "--format", "svmlight", "--out",
                 str(tmp_path), "-o", "n_train=50", "-o", "n_test=20"]) == 0
    d = load("synthetic", n_train=50, n_test=20)
    X, Y = read_svmlight(tmp_path / "synthetic-train.svm")
    np.testing.assert_array_equal(X.toarray(), d.X_train.toarray())
    np.testing.assert_array_equal(Y.toarray(), d.Y_train.toarray())
    labels = (tmp_path / "synthetic-labels.txt").read_text().split("\n")[:-1]
    assert labels == d.label_names


def test_list(capsys):
    assert main(["data", "list"]) == 0
    assert "reuters21578" in capsys.readouterr().out.split()
