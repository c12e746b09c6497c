"""Model files as arrays <-> .npz: round trip, header entries, checksum."""

import numpy as np
import pytest

from mlnn.errors import ModelFileError
from mlnn.modelfile import checksum, names_array, read_model_file, write_model_file


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
