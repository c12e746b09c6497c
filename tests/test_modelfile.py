"""Model files as arrays <-> .npz: round trip, header entries, checksum, and forged files
(re-sealed with a valid checksum, or with array headers that declare more than the file holds)."""

import io
import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from mlnn.base.errors import MLNNError, ModelFileError
from mlnn.cli import main
from mlnn.datasets import load
from mlnn.model.estimator import MultiLabelNN
from mlnn.base.fileio import arrays_digest as checksum
from mlnn.model.modelfile import is_model_file, loading, read_model_file, write_model_file


def test_arrays_and_meta_round_trip(tmp_path):
    arrays = {"A": np.arange(6, dtype=np.float32).reshape(3, 2), "names": np.array(["a", "b"]),
              "empty": np.array([], dtype=str)}
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


# ------------------------------------------------------------------------------------------
# forged model files: re-sealed with a valid checksum, they must still be refused by name


@pytest.fixture(scope="module")
def model_entries(tmp_path_factory):
    """The entries of a small fitted model's file (labels and features named)."""
    rng = np.random.default_rng(0)
    X = sp.random(80, 12, density=0.4, random_state=0, format="csr")
    Y = (rng.random((80, 5)) < 0.4).astype(np.int8)
    Y[0] = 1 - Y[0]
    model = MultiLabelNN(hidden_units=6, max_epochs=2, random_state=0)
    model.fit(X, Y, label_names=[f"l{j}" for j in range(5)],
              feature_names=[f"f{i}" for i in range(12)])
    path = tmp_path_factory.mktemp("forged") / "model.npz"
    model.save(path)
    return _entries(path)


def _edit_meta(edit):
    def change(entries):
        meta = json.loads(str(entries["meta"]))
        edit(meta)
        return dict(entries, meta=np.array(json.dumps(meta)))
    return change


def _set(name, make):
    return lambda e: dict(e, **{name: make(e[name])})


