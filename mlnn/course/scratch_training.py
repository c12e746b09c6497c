"""Graders of notebook 01b for the learning pieces: AdaGrad with its state (Sec. 3.5), one
minibatch update, and the shuffled training loop (see :mod:`mlnn.course.scratch` for the list of
all ten graders; the notebook calls them from there).
"""

import numpy as np
import scipy.sparse as sp
from scipy.stats import chisquare

from mlnn.course.graders import apply_rule, rule_problem
from mlnn.course.grading import (NotYet, StudentError, close, expect_dtype, grade, pristine,
                                 same, tolerance_of)
from mlnn.course.scratch_cases import (SHAPES, GuardedCSR, backward_case, expect_gradients,
                                       run_guarded)
from mlnn.nn.optimizers import AdaGrad as ReferenceAdaGrad


# -- AdaGrad -------------------------------------------------------------------------------------

class AdaGradVariant:
    """AdaGrad with one of :data:`ADAGRAD_MISTAKES`, written as mlnn writes a rule
    (``new_state``, ``update``) so that it runs as mlnn's AdaGrad does."""

    def __init__(self, eta0, epsilon, variant):
        self.eta0, self.epsilon, self.variant = eta0, epsilon, variant

    def new_state(self, theta):
        return {"G": np.zeros_like(theta)}

    def update(self, theta, g, state):
        G, before = state["G"], state["G"].copy()
        G[...] = g * g if self.variant == "reset" else G + g * g
        denominator = {"no_sqrt": G + self.epsilon, "inside": np.sqrt(G + self.epsilon),
                       "before": np.sqrt(before) + self.epsilon}.get(self.variant,
                                                                     np.sqrt(G) + self.epsilon)
        step = self.eta0 * g if self.variant == "sgd" else self.eta0 * g / np.where(
            denominator > 0, denominator, 1)
        theta += step if self.variant == "uphill" else -step


ADAGRAD_MISTAKES = {
    "no_sqrt": "the step divides by G + ε; AdaGrad divides by √G + ε",
    "inside": "ε belongs outside the square root: √G + ε, not √(G + ε)",
    "reset": "G is reset at every step; it must accumulate g² over all the steps so far",
    "before": "G must include the current gradient: add g² to G before taking the step",
    "sgd": "the step is η0 g; AdaGrad divides it by √G + ε, per parameter entry",
    "uphill": "the parameters move uphill: subtract the step",
}


def run_rule(rule, params, steps):
    """θ after the steps by a rule (W1 on the rows given), on copies."""
    params = {name: value.copy() for name, value in params.items()}
    states = {name: rule.new_state(theta) for name, theta in params.items()}
    for grads in steps:
        apply_rule(rule, params, states, grads)
    return params


#: (η0, ε, (D, F, L), dtype) of the AdaGrad cases; F = L once, so that b1 and b2 have one shape.
ADAGRAD_CASES = [(0.1, 1e-8, (7, 3, 4), np.float64), (0.03, 0.5, (5, 4, 4), np.float64),
                 (1.0, 1e-3, (9, 2, 5), np.float64), (0.3, 0.1, (6, 3, 3), np.float32)]


def new_optimizer(AdaGrad, eta0, epsilon):
    """``AdaGrad(eta0, epsilon)``, its exception reported as the student's."""
    try:
        return AdaGrad(eta0, epsilon)
    except Exception as error:
        raise StudentError("AdaGrad(eta0, epsilon)", error) from error


class WatchedRows(np.ndarray):
    """W1 for the AdaGrad grader: records in ``written`` (one flag per row) the rows a step
    writes, by item assignment, by a ufunc writing into it, or by ``ufunc.at``."""

    def __array_finalize__(self, obj):
        self.written = None                  # views and copies record nothing

    def record(self, key):
        if self.written is not None:
            probe = np.zeros(self.shape, dtype=bool)
            probe[key] = True
            self.written |= probe.reshape(len(probe), -1).any(axis=1)

    def __setitem__(self, key, value):
        self.record(key)
        super().__setitem__(key, value)

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if method == "at" and isinstance(inputs[0], WatchedRows):
            inputs[0].record(inputs[1])
        for array in out or ():
            if isinstance(array, WatchedRows):
                array.record(Ellipsis)
        plain = [x.view(np.ndarray) if isinstance(x, WatchedRows) else x for x in inputs]
        if out is not None:
            kwargs["out"] = tuple(x.view(np.ndarray) if isinstance(x, WatchedRows) else x
                                  for x in out)
        result = getattr(ufunc, method)(*plain, **kwargs)
        return (out[0] if len(out) == 1 else out) if out is not None else result


