"""Model selection for the network methods: η0 on a validation split of the training documents.

The paper chooses the base learning rate η0 of AdaGrad from {0.001, 0.01, 0.1} and the number of
epochs by early stopping, both "using validation data" carved from the training documents
(Sec. 4); it does not say by which measure η0 is chosen. :func:`select_learning_rate` trains one
:class:`~mlnn.estimator.MultiLabelNN` per η0 with early stopping on validation rank loss, and
scores each on the validation split by two criteria (:data:`CRITERIA`):

* ``rankloss`` — the validation rank loss at the best epoch (the measure early stopping watches);
* ``meanF`` — the mean of micro- and macro-F1 of the label sets that the network's threshold
  predictor (Sec. 3.3, fitted on the other training documents, its λ chosen on the same split)
  gives on the validation documents, the macro average over the labels that have a positive
  validation document (:func:`mlnn.metrics.selection_score`).

The reproduction selects by rank loss (our choice, see the README) and, on request, also refits
the η0 that the other criterion picks, so the sensitivity of Table 3 to this choice can be shown
(:func:`fit_network_method`). The first η0 of the grid wins ties.

BP-MLL as published (:data:`mlnn.paper.methods.METHODS` ``["BP-MLL"]``) selects nothing: its
hyper-parameters are fixed (:func:`fit_published_method`).

The SVM baselines choose C inside :func:`mlnn.svm.fit_br`.
"""

import time

from mlnn.errors import MLNNError
from mlnn.estimator import MultiLabelNN
from mlnn.paper.methods import network_params

#: Selection criteria for η0, and whether lower or higher is better.
CRITERIA = {"rankloss": "min", "meanF": "max"}


def select_learning_rate(method, X_fit, Y_fit, X_val, Y_val, budget, random_state, batch_size,
                         log=print):
    """Train one network per η0 of ``budget["learning_rates"]``, early-stopped on (X_val, Y_val).

    Returns (``models``: {η0: fitted estimator}, ``validation``: {criterion: {η0: value}}).
    """
    models, validation = {}, {criterion: {} for criterion in CRITERIA}
    for eta in budget["learning_rates"]:
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
                       refit_all=True, select_by="rankloss", alternative=False, log=print):
    """Select η0 on (``fit_rows``, ``val_rows``) of (X, Y), then refit; returns (model, record).

    ``select_by`` is a key of :data:`CRITERIA`. With ``refit_all`` the winner is trained again on
    all rows of X for its selected number of epochs (:func:`refit`). ``record`` holds the chosen
    η0, every η0's validation scores under both criteria, the best epoch and updates, λ, the
    final hyper-parameters and the wall time. With ``alternative``, and if the other criterion
    picks another η0, that network is refitted too and returned in ``record["alternative"]``
    under the key ``"model"`` (the caller evaluates it and replaces the model by its results).
    """
    started = time.perf_counter()
    models, validation = select_learning_rate(method, X[fit_rows], Y[fit_rows], X[val_rows],
                                              Y[val_rows], budget, random_state, batch_size, log)
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
