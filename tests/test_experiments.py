"""Convergence experiments (Figs. 3-4): data preparation, seeding, recorded curves, CSV storage."""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from mlnn import datasets
from mlnn.base.errors import MLNNError
from mlnn.base.validation import validation_split
from mlnn.figures import curves as C
from mlnn.figures import experiments as E

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def synthetic():
    return datasets.load("synthetic", n_train=300, n_test=50, n_features=120, n_labels=8,
                         random_state=3)


@pytest.fixture(scope="module")
def data(synthetic):
    return E.prepare_data(synthetic, validation_fraction=0.25, random_state=1)


def _rows(X):
    return {tuple(np.round(row.toarray().ravel(), 12)) for row in X}


class _Data:
    def __init__(self, X, Y):
        self.name, self.X_train, self.Y_train = "toy", X, Y


def _split(X, Y, fraction, random_state=0):
    data = E.prepare_data(_Data(X, Y), validation_fraction=fraction, random_state=random_state)
    return data["X_train"], data["Y_train"], data["X_val"], data["Y_val"]


def test_prepare_data_partitions_the_training_documents():
    X = sp.csr_matrix(np.arange(40, dtype=float).reshape(20, 2) + 1)
    Y = sp.csr_matrix((np.arange(40).reshape(20, 2) % 3 == 0).astype(int))
    X_fit, Y_fit, X_val, Y_val = _split(X, Y, fraction=0.25, random_state=7)
    assert X_fit.shape[0] == 15 and X_val.shape[0] == 5
    fit_ids, val_ids = X_fit.toarray()[:, 0], X_val.toarray()[:, 0]
    assert set(fit_ids).isdisjoint(val_ids)
    assert sorted(np.concatenate([fit_ids, val_ids])) == sorted(X.toarray()[:, 0])
    assert np.all(np.diff(fit_ids) > 0) and np.all(np.diff(val_ids) > 0)   # file order kept
    # labels travel with their documents
    original = {row[0]: Y.toarray()[i] for i, row in enumerate(X.toarray())}
    for x_row, y_row in zip(X_val.toarray(), Y_val.toarray()):
        np.testing.assert_array_equal(original[x_row[0]], y_row)
    again = _split(X, Y, fraction=0.25, random_state=7)[2].toarray()[:, 0]
    other = _split(X, Y, fraction=0.25, random_state=8)[2].toarray()[:, 0]
    np.testing.assert_array_equal(again, val_ids)
    assert not np.array_equal(other, val_ids)
    # the project's one split: validation documents are the first round(0.25 n) of the
    # permutation of the seed
    _, val_rows = validation_split(20, fraction=0.25, random_state=7)
    np.testing.assert_array_equal(val_ids, X.toarray()[val_rows, 0])


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.1, 0.001])
def test_prepare_data_rejects_bad_fractions(fraction):
    X = sp.csr_matrix(np.ones((10, 3)))
    Y = sp.csr_matrix(np.ones((10, 2), dtype=int))
    with pytest.raises(MLNNError, match="fraction"):
        _split(X, Y, fraction=fraction)


def test_prepare_data_uses_only_the_training_split(synthetic, data):
    n = synthetic.X_train.shape[0]
    assert data["X_train"].shape[0] + data["X_val"].shape[0] == n
    assert data["X_val"].shape[0] == round(0.25 * n)
    test_rows = _rows(synthetic.X_test)
    assert not (_rows(data["X_val"]) & test_rows)
    small = E.prepare_data(synthetic, validation_fraction=0.25, max_train=50, max_val=20,
                           random_state=1)
    assert small["X_train"].shape[0] == 50 and small["X_val"].shape[0] == 20
    assert _rows(small["X_train"]) <= _rows(data["X_train"])


def test_run_setting_records_a_curve_every_eval_every_updates(data):
    setting = C.Setting("t", hidden_units=6, learning_rate=0.05)
    curve = E.run_setting(setting, data, max_updates=23, eval_every=5, batch_size=16)
    assert curve["updates"] == [5, 10, 15, 20, 23]
    assert curve["hidden_units"] == 6 and curve["label"] == "t"
    for key in C.CURVE_COLUMNS:
        assert len(curve[key]) == 5
    assert all(0 <= v <= 1 for v in curve["rankloss"] + curve["MAP"])


