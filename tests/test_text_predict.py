"""Classifying new text: the vectorizer of a text dataset travels with the dataset (and its cache)
and the model file, reproduces the training features exactly, and ``predict --text`` prints each
document's name, predicted labels and scores."""

import io
import re
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from mlnn.base.errors import MLNNError, ModelFileError
from mlnn.cli import main
from mlnn.datasets import load, registry
from mlnn.datasets.reuters import modapte_split, read_reuters
from mlnn.datasets.text import ANALYZER, STOP_WORDS, TfidfVectorizer, analyze
from mlnn.model.estimator import MultiLabelNN
from mlnn.model.modelfile import read_model_file, write_model_file
from tests.test_first_run import tiny_reuters_archive

SMALL = {"hidden_units": 8, "max_epochs": 3, "learning_rate": 0.1, "random_state": 0,
         "validation_fraction": 0}


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """(Dataset, raw training texts, raw test texts) of a tiny Reuters-21578 archive."""
    monkeypatch.setenv("MLNN_CACHE", str(tmp_path / "cache"))
    data = tmp_path / "data"
    data.mkdir()
    tiny_reuters_archive(data / "reuters21578.tar.gz")
    train, test, _ = modapte_split(read_reuters(data / "reuters21578.tar.gz"))
    return load("reuters21578", data_dir=data), [d.text for d in train], [d.text for d in test]


def dense_tfidf(text, vocabulary, idf, stem=True, stop_words=STOP_WORDS):
    """The literal definition: count each vocabulary term of the analysed text, times its idf,
    divided by the Euclidean norm of the row (a zero row stays zero)."""
    index = {term: j for j, term in enumerate(vocabulary)}
    x = np.zeros(len(vocabulary))
    for term in analyze(text, stop_words=stop_words, stem=stem):
        if term in index:
            x[index[term]] += 1.0
    x *= idf
    norm = np.sqrt(np.sum(x * x))
    return x / norm if norm > 0 else x


def test_the_datasets_vectorizer_gives_back_every_row_of_X(tiny):
    dataset, train, test = tiny
    vectorizer = dataset.vectorizer
    assert vectorizer.vocabulary_ == dataset.feature_names
    assert abs(vectorizer.transform(train) - dataset.X_train).max() <= 1e-12
    assert abs(vectorizer.transform(test) - dataset.X_test).max() <= 1e-12
    for text, row in zip(train, dataset.X_train.toarray()):
        np.testing.assert_allclose(dense_tfidf(text, vectorizer.vocabulary_, vectorizer.idf_),
                                   row, rtol=0, atol=1e-12)


def test_the_vectorizer_read_from_the_cache_is_the_fitted_one(tiny, tmp_path):
    first, train, _ = tiny
    again = load("reuters21578", data_dir=tmp_path / "data")
    assert again.info["from_cache"] and not first.info["from_cache"]
    assert again.vectorizer.vocabulary_ == first.vectorizer.vocabulary_
    np.testing.assert_array_equal(again.vectorizer.idf_, first.vectorizer.idf_)
    assert abs(again.vectorizer.transform(train) - first.X_train).max() <= 1e-12


def test_an_entry_of_another_loader_version_is_never_read(tiny, tmp_path, monkeypatch):
    """Entries written before the idf was stored were made by loader version 2: the loader
    version is part of every cache key, so such an entry is never found, let alone read."""
    first, _, _ = tiny
    monkeypatch.setattr(registry, "LOADER_VERSION", registry.LOADER_VERSION - 1)
    older = load("reuters21578", data_dir=tmp_path / "data")
    assert not older.info["from_cache"] and older.info["cache_file"] != first.info["cache_file"]


@given(st.lists(st.text(alphabet="abcdefghij '.", min_size=0, max_size=60), min_size=1,
                max_size=8), st.booleans(), st.booleans(), st.booleans())
def test_a_vectorizer_state_round_trip_transforms_alike(texts, stem, stop, sublinear):
    vectorizer = TfidfVectorizer(stem=stem, stop_words=STOP_WORDS if stop else None,
                                 sublinear_tf=sublinear).fit(texts)
    settings, arrays = vectorizer.get_state()
    restored = TfidfVectorizer.from_state(settings, arrays)
    assert restored.vocabulary_ == vectorizer.vocabulary_
    assert (restored.transform(texts) != vectorizer.transform(texts)).nnz == 0
    assert settings["analyzer"] == ANALYZER and settings["stem"] == stem


