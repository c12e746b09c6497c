"""Bad input and faults through the command line: one line, exit code 2, nothing changed.

Each case runs ``mlnn.cli.main(argv)`` in a workspace directory holding a trained model, data
files good and bad, and the outputs of an earlier run. For every case the test asserts

* the exit code (2; 130 for Ctrl-C),
* exactly one line on standard error, ``mlnn: error: ...`` naming the problem, no traceback,
* that no file of the workspace was created, changed or left half-written (every path and the
  bytes of every file are compared before and after).

Faults that cannot be typed are planted with ``monkeypatch``: a full disk (``os.fsync`` raising
ENOSPC, as it does when the last blocks cannot be written), Ctrl-C (``KeyboardInterrupt`` from
inside the work), permission denied (the permission bits do not bind root, so ``os.access`` and
``open`` answer as they would for an unprivileged user). Downloads go to a loopback HTTP server.
"""

import errno
import gzip
import http.server
import io
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

import mlnn.datasets.download
from mlnn.base.errors import MLNNWarning
from mlnn.base.fileio import arrays_digest
from mlnn.cli import main
from mlnn.datasets import load
from mlnn.datasets.svmlight import format_svmlight
from mlnn.model.estimator import MultiLabelNN
from tests.arff_files import write_arff, write_mulan_xml

ROOT = Path(__file__).resolve().parents[1]
#: The small synthetic dataset of every case, as command-line options.
SYNTHETIC = ["--dataset", "synthetic", "-o", "n_train=100", "-o", "n_test=40", "-o",
             "n_features=50", "-o", "n_labels=5"]
TRAIN = ["train", *SYNTHETIC, "--hidden-units", "8", "--epochs", "1", "--quiet"]
EVALUATE = ["evaluate", *SYNTHETIC]


# ------------------------------------------------------------------------------------------
# the workspace


def _resealed(path, target, change):
    """Copy the model file ``path`` to ``target`` with ``change`` applied to its entries and the
    checksum recomputed, as a careful forger would."""
    with np.load(path, allow_pickle=False) as npz:
        entries = {name: npz[name] for name in npz.files}
    entries = change(entries)
    entries.pop("checksum", None)
    entries["checksum"] = np.array(arrays_digest(entries))
    np.savez(target, **entries)


def _edit_meta(edit):
    def change(entries):
        meta = json.loads(str(entries["meta"]))
        edit(meta)
        return dict(entries, meta=np.array(json.dumps(meta)))
    return change


