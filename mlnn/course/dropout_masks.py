"""Graders of dropout (Sec. 3.5, notebooks 02b and 04): inverted dropout of the hidden units and
dropout of the input features, judged by the distribution of their masks."""

import numpy as np
import scipy.sparse as sp

from mlnn.course.grading import (NO_ANSWER, CaseRng, NotYet, StudentError, as_array, binomial_z,
                                 dispersion, dispersion_bounds, drawn_seed, each_draw,
                                 expect_dtype, expect_shape, expect_tuple, grade, judge, run,
                                 sparse_rows)

#: The dropout rates the graders try, with the draws at each: tenths, a quarter, and a rate off
#: the percent grid (coins drawn on a coarse grid keep the wrong fraction there).
RATES = {0.2: 20, 0.5: 20, 0.7: 20, 0.1: 20, 0.25: 20, 0.0151: 4}

#: The shape and dtype of h at each rate: never one shape only, large where few units are
#: dropped, float32 at two rates, and one hidden unit per document at one.
H_SHAPES = {0.2: (30, 40, np.float64), 0.5: (600, 1, np.float32), 0.7: (64, 9, np.float64),
            0.1: (5, 50, np.float32), 0.25: (30, 40, np.float64), 0.0151: (120, 160, np.float64)}


def judge_scale(kept, original, rate, what):
    """The kept values of inverted dropout: ``original`` scaled by 1/(1 − rate)."""
    judge(kept, original / (1 - rate), f"the scale of a kept entry in {what}", [
        (original, "the kept entries are not scaled"),
        (original / rate, "the kept entries are scaled by 1/rate; the scale must keep each "
                          "entry's expected value")],
          scale="a kept entry is scaled by 1/(1 − rate)")


def judge_kept(kept, rate, column, trials, noun="units"):
    """Judge boolean masks ``kept`` (draws × documents × columns) by their distribution:
    per-document, per-column and per-call counts binomial in both directions (no coin shared by
    a row or column, no fixed count), no coin a copy of another, neighbours independent, and
    the kept fraction 1 − rate."""
    count, total = kept.sum(), trials.sum() * len(kept)
    q = min(max(count / total, 0.001), 0.999)               # the observed kept fraction
    by_row = np.mean([dispersion(k.sum(axis=1), trials.sum(axis=1), q) for k in kept])
    by_column = np.mean([dispersion(k.sum(axis=0), trials.sum(axis=0), q) for k in kept])
    (row_low, row_high), (column_low, column_high) = (
        dispersion_bounds(len(kept) * np.count_nonzero(trials.sum(axis=axis)))
        for axis in (1, 0))
    if by_row > row_high and by_column > column_high:
        raise NotYet(f"at rate {rate} the whole minibatch shares one coin: draw one for every "
                     f"{column} of every document")
    if by_column > column_high:
        raise NotYet(f"at rate {rate} each {column} is kept or dropped for all documents at once: "
                     "draw a separate coin for every document")
    if by_row > row_high:
        raise NotYet(f"at rate {rate} each document keeps or drops all its {column}s together: "
                     f"draw a separate coin for every {column}")
    if by_row < row_low or by_column < column_low:
        one = "document" if by_row < row_low else column
        raise NotYet(f"at rate {rate} every {one} keeps about the same number of {noun}: with "
                     "an independent coin for each, that number varies from draw to draw")
    if (dispersion(kept.sum(axis=(1, 2)), np.full(len(kept), trials.sum()), q)
            < dispersion_bounds(len(kept), low=0.1)[0]):
        raise NotYet(f"at rate {rate} every call keeps the same number of {noun}: with an "
                     "independent coin for each, the number kept varies from call to call")
    if _shared_coins_z(kept, trials > 0, q) > 8:
        raise NotYet(f"at rate {rate} some coins are copies of others, not independent (the "
                     f"mask repeats itself): draw one coin for every {column} of every document")
    for axis, name in ((2, f"neighbouring {column}s of a document"),
                       (1, f"neighbouring documents for one {column}")):
        z = _neighbours_z(kept, trials > 0, axis, q)
        if abs(z) > 6:
            raise NotYet(f"at rate {rate} {name} are kept together too "
                         f"{'often' if z > 0 else 'rarely'}: their coins are not independent")
    few = trials.sum(axis=1) <= 2                            # documents of one or two entries
    many = ~few if not few.all() else few
    count, total = kept[:, many].sum(), trials[many].sum() * len(kept)
    if abs(binomial_z(count, total, 1 - rate)) > 5:
        swapped = abs(binomial_z(count, total, rate)) < 5
        raise NotYet(f"at rate {rate} you keep {count / total:.2%} of the {noun}: " + (
            "you keep with probability rate; rate is the probability of dropping" if swapped
            else f"each should be dropped with probability {rate} (a coin drawn on a coarse "
                 "grid, such as tenths or percent, cannot be compared with every rate)"))
    small, tried = kept[:, few].sum(), trials[few].sum() * len(kept)
    if not many.all() and tried and abs(binomial_z(small, tried, 1 - rate)) > 5:
        raise NotYet(f"at rate {rate} the documents of one or two {column}s keep "
                     f"{small / tried:.2%} of them: each {column} is dropped with probability "
                     f"{rate}, however few a document has (all of them, at times)")


