"""``python -m mlnn data ...``: dataset statistics, export and download.

* ``data info NAME [--json] [-o KEY=VALUE ...]`` -- the statistics of the paper's Table 1
  (M, D, L, C), train/test sizes, non-zeros per document, labels without positives, documents
  without labels, and the load time;
* ``data export NAME --format svmlight --out DIR`` -- writes ``NAME-train.svm`` and
  ``NAME-test.svm`` (Extreme-Classification header, 0-based ids) plus ``NAME-features.txt`` and
  ``NAME-labels.txt`` (one name per line), so other tools can use exactly the same matrices;
* ``data fetch NAME [--base-url URL]`` -- download and verify the pinned archive;
* ``data list`` -- the registered names.
"""

import json
import time
from pathlib import Path

from mlnn.cli.options import add_option, parse_options
from mlnn.datasets import fetch, load, names
from mlnn.datasets.svmlight import write_svmlight
from mlnn.errors import MLNNError


def _load(args):
    return load(args.name, data_dir=args.data_dir, **parse_options(args.option))


def run_info(args):
    started = time.perf_counter()
    dataset = _load(args)
    stats = dataset.statistics()
    stats["load_seconds"] = round(time.perf_counter() - started, 4)
    stats["from_cache"] = bool(dataset.info.get("from_cache"))
    if args.json:
        print(json.dumps(stats, sort_keys=True))
        return 0
    print(f"{dataset.name}: {dataset.description}")
    rows = [
        ("documents M (train / test)", f"{stats['M']:,} ({stats['n_train']:,} / "
                                       f"{stats['n_test']:,})"),
        ("features D", f"{stats['D']:,}"),
        ("labels L", f"{stats['L']:,}"),
        ("label cardinality C (train / test)", f"{stats['C']:.3f} ({stats['C_train']:.3f} / "
                                               f"{stats['C_test']:.3f})"),
        ("non-zero features per document", f"{stats['nnz_per_doc']:.1f}"),
        ("labels without positives (all / train / test)",
         f"{stats['labels_without_positives']} / {stats['labels_without_train_positives']} / "
         f"{stats['labels_without_test_positives']}"),
        ("documents without labels (train / test)",
         f"{stats['docs_without_labels_train']} / {stats['docs_without_labels_test']}"),
        ("load time", f"{stats['load_seconds']:.2f} s"
                      + (" (from cache)" if stats["from_cache"] else "")),
    ]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"  {label:<{width}}  {value}")
    return 0


def run_export(args):
    dataset = _load(args)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise MLNNError(f"--out {out}: cannot create the directory ({error})") from None
    written = []
    for split in ("train", "test"):
        path = out / f"{dataset.name}-{split}.svm"
        write_svmlight(path, getattr(dataset, f"X_{split}"), getattr(dataset, f"Y_{split}"),
                       header=True, zero_based=True)
        written.append(path)
    for kind, names in (("features", dataset.feature_names), ("labels", dataset.label_names)):
        path = out / f"{dataset.name}-{kind}.txt"
        path.write_text("".join(name.replace("\n", " ") + "\n" for name in names),
                        encoding="utf-8")
        written.append(path)
    for path in written:
        print(path)
    return 0


def run_fetch(args):
    for path in fetch(args.name, data_dir=args.data_dir, base_url=args.base_url,
                      force=args.force):
        print(path)
    return 0


def run_list(args):
    for name in names():
        print(name)
    return 0


def register(subparsers):
    """Add the ``data`` command and its subcommands to ``subparsers``."""
    parser = subparsers.add_parser("data", help="dataset statistics, export and download")
    commands = parser.add_subparsers(dest="data_command", metavar="SUBCOMMAND")
    commands.required = True

    def common(sub):
        sub.add_argument("name", metavar="NAME", help="dataset name (see `data list`)")
        sub.add_argument("--data-dir", default=None,
                         help="data directory (default: $MLNN_DATA or ~/.cache/mlnn)")
        add_option(sub)

    info = commands.add_parser("info", help="Table 1 statistics of a dataset")
    common(info)
    info.add_argument("--json", action="store_true", help="print one JSON object")
    info.set_defaults(func=run_info)

    export = commands.add_parser("export", help="write a dataset in svmlight format")
    common(export)
    export.add_argument("--format", choices=["svmlight"], required=True)
    export.add_argument("--out", required=True, metavar="DIR", help="output directory")
    export.set_defaults(func=run_export)

    fetch = commands.add_parser("fetch", help="download and verify a pinned archive")
    fetch.add_argument("name", metavar="NAME")
    fetch.add_argument("--data-dir", default=None)
    fetch.add_argument("--base-url", default=None, help="mirror to download from")
    fetch.add_argument("--force", action="store_true", help="download even if verified")
    fetch.set_defaults(func=run_fetch)

    listing = commands.add_parser("list", help="registered dataset names")
    listing.set_defaults(func=run_list)
