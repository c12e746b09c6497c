"""Downloads of the canonical public archives, verified by SHA-256.

:data:`SOURCES` pins the files :func:`fetch` can download; :data:`MANUAL_SOURCES` says where the
other datasets are published. A download streams into a temporary file beside its destination,
hashing on the way; only a file with the expected checksum is moved into place, and a file
already there that verifies is not downloaded again.
"""

import hashlib
import http.client
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from mlnn.base.errors import ChecksumError, MLNNError, describe_os_error
from mlnn.base.fileio import atomic_write
from mlnn.datasets.paths import check_data_dir, data_dir as default_data_dir


@dataclass(frozen=True)
class Source:
    """One downloadable file: its name under the data directory, its URL and SHA-256."""
    filename: str
    url: str
    sha256: str


#: Datasets whose canonical archive is pinned by checksum.
SOURCES = {
    # Lewis's Distribution 1.0 as served by the UCI KDD archive (22 SGML files at the top level).
    "reuters21578": [Source(
        "reuters21578.tar.gz",
        "https://kdd.ics.uci.edu/databases/reuters21578/reuters21578.tar.gz",
        "faf916d4b6a55544cf1683b6e13fb3061ce6bd0ecb6856b72edb124ade10823e")],
}

#: Where the datasets without a pinned archive are published (placed by hand under MLNN_DATA).
MANUAL_SOURCES = {
    "mulan": "https://mulan.sourceforge.net/datasets-mlc.html (RAR archives of ARFF + XML; "
             "unpack into mulan/<name>/)",
    "rcv1subsets": "https://github.com/fcharte/mldr.datasets additional-data/rcv1sub*.rda "
                   "(converted to rcv1subsets/derived/*.arff.gz + .xml)",
    "reutersk500": "https://github.com/fcharte/mldr.datasets additional-data/reutersk500.rda",
    "stackex": "https://github.com/fcharte/mldr.datasets stackex_*.rda",
}

_CHUNK = 1 << 20


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_file(url, destination, sha256, force=False, timeout=60.0, progress=None):
    """``(destination, downloaded)``: ``url`` downloaded to ``destination`` unless a copy with
    the SHA-256 ``sha256`` is there (and not ``force``); ``progress(received, total)`` hears of
    every block. ChecksumError or MLNNError if the bytes do not match or the download fails."""
    destination = Path(destination)
    if destination.exists() and not force and sha256_file(destination) == sha256.lower():
        return destination, False
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise MLNNError(f"cannot create the directory {destination.parent}: "
                        f"{describe_os_error(error)}") from None
    with atomic_write(destination, "wb") as handle:
        actual = _download(url, handle, timeout, progress)
        if actual != sha256.lower():
            raise ChecksumError(f"{url}: downloaded SHA-256 is {actual}, "
                                f"expected {sha256.lower()}; nothing was saved")
    return destination, True


def _download(url, handle, timeout, progress=None):
    """The SHA-256 of ``url``, streamed into the open file ``handle``."""
    digest, received = hashlib.sha256(), 0
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            length = response.headers.get("Content-Length", "")
            total = int(length) if length.isdigit() else None
            for block in iter(lambda: response.read(_CHUNK), b""):
                digest.update(block)
                handle.write(block)
                received += len(block)
                if progress is not None:
                    progress(received, total)
    except urllib.error.HTTPError as error:
        raise MLNNError(f"download of {url} failed: HTTP {error.code} {error.reason}") from None
    except urllib.error.URLError as error:
        raise MLNNError(f"download of {url} failed: {error.reason}") from None
    except (http.client.HTTPException, ConnectionError, TimeoutError) as error:
        raise MLNNError(f"download of {url} failed: {type(error).__name__} "
                        f"{error}".rstrip()) from None
    if total is not None and received != total:
        raise MLNNError(f"download of {url} failed: the connection closed after {received} of "
                        f"{total} bytes")
    return digest.hexdigest()


def check_base_url(base_url, name="base_url"):
    """``base_url``, if it is an http(s)://, ftp:// or file:// URL."""
    parts = urllib.parse.urlsplit(str(base_url))
    if parts.scheme not in ("http", "https", "ftp", "file") or \
            (parts.scheme != "file" and not parts.netloc):
        raise MLNNError(f"{name} {base_url!r} is not a URL: give http://HOST/..., "
                        "https://HOST/..., ftp://HOST/... or file:///DIRECTORY")
    return base_url


def fetch(name, data_dir=None, base_url=None, force=False, progress=None):
    """The paths of the pinned archives of dataset ``name`` (a key of :data:`SOURCES`), downloaded
    into ``data_dir`` (default ``$MLNN_DATA``) from their URLs or the mirror ``base_url``;
    ``progress(filename)`` gives each file's ``progress(received, total)``."""
    if name not in SOURCES:
        manual = "; ".join(f"{k}: {v}" for k, v in MANUAL_SOURCES.items())
        raise MLNNError(f"no pinned download for {name!r} (downloadable: {sorted(SOURCES)}); "
                        f"the other datasets are published at: {manual}")
    if base_url is not None:
        check_base_url(base_url)
    root = Path(data_dir) if data_dir is not None else default_data_dir()
    check_data_dir(root, "--data-dir" if data_dir is not None else "MLNN_DATA", create=True)
    paths = []
    for source in SOURCES[name]:
        url = source.url if base_url is None else base_url.rstrip("/") + "/" + source.filename
        paths.append(fetch_file(url, root / source.filename, source.sha256, force=force,
                                progress=None if progress is None else
                                progress(source.filename))[0])
    return paths
