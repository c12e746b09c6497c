"""A study: the paper's comparison over a list of datasets × seeds, resumable.

:func:`run_study` runs :func:`mlnn.paper.reproduce.reproduce` for every (dataset, seed) and
stores each method in the run file of its dataset and seed as soon as it ends
(:func:`mlnn.paper.reproduce.write_results`, names in :mod:`mlnn.paper.results`). Run again with
the same arguments, it skips every (dataset, seed, method) already stored and runs only the
rest, so a study stopped by Ctrl-C, a crash or a deadline resumes where it stopped; ``force``
runs them all again (each rerun replaces its stored result).

Before any training, every stored run file the study will extend is read: a damaged file or a
stored run with other settings stops the study at once with a message naming the file, so an
hour of work is never lost at the first write. The caller holds the lock of the output
directory (:func:`mlnn.base.lock.directory_lock`) for the whole study.
"""

from dataclasses import dataclass

from mlnn.paper.methods import PAPER_METHODS, resolve
from mlnn.paper.reproduce import (merge_runs, read_stored, reproduce, settings_record,
                                  write_results)

#: The keyword arguments of :func:`mlnn.paper.reproduce.reproduce` that define an experiment.
SETTING_NAMES = ("quick", "refit", "batch_size", "validation_fraction", "learning_rates",
                 "C_values", "select_by", "stopping")


@dataclass(frozen=True)
class Job:
    """One (dataset, seed) of a study and the methods it still has to run."""

    dataset: str
    seed: int
    methods: tuple
    stored: tuple


def plan(datasets, seeds, out_dir, methods=None, force=False, **options):
    """The jobs of a study, checked against the run files stored in ``out_dir``.

    ``options`` are keyword arguments of :func:`~mlnn.paper.reproduce.reproduce`. Raises
    :class:`~mlnn.base.errors.MLNNError` if a stored run file is damaged or holds other settings.
    """
    methods = tuple(resolve(m) for m in (methods or PAPER_METHODS))
    settings = {k: v for k, v in options.items() if k in SETTING_NAMES}
    jobs = []
    for dataset in dict.fromkeys(datasets):
        for seed in dict.fromkeys(seeds):
            previous = read_stored(out_dir, dataset, seed)
            stored = tuple(previous["methods"]) if previous else ()
            if previous is not None:
                merge_runs(previous, {"dataset": dataset, **settings_record(seed, **settings),
                                      "methods": {}}, out_dir)
            todo = methods if force else tuple(m for m in methods if m not in stored)
            jobs.append(Job(dataset, seed, todo, stored))
    return jobs


def run_study(datasets, seeds, out_dir, load, methods=None, force=False, log=print, **options):
    """Run every job of :func:`plan`, storing each method as it ends; returns the jobs.

    ``load(name)`` returns the dataset ``name`` (loaded once for all its seeds, and only if one
    of its jobs has something to run); ``options`` go to
    :func:`~mlnn.paper.reproduce.reproduce`.
    """
    jobs = plan(datasets, seeds, out_dir, methods, force, **options)
    loaded = {}
    for job in jobs:
        if not job.methods:
            log(f"{job.dataset} seed {job.seed}: all {len(job.stored)} methods already stored "
                "(skipped; --force runs them again)")
            continue
        if job.stored and not force:
            log(f"{job.dataset} seed {job.seed}: {len(job.stored)} methods already stored, "
                f"running {', '.join(job.methods)}")
        if job.dataset not in loaded:
            loaded.clear()
            loaded[job.dataset] = load(job.dataset)
        reproduce(loaded[job.dataset], methods=job.methods, random_state=job.seed, log=log,
                  after_each=_saver(out_dir, job), **options)
    return jobs


def _saver(out_dir, job):
    """Store a run record merged with what is stored for its dataset and seed."""
    def save(run):
        write_results(merge_runs(read_stored(out_dir, job.dataset, job.seed), run, out_dir),
                      out_dir)
    return save
