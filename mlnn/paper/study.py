"""A study: the paper's comparison over a list of datasets × seeds, resumable.

:func:`run_study` runs :func:`mlnn.paper.reproduce.reproduce` for every (dataset, seed) and
stores each method as soon as it ends; run again, it skips what is stored (``force`` reruns),
so a study stopped by Ctrl-C or a crash resumes. The caller holds the output directory's lock.
"""

import contextlib
import os
from collections import namedtuple
from pathlib import Path

from mlnn.base import interrupts
from mlnn.base.errors import MLNNError
from mlnn.base.validation import check_bool, check_choice, check_integer
from mlnn.model.stopping_rules import STOPPING_RULES
from mlnn.paper.methods import PAPER_METHODS, resolve
from mlnn.paper.reproduce import merge_runs, reproduce, settings_record, write_results
from mlnn.paper.results import read_run, run_path, table_paths, tables_current

#: The arguments of :func:`~mlnn.paper.reproduce.reproduce` that define an experiment, and the
#: other ``options`` a study passes on to it.
SETTING_NAMES = ("quick", "refit", "learning_rates", "C_values", "select_by", "stopping")
RUN_OPTIONS = ("sensitivity", "progress", "other_rules")

#: One (dataset, seed) of a study, the methods it still has to run and those already stored.
Job = namedtuple("Job", ("dataset", "seed", "methods", "stored"))


def plan(datasets, seeds, out_dir, methods=None, force=False, **options):
    """The jobs of a study; :class:`MLNNError` for a wrong argument, or a stored run file that is
    damaged or holds other settings, before anything is run."""
    if not isinstance(out_dir, (str, os.PathLike)) or not os.fspath(out_dir):
        raise MLNNError(f"out_dir must be the path of a directory, got {out_dir!r}")
    datasets, seeds = _names(datasets, "datasets"), _names(seeds, "seeds")
    for name in datasets:
        if not isinstance(name, str) or not name:
            raise MLNNError(f"datasets: each must be a dataset name, got {name!r}")
    seeds = [check_integer(seed, "seed", minimum=0) for seed in seeds]
    methods = tuple(resolve(m) for m in (_names(methods, "methods") if methods is not None
                                         else PAPER_METHODS))
    check_bool(force, "force")
    _check_options(options)
    settings = {k: v for k, v in options.items() if k in SETTING_NAMES}
    settings_record(0, **settings)                  # checks the grids, select_by, stopping
    jobs = []
    for dataset in dict.fromkeys(datasets):
        for seed in dict.fromkeys(seeds):
            previous = read_run(run_path(out_dir, dataset, seed))
            merge_runs(previous, {"dataset": dataset, **settings_record(seed, **settings),
                                  "methods": {}}, out_dir)       # raises on other settings
            stored = tuple(previous["methods"]) if previous else ()
            todo = methods if force else tuple(m for m in methods if m not in stored)
            jobs.append(Job(dataset, seed, todo, stored))
    return jobs


def _names(values, name, allow_empty=False):
    """``values`` as a list; raise unless a collection (not a string), non-empty if required."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise MLNNError(f"{name} must be a list, got {values!r}; write [{values!r}] for one")
    values = list(values)
    if not values and not allow_empty:
        raise MLNNError(f"{name} is empty: give at least one")
    return values


def _check_options(options):
    """Raise unless ``options`` are options of :func:`~mlnn.paper.reproduce.reproduce` of the
    right kind (the grids: :func:`~mlnn.paper.reproduce.settings_record`)."""
    unknown = sorted(set(options) - set(SETTING_NAMES) - set(RUN_OPTIONS))
    if unknown:
        raise MLNNError(f"unknown option(s) {unknown}; valid: "
                        f"{sorted(SETTING_NAMES + RUN_OPTIONS)}")
    for flag in ("quick", "refit", "sensitivity", "progress"):
        if flag in options:
            check_bool(options[flag], flag)
    for rule in _names(options.get("other_rules", ()), "other_rules", allow_empty=True):
        check_choice(rule, "other stopping rule", tuple(STOPPING_RULES))


def run_study(datasets, seeds, out_dir, load, methods=None, force=False, log=print, **options):
    """Run every job of :func:`plan`, storing each method as it ends (``load(name)``: data)."""
    jobs = plan(datasets, seeds, out_dir, methods, force, **options)
    _remove_partial_files(out_dir, log)
    loaded = {}
    for job in jobs:
        _rebuild_tables(out_dir, job, log)
        if not job.methods:
            log(f"{job.dataset} seed {job.seed}: all {len(job.stored)} methods already stored "
                "(skipped; --force runs them again)")
            continue
        if job.stored and not force:
            log(f"{job.dataset} seed {job.seed}: {len(job.stored)} methods already stored, "
                f"running {', '.join(job.methods)}")
        if job.dataset not in loaded:
            dataset = load(job.dataset)
            if dataset.X_test.shape[0] == 0:
                raise MLNNError(f"the test split of {dataset.name} has no documents: there is "
                                "nothing to evaluate the methods on")
            loaded = {job.dataset: dataset}
        reproduce(loaded[job.dataset], methods=job.methods, random_state=job.seed, log=log,
                  after_each=_saver(out_dir, job), **options)
    return jobs


def _remove_partial_files(out_dir, log):
    """Remove the ``.part`` files a killed run left (safe: the caller holds the lock)."""
    partial = [path for pattern in (".run_*.part", ".table3_*.part")
               for path in Path(out_dir).glob(pattern)]
    for path in partial:
        with contextlib.suppress(OSError):
            path.unlink()
    if partial:
        log(f"removed {len(partial)} partial file(s) left in {out_dir} by an interrupted run")


def _rebuild_tables(out_dir, job, log):
    """Rewrite the tables of ``job``'s stored run if they are missing, stale or incomplete."""
    stored = read_run(run_path(out_dir, job.dataset, job.seed)) if job.stored else None
    if stored is not None and not tables_current(stored, out_dir):
        with interrupts.deferred():
            write_results(stored, out_dir)
        log(f"{job.dataset} seed {job.seed}: rebuilt "
            f"{', '.join(p.name for p in table_paths(out_dir, job.dataset, job.seed))} from "
            f"{run_path(out_dir, job.dataset, job.seed).name}")


def _saver(out_dir, job):
    """Store a run record merged with the stored one, Ctrl-C held back during the writes."""
    def save(run):
        with interrupts.deferred():
            previous = read_run(run_path(out_dir, job.dataset, job.seed))
            write_results(merge_runs(previous, run, out_dir), out_dir)
    return save
