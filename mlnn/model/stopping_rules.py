"""The stopping rules of the reproduction (ours: the paper gives no number of epochs and no
stopping rule), run through :func:`mlnn.nn.training.train`'s ``validate`` and ``callbacks``.

:func:`stopping_rule` makes a rule's :class:`~mlnn.nn.training.EarlyStopping`; :class:`RuleWatch`
runs several rules live on one run; :func:`threshold_validation` records all ten measures of
Sec. 4 at each evaluation, with the thresholds of Eq. 5 fitted as the final model's are.
"""

import numpy as np

from mlnn.base.validation import check_choice
from mlnn.evaluation.metrics import evaluate, selection_score
from mlnn.evaluation.thresholds import DEFAULT_LAMBDAS, ThresholdPredictor, select_lambda
from mlnn.nn.training import EarlyStopping


#: The stopping rules: the validation measure each watches, whether lower or higher is better
#: and whether it stops after ``patience`` evaluations without improvement (False: it keeps the
#: best evaluation of the whole budget); None: a fixed budget of ``max_epochs`` epochs. "meanF"
#: is the mean of micro- and macro-F1, the criterion the paper uses for BR_B's C.
STOPPING_RULES = {"rankloss": ("rankloss", "min", True), "meanF": ("meanF", "max", True),
                  "meanF_best": ("meanF", "max", False), "fixed": None}

#: At most this many training documents (ours: a seeded subsample) fit each evaluation's
#: thresholds: every measure then costs 18 % of an NN_AD epoch on Reuters-21578, 28 % on Delicious.
THRESHOLD_ROWS = 1000


def stopping_rule(rule, patience):
    """The :class:`EarlyStopping` of ``rule``, or None for ``"fixed"``."""
    check_choice(rule, "stopping rule", tuple(STOPPING_RULES))
    if STOPPING_RULES[rule] is None:
        return None
    monitor, mode, patient = STOPPING_RULES[rule]
    return EarlyStopping(monitor, mode, patience=patience if patient else None)


class RuleWatch:
    """A :func:`train` callback running several stopping rules live on one run: ``best[rule]``
    is (its best record, the parameters there; for ``"fixed"`` the last ones, :meth:`finish`);
    training stops once every rule has stopped."""

    def __init__(self, rules, patience):
        self.stoppers = {rule: stopping_rule(rule, patience) for rule in rules}
        self.stopped = {rule: False for rule in rules}
        self.best = {}

    def __call__(self, record, network):
        for rule, stopper in self.stoppers.items():
            if stopper is not None and not self.stopped[rule]:
                self.stopped[rule] = stopper.update(record, network.params)
                self.best[rule] = (stopper.best_record, stopper.best_params)
        return all(self.stopped.values())

    def finish(self, history, network):
        """Record the fixed rule's outcome (the last record, the final parameters)."""
        for rule, stopper in self.stoppers.items():
            if stopper is None:
                self.best[rule] = (dict(history.records[-1]),
                                   {name: a.copy() for name, a in network.params.items()})
        return self.best


def threshold_rows(n, random_state=None):
    """The sorted training rows thresholds are fitted on: a seeded :data:`THRESHOLD_ROWS`, or
    all ``n``."""
    if n <= THRESHOLD_ROWS:
        return np.arange(n)
    rng = np.random.default_rng(random_state)
    return np.sort(rng.choice(n, THRESHOLD_ROWS, replace=False))


def threshold_validation(X_fit, Y_fit, lams=DEFAULT_LAMBDAS, fixed=None, **options):
    """A ``validate`` for :func:`train` recording all of Sec. 4's measures, Hamming loss,
    ``meanF`` and ``threshold_lambda``, with the thresholds of Eq. 5 fitted on (X_fit, Y_fit)
    and λ chosen from ``lams`` on the validation data as the final model's (``fixed``: a fixed
    threshold); ``options`` go to the ThresholdPredictor."""
    def validate(network, X_val, Y_val):
        scores_fit, scores_val = network.scores(X_fit), network.scores(X_val)
        if fixed is not None:
            predictor, lam = ThresholdPredictor(fixed=fixed).fit(None, scores_fit, Y_fit), None
        else:
            predictor, lam, _ = select_lambda(X_fit, scores_fit, Y_fit, X_val, scores_val, Y_val,
                                              lams=lams, **options)
        Y_pred = predictor.predict(X_val, scores_val)
        return {**evaluate(Y_val, scores_val, Y_pred), "meanF": selection_score(Y_val, Y_pred),
                "threshold_lambda": lam}
    return validate
