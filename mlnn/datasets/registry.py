"""The named datasets and :func:`load`.

Each name maps to a :class:`Spec`: its files under the data directory, its options, how it is
built, which files key its cache and where they are published; a new reader is one module and one
entry of :data:`SPECS`. Real datasets are processed once and cached (:mod:`mlnn.datasets.cache`);
a missing pinned archive is downloaded when asked, else the error names each missing file and
where it is published.
Reuters-21578 uses ModApte and comes with its fitted tf-idf vectorizer; the MULAN sets use their
train/test files; the sets distributed as one file (rcv1subset1..5, reutersk500, stackex_*) get
the project's seeded split (:func:`mlnn.base.validation.validation_split`), ``1 − train_fraction``
of the documents for testing, each part in file order.
"""

import inspect
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from mlnn.base.errors import MLNNError
from mlnn.base.validation import check_fraction, validation_split
from mlnn.datasets import cache, paths
from mlnn.datasets.arff import read_arff, read_mulan_xml
from mlnn.datasets.dataset import Dataset
from mlnn.datasets.download import MANUAL_SOURCES, SOURCES, fetch, sha256_file
from mlnn.datasets.reuters import label_matrix, modapte_split, read_reuters
from mlnn.datasets.synthetic import make_synthetic
from mlnn.datasets.text import STOP_WORDS, TfidfVectorizer


def _listed(root, spec):
    """The files of ``spec`` under ``root``: the sources whose SHA-256 sums key the cache."""
    return [Path(root) / relative for relative in spec.files]


def _absent(root, spec):
    """The files of ``spec`` (relative paths) that do not exist under ``root``."""
    return [relative for relative in spec.files if not (Path(root) / relative).exists()]


@dataclass(frozen=True)
class Spec:
    """One named dataset. ``build(root, spec, options)`` reads its ``files`` under the data
    directory ``root`` into (matrices, feature names, label names, the extras the cache keeps);
    a dataset without files is generated, ``build(options)`` giving the :class:`Dataset`'s
    arguments, and never cached. ``sources`` lists the files whose SHA-256 sums key the cache,
    ``missing`` the files that are not there, ``published`` says where to get them (unless
    :data:`~mlnn.datasets.download.SOURCES` pins a download), ``vectorizer(options, features,
    extras)`` the fitted vectorizer of a text dataset. ``n_labels``: the number of labels the XML
    must name; ``feature_space``: the number of ``AttK`` features to map the columns on by
    name."""
    build: object
    files: tuple = ()
    n_labels: int = None
    description: str = ""
    feature_space: int = None
    defaults: dict = field(default_factory=dict)
    sources: object = _listed
    missing: object = _absent
    published: str = "its publisher"
    vectorizer: object = None


def _defaults(function):
    """The keyword defaults of ``function``: the one place a loader's option defaults live."""
    return {name: p.default for name, p in inspect.signature(function).parameters.items()}


#: Part of every cache key: raise it when a loader's output changes for the same options.
LOADER_VERSION = 3


def _reuters_sources(root, spec):
    """Reuters-21578's archive, or else the SGML files of its directory."""
    archive, folder = (Path(root) / relative for relative in spec.files)
    return [archive] if archive.exists() else sorted(folder.glob("reut2-*.sgm"))


def _reuters_missing(root, spec):
    """The archive, unless it or the directory of SGML files is there."""
    archive, folder = (Path(root) / relative for relative in spec.files)
    return [] if archive.exists() or folder.is_dir() else [spec.files[0]]


def _build_reuters(root, spec, options):
    archive, folder = (Path(root) / relative for relative in spec.files)
    train, test, categories = modapte_split(read_reuters(archive if archive.exists() else folder))
    vectorizer = text_vectorizer(options)
    X_train = vectorizer.fit_transform([d.text for d in train])
    X_test = vectorizer.transform([d.text for d in test])
    parts = {"X_train": X_train, "Y_train": label_matrix(train, categories),
             "X_test": X_test, "Y_test": label_matrix(test, categories)}
    return parts, list(vectorizer.vocabulary_), categories, {"idf": vectorizer.idf_}


def text_vectorizer(options):
    """The (unfitted) :class:`~mlnn.datasets.text.TfidfVectorizer` of a text dataset's options."""
    stop_words = STOP_WORDS if options["stop_words"] else None
    return TfidfVectorizer(**{**options, "stop_words": stop_words})


def _reuters_vectorizer(options, features, extras):
    return text_vectorizer(options).set_vocabulary(features, extras["idf"])


