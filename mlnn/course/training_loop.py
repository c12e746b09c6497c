"""Graders of training (Sec. 3.2, 3.5): one minibatch update and the shuffled training loop
(notebook 01b, judged by what they do with mlnn's pieces), and where over-fitting starts (04)."""

import numpy as np
import scipy.sparse as sp
from scipy.stats import chisquare

from mlnn.course.grading import (NO_ANSWER, Mistake, NotYet, case_rngs, drawn_seed, each_draw,
                                 expect_items, grade, make_grader, pristine, run, same, within)
from mlnn.course.pieces import (DENSE_HINT, SHAPES, WIDE_ROWS, WIDE_SHAPES, backward_case,
                                expect_backward, mlnn_backward, mlnn_update, piece)
from mlnn.course.ranking import step_above


# -- notebook 04: where over-fitting starts --------------------------------------------------------

def _best_update(curve, position=False, sign=1, tolerance=0.0, last=False):
    """(update of the lowest rank loss, the earliest if tied, as the text asks; final − best),
    or with a mistake: the ``position``, the ``sign`` flipped, the first within ``tolerance`` of
    the lowest, the ``last`` of tied minima."""
    losses = np.asarray(curve["rankloss"])
    lowest = np.flatnonzero(losses <= losses.min() + tolerance)
    best = int(lowest[-1] if last else lowest[0])
    return (best if position else curve["updates"][best],
            sign * (curve["rankloss"][-1] - curve["rankloss"][best]))


def _best_update_cases():
    """``best_update(curve)`` → (update of the lowest rank loss, final − best rank loss)."""
    for rng in case_rngs(15, 5):
        size = int(rng.integers(2, 12))
        curve = {"updates": np.cumsum(rng.integers(20, 400, size=size)).tolist(),
                 "rankloss": rng.uniform(0.05, 0.4, size=size).round(6).tolist()}
        yield f"of {size} evaluations", [("curve", curve)]
    yield ("of 5 evaluations, the lowest rank loss reached twice",
           [("curve", {"updates": [10, 20, 30, 40, 50], "rankloss": [0.3, 0.1, 0.2, 0.1, 0.25]})])
    yield ("of 4 evaluations, two rank losses one floating-point step apart (not equal)",
           [("curve", {"updates": [10, 20, 30, 40], "rankloss": [step_above(0.1), 0.1, 0.12,
                                                                  0.15]})])


check_best_update = make_grader("check_best_update", "where over-fitting starts", _best_update,
                             _best_update_cases, [
    Mistake("that is the position in the list, not the update's number",
            lambda c: _best_update(c, position=True)),
    Mistake("the sign is flipped: it is final minus best", lambda c: _best_update(c, sign=-1)),
    Mistake("rank losses that differ, however little, are not equal: take the exact minimum, "
            "without a tolerance or rounding", lambda c: _best_update(c, tolerance=1e-6)),
    Mistake("where the lowest rank loss is reached more than once, return the earliest of those "
            "evaluations (over-fitting starts there), not the last", lambda c: _best_update(
                c, last=True))],
                             expect=expect_items(("the update", "final − best rank loss"),
                                                 kind="biuf"))


# -- notebook 01b: one minibatch update and the training loop --------------------------------------

class Recorder:
    """An optimizer that only records what ``step`` was given."""

    def __init__(self):
        self.calls = []

    def step(self, params, grads):
        self.calls.append((params, pristine(grads)))


@piece
def check_update(update):
    """``update(params, optimizer, X_batch, Y_batch)``: forward, CE's δ2, backward and one
    ``optimizer.step(params, grads)`` with the gradients of the mean CE loss."""
    def attempt():
        shapes = enumerate(SHAPES[:5] + WIDE_SHAPES[:1])
        for seed, shape, _ in ((s, shape, d) for s, shape in shapes for d in each_draw()):
            case, cache, grads = backward_case(80 + seed, shape)
            if shape in WIDE_SHAPES:                # the work done, on objects of its own
                within(update, ("params", pristine(case.params)), ("optimizer", Recorder()),
                       ("X_batch", case.X), ("Y_batch", case.Y), name="update",
                       memory=WIDE_ROWS * shape[1] * 8, reference=mlnn_update, hint=DENSE_HINT)
            params, optimizer, before = pristine(case.params), Recorder(), pristine(case.params)
            run(lambda X_batch, Y_batch: update(params, optimizer, X_batch, Y_batch),
                ("X_batch", case.X), ("Y_batch", case.Y), name="update")
            if not same(before, params):
                raise NotYet("update changed the parameters itself, or through another "
                             "optimizer than the one it was given; only optimizer.step may")
            if not optimizer.calls:
                raise NotYet(NO_ANSWER)
            if len(optimizer.calls) > 1:
                raise NotYet(f"optimizer.step was called {len(optimizer.calls)} times; one "
                             "update is one step")
            if optimizer.calls[0][0] is not params:
                raise NotYet("hand optimizer.step the params dict you were given, not a copy: "
                             "an optimizer may put new arrays in it, which a copy would lose")
            named = dict(X=case.X, z1=cache.z1, h=cache.h, W2=case.params["W2"],
                         delta2=grads.delta2)
            try:
                expect_backward(optimizer.calls[0][1], mlnn_backward(*named.values()), "", (),
                                named)
            except NotYet as hint:
                raise NotYet(f"the gradients handed to optimizer.step: {hint} (forward, "
                             "ce_delta2 and backward each have a grader above)") from None
        return "5 random minibatches, each drawn twice, against mlnn's forward, CE δ2 and backward"
    return grade("one minibatch update", attempt)


