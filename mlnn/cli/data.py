"""``data info | export | fetch | list``: Table 1's statistics and more; the matrices in svmlight
format with the feature and label names (four files, written together or not at all); a pinned
archive downloaded and verified (refused under ``MLNN_OFFLINE=1``); the dataset names."""

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

#: The lines of ``data info``: a label and the statistics it shows.
INFO_ROWS = (
    ("documents M (train / test)", "{M:,} ({n_train:,} / {n_test:,})"),
    ("features D", "{D:,}"),
    ("labels L", "{L:,}"),
    ("label cardinality C (train / test)", "{C:.3f} ({C_train:.3f} / {C_test:.3f})"),
    ("non-zero features per document", "{nnz_per_doc:.1f}"),
    ("labels without positives (all / train / test)", "{labels_without_positives} / "
     "{labels_without_train_positives} / {labels_without_test_positives}"),
    ("documents without labels (train / test)",
     "{docs_without_labels_train} / {docs_without_labels_test}"),
    ("load time", "{load_seconds:.2f} s{cached}"))


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
    stats["cached"] = " (from cache)" if stats["from_cache"] else ""
    width = max(len(label) for label, _ in INFO_ROWS)
    for label, value in INFO_ROWS:
        print(f"  {label:<{width}}  {value.format(**stats)}")
    return 0


def run_export(args):
    out = check_output_directory(args.out, "--out")
    name = args.name
    paths = {kind: out / f"{name}-{kind}.{'svm' if kind in ('train', 'test') else 'txt'}"
             for kind in ("train", "test", "features", "labels")}
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
    print(*paths.values(), sep="\n")
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
    print(*names(), sep="\n")
    return 0


def register(subparsers):
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
        return sub

    info = common(commands.add_parser("info", help="Table 1 statistics of a dataset"))
    info.add_argument("--json", action="store_true", help="print one JSON object")
    info.set_defaults(func=run_info)

    export = common(commands.add_parser("export", help="write a dataset in svmlight format"))
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

    commands.add_parser("list", help="registered dataset names").set_defaults(func=run_list)