def _build_mulan(root, spec, options):
    train_path, test_path, xml_path = (Path(root) / relative for relative in spec.files)
    labels = read_mulan_xml(xml_path, expected_count=spec.n_labels)
    X_train, Y_train, features = read_arff(train_path, labels)
    X_test, Y_test, features_test = read_arff(test_path, labels)
    if features_test != features:
        raise MLNNError(f"{test_path}: its features differ from those of {train_path}")
    parts = {"X_train": X_train, "Y_train": Y_train, "X_test": X_test, "Y_test": Y_test}
    return parts, features, labels, {}


def _build_single(root, spec, options):
    arff_path, xml_path = (Path(root) / relative for relative in spec.files)
    labels = read_mulan_xml(xml_path, expected_count=spec.n_labels)
    X, Y, features = read_arff(arff_path, labels)
    if spec.feature_space is not None:
        X, features = _align_by_name(X, features, spec.feature_space)
    test_fraction = 1.0 - check_fraction(options["train_fraction"], "train_fraction")
    train, test = validation_split(X.shape[0], test_fraction, options["random_state"])
    parts = {"X_train": X[train], "Y_train": Y[train], "X_test": X[test], "Y_test": Y[test]}
    return parts, features, labels, {}


def _mulan(folder, stem, n_labels, text):
    return Spec(_build_mulan, (f"mulan/{folder}/{stem}-train.arff",
                               f"mulan/{folder}/{stem}-test.arff", f"mulan/{folder}/{stem}.xml"),
                n_labels, f"{text} MULAN ARFF, official train/test split.",
                published=MANUAL_SOURCES["mulan"])


def _single(path, n_labels, text, feature_space=None):
    return Spec(_build_single, (f"{path}.arff.gz", f"{path}.xml"), n_labels,
                f"{text} Distributed as one file; seeded split (see mlnn.datasets.registry).",
                feature_space, {"train_fraction": 2 / 3, "random_state": 0},
                published=MANUAL_SOURCES[path.split("/")[0]])


SPECS = {
    "reuters21578": Spec(
        _build_reuters, ("reuters21578.tar.gz", "reuters21578"), 90,
        "Reuters-21578 (Lewis, Distribution 1.0), ModApte split, 90 categories with a training "
        "and a test document; TITLE + BODY; tokenised, stop words removed, Porter-stemmed, "
        "tf-idf fitted on the training split, L2-normalised (the paper, Sec. 4, names tf-idf with "
        "cosine normalisation; the rest is our choice).",
        defaults={**_defaults(TfidfVectorizer), "stop_words": True},    # stop words: True/False
        sources=_reuters_sources, missing=_reuters_missing, vectorizer=_reuters_vectorizer),
    "delicious": _mulan("delicious", "delicious", 983,
                        "Delicious bookmarks (Tsoumakas et al. 2008): 500 binary word features, "
                        "983 tags."),
    "bibtex": _mulan("bibtex", "bibtex", 159, "BibTeX entries (Katakis et al. 2008): 1,836 "
                     "binary word features, 159 tags."),
    "enron": _mulan("enron", "enron", 53, "Enron e-mail (UC Berkeley), 1,001 binary features, "
                    "53 categories."),
    "medical": _mulan("medical", "medical", 45, "Medical free text (CMC 2007 challenge), "
                      "1,449 binary features, 45 ICD-9 codes."),
    "tmc2007-500": _mulan("tmc2007", "tmc2007-500", 22, "TMC 2007 aviation safety reports, "
                          "500 binary features, 22 problem categories."),
    "yeast": _mulan("yeast", "yeast", 14, "Yeast gene functions (Elisseeff & Weston 2001; "
                    "Zhang & Zhou 2006), 103 numeric features, 14 classes; not text."),
    "emotions": _mulan("emotions", "emotions", 6, "Music emotions (Trohidis et al. 2008), "
                       "72 numeric features, 6 emotions; not text."),
    "reutersk500": _single("reutersk500/derived/reutersk500", 103,
                           "RCV1 subset with 500 selected features (MULAN Reuters-K500), "
                           "6,000 documents, 103 topics."),
}
for _k in range(1, 6):
    SPECS[f"rcv1subset{_k}"] = _single(
        f"rcv1subsets/derived/rcv1subset{_k}", 101,
        f"RCV1-v2 subset {_k} as distributed by MULAN: 6,000 documents, 47,236 tf-idf features "
        "(columns mapped by name AttK), 101 topics. Not the full RCV1-v2 of the paper.", 47236)
for _forum in ("chemistry", "chess", "coffee", "cooking", "cs", "philosophy"):
    SPECS[f"stackex_{_forum}"] = _single(
        f"stackex/derived/stackex_{_forum}", None,
        f"Stack Exchange {_forum} forum questions (Charte et al. 2015), term-count features, "
        "tags as labels.")