def watched(W1):
    """A copy of W1 that records the rows written (:class:`WatchedRows`)."""
    array = W1.copy().view(WatchedRows)
    array.written = np.zeros(len(W1), dtype=bool)
    return array


def expect_rows_written(W1, rows):
    """Only the rows ``rows`` of a watched W1 were written by the last step."""
    if not isinstance(W1, WatchedRows) or W1.written is None:
        return
    allowed = np.zeros(len(W1), dtype=bool)
    allowed[rows] = True
    extra = W1.written & ~allowed
    W1.written[:] = False
    if extra.any() and (extra | allowed).all():
        raise NotYet(f"step wrote all {len(W1)} rows of W1; only the rows listed in rows have a "
                     "gradient and may be touched (k × F work per step instead of D × F)")
    if extra.any():
        raise NotYet("step wrote rows of W1 that have no gradient in this step; W1's gradient "
                     "(rows, values) applies to the rows listed in rows only")


def take_steps(optimizer, params, steps):
    """Call ``optimizer.step`` on each gradient dict; params must be updated in place and the
    gradients left unchanged. Returns the parameters after the steps."""
    arrays = dict(params)
    for grads in steps:
        given = pristine(grads)
        try:
            optimizer.step(params, given)
        except Exception as error:
            raise StudentError("AdaGrad.step", error) from error
        if not same(grads, given):
            raise NotYet("step modified the gradients it was given; leave them unchanged")
        expect_rows_written(params.get("W1"), grads["W1"][0])
        for name, array in arrays.items():
            if params.get(name) is not array:
                raise NotYet(f"step replaced params[{name!r}] by a new array; update it in place "
                             "(on W1's rows only), otherwise every step copies all of W1")
    return params


def expect_adagrad(answer, start, steps, eta0, epsilon):
    """The parameters after the steps equal mlnn's AdaGrad; else name the mistake."""
    reference = run_rule(ReferenceAdaGrad(eta0, epsilon=epsilon), start, steps)
    if all(np.array_equal(answer[name], start[name]) for name in start):
        raise NotYet("no answer yet (step changed no parameter)")
    tolerance = tolerance_of(start["W1"])
    if not all(np.all(np.isfinite(np.asarray(answer[name], float))) for name in start):
        raise NotYet("a parameter became NaN or infinite: ε in √G + ε guards the division "
                     "where G is still 0 (an entry whose gradient has been 0 so far)")
    if all(close(answer[name], reference[name], tolerance) for name in start):
        for name in start:
            expect_dtype(np.asarray(answer[name]), start[name], name, "f")
        return
    for variant, hint in ADAGRAD_MISTAKES.items():
        wrong = run_rule(AdaGradVariant(eta0, epsilon, variant), start, steps)
        if all(close(answer[name], wrong[name], tolerance) for name in start):
            raise NotYet(hint)
    touched = np.unique(np.concatenate([grads["W1"][0] for grads in steps]))
    untouched = np.setdiff1d(np.arange(start["W1"].shape[0]), touched)
    if not np.array_equal(answer["W1"][untouched], start["W1"][untouched]):
        raise NotYet("rows of W1 without a gradient changed; W1's gradient (rows, values) "
                     "applies to the rows listed in rows only")
    wrong = [name for name in start if not close(answer[name], reference[name], tolerance)]
    raise NotYet(f"after {len(steps)} steps {', '.join(wrong)} differ from AdaGrad's: per "
                 "parameter, G ← G + g² accumulated over the steps, θ ← θ − η0 g / (√G + ε), "
                 "on the rows given for W1")