def _model_files(w, model):
    """Model files good, damaged, tampered with and forged."""
    data = model.read_bytes()
    (w / "truncated.npz").write_bytes(data[: len(data) // 2])
    (w / "empty.npz").write_bytes(b"")
    (w / "text.npz").write_text("W1 = [[1, 2], [3, 4]]\n")
    np.save(w / "array.npy", np.arange(4))
    (w / "array.npy").rename(w / "array.npz")
    np.savez(w / "objects.npz", W1=np.array([{"a": 1}], dtype=object))
    with np.load(model, allow_pickle=False) as npz:
        entries = {name: npz[name] for name in npz.files}
    np.savez(w / "tampered.npz", **dict(entries, W2=entries["W2"] + 1))
    _resealed(model, w / "badjson.npz", lambda e: dict(e, meta=np.array("{'params': 1")))
    _resealed(model, w / "nofitted.npz", _edit_meta(lambda m: m.pop("fitted")))
    _resealed(model, w / "textversion.npz", lambda e: dict(e, format_version=np.array("1")))
    _resealed(model, w / "v99.npz", lambda e: dict(e, format_version=np.array(99)))
    _resealed(model, w / "badparams.npz",
              _edit_meta(lambda m: m["params"].update(hidden_units="many")))
    _resealed(model, w / "shortnames.npz", lambda e: dict(e, label_names=e["label_names"][:-1]))
    _resealed(model, w / "intweights.npz", lambda e: dict(e, W1=e["W1"].astype(np.int64)))
    _resealed(model, w / "coeflength.npz",
              lambda e: dict(e, threshold_coef=e["threshold_coef"][:-1]))
    _resealed(model, w / "nanweight.npz", lambda e: dict(e, W2=e["W2"] * np.nan))
    _huge_shape(model, w / "hugeshape.npz")
    deep = "[" * 100_000 + "]" * 100_000
    _resealed(model, w / "deepmeta.npz", lambda e: dict(e, meta=np.array(
        str(e["meta"])[:-1] + f', "extra": {deep}}}')))
    _resealed(model, w / "hugeint.npz", lambda e: dict(e, meta=np.array(
        str(e["meta"])[:-1] + f', "extra": {"9" * 5000}}}')))


def _run_files(w):
    """Run files of the synthetic dataset nested 100,000 deep or holding a 5,000-digit seed."""
    for folder, text in (("deeprun", "[" * 100_000 + "]" * 100_000),
                         ("bigseed", '{"dataset": "synthetic", "seed": 1' + "0" * 4999 + "}")):
        (w / folder).mkdir()
        (w / folder / "run_synthetic.json").write_text(text)


def _huge_shape(model, target, member="W1.npy", descr="<f4"):
    """A copy of the archive ``model`` whose ``member`` header declares 10^12 x 10^6 entries
    (exabytes)."""
    with zipfile.ZipFile(model) as source, zipfile.ZipFile(target, "w") as archive:
        for info in source.infolist():
            raw = source.read(info)
            if info.filename == member:
                header = repr({"descr": descr, "fortran_order": False,
                               "shape": (10 ** 12, 10 ** 6)}).encode()
                header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
                raw = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + raw[128:]
            archive.writestr(info.filename, raw)


def _svmlight_files(w):
    """Documents for ``predict --input``, good and bad."""
    (w / "good.svm").write_text("2 50 5\n0 0:1 3:0.5\n 7:0.25\n")
    (w / "ambiguous.svm").write_text("0 1:1 3:0.5\n 7:0.25\n")   # 0- or 1-based?
    (w / "utf16.svm").write_bytes("2 50 5\n0 0:1\n 7:0.25\n".encode("utf-16"))
    (w / "utf32.svm").write_bytes("2 50 5\n0 0:1\n 7:0.25\n".encode("utf-32"))
    (w / "binary.svm").write_bytes(b"2 50 5\n\x00\x01\x02\x03\n")
    (w / "overflow.svm").write_text("2 50 5\n0 0:1\n 7:1e308\n")
    (w / "nan.svm").write_text("1 50 5\n0 4:nan\n")
    (w / "range.svm").write_text("1 50 5\n0 60:1\n")
    (w / "header.svm").write_text("1 51 5\n0 0:1\n")
    (w / "token.svm").write_text("1 50 5\n0 abc\n")
    (w / "cut.svm.gz").write_bytes(gzip.compress(b"2 50 5\n0 0:1\n 7:0.25\n")[:20])


def _mulan_files(root, encode=None, X=None, Y=None, Y_test=None):
    """A tiny dataset under the name 'emotions' (MULAN layout: 6 labels) in the data directory
    ``root``; ``encode`` names a file to write in another encoding, as ``(name, encoding)``;
    ``X``, ``Y`` (both splits) and ``Y_test`` replace the default matrices."""
    folder = root / "mulan" / "emotions"
    folder.mkdir(parents=True)
    labels = [f"l{j}" for j in range(6)]
    X = np.eye(4, 3) if X is None else X
    Y = np.eye(4, 6, dtype=np.int8) if Y is None else Y
    for split, labels_of_split in (("train", Y), ("test", Y if Y_test is None else Y_test)):
        write_arff(folder / f"emotions-{split}.arff", X, labels_of_split, ["a", "b", "c"], labels)
    write_mulan_xml(folder / "emotions.xml", labels)
    if encode is not None:
        path = folder / encode[0]
        path.write_bytes(path.read_text().encode(encode[1]))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A model trained on the synthetic dataset of every case (bytes of its file)."""
    dataset = load("synthetic", n_train=100, n_test=40, n_features=50, n_labels=5)
    model = MultiLabelNN(hidden_units=8, max_epochs=1, random_state=0)
    model.fit(dataset.X_train, dataset.Y_train, label_names=dataset.label_names)
    path = tmp_path_factory.mktemp("model") / "model.npz"
    model.save(path)
    return path.read_bytes()


@pytest.fixture
def workspace(tmp_path, trained, monkeypatch):
    """The directory every case runs in (the current directory), with MLNN_DATA and
    MLNN_CACHE inside it."""
    w = tmp_path / "w"
    w.mkdir()
    (w / "model.npz").write_bytes(trained)
    _model_files(w, w / "model.npz")
    _svmlight_files(w)
    _run_files(w)
    (w / "adir").mkdir()
    (w / "afile").write_text("a file\n")
    os.mkfifo(w / "fifo")
    (w / "curves.csv").write_text("experiment,dataset\n")
    (w / "export").mkdir()
    for name in ("train", "test"):
        data = format_svmlight(np.eye(2), np.eye(2))
        (w / "export" / f"synthetic-{name}.svm").write_bytes(data)
    (w / "data").mkdir()
    _mulan_files(w / "data")
    _mulan_files(w / "data16", ("emotions-train.arff", "utf-16"))
    _mulan_files(w / "xml16", ("emotions.xml", "utf-16"))
    _mulan_files(w / "nolabels", Y=np.zeros((4, 6), dtype=np.int8))
    _mulan_files(w / "nowords", X=np.zeros((4, 3)))
    _mulan_files(w / "huge", X=np.eye(4, 3) * 1e308)
    (w / "cache").mkdir()
    monkeypatch.setenv("MLNN_DATA", str(w / "data"))
    monkeypatch.setenv("MLNN_CACHE", str(w / "cache"))
    monkeypatch.delenv("MLNN_TRACEBACK", raising=False)
    monkeypatch.chdir(w)
    return w


def snapshot(directory):
    """Every path under ``directory``: the bytes of each regular file, "dir" or "fifo"."""
    state = {}
    for path in sorted(directory.rglob("*")):
        key = str(path.relative_to(directory))
        if path.is_fifo():
            state[key] = "fifo"
        elif path.is_dir():
            state[key] = "dir"
        else:
            state[key] = path.read_bytes()
    return state


# ------------------------------------------------------------------------------------------
# faults that cannot be typed


class _Handler(http.server.BaseHTTPRequestHandler):
    """/missing: 404; /short/*: promises 1000 bytes, sends 10; anything else: wrong bytes."""

    def do_GET(self):
        if self.path.startswith("/missing"):
            self.send_error(404)
            return
        body = b"not the archive"
        self.send_response(200)
        self.send_header("Content-Length", "1000" if self.path.startswith("/short") else
                         str(len(body)))
        self.end_headers()
        self.wfile.write(body[:10] if self.path.startswith("/short") else body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def disk_full(monkeypatch, w):
    def no_space(descriptor):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(os, "fsync", no_space)


def interrupt(target, name):
    """Ctrl-C from inside ``target.name``, after it has written some bytes of a temporary
    file where it writes one."""
    def plant(monkeypatch, w):
        def interrupted(*args, **kwargs):
            for arg in args:
                if isinstance(arg, (str, Path)) and Path(arg).parent.exists():
                    Path(arg).write_bytes(b"half")
            raise KeyboardInterrupt
        monkeypatch.setattr(target, name, interrupted)
    return plant


def interrupt_at_fsync(n):
    """Ctrl-C while the ``n``-th file is flushed to disk (the earlier ones are written)."""
    def plant(monkeypatch, w):
        calls, fsync = [], os.fsync

        def interrupted(descriptor):
            calls.append(descriptor)
            if len(calls) == n:
                raise KeyboardInterrupt
            fsync(descriptor)
        monkeypatch.setattr(os, "fsync", interrupted)
    return plant


def unreadable(relative):
    """``os.access`` and ``open`` deny read access to ``relative`` (under the workspace)."""
    def plant(monkeypatch, w):
        denied = os.fspath(w / relative)
        access, real_open = os.access, open

        def fake_access(path, mode, *args, **kwargs):
            return os.path.abspath(path) != denied and access(path, mode, *args, **kwargs)

        def fake_open(path, *args, **kwargs):
            if os.path.abspath(os.fspath(path)) == denied:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
            return real_open(path, *args, **kwargs)
        monkeypatch.setattr(os, "access", fake_access)
        monkeypatch.setattr(mlnn.datasets.download, "open", fake_open, raising=False)
    return plant


def stdin(raw):
    def plant(monkeypatch, w):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    return plant


def data_dir(relative, cache_outside=False):
    """MLNN_DATA is ``relative`` (under the workspace); with ``cache_outside`` the dataset
    cache is kept outside the workspace (for a command that loads the data, then fails)."""
    def plant(monkeypatch, w):
        monkeypatch.setenv("MLNN_DATA", str(w / relative))
        if cache_outside:
            monkeypatch.setenv("MLNN_CACHE", str(w.parent / "cache-outside"))
    return plant


# ------------------------------------------------------------------------------------------
# the cases


@dataclass
class Case:
    """One bad input or fault: the arguments, what the one line must say, the exit code and
    how to plant the fault (``plant(monkeypatch, workspace)``)."""
    id: str
    argv: list
    message: str
    code: int = 2
    plant: object = None
    absent: list = field(default_factory=list)      # words the line must not contain


CASES = [
    # train: every option is checked before the data is loaded
    Case("train-seed-negative", [*TRAIN, "--seed", "-1"],
         "--seed must be None or an integer >= 0 (a seed), got -1"),
    Case("train-seed-text", [*TRAIN, "--seed", "abc"], "argument --seed: invalid int value"),
    Case("train-o-seed-negative", [*TRAIN, "-o", "random_state=-1"],
         "-o random_state must be an integer >= 0, got -1"),
    Case("train-o-seed-text", [*TRAIN, "-o", "random_state=abc"],
         "-o random_state must be an integer >= 0, got 'abc'"),
    Case("train-hidden-negative", [*TRAIN, "--hidden-units", "-5"],
         "--hidden-units must be a positive integer, got -5"),
    Case("train-hidden-zero", [*TRAIN, "--hidden-units", "0"],
         "--hidden-units must be a positive integer, got 0"),
    Case("train-epochs-zero", [*TRAIN, "--epochs", "0"],
         "--epochs must be a positive integer, got 0"),
    Case("train-batch-zero", [*TRAIN, "--batch-size", "0"],
         "--batch-size must be a positive integer, got 0"),
    Case("train-rate-negative", [*TRAIN, "--learning-rate", "-1"],
         "--learning-rate must be a positive finite number, got -1.0"),
    Case("train-rate-nan", [*TRAIN, "--learning-rate", "nan"],
         "--learning-rate must be a positive finite number, got nan"),
    Case("train-validation-fraction", [*TRAIN, "--validation-fraction", "1.5"],
         "--validation-fraction must be a number in [0, 1), got 1.5"),
    Case("train-lambda-negative", [*TRAIN, "--threshold-lambda", "-1"],
         "--threshold-lambda must be a finite number ≥ 0, got -1.0"),
    Case("train-method-unknown", [*TRAIN, "--method", "nn-x"], "unknown method 'nn-x'"),
    Case("train-method-not-a-network", [*TRAIN, "--method", "br-b"],
         "is not a neural-network method"),
    Case("train-dataset-unknown", ["train", "--dataset", "nope"], "unknown dataset 'nope'"),
    Case("train-option-not-pair", [*TRAIN, "-o", "n_train"], "option 'n_train' is not KEY=VALUE"),
    Case("train-option-unknown", [*TRAIN, "-o", "bogus=1"], "does not take option(s) ['bogus']"),
    Case("train-unknown-flag", [*TRAIN, "--bogus"], "unrecognized arguments: --bogus"),
    # train: --out is checked before training, and a failed save keeps the previous model
    Case("train-out-missing-dir", [*TRAIN, "--out", "missing/m.npz"],
         "--out: the directory missing does not exist"),
    Case("train-out-directory", [*TRAIN, "--out", "adir"], "--out: adir is a directory"),
    Case("train-out-empty", [*TRAIN, "--out", ""], "--out: the output path is empty"),
    Case("train-out-under-a-file", [*TRAIN, "--out", "afile/m.npz"],
         "--out: afile is not a directory"),
    Case("train-out-fifo", [*TRAIN, "--out", "fifo"], "fifo exists and is not a regular file"),
    Case("train-out-read-only", [*TRAIN, "--out", "adir/m.npz"],
         "--out: the directory adir is not writable", plant=unreadable("adir")),
    Case("train-out-not-a-model", [*TRAIN, "--out", "good.svm"],
         "--out: good.svm exists and is not an mlnn model file; refusing to overwrite it"),
    Case("train-out-damaged-model", [*TRAIN, "--out", "text.npz"],
         "--out: text.npz exists and is not an mlnn model file"),
    Case("train-diverges", [*TRAIN, "--learning-rate", "1e20", "--out", "new.npz"],
         "training diverged at update"),
    Case("train-disk-full", [*TRAIN, "--out", "model.npz"],
         "cannot write model.npz: no space left on device", plant=disk_full),
    Case("train-ctrl-c", [*TRAIN, "--out", "new.npz"], "mlnn: interrupted", code=130,
         plant=interrupt(MultiLabelNN, "fit")),
    # evaluate: model files that are not what they claim
    Case("model-missing", [*EVALUATE, "--model", "none.npz"], "--model: none.npz does not exist"),
    Case("model-directory", [*EVALUATE, "--model", "adir"], "--model: adir is a directory"),
    Case("model-stdin", [*EVALUATE, "--model", "-"], "cannot be read from standard input"),
    Case("model-npy-renamed", [*EVALUATE, "--model", "array.npz"],
         "not an mlnn model file: array.npz: it is a single NumPy array (.npy)"),
    Case("model-truncated", [*EVALUATE, "--model", "truncated.npz"],
         "truncated.npz is truncated or not an mlnn model file"),
    Case("model-empty", [*EVALUATE, "--model", "empty.npz"], "empty.npz: it is not an .npz"),
    Case("model-text", [*EVALUATE, "--model", "text.npz"], "text.npz: it is not an .npz"),
    Case("model-objects", [*EVALUATE, "--model", "objects.npz"],
         "objects.npz: it holds Python objects", absent=["allow_pickle"]),
    Case("model-tampered", [*EVALUATE, "--model", "tampered.npz"], "fails its checksum"),
    Case("model-meta-not-json", [*EVALUATE, "--model", "badjson.npz"],
         "not an mlnn model file: badjson.npz: its 'meta' entry is not valid JSON"),
    Case("model-meta-incomplete", [*EVALUATE, "--model", "nofitted.npz"],
         "not an mlnn model file: nofitted.npz: the entry 'fitted' is missing"),
    Case("model-meta-bad-param", [*EVALUATE, "--model", "badparams.npz"],
         "not an mlnn model file: badparams.npz"),
    Case("model-version-text", [*EVALUATE, "--model", "textversion.npz"],
         "its 'format_version' entry is a <U1 array"),
    Case("model-version-99", [*EVALUATE, "--model", "v99.npz"], "has format version 99"),
    Case("model-other-dataset", ["evaluate", "--model", "model.npz", "--dataset", "synthetic"],
         "the model expects 50 features but synthetic has 500"),
    Case("evaluate-split", [*EVALUATE, "--model", "model.npz", "--split", "dev"],
         "argument --split: invalid choice: 'dev'"),
]

PREDICT = ["predict", "--model", "model.npz", "--input"]
CASES += [
    # predict: the input is never guessed at
    Case("input-ambiguous-base", [*PREDICT, "ambiguous.svm"],
         "ambiguous.svm: no header line, and the feature ids (1..7) could start at 0 or at 1; "
         "say which: --zero-based or --one-based"),
    Case("input-both-bases", [*PREDICT, "ambiguous.svm", "--zero-based", "--one-based"],
         "argument --one-based: not allowed with argument --zero-based"),
    Case("input-utf16", [*PREDICT, "utf16.svm"], "utf16.svm: the file is encoded as UTF-16"),
    Case("input-utf32", [*PREDICT, "utf32.svm"], "utf32.svm: the file is encoded as UTF-32"),
    Case("input-binary", [*PREDICT, "binary.svm"], "binary.svm:2: a zero byte: this is a binary"),
    Case("input-float32-overflow", [*PREDICT, "overflow.svm"],
         "overflow.svm:3: value 1e308 of feature 7 overflows float32"),
    Case("input-nan", [*PREDICT, "nan.svm"], "nan.svm:2: value 'nan' is not finite"),
    Case("input-index-range", [*PREDICT, "range.svm"], "range.svm:2: feature index 60 out of "),
    Case("input-header-width", [*PREDICT, "header.svm"],
         "header.svm:1: header says 51 features and 5 labels, expected 50 and 5"),
    Case("input-token", [*PREDICT, "token.svm"], "token.svm:2: feature 'abc' is not 'index:value'"),
    Case("input-gzip-cut", [*PREDICT, "cut.svm.gz"], "cut.svm.gz: cannot read"),
    Case("input-missing", [*PREDICT, "none.svm"], "--input: none.svm does not exist"),
    Case("input-directory", [*PREDICT, "adir"], "--input: adir is a directory, not a file"),
    Case("input-unreadable", [*PREDICT, "good.svm"], "--input: good.svm is not readable",
         plant=unreadable("good.svm")),
    Case("input-stdin-ambiguous", [*PREDICT, "-"], "<stdin>: no header line",
         plant=stdin(b"0 1:1 3:0.5\n")),
    Case("input-stdin-utf16", [*PREDICT, "-"], "<stdin>: the file is encoded as UTF-16",
         plant=stdin("2 50 5\n0 0:1\n".encode("utf-16"))),
    Case("predict-model-forged", ["predict", "--model", "badjson.npz", "--input", "good.svm"],
         "badjson.npz: its 'meta' entry is not valid JSON"),
    Case("predict-model-meta-deep", ["predict", "--model", "deepmeta.npz", "--input", "good.svm"],
         "deepmeta.npz: its 'meta' entry is not valid JSON (it nests deeper than 100 levels)"),
    Case("predict-model-meta-5000-digits", ["predict", "--model", "hugeint.npz", "--input",
                                            "good.svm"],
         "hugeint.npz: its 'meta' entry is not valid JSON (it holds an integer of 5000 digits"),
    Case("reproduce-run-file-deep", ["reproduce", *SYNTHETIC, "--quick", "--methods", "br-b",
                                     "--out", "deeprun"],
         "run_synthetic.json is damaged (not valid JSON: it nests deeper than 100 levels); it "
         "may hold earlier results, so it is left as it is"),
    Case("reproduce-run-file-5000-digits", ["reproduce", *SYNTHETIC, "--quick", "--methods",
                                            "br-b", "--out", "bigseed"],
         "run_synthetic.json is damaged (not valid JSON: it holds an integer of 5000 digits"),
    # forged model files with a valid checksum: named by file and array, never a traceback
    Case("predict-short-label-names", ["predict", "--model", "shortnames.npz", "--input",
                                       "good.svm"],
         "model file shortnames.npz is inconsistent: its array 'label_names' has shape (4,)"),
    Case("predict-integer-weights", ["predict", "--model", "intweights.npz", "--input",
                                     "good.svm"], "its array 'W1' has dtype int64"),
    Case("predict-coefficient-length", ["predict", "--model", "coeflength.npz", "--input",
                                        "good.svm"],
         "its array 'threshold_coef' has shape (49,), expected (50,)"),
    Case("predict-nan-weight", ["predict", "--model", "nanweight.npz", "--input", "good.svm"],
         "its array 'W2' holds a non-finite value", absent=["scores contains"]),
    Case("predict-huge-shape", ["predict", "--model", "hugeshape.npz", "--input", "good.svm"],
         "hugeshape.npz: the entry 'W1' declares shape (1000000000000, 1000000)",
         absent=["out of memory"]),
    Case("evaluate-huge-shape", [*EVALUATE, "--model", "hugeshape.npz"],
         "the entry 'W1' declares shape", absent=["out of memory"]),
    # degenerate data: refused with a reason, never a number
    Case("evaluate-empty-split", ["evaluate", "--model", "model.npz", "--dataset", "synthetic",
                                  "-o", "n_train=100", "-o", "n_test=0", "-o", "n_features=50",
                                  "-o", "n_labels=5"],
         "the test split of synthetic has no documents: there is nothing to evaluate"),
    Case("reproduce-empty-test-split", ["reproduce", "--dataset", "synthetic", "-o", "n_train=60",
                                        "-o", "n_test=0", "-o", "n_features=20", "-o",
                                        "n_labels=4", "--quick", "--methods", "br-b", "--out",
                                        "adir"],
         "the test split of synthetic has no documents: there is nothing to evaluate the "
         "methods on"),
    Case("train-no-positive-label", ["train", "--dataset", "emotions", "--hidden-units", "2",
                                     "--epochs", "1", "--validation-fraction", "0", "--quiet",
                                     "--out", "new.npz"],
         "Y has no positive label: none of its 4 documents",
         plant=data_dir("nolabels", cache_outside=True)),
    Case("train-empty-documents", ["train", "--dataset", "emotions", "--hidden-units", "2",
                                   "--epochs", "1", "--validation-fraction", "0", "--quiet",
                                   "--out", "new.npz"],
         "every one of the 4 documents of X is empty",
         plant=data_dir("nowords", cache_outside=True)),
    Case("info-arff-overflow", ["data", "info", "emotions"],
         "emotions-train.arff:14: value 1e+308 of attribute 0 overflows float32",
         plant=data_dir("huge")),
    # data: the data directory, downloads, export
    Case("info-unknown", ["data", "info", "nope"], "unknown dataset 'nope'"),
    Case("info-data-dir-file", ["data", "info", "emotions", "--data-dir", "afile"],
         "--data-dir: afile is not a directory"),
    Case("info-mlnn-data-file", ["data", "info", "emotions"], "MLNN_DATA: ",
         plant=data_dir("afile")),
    Case("info-mlnn-data-unreadable", ["data", "info", "emotions"],
         "MLNN_DATA: the directory ", plant=unreadable("data")),
    Case("info-data-file-unreadable", ["data", "info", "emotions"],
         "emotions-train.arff: permission denied",
         plant=unreadable("data/mulan/emotions/emotions-train.arff")),
    Case("info-data-utf16", ["data", "info", "emotions"],
         "emotions-train.arff: the file is encoded as UTF-16", plant=data_dir("data16")),
    Case("info-xml-utf16", ["data", "info", "emotions"],
         "emotions.xml: the file is encoded as UTF-16", plant=data_dir("xml16")),
    Case("info-data-missing", ["data", "info", "emotions"], "which do not exist; it cannot be "
         "downloaded automatically: get it from https://mulan.sourceforge.net",
         plant=data_dir("adir")),
    Case("info-option-unknown", ["data", "info", "emotions", "-o", "stem=false"],
         "does not take option(s) ['stem']"),
    Case("fetch-not-a-url", ["data", "fetch", "reuters21578", "--base-url", "notaurl",
                             "--data-dir", "adir"], "--base-url 'notaurl' is not a URL"),
    Case("fetch-data-dir-file", ["data", "fetch", "reuters21578", "--data-dir", "afile"],
         "--data-dir: afile is not a directory"),
    Case("fetch-data-dir-empty", ["data", "fetch", "reuters21578", "--data-dir", ""],
         "--data-dir: the directory name is empty"),
    Case("fetch-not-pinned", ["data", "fetch", "emotions", "--data-dir", "adir"],
         "no pinned download for 'emotions'"),
    Case("fetch-404", ["data", "fetch", "reuters21578", "--data-dir", "adir", "--base-url",
                       "{server}/missing"], "failed: HTTP 404"),
    Case("fetch-wrong-bytes", ["data", "fetch", "reuters21578", "--data-dir", "adir",
                               "--base-url", "{server}/mirror"],
         "downloaded SHA-256 is", absent=["Traceback"]),
    Case("fetch-cut-short", ["data", "fetch", "reuters21578", "--data-dir", "adir",
                             "--base-url", "{server}/short"],
         "the connection closed after 10 of 1000 bytes"),
    Case("fetch-refused", ["data", "fetch", "reuters21578", "--data-dir", "adir",
                           "--base-url", "http://127.0.0.1:9"], "failed: "),
    Case("export-out-file", ["data", "export", "synthetic", "--format", "svmlight", "--out",
                             "afile"], "--out: afile exists and is not a directory"),
    Case("export-out-missing-parent", ["data", "export", "synthetic", "--format", "svmlight",
                                       "--out", "missing/sub"], "the directory missing does not"),
    Case("export-out-empty", ["data", "export", "synthetic", "--format", "svmlight", "--out",
                              ""], "--out: the output directory is empty"),
    Case("export-disk-full", ["data", "export", "synthetic", "--format", "svmlight", "--out",
                              "export"], "no space left on device", plant=disk_full),
    Case("export-ctrl-c", ["data", "export", "synthetic", "--format", "svmlight", "--out",
                           "export"], "mlnn: interrupted", code=130,
         plant=interrupt_at_fsync(3)),
    Case("export-format", ["data", "export", "synthetic", "--format", "csv", "--out", "x"],
         "argument --format: invalid choice: 'csv'"),
    # experiment
    Case("experiment-max-updates-zero", ["experiment", "dropout", "--fast", "--max-updates", "0",
                                         "--out", "c.csv"],
         "--max-updates must be a positive integer, got 0"),
    Case("experiment-max-updates-negative", ["experiment", "dropout", "--fast", "--max-updates",
                                             "-3", "--out", "c.csv"], "--max-updates must be"),
    Case("experiment-seed", ["experiment", "dropout", "--fast", "--seed", "-1", "--out", "c.csv"],
         "--seed must be an integer >= 0, got -1"),
    Case("experiment-rate", ["experiment", "dropout", "--fast", "--learning-rate", "0", "--out",
                             "c.csv"], "--learning-rate must be a positive finite number"),
    Case("experiment-rate-not-dropout", ["experiment", "convergence", "--fast",
                                         "--learning-rate", "0.1", "--out", "c.csv"],
         "applies to the dropout experiment only"),
    Case("experiment-out-directory", ["experiment", "dropout", "--fast", "--out", "adir"],
         "--out: adir is a directory"),
    Case("experiment-out-missing-dir", ["experiment", "dropout", "--fast", "--out", "no/c.csv"],
         "--out: the directory no does not exist"),
    Case("experiment-out-not-curves", ["experiment", "dropout", "--fast", "--out", "good.svm"],
         "--out: good.svm exists and is not a curves CSV file; refusing to overwrite it"),
    Case("experiment-disk-full", ["experiment", "dropout", "--fast", "--dataset", "synthetic",
                                  "--max-updates", "2", "--out", "curves.csv"],
         "cannot write curves.csv: no space left on device", plant=disk_full),
    Case("experiment-unknown", ["experiment", "everything", "--out", "c.csv"],
         "argument name: invalid choice: 'everything'"),
    Case("no-command", [], "the following arguments are required: COMMAND"),
]


def test_there_are_at_least_sixty_cases_with_distinct_names():
    assert len(CASES) >= 60 and len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_a_bad_input_or_fault_is_one_line_and_changes_nothing(case, workspace, server,
                                                               monkeypatch, capsys):
    argv = [arg.replace("{server}", server) for arg in case.argv]
    if case.plant is not None:
        case.plant(monkeypatch, workspace)
    before = snapshot(workspace)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == case.code, err
    assert err.endswith("\n") and err.count("\n") == 1, err                # exactly one line
    assert err.startswith("mlnn: interrupted" if code == 130 else "mlnn: error: "), err
    assert case.message in err, err
    for word in ["Traceback", *case.absent]:
        assert word not in err, err
    after = snapshot(workspace)
    assert sorted(after) == sorted(before), "files created or removed"
    changed = [name for name in before if before[name] != after[name]]
    assert changed == [], f"files changed: {changed}"


# ------------------------------------------------------------------------------------------
# the same inputs, given correctly, and faults of a real process


def _predict(argv, capsys):
    assert main(argv) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def test_an_explicit_base_and_standard_input_give_the_predictions_of_the_header_file(
        workspace, monkeypatch, capsys):
    expected = _predict([*PREDICT, "good.svm", "--scores"], capsys)
    assert len(expected.splitlines()) == 2
    (workspace / "one.svm").write_text("0 1:1 4:0.5\n 8:0.25\n")        # 1-based, no header
    (workspace / "zero.svm").write_text("0 0:1 3:0.5\n 7:0.25\n")       # 0-based, no header
    assert _predict([*PREDICT, "one.svm", "--one-based", "--scores"], capsys) == expected
    assert _predict([*PREDICT, "zero.svm", "--scores"], capsys) == expected     # an id 0
    stdin(b"0 1:1 4:0.5\n 8:0.25\n")(monkeypatch, workspace)
    assert _predict([*PREDICT, "-", "--one-based", "--scores"], capsys) == expected


def test_a_damaged_cache_entry_is_one_warning_line_and_the_command_succeeds(workspace, capsys):
    assert main(["data", "info", "emotions", "--json"]) == 0
    capsys.readouterr()
    (entry,) = (workspace / "cache").iterdir()
    entry.write_bytes(entry.read_bytes()[:100])
    assert main(["data", "info", "emotions", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("mlnn: warning: the cached matrices ")
    assert "are damaged" in err and "rebuilding them" in err
    assert json.loads(out)["from_cache"] is False
    assert main(["data", "info", "emotions", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out)["from_cache"] is True


def test_a_cache_entry_declaring_a_huge_array_is_rebuilt_not_allocated(workspace, capsys):
    assert main(["data", "info", "emotions", "--json"]) == 0
    capsys.readouterr()
    (entry,) = (workspace / "cache").iterdir()
    good = entry.read_bytes()
    _huge_shape(entry, workspace / "huge.npz", member="X_train_data.npy", descr="<f8")
    entry.write_bytes((workspace / "huge.npz").read_bytes())
    assert main(["data", "info", "emotions", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("mlnn: warning: the cached matrices "), err
    assert "the entry 'X_train_data' declares shape (1000000000000, 1000000)" in err
    assert "rebuilding them" in err and "memory" not in err
    assert json.loads(out)["from_cache"] is False
    assert entry.read_bytes() == good                    # rebuilt: the same entry again


def _mlnn(*args, cwd, **kwargs):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    return subprocess.Popen([sys.executable, "-m", "mlnn", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def test_ctrl_c_during_training_is_one_line_exit_130_and_no_model(tmp_path):
    process = _mlnn("train", "--dataset", "synthetic", "-o", "n_train=20000", "--hidden-units",
                    "64", "--epochs", "100", "--out", "model.npz", cwd=tmp_path)
    try:
        assert process.stdout.readline().startswith(b"training NN_AD on synthetic")
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130
    assert err == b"mlnn: interrupted\n"
    assert list(tmp_path.iterdir()) == []


def test_a_run_started_with_sigint_ignored_still_stops_on_sigint(tmp_path):
    """``nohup ... &`` starts a process with SIGINT ignored; ``python -m mlnn`` restores the
    default handler, so an interrupt still stops it cleanly."""
    process = _mlnn("train", "--dataset", "synthetic", "-o", "n_train=20000", "--hidden-units",
                    "64", "--epochs", "100", "--out", "model.npz", cwd=tmp_path,
                    preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        assert process.stdout.readline().startswith(b"training NN_AD on synthetic")
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130 and err == b"mlnn: interrupted\n"
    assert list(tmp_path.iterdir()) == []


def test_a_reader_that_went_away_ends_predict_quietly(workspace):
    """Standard output closed before the first line (``| head -0``): exit 1, nothing on
    standard error (no BrokenPipeError traceback, not even at exit)."""
    process = _mlnn("predict", "--model", "model.npz", "--input", "good.svm", "--scores",
                    cwd=workspace)
    process.stdout.close()
    err = process.stderr.read()
    process.wait(timeout=120)
    assert err == b"" and process.returncode == 1


# ------------------------------------------------------------------------------------------
# degenerate data given correctly: a documented result, with a warning saying what it means


def _no_nan(constant):
    raise AssertionError(f"{constant} in JSON output")


def test_undefined_measures_are_a_warning_each_and_null_in_json(workspace, monkeypatch, capsys):
    _mulan_files(workspace / "unlabelled", Y_test=np.zeros((4, 6), dtype=np.int8))
    data_dir("unlabelled")(monkeypatch, workspace)
    assert main(["train", "--dataset", "emotions", "--hidden-units", "2", "--epochs", "1",
                 "--validation-fraction", "0", "--quiet", "--out", "em.npz"]) == 0
    assert capsys.readouterr().err == (
        "mlnn: warning: 2 of the 6 labels have no positive training document (columns 4, 5 of "
        "Y): the network learns them as never relevant, but a document's threshold can still "
        "predict them; add positive documents or leave these labels out\n")
    assert main(["evaluate", "--model", "em.npz", "--dataset", "emotions", "--json"]) == 0
    out, err = capsys.readouterr()
    result = json.loads(out, parse_constant=_no_nan)
    assert [m for m, value in result.items() if value is None] == [
        "rankloss", "oneError", "coverage", "MAP"]
    assert all(isinstance(result[m], float) for m in ("miP", "maF", "hamming"))
    lines = err.splitlines()
    assert lines[0] == ("mlnn: warning: rankloss is undefined on the test split of emotions (no "
                        "document has both a relevant and an irrelevant label); it is reported "
                        "as null")
    assert len(lines) == 4 and all("(no document has a relevant label)" in l for l in lines[1:])
    assert main(["evaluate", "--model", "em.npz", "--dataset", "emotions"]) == 0
    out, err = capsys.readouterr()
    assert "rankloss   nan" in out and err.count("it is reported as nan") == 4


def test_a_warning_repeated_by_every_fit_of_a_run_is_printed_once(workspace, monkeypatch,
                                                                   capsys):
    rng = np.random.default_rng(0)
    X, Y = rng.random((40, 3)), (rng.random((40, 6)) < 0.5).astype(np.int8)
    Y[:, 5] = 0
    _mulan_files(workspace / "rare", X=X, Y=Y)
    data_dir("rare", cache_outside=True)(monkeypatch, workspace)
    assert main(["reproduce", "--dataset", "emotions", "--quick", "--methods", "nn-a",
                 "--learning-rates", "0.1", "0.01", "--out", "adir"]) == 0
    err = capsys.readouterr().err
    assert err.count("have no positive training document (columns 5 of Y)") == 1, err


def test_a_text_without_a_known_word_gets_no_label_and_a_warning(workspace, text_model,
                                                                   capsys):
    text_model.save(workspace / "text.npz")
    (workspace / "empty.txt").write_text("")
    (workspace / "stop.txt").write_text("The of and, but: unheard-of zyzzyva!\n")
    (workspace / "news.txt").write_text("wheat grain harvest")
    assert main(["predict", "--model", "text.npz", "--text", "empty.txt", "stop.txt",
                 "news.txt"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[:2] == ["empty.txt\t", "stop.txt\t"]
    assert lines[2].startswith("news.txt\t")
    assert err.splitlines() == [
        "mlnn: warning: --text: empty.txt is empty; no label is predicted for it",
        "mlnn: warning: --text: stop.txt has no word of the model's vocabulary; no label is "
        "predicted for it"]
    with pytest.warns(MLNNWarning, match=r"1 of the 2 documents \(number 0, counting from 0\) "
                                         "have no word of the vocabulary"):
        X = text_model.transform_text(["", "wheat"])
    assert X[0].nnz == 0 and X[1].nnz == 1


def test_an_input_document_without_features_gets_no_label_and_one_warning(workspace, capsys):
    (workspace / "blank.svm").write_text("3 50 5\n0\n1 4:0\n2 7:1.5\n")
    assert main(["predict", "--model", "model.npz", "--input", "blank.svm"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[:2] == ["", ""]
    assert err == ("mlnn: warning: --input: 2 of the 3 documents of blank.svm (number 1, 2, "
                   "counting from 1) have no feature; no label is predicted for them\n")


@pytest.mark.parametrize("module", ["numpy", "scipy.sparse", "mlnn.paper.study"])
def test_ctrl_c_while_the_modules_load_is_one_line_and_exit_130(tmp_path, signal_at_import,
                                                                 module):
    # SIGINT at its default in the child, as in a terminal, whatever the test runner inherited
    process = subprocess.run([sys.executable, "-m", "mlnn", "reproduce", "--help"],
                             env=signal_at_import(module, "SIGINT"),
                             cwd=tmp_path, capture_output=True, timeout=120,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert (process.returncode, process.stdout, process.stderr) == (
        130, b"", b"mlnn: interrupted\n")


@pytest.mark.parametrize("unbuffered", ["1", ""])
@pytest.mark.parametrize("argv", [["data", "list"],
                                  ["predict", "--model", "model.npz", "--input", "good.svm"]])
def test_output_beyond_the_file_size_limit_is_one_line_naming_standard_output(
        workspace, argv, unbuffered):
    """Past the limit the output is cut off, so the command fails, saying so once (also when
    Python writes standard output unbuffered, where it would drop a short write silently)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (5, resource.RLIM_INFINITY))
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED=unbuffered)
    with open(workspace / "out.txt", "wb") as out:
        process = subprocess.run([sys.executable, "-m", "mlnn", *argv], stdout=out,
                                 stderr=subprocess.PIPE, cwd=workspace, preexec_fn=limit,
                                 env=env, timeout=120)
    assert (process.returncode, process.stderr) == (
        2, b"mlnn: error: cannot write standard output: file too large\n")


def test_data_info_writes_an_undefined_statistic_as_null(workspace, capsys):
    assert main(["data", "info", "synthetic", "-o", "n_train=20", "-o", "n_test=0",
                 "--json"]) == 0
    stats = json.loads(capsys.readouterr().out, parse_constant=_no_nan)
    assert stats["C_test"] is None and stats["n_test"] == 0
