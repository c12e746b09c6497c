"""``python -m mlnn data info | export | fetch | list``: dataset statistics, export and download.

``info`` gives the statistics of the paper's Table 1 and more; ``export`` writes the matrices in
svmlight format with the feature and label names (four files, replaced together or not at all);
``fetch`` downloads and verifies a pinned archive (refused under ``MLNN_OFFLINE=1``).
"""

import json
import math

from mlnn.base.errors import MLNNError
from mlnn.base.fileio import (check_output_directory, check_output_path, output_directory,
                              write_files)
from mlnn.cli.options import (add_offline, add_option, add_progress, download_progress,
                              load_dataset)
from mlnn.datasets import fetch, names
from mlnn.datasets.download import check_base_url
from mlnn.datasets.paths import offline
from mlnn.datasets.svmlight import format_svmlight


def run_info(args):
    dataset = load_dataset(args, args.name, args.data_dir)
    stats = dataset.statistics()
    stats["load_seconds"] = round(dataset.info["load_seconds"], 4)
    stats["from_cache"] = dataset.info["from_cache"]
    if args.json:                   # NaN is not JSON: an undefined statistic is null
        plain = {k: None if isinstance(v, float) and not math.isfinite(v) else v
                 for k, v in stats.items()}
        print(json.dumps(plain, sort_keys=True, allow_nan=False))
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
    out = check_output_directory(args.out, "--out")
    name = args.name
    paths = {"train": out / f"{name}-train.svm", "test": out / f"{name}-test.svm",
             "features": out / f"{name}-features.txt", "labels": out / f"{name}-labels.txt"}
    if out.exists():
        for path in paths.values():
            check_output_path(path, "--out")
    dataset = load_dataset(args, name, args.data_dir)
    contents = {split: format_svmlight(getattr(dataset, f"X_{split}"),
                                       getattr(dataset, f"Y_{split}"), header=True,
                                       zero_based=True) for split in ("train", "test")}
    for kind, listed in (("features", dataset.feature_names), ("labels", dataset.label_names)):
        contents[kind] = "".join(entry.replace("\n", " ") + "\n" for entry in listed).encode()
    with output_directory(out, "--out"):
        write_files({path: contents[kind] for kind, path in paths.items()})   # all four, or none
    for path in paths.values():
        print(path)
    return 0


def run_fetch(args):
    if args.data_dir == "":
        raise MLNNError("--data-dir: the directory name is empty")
    if args.base_url is not None:
        check_base_url(args.base_url, "--base-url")
    if offline():
        raise MLNNError("downloads are turned off by MLNN_OFFLINE; unset it to fetch "
                        f"{args.name}")
    for path in fetch(args.name, data_dir=args.data_dir, base_url=args.base_url,
                      force=args.force, progress=download_progress(args)):
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
        add_offline(sub)
        add_progress(sub)

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
    add_progress(fetch)
    fetch.set_defaults(func=run_fetch)

    listing = commands.add_parser("list", help="registered dataset names")
    listing.set_defaults(func=run_list)
