"""Model files as arrays <-> .npz: round trip, header entries, checksum."""

import numpy as np
import pytest

from mlnn.base.errors import MLNNError, ModelFileError
from mlnn.model.modelfile import (checksum, is_model_file, loading, names_array, read_model_file,
                                  write_model_file)


def test_arrays_and_meta_round_trip(tmp_path):
    arrays = {"W1": np.arange(6, dtype=np.float32).reshape(3, 2), "names": names_array(["a", "b"]),
              "empty": names_array(None)}
    meta = {"params": {"hidden_units": 2}, "history": [{"epoch": 1, "rankloss": np.float64(0.5)}]}
    write_model_file(tmp_path / "m.npz", arrays, meta)
    back, back_meta = read_model_file(tmp_path / "m.npz")
    assert set(back) == set(arrays)
    for name in arrays:
        np.testing.assert_array_equal(back[name], arrays[name])
        assert back[name].dtype == arrays[name].dtype
    assert back_meta == {"params": {"hidden_units": 2}, "history": [{"epoch": 1, "rankloss": 0.5}]}
    assert not (tmp_path / "m.npz.part").exists()


def test_header_names_are_reserved(tmp_path):
    with pytest.raises(ModelFileError, match="reserved"):
        write_model_file(tmp_path / "m.npz", {"meta": np.zeros(1)}, {})


def test_checksum_depends_on_name_dtype_shape_and_bytes():
    base = {"a": np.zeros((2, 3))}
    variants = [{"b": np.zeros((2, 3))}, {"a": np.zeros((2, 3), np.float32)},
                {"a": np.zeros((3, 2))}, {"a": np.ones((2, 3))}]
    assert len({checksum(base)} | {checksum(v) for v in variants}) == 5


def test_a_changed_entry_fails_the_checksum(tmp_path):
    write_model_file(tmp_path / "m.npz", {"W1": np.ones(3)}, {"x": 1})
    with np.load(tmp_path / "m.npz", allow_pickle=False) as npz:
        entries = {name: npz[name] for name in npz.files}
    entries["W1"] = entries["W1"] * 2
    np.savez(tmp_path / "bad.npz", **entries)
    with pytest.raises(ModelFileError, match="fails its checksum"):
        read_model_file(tmp_path / "bad.npz")


def _entries(path):
    with np.load(path, allow_pickle=False) as npz:
        return {name: npz[name] for name in npz.files}


def _resealed(entries):
    """The entries with a checksum recomputed over the others (as a careful forger would)."""
    entries = dict(entries)
    entries.pop("checksum")
    entries["checksum"] = np.array(checksum(entries))
    return entries


@pytest.mark.parametrize("change, message", [
    (lambda e: dict(e, meta=np.array("{not json")), "'meta' entry is not valid JSON"),
    (lambda e: dict(e, meta=np.array("[1, 2]")), "'meta' entry is not a JSON object"),
    (lambda e: dict(e, format_version=np.array("1")), "'format_version' entry is a <U1 array"),
    (lambda e: dict(e, format_version=np.array([1, 1])), "'format_version' entry is a int"),
    (lambda e: dict(e, format=np.array(7)), "'format' entry is a int64 array"),
    (lambda e: dict(e, format=np.array("other")), "its format is 'other'"),
    (lambda e: {k: v for k, v in e.items() if k != "meta"}, "it has no 'meta' entry"),
])
def test_edited_headers_with_a_recomputed_checksum_are_not_model_files(tmp_path, change,
                                                                       message):
    write_model_file(tmp_path / "m.npz", {"W1": np.ones(3)}, {"x": 1})
    entries = change(_entries(tmp_path / "m.npz"))
    if "checksum" in entries and "meta" in entries:
        entries = _resealed(entries)
    np.savez(tmp_path / "bad.npz", **entries)
    with pytest.raises(ModelFileError, match="not an mlnn model file: .*bad.npz: .*" + message):
        read_model_file(tmp_path / "bad.npz")


def test_a_npy_renamed_npz_and_other_files_are_not_model_files(tmp_path):
    np.save(tmp_path / "array.npy", np.arange(3))
    (tmp_path / "array.npy").rename(tmp_path / "array.npz")
    with pytest.raises(ModelFileError, match="array.npz: it is a single NumPy array"):
        read_model_file(tmp_path / "array.npz")
    (tmp_path / "text.npz").write_text("hello")
    with pytest.raises(ModelFileError, match="text.npz: it is not an .npz"):
        read_model_file(tmp_path / "text.npz")
    with pytest.raises(ModelFileError, match="is a directory"):
        read_model_file(tmp_path)


def test_object_arrays_are_refused_without_numpys_pickle_advice(tmp_path):
    np.savez(tmp_path / "objects.npz", W1=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ModelFileError) as error:
        read_model_file(tmp_path / "objects.npz")
    assert "it holds Python objects" in str(error.value)
    assert "allow_pickle" not in str(error.value)


@pytest.mark.parametrize("failure, message", [
    (KeyError("fitted"), "the entry 'fitted' is missing"),
    (TypeError("int() argument must be a string"), "TypeError: int\\(\\) argument"),
    (MLNNError("hidden_units must be a positive integer"), "its content is inconsistent: hidden"),
])
def test_loading_reports_what_the_rebuild_lacks(failure, message):
    with pytest.raises(ModelFileError, match=f"not an mlnn model file: m.npz: {message}"):
        with loading("m.npz"):
            raise failure


def test_a_failed_write_keeps_the_previous_file(tmp_path, monkeypatch):
    write_model_file(tmp_path / "m.npz", {"W1": np.ones(3)}, {"x": 1})
    before = (tmp_path / "m.npz").read_bytes()
    monkeypatch.setattr(np, "savez", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        write_model_file(tmp_path / "m.npz", {"W1": np.zeros(3)}, {"x": 2})
    assert (tmp_path / "m.npz").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]


def test_is_model_file_looks_at_the_header_entries_only(tmp_path):
    write_model_file(tmp_path / "m.npz", {"W1": np.ones(3)}, {"x": 1})
    np.savez(tmp_path / "other.npz", W1=np.ones(3))
    (tmp_path / "text.npz").write_text("x")
    assert is_model_file(tmp_path / "m.npz")
    assert not any(is_model_file(tmp_path / name) for name in ("other.npz", "text.npz", "none"))
