"""Model selection for the network methods: η0 on a validation split of the training documents.

The paper chooses the base learning rate η0 of AdaGrad from {0.001, 0.01, 0.1} and the number of
epochs by early stopping, both "using validation data" carved from the training documents
(Sec. 4); it does not say by which measure η0 is chosen. :func:`select_learning_rate` trains one
:class:`~mlnn.model.estimator.MultiLabelNN` per η0 with early stopping on validation rank loss, and
scores each on the validation split by two criteria (:data:`CRITERIA`):

* ``rankloss`` — the validation rank loss at the best epoch (the measure early stopping watches);
* ``meanF`` — the mean of micro- and macro-F1 of the label sets that the network's threshold
  predictor (Sec. 3.3, fitted on the other training documents, its λ chosen on the same split)
  gives on the validation documents, the macro average over the labels that have a positive
  validation document (:func:`mlnn.evaluation.metrics.selection_score`).

The reproduction selects by rank loss (our choice, see the README) and, on request, also refits
the η0 that the other criterion picks, so the sensitivity of Table 3 to this choice can be shown
(:func:`fit_network_method`). The first η0 of the grid wins ties.

BP-MLL as published (:data:`mlnn.paper.methods.METHODS` ``["BP-MLL"]``) selects nothing: its
hyper-parameters are fixed (:func:`fit_published_method`).

The SVM baselines choose C by :func:`fit_br`: C from {10⁻³, …, 10³} on the same kind of
validation split, chosen by

- BR_B: the mean of micro- and macro-F1 of the sign predictions (ŷ_l = 1 iff wᵀx + b > 0);
- BR_R: the rank loss of the margins; label sets then come from the threshold predictor of
  Sec. 3.3 (:class:`mlnn.evaluation.thresholds.ThresholdPredictor`) fitted to the SVM margins, with its λ
  chosen on the same validation split.
"""

import time
from dataclasses import dataclass, field

import numpy as np

from mlnn.base.errors import MLNNError
from mlnn.base.progress import Progress
from mlnn.base.validation import (check_positive_float, check_split, check_X, check_Y,
                                  validation_split)
from mlnn.baselines.svm import DEFAULT_C_VALUES, LinearSVMBR
from mlnn.evaluation import metrics
from mlnn.evaluation.thresholds import DEFAULT_LAMBDAS, ThresholdPredictor, select_lambda
from mlnn.model.estimator import MultiLabelNN
from mlnn.paper.methods import network_params

#: Selection criteria for η0, and whether lower or higher is better.
CRITERIA = {"rankloss": "min", "meanF": "max"}


def select_learning_rate(method, X_fit, Y_fit, X_val, Y_val, budget, random_state, batch_size,
                         log=print, progress=False):
    """Train one network per η0 of ``budget["learning_rates"]``, early-stopped on (X_val, Y_val).

    Returns (``models``: {η0: fitted estimator}, ``validation``: {criterion: {η0: value}}).
    With ``progress``, a line per η0 with the elapsed and remaining time goes to standard error
    (:class:`mlnn.base.progress.Progress`).
    """
    models, validation = {}, {criterion: {} for criterion in CRITERIA}
    steps = Progress(len(budget["learning_rates"]), enabled=progress)
    for done, eta in enumerate(budget["learning_rates"], start=1):
        model = MultiLabelNN(**network_params(method), learning_rate=eta,
                             hidden_units=budget["hidden_units"], max_epochs=budget["max_epochs"],
                             patience=budget["patience"], batch_size=batch_size,
                             random_state=random_state)
        model.fit(X_fit, Y_fit, X_val, Y_val)
        models[eta] = model
        validation["rankloss"][eta] = float(model.history_.best["rankloss"])
        validation["meanF"][eta] = float(model.threshold_scores_[model.threshold_lambda_])
        log(f"  {method} η0={eta}: validation rank loss {validation['rankloss'][eta]:.5f}, "
            f"mean F1 {validation['meanF'][eta]:.4f} after {model.best_updates_} updates "
            f"({model.fit_time_:.0f}s)")
        steps.step(done, f"{method} η0={eta}: validation rank loss "
                         f"{validation['rankloss'][eta]:.5f}")
    return models, validation


