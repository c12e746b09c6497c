"""Model files: a fitted :class:`~mlnn.estimator.MultiLabelNN` as one ``.npz``, loaded without pickle.

Entries (every one a plain numeric or unicode array, so ``np.load(..., allow_pickle=False)`` reads
the file):

=====================  ================================================================
``format``             the string ``mlnn-model``
``format_version``     :data:`FORMAT_VERSION`
``meta``               JSON: hyper-parameters, fitted scalars, activation/loss names, history
``W1 b1 W2 b2``        the network's parameters
``threshold_coef``     θ of the threshold predictor T(x) = θᵀx + b (empty for a fixed threshold)
``feature_names``      unicode arrays (empty when unknown)
``label_names``
``optimizer/<p>/<s>``  optimizer state (only with ``include_optimizer=True``)
``checksum``           SHA-256 over all other entries (name, dtype, shape, bytes)
=====================  ================================================================

A missing, truncated or tampered file, or one of another format version, raises
:class:`~mlnn.errors.ModelFileError` saying which.
"""

import hashlib
import json
import os
import zipfile
from pathlib import Path

import numpy as np

from mlnn.errors import ModelFileError
from mlnn.losses import PairwiseExponential, get_loss
from mlnn.network import Network
from mlnn.optimizers import get_optimizer
from mlnn.thresholds import ThresholdPredictor
from mlnn.training import History

FORMAT = "mlnn-model"
FORMAT_VERSION = 1
FITTED_SCALARS = ("n_updates_", "best_updates_", "threshold_lambda_", "fit_time_",
                  "n_features_in_", "n_labels_")


def checksum(arrays):
    """SHA-256 (hex) over the entries' names, dtypes, shapes and bytes, in name order."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}|{array.dtype.str}|{array.shape}|".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def _names(names):
    return np.array([] if names is None else list(names), dtype=str)


def save_model(model, path, include_optimizer=False):
    """Write a fitted estimator to ``path`` (atomically: a temporary file, then a rename)."""
    params = model.get_params()
    params["verbose"] = bool(params["verbose"]) if not callable(params["verbose"]) else False
    thresholds = model.thresholds_
    meta = {
        "params": params,
        "fitted": {name: getattr(model, name) for name in FITTED_SCALARS},
        "hidden": model.network_.hidden.name,
        "loss": model.loss_.name,
        "pwe_form": getattr(model.loss_, "form", None),
        "thresholds": {"lam": thresholds.lam, "features": thresholds.features,
                       "fixed": thresholds.fixed, "intercept": float(thresholds.intercept_),
                       "n_features_in": thresholds.n_features_in_},
        "history": model.history_.records,
        "optimizer": {"name": model.optimizer if include_optimizer else None,
                      "t": model.optimizer_.t},
    }
    arrays = dict(model.network_.params)
    arrays["threshold_coef"] = np.asarray(thresholds.coef_, dtype=np.float64)
    arrays["feature_names"] = _names(model.feature_names_)
    arrays["label_names"] = _names(model.label_names_)
    if include_optimizer:
        for param, slots in model.optimizer_.state.items():
            for slot, value in slots.items():
                arrays[f"optimizer/{param}/{slot}"] = value
    arrays["format"] = np.array(FORMAT)
    arrays["format_version"] = np.array(FORMAT_VERSION)
    arrays["meta"] = np.array(json.dumps(meta, default=_json_default))
    arrays["checksum"] = np.array(checksum(arrays))
    path = Path(path)
    temporary = path.with_name(path.name + ".part")
    with open(temporary, "wb") as handle:
        np.savez(handle, **arrays)
    os.replace(temporary, path)


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot store {type(value).__name__} in a model file")


def _read(path):
    """All entries of the file, checked for format, version and checksum."""
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"model file {path} does not exist")
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError) as error:
        raise ModelFileError(f"model file {path} is truncated or not an mlnn model file "
                             f"({type(error).__name__}: {error})") from None
    for name in ("format", "format_version", "meta", "checksum"):
        if name not in arrays:
            raise ModelFileError(f"model file {path} has no {name!r} entry: not an mlnn model file")
    if str(arrays["format"]) != FORMAT:
        raise ModelFileError(f"model file {path} has format {str(arrays['format'])!r}, "
                             f"expected {FORMAT!r}")
    version = int(arrays["format_version"])
    if version != FORMAT_VERSION:
        raise ModelFileError(f"model file {path} has format version {version}; this mlnn reads "
                             f"version {FORMAT_VERSION}")
    stored = str(arrays.pop("checksum"))
    if checksum(arrays) != stored:
        raise ModelFileError(f"model file {path} fails its checksum: it was modified or corrupted")
    return arrays


def load_model(path):
    """Read a model file written by :func:`save_model` into a fitted ``MultiLabelNN``."""
    from mlnn.estimator import MultiLabelNN
    arrays = _read(path)
    meta = json.loads(str(arrays["meta"]))
    model = MultiLabelNN(**meta["params"])
    loss = get_loss(meta["loss"])
    if isinstance(loss, PairwiseExponential):
        loss = PairwiseExponential(meta["pwe_form"])
    model.network_ = Network(*(arrays[name] for name in ("W1", "b1", "W2", "b2")),
                             hidden=meta["hidden"], output=loss.output)
    model.loss_ = loss
    for name, value in meta["fitted"].items():
        setattr(model, name, value)
    t = meta["thresholds"]
    thresholds = ThresholdPredictor(lam=t["lam"], features=t["features"], fixed=t["fixed"])
    thresholds.coef_, thresholds.intercept_ = arrays["threshold_coef"], t["intercept"]
    thresholds.n_features_in_, thresholds.n_iter_ = t["n_features_in"], 0
    model.thresholds_ = thresholds
    model.history_ = History(records=meta["history"])
    model.feature_names_ = arrays["feature_names"].tolist() or None
    model.label_names_ = arrays["label_names"].tolist() or None
    model.optimizer_ = _optimizer(model, meta["optimizer"], arrays)
    return model


def _optimizer(model, saved, arrays):
    """The optimizer, with its state when the file carries it (to continue training)."""
    options = {"momentum": model.momentum, "nesterov": model.nesterov} \
        if model.optimizer == "momentum" else {}
    optimizer = get_optimizer(model.optimizer, model.learning_rate, **options)
    optimizer.t = saved["t"]
    for name, value in arrays.items():
        if name.startswith("optimizer/"):
            _, param, slot = name.split("/")
            optimizer.state.setdefault(param, {})[slot] = value
    return optimizer