SPECS["synthetic"] = Spec(
    make_synthetic, (), None,
    "Synthetic multi-label documents: correlated labels, label-dependent word distributions, "
    "log-normal lengths, tf-idf (mlnn.datasets.synthetic).", defaults=_defaults(make_synthetic))


def names():
    """The registered dataset names, sorted."""
    return sorted(SPECS)


def check_request(name, options):
    """The options of dataset ``name`` with its defaults filled in; :class:`MLNNError` unless
    ``name`` is registered and takes ``options`` (checked before any work)."""
    if name not in SPECS:
        raise MLNNError(f"unknown dataset {name!r}; valid names: {', '.join(names())}")
    return _options(name, SPECS[name], options)


def _options(name, spec, options):
    unknown = sorted(set(options) - set(spec.defaults))
    if unknown:
        raise MLNNError(f"dataset {name!r} does not take option(s) {unknown}; it takes "
                        f"{sorted(spec.defaults) or 'no options'}")
    return {**spec.defaults, **options}


def placement_message(name, root, missing):
    """What to do about the ``missing`` files of dataset ``name``: download them, or where to get
    them and where to put them under ``root``."""
    files = ", ".join(str(Path(root) / relative) for relative in missing)
    verb = "does" if len(missing) == 1 else "do"
    head = f"dataset {name!r} needs {files}, which {verb} not exist"
    if name in SOURCES:
        urls = "; ".join(f"{s.url} (SHA-256 {s.sha256})" for s in SOURCES[name])
        return (f"{head}; downloading is turned off (--offline, MLNN_OFFLINE=1 or "
                f"download=False); fetch it with 'python -m mlnn data fetch {name}' (or run "
                f"without --offline), or download {urls} and place it in {root}")
    return (f"{head}; it cannot be downloaded automatically: get it from "
            f"{SPECS[name].published} and place "
            f"the files at exactly these paths (or set MLNN_DATA to the directory that holds "
            f"them)")


def _align_by_name(X, feature_names, size):
    """Map columns named ``AttK`` to column K-1 of a ``size``-wide matrix."""
    columns = []
    for name in feature_names:
        if not (name.startswith("Att") and name[3:].isdigit() and 1 <= int(name[3:]) <= size):
            raise MLNNError(f"feature {name!r} is not of the form AttK with K in 1..{size}")
        columns.append(int(name[3:]) - 1)
    columns = np.array(columns, dtype=np.int64)
    aligned = sp.csr_matrix((X.data, columns[X.indices], X.indptr), shape=(X.shape[0], size))
    aligned.sort_indices()
    return aligned, [f"Att{k}" for k in range(1, size + 1)]


def load(name, data_dir=None, download=False, progress=None, **options):
    """The :class:`Dataset` ``name`` (one of :func:`names`), read from ``data_dir`` (default
    ``$MLNN_DATA``) or the cache, a missing pinned archive fetched first if ``download``;
    ``options``: the dataset's own (``Spec.defaults``); ``progress`` as in
    :func:`~mlnn.datasets.download.fetch`."""
    started = time.perf_counter()
    options = check_request(name, options)
    spec = SPECS[name]
    if not spec.files:                                # generated, never cached
        return Dataset(name, description=spec.description, **spec.build(**options),
                       info={"options": options, "from_cache": False,
                             "load_seconds": time.perf_counter() - started})
    root = paths.check_data_dir(data_dir, "data_dir") if data_dir is not None \
        else paths.check_data_dir(paths.data_dir())
    missing = spec.missing(root, spec)
    if missing and name in SOURCES and download:
        fetch(name, data_dir=root, progress=progress)
    elif missing:
        raise MLNNError(placement_message(name, root, missing))
    checksums = [sha256_file(path) for path in spec.sources(root, spec)]
    path = cache.cache_path(name, checksums, {**options, "loader_version": LOADER_VERSION})
    cached = cache.load(path)
    from_cache, cache_written = cached is not None, False
    if not from_cache:
        parts, features, labels, extras = spec.build(root, spec, options)
        cache_written = cache.save(path, parts, features, labels, spec.description, extras)
        cached = parts, features, labels, spec.description, extras
    parts, features, labels, description, extras = cached
    info = {"options": options, "source_sha256": checksums, "cache_file": str(path),
            "from_cache": from_cache, "cache_written": cache_written,
            "load_seconds": time.perf_counter() - started}
    vectorizer = spec.vectorizer and spec.vectorizer(options, features, extras)
    return Dataset(name, feature_names=features, label_names=labels, description=description,
                   info=info, vectorizer=vectorizer, **parts)

