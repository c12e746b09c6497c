"""``MultiLabelNN``: the paper's network behind a scikit-learn estimator (Sec. 3, 4).

The constructor only stores the hyper-parameters (:mod:`mlnn.model.params`); ``fit`` learns
attributes ending in ``_``; ``decision_function`` gives the scores o, ``predict`` 0/1 label sets
through the threshold predictor of Sec. 3.3. scikit-learn's tools accept it through its tags;
mlnn itself never imports scikit-learn. ``fit(X, Y)``:

1. holds out a seeded ``validation_fraction`` of the training documents, unless given
   ``X_val, Y_val`` (never the test data);
2. trains (:func:`mlnn.nn.training.train`), with early stopping by the ``stopping`` rule on the
   validation data, restoring the best parameters;
3. fits the thresholds of Eq. 5 on the training documents' scores, λ chosen on the validation
   data (:func:`mlnn.evaluation.thresholds.select_lambda`) unless ``threshold_lambda`` fixes it;
   without validation data λ = n, the number of training documents (our choice).
"""

import sys
import time
from dataclasses import dataclass
from typing import Callable, Optional, Union

import numpy as np

from mlnn.base.errors import MLNNError, ModelFileError
from mlnn.base.progress import epoch_reporter
from mlnn.base.validation import (check_fitted, check_length, check_sample_weight,
                                  check_training_data, check_validation_labels, check_X, check_Y,
                                  validation_split)
from mlnn.datasets.text import TfidfVectorizer
from mlnn.evaluation.metrics import evaluate
from mlnn.evaluation.thresholds import DEFAULT_LAMBDAS, ThresholdPredictor, select_lambda
from mlnn.model.builders import build_loss, build_network, build_rule
from mlnn.model.modelfile import loading, read_model_file, write_model_file
from mlnn.model.params import DEFAULT, DEFAULTS, RULE_PARAMS, numpydoc
from mlnn.model.params import check_params as check_values
from mlnn.nn.lazy_updates import LazyRows
from mlnn.nn.network import Network
from mlnn.model.stopping_rules import (RuleWatch, stopping_rule, threshold_rows,
                                       threshold_validation)
from mlnn.nn.training import History, ranking_validation, train

#: The fitted scalars, stored in a model file's header by :meth:`MultiLabelNN.save`.
FITTED_SCALARS = ("n_updates_", "best_updates_", "threshold_lambda_", "fit_time_",
                  "n_features_in_", "n_labels_")


