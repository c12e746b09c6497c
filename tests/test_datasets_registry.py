"""load(): names, the Dataset contract, synthetic, seeded splits, the npz cache, statistics."""

import errno
import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import mlnn.datasets as datasets
from mlnn.base.errors import MLNNError, MLNNWarning
from mlnn.datasets import Dataset, load
from mlnn.datasets import cache as cache_entries
from mlnn.datasets import download, registry
from mlnn.datasets.registry import SPECS
from tests.arff_files import write_arff, write_mulan_xml

REQUIRED = ["reuters21578", "delicious", "bibtex", "enron", "medical", "tmc2007-500", "yeast",
            "emotions", "rcv1subset1", "rcv1subset2", "rcv1subset3", "rcv1subset4",
            "rcv1subset5", "synthetic"]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("MLNN_CACHE", str(folder))
    return folder


def _check_contract(d):
    for X, Y in ((d.X_train, d.Y_train), (d.X_test, d.Y_test)):
        assert sp.isspmatrix_csr(X) and X.dtype == np.float64 and X.has_sorted_indices
        assert sp.isspmatrix_csr(Y) and np.all(Y.data == 1)
        assert X.shape[0] == Y.shape[0]
        assert X.shape[1] == len(d.feature_names) and Y.shape[1] == len(d.label_names)
    assert d.X_train.shape[1] == d.X_test.shape[1]
    assert isinstance(d.description, str) and d.description


def test_required_names_are_registered():
    assert set(REQUIRED) <= set(datasets.names())


def test_unknown_name_lists_valid_names():
    with pytest.raises(MLNNError, match="unknown dataset 'nope'.*delicious.*synthetic"):
        load("nope")


def test_synthetic_follows_the_contract():
    d = load("synthetic")
    _check_contract(d)
    assert d.X_train.shape == (400, 500) and d.Y_train.shape == (400, 20)
    assert d.X_test.shape[0] == 200
    norms = np.sqrt(np.asarray(d.X_train.multiply(d.X_train).sum(axis=1)).ravel())
    np.testing.assert_allclose(norms[norms > 0], 1.0)
    stats = d.statistics()
    assert 1.5 < stats["C"] < 2.6 and stats["docs_without_labels_train"] == 0


def test_synthetic_seed_sizes_and_correlation():
    a = load("synthetic", n_train=300, n_test=100, n_features=200, n_labels=12, random_state=3)
    b = load("synthetic", n_train=300, n_test=100, n_features=200, n_labels=12, random_state=3)
    c = load("synthetic", n_train=300, n_test=100, n_features=200, n_labels=12, random_state=4)
    assert (a.X_train != b.X_train).nnz == 0 and (a.Y_test != b.Y_test).nnz == 0
    assert (a.X_train != c.X_train).nnz > 0
    assert a.X_train.shape == (300, 200) and a.Y_train.shape == (300, 12)
    # Correlated labels: co-occurrence differs clearly from independence.
    big = load("synthetic", n_train=3000, n_test=1, n_labels=12, correlation=0.9)
    Y = big.Y_train.toarray().astype(float)
    p = Y.mean(axis=0)
    joint = (Y.T @ Y) / len(Y)
    off = ~np.eye(12, dtype=bool)
    assert np.max(np.abs(joint - np.outer(p, p))[off]) > 0.02
    with pytest.raises(MLNNError, match="n_train"):
        load("synthetic", n_train=0)
    with pytest.raises(MLNNError, match="does not take option"):
        load("synthetic", bogus=1)