def _shared_coins_z(kept, present, q):
    """The largest z-score, over the distances d ≥ 1 in storage order, of how often the coins of
    entries d apart agree (summed over the draws): a coin copied from another (a mask resized
    from fewer coins, rows or columns repeated) shows at its distance. Only distances with
    enough pairs that both land on the rarer side (30 expected) count: with fewer, a handful
    of chance agreements would pass for a pattern."""
    coins = np.array([k[present] for k in kept], dtype=float) - q
    size = coins.shape[1]
    spectrum = np.fft.rfft(coins, 2 * size, axis=1)
    agreement = np.fft.irfft(spectrum * spectrum.conj(), 2 * size, axis=1)[:, :size].sum(axis=0)
    rare = min(q, 1 - q) ** 2 * len(kept)     # pairs both of the rarer side, per pair and lag
    lags = np.arange(1, max(min(size - 50, int(size - 30 / rare)), 2))
    spread = np.sqrt(len(kept) * (size - lags)) * q * (1 - q)
    return float(np.max(np.abs(agreement[lags]) / spread))


def _neighbours_z(kept, present, axis, q):
    """The z-score of how often two neighbours along ``axis`` (both present) are both kept,
    against q² for independent coins."""
    size = kept.shape[axis]
    first, second = (np.take(kept, range(a, a + size - 1), axis=axis) for a in (0, 1))
    both = np.take(present, range(size - 1), axis=axis - 1) & np.take(
        present, range(1, size), axis=axis - 1)
    return binomial_z((first & second & both).sum(), both.sum() * len(kept), q * q)


def _inverted_kept(inverted_dropout, h, rate, rng):
    """The kept units of one call, after checking a pair, the mask's shape and dtype as
    returned, its values 0 or 1/(1 − rate) and h ∘ mask."""
    what = f"the mask at rate {rate}"
    try:
        answer = run(inverted_dropout, ("h", h), ("rate", rate), ("rng", rng))
    except StudentError as error:
        if "broadcast" in str(error):
            raise NotYet(f"{what} does not fit h of shape {h.shape}: draw it with h's shape, "
                         "whatever shape h has") from None
        raise
    dropped, mask = expect_tuple(answer, ("h ∘ mask", "mask"))
    mask = as_array(mask, what)
    expect_shape(mask, h.shape, what)
    expect_dtype(mask, h, what, "f")
    judge_scale(mask[mask != 0], np.ones(np.count_nonzero(mask), h.dtype), rate, what)
    judge(dropped, h * mask, f"h ∘ mask at rate {rate}")
    return mask > 0


