"""Model selection for the network methods: η0 on a validation split of the training documents.

The paper chooses the base learning rate η0 of AdaGrad from {0.001, 0.01, 0.1} and the number of
epochs by early stopping, both on validation data carved from the training documents (Sec. 4).
:func:`select_learning_rate` trains one :class:`~mlnn.estimator.MultiLabelNN` per η0 with early
stopping on validation rank loss and keeps the best; :func:`fit_network_method` adds the final
refit on all training documents for the selected number of epochs.

The SVM baselines choose C inside :func:`mlnn.svm.fit_br`.
"""

import time

from mlnn.estimator import MultiLabelNN
from mlnn.paper.methods import network_params


def select_learning_rate(method, X_fit, Y_fit, X_val, Y_val, budget, random_state, batch_size,
                         log=print):
    """Train one network per η0 of ``budget["learning_rates"]``.

    Returns (the estimator with the lowest validation rank loss, {η0: its best validation rank
    loss}); the first η0 of the grid wins ties.
    """
    scores, best = {}, None
    for eta in budget["learning_rates"]:
        model = MultiLabelNN(**network_params(method), learning_rate=eta,
                             hidden_units=budget["hidden_units"], max_epochs=budget["max_epochs"],
                             patience=budget["patience"], batch_size=batch_size,
                             random_state=random_state)
        model.fit(X_fit, Y_fit, X_val, Y_val)
        scores[eta] = model.history_.best["rankloss"]
        log(f"  {method} η0={eta}: validation rank loss {scores[eta]:.5f} after "
            f"{model.best_updates_} updates ({model.fit_time_:.0f}s)")
        if best is None or scores[eta] < scores[best.learning_rate]:
            best = model
    return best, scores


def fit_network_method(method, X, Y, fit_rows, val_rows, budget, random_state, batch_size,
                       refit=True, log=print):
    """Select η0 on (``fit_rows``, ``val_rows``) of (X, Y), then refit; returns (model, record).

    With ``refit`` the winner is trained again on all rows of X for the selected number of
    epochs, with the threshold λ selected on validation. ``record`` holds the chosen η0, the
    validation rank loss of every η0, the best epoch and updates, λ, the final
    hyper-parameters and the wall time.
    """
    started = time.perf_counter()
    model, scores = select_learning_rate(method, X[fit_rows], Y[fit_rows], X[val_rows],
                                         Y[val_rows], budget, random_state, batch_size, log)
    record = {"learning_rate": model.learning_rate, "validation_rankloss": scores,
              "best_epoch": int(model.history_.best["epoch"]),
              "best_updates": model.best_updates_, "threshold_lambda": model.threshold_lambda_}
    if refit:
        model = MultiLabelNN(**model.get_params()).set_params(
            max_epochs=record["best_epoch"], validation_fraction=0.0,
            threshold_lambda=model.threshold_lambda_)
        model.fit(X, Y)
        record["refit_updates"] = model.n_updates_
    record["params"] = {k: v for k, v in model.get_params().items() if k != "verbose"}
    record["seconds"] = time.perf_counter() - started
    return model, record