def check_adagrad(AdaGrad):
    """``AdaGrad(eta0, epsilon)`` with ``step(params, grads)``: G ← G + g²,
    θ ← θ − η0 g / (√G + ε) per parameter (Sec. 3.5), W1's gradient given as (rows, values)."""
    def attempt():
        if not isinstance(AdaGrad, type):
            raise NotYet("AdaGrad must be a class: AdaGrad(eta0, epsilon) keeps its state and "
                         "has a method step(params, grads)")
        expect_separate_state(AdaGrad)
        for number, (eta0, epsilon, (D, F, L), dtype) in enumerate(ADAGRAD_CASES):
            rng = np.random.default_rng([70, number])
            start, steps = rule_problem(rng, D, F, L, dtype, steps=5)
            params = {name: value.copy() for name, value in start.items()}
            params["W1"] = watched(start["W1"])
            answer = take_steps(new_optimizer(AdaGrad, eta0, epsilon), params, steps)
            expect_adagrad(answer, start, steps, eta0, epsilon)
        expect_own_state(AdaGrad)
        return (f"{len(ADAGRAD_CASES)} runs of 5 steps (η0 from 0.03 to 1, ε from 1e-8 to 0.5, "
                "a step without W1 rows, float32) and two optimizers side by side, against mlnn")
    return grade("AdaGrad with its state", attempt).passed


INTERFERE = ("two AdaGrad objects used side by side interfere: each must keep its own G, made "
             "in __init__, not shared between objects")


def state_of(optimizer):
    """Copies of the data attributes an optimizer can reach (its own and its class's)."""
    return {name: pristine(getattr(optimizer, name)) for name in dir(optimizer)
            if not name.startswith("__") and not callable(getattr(optimizer, name))}


def expect_separate_state(AdaGrad):
    """A step of one optimizer leaves the state of another one untouched."""
    rng = np.random.default_rng(78)
    first, second = new_optimizer(AdaGrad, 0.1, 1e-8), new_optimizer(AdaGrad, 0.5, 0.01)
    before = state_of(second)
    start, steps = rule_problem(rng, 6, 3, 4, steps=1)
    take_steps(first, start, steps)
    if not same(before, state_of(second)):
        raise NotYet(INTERFERE)


def expect_own_state(AdaGrad):
    """Two optimizers stepped in turn on their own parameters each match their own reference."""
    rng = np.random.default_rng(79)
    runs = []
    for eta0, epsilon in ((0.1, 1e-8), (0.5, 0.01)):
        start, steps = rule_problem(rng, 6, 3, 4, steps=5)
        runs.append((new_optimizer(AdaGrad, eta0, epsilon), start, steps,
                     {name: value.copy() for name, value in start.items()}, eta0, epsilon))
    for t in range(5):
        for optimizer, _, steps, params, _, _ in runs:
            take_steps(optimizer, params, steps[t:t + 1])
    for _, start, steps, params, eta0, epsilon in runs:
        reference = run_rule(ReferenceAdaGrad(eta0, epsilon=epsilon), start, steps)
        if not all(close(params[name], reference[name]) for name in start):
            raise NotYet(INTERFERE)


# -- one update and the training loop ------------------------------------------------------------

class RecordingOptimizer:
    """An optimizer that only records what ``step`` was given."""

    def __init__(self):
        self.calls = []

    def step(self, params, grads):
        self.calls.append((params, pristine(grads)))


def call_guarded(function, *args, name="function"):
    """``function(*args)`` as is (it may change its arguments), with X guarded."""
    return run_guarded(lambda: function(*args), name=name)


def check_update(update):
    """``update(params, optimizer, X_batch, Y_batch)``: forward, CE's δ2, backward and one
    ``optimizer.step(params, grads)`` with the gradients of the mean CE loss."""
    def attempt():
        count = 0
        for seed, shape in enumerate(SHAPES[:5]):
            case, cache, grads = backward_case(80 + seed, shape)
            params = {name: value.copy() for name, value in case.params.items()}
            inputs = (case.X, case.Y)
            before = pristine((params, inputs))
            optimizer = RecordingOptimizer()
            call_guarded(update, params, optimizer, *inputs, name="update")
            if not same(before[1], inputs):
                raise NotYet("update modified X_batch or Y_batch; leave them unchanged")
            if not same(before[0], params):
                raise NotYet("update changed the parameters itself, or through another "
                             "optimizer than the one it was given; only optimizer.step may")
            expect_one_step(optimizer, params, grads, cache, shape[0])
            count += 1
        return f"{count} random minibatches against mlnn's forward, CE δ2 and backward"
    return grade("one minibatch update", attempt).passed


