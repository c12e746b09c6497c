"""The seal of model files and cached matrices (:func:`mlnn.base.fileio.arrays_digest`,
:func:`mlnn.base.fileio.read_npz`, :mod:`mlnn.model.modelfile`): the checksum covers each
entry's name, dtype, shape and bytes, each on its own, whatever the order the entries were
added or stored in; complex, object and wrong-length arrays are refused naming the file and
the array."""

import io
import itertools
import pickle
import zipfile

import numpy as np
import pytest

from mlnn.base.errors import ModelFileError
from mlnn.base.fileio import ArchiveError, arrays_digest, read_npz
from mlnn.model.estimator import MultiLabelNN
from mlnn.model.modelfile import read_model_file, write_model_file

BASE = np.zeros(6, dtype=np.int64)

#: Entries that differ from {"W": BASE} in one part only: the other three are the same.
ONE_PART_CHANGED = {
    "name": {"V": BASE},
    "dtype": {"W": np.zeros(6, dtype=np.float64)},          # the same 48 zero bytes
    "byte order": {"W": np.zeros(6, dtype=">i8")},
    "shape": {"W": np.zeros((2, 3), dtype=np.int64)},
    "bytes": {"W": np.arange(6, dtype=np.int64)},
}


@pytest.mark.parametrize("part", list(ONE_PART_CHANGED))
def test_the_checksum_covers_each_part_of_an_entry_on_its_own(part):
    (name, array), = ONE_PART_CHANGED[part].items()
    same = {"name": name == "W", "dtype": array.dtype == BASE.dtype,
            "shape": array.shape == BASE.shape, "bytes": array.tobytes() == BASE.tobytes()}
    assert sum(same.values()) == 3, same                 # one part changed, the others kept
    assert arrays_digest(ONE_PART_CHANGED[part]) != arrays_digest({"W": BASE})


def test_the_checksum_is_that_of_the_entries_not_of_their_order():
    entries = {"W1": np.arange(6.0).reshape(2, 3), "b1": np.ones(3, np.float32),
               "names": np.array(["a", "b"]), "n": np.array(7)}
    digests = {arrays_digest(dict(order)) for order in itertools.permutations(entries.items())}
    assert len(digests) == 1
    assert digests != {arrays_digest(dict(entries, n=np.array(8)))}


def _entries(path):
    with np.load(path, allow_pickle=False) as npz:
        return {name: npz[name] for name in npz.files}


def _archive(path, members):
    """An .npz of ``members`` ({name: .npy bytes}) stored in the given order."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, raw in members.items():
            archive.writestr(f"{name}.npy", raw)


def _npy(array, allow_pickle=False):
    """The bytes of ``array`` as a .npy member."""
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def test_a_model_file_stored_in_another_member_order_passes_its_checksum(tmp_path):
    arrays = {"A": np.arange(4.0), "B": np.array(["x", "y"]), "C": np.eye(2, dtype=np.float32)}
    write_model_file(tmp_path / "m.npz", arrays, {"x": 1})
    entries = _entries(tmp_path / "m.npz")
    _archive(tmp_path / "reversed.npz",
             {name: _npy(entries[name]) for name in reversed(list(entries))})
    with zipfile.ZipFile(tmp_path / "reversed.npz") as archive:
        assert archive.namelist()[0] == "checksum.npy"
    back, meta = read_model_file(tmp_path / "reversed.npz")
    assert meta == {"x": 1} and set(back) == set(arrays)
    for name, array in arrays.items():
        np.testing.assert_array_equal(back[name], array)


def _resealed(entries):
    """The entries with the checksum recomputed over the others (as a careful forger would)."""
    entries = {name: value for name, value in entries.items() if name != "checksum"}
    return dict(entries, checksum=np.array(arrays_digest(entries)))


def _save_members(path, entries, raw=None):
    """An .npz of ``entries`` (arrays), with ``raw`` ({name: .npy bytes}) in place of some."""
    members = {name: _npy(array) for name, array in entries.items()}
    members.update(raw or {})
    _archive(path, members)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_read_npz_refuses_a_complex_array_naming_it(tmp_path, dtype):
    _save_members(tmp_path / "c.npz", {"real": np.ones(2), "W1": np.ones(2, dtype=dtype)})
    with pytest.raises(ArchiveError, match=f"the entry 'W1' has the dtype {np.dtype(dtype)}, "
                                           "not a plain number or string type"):
        read_npz(tmp_path / "c.npz")


class _Trap:
    """Unpickling it creates the file ``path``: proof that a reader unpickled."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return open, (self.path, "w")


