"""From a fresh machine to a first result: commands fetch the pinned Reuters-21578 archive on first
use (from a loopback server standing in for the archive's host), verify it, report progress, and
obey --offline / MLNN_OFFLINE; datasets that cannot be fetched say which files to place where."""

import functools
import hashlib
import http.server
import io
import json
import re
import tarfile
import threading

import pytest

from mlnn.cli import main
from mlnn.datasets import download
from mlnn.datasets.registry import SPECS

#: (split, topics, title, body) of a tiny Reuters-21578 in its SGML format.
DOCUMENTS = [
    ("TRAIN", ["grain"], "Wheat exports rise", "Wheat and corn exports rose sharply this week."),
    ("TRAIN", ["grain", "wheat"], "Grain harvest", "The wheat harvest was larger than expected."),
    ("TRAIN", ["crude"], "Oil prices", "Crude oil prices fell as OPEC raised its output."),
    ("TRAIN", ["crude"], "OPEC meeting", "OPEC ministers meet to discuss crude production."),
    ("TRAIN", ["earn"], "Quarterly profit", "The company reported higher net profit per share."),
    ("TRAIN", ["earn"], "Dividend", "Net earnings and the dividend per share increased."),
    ("TRAIN", ["earn", "crude"], "Oil company earnings", "Oil company profit rose on crude."),
    ("TRAIN", ["wheat"], "Wheat tender", "Egypt bought wheat in a tender; wheat's price held."),
    ("TEST", ["grain", "wheat"], "Wheat crop", "The wheat crop and grain stocks grew."),
    ("TEST", ["crude"], "Crude output", "Crude output of OPEC members rose."),
    ("TEST", ["earn"], "Profit up", "Profit per share rose; dividend unchanged."),
    ("NOT-USED", ["earn"], "unused", "not part of ModApte"),
]


def sgml(documents=DOCUMENTS):
    """The SGML text of ``documents`` (as in one ``reut2-NNN.sgm`` file)."""
    parts = ['<!DOCTYPE lewis SYSTEM "lewis.dtd">\n']
    for newid, (split, topics, title, body) in enumerate(documents, start=1):
        labels = "".join(f"<D>{t}</D>" for t in topics)
        parts.append(f'<REUTERS TOPICS="YES" LEWISSPLIT="{split}" CGISPLIT="TRAINING-SET" '
                     f'OLDID="{newid}" NEWID="{newid}">\n<DATE>26-FEB-1987</DATE>\n'
                     f'<TOPICS>{labels}</TOPICS>\n<TEXT>&#2;\n<TITLE>{title}</TITLE>\n'
                     f'<BODY>{body}&#3;</BODY></TEXT>\n</REUTERS>\n')
    return "".join(parts)


def tiny_reuters_archive(path, documents=DOCUMENTS):
    """Write a reuters21578.tar.gz holding one reut2-000.sgm to ``path``; returns its bytes."""
    raw = sgml(documents).encode("latin-1")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        member = tarfile.TarInfo("reut2-000.sgm")
        member.size = len(raw)
        archive.addfile(member, io.BytesIO(raw))
    path.write_bytes(buffer.getvalue())
    return buffer.getvalue()


class RecordingHandler(http.server.SimpleHTTPRequestHandler):
    """A quiet static-file handler that records the paths it was asked for (``requests``)."""

    requests = []

    def do_GET(self):
        RecordingHandler.requests.append(self.path)
        super().do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture
def pinned(tmp_path, monkeypatch):
    """A loopback server with a tiny archive pinned as reuters21578's source; an empty data
    directory (MLNN_DATA) and cache (MLNN_CACHE). Yields (data directory, archive bytes)."""
    served = tmp_path / "served"
    served.mkdir()
    payload = tiny_reuters_archive(served / "reuters21578.tar.gz")
    handler = functools.partial(RecordingHandler, directory=str(served))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    RecordingHandler.requests = []
    url = f"http://127.0.0.1:{httpd.server_address[1]}/reuters21578.tar.gz"
    monkeypatch.setitem(download.SOURCES, "reuters21578", [download.Source(
        "reuters21578.tar.gz", url, hashlib.sha256(payload).hexdigest())])
    data = tmp_path / "data"
    monkeypatch.setenv("MLNN_DATA", str(data))
    monkeypatch.setenv("MLNN_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("MLNN_OFFLINE", raising=False)
    yield data, payload
    httpd.shutdown()
    httpd.server_close()


def test_data_info_fetches_the_archive_on_first_use_and_only_then(pinned, capsys):
    data, payload = pinned
    assert main(["data", "info", "reuters21578", "--json", "--progress"]) == 0
    captured = capsys.readouterr()
    stats = json.loads(captured.out)          # ModApte: 8 training, 3 test documents, and the
    assert (stats["n_train"], stats["n_test"], stats["L"]) == (8, 3, 4)    # 4 shared topics
    assert (data / "reuters21578.tar.gz").read_bytes() == payload
    assert captured.err.splitlines()[-1] == \
        f"downloading reuters21578.tar.gz: {len(payload)} B of {len(payload)} B (100%)"
    assert RecordingHandler.requests == ["/reuters21578.tar.gz"]
    assert main(["data", "info", "reuters21578", "--json", "--progress"]) == 0
    # verified copy kept
    assert capsys.readouterr().err == "" and len(RecordingHandler.requests) == 1


def test_train_fetches_the_archive_and_trains(pinned, tmp_path, capsys):
    data, _ = pinned
    model = tmp_path / "model.npz"
    assert main(["train", "--dataset", "reuters21578", "--hidden-units", "8", "--epochs", "2",
                 "--validation-fraction", "0", "--out", str(model), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "saved" in captured.out and captured.err == ""     # --quiet: no progress at all
    assert (data / "reuters21578.tar.gz").exists() and model.exists()


def test_progress_is_hidden_when_standard_error_is_not_a_terminal(pinned, capsys):
    assert main(["data", "info", "reuters21578"]) == 0      # capsys: not a terminal
    captured = capsys.readouterr()
    assert captured.err == "" and "documents M" in captured.out


@pytest.mark.parametrize("how", ["option", "environment"])
def test_offline_forbids_the_download_and_says_what_to_do(pinned, monkeypatch, capsys, how):
    data, _ = pinned
    argv = ["data", "info", "reuters21578"]
    if how == "option":
        argv.append("--offline")
    else:
        monkeypatch.setenv("MLNN_OFFLINE", "1")
    assert main(argv) == 2
    err = capsys.readouterr().err
    source = download.SOURCES["reuters21578"][0]
    assert err.count("\n") == 1 and err.startswith("mlnn: error: dataset 'reuters21578' needs ")
    assert str(data / "reuters21578.tar.gz") in err and "downloading is turned off" in err
    assert source.url in err and source.sha256 in err
    assert RecordingHandler.requests == [] and not data.exists()


def test_data_fetch_is_refused_under_mlnn_offline(pinned, monkeypatch, capsys):
    monkeypatch.setenv("MLNN_OFFLINE", "1")
    assert main(["data", "fetch", "reuters21578"]) == 2
    assert "downloads are turned off by MLNN_OFFLINE" in capsys.readouterr().err
    assert RecordingHandler.requests == []
    for value in ("yes", "TRUE", "on"):
        monkeypatch.setenv("MLNN_OFFLINE", value)
        assert main(["data", "fetch", "reuters21578"]) == 2
    capsys.readouterr()
    assert RecordingHandler.requests == []
    for value in ("0", "", "false", "No"):                  # allowed
        monkeypatch.setenv("MLNN_OFFLINE", value)
        assert main(["data", "fetch", "reuters21578", "--force"]) == 0
    assert RecordingHandler.requests == ["/reuters21578.tar.gz"] * 4


def test_an_archive_that_fails_its_checksum_is_not_kept(pinned, monkeypatch, capsys):
    data, _ = pinned
    source = download.SOURCES["reuters21578"][0]
    monkeypatch.setitem(download.SOURCES, "reuters21578",
                        [download.Source(source.filename, source.url, "0" * 64)])
    assert main(["train", "--dataset", "reuters21578", "--out", "unused.npz"]) == 2
    err = capsys.readouterr().err
    assert "downloaded SHA-256 is" in err and "nothing was saved" in err
    assert list(data.iterdir()) == []


def test_an_sgml_directory_in_place_of_the_archive_is_used_without_download(pinned, capsys):
    data, _ = pinned
    (data / "reuters21578").mkdir(parents=True)
    (data / "reuters21578" / "reut2-000.sgm").write_text(sgml(), encoding="latin-1")
    assert main(["data", "info", "reuters21578", "--json"]) == 0
    assert RecordingHandler.requests == [] and not (data / "reuters21578.tar.gz").exists()


@pytest.mark.parametrize("name", ["medical", "rcv1subset1", "stackex_chess"])
def test_a_dataset_that_cannot_be_fetched_names_the_files_and_where_to_get_them(
        pinned, capsys, name):
    data, _ = pinned
    assert main(["train", "--dataset", name, "--out", "unused.npz"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot be downloaded automatically" in err
    for relative in SPECS[name].files:
        assert str(data / relative) in err
    assert SPECS[name].published in err
    assert RecordingHandler.requests == []


def test_train_reports_every_epoch_on_standard_error_with_the_methods_budget(pinned, tmp_path,
                                                                             capsys):
    """No --epochs: the method's budget (100) is the N of "epoch k/N"; the lines go to standard
    error only, one per evaluation, the last one at most the budget."""
    assert main(["train", "--dataset", "reuters21578", "--hidden-units", "8", "--out",
                 str(tmp_path / "model.npz"), "--progress"]) == 0
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if not line.startswith("downloading")]
    assert lines and all(re.fullmatch(r"epoch \d+/100  train loss \d+\.\d{4}  validation rank "
                                      r"loss \d\.\d{4}  elapsed \S+, (at most \S+ left|done)",
                                      line) for line in lines), lines
    assert [int(line.split()[1].split("/")[0]) for line in lines] == \
        list(range(1, len(lines) + 1))
    assert not re.search(r"^epoch ", captured.out, flags=re.M) and "saved" in captured.out


def test_reproduce_fetches_the_archive_on_first_use(pinned, tmp_path, capsys):
    data, payload = pinned
    assert main(["reproduce", "--dataset", "reuters21578", "--quick", "--methods", "nn-a",
                 "--out", str(tmp_path / "figures")]) == 0
    assert (data / "reuters21578.tar.gz").read_bytes() == payload
    assert RecordingHandler.requests == ["/reuters21578.tar.gz"]
    assert (tmp_path / "figures" / "table3_reuters21578.csv").exists()