@dataclass(eq=False, repr=False, kw_only=True)
class MultiLabelNN:
    """A single-hidden-layer network for multi-label classification (Nam et al. 2014).

    Parameters
    ----------
    {parameters}

    Attributes
    ----------
    network_, loss_, thresholds_, history_ : the Network, Loss, ThresholdPredictor, History
    optimizer_ : the optimizer that trained it (not kept by :meth:`save`)
    classes_ : list of L arrays ``[0, 1]`` (in the dtype of the labels given to ``fit``)
    n_features_in_, n_labels_ : int, D and L
    n_updates_, best_updates_ : int, parameter updates made, and at the best validation rank loss
    threshold_lambda_ : float or None, the λ of Eq. 5 used
    threshold_scores_ : dict, λ → validation criterion (when λ was selected)
    rule_stops_ : dict, each of ``fit``'s ``rules`` → (the record, the parameters) where it stops
    fit_time_ : float, seconds
    feature_names_, label_names_ : list of str or None
    vectorizer_ : :class:`~mlnn.datasets.text.TfidfVectorizer` or None, what turned text into X
    """

    hidden_units: int = DEFAULT.hidden_units
    hidden_activation: str = DEFAULT.hidden_activation
    loss: str = DEFAULT.loss
    loss_options: Optional[dict] = DEFAULT.loss_options
    optimizer: str = DEFAULT.optimizer
    optimizer_options: Optional[dict] = DEFAULT.optimizer_options
    learning_rate: float = DEFAULT.learning_rate
    momentum: float = DEFAULT.momentum
    nesterov: bool = DEFAULT.nesterov
    weight_decay: float = DEFAULT.weight_decay
    decay_biases: bool = DEFAULT.decay_biases
    dropout: float = DEFAULT.dropout
    input_dropout: float = DEFAULT.input_dropout
    batch_size: int = DEFAULT.batch_size
    max_epochs: int = DEFAULT.max_epochs
    patience: int = DEFAULT.patience
    stopping: str = DEFAULT.stopping
    eval_every: Optional[int] = DEFAULT.eval_every
    validation_fraction: float = DEFAULT.validation_fraction
    threshold: str = DEFAULT.threshold
    threshold_features: str = DEFAULT.threshold_features
    threshold_lambda: Optional[float] = DEFAULT.threshold_lambda
    threshold_intercept: str = DEFAULT.threshold_intercept
    threshold_target: str = DEFAULT.threshold_target
    init: str = DEFAULT.init
    dtype: str = DEFAULT.dtype
    sparse_output: bool = DEFAULT.sparse_output
    random_state: Optional[int] = DEFAULT.random_state
    verbose: Union[bool, Callable] = DEFAULT.verbose

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

    def check_params(self, names=None):
        """Check each hyper-parameter changed since the last check (``names`` as in
        :func:`mlnn.model.params.check_params`) and build the loss and the rule ``fit`` trains
        with when theirs changed (checking their options); returns self."""
        params, (checked, loss, rule) = self.get_params(), getattr(self, "_checked", ({},) * 3)
        changed = {name for name, value in params.items()
                   if name not in checked or checked[name] is not value}
        check_values({name: params[name] for name in changed}, names)
        if {"loss", "loss_options"} & changed:
            loss = build_loss(self.loss, self.loss_options, names)
        if {"optimizer", "optimizer_options", "learning_rate", *RULE_PARAMS} & changed:
            rule = build_rule(params, names)
        self._checked = params, loss, rule
        return self

    def __repr__(self):
        changed = {k: v for k, v in self.get_params().items()
                   if type(v) is not type(DEFAULTS[k]) or v != DEFAULTS[k]}
        return f"MultiLabelNN({', '.join(f'{k}={v!r}' for k, v in changed.items())})"

    def fit(self, X, Y, X_val=None, Y_val=None, feature_names=None, label_names=None,
            vectorizer=None, rules=()):
        """Train the network and fit its thresholds (module doc); returns self. X (n × D), Y
        (n × L, 0/1 in the dtype ``predict`` answers in); ``X_val, Y_val`` validation documents;
        names and the ``vectorizer`` that made X are kept; ``rules`` are stopping rules watched
        live beside ``stopping`` (:class:`~mlnn.model.stopping_rules.RuleWatch`)."""
        started = time.perf_counter()
        self.check_params()
        given = Y                         # its dtype is predict's, read once Y is checked
        X, Y, X_val, Y_val = check_training_data(X, Y, X_val, Y_val, warn=True)
        label_dtype = given.dtype if hasattr(given, "dtype") else np.asarray(given).dtype
        if feature_names is not None:
            feature_names = check_length(feature_names, "feature_names", X.shape[1])
        if label_names is not None:
            label_names = check_length(label_names, "label_names", Y.shape[1])
        vectorizer = _check_vectorizer(vectorizer, X.shape[1])
        if X_val is None and self.validation_fraction > 0:
            fit, val = validation_split(X.shape[0], fraction=self.validation_fraction,
                                        random_state=self.random_state)
            X, Y, X_val, Y_val = X[fit], Y[fit], X[val], Y[val]
            check_validation_labels(Y_val, f"validation_fraction={self.validation_fraction}")
        needs_validation = sorted({self.stopping, *rules} - {"rankloss", "fixed"})
        if X_val is None and needs_validation:
            raise MLNNError(f"stopping rule {needs_validation[0]!r} needs validation data: pass "
                            "X_val, Y_val or a validation_fraction > 0 (without validation data "
                            "only stopping='fixed', or the default 'rankloss', which then trains "
                            "max_epochs epochs)")
        params, loss, rule = self._checked
        network = build_network(X.shape[1], Y.shape[1], loss, params)
        optimizer = LazyRows(rule, self.weight_decay, self.decay_biases)
        watch = RuleWatch(rules, self.patience)
        stopper, validate = (self._stopping(X, Y, network, rules) if X_val is not None
                             else (None, ranking_validation))
        history = train(network, loss, optimizer, X, Y, batch_size=self.batch_size,
                        max_epochs=self.max_epochs, dropout=self.dropout,
                        input_dropout=self.input_dropout, X_val=X_val, Y_val=Y_val,
                        validate=validate, callbacks=[watch] if rules else (),
                        eval_every=self.eval_every, early_stopping=stopper,
                        random_state=self.random_state, verbose=self._progress())
        self.network_, self.loss_, self.optimizer_ = network, loss, optimizer
        self._fitted_params = params
        self.history_ = history
        self.rule_stops_ = watch.finish(history, network) if rules else {}
        self.n_updates_ = int(history.records[-1]["updates"])
        self.best_updates_ = int(history.best["updates"]) if history.best else self.n_updates_
        self.n_features_in_, self.n_labels_ = X.shape[1], Y.shape[1]
        self.classes_ = _classes(self.n_labels_, label_dtype)
        self.feature_names_, self.label_names_ = feature_names, label_names
        self.vectorizer_ = vectorizer
        self._fit_thresholds(X, Y, X_val, Y_val)
        self.fit_time_ = time.perf_counter() - started
        return self

    def _stopping(self, X, Y, network, rules=()):
        """The early stopping of ``stopping`` (None for "fixed") and the validation it and
        ``rules`` watch: the ranking measures, or all ten (:func:`threshold_validation`)."""
        stopper = stopping_rule(self.stopping, self.patience)
        if {self.stopping, *rules} == {"rankloss"}:
            return stopper, ranking_validation
        rows = threshold_rows(X.shape[0], random_state=self.random_state)
        lams = DEFAULT_LAMBDAS if self.threshold_lambda is None else (self.threshold_lambda,)
        fixed = network.output.midpoint if self.threshold == "fixed" else None
        return stopper, threshold_validation(
            X[rows], Y[rows], lams=lams, fixed=fixed, features=self.threshold_features,
            intercept=self.threshold_intercept, target=self.threshold_target)

    def _fit_thresholds(self, X, Y, X_val, Y_val):
        """The threshold predictor of Sec. 3.3, fitted on the training documents' scores."""
        scores = self.network_.scores(X)
        options = {"features": self.threshold_features, "intercept": self.threshold_intercept,
                   "target": self.threshold_target}
        self.threshold_scores_ = {}
        if self.threshold == "fixed":
            self.thresholds_ = ThresholdPredictor(fixed=self.network_.output.midpoint).fit(
                None, scores, Y)
            self.threshold_lambda_ = None
        elif self.threshold_lambda is not None or X_val is None:
            # ours: with nothing to choose λ on, λ = n, that is λ = 1 on Eq. 5's scale (Eq. 5
            # divides the summed error by 2M and multiplies ‖θ‖²/2 by λ: its λ is ours / M)
            lam = float(X.shape[0]) if self.threshold_lambda is None else self.threshold_lambda
            self.thresholds_ = ThresholdPredictor(lam=lam, **options).fit(X, scores, Y)
            self.threshold_lambda_ = float(lam)
        else:
            self.thresholds_, self.threshold_lambda_, self.threshold_scores_ = select_lambda(
                X, scores, Y, X_val, self.network_.scores(X_val), Y_val,
                lams=DEFAULT_LAMBDAS, **options)

    def _progress(self):
        """The ``verbose`` of training: the user's callable, or one line per evaluation."""
        if callable(self.verbose):
            return self.verbose
        return epoch_reporter(self.max_epochs, stream=sys.stdout) if self.verbose else None

    def transform_text(self, documents):
        """X (CSR, n × D) of raw ``documents`` (list of str), by the model's vectorizer."""
        check_fitted(self, "network_")
        if getattr(self, "vectorizer_", None) is None:
            raise MLNNError("this model was not trained on a text dataset: it has no vocabulary "
                            "to turn text into features")
        if isinstance(documents, str):
            raise MLNNError("documents must be a list of texts, not one string")
        return self.vectorizer_.transform(list(documents), warn_empty=True)

    def _check_input(self, X):
        """X as float64 CSR with the D features the model was fitted on; raise if not fitted."""
        check_fitted(self, "network_")
        X = check_X(X, "X")
        if X.shape[1] != self.n_features_in_:
            raise MLNNError(f"X has {X.shape[1]} features, but {type(self).__name__} is "
                            f"expecting {self.n_features_in_} features as input")
        return X

    def decision_function(self, X):
        """The scores o = f_o(z2), n × L of ``dtype`` (sigmoid for CE, tanh for PWE)."""
        X = self._check_input(X)
        return self.network_.scores(X)

    def predict_proba(self, X):
        """(o − low) / (high − low) in [0, 1], n × L float64: for CE the sigmoid outputs, each
        label's P(y_l = 1 | x) (Eq. 6); for PWE (1 + o)/2, ranking scores, not probabilities
        (Eq. 3)."""
        o = np.asarray(self.decision_function(X), dtype=np.float64)
        low, high = self.network_.output.range
        return (o - low) / (high - low)

    def predict(self, X):
        """0/1 label sets, ŷ_kl = 1 iff o_kl > T(x_k) (Sec. 3.3), n × L in the labels' dtype
        (``classes_``), CSR if ``sparse_output``."""
        X = self._check_input(X)
        Y_pred = self.thresholds_.predict(X, self.network_.scores(X), dense=not self.sparse_output)
        dtype = self.classes_[0].dtype
        if self.sparse_output and dtype == np.float16:      # scipy.sparse holds no float16
            dtype = np.dtype(np.float32)
        return Y_pred.astype(dtype, copy=False)

    def score(self, X, y, sample_weight=None):
        """Subset accuracy (scikit-learn's ``score``): the (weighted) fraction of documents
        whose predicted label set equals their row of ``y``."""
        X = self._check_input(X)
        Y = check_Y(y, "y", n_samples=X.shape[0], n_labels=self.n_labels_)
        Y_pred = self.thresholds_.predict(X, self.network_.scores(X))
        exact = np.diff((Y != Y_pred).tocsr().indptr) == 0
        weights = None if sample_weight is None else check_sample_weight(sample_weight, X.shape[0])
        return float(np.average(exact, weights=weights))

    def evaluate(self, X, Y):
        """The paper's ten measures on (X, Y) (:func:`mlnn.evaluation.metrics.evaluate`)."""
        X = self._check_input(X)
        scores = self.network_.scores(X)
        Y = check_Y(Y, "Y", n_samples=X.shape[0], n_labels=self.n_labels_)
        return evaluate(Y, scores, self.thresholds_.predict(X, scores))

    def __sklearn_tags__(self):
        """scikit-learn's tags (only scikit-learn calls this): multi-label, sparse input."""
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags
        return Tags(estimator_type="classifier",
                    target_tags=TargetTags(required=True, two_d_labels=True, multi_output=True,
                                           single_output=False),
                    classifier_tags=ClassifierTags(multi_class=False, multi_label=True),
                    input_tags=InputTags(sparse=True))

    def save(self, path):
        """Write the fitted model, with the hyper-parameters it was fitted with, to ``.npz``."""
        check_fitted(self, "network_")
        params = dict(self._fitted_params)
        params["verbose"] = bool(params["verbose"]) if not callable(params["verbose"]) else False
        t = self.thresholds_
        meta = {"params": params,
                "fitted": {name: getattr(self, name) for name in FITTED_SCALARS},
                "hidden": self.network_.hidden_activation.name,
                "thresholds": {"lam": t.lam, "features": t.features, "fixed": t.fixed,
                               "intercept": float(t.intercept_), "form": t.intercept,
                               "target": t.target, "n_features_in": t.n_features_in_},
                "history": self.history_.records,
                "label_dtype": self.classes_[0].dtype.str}
        arrays = dict(self.network_.params)
        arrays["threshold_coef"] = np.asarray(t.coef_, dtype=np.float64)
        arrays["feature_names"] = np.array(self.feature_names_ or [], dtype=str)   # empty: unknown
        arrays["label_names"] = np.array(self.label_names_ or [], dtype=str)
        if getattr(self, "vectorizer_", None) is not None:
            meta["text"], text_arrays = self.vectorizer_.get_state()
            arrays.update({f"text/{name}": value for name, value in text_arrays.items()})
        write_model_file(path, arrays, meta)

    @classmethod
    def load(cls, path):
        """Read a model written by :meth:`save`, without pickle (else ModelFileError)."""
        with loading(path):
            arrays, meta = read_model_file(path)
            params = meta["params"]
            unknown = sorted(set(params) - set(DEFAULTS))
            if unknown:
                raise ModelFileError(f"model file {path} has hyper-parameters {unknown} that "
                                     "this version of mlnn does not know")
            model = cls(**params).check_params()
            model._fitted_params, model.loss_ = model._checked[:2]
            model.network_ = Network(*(arrays[name] for name in ("W1", "b1", "W2", "b2")),
                                     meta["hidden"], model.loss_.output)
            for name in FITTED_SCALARS:
                setattr(model, name, meta["fitted"][name])
            model.classes_ = _classes(model.n_labels_, np.dtype(meta["label_dtype"]))
            model.thresholds_ = _thresholds(meta["thresholds"], arrays["threshold_coef"])
            model.history_ = History(records=_records(meta["history"]))
            model.feature_names_ = arrays["feature_names"].tolist() or None
            model.label_names_ = arrays["label_names"].tolist() or None
            model.vectorizer_ = _saved_vectorizer(meta, arrays)
            return model