#: Label bits of the documents :func:`record_training` numbers (up to 2¹² − 1 documents).
BITS = 12


def record_training(train, n, batch_size, epochs, seed):
    """What ``train`` hands to ``update``, for X (n × 1) holding each document's number 1 … n
    and Y its bits: a list of (params and optimizer right, X's numbers, Y's numbers)."""
    ids = np.arange(1, n + 1)
    X = sp.csr_matrix((ids.astype(float), np.zeros(n, np.int32), np.arange(n + 1)), shape=(n, 1))
    Y = ((ids[:, None] >> np.arange(BITS)) & 1).astype(np.float64)
    recorder, record = Recorder(), []
    given = {"W1": np.zeros((1, 1)), "b1": np.zeros(1), "W2": np.zeros((1, BITS)),
             "b2": np.zeros(BITS)}

    def update(params, optimizer, X_batch, Y_batch):      # the names the exercise documents
        x = np.asarray(X_batch.tocsr().data, int) if sp.issparse(X_batch) else None
        y = None
        if isinstance(Y_batch, np.ndarray) and Y_batch.ndim == 2 and Y_batch.shape[1] == BITS:
            y = (np.asarray(Y_batch, float) @ (2.0 ** np.arange(BITS))).astype(int)
        record.append((params is given and optimizer is recorder, x, y))
    run(lambda X, Y: train(given, recorder, X, Y, epochs, batch_size,
                           np.random.default_rng(drawn_seed(seed)), update), ("X", X), ("Y", Y),
        name="train")
    if recorder.calls:
        raise NotYet("train must hand each minibatch to the update it is given as its argument, "
                     "not to another function")
    return record


def orders(record):
    """The documents of each minibatch, sorted: the order inside a minibatch changes nothing
    (its gradient is a mean), so an answer that sorts each minibatch is as right."""
    return [sorted(x.tolist()) for _, x, _ in record]


