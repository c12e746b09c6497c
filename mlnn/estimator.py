"""``MultiLabelNN``: the paper's network behind a scikit-learn-style estimator (Sec. 3, 4).

Follows scikit-learn's conventions without depending on it: the constructor only stores
hyper-parameters; ``get_params``/``set_params``; ``fit`` learns attributes ending in ``_``;
``decision_function`` gives the scores o; ``predict`` gives 0/1 label sets through the threshold
predictor of Sec. 3.3.

What ``fit(X, Y)`` does:

1. Validation data: ``X_val, Y_val`` if given, else a seeded ``validation_fraction`` of the
   training documents is held out (never the test data).
2. Training (:func:`mlnn.training.train`) with minibatches, dropout, the chosen optimizer, and
   — when there is validation data — early stopping on validation rank loss (the paper's
   selection measure) with ``patience`` evaluations, restoring the best parameters.
3. Thresholds: per-document F1-optimal thresholds on the *training* documents' scores, learned by
   ℓ2-regularised linear regression on the inputs (Eq. 5); λ is chosen on the validation data
   (mean of micro- and macro-F1, macro over the labels present in the validation documents; see
   :func:`mlnn.thresholds.select_lambda`) unless ``threshold_lambda`` fixes it; with no validation
   data and no ``threshold_lambda``, λ = n, the number of training documents (our choice).
   ``threshold="fixed"`` uses 0.5 for sigmoid outputs and 0 for tanh outputs instead.
"""

import time

import numpy as np

from mlnn.builders import build, build_loss, build_optimizer
from mlnn.errors import MLNNError
from mlnn.metrics import evaluate
from mlnn.modelfile import names_array, read_model_file, write_model_file
from mlnn.network import Network
from mlnn.thresholds import DEFAULT_LAMBDAS, ThresholdPredictor, select_lambda
from mlnn.training import EarlyStopping, History, train
from mlnn.validation import (check_choice, check_fitted, check_fraction, check_length,
                             check_training_data, check_X, check_Y, validation_split)

DEFAULTS = {
    "hidden_units": 1000,           # the paper's hidden-layer size
    "hidden_activation": "relu",
    "loss": "ce",
    "optimizer": "adagrad",
    "learning_rate": 0.01,          # η0, chosen from {0.001, 0.01, 0.1} by the reproduction
    "momentum": 0.9,                # only for optimizer="momentum"
    "nesterov": False,
    "weight_decay": 0.0,            # ℓ2 λ on W1, W2 (BP-MLL as published uses it; the paper's don't)
    "decay_biases": False,          # also decay b1, b2 (as BP-MLL's published code does)
    "dropout": 0.0,                 # rate on the hidden units; the paper's NN_AD uses 0.5
    "input_dropout": 0.0,
    "batch_size": 64,
    "max_epochs": 100,
    "patience": 5,                  # evaluations without improvement before stopping
    "eval_every": None,             # parameter updates between evaluations (None: each epoch)
    "validation_fraction": 0.1,
    "threshold": "learned",
    "threshold_features": "input",
    "threshold_lambda": None,       # None: choose from DEFAULT_LAMBDAS on validation data
                                    # (without validation data: λ = the number of documents)
    "threshold_intercept": "penalised",   # Eq. 5: a constant feature, penalised like the rest
    "threshold_target": "f1",       # per-document F1-optimal targets (Sec. 3.3); or "hamming"
    "pwe_form": "factorised",
    "init": "glorot",
    "dtype": "float32",
    "random_state": None,
    "verbose": False,
}

#: The fitted scalars, stored in a model file's header by :meth:`MultiLabelNN.save`.
FITTED_SCALARS = ("n_updates_", "best_updates_", "threshold_lambda_", "fit_time_",
                  "n_features_in_", "n_labels_")