def expect_one_step(optimizer, params, grads, cache, n):
    """``optimizer.step`` called once, with ``params`` and mlnn's gradients."""
    if not optimizer.calls:
        raise NotYet("no answer yet (optimizer.step was never called)")
    if len(optimizer.calls) > 1:
        raise NotYet(f"optimizer.step was called {len(optimizer.calls)} times; one update is "
                     "one step")
    given, answer = optimizer.calls[0]
    if given is not params:
        raise NotYet("hand optimizer.step the params dict you were given")
    try:
        expect_gradients(answer, grads, cache, n)
    except NotYet as hint:
        raise NotYet(f"the gradients handed to optimizer.step: {hint} (forward, ce_delta2 and "
                     "backward each have a grader above)") from None


def training_inputs(n):
    """X (n × 1, GuardedCSR) holding each document's number 1 … n, and Y (n × 8) its bits."""
    ids = np.arange(1, n + 1)
    X = GuardedCSR((ids.astype(np.float64), np.zeros(n, np.int32), np.arange(n + 1)),
                   shape=(n, 1))
    Y = ((ids[:, None] >> np.arange(8)) & 1).astype(np.float64)
    return X, Y


def batch_ids(X_batch, Y_batch):
    """(document numbers of X_batch or None if it is not sparse, those of Y_batch or None)."""
    x = np.asarray(X_batch.tocsr().data, int) if sp.issparse(X_batch) else None
    y = None
    if isinstance(Y_batch, np.ndarray) and Y_batch.ndim == 2 and Y_batch.shape[1] == 8:
        y = (np.asarray(Y_batch, float) @ (2.0 ** np.arange(8))).astype(int)
    return x, y


class OtherUpdate(Exception):
    """Raised when the training loop's optimizer is stepped by another update than the one given."""


class SentinelOptimizer:
    """The optimizer handed to ``train``: only the recording update may receive it."""

    def step(self, params, grads):
        raise OtherUpdate


def record_training(train, n, batch_size, epochs, seed):
    """What ``train`` hands to ``update``: a list of (params ok, optimizer ok, X ids, Y ids)."""
    X, Y = training_inputs(n)
    before = pristine((X, Y))
    params = {"W1": np.zeros((1, 1)), "b1": np.zeros(1), "W2": np.zeros((1, 8)),
              "b2": np.zeros(8)}                 # shaped for X and Y, should an update use them
    optimizer, record = SentinelOptimizer(), []

    def update(p, o, X_batch, Y_batch):
        record.append((p is params, o is optimizer, *batch_ids(X_batch, Y_batch)))
    try:
        call_guarded(train, params, optimizer, X, Y, epochs, batch_size,
                     np.random.default_rng(seed), update, name="train")
    except StudentError as error:
        if isinstance(error.error, OtherUpdate):
            raise NotYet("train must hand each minibatch to the update it is given as its "
                         "argument, not to another function") from None
        raise
    if not same(before, (X, Y)):
        raise NotYet("train modified X or Y; leave them unchanged")
    return record


#: (n, batch_size, epochs) of the training-loop cases: n not a multiple of the batch size, one
#: minibatch per epoch, a batch larger than n, a single document.
TRAINING_CASES = [(10, 3, 2), (12, 12, 3), (23, 4, 3), (5, 8, 2), (1, 2, 2), (17, 5, 1)]


def check_train(train):
    """``train(params, optimizer, X, Y, epochs, batch_size, rng, update)``: ``epochs`` passes,
    each over every document once in a new random order drawn from ``rng``, in minibatches of
    ``batch_size`` (the last one of an epoch smaller), each handed to
    ``update(params, optimizer, X_batch, Y_batch)`` with X_batch still sparse."""
    def attempt():
        for number, (n, batch_size, epochs) in enumerate(TRAINING_CASES):
            record = record_training(train, n, batch_size, epochs, seed=90 + number)
            expect_epochs(record, n, batch_size, epochs)
            again = record_training(train, n, batch_size, epochs, seed=90 + number)
            if [r[2].tolist() for r in again] != [r[2].tolist() for r in record]:
                raise NotYet("the order must come from the generator rng you are given: the "
                             "same rng seed must give the same minibatches")
            if n >= 10:
                expect_shuffled(train, record, n, batch_size, epochs, 90 + number)
        expect_mixed(train)
        expect_uniform(train)
        return (f"{len(TRAINING_CASES)} cases of n, batch size and epochs, 60 epochs of 12 "
                "documents for the minibatches and 4,000 of 4 for the randomness of the order")
    return grade("the shuffled minibatch training loop", attempt).passed


