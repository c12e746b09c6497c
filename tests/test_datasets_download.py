"""Checksummed, atomic downloads against a local HTTP server on 127.0.0.1."""

import functools
import hashlib
import http.server
import threading

import pytest

from mlnn.base.errors import ChecksumError, MLNNError
from mlnn.datasets import download, load
from mlnn.datasets.download import SOURCES, fetch, fetch_file, sha256_file
from tests.test_first_run import RecordingHandler, tiny_reuters_archive


@pytest.fixture
def server(tmp_path):
    """Serve tmp_path/served (and, if set, the real data directory) on 127.0.0.1."""
    served = tmp_path / "served"
    served.mkdir()
    RecordingHandler.requests = []

    def start(directory):
        handler = functools.partial(RecordingHandler, directory=str(directory))
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        started.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}"

    started = []
    yield served, start
    for httpd in started:
        httpd.shutdown()
        httpd.server_close()


def test_fetch_file_verifies_and_does_not_download_twice(tmp_path, server):
    served, start = server
    payload = b"multi-label\n" * 1000
    (served / "data.bin").write_bytes(payload)
    url = start(served) + "/data.bin"
    expected = hashlib.sha256(payload).hexdigest()
    target = tmp_path / "out" / "data.bin"
    path, downloaded = fetch_file(url, target, expected)
    assert downloaded and path.read_bytes() == payload
    assert sha256_file(path) == expected
    path, downloaded = fetch_file(url, target, expected)
    assert not downloaded and len(RecordingHandler.requests) == 1
    target.write_bytes(b"corrupted")  # a bad copy is replaced
    path, downloaded = fetch_file(url, target, expected)
    assert downloaded and path.read_bytes() == payload and len(RecordingHandler.requests) == 2


def test_checksum_mismatch_leaves_nothing_behind(tmp_path, server):
    served, start = server
    (served / "data.bin").write_bytes(b"payload")
    target = tmp_path / "out" / "data.bin"
    with pytest.raises(ChecksumError, match="expected 0000"):
        fetch_file(start(served) + "/data.bin", target, "0" * 64)
    assert list((tmp_path / "out").iterdir()) == []


def test_http_error_is_reported(tmp_path, server):
    served, start = server
    with pytest.raises(MLNNError, match="download of .*missing.bin failed"):
        fetch_file(start(served) + "/missing.bin", tmp_path / "x", "0" * 64)
    assert not (tmp_path / "x").exists()


def test_fetch_uses_registry_and_mirror(tmp_path, server, monkeypatch):
    served, start = server
    (served / "tiny.tar.gz").write_bytes(b"archive bytes")
    digest = hashlib.sha256(b"archive bytes").hexdigest()
    monkeypatch.setitem(SOURCES, "tiny", [download.Source(
        "tiny.tar.gz", "https://example.invalid/tiny.tar.gz", digest)])
    paths = fetch("tiny", data_dir=tmp_path / "data", base_url=start(served) + "/")
    assert paths == [tmp_path / "data" / "tiny.tar.gz"]
    assert paths[0].read_bytes() == b"archive bytes"
    with pytest.raises(MLNNError, match="no pinned download for 'delicious'.*mulan"):
        fetch("delicious", data_dir=tmp_path)


def test_fetch_real_reuters_archive_from_local_server(tmp_path, server, data_dir):
    _, start = server
    if not (data_dir / "reuters21578.tar.gz").exists():
        pytest.skip("reuters21578.tar.gz not in MLNN_DATA")
    base = start(data_dir)
    paths = fetch("reuters21578", data_dir=tmp_path, base_url=base)
    assert sha256_file(paths[0]) == SOURCES["reuters21578"][0].sha256
    assert sha256_file(paths[0]) == sha256_file(data_dir / "reuters21578.tar.gz")
    fetch("reuters21578", data_dir=tmp_path, base_url=base)
    assert RecordingHandler.requests == ["/reuters21578.tar.gz"]


@pytest.mark.parametrize("base_url", ["notaurl", "", "http://", "ftp:/x", "mailto:a@b.c",
                                      "/local/path"])
def test_a_base_url_that_is_not_a_url_is_refused_before_any_download(tmp_path, base_url):
    with pytest.raises(MLNNError, match=f"base_url {base_url!r} is not a URL: give http://"):
        fetch("reuters21578", data_dir=tmp_path, base_url=base_url)
    assert list(tmp_path.iterdir()) == []


def test_a_data_dir_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(MLNNError, match="--data-dir: .*afile is not a directory"):
        fetch("reuters21578", data_dir=tmp_path / "afile", base_url="http://127.0.0.1:9/")
    assert (tmp_path / "afile").read_text() == "x"


def test_a_connection_cut_mid_download_leaves_nothing(tmp_path):
    """A server that promises 1000 bytes and sends 10: an IncompleteRead, not a traceback."""
    class Short(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"0123456789")

        def log_message(self, *args):
            pass
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Short)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        with pytest.raises(MLNNError, match="download of .*/f.bin failed: the connection "
                                            "closed after 10 of 1000 bytes"):
            fetch_file(f"http://127.0.0.1:{httpd.server_address[1]}/f.bin", tmp_path / "f.bin",
                       "0" * 64)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_download_leaves_nothing(tmp_path, server, monkeypatch):
    served, start = server
    (served / "data.bin").write_bytes(b"x" * 100)

    def interrupted(url, handle, timeout, progress=None):
        handle.write(b"half")
        raise KeyboardInterrupt
    monkeypatch.setattr(download, "_download", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fetch_file(start(served) + "/data.bin", tmp_path / "data.bin", "0" * 64)
    assert list(tmp_path.iterdir()) == [tmp_path / "served"]


def test_load_downloads_a_missing_pinned_archive_only_when_asked(tmp_path, server,
                                                                 monkeypatch):
    served, start = server
    payload = tiny_reuters_archive(served / "reuters21578.tar.gz")
    monkeypatch.setitem(SOURCES, "reuters21578", [download.Source(
        "reuters21578.tar.gz", start(served) + "/reuters21578.tar.gz",
        hashlib.sha256(payload).hexdigest())])
    monkeypatch.setenv("MLNN_CACHE", str(tmp_path / "cache"))
    with pytest.raises(MLNNError, match="downloading is turned off"):
        load("reuters21578", data_dir=tmp_path / "data")
    assert RecordingHandler.requests == []
    reports = []

    def progress(filename):
        return lambda received, total: reports.append((filename, received, total))
    dataset = load("reuters21578", data_dir=tmp_path / "data", download=True, progress=progress)
    assert dataset.X_train.shape[0] == 8 and RecordingHandler.requests == ["/reuters21578.tar.gz"]
    assert reports[-1] == ("reuters21578.tar.gz", len(payload), len(payload))
    assert (tmp_path / "data" / "reuters21578.tar.gz").read_bytes() == payload