def _nan_at(array, value=np.nan):
    array = array.copy()
    array.flat[array.size // 2] = value
    return array


FORGERIES = {
    "label names shorter than the outputs": (_set("label_names", lambda a: a[:-1]),
                                             "'label_names' has shape (4,), expected (0,) or (5,)"),
    "label names as numbers": (_set("label_names", lambda a: np.arange(5)),
                               "'label_names' has dtype int64, expected strings"),
    "feature names of another width": (_set("feature_names", lambda a: a[:3]),
                                       "'feature_names' has shape (3,)"),
    "integer weights": (_set("W1", lambda a: a.astype(np.int64)), "'W1' has dtype int64"),
    "weights in another precision": (_set("W2", lambda a: a.astype(np.float64)),
                                     "'W2' has dtype float64, but the header says the model "
                                     "computes in float32"),
    "a NaN weight": (_set("W2", _nan_at), "'W2' holds a non-finite value (nan at index"),
    "an infinite bias": (_set("b1", lambda a: _nan_at(a, np.inf)), "'b1' holds a non-finite"),
    "threshold coefficients of the wrong length": (
        _set("threshold_coef", lambda a: np.append(a, 1.0)), "'threshold_coef' has shape (13,)"),
    "a NaN threshold coefficient": (_set("threshold_coef", _nan_at), "'threshold_coef' holds"),
    "W2 with another number of hidden units": (_set("W2", lambda a: np.vstack([a, a[:1]])),
                                               "'W2' has shape (7, 5), expected (6, 5)"),
    "b2 of another length": (_set("b2", lambda a: a[:-1]), "'b2' has shape (4,)"),
    "a 3-D W1": (_set("W1", lambda a: a[None]), "'W1' has shape (1, 12, 6), expected a 2-D"),
    "an empty network": (lambda e: dict(e, W1=e["W1"][:, :0], b1=e["b1"][:0], W2=e["W2"][:0]),
                         "make an empty network"),
    "optimizer state, which a model file does not keep": (
        lambda e: dict(e, **{"optimizer/W1/sum_squares": np.zeros((12, 6), np.float32)}),
        "'optimizer/W1/sum_squares' is not an entry of a model file"),
    "a label dtype that is not a number": (_edit_meta(lambda m: m.update(label_dtype="<U3")),
                                           "label_dtype '<U3' is not the name of a bool"),
    "a label dtype that is no dtype": (_edit_meta(lambda m: m.update(label_dtype=[1])),
                                       "label_dtype [1] is not the name"),
    "an unknown entry": (lambda e: dict(e, payload=np.zeros(3)),
                         "'payload' is not an entry of a model file"),
    "a header with another number of labels": (
        _edit_meta(lambda m: m["fitted"].update(n_labels_=6)), "header's n_labels_ is 6"),
    "a header with other hidden units": (
        _edit_meta(lambda m: m["params"].update(hidden_units=7)), "hidden_units is 7"),
    "a header with another precision": (_edit_meta(lambda m: m["params"].update(dtype="float64")),
                                        "'W1' has dtype float32, but the header says"),
    "a NaN threshold intercept": (
        _edit_meta(lambda m: m["thresholds"].update(intercept=float("nan"))),
        "with the intercept nan"),
    "a header with another threshold width": (
        _edit_meta(lambda m: m["thresholds"].update(n_features_in=3)),
        "'threshold_coef' must have 12 entries"),
}


@pytest.mark.parametrize("forgery", list(FORGERIES))
def test_a_forged_model_with_a_valid_checksum_is_refused_naming_the_file_and_array(
        model_entries, tmp_path, forgery, capsys):
    change, message = FORGERIES[forgery]
    np.savez(tmp_path / "forged.npz", **_resealed(change(dict(model_entries))))
    with pytest.raises(ModelFileError) as error:
        MultiLabelNN.load(tmp_path / "forged.npz")
    assert message in str(error.value)
    assert str(tmp_path / "forged.npz") in str(error.value)
    (tmp_path / "docs.svm").write_text("1 12 5\n0 0:1 3:0.5\n")
    for argv in (["predict", "--model", str(tmp_path / "forged.npz"), "--input",
                  str(tmp_path / "docs.svm")],
                 ["evaluate", "--model", str(tmp_path / "forged.npz"), "--dataset",
                  "synthetic", "-o", "n_features=12", "-o", "n_labels=5"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err == f"mlnn: error: {error.value}\n"         # one line, the same message


def test_the_unforged_entries_load_and_predict(model_entries, tmp_path):
    np.savez(tmp_path / "model.npz", **model_entries)
    model = MultiLabelNN.load(tmp_path / "model.npz")
    assert model.predict(np.ones((2, 12))).shape == (2, 5)


def test_a_pwe_model_with_its_fixed_threshold_0_round_trips(tmp_path):
    """PWE's fixed threshold is 0 (tanh outputs): a falsy value the file must keep as fixed."""
    rng = np.random.default_rng(1)
    X = sp.random(60, 10, density=0.4, random_state=1, format="csr")
    Y = (rng.random((60, 4)) < 0.4).astype(np.int8)
    Y[:, 0] = 1
    model = MultiLabelNN(hidden_units=6, max_epochs=2, loss="pwe", threshold="fixed",
                         random_state=0).fit(X, Y)
    model.save(tmp_path / "pwe.npz")
    back = MultiLabelNN.load(tmp_path / "pwe.npz")
    assert back.thresholds_.fixed == 0.0 and model.thresholds_.fixed == 0.0
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    np.testing.assert_array_equal(back.predict(X), model.decision_function(X) > 0)


def _npy_bytes(header, data=b""):
    """A .npy member with the header dict ``header`` (padded as NumPy pads it) and ``data``."""
    text = repr(header).encode("latin1")
    text += b" " * (63 - (len(text) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text + data


def _archive(path, members):
    with zipfile.ZipFile(path, "w") as archive:
        for name, raw in members.items():
            archive.writestr(f"{name}.npy", raw)


@pytest.mark.parametrize("raw, message", [
    (_npy_bytes({"descr": "<f8", "fortran_order": False, "shape": (10 ** 12, 10 ** 6)},
                b"\0" * 64), "declares shape (1000000000000, 1000000) of float64"),
    (_npy_bytes({"descr": "<f8", "fortran_order": False, "shape": (3,)}, b"\0" * 8),
     "declares shape (3,) of float64 (24 bytes) but holds 8 bytes"),
    (b"\x93NUMPY\x01\x00" + (60000).to_bytes(2, "little") + b"{" + b" " * 200,
     "has an invalid .npy header (EOF"),
    (b"\x93NUMPY\x03\x00" + (10).to_bytes(4, "little") + b"{}        ",
     "has .npy format version (3, 0)"),
    (_npy_bytes({"descr": "|O", "fortran_order": False, "shape": (1,)}, b"\0" * 8),
     "it holds Python objects"),
    (_npy_bytes({"descr": [("a", "<f8")], "fortran_order": False, "shape": (1,)}, b"\0" * 8),
     "not a plain number or string type"),
    (_npy_bytes({"descr": "<U0", "fortran_order": False, "shape": (10 ** 15,)}),
     "not a plain number or string type"),
])
def test_a_forged_array_header_is_refused_before_anything_is_allocated(model_entries, tmp_path,
                                                                      raw, message):
    buffer = io.BytesIO()
    np.savez(buffer, **model_entries)
    with zipfile.ZipFile(buffer) as archive:
        members = {info.filename[:-4]: archive.read(info) for info in archive.infolist()}
    members["W1"] = raw
    _archive(tmp_path / "forged.npz", members)
    with pytest.raises(ModelFileError, match=re.escape(message)) as error:
        MultiLabelNN.load(tmp_path / "forged.npz")
    assert "'W1'" in str(error.value) or "objects" in str(error.value)


def test_a_member_that_is_not_an_array_is_refused(tmp_path):
    write_model_file(tmp_path / "m.npz", {"A": np.ones(3)}, {"x": 1})
    with zipfile.ZipFile(tmp_path / "m.npz", "a") as archive:
        archive.writestr("notes.txt", "hello")
    with pytest.raises(ModelFileError, match="its member 'notes.txt' is not a .npy array"):
        read_model_file(tmp_path / "m.npz")


#: Model files written before losses carried their options (PWE's form was the hyper-parameter
#: ``pwe_form``), on the synthetic data below, and the first test document's scores then.
OLD_FILES = {"model_v2_pwe_pairwise.npz": ("pwe", {"form": "pairwise"},
                                           [0.0622797, -0.02380496, 0.01121032, -0.11118844]),
             "model_v2_ce.npz": ("ce", None, [0.51593393, 0.51765406, 0.5214263, 0.47191775])}


@pytest.mark.parametrize("name", sorted(OLD_FILES))
def test_a_model_file_written_before_loss_options_still_loads(name):
    loss, options, scores = OLD_FILES[name]
    model = MultiLabelNN.load(Path(__file__).parent / "data" / name)
    assert (model.loss, model.loss_options, model.loss_.name) == (loss, options, loss)
    assert model.loss_.options == (options or {})
    assert "pwe_form" not in model.get_params()
    assert (model.optimizer, model.optimizer_options, model.momentum) == ("adagrad", None, 0.9)
    data = load("synthetic", n_train=60, n_test=20, n_features=12, n_labels=4, random_state=0)
    np.testing.assert_allclose(model.decision_function(data.X_test)[0], scores, rtol=1e-6)
    assert model.predict(data.X_test).shape == (20, 4)


def _with_header(source, target, params, version=2):
    """``source`` with its header's hyper-parameters updated by ``params`` (None: removed), as
    format ``version``, sealed again: a file as an mlnn of that version would write it."""
    with np.load(source, allow_pickle=False) as npz:
        entries = {name: npz[name] for name in npz.files if name != "checksum"}
    meta = json.loads(str(entries["meta"]))
    meta["params"].update(params)
    meta["params"] = {key: value for key, value in meta["params"].items() if value is not None
                      or key not in params}
    entries["meta"], entries["format_version"] = np.array(json.dumps(meta)), np.array(version)
    np.savez(target, **entries, checksum=np.array(checksum(entries)))
    return target


def test_an_old_file_is_read_in_one_place_and_one_contradicting_itself_is_refused(tmp_path):
    """Version 2 files held PWE's form as ``pwe_form``; one that also holds ``loss_options``
    saying otherwise (or invalid ones) is refused, not read with the old key winning; the same
    key in a version 3 file is unknown. New files are version 3."""
    old = Path(__file__).parent / "data" / "model_v2_pwe_pairwise.npz"
    for options in ({"form": "loop"}, {"form": "factorised"}, None):
        path = _with_header(old, tmp_path / "both.npz", {"loss_options": options or {}})
        with pytest.raises(ModelFileError, match=r"its header holds both pwe_form 'pairwise' "
                                                 r"and loss_options .*, which contradict"):
            MultiLabelNN.load(path)
    agreeing = _with_header(old, tmp_path / "agree.npz", {"loss_options": {"form": "pairwise"}})
    assert MultiLabelNN.load(agreeing).loss_.form == "pairwise"
    newer = _with_header(old, tmp_path / "v2_newer.npz", {"pwe_form": None,
                                                       "loss_options": {"form": "pairwise"}})
    assert MultiLabelNN.load(newer).loss_options == {"form": "pairwise"}      # v2, loss_options
    with pytest.raises(ModelFileError, match=r"hyper-parameters \['pwe_form'\] that this "
                                             "version of mlnn does not know"):
        MultiLabelNN.load(_with_header(old, tmp_path / "v3.npz", {}, version=3))
    model = MultiLabelNN.load(old)
    model.save(tmp_path / "again.npz")
    with np.load(tmp_path / "again.npz", allow_pickle=False) as npz:
        assert int(npz["format_version"]) == 3
    assert "pwe_form" not in json.loads(str(npz_meta(tmp_path / "again.npz")))["params"]


def npz_meta(path):
    with np.load(path, allow_pickle=False) as npz:
        return str(npz["meta"])
