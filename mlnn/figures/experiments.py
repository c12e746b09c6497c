"""The convergence experiments behind the paper's Figs. 3 and 4, as plain functions.

Each trains a few networks that differ in one or two settings (a :class:`Setting`) on the same
data, evaluates them every ``eval_every`` updates on a validation split of the training data
(never the test split), and returns their learning curves. One function per figure:
:func:`convergence_experiment` (Fig. 3 left), :func:`dropout_experiment` (Fig. 3 right),
:func:`learning_rate_experiment` (Fig. 4), each on its figure's dataset or a stand-in
(:data:`DATASETS`: Delicious for EUR-Lex, Reuters-21578 for German Education Index). Every
experiment is seeded; ``fast=True`` shrinks everything so the pipeline runs in seconds (its
curves show nothing); the full sizes (:data:`FULL`) are smaller than the paper's.
"""

import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from mlnn import datasets
from mlnn.base.errors import MLNNError
from mlnn.base.fileio import check_output_path
from mlnn.base.validation import (check_choice, check_positive_int, check_X, check_Y,
                                  validation_split)
from mlnn.figures.curves import CURVE_COLUMNS, UPDATE_RULES, Setting, load_csv, save_csv
from mlnn.model.builders import build
from mlnn.model.params import DEFAULT
from mlnn.nn.training import train


#: Run sizes per experiment: full, and fast (a pipeline check in seconds).
FULL = {"convergence": dict(hidden_units=256, max_updates=1500, eval_every=50),
        "dropout": dict(hidden_units=(256, 1024), max_updates=2400, eval_every=100),
        "learning_rate": dict(hidden_units=256, max_updates=1000, eval_every=10)}
FAST = {"convergence": dict(hidden_units=16, max_updates=30, eval_every=10),
        "dropout": dict(hidden_units=(8, 32), max_updates=30, eval_every=10),
        "learning_rate": dict(hidden_units=16, max_updates=30, eval_every=5)}

#: The training and validation documents kept, full and fast (None: all of them).
DOCUMENTS = {False: dict(max_train=None, max_val=None), True: dict(max_train=1200, max_val=300)}

#: The dataset of each experiment: the figure's own, or a stand-in where it is not available.
DATASETS = {"convergence": "reuters21578", "dropout": "delicious", "learning_rate": "reuters21578"}


def prepare_data(dataset, validation_fraction=0.2, max_train=None, max_val=None,
                 random_state=0):
    """``{"name", "X_train", "Y_train", "X_val", "Y_val"}`` of a dataset (a name or an object
    with ``X_train``, ``Y_train``), validation carved from training; ``max_*``: a seeded subset."""
    if isinstance(dataset, str):
        name, data = dataset, datasets.load(dataset)
    else:
        name, data = getattr(dataset, "name", "data"), dataset
    X = check_X(data.X_train, "X_train")
    Y = check_Y(data.Y_train, "Y_train", n_samples=X.shape[0])
    fit_rows, val_rows = validation_split(X.shape[0], fraction=validation_fraction,
                                          random_state=random_state)
    rng = np.random.default_rng(random_state + 1)
    fit_rows = _subsample(fit_rows, max_train, rng)
    val_rows = _subsample(val_rows, max_val, rng)
    return {"name": name, "X_train": X[fit_rows], "Y_train": Y[fit_rows],
            "X_val": X[val_rows], "Y_val": Y[val_rows]}


def _subsample(rows, size, rng):
    """A seeded subset of ``size`` of the sorted ``rows`` (all of them if ``size`` is None)."""
    if size is None or size >= rows.size:
        return rows
    return rows[np.sort(rng.choice(rows.size, size, replace=False))]


def components(setting, n_features, n_labels, random_state=0):
    """(network, loss, optimizer) of a :class:`Setting` (float32), seeded by ``random_state``."""
    return build(n_features, n_labels, loss=setting.loss, hidden_units=setting.hidden_units,
                 hidden_activation=setting.hidden_activation, optimizer=setting.optimizer,
                 learning_rate=setting.learning_rate, momentum=setting.momentum,
                 random_state=random_state)