def test_an_object_array_is_refused_naming_it_and_never_unpickled(tmp_path):
    trap = tmp_path / "unpickled"
    array = np.array([_Trap(trap), None], dtype=object)
    pickle.loads(pickle.dumps(_Trap(trap))).close()
    assert trap.exists()                                  # the trap works
    trap.unlink()
    _save_members(tmp_path / "o.npz", {"b1": np.ones(2)},
                  raw={"label_names": _npy(array, allow_pickle=True)})
    with pytest.raises(ArchiveError) as error:
        read_npz(tmp_path / "o.npz")
    assert "Python objects" in str(error.value) and "'label_names'" in str(error.value)
    assert not trap.exists()


# ------------------------------------------------------------------------------------------
# a model file re-sealed with a valid checksum: its arrays are still checked, each by name

@pytest.fixture(scope="module")
def text_entries(text_model, tmp_path_factory):
    """The entries of the file of a model trained on text (its vectorizer stored with it)."""
    path = tmp_path_factory.mktemp("seal") / "text.npz"
    text_model.save(path)
    return _entries(path)


def _set(name, make):
    return lambda entries: dict(entries, **{name: make(entries[name])})


def _longer(array):
    return np.append(array, array[:1])


#: Forgeries of a text model's file (re-sealed), and what the refusal must say about the array.
FORGERIES = {
    "an idf vector one longer": (_set("text/idf", _longer), "'text/idf' has shape"),
    "an idf vector one shorter": (_set("text/idf", lambda a: a[:-1]), "'text/idf' has shape"),
    "a vocabulary and idf one longer than W1": (
        lambda e: dict(e, **{"text/idf": _longer(e["text/idf"]),
                             "text/vocabulary": np.append(e["text/vocabulary"], "zzz")}),
        "'text/vocabulary' has shape"),
    "an idf matrix": (_set("text/idf", lambda a: a[None, :]), "'text/idf' has shape (1, "),
    "an idf of strings": (_set("text/idf", lambda a: a.astype(str)),
                          "'text/idf' has dtype <U"),
    "a NaN idf": (_set("text/idf", lambda a: np.where(np.arange(a.size) == 1, np.nan, a)),
                  "'text/idf' holds a non-finite value (nan at index (1,))"),
    "a complex idf": (_set("text/idf", lambda a: a.astype(np.complex128)),
                      "the entry 'text/idf' has the dtype complex128"),
    "a complex W1": (_set("W1", lambda a: a.astype(np.complex64)),
                     "the entry 'W1' has the dtype complex64"),
    "a vocabulary of numbers": (_set("text/vocabulary", lambda a: np.arange(a.size)),
                                "'text/vocabulary' has dtype int64, expected strings"),
    "stop words as a matrix": (_set("text/stop_words", lambda a: a.reshape(1, -1)),
                               "'text/stop_words' has shape (1, "),
}


@pytest.mark.parametrize("forgery", list(FORGERIES))
def test_a_resealed_array_of_the_wrong_kind_or_length_is_refused_naming_file_and_array(
        text_entries, tmp_path, forgery):
    change, message = FORGERIES[forgery]
    path = tmp_path / "forged.npz"
    _save_members(path, _resealed(change(dict(text_entries))))
    with pytest.raises(ModelFileError) as error:
        MultiLabelNN.load(path)
    assert message in str(error.value)
    assert str(path) in str(error.value)


def test_an_object_entry_in_a_model_file_is_refused_naming_file_and_array(text_entries,
                                                                          tmp_path):
    path = tmp_path / "objects.npz"
    raw = {"text/vocabulary": _npy(text_entries["text/vocabulary"].astype(object),
                                   allow_pickle=True)}
    _save_members(path, _resealed(text_entries), raw=raw)
    with pytest.raises(ModelFileError) as error:
        MultiLabelNN.load(path)
    assert str(path) in str(error.value) and "'text/vocabulary'" in str(error.value)
    assert "Python objects" in str(error.value) and "allow_pickle" not in str(error.value)


def test_the_unforged_text_model_loads(text_entries, tmp_path):
    path = tmp_path / "text.npz"
    _save_members(path, text_entries)
    model = MultiLabelNN.load(path)
    assert len(model.vectorizer_.idf_) == model.network_.params["W1"].shape[0]