def test_run_setting_is_seeded(data):
    setting = C.Setting("t", loss="pwe", hidden_activation="tanh", hidden_units=5, dropout=0.5)
    a = E.run_setting(setting, data, max_updates=12, eval_every=4, batch_size=16, random_state=2)
    b = E.run_setting(setting, data, max_updates=12, eval_every=4, batch_size=16, random_state=2)
    c = E.run_setting(setting, data, max_updates=12, eval_every=4, batch_size=16, random_state=3)
    assert a["rankloss"] == b["rankloss"] and a["train_loss"] == b["train_loss"]
    assert a["train_loss"] != c["train_loss"]


def test_training_lowers_the_validation_rank_loss(data):
    setting = C.Setting("t", hidden_units=16, learning_rate=0.1)
    curve = E.run_setting(setting, data, max_updates=80, eval_every=10, batch_size=16)
    assert curve["rankloss"][-1] < 0.8 * curve["rankloss"][0]
    assert curve["MAP"][-1] > curve["MAP"][0]


def test_momentum_setting_builds_its_optimizer():
    setting = C.Setting("m", optimizer="momentum", learning_rate=0.02, momentum=0.5)
    optimizer = E.components(setting, 5, 3)[2].rule
    assert type(optimizer).__name__ == "Momentum"
    assert (optimizer.learning_rate, optimizer.momentum) == (0.02, 0.5)
    assert type(E.components(C.Setting("a"), 5, 3)[2].rule).__name__ == "AdaGrad"


def test_setting_components_pair_the_loss_with_its_output():
    network, loss, _ = E.components(C.Setting("p", loss="pwe", hidden_activation="tanh",
                                              hidden_units=4), 6, 3, random_state=0)
    assert loss.name == "pwe" and network.output.name == "tanh"
    assert network.hidden_activation.name == "tanh" and network.shape == (6, 4, 3)


def test_experiments_cover_the_papers_settings(synthetic, tmp_path):
    sizes = dict(max_updates=4, eval_every=2)
    conv = E.convergence_experiment(synthetic, fast=True, **sizes)
    assert {(c["optimizer"], c["hidden_activation"]) for c in conv} == {
        (o, h) for o in ("adagrad", "momentum") for h in ("relu", "tanh", "sigmoid")}
    assert {c["loss"] for c in conv} == {"ce"}
    drop = E.dropout_experiment(synthetic, fast=True, csv_path=tmp_path / "d.csv", **sizes)
    assert len({(c["hidden_units"], c["dropout"]) for c in drop}) == 4
    assert {c["dropout"] for c in drop} == {0.0, 0.5}
    assert (tmp_path / "d.csv").exists()
    rates = E.learning_rate_experiment(synthetic, fast=True, **sizes)
    assert {(c["loss"], c["learning_rate"], c["dropout"]) for c in rates} == {
        (loss, eta, rate) for loss in ("pwe", "ce") for eta in (0.01, 0.1) for rate in (0.0, 0.5)}
    for curves in (conv, drop, rates):
        assert len({c["label"] for c in curves}) == len(curves)
        assert all(c["updates"] == [2, 4] for c in curves)


def test_unknown_size_option_raises(synthetic):
    with pytest.raises(MLNNError, match="max_epochs"):
        E.convergence_experiment(synthetic, fast=True, max_epochs=3)


def test_csv_round_trip(data, tmp_path):
    curves = [E.run_setting(C.Setting(f"s{k}", hidden_units=3 + k, dropout=0.5 * k), data,
                            max_updates=6, eval_every=3, batch_size=32) for k in range(2)]
    for curve in curves:
        curve["experiment"] = "demo"
    path = C.save_csv(curves, tmp_path / "sub" / "c.csv")
    back = C.load_csv(path)
    assert len(back) == 2
    for before, after in zip(curves, back):
        for key in C.SETTING_COLUMNS + C.CURVE_COLUMNS + ("experiment", "dataset"):
            assert after[key] == before[key], key
        assert type(after["hidden_units"]) is int and type(after["dropout"]) is float


def test_load_csv_names_a_missing_column(tmp_path):
    header = ",".join(C.CSV_COLUMNS).replace("hidden_activation", "hidden")
    row = ",".join(["demo", "d", "s", "ce", "tanh", "adagrad", "0.01", "0.9", "0.0", "4",
                    "10", "1", "0.5", "0.4", "0.1", "0.0"])
    path = tmp_path / "other.csv"
    path.write_text(header + "\n" + row + "\n")
    with pytest.raises(MLNNError, match=r"lacks the column\(s\) \['hidden_activation'\]"):
        C.load_csv(path)