def choose(scores, criterion):
    """The η0 with the best value in ``scores`` ({η0: value}) by ``criterion``; first wins ties."""
    if criterion not in CRITERIA:
        raise MLNNError(f"unknown selection criterion {criterion!r}; choose one of "
                        f"{list(CRITERIA)}")
    sign = 1 if CRITERIA[criterion] == "min" else -1
    return min(scores, key=lambda eta: sign * scores[eta])     # min keeps the first on ties


def refit(model, X, Y):
    """Train ``model``'s hyper-parameters again on all of (X, Y), for its best number of epochs,
    with its selected threshold λ and no validation split; returns the new estimator."""
    final = MultiLabelNN(**model.get_params()).set_params(
        max_epochs=int(model.history_.best["epoch"]), validation_fraction=0.0,
        threshold_lambda=model.threshold_lambda_)
    return final.fit(X, Y)


def _summary(model):
    return {"learning_rate": model.learning_rate,
            "best_epoch": int(model.history_.best["epoch"]),
            "best_updates": model.best_updates_, "threshold_lambda": model.threshold_lambda_}


def fit_network_method(method, X, Y, fit_rows, val_rows, budget, random_state, batch_size,
                       refit_all=True, select_by="rankloss", alternative=False, log=print,
                       progress=False):
    """Select η0 on (``fit_rows``, ``val_rows``) of (X, Y), then refit; returns (model, record).

    ``select_by`` is a key of :data:`CRITERIA`. With ``refit_all`` the winner is trained again on
    all rows of X for its selected number of epochs (:func:`refit`). ``record`` holds the chosen
    η0, every η0's validation scores under both criteria, the best epoch and updates, λ, the
    final hyper-parameters and the wall time. With ``alternative``, and if the other criterion
    picks another η0, that network is refitted too and returned in ``record["alternative"]``
    under the key ``"model"`` (the caller evaluates it and replaces the model by its results).
    ``progress``: a line per η0 on standard error (:func:`select_learning_rate`).
    """
    started = time.perf_counter()
    models, validation = select_learning_rate(method, X[fit_rows], Y[fit_rows], X[val_rows],
                                              Y[val_rows], budget, random_state, batch_size, log,
                                              progress)
    chosen = choose(validation[select_by], select_by)
    model = models[chosen]
    record = {**_summary(model), "selected_by": select_by, "validation": validation,
              "validation_rankloss": validation["rankloss"]}
    if refit_all:
        model = refit(model, X, Y)
        record["refit_updates"] = model.n_updates_
    if alternative:
        other = next(criterion for criterion in CRITERIA if criterion != select_by)
        eta = choose(validation[other], other)
        record["alternative"] = {**_summary(models[eta]), "selected_by": other}
        if eta != chosen:
            log(f"  {method}: {other} selects η0={eta}; refitting it for comparison")
            record["alternative"]["model"] = refit(models[eta], X, Y) if refit_all \
                else models[eta]
    record["params"] = {k: v for k, v in model.get_params().items() if k != "verbose"}
    record["seconds"] = time.perf_counter() - started
    return model, record


def fit_published_method(method, X, Y, random_state, log=print):
    """BP-MLL with its published, fixed hyper-parameters on all of (X, Y): (model, record)."""
    started = time.perf_counter()
    model = MultiLabelNN(**network_params(method, X.shape[1], X.shape[0]),
                         random_state=random_state)
    model.fit(X, Y)
    log(f"  {method}: {model.n_updates_} updates ({model.fit_time_:.0f}s)")
    record = {"n_updates": model.n_updates_, "threshold_lambda": model.threshold_lambda_,
              "params": {k: v for k, v in model.get_params().items() if k != "verbose"},
              "seconds": time.perf_counter() - started}
    return model, record


