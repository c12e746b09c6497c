"""The bench command: a fast smoke test on the small synthetic dataset (no timed assertions)."""

import json
import re

import numpy as np
import pytest

from mlnn.cli import main
from mlnn.cli.bench import format_report
from mlnn.tools.bench import (PHASE_ORDER, PRODUCTS, Stopwatch, benchmark_products,
                              benchmark_pwe_delta, nbytes)

SMALL = ["bench", "--dataset", "synthetic", "--hidden-units", "8", "--epochs", "2",
         "--pwe-labels", "4,12"]


def test_bench_json_has_the_promised_fields(capsys):
    assert main(SMALL + ["--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {"seconds_per_epoch", "docs_per_second", "peak_rss_mb"} <= set(result)
    assert len(result["epoch_seconds"]) == 2
    assert result["seconds_per_epoch"] > 0
    assert result["docs_per_second"] == pytest.approx(result["n_documents"]
                                                      / result["seconds_per_epoch"])
    assert set(result["breakdown_seconds"]) == set(PHASE_ORDER) | {"other"}
    assert all(result["breakdown_seconds"][phase] > 0 for phase in PHASE_ORDER)
    # the synthetic training split: 400 documents, 500 features, 20 labels
    assert (result["n_documents"], result["n_features"], result["n_labels"]) == (400, 500, 20)
    # W1 500×8, b1 8, W2 8×20, b2 20 in float32, and AdaGrad keeps one array of each size
    parameters = 4 * (500 * 8 + 8 + 8 * 20 + 20)
    assert result["footprint_mb"]["parameters"] == pytest.approx(parameters / 2**20)
    assert result["footprint_mb"]["optimizer_state"] == pytest.approx(parameters / 2**20)
    assert result["peak_rss_mb"] > result["footprint_mb"]["total"]
    assert [row["labels"] for row in result["pwe_delta"]] == [4, 12]
    assert result["method"] == "NN_AD" and result["dtype"] == "float32"
    assert set(result["floor"]["products"]) == set(PRODUCTS)
    assert result["floor_ratio"] == pytest.approx(result["seconds_per_epoch"]
                                                  / result["floor"]["total"])
    assert result["cpu_floor_ratio"] == pytest.approx(result["cpu_seconds_per_epoch"]
                                                      / result["floor"]["cpu_total"])
    assert 0 < result["cpu_seconds_per_epoch"] and 0 < result["floor"]["cpu_total"]


def test_bench_text_report_for_a_pwe_method_in_float64(capsys):
    assert main(SMALL + ["--method", "bpmll-tad", "--dtype", "float64", "--warmup", "0",
                         "--max-documents", "100", "--pwe-labels", "none"]) == 0
    out = capsys.readouterr().out
    assert "BP-MLL_TAD on synthetic: 100 documents" in out
    assert "float64" in out and "seconds per epoch (median)" in out
    assert "optimizer update (AdaGrad)" in out and "PWE δ2" not in out
    assert re.search(r"the five products alone .*: [0-9.]+ s \(X W1 [0-9.]+, .*hᵀ δ2 [0-9.]+\); "
                     r"the epoch takes [0-9.]+× that floor \(CPU time: [0-9.]+ s, [0-9.]+×\)", out)


@pytest.mark.parametrize("extra, message", [
    (["--epochs", "0"], "--epochs must be a positive integer"),
    (["--pwe-labels", "10,x"], "--pwe-labels must be comma-separated integers"),
    (["--pwe-labels", "1"], "at least 2 labels"),
    (["--pwe-labels", ""], "--pwe-labels must be comma-separated integers, got ''"),
    (["--pwe-labels", " "], "--pwe-labels must be comma-separated integers, got ' '"),
    (["--option", "n_train"], "is not KEY=VALUE"),
    (["-o", "n_train"], "is not KEY=VALUE"),
])
def test_bad_options_are_one_line_errors(capsys, extra, message):
    assert main(SMALL + extra) == 2
    assert message in capsys.readouterr().err


SVM = ["bench", "--svm", "--dataset", "synthetic", "--max-documents", "120", "--repeats", "1",
       "--C-values", "1,0.1"]


def test_bench_svm_json_reports_every_solver_and_c_with_the_objective_and_machine(capsys):
    assert main(SVM + ["--solvers", "tron,tron-cold", "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["dataset"] == "synthetic" and result["n_documents"] == 120
    assert [(row["solver"], row["C"]) for row in result["rows"]] == [
        ("tron", 0.1), ("tron", 1.0), ("tron-cold", 0.1), ("tron-cold", 1.0)]
    assert all(row["seconds"] > 0 and row["objective"] > 0 for row in result["rows"])
    assert {"cores", "numpy", "scipy"} <= set(result["machine"])
    assert result["ratios"] == result["cold_ratios"] == {}   # liblinear was not asked for
    assert "tron-cold  C=1" in captured.err  # one progress line per solver and C, on stderr


def test_bench_svm_json_keys_the_ratios_to_liblinear_by_c(capsys):
    pytest.importorskip("sklearn")
    assert main(SVM + ["--solvers", "tron,tron-cold,liblinear-primal", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    seconds = {(row["solver"], row["C"]): row["seconds"] for row in result["rows"]}
    for key, solver in (("ratios", "tron"), ("cold_ratios", "tron-cold")):
        assert set(result[key]) == {"0.1", "1"}             # one repeat: the ratio of the runs
        assert result[key]["0.1"] == pytest.approx(
            seconds[solver, 0.1] / seconds["liblinear-primal", 0.1], rel=1e-12)


def test_bench_svm_text_report_is_a_table(capsys):
    assert main(SVM + ["--solvers", "tron", "--tol", "0.001", "--bias", "2"]) == 0
    out = capsys.readouterr().out
    assert "120 documents × 500 features, 20 labels" in out and "tol 0.001" in out
    assert "| C | tron s | tron objective |" in out and "\n| 0.1 | " in out


@pytest.mark.parametrize("extra, message", [
    (["--solvers", "foo"], "unknown solver 'foo'"),
    (["--C-values", "1,x"], "--C-values must be comma-separated numbers"),
    (["--C-values", "-1"], "C_values entry"),
    (["--repeats", "0"], "repeats"),
    (["--max-documents", "0"], "--max-documents must be a positive integer"),
])
def test_bench_svm_bad_options_are_one_line_errors(capsys, extra, message):
    assert main(SVM + extra) == 2
    assert message in capsys.readouterr().err


def test_format_report_lists_every_phase():
    result = {"method": "NN_A", "dataset": "d", "n_documents": 10, "n_features": 5,
              "nnz_per_document": 2.0, "n_labels": 3, "batch_size": 4, "hidden_units": 2,
              "dtype": "float32", "learning_rate": 0.1, "warmup": 0, "epochs": 1,
              "machine": {"cores": 1, "cpu": "c", "python": "3", "numpy": "n", "scipy": "s",
                          "blas": "b"},
              "epoch_seconds": [2.0], "seconds_per_epoch": 2.0, "docs_per_second": 5.0,
              "breakdown_seconds": {"forward": 0.5, "loss": 0.25, "backward": 0.5,
                                    "optimizer": 0.5, "other": 0.25},
              "peak_rss_mb": 100.0, "peak_rss_ratio": 2.0,
              "footprint_mb": {"data": 10.0, "parameters": 20.0, "optimizer_state": 20.0,
                               "total": 50.0},
              "floor": {"products": dict(zip(PRODUCTS, (0.1, 0.2, 0.3, 0.05, 0.35))),
                        "total": 1.0, "cpu_total": 0.9}, "floor_ratio": 2.0,
              "cpu_seconds_per_epoch": 1.8, "cpu_floor_ratio": 2.0,
              "pwe_delta": [{"labels": 10, "relevant": 1, "pairwise_seconds": 0.002,
                             "factorised_seconds": 0.001, "ratio": 2.0}]}
    report = format_report(result)
    assert re.search(r"forward \(X W1, h, z2, o\) +0\.500 s +25\.0 %", report)
    assert re.search(r"other \(minibatches, masks, bookkeeping\) +0\.250 s +12\.5 %", report)
    assert "= 50.0 MiB (peak / that = 2.00)" in report
    assert ("the five products alone (median of 1 epochs): 1.000 s (X W1 0.100, h W2 0.200, "
            "δ2 W2ᵀ 0.300, Xᵀ δ1 0.050, hᵀ δ2 0.350); the epoch takes 2.00× that floor (CPU time: "
            "0.900 s, 2.00×)") in report
    assert "seconds per epoch (median): 2.000 (CPU 1.800)" in report
    assert re.search(r"\n +10 +1 +2\.000 +1\.000 +2\.0$", report)


def test_stopwatch_times_only_the_chosen_methods():
    class Target:
        size = 3

        def work(self, x):
            return 2 * x

        def other(self):
            return "untimed"

    totals = {"work": 0.0}
    proxy = Stopwatch(Target(), {"work": "work"}, totals)
    assert proxy.work(4) == 8 and proxy.other() == "untimed" and proxy.size == 3
    assert totals["work"] > 0 and set(totals) == {"work"}


def test_products_floor_times_every_product_over_every_minibatch(monkeypatch):
    import scipy.sparse as sp
    from mlnn.tools import bench
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.random((10, 7)) * (rng.random((10, 7)) < 0.5))
    present_columns, batches = bench._present_columns, []

    def recording(X_b):
        batches.append(X_b.shape)
        return present_columns(X_b)
    monkeypatch.setattr(bench, "_present_columns", recording)
    result = benchmark_products(X, n_labels=3, hidden_units=4, batch_size=4, epochs=2)
    assert batches == [(4, 7), (4, 7), (2, 7)]      # minibatches of 4, 4 and 2 documents
    assert set(result["products"]) == set(PRODUCTS)
    assert all(seconds > 0 for seconds in result["products"].values())
    assert result["total"] >= max(result["products"].values())


def test_products_floor_restricts_X_to_the_columns_present():
    import scipy.sparse as sp
    from mlnn.tools.bench import _present_columns
    X = sp.csr_matrix(np.array([[0, 1.0, 0, 3.0], [2.0, 0, 0, 0]]))
    assert _present_columns(X).toarray().tolist() == [[0, 1.0, 3.0], [2.0, 0, 0]]


def test_pwe_delta_timing_rows():
    rows = benchmark_pwe_delta((5, 50), n_documents=3, density=0.1, repeats=1)
    assert [(row["labels"], row["relevant"]) for row in rows] == [(5, 1), (50, 5)]
    assert all(row["pairwise_seconds"] > 0 and row["factorised_seconds"] > 0 for row in rows)


def test_nbytes_counts_csr_parts_and_arrays():
    import scipy.sparse as sp
    X = sp.csr_matrix(np.eye(3, dtype=np.float32))
    assert nbytes(X) == 3 * 4 + X.indices.nbytes + X.indptr.nbytes
    assert nbytes(np.zeros((2, 5), np.float64), X) == 80 + nbytes(X)


def test_benchmark_training_rejects_an_unknown_hyper_parameter():
    from mlnn.base.errors import MLNNError
    from mlnn.tools.bench import benchmark_training
    with pytest.raises(MLNNError, match="unknown hyper-parameter 'hiden_units'"):
        benchmark_training(np.eye(3), np.eye(3), epochs=1, warmup=0, hiden_units=4)


def test_benchmark_training_uses_every_hyper_parameter_it_is_given(monkeypatch):
    """Each hyper-parameter of the network, loss and rule reaches what is built (none dropped);
    one a timed run cannot use is refused."""
    from mlnn.base.errors import MLNNError
    from mlnn.tools import bench
    built = {}
    real = bench.build

    def spy(D, L, **params):
        built.update(params)
        return real(D, L, **params)
    monkeypatch.setattr(bench, "build", spy)
    given = {"weight_decay": 0.01, "momentum": 0.5, "optimizer": "momentum", "nesterov": True,
             "loss": "pwe", "loss_options": None, "hidden_units": 3, "init": "glorot"}
    Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]])
    bench.benchmark_training(np.eye(3), Y, epochs=1, warmup=0, **given)
    assert {name: built[name] for name in given} == given
    with pytest.raises(MLNNError, match="'patience' has no effect"):
        bench.benchmark_training(np.eye(3), Y, epochs=1, warmup=0, patience=3)