def _input_kept(input_dropout, X, rate, rng):
    """The kept stored entries of one call (a grid like X), after checking type, shape, dtype
    as returned, zeros and the scale."""
    answer = run(input_dropout, ("X", X), ("rate", rate), ("rng", rng))
    what = f"the dropped-out X at rate {rate}"
    if answer is None:
        raise NotYet(NO_ANSWER)
    if not sp.issparse(answer) or answer.format != "csr":
        form = f"{answer.format} matrix" if sp.issparse(answer) else type(answer).__name__
        raise NotYet(f"{what} is a {form}; keep it sparse, a CSR matrix like X")
    dense, original = as_array(answer, what), X.toarray()
    expect_shape(dense, original.shape, what)
    expect_dtype(dense, original, what, "f")
    if np.any(dense[original == 0] != 0):
        raise NotYet(f"{what}: a zero input became nonzero")
    judge_scale(dense[dense != 0], original[dense != 0], rate, what)
    return dense != 0


def _check_dropout(title, answer, kept, given, draws, column, noun):
    """Judge ``kept(answer, x, rate, rng)``, the kept entries of one call on ``given(rate)``, at
    every rate: first the masks must come from the generator passed in, then ``draws(rate)``
    calls from one generator are judged by their distribution."""
    def attempt():
        for rate, _ in ((rate, draw) for rate in RATES for draw in each_draw()):
            x, rng = given(rate), np.random.default_rng(drawn_seed(9))
            present = x.toarray() != 0 if sp.issparse(x) else np.ones(np.shape(x), dtype=bool)
            first, again, other = (kept(answer, x, rate, np.random.default_rng(drawn_seed(seed)))
                                   for seed in (11, 11, 12))
            if not np.array_equal(first, again):
                raise NotYet("two generators with the same seed gave different masks: draw the "
                             "coins from the generator rng passed in (not from NumPy's global "
                             "random state)")
            if np.array_equal(first, other):
                raise NotYet("generators with different seeds gave the same mask: draw the coins "
                             "from the generator rng passed in, not from one of your own")
            judge_kept(np.array([kept(answer, x, rate, rng) for _ in range(draws(rate))]), rate,
                       column, present.astype(float), noun)
        return (f"rates {', '.join(map(str, RATES))}: kept fraction, independence across "
                f"{column}s, documents and calls, the generator passed in; inputs unchanged")
    return grade(title, attempt)


def check_inverted_dropout(inverted_dropout):
    """``inverted_dropout(h, rate, rng)`` → (h ∘ mask, mask), mask entries 0 or 1/(1 − rate)
    in h's dtype, each unit of each document kept independently with probability 1 − rate,
    drawn from ``rng``; h of several shapes."""
    def h(rate):
        return CaseRng(9).uniform(0.1, 2.0, size=H_SHAPES[rate][:2]).astype(H_SHAPES[rate][2])
    return _check_dropout("inverted dropout", inverted_dropout, _inverted_kept, h, RATES.get,
                          "unit", "units")


def input_X(rate):
    """The X of the input dropout grader at ``rate``: 120 documents of about 26 stored entries
    and 200 of one, float32 at rate 0.7."""
    rng = CaseRng(16)
    X = sp.vstack([sparse_rows(rng, 120, 100, density=0.25), sparse_rows(rng, 200, 100, 0)])
    return X.tocsr().astype(np.float32 if rate == 0.7 else np.float64)


def check_input_dropout(input_dropout):
    """``input_dropout(X, rate, rng)`` → CSR X (X's dtype) with each stored value kept
    ×1/(1 − rate) or dropped, independently, with the coins drawn from ``rng``."""
    return _check_dropout("input dropout on a sparse X", input_dropout, _input_kept, input_X,
                          lambda rate: 12, "feature", "stored entries")