def test_statistics_on_a_hand_made_dataset():
    d = Dataset("toy", sp.csr_matrix([[1.0, 0, 2], [0, 0, 0]]), sp.csr_matrix([[1, 0, 0],
                                                                               [0, 0, 0]]),
                sp.csr_matrix([[0, 3.0, 0]]), sp.csr_matrix([[1, 1, 0]]),
                ["a", "b", "c"], ["x", "y", "z"], "toy")
    s = d.statistics()
    assert (s["M"], s["D"], s["L"], s["n_train"], s["n_test"]) == (3, 3, 3, 2, 1)
    assert s["C"] == pytest.approx(1.0) and s["nnz_per_doc"] == pytest.approx(1.0)
    assert s["labels_without_positives"] == 1          # z
    assert s["labels_without_train_positives"] == 2     # y, z
    assert s["labels_without_test_positives"] == 1      # z
    assert (s["docs_without_labels_train"], s["docs_without_labels_test"]) == (1, 0)


def _single_file_dataset(root, n=30):
    rng = np.random.default_rng(0)
    X = sp.random(n, 6, density=0.4, format="csr", random_state=1)
    Y = sp.csr_matrix((rng.random((n, 3)) < 0.4).astype(np.int8))
    folder = root / "stackex" / "derived"
    folder.mkdir(parents=True)
    write_arff(folder / "stackex_chess.arff.gz", X, Y, [f"f{j}" for j in range(6)],
               ["a", "b", "c"])
    write_mulan_xml(folder / "stackex_chess.xml", ["a", "b", "c"])
    return X, Y


def test_seeded_split_and_cache(tmp_path, cache):
    X, Y = _single_file_dataset(tmp_path)
    d = load("stackex_chess", data_dir=tmp_path)
    assert d.info["from_cache"] is False and d.info["cache_written"] is True
    assert d.X_train.shape[0] == 20 and d.X_test.shape[0] == 10
    # The documented rule: rows of a default_rng(0) permutation, first 1/3 test, file order.
    permutation = np.random.default_rng(0).permutation(30)
    train, test = np.sort(permutation[10:]), np.sort(permutation[:10])
    np.testing.assert_array_equal(d.X_test.toarray(), X.toarray()[test])
    np.testing.assert_array_equal(d.X_train.toarray(), X.toarray()[train])
    np.testing.assert_array_equal(d.Y_train.toarray(), Y.toarray()[train])
    again = load("stackex_chess", data_dir=tmp_path)
    assert again.info["from_cache"] is True
    assert (again.X_test != d.X_test).nnz == 0 and again.label_names == d.label_names
    assert again.feature_names == d.feature_names and again.description == d.description
    other = load("stackex_chess", data_dir=tmp_path, random_state=1, train_fraction=0.5)
    assert other.info["from_cache"] is False and other.X_train.shape[0] == 15
    assert len(list(cache.glob("*.npz"))) == 2


def test_unwritable_cache_is_skipped(tmp_path, monkeypatch):
    _single_file_dataset(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("MLNN_CACHE", str(blocker / "cache"))
    d = load("stackex_chess", data_dir=tmp_path)
    assert d.info["cache_written"] is False and d.X_train.shape[0] == 20


def _flip_byte(path, where):
    data = bytearray(path.read_bytes())
    data[where(len(data))] ^= 0xFF
    path.write_bytes(bytes(data))


def _other_file(path):
    np.save(path.with_suffix(".npy"), np.arange(5))
    path.with_suffix(".npy").replace(path)


@pytest.mark.parametrize("damage", [
    lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),        # cut off
    lambda p: p.write_bytes(b""),                                             # empty
    lambda p: _flip_byte(p, lambda n: n // 3),                                # inside the data
    lambda p: _flip_byte(p, lambda n: n - 30),                                # in the directory
    lambda p: _flip_byte(p, lambda n: 0),                                     # in the magic
    _other_file,                                                              # a .npy renamed
], ids=["truncated", "empty", "flipped-data", "flipped-directory", "flipped-magic", "npy"])
def test_a_damaged_cache_entry_is_reported_once_and_rebuilt(tmp_path, cache, damage):
    _single_file_dataset(tmp_path)
    first = load("stackex_chess", data_dir=tmp_path)
    entry = Path(first.info["cache_file"])
    damage(entry)
    with pytest.warns(MLNNWarning, match=r"cached matrices .*stackex_chess-.*\.npz are damaged "
                                         r"\(.*\); rebuilding them") as record:
        rebuilt = load("stackex_chess", data_dir=tmp_path)
    assert len(record) == 1
    assert rebuilt.info["from_cache"] is False and rebuilt.info["cache_written"] is True
    assert (rebuilt.X_train != first.X_train).nnz == 0 and rebuilt.label_names == first.label_names
    with warnings.catch_warnings():
        warnings.simplefilter("error")                                 # the entry is whole again
        assert load("stackex_chess", data_dir=tmp_path).info["from_cache"] is True
    assert sorted(p.name for p in cache.iterdir()) == [entry.name]


def test_a_full_disk_while_caching_leaves_no_entry(tmp_path, cache, monkeypatch):
    _single_file_dataset(tmp_path)

    def full(descriptor):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "fsync", full)
    d = load("stackex_chess", data_dir=tmp_path)
    assert d.info["cache_written"] is False and list(cache.iterdir()) == []