def expect_epochs(record, n, batch_size, epochs):
    """The minibatches of each epoch: sparse, matching X and Y, sizes, every document once."""
    per_epoch = -(-n // batch_size)
    if not record:
        raise NotYet(NO_ANSWER)
    if not all(right for right, _, _ in record):
        raise NotYet("hand update the params and the optimizer you were given")
    if any(x is None for _, x, _ in record):
        raise NotYet("X_batch must stay a sparse matrix: take its rows from X, do not densify")
    if any(y is None or not np.array_equal(x, y) for _, x, y in record):
        raise NotYet("X_batch and Y_batch must hold the same documents, in the same order")
    if len(record) != epochs * per_epoch:
        if epochs > 1 and len(record) == per_epoch:
            raise NotYet(f"one epoch only: train for the {epochs} epochs asked")
        raise NotYet(f"update was called {len(record)} times; {epochs} epochs of {n} documents "
                     f"in minibatches of {batch_size} make {epochs * per_epoch}")
    sizes = [batch_size] * (per_epoch - 1) + [n - batch_size * (per_epoch - 1)]
    epoch_orders = []
    for epoch in range(epochs):
        batches = [x for _, x, _ in record[epoch * per_epoch:(epoch + 1) * per_epoch]]
        if [len(b) for b in batches] != sizes:
            raise NotYet(f"minibatches hold batch_size = {batch_size} documents each (the last "
                         "one of an epoch fewer)")
        epoch_orders.append(np.concatenate([np.sort(b) for b in batches]).tolist())
        if sorted(epoch_orders[-1]) != list(range(1, n + 1)):
            raise NotYet("an epoch must visit every document exactly once")
    return epoch_orders


@piece
def check_train(train):
    """``train(params, optimizer, X, Y, epochs, batch_size, rng, update)``: ``epochs`` passes,
    each over every document once in a new random order drawn from ``rng``, in minibatches of
    ``batch_size`` (the last one of an epoch smaller), each handed to
    ``update(params, optimizer, X_batch, Y_batch)`` with X_batch still sparse."""
    def attempt():
        cases = [(10, 3, 2), (12, 12, 3), (23, 4, 3), (5, 8, 2), (1, 2, 2), (17, 5, 1)]
        for number, (n, batch_size, epochs), _ in ((i, c, d) for i, c in enumerate(cases)
                                                   for d in each_draw()):
            record = record_training(train, n, batch_size, epochs, seed=90 + number)
            epoch_orders = expect_epochs(record, n, batch_size, epochs)
            if orders(record_training(train, n, batch_size, epochs, 90 + number)) != orders(
                    record):
                raise NotYet("the order must come from the generator rng you are given: the "
                             "same rng seed must give the same minibatches")
            if n < 10 or batch_size >= n:          # one minibatch: its order changes nothing
                continue
            if epoch_orders[0] == list(range(1, n + 1)):
                raw = np.concatenate([x for _, x, _ in record[:-(-n // batch_size)]]).tolist()
                raise NotYet(FIXED_HINT if raw != epoch_orders[0] else "the documents come in "
                             "their stored order: shuffle them at the start of every epoch")
            if epochs > 1 and all(order == epoch_orders[0] for order in epoch_orders):
                raise NotYet("every epoch has the same order: draw a new random order at the "
                             "start of each epoch")
            if orders(record_training(train, n, batch_size, epochs, 1090 + number)) == orders(
                    record):
                raise NotYet("the order does not depend on the generator rng you are given")
        unordered = expect_unordered(train)
        expect_mixed(train)
        unordered()
        expect_uniform(train)
        return (f"{len(cases)} cases of n, batch size and epochs, 60 epochs of 12 documents for "
                "the minibatches and 4,000 of 4 for the randomness of the order")
    return grade("the shuffled minibatch training loop", attempt)


FIXED_HINT = ("the minibatches of the first epoch hold the documents in their stored order, cut "
              "into consecutive runs (only the runs or their insides are shuffled): shuffle the "
              "order of all the documents at the start of each epoch, then cut it into minibatches")


def expect_mixed(train, n=12, batch_size=4, epochs=60):
    """Any two documents share a minibatch in some epoch (in about 3 of 11 epochs when the
    whole order is shuffled; never, when the order is shuffled only inside fixed minibatches)."""
    together = np.zeros((n + 1, n + 1), dtype=int)
    for _, batch, _ in record_training(train, n, batch_size, epochs, seed=98):
        together[np.ix_(batch, batch)] += 1
    if np.any(together[1:, 1:] == 0):
        i, j = np.argwhere(together[1:, 1:] == 0)[0] + 1
        raise NotYet(f"in {epochs} epochs of {n} documents in minibatches of {batch_size}, "
                     f"documents {i} and {j} never share a minibatch (with a new random order "
                     "each epoch, two documents share one in about 3 epochs of 11): shuffle the "
                     "order of all the documents at the start of each epoch, then cut it into "
                     "minibatches")


def expect_unordered(train, n=1500, epochs=2):
    """Over epochs of 1,500 documents (minibatches of one), the positions of one epoch are
    uncorrelated with those of the previous one (r ≈ 0 ± 1/√n): an order reversed or shifted
    from the last one is refused at once. Returns the second check, to run later: a shuffled
    order ascends at about half its steps, (n − 1)/2 ± √((n + 1)/12), which random keys with
    ties (keeping the stored order among them) do not."""
    record = record_training(train, n, 1, epochs, seed=97)
    orders_ = [np.concatenate([x for _, x, _ in record[e * n:(e + 1) * n]]) for e in range(epochs)]
    for before, after in zip(orders_, orders_[1:]):
        positions = [np.argsort(order) for order in (before, after)]
        if abs(np.corrcoef(*positions)[0, 1]) * np.sqrt(n) > 6:
            raise NotYet("each epoch's order follows from the previous one's (reversed or "
                         "shifted): draw a new random order at the start of each epoch")

    def ascending():
        for epoch, order in enumerate(orders_):
            ascents = np.count_nonzero(np.diff(order) > 0)
            if ascents == n - 1:
                raise NotYet(f"epoch {epoch + 1} of {epochs} comes in the stored order: draw a "
                             "new random order at the start of every epoch")
            if abs(ascents - (n - 1) / 2) > 6 * np.sqrt((n + 1) / 12):
                raise NotYet(f"in epoch {epoch + 1}, {ascents} of the {n - 1} neighbours of "
                             f"the order of {n} documents are in their stored order, about "
                             f"{(n - 1) // 2} in a random order: the order is not a uniformly "
                             "random permutation (random keys that tie, sorted, keep the stored "
                             "order among them)")
    return ascending


def expect_uniform(train, epochs=4000):
    """Over many epochs of 4 documents every one of the 24 orders is about equally frequent
    (4,000 epochs: a χ² test that sees the classic biased shuffle, which swaps each position
    with any position, with power above 0.999 at p = 1e-6). An answer that sorts each minibatch
    is judged by the 6 ways to cut the documents into two minibatches of 2 (as many epochs:
    power about 0.6 against the biased shuffle)."""
    found = [tuple(x.tolist()) for _, x, _ in record_training(train, 4, 4, epochs, seed=99)]
    classes = 24
    if set(found) == {(1, 2, 3, 4)}:                  # each minibatch sorted
        record, classes = record_training(train, 4, 2, epochs, seed=99), 6
        found = [tuple(map(tuple, orders(record[i:i + 2]))) for i in range(0, len(record), 2)]
    counts = [found.count(order) for order in sorted(set(found))]
    if chisquare(counts + [0] * (classes - len(counts))).pvalue < 1e-6:
        raise NotYet("the orders are not uniformly random: every order of the documents should "
                     "be equally likely (a shuffle that swaps each position with any position, "
                     "not only with itself or a later one, favours some orders)")