def expect_epochs(record, n, batch_size, epochs):
    """The minibatches of each epoch: sparse, matching X and Y, sizes, every document once."""
    per_epoch = -(-n // batch_size)
    if not record:
        raise NotYet("no answer yet (update was never called)")
    if not all(p and o for p, o, _, _ in record):
        raise NotYet("hand update the params and the optimizer you were given")
    if any(x is None for _, _, x, _ in record):
        raise NotYet("X_batch must stay a sparse matrix: take its rows from X, do not densify")
    if any(y is None or not np.array_equal(x, y) for _, _, x, y in record):
        raise NotYet("X_batch and Y_batch must hold the same documents, in the same order")
    if len(record) != epochs * per_epoch:
        if epochs > 1 and len(record) == per_epoch:
            raise NotYet(f"one epoch only: train for the {epochs} epochs asked")
        raise NotYet(f"update was called {len(record)} times; {epochs} epochs of {n} documents "
                     f"in minibatches of {batch_size} make {epochs * per_epoch}")
    sizes = [batch_size] * (per_epoch - 1) + [n - batch_size * (per_epoch - 1)]
    for epoch in range(epochs):
        batches = [r[2] for r in record[epoch * per_epoch:(epoch + 1) * per_epoch]]
        if [len(b) for b in batches] != sizes:
            raise NotYet(f"minibatches hold batch_size = {batch_size} documents each (the last "
                         "one of an epoch fewer)")
        if sorted(np.concatenate(batches).tolist()) != list(range(1, n + 1)):
            raise NotYet("an epoch must visit every document exactly once")


def expect_shuffled(train, record, n, batch_size, epochs, seed):
    """A new random order at every epoch, and a different one for another seed."""
    per_epoch = -(-n // batch_size)
    orders = [np.concatenate([r[2] for r in record[e * per_epoch:(e + 1) * per_epoch]]).tolist()
              for e in range(epochs)]
    if orders[0] == list(range(1, n + 1)):
        raise NotYet("the documents come in their stored order: shuffle them at the start of "
                     "every epoch")
    if epochs > 1 and all(order == orders[0] for order in orders):
        raise NotYet("every epoch has the same order: draw a new random order at the start of "
                     "each epoch")
    other = record_training(train, n, batch_size, epochs, seed + 1000)
    if [r[2].tolist() for r in other] == [r[2].tolist() for r in record]:
        raise NotYet("the order does not depend on the generator rng you are given")


def expect_mixed(train, n=12, batch_size=4, epochs=60):
    """Any two documents share a minibatch in some epoch (in about 3 of 11 epochs when the
    whole order is shuffled; never, when the order is shuffled only inside fixed minibatches)."""
    record = record_training(train, n, batch_size, epochs, seed=98)
    together = np.zeros((n + 1, n + 1), dtype=int)
    for _, _, batch, _ in record:
        together[np.ix_(batch, batch)] += 1
    if np.any(together[1:, 1:] == 0):
        raise NotYet("some documents never share a minibatch: the minibatches are fixed and only "
                     "their order or their insides are shuffled; shuffle the order of all the "
                     "documents at the start of each epoch, then cut it into minibatches")


def expect_uniform(train, epochs=4000):
    """Over many epochs of 4 documents every one of the 24 orders is about equally frequent
    (4,000 epochs: a χ² test that sees the classic biased shuffle, which swaps each position
    with any position, with power above 0.999 at p = 1e-6)."""
    record = record_training(train, 4, 4, epochs, seed=99)
    orders = [tuple(r[2].tolist()) for r in record]
    counts = [orders.count(order) for order in sorted(set(orders))]
    counts += [0] * (24 - len(counts))
    if chisquare(counts).pvalue < 1e-6:
        raise NotYet("the orders are not uniformly random: every order of the documents should "
                     "be equally likely (a shuffle that swaps each position with any position, "
                     "not only with itself or a later one, favours some orders)")