def test_a_state_of_another_analyzer_or_mismatched_arrays_is_refused():
    settings, arrays = TfidfVectorizer().fit(["wheat and corn", "crude oil"]).get_state()
    with pytest.raises(MLNNError, match="text analyzer 'lowercase only' is not this version's"):
        TfidfVectorizer.from_state({**settings, "analyzer": "lowercase only"}, arrays)
    with pytest.raises(MLNNError, match="the vocabulary has 4 terms but idf has 3 values"):
        TfidfVectorizer.from_state(settings, {**arrays, "idf": arrays["idf"][:3]})
    with pytest.raises(MLNNError, match="this TfidfVectorizer is not fitted yet; call fit"):
        TfidfVectorizer().get_state()


def test_a_saved_model_keeps_the_vectorizer_and_reproduces_the_training_rows(tiny, tmp_path):
    dataset, train, _ = tiny
    model = MultiLabelNN(**SMALL).fit(dataset.X_train, dataset.Y_train,
                                      label_names=dataset.label_names,
                                      vectorizer=dataset.vectorizer)
    model.save(tmp_path / "model.npz")
    arrays, meta = read_model_file(tmp_path / "model.npz")
    assert meta["text"]["stem"] is True and meta["text"]["analyzer"] == ANALYZER
    assert {"text/vocabulary", "text/idf", "text/stop_words"} <= set(arrays)
    loaded = MultiLabelNN.load(tmp_path / "model.npz")
    X = loaded.transform_text(train)
    assert abs(X - dataset.X_train).max() <= 1e-12
    np.testing.assert_array_equal(loaded.decision_function(X),
                                  model.decision_function(dataset.X_train))


def test_a_model_without_text_features_refuses_text(tiny, tmp_path):
    dataset, train, _ = tiny
    model = MultiLabelNN(**SMALL).fit(dataset.X_train, dataset.Y_train)
    model.save(tmp_path / "plain.npz")
    for candidate in (model, MultiLabelNN.load(tmp_path / "plain.npz")):
        with pytest.raises(MLNNError, match="not trained on a text dataset"):
            candidate.transform_text(train)
    with_text = MultiLabelNN(**SMALL).fit(dataset.X_train, dataset.Y_train,
                                          vectorizer=dataset.vectorizer)
    with pytest.raises(MLNNError, match="a list of texts, not one string"):
        with_text.transform_text("wheat")


def test_fit_checks_the_vectorizer(tiny):
    dataset, _, _ = tiny
    small = TfidfVectorizer().fit(["only two words"])
    with pytest.raises(MLNNError, match=r"vectorizer has 2 terms but X has \d+ features"):
        MultiLabelNN(**SMALL).fit(dataset.X_train, dataset.Y_train, vectorizer=small)
    with pytest.raises(MLNNError, match="vectorizer must be a fitted"):
        MultiLabelNN(**SMALL).fit(dataset.X_train, dataset.Y_train, vectorizer=TfidfVectorizer())


def test_a_model_file_with_a_forged_vectorizer_is_not_a_model(tiny, tmp_path):
    dataset, _, _ = tiny
    path = tmp_path / "model.npz"
    MultiLabelNN(**SMALL).fit(dataset.X_train, dataset.Y_train,
                              vectorizer=dataset.vectorizer).save(path)
    arrays, meta = read_model_file(path)
    write_model_file(path, {**arrays, "text/idf": arrays["text/idf"][:-1]}, meta)
    with pytest.raises(ModelFileError, match="its array 'text/idf' has shape"):
        MultiLabelNN.load(path)


@pytest.fixture
def trained(tiny, tmp_path, monkeypatch):
    """A model file trained by ``train`` on the tiny archive (MLNN_DATA points at it)."""
    monkeypatch.setenv("MLNN_DATA", str(tmp_path / "data"))
    path = tmp_path / "model.npz"
    assert main(["train", "--dataset", "reuters21578", "--hidden-units", "8", "--epochs", "3",
                 "--learning-rate", "0.1", "--validation-fraction", "0", "--out", str(path),
                 "--quiet"]) == 0
    return path, tiny