def test_a_data_dir_that_is_a_file_or_a_bad_seed_is_named(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(MLNNError, match=r"data_dir: .*afile is not a directory"):
        load("delicious", data_dir=tmp_path / "afile")
    with pytest.raises(MLNNError, match="synthetic: random_state must be None or an integer"):
        load("synthetic", random_state=-1)


def test_missing_files_name_the_path(tmp_path, cache):
    with pytest.raises(MLNNError) as caught:
        load("delicious", data_dir=tmp_path)
    message = str(caught.value)
    for relative in SPECS["delicious"].files:           # every missing file, at its full path
        assert str(tmp_path / relative) in message
    assert "do not exist; it cannot be downloaded automatically" in message
    assert "https://mulan.sourceforge.net" in message


def _build_toy(root, spec, options):
    """A reader of one file of "row;labels" lines: a new dataset is this and one entry."""
    rows = (Path(root) / spec.files[0]).read_text().split()
    X = sp.csr_matrix(np.eye(len(rows)))
    Y = sp.csr_matrix(np.array([[int(c) for c in row] for row in rows], dtype=np.float64))
    parts = {"X_train": X, "Y_train": Y, "X_test": X[:1], "Y_test": Y[:1]}
    return parts, [f"w{k}" for k in range(len(rows))], ["a", "b"], {}


def test_a_new_reader_is_one_entry(tmp_path, cache, monkeypatch):
    monkeypatch.setitem(SPECS, "toy", registry.Spec(_build_toy, ("toy/rows.txt",),
                                                     description="Toy rows.",
                                                     published="the toy shop"))
    with pytest.raises(MLNNError, match=r"toy/rows.txt, which does not exist; .*the toy shop"):
        load("toy", data_dir=tmp_path)
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "rows.txt").write_text("10 01 11\n")
    first, second = load("toy", data_dir=tmp_path), load("toy", data_dir=tmp_path)
    _check_contract(first)
    assert not first.info["from_cache"] and second.info["from_cache"]
    assert first.info["source_sha256"] == [download.sha256_file(tmp_path / "toy/rows.txt")]
    np.testing.assert_array_equal(second.Y_train.toarray(), [[1, 0], [0, 1], [1, 1]])
    assert first.vectorizer is None and second.label_names == ["a", "b"]


def test_a_missing_pinned_archive_is_not_downloaded_unless_asked(tmp_path, cache):
    with pytest.raises(MLNNError) as caught:
        load("reuters21578", data_dir=tmp_path)
    message = str(caught.value)
    source = datasets.download.SOURCES["reuters21578"][0]
    assert str(tmp_path / "reuters21578.tar.gz") in message and "does not exist" in message
    assert "downloading is turned off" in message and source.url in message
    assert source.sha256 in message and "python -m mlnn data fetch reuters21578" in message
    assert list(tmp_path.iterdir()) == []


def test_data_dir_follows_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("MLNN_DATA", str(tmp_path))
    assert datasets.data_dir() == tmp_path
    monkeypatch.delenv("MLNN_DATA")
    assert datasets.data_dir().name == "mlnn"


