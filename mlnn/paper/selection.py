"""Model selection on a validation split carved from the training documents (Sec. 4).

Networks: the paper chooses η0 from {0.001, 0.01, 0.1} "using validation data" and gives no
number of epochs. :func:`select_learning_rate` trains one network per η0 for the budget's
``max_epochs`` while each stopping rule (:mod:`mlnn.model.stopping_rules`) runs live on that
run. At each rule's stop η0 is scored by :data:`CRITERIA` (validation rank loss, or the mean
of micro- and macro-F1 of the threshold predictor's label sets, Sec. 3.3); the first η0 wins
ties, and the winner is refitted on all training documents for its rule's epochs
(:func:`fit_network_method`). BP-MLL as published selects nothing.

SVMs (:func:`fit_br`): C from {10⁻³, …, 10³}, by the mean F1 of the sign predictions (BR_B) or
by rank loss, then a threshold predictor on the margins (BR_R).
"""

import copy
import time
from dataclasses import dataclass

from mlnn.base.errors import MLNNError
from mlnn.base.progress import Progress
from mlnn.base.validation import (check_choice, check_positive_float, check_split, check_X,
                                  check_Y, validation_split)
from mlnn.baselines.svm import DEFAULT_C_VALUES, LinearSVMBR
from mlnn.evaluation import metrics
from mlnn.evaluation.thresholds import ThresholdPredictor, select_lambda
from mlnn.model.estimator import MultiLabelNN
from mlnn.model.params import DEFAULT
from mlnn.paper.methods import network_params

#: Selection criteria for η0, and whether lower or higher is better.
CRITERIA = {"rankloss": "min", "meanF": "max"}


def rule_outcome(model, params, record, X_fit, Y_fit, X_val, Y_val):
    """A rule's stop on one selection run: its ``record``'s epoch and updates, and the λ (as
    :meth:`MultiLabelNN.fit` chooses it, Sec. 3.3) and validation mean F1 of its ``params``."""
    network = copy.deepcopy(model.network_)
    for name, array in params.items():
        network.params[name][...] = array
    _, lam, table = select_lambda(X_fit, network.scores(X_fit), Y_fit, X_val,
                                  network.scores(X_val), Y_val, features=model.threshold_features,
                                  intercept=model.threshold_intercept,
                                  target=model.threshold_target)
    return {"epoch": int(record["epoch"]), "updates": int(record["updates"]),
            "threshold_lambda": float(lam), "rankloss": float(record["rankloss"]),
            "meanF": float(table[lam])}


def selection_run(model, X_fit, Y_fit, X_val, Y_val, rules):
    """Train ``model`` once for its ``max_epochs``, each rule of ``rules`` running live on
    (X_val, Y_val): {rule: :func:`rule_outcome`}."""
    model.set_params(stopping="fixed").fit(X_fit, Y_fit, X_val, Y_val, rules=rules)
    best = model.rule_stops_
    return {rule: rule_outcome(model, best[rule][1], best[rule][0], X_fit, Y_fit, X_val, Y_val)
            for rule in rules}


def selection_model(method, eta, budget, random_state):
    """The network of ``method`` that selection trains with η0 = ``eta`` under ``budget``."""
    return MultiLabelNN(**network_params(method), learning_rate=eta, random_state=random_state,
                        hidden_units=budget["hidden_units"], max_epochs=budget["max_epochs"],
                        patience=budget["patience"], batch_size=budget["batch_size"])


def select_learning_rate(method, X_fit, Y_fit, X_val, Y_val, budget, random_state, log=print,
                         progress=False, rules=("rankloss",)):
    """:func:`selection_run` per η0 of the budget: ({η0: model}, {rule: {η0: rule_outcome}})."""
    models, outcomes = {}, {rule: {} for rule in rules}
    steps = Progress(len(budget["learning_rates"]), enabled=progress)
    for done, eta in enumerate(budget["learning_rates"], start=1):
        model = selection_model(method, eta, budget, random_state)
        chosen = selection_run(model, X_fit, Y_fit, X_val, Y_val, rules)
        models[eta] = model
        for rule in rules:
            outcomes[rule][eta] = chosen[rule]
        log(f"  {method} η0={eta} ({model.fit_time_:.0f}s): " + "; ".join(
            f"{rule} stops at epoch {c['epoch']}, validation rank loss {c['rankloss']:.5f}, "
            f"mean F1 {c['meanF']:.4f}" for rule, c in chosen.items()))
        steps.step(done, f"{method} η0={eta}: validation rank loss "
                         f"{chosen[rules[0]]['rankloss']:.5f}")
    return models, outcomes


def choose(scores, criterion):
    """The η0 with the best value in ``scores`` ({η0: value}) by ``criterion``; first wins ties."""
    check_choice(criterion, "selection criterion", tuple(CRITERIA))
    sign = 1 if CRITERIA[criterion] == "min" else -1
    return min(scores, key=lambda eta: sign * scores[eta])     # min keeps the first on ties