def run_setting(setting, data, max_updates, eval_every, batch_size=DEFAULT.batch_size,
                random_state=0, verbose=False):
    """Train one network for ``max_updates`` updates: its curve (:mod:`mlnn.figures.curves`).
    Settings of the same size start from the same weights."""
    X, Y = data["X_train"], data["Y_train"]
    network, loss, optimizer = components(setting, X.shape[1], Y.shape[1], random_state)
    batches_per_epoch = -(-X.shape[0] // batch_size)
    max_epochs = -(-max_updates // batches_per_epoch)
    start = time.perf_counter()
    history = train(network, loss, optimizer, X, Y, batch_size=batch_size,
                    max_epochs=max_epochs, max_updates=max_updates, dropout=setting.dropout,
                    X_val=data["X_val"], Y_val=data["Y_val"], eval_every=eval_every,
                    random_state=random_state, input_dropout=DEFAULT.input_dropout)
    if verbose:
        last = history.records[-1]
        print(f"{setting.label:>32s}: {last['updates']} updates, rank loss {last['rankloss']:.4f}, "
              f"MAP {last['MAP']:.4f}, {time.perf_counter() - start:.0f} s", flush=True)
    return {**asdict(setting), "dataset": data["name"],
            **{key: history.column(key).tolist() for key in CURVE_COLUMNS}}


def _sizes(experiment, fast, overrides):
    sizes = {**DOCUMENTS[bool(fast)], **(FAST if fast else FULL)[experiment]}
    unknown = sorted(set(overrides) - set(sizes))
    if unknown:
        raise MLNNError(f"unknown size option(s) {unknown}; the {experiment} experiment takes "
                        f"{sorted(sizes)}")
    sizes.update({k: v for k, v in overrides.items() if v is not None})
    for name in ("max_updates", "eval_every"):
        check_positive_int(sizes[name], name)
    return sizes


def _run(experiment, settings, dataset, sizes, random_state, csv_path, verbose):
    """:func:`run_setting` for each setting on the same data, saved to ``csv_path`` if given."""
    if csv_path is not None:
        check_output_path(csv_path, "csv_path")
    data = prepare_data(dataset, max_train=sizes["max_train"], max_val=sizes["max_val"],
                        random_state=random_state)
    curves = [{**run_setting(setting, data, sizes["max_updates"], sizes["eval_every"],
                             random_state=random_state, verbose=verbose),
               "experiment": experiment} for setting in settings]
    if csv_path is not None:
        save_csv(curves, csv_path)
    return curves


def convergence_experiment(dataset=DATASETS["convergence"], fast=False, random_state=0,
                           csv_path=None, verbose=False, **sizes):
    """Fig. 3 (left): CE; AdaGrad (η0 = 0.01) vs momentum (η = 0.01, μ = 0.9) × ReLU, tanh and
    sigmoid hidden units. ``sizes`` override :data:`FULL` / :data:`FAST` (e.g. ``max_updates``)."""
    sizes = _sizes("convergence", fast, sizes)
    settings = [Setting(f"{UPDATE_RULES[opt]}, {hidden}", loss="ce", hidden_activation=hidden,
                        optimizer=opt, learning_rate=0.01, hidden_units=sizes["hidden_units"])
                for opt in ("adagrad", "momentum") for hidden in ("relu", "tanh", "sigmoid")]
    return _run("convergence", settings, dataset, sizes, random_state, csv_path, verbose)


def dropout_experiment(dataset=DATASETS["dropout"], fast=False, random_state=0,
                       csv_path=None, verbose=False, learning_rate=DEFAULT.learning_rate,
                       **sizes):
    """Fig. 3 (right): CE, ReLU, AdaGrad (η0 = ``learning_rate``); dropout 0.5 on the hidden units
    vs none, for two hidden-layer sizes; validation rank loss against updates (the paper: EUR-Lex).
    """
    sizes = _sizes("dropout", fast, sizes)
    settings = [Setting(f"{F} hidden, {'dropout 0.5' if rate else 'no dropout'}", loss="ce",
                        hidden_activation="relu", optimizer="adagrad",
                        learning_rate=learning_rate, dropout=rate, hidden_units=F)
                for F in sizes["hidden_units"] for rate in (0.0, 0.5)]
    return _run("dropout", settings, dataset, sizes, random_state, csv_path, verbose)


def learning_rate_experiment(dataset=DATASETS["learning_rate"], fast=False, random_state=0,
                             csv_path=None, verbose=False, **sizes):
    """Fig. 4: PWE vs CE, ReLU hidden units, AdaGrad at η0 ∈ {0.01, 0.1}, with and without
    dropout 0.5 (the paper: German Education Index)."""
    sizes = _sizes("learning_rate", fast, sizes)
    settings = [Setting(f"{loss.upper()}, η={eta}{', dropout' if rate else ''}", loss=loss,
                        hidden_activation="relu", optimizer="adagrad", learning_rate=eta,
                        dropout=rate, hidden_units=sizes["hidden_units"])
                for loss in ("pwe", "ce") for eta in (0.01, 0.1) for rate in (0.0, 0.5)]
    return _run("learning_rate", settings, dataset, sizes, random_state, csv_path, verbose)


EXPERIMENTS = {
    "convergence": convergence_experiment,
    "dropout": dropout_experiment,
    "learning_rate": learning_rate_experiment,
}


def run_or_load(name, csv_path, fast=False, rerun=False, **kwargs):
    """Curves of ``name``: read from ``csv_path`` if it exists (full mode, not ``rerun``), else
    run and saved there."""
    check_choice(name, "experiment", EXPERIMENTS)
    path = Path(csv_path)
    if not fast and not rerun and path.exists():
        return load_csv(path)
    return EXPERIMENTS[name](fast=fast, csv_path=path, **kwargs)