VARIANTS = ("B", "R")


@dataclass
class BRResult:
    """The outcome of :func:`fit_br`.

    model : the :class:`~mlnn.baselines.svm.LinearSVMBR` with the chosen C (refitted on all training
        documents unless ``refit=False``); C : the chosen C; variant : "B" or "R";
    thresholds : the :class:`~mlnn.evaluation.thresholds.ThresholdPredictor` that turns margins into label
        sets (fixed at 0 for BR_B, learned for BR_R); lam : its λ (None for BR_B);
    validation_scores : one dict per C tried, in grid order, with ``C``, the ten measures of
        the validation split (bipartition measures with sign predictions), ``criterion`` (the
        value C was chosen by) and ``fit_seconds``; lambda_scores : λ → validation criterion of
        the threshold predictor (BR_R only).
    """

    model: LinearSVMBR
    C: float
    variant: str
    thresholds: ThresholdPredictor
    lam: object = None
    validation_scores: list = field(default_factory=list)
    lambda_scores: dict = field(default_factory=dict)

    def decision_function(self, X):
        """The SVM margins (n, L) for X (n, D) CSR."""
        return self.model.decision_function(X)

    def predict(self, X, scores=None):
        """Label sets (n, L) 0/1 CSR: sign for BR_B, learned thresholds T(x) for BR_R.

        ``scores`` may pass the margins of X if already computed."""
        if scores is None:
            scores = self.model.decision_function(X)
        return self.thresholds.predict(X, scores)


def warm_start(model, fit_rows=None, n=None):
    """The keyword arguments of :meth:`LinearSVMBR.fit` that start from ``model``'s solution
    (``{}``, a cold start, when ``model`` is None).

    "tron" starts from the weights; "dual_cd" from α, placed at ``fit_rows`` of ``n`` documents
    (0 elsewhere) when the new fit has more documents than ``model``'s.
    """
    if model is None:
        return {}
    if model.solver == "tron":
        return {"coef": model.coef_, "intercept": model.intercept_}
    if fit_rows is None:
        return {"dual_coef": model.dual_coef_}
    alpha = np.zeros((n, model.dual_coef_.shape[1]))
    alpha[fit_rows] = model.dual_coef_
    return {"dual_coef": alpha}


def _br_split(n, validation, validation_fraction, random_state):
    """(fit_rows, val_rows): the explicit ``validation`` pair, checked, or the seeded split."""
    if validation is not None:
        return check_split(validation, n)
    try:
        return validation_split(n, validation_fraction, random_state)
    except MLNNError as error:
        raise MLNNError(f"validation_fraction: {error}") from None


def _search_C(C_values, variant, X_fit, Y_fit, X_val, Y_val, random_state, svm_options,
              progress=False):
    """Fit every C in increasing order, each warm-started from the previous solution, and score
    it on the validation split: (table, chosen C, its model). The first C wins ties."""
    table, best, previous = [], None, None
    steps = Progress(len(C_values), enabled=progress)
    for done, C in enumerate(C_values, start=1):
        started = time.perf_counter()
        model = LinearSVMBR(C=C, random_state=random_state, **svm_options)
        model.fit(X_fit, Y_fit, **warm_start(previous))
        seconds = time.perf_counter() - started
        previous = model
        scores = model.decision_function(X_val)
        result = metrics.evaluate(Y_val, scores, scores > 0)
        # BR_B: the project's selection convention, macro-F1 over the labels present in the
        # validation split (mlnn.evaluation.metrics.selection_score); the table keeps the paper's measures
        value = metrics.selection_score(Y_val, scores > 0) if variant == "B" \
            else result["rankloss"]
        table.append({"C": C, **result, "criterion": value, "fit_seconds": seconds})
        steps.step(done, f"BR_{variant} C={C:g}: validation "
                         f"{'mean F1' if variant == 'B' else 'rank loss'} {value:.5f}")
        if best is None or (value > best[0] if variant == "B" else value < best[0]):
            best = (value, C, model)
    return table, best[1], best[2]