@pytest.mark.parametrize("path", sorted((ROOT / "figures").glob("fig*.csv")), ids=lambda p: p.name)
def test_every_stored_curves_file_loads(path):
    curves = C.load_csv(path)
    assert curves and all(len(curve["updates"]) == len(curve["rankloss"]) for curve in curves)


def test_load_csv_errors(tmp_path):
    with pytest.raises(MLNNError, match="no curves file"):
        C.load_csv(tmp_path / "missing.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("experiment,dataset,label\nx,y,z\n")
    with pytest.raises(MLNNError, match="lacks the column"):
        C.load_csv(bad)
    row = ",".join(["demo", "d", "s", "ce", "relu", "adagrad", "0.01", "0.9", "0.0", "4",
                    "1", "1", "0.5", "oops", "0.1", "0.0"])
    bad.write_text(",".join(C.CSV_COLUMNS) + "\n" + row + "\n")
    with pytest.raises(MLNNError, match="line 2"):
        C.load_csv(bad)


def test_real_data_validation_split_sizes(data_dir):
    data = E.prepare_data("reuters21578", max_val=200)
    full = datasets.load("reuters21578")
    n = full.X_train.shape[0]
    assert data["X_train"].shape[0] == n - round(0.2 * n)
    assert data["X_val"].shape[0] == 200
    assert data["Y_val"].shape[1] == full.Y_train.shape[1] == 90


def test_run_or_load_reads_stored_curves_unless_fast_or_rerun(synthetic, tmp_path):
    path = tmp_path / "c.csv"
    sizes = dict(max_updates=4, eval_every=2)
    first = E.run_or_load("dropout", path, fast=True, dataset=synthetic, **sizes)
    assert path.exists()
    stored = C.load_csv(path)
    stored[0]["rankloss"] = [0.123, 0.456]
    C.save_csv(stored, path)
    loaded = E.run_or_load("dropout", path, fast=False, dataset=synthetic, **sizes)
    assert loaded[0]["rankloss"] == [0.123, 0.456]
    rerun = E.run_or_load("dropout", path, fast=True, rerun=True, dataset=synthetic, **sizes)
    assert rerun[0]["rankloss"] == first[0]["rankloss"]
    with pytest.raises(MLNNError, match="unknown experiment"):
        E.run_or_load("nonsense", path)


def test_command_line_runs_an_experiment(tmp_path, capsys):
    from mlnn.cli import main
    out = tmp_path / "d.csv"
    assert main(["experiment", "dropout", "--fast", "--dataset", "synthetic", "--max-updates", "4",
                 "--learning-rate", "0.05", "--out", str(out)]) == 0
    curves = C.load_csv(out)
    assert len(curves) == 4 and {c["learning_rate"] for c in curves} == {0.05}
    assert all(c["updates"][-1] == 4 for c in curves)
    assert main(["experiment", "convergence", "--fast", "--learning-rate", "0.1",
                 "--out", str(out)]) == 2
    assert "dropout experiment only" in capsys.readouterr().err


def test_a_bad_csv_path_fails_before_any_training(synthetic, tmp_path, monkeypatch):
    trained = []
    monkeypatch.setattr(E, "run_setting", lambda *a, **k: trained.append(1))
    for path, message in ((tmp_path / "missing" / "c.csv", "does not exist"),
                          (tmp_path, "is a directory")):
        with pytest.raises(MLNNError, match=f"csv_path: .*{message}"):
            E.dropout_experiment(synthetic, fast=True, csv_path=path, max_updates=2)
    assert trained == []


def test_an_interrupted_experiment_keeps_the_previous_curves(synthetic, tmp_path, monkeypatch):
    path = tmp_path / "d.csv"
    E.dropout_experiment(synthetic, fast=True, csv_path=path, max_updates=2, eval_every=1)
    before = path.read_bytes()

    class Interrupted:                                 # writes a row and a half, then Ctrl-C
        def __init__(self, handle):
            self.handle = handle

        def writerow(self, row):
            self.handle.write("half a row")
            raise KeyboardInterrupt
    monkeypatch.setattr(C.csv, "writer", Interrupted)
    with pytest.raises(KeyboardInterrupt):
        E.dropout_experiment(synthetic, fast=True, csv_path=path, max_updates=2, eval_every=1)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["d.csv"]


@pytest.mark.parametrize("sizes, name", [({"max_updates": 0}, "max_updates"),
                                         ({"eval_every": -1}, "eval_every")])
def test_sizes_are_checked_naming_the_option(synthetic, sizes, name):
    with pytest.raises(MLNNError, match=f"^{name} must be a positive integer"):
        E.convergence_experiment(synthetic, fast=True, **sizes)
