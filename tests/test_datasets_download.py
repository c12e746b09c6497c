"""Checksummed, atomic downloads against a local HTTP server on 127.0.0.1."""

import functools
import hashlib
import http.server
import threading

import pytest

from mlnn.datasets import download
from mlnn.datasets.download import SOURCES, fetch, fetch_file, sha256_file
from mlnn.errors import ChecksumError, MLNNError


class _Handler(http.server.SimpleHTTPRequestHandler):
    requests = []

    def do_GET(self):
        _Handler.requests.append(self.path)
        super().do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture
def server(tmp_path):
    """Serve tmp_path/served (and, if set, the real data directory) on 127.0.0.1."""
    served = tmp_path / "served"
    served.mkdir()
    _Handler.requests = []

    def start(directory):
        handler = functools.partial(_Handler, directory=str(directory))
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
    assert not downloaded and len(_Handler.requests) == 1
    target.write_bytes(b"corrupted")  # a bad copy is replaced
    path, downloaded = fetch_file(url, target, expected)
    assert downloaded and path.read_bytes() == payload and len(_Handler.requests) == 2


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
    assert _Handler.requests == ["/reuters21578.tar.gz"]