def fit_br(X_train, Y_train, variant="B", C_values=DEFAULT_C_VALUES,
           validation_fraction=0.1, validation=None, random_state=0, refit=True,
           lams=DEFAULT_LAMBDAS, threshold_features="input", progress=False, **svm_options):
    """Binary relevance with linear SVMs and C chosen on validation data: BR_B or BR_R.

    Parameters
    ----------
    X_train : (n, D) CSR; Y_train : (n, L) 0/1 dense or CSR.
    variant : "B" — C maximising (miF + maF)/2 of sign predictions on the validation split
        (macro-F1 over the labels with a validation positive,
        :func:`mlnn.evaluation.metrics.selection_score`);
        "R" — C minimising the validation rank loss, then a threshold predictor on the margins
        (λ from ``lams`` chosen on the validation split by mean F1).
    C_values : the C values tried (default 10⁻³ … 10³). They are fitted in increasing order, each
        warm-started from the previous solution (:func:`warm_start`: the weights for "tron";
        α for "dual_cd", which stays feasible when C grows).
    validation_fraction : share of the training documents held out
        (:func:`mlnn.base.validation.validation_split`, seeded by random_state), unless
        ``validation`` = (fit_indices, validation_indices) gives the split explicitly.
    refit : retrain the chosen C (and for BR_R the threshold predictor, same λ) on all of
        X_train, warm-started from the validation-split solution.
    threshold_features : "input" (T(x), the paper) or "scores" (T(o)) for BR_R.
    progress : a line per C on standard error (:class:`mlnn.base.progress.Progress`).
    svm_options : passed to :class:`~mlnn.baselines.svm.LinearSVMBR` (loss, bias, solver, tol, max_iter).

    Returns
    -------
    :class:`BRResult` (the model, the chosen C, the threshold predictor, validation scores).
    The first C of the grid wins ties.
    """
    if variant not in VARIANTS:
        raise MLNNError(f"unknown variant {variant!r}; choose one of {list(VARIANTS)}")
    C_values = sorted(check_positive_float(C, "C_values entry") for C in C_values)
    if not C_values:
        raise MLNNError("C_values must contain at least one value")
    X = check_X(X_train, "X_train")
    Y = check_Y(Y_train, "Y_train")
    if Y.shape[0] != X.shape[0]:
        raise MLNNError(f"Y_train has {Y.shape[0]} rows but X_train has {X.shape[0]} documents")
    fit_rows, val_rows = _br_split(X.shape[0], validation, validation_fraction, random_state)
    X_fit, Y_fit, X_val, Y_val = X[fit_rows], Y[fit_rows], X[val_rows], Y[val_rows]
    table, C, model = _search_C(C_values, variant, X_fit, Y_fit, X_val, Y_val, random_state,
                                svm_options, progress)
    lam, lambda_scores = None, {}
    if variant == "B":
        thresholds = ThresholdPredictor(fixed=0.0).fit(None, model.decision_function(X_val), Y_val)
    else:
        thresholds, lam, lambda_scores = select_lambda(
            X_fit, model.decision_function(X_fit), Y_fit,
            X_val, model.decision_function(X_val), Y_val,
            lams=lams, features=threshold_features)
    if refit:
        model = LinearSVMBR(C=C, random_state=random_state, **svm_options).fit(
            X, Y, **warm_start(model, fit_rows, X.shape[0]))
        if variant == "R":
            thresholds = ThresholdPredictor(lam=lam, features=threshold_features).fit(
                X, model.decision_function(X), Y)
    return BRResult(model=model, C=C, variant=variant, thresholds=thresholds, lam=lam,
                    validation_scores=table, lambda_scores=lambda_scores)