def refit(model, X, Y, outcome, stopping):
    """``model``'s hyper-parameters trained on all of (X, Y) for the epochs and with the λ of
    ``outcome`` (a :func:`rule_outcome`), labelled with the rule ``stopping`` that chose them."""
    final = MultiLabelNN(**model.get_params()).set_params(
        max_epochs=int(outcome["epoch"]), validation_fraction=0.0,
        threshold_lambda=outcome["threshold_lambda"], stopping="fixed")
    return final.fit(X, Y).set_params(stopping=stopping)


def _choice(outcomes, eta, select_by):
    """The η0 ``eta`` chosen by ``select_by`` and its stop."""
    return {"learning_rate": eta, "best_epoch": outcomes[eta]["epoch"],
            "best_updates": outcomes[eta]["updates"],
            "threshold_lambda": outcomes[eta]["threshold_lambda"], "selected_by": select_by}


def rule_record(outcomes, rule, select_by):
    """The record of ``rule`` from its selection runs (``outcomes``: {η0: rule_outcome}): the η0
    ``select_by`` chooses, its stop, and every η0's validation scores and stop."""
    eta = choose({e: o[select_by] for e, o in outcomes.items()}, select_by)
    return {**_choice(outcomes, eta, select_by), "stopping": rule,
            "validation": {c: {e: o[c] for e, o in outcomes.items()} for c in CRITERIA},
            "stops": {e: {"epoch": o["epoch"], "updates": o["updates"]}
                      for e, o in outcomes.items()}}


def _final(model, outcome, rule, X, Y, refit_all, refits):
    """The network ``rule`` stopped at ``outcome``: refitted on all of (X, Y) if ``refit_all``
    (once per (η0, epochs, λ), cached in ``refits``), else the selection run ``model`` itself."""
    if refit_all:
        key = (model.learning_rate, outcome["epoch"], outcome["threshold_lambda"])
        if key not in refits:
            refits[key] = refit(model, X, Y, outcome, stopping=rule)
        return copy.copy(refits[key]).set_params(stopping=rule)
    if outcome["updates"] != model.n_updates_:
        raise MLNNError(f"without a refit only the fixed budget has a network to evaluate; "
                        f"{rule!r} stopped before the last epoch")
    return model


def fit_network_method(method, X, Y, fit_rows, val_rows, budget, random_state, alternative=False,
                       log=print, progress=False, other_rules=()):
    """Select η0 and the epochs on (``fit_rows``, ``val_rows``) of (X, Y) as ``budget``
    (:func:`mlnn.paper.reproduce.settings_record`) says, then refit: (model, record).
    ``other_rules`` and ``alternative`` (the other criterion's η0) give sensitivity rows, each
    with a ``"model"``."""
    started = time.perf_counter()
    stopping, select_by, refit_all = budget["stopping"], budget["select_by"], budget["refit"]
    rules = (stopping, *other_rules)
    models, outcomes = select_learning_rate(method, X[fit_rows], Y[fit_rows], X[val_rows],
                                            Y[val_rows], budget, random_state, log, progress,
                                            rules)
    refits, entries = {}, {}
    for rule in rules:
        entry = rule_record(outcomes[rule], rule, select_by)
        eta = entry["learning_rate"]
        final = _final(models[eta], outcomes[rule][eta], rule, X, Y, refit_all, refits)
        entries[rule] = {**entry, "refit_updates": final.n_updates_, "model": final}
        if rule != stopping:
            log(f"  {method}: {rule} with η0={entry['learning_rate']} stops at epoch "
                f"{entry['best_epoch']} (sensitivity)")
    record = entries.pop(stopping)
    model = record.pop("model")
    record["validation_rankloss"] = record["validation"]["rankloss"]
    record["rules"] = entries
    if alternative:
        other = next(criterion for criterion in CRITERIA if criterion != select_by)
        eta = choose(record["validation"][other], other)
        record["alternative"] = _choice(outcomes[stopping], eta, other)
        if eta != record["learning_rate"]:
            log(f"  {method}: {other} selects η0={eta}; refitting it for comparison")
            record["alternative"]["model"] = _final(models[eta], outcomes[stopping][eta],
                                                    stopping, X, Y, refit_all, refits)
    record["curves"] = {eta: model.history_.as_dict() for eta, model in models.items()}
    record["params"] = {k: v for k, v in model.get_params().items() if k != "verbose"}
    record["seconds"] = time.perf_counter() - started
    return model, record


def fit_published_method(method, X, Y, random_state, log=print):
    """BP-MLL with its published, fixed hyper-parameters on all of (X, Y): (model, record)."""
    started = time.perf_counter()
    model = MultiLabelNN(**network_params(method, X.shape[1], X.shape[0]),
                         random_state=random_state).fit(X, Y)
    log(f"  {method}: {model.n_updates_} updates ({model.fit_time_:.0f}s)")
    record = {"n_updates": model.n_updates_, "threshold_lambda": model.threshold_lambda_,
              "params": {k: v for k, v in model.get_params().items() if k != "verbose"},
              "seconds": time.perf_counter() - started}
    return model, record