class MultiLabelNN:
    """A single-hidden-layer network for multi-label classification (Nam et al. 2014).

    Hyper-parameters (all keyword arguments; defaults in :data:`DEFAULTS`): ``hidden_units``,
    ``hidden_activation`` (relu, tanh, sigmoid), ``loss`` (``ce``: sigmoid outputs and
    cross-entropy; ``pwe``: tanh outputs and BP-MLL's pairwise exponential error),
    ``optimizer`` (adagrad, momentum, sgd), ``learning_rate`` η0, ``momentum``, ``nesterov``,
    ``weight_decay`` λ and ``decay_biases`` (ℓ2 penalty (λ/2)‖θ‖², see :mod:`mlnn.optimizers`),
    ``dropout``, ``input_dropout``, ``batch_size``, ``max_epochs``, ``patience``, ``eval_every``,
    ``validation_fraction``, ``threshold`` (learned, fixed), ``threshold_features`` (input,
    scores), ``threshold_lambda``, ``threshold_intercept`` (penalised, none, free),
    ``threshold_target`` (f1, hamming; see :class:`~mlnn.thresholds.ThresholdPredictor`),
    ``pwe_form``, ``init``, ``dtype`` (float32, float64),
    ``random_state``, ``verbose`` (True prints progress, or a callable taking each record).

    Fitted attributes: ``network_``, ``thresholds_`` (a :class:`~mlnn.thresholds.ThresholdPredictor`),
    ``history_`` (:class:`~mlnn.training.History`), ``n_updates_``, ``best_updates_``,
    ``threshold_lambda_``, ``threshold_scores_`` (λ → validation criterion, when λ was
    selected), ``fit_time_``, ``n_features_in_``, ``n_labels_``, ``feature_names_``,
    ``label_names_``.
    """

    def __init__(self, **params):
        unknown = sorted(set(params) - set(DEFAULTS))
        if unknown:
            raise MLNNError(f"unknown hyper-parameter(s) {unknown}; valid: {sorted(DEFAULTS)}")
        for name, default in DEFAULTS.items():
            setattr(self, name, params.get(name, default))

    def get_params(self, deep=True):
        """The hyper-parameters as a dict (``deep`` is accepted for scikit-learn compatibility)."""
        return {name: getattr(self, name) for name in DEFAULTS}

    def set_params(self, **params):
        """Set hyper-parameters; returns self. Fitted attributes are kept until the next fit."""
        unknown = sorted(set(params) - set(DEFAULTS))
        if unknown:
            raise MLNNError(f"unknown hyper-parameter(s) {unknown}; valid: {sorted(DEFAULTS)}")
        for name, value in params.items():
            setattr(self, name, value)
        return self

    def __repr__(self):
        changed = {k: v for k, v in self.get_params().items() if v != DEFAULTS[k]}
        return f"MultiLabelNN({', '.join(f'{k}={v!r}' for k, v in changed.items())})"

    # ----------------------------------------------------------------------------------------
    def _components(self, n_features, n_labels):
        """(network, loss, optimizer) from the hyper-parameters, each validated."""
        return build(n_features, n_labels, loss=self.loss, hidden_units=self.hidden_units,
                     hidden_activation=self.hidden_activation, optimizer=self.optimizer,
                     learning_rate=self.learning_rate, momentum=self.momentum,
                     nesterov=self.nesterov, weight_decay=self.weight_decay,
                     decay_biases=self.decay_biases, pwe_form=self.pwe_form,
                     random_state=self.random_state, dtype=self.dtype, init=self.init)

    def _validation_split(self, X, Y):
        """Hold out a seeded ``validation_fraction`` of the training documents (none for 0)."""
        fraction = check_fraction(self.validation_fraction, "validation_fraction",
                                  allow_zero=True)
        if fraction == 0:
            return X, Y, None, None
        fit, val = validation_split(X.shape[0], fraction=fraction,
                                    random_state=self.random_state)
        return X[fit], Y[fit], X[val], Y[val]

    def fit(self, X, Y, X_val=None, Y_val=None, feature_names=None, label_names=None):
        """Train on (X, Y); see the module docstring. Returns self."""
        started = time.perf_counter()
        check_choice(self.threshold, "threshold", ("learned", "fixed"))
        X, Y, X_val, Y_val = check_training_data(X, Y, X_val, Y_val)
        feature_names = _names(feature_names, "feature_names", X.shape[1])
        label_names = _names(label_names, "label_names", Y.shape[1])
        if X_val is None:
            X, Y, X_val, Y_val = self._validation_split(X, Y)
        network, loss, optimizer = self._components(X.shape[1], Y.shape[1])
        stopper = EarlyStopping("rankloss", "min", self.patience) if X_val is not None else None
        history = train(network, loss, optimizer, X, Y, batch_size=self.batch_size,
                        max_epochs=self.max_epochs, dropout=self.dropout,
                        input_dropout=self.input_dropout, X_val=X_val, Y_val=Y_val,
                        eval_every=self.eval_every, early_stopping=stopper,
                        random_state=self.random_state, verbose=self._progress())
        self.network_, self.loss_, self.optimizer_, self.history_ = network, loss, optimizer, history
        self.n_updates_ = int(history.records[-1]["updates"])
        self.best_updates_ = int(history.best["updates"]) if history.best else self.n_updates_
        self.n_features_in_, self.n_labels_ = X.shape[1], Y.shape[1]
        self.feature_names_, self.label_names_ = feature_names, label_names
        self._fit_thresholds(X, Y, X_val, Y_val)
        self.fit_time_ = time.perf_counter() - started
        return self

    def _fit_thresholds(self, X, Y, X_val, Y_val):
        """The threshold predictor of Sec. 3.3, fitted on the training documents' scores."""
        scores = self.network_.scores(X)
        options = {"features": self.threshold_features, "intercept": self.threshold_intercept,
                   "target": self.threshold_target}
        self.threshold_scores_ = {}
        if self.threshold == "fixed":
            fixed = 0.0 if self.network_.output.name == "tanh" else 0.5
            self.thresholds_ = ThresholdPredictor(fixed=fixed).fit(None, scores, Y)
            self.threshold_lambda_ = None
        elif self.threshold_lambda is not None or X_val is None:
            # ours: with nothing to choose λ on, λ = n weighs the penalty like the *mean*
            # squared error with weight 1 (Eq. 5's λ multiplies the summed error)
            lam = float(X.shape[0]) if self.threshold_lambda is None else self.threshold_lambda
            self.thresholds_ = ThresholdPredictor(lam=lam, **options).fit(X, scores, Y)
            self.threshold_lambda_ = float(lam)
        else:
            self.thresholds_, self.threshold_lambda_, self.threshold_scores_ = select_lambda(
                X, scores, Y, X_val, self.network_.scores(X_val), Y_val,
                lams=DEFAULT_LAMBDAS, **options)

    def _progress(self):
        if callable(self.verbose):
            return self.verbose
        if not self.verbose:
            return None

        def show(record):
            done = record["epoch"] / self.max_epochs
            eta = record["elapsed"] * (1 - done) / done if done else float("nan")
            measures = "  ".join(f"{k} {record[k]:.4f}" for k in ("rankloss", "MAP") if k in record)
            print(f"epoch {record['epoch']:3d}  updates {record['updates']:6d}  "
                  f"loss {record['train_loss']:.4f}  {measures}  "
                  f"{record['elapsed']:6.1f}s  (at most {eta:.0f}s more)", flush=True)
        return show

    # ----------------------------------------------------------------------------------------
    def _check_fitted(self):
        check_fitted(self, "network_")

    def decision_function(self, X):
        """The scores o = f_o(z2) (n × L, dense), highest for the most relevant labels."""
        self._check_fitted()
        return self.network_.scores(check_X(X, "X", n_features=self.n_features_in_,
                                            dtype=self.network_.dtype))

    def predict(self, X):
        """0/1 label sets (n × L CSR): ŷ_kl = 1 iff o_kl > T(x_k)."""
        self._check_fitted()
        X = check_X(X, "X", n_features=self.n_features_in_)
        return self.thresholds_.predict(X, self.decision_function(X))

    def evaluate(self, X, Y):
        """The ten measures of the paper (see :func:`mlnn.metrics.evaluate`) on (X, Y)."""
        self._check_fitted()
        X = check_X(X, "X", n_features=self.n_features_in_)
        scores = self.decision_function(X)
        Y = check_Y(Y, "Y", n_samples=X.shape[0], n_labels=self.n_labels_)
        return evaluate(Y, scores, self.thresholds_.predict(X, scores))

    def save(self, path, include_optimizer=False):
        """Write the fitted model to one ``.npz`` file (see :mod:`mlnn.modelfile`).

        ``include_optimizer`` also stores the optimizer's state, to continue training.
        """
        self._check_fitted()
        params = self.get_params()
        params["verbose"] = bool(params["verbose"]) if not callable(params["verbose"]) else False
        t = self.thresholds_
        meta = {"params": params,
                "fitted": {name: getattr(self, name) for name in FITTED_SCALARS},
                "hidden": self.network_.hidden_activation.name, "loss": self.loss_.name,
                "pwe_form": getattr(self.loss_, "form", None),
                "thresholds": {"lam": t.lam, "features": t.features, "fixed": t.fixed,
                               "intercept": float(t.intercept_), "form": t.intercept,
                               "target": t.target, "n_features_in": t.n_features_in_},
                "history": self.history_.records,
                "optimizer": {"name": self.optimizer if include_optimizer else None,
                              "t": self.optimizer_.t}}
        arrays = dict(self.network_.params)
        arrays["threshold_coef"] = np.asarray(t.coef_, dtype=np.float64)
        arrays["feature_names"] = names_array(self.feature_names_)
        arrays["label_names"] = names_array(self.label_names_)
        if include_optimizer:
            for param, slots in self.optimizer_.state.items():
                for slot, value in slots.items():
                    arrays[f"optimizer/{param}/{slot}"] = value
        write_model_file(path, arrays, meta)

    @classmethod
    def load(cls, path):
        """Read a model written by :meth:`save` (no pickle is involved)."""
        arrays, meta = read_model_file(path)
        params = {"threshold_intercept": "free", **meta["params"]}   # older files: see _thresholds
        model = cls(**params)
        model.loss_ = build_loss(meta["loss"], meta["pwe_form"] or "factorised")
        model.network_ = Network(*(arrays[name] for name in ("W1", "b1", "W2", "b2")),
                                 meta["hidden"], model.loss_.output)
        for name in FITTED_SCALARS:
            setattr(model, name, meta["fitted"][name])
        model.thresholds_ = _thresholds(meta["thresholds"], arrays["threshold_coef"])
        model.history_ = History(records=meta["history"])
        model.feature_names_ = arrays["feature_names"].tolist() or None
        model.label_names_ = arrays["label_names"].tolist() or None
        model.optimizer_ = model._saved_optimizer(meta["optimizer"], arrays)
        return model

    def _saved_optimizer(self, saved, arrays):
        """The optimizer, with its state when the file carries it (to continue training)."""
        optimizer = build_optimizer(self.optimizer, self.learning_rate, self.momentum,
                                    self.nesterov, self.weight_decay, self.decay_biases)
        optimizer.t = saved["t"]
        for name, value in arrays.items():
            if name.startswith("optimizer/"):
                _, param, slot = name.split("/")
                optimizer.state.setdefault(param, {})[slot] = value
        return optimizer


def _names(names, what, count):
    """``names`` as a list of ``count`` entries, or None."""
    return None if names is None else check_length(names, what, count)


def _thresholds(saved, coef):
    """A fitted :class:`~mlnn.thresholds.ThresholdPredictor` from a model file's header and θ."""
    # files written before the intercept form and the target were stored used the free intercept
    thresholds = ThresholdPredictor(lam=saved["lam"], features=saved["features"],
                                    fixed=saved["fixed"], intercept=saved.get("form", "free"),
                                    target=saved.get("target", "f1"))
    thresholds.coef_, thresholds.intercept_ = coef, saved["intercept"]
    thresholds.n_features_in_, thresholds.n_iter_ = saved["n_features_in"], 0
    return thresholds