def _check_vectorizer(vectorizer, n_features):
    """``vectorizer`` (or None) if it is a fitted TfidfVectorizer with ``n_features`` terms."""
    if vectorizer is None:
        return None
    if not isinstance(vectorizer, TfidfVectorizer) or not hasattr(vectorizer, "vocabulary_"):
        raise MLNNError(f"vectorizer must be a fitted mlnn.datasets.text.TfidfVectorizer, got "
                        f"{type(vectorizer).__name__}")
    if len(vectorizer.vocabulary_) != n_features:
        raise MLNNError(f"vectorizer has {len(vectorizer.vocabulary_)} terms but X has "
                        f"{n_features} features")
    return vectorizer


def _saved_vectorizer(meta, arrays):
    """The text vectorizer of a model file (``text/*`` and header ``text``), or None."""
    if "text" not in meta:
        return None
    state = {name.split("/", 1)[1]: value for name, value in arrays.items()
             if name.startswith("text/")}
    return TfidfVectorizer.from_state(meta["text"], state)


def _records(history):
    """The training history of a model file: a list of evaluation records (dicts)."""
    if not isinstance(history, list) or not all(isinstance(r, dict) for r in history):
        raise MLNNError("its training history is not a list of evaluation records")
    return history


def _thresholds(saved, coef):
    """The fitted ThresholdPredictor of a model file's header and θ."""
    thresholds = ThresholdPredictor(lam=saved["lam"], features=saved["features"],
                                    fixed=saved["fixed"], intercept=saved["form"],
                                    target=saved["target"])
    thresholds.coef_, thresholds.intercept_ = coef, saved["intercept"]
    thresholds.n_features_in_, thresholds.n_iter_ = saved["n_features_in"], 0
    return thresholds


def _classes(n_labels, dtype):
    """``classes_``: for each of the L labels, its two values [0, 1] in ``dtype``."""
    return [np.array([0, 1], dtype=dtype) for _ in range(n_labels)]


MultiLabelNN.__doc__ = MultiLabelNN.__doc__.replace("    {parameters}\n", numpydoc() + "\n")