@dataclass
class BRResult:
    """What :func:`fit_br` chose: the SVMs, their threshold predictor (0 for BR_B) and λ, a
    row per C (validation measures, ``criterion``, ``fit_seconds``) and BR_R's {λ: value}."""

    model: LinearSVMBR
    C: float
    thresholds: ThresholdPredictor
    lam: object
    validation_scores: list
    lambda_scores: dict

    def decision_function(self, X):
        """The SVM margins (n, L) for X (n, D) CSR."""
        return self.model.decision_function(X)

    def predict(self, X, scores=None):
        """Label sets (n, L) 0/1 CSR of X (``scores``: its margins, if already computed)."""
        return self.thresholds.predict(X, self.decision_function(X) if scores is None else scores)


def warm_start(model):
    """:meth:`LinearSVMBR.fit`'s arguments to start from ``model``'s weights (None: cold)."""
    return {} if model is None else {"coef": model.coef_, "intercept": model.intercept_}


def _search_C(C_values, variant, X_fit, Y_fit, X_val, Y_val, svm_options, progress=False):
    """Fit every C in increasing order, each warm-started from the previous solution, and score
    it on the validation split: (table, chosen C, its model). The first C wins ties."""
    table, best, model = [], None, None
    steps = Progress(len(C_values), enabled=progress)
    for done, C in enumerate(C_values, start=1):
        started = time.perf_counter()
        model = LinearSVMBR(C=C, **svm_options).fit(X_fit, Y_fit, **warm_start(model))
        seconds = time.perf_counter() - started
        scores = model.decision_function(X_val)
        result = metrics.evaluate(Y_val, scores, scores > 0)
        # BR_B: macro-F1 over the labels present in the validation split (selection_score)
        value = metrics.selection_score(Y_val, scores > 0) if variant == "B" \
            else result["rankloss"]
        table.append({"C": C, **result, "criterion": value, "fit_seconds": seconds})
        steps.step(done, f"BR_{variant} C={C:g}: validation "
                         f"{'mean F1' if variant == 'B' else 'rank loss'} {value:.5f}")
        if best is None or (value > best[0] if variant == "B" else value < best[0]):
            best = (value, C, model)
    return table, best[1], best[2]


def fit_br(X_train, Y_train, variant="B", C_values=DEFAULT_C_VALUES,
           validation_fraction=DEFAULT.validation_fraction, validation=None, random_state=0,
           refit=True, progress=False, **svm_options):
    """Binary relevance with linear SVMs, C chosen on validation data: a :class:`BRResult`.

    X_train : (n, D) CSR; Y_train : (n, L) 0/1. ``variant`` "B": C maximising the
    :func:`~mlnn.evaluation.metrics.selection_score` of the signs; "R": C minimising rank loss,
    then a threshold predictor on the margins (Eq. 5). The split: the seeded
    ``validation_fraction``, or ``validation`` = (fit_rows, val_rows); ``refit`` retrains on all
    of X_train; ``svm_options`` go to :class:`~mlnn.baselines.svm.LinearSVMBR`."""
    check_choice(variant, "variant", ("B", "R"))
    C_values = sorted(check_positive_float(C, "C_values entry") for C in C_values)
    if not C_values:
        raise MLNNError("C_values must contain at least one value")
    X = check_X(X_train, "X_train")
    Y = check_Y(Y_train, "Y_train", n_samples=X.shape[0])
    if validation is None:
        try:
            validation = validation_split(X.shape[0], validation_fraction, random_state)
        except MLNNError as error:
            raise MLNNError(f"validation_fraction: {error}") from None
    fit_rows, val_rows = check_split(validation, X.shape[0])
    X_fit, Y_fit, X_val, Y_val = X[fit_rows], Y[fit_rows], X[val_rows], Y[val_rows]
    table, C, model = _search_C(C_values, variant, X_fit, Y_fit, X_val, Y_val, svm_options,
                                progress)
    lam, lambda_scores = None, {}
    if variant == "B":
        thresholds = ThresholdPredictor(fixed=0.0).fit(None, model.decision_function(X_val), Y_val)
    else:
        thresholds, lam, lambda_scores = select_lambda(
            X_fit, model.decision_function(X_fit), Y_fit,
            X_val, model.decision_function(X_val), Y_val)
    if refit:
        model = LinearSVMBR(C=C, **svm_options).fit(X, Y, **warm_start(model))
        if variant == "R":
            thresholds = ThresholdPredictor(lam=lam).fit(X, model.decision_function(X), Y)
    return BRResult(model=model, C=C, thresholds=thresholds, lam=lam,
                    validation_scores=table, lambda_scores=lambda_scores)