def _parse(out):
    """{name: {label: score}} of ``predict --text`` output."""
    result = {}
    for line in out.splitlines():
        name, _, labels = line.partition("\t")
        result[name] = {label: float(score) for label, _, score in
                        (item.rpartition(":") for item in labels.split())}
    return result


def test_predict_text_files_directories_and_stdin(trained, tmp_path, capsys, monkeypatch):
    path, (dataset, train, _) = trained
    capsys.readouterr()
    folder = tmp_path / "news"
    folder.mkdir()
    for i, text in enumerate(train[:3]):
        (folder / f"doc{i}.txt").write_text(text)
    (folder / "notes.md").write_text("not a .txt file")
    single = tmp_path / "single.txt"
    single.write_text(train[3])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(train[4].encode())))
    assert main(["predict", "--model", str(path), "--text", str(folder), str(single), "-"]) == 0
    out = capsys.readouterr().out
    names = [str(folder / f"doc{i}.txt") for i in range(3)] + [str(single), "<stdin>"]
    assert [line.split("\t")[0] for line in out.splitlines()] == names
    model = MultiLabelNN.load(path)
    X = dataset.X_train[:5]
    scores, predicted = model.decision_function(X), sp.csr_matrix(model.predict(X))
    for i, labels in enumerate(_parse(out)[name] for name in names):
        expected = [dataset.label_names[j] for j in predicted[i].indices]
        assert sorted(labels) == sorted(expected)
        for label, score in labels.items():
            assert score == pytest.approx(scores[i, dataset.label_names.index(label)], abs=5e-5)
    assert re.fullmatch(r"[a-z]+:\d\.\d{4}", out.splitlines()[0].split("\t")[1].split()[0])


@pytest.mark.parametrize("argv, message", [
    (["--text", "missing.txt"], "--text: missing.txt does not exist"),
    (["--text", "EMPTY"], "has no .txt files"),
    (["--text", "UTF16"], "is encoded as UTF-16"),
    (["--text", "x.txt", "--input", "x.svm"], "not allowed with argument"),
    ([], "one of the arguments --input --text is required"),
])
def test_predict_text_errors_are_one_line(trained, tmp_path, capsys, monkeypatch, argv, message):
    path, _ = trained
    (tmp_path / "EMPTY").mkdir()
    (tmp_path / "UTF16").write_bytes("wheat prices".encode("utf-16"))
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["predict", "--model", str(path), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_predict_text_with_a_model_of_features_says_so(tiny, tmp_path, capsys):
    dataset, _, _ = tiny
    path = tmp_path / "plain.npz"
    MultiLabelNN(**SMALL).fit(dataset.X_train, dataset.Y_train).save(path)
    (tmp_path / "a.txt").write_text("wheat")
    assert main(["predict", "--model", str(path), "--text", str(tmp_path / "a.txt")]) == 2
    assert "was not trained on a text dataset (it has no vocabulary); give svmlight vectors " \
           "with --input" in capsys.readouterr().err


def test_real_reuters_training_documents_through_a_saved_vectorizer(data_dir, tmp_path):
    """The acceptance check on the real collection: every ModApte training and test document's
    raw text, through the vectorizer saved in a model file, gives its row of X to 1e-12."""
    dataset = load("reuters21578")
    archive = data_dir / "reuters21578.tar.gz"
    if not archive.exists():
        pytest.skip("reuters21578.tar.gz not in MLNN_DATA")
    train, test, _ = modapte_split(read_reuters(archive))
    model = MultiLabelNN(**SMALL).fit(dataset.X_train[:200], dataset.Y_train[:200],
                                      vectorizer=dataset.vectorizer)
    model.save(tmp_path / "model.npz")
    loaded = MultiLabelNN.load(tmp_path / "model.npz")
    assert abs(loaded.transform_text([d.text for d in train]) - dataset.X_train).max() <= 1e-12
    assert abs(loaded.transform_text([d.text for d in test]) - dataset.X_test).max() <= 1e-12