@pytest.fixture(scope="module")
def module_cache(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cache")
    old = os.environ.get("MLNN_CACHE")
    os.environ["MLNN_CACHE"] = str(folder)
    yield folder
    if old is None:
        del os.environ["MLNN_CACHE"]
    else:
        os.environ["MLNN_CACHE"] = old


@pytest.mark.parametrize("name", sorted(set(SPECS) - {"synthetic"}))
def test_every_real_dataset_loads(data_dir, module_cache, name):
    d = load(name, data_dir=data_dir)
    _check_contract(d)
    assert d.X_train.shape[0] > 0 and d.X_test.shape[0] > 0


def test_table1_numbers_and_second_load_is_fast(data_dir, module_cache):
    d = load("delicious", data_dir=data_dir)
    s = d.statistics()
    assert (s["n_train"], s["n_test"], s["D"], s["L"]) == (12920, 3185, 500, 983)
    assert s["C"] == pytest.approx(19.02, abs=0.01)  # the paper's Table 1
    r = load("reuters21578", data_dir=data_dir)
    s = r.statistics()
    assert (s["n_test"], s["L"]) == (3019, 90) and s["n_train"] in (7769, 7770)
    assert abs(s["D"] - 18637) / 18637 < 0.05  # the paper's 18,637 features
    assert s["labels_without_train_positives"] == 0 and s["docs_without_labels_train"] == 0
    again = load("reuters21578", data_dir=data_dir)
    assert again.info["from_cache"]
    rcv = load("rcv1subset4", data_dir=data_dir)
    assert rcv.X_train.shape[1] == 47236  # padded to the common feature space by name


def _parts(**changes):
    parts = {"X_train": sp.csr_matrix(np.eye(3, 4)), "Y_train": sp.csr_matrix(np.eye(3, 2)),
             "X_test": sp.csr_matrix(np.eye(2, 4)), "Y_test": sp.csr_matrix(np.eye(2, 2))}
    return {**parts, **{name: sp.csr_matrix(value) for name, value in changes.items()}}


@pytest.mark.parametrize("parts, reason", [
    (_parts(Y_train=np.eye(3, 2) * 2), "Y_train must be a 0/1 label matrix; found the value 2.0"),
    (_parts(Y_test=np.eye(3, 2)), "Y_test has shape (3, 2), expected (2, 2) (documents × labels)"),
    (_parts(X_test=np.eye(2, 5)), "X_test has 5 features (columns), expected 4"),
    (_parts(Y_train=np.eye(2, 2)),
     "Y_train has shape (2, 2), expected (3, 2) (documents × labels)"),
    (_parts(X_train=np.eye(3, 4) * np.inf),
     "X_train contains NaN or infinite values (first at row 0, column 0)"),
])
def test_a_cache_entry_whose_matrices_do_not_fit_together_is_rebuilt(tmp_path, parts, reason):
    """A sealed entry (valid checksum) that is inconsistent is damaged: None and a warning."""
    assert cache_entries.save(tmp_path / "entry.npz", parts, list("abcd"), ["x", "y"], "d")
    with pytest.warns(MLNNWarning, match=re.escape(reason) + r"\); rebuilding them"):
        assert cache_entries.load(tmp_path / "entry.npz") is None
    assert cache_entries.save(tmp_path / "good.npz", _parts(), list("abcd"), ["x", "y"], "d")
    loaded = cache_entries.load(tmp_path / "good.npz")
    assert loaded[1:4] == (list("abcd"), ["x", "y"], "d")


def test_a_mean_over_a_split_without_documents_is_undefined_not_zero():
    s = load("synthetic", n_train=30, n_test=0, n_features=20, n_labels=4).statistics()
    assert s["n_test"] == 0 and np.isnan(s["C_test"])
    assert s["C"] == s["C_train"] > 0 and s["docs_without_labels_test"] == 0
