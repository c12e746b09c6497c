"""PWE's δ2 (Eq. 10, Sec. 3.4) as the graders of notebooks 01 and 01b judge it: the reference,
factorised and O(L), and the usual mistakes, each a variant of the literal pair sum."""

import numpy as np

from mlnn.course.grading import Mistake, variant
from mlnn.course.standins import pwe_reference


def pwe_variant(z2, o, Y, normaliser="pairs", derivative="tanh", both=False, swapped=False,
                clip=1.0):
    """PWE's δ2 (Eq. 10) of tanh outputs o (n × L), right or with one mistake: the pair sum
    divided by ``normaliser`` (|y||ȳ|, or "y2" |y|², "ybar2" |ȳ|², "L", "L2", "1"), times the
    ``derivative`` (tanh', "one_minus_o" 1 − o, "sigmoid" o(1 − o), "none"), with tanh' of both
    labels on each pair term (``both``), S_y and S_ȳ ``swapped``, or o clipped to ±``clip``.
    Excluded documents give 0."""
    o = np.clip(np.asarray(o, dtype=np.float64), -clip, clip)
    f = {"tanh": 1 - o * o, "one_minus_o": 1 - o, "sigmoid": o * (1 - o),
         "none": np.ones_like(o)}[derivative]
    delta2 = np.zeros(o.shape)
    for i, y in enumerate(np.asarray(Y) > 0):
        p, q = np.flatnonzero(y), np.flatnonzero(~y)
        if p.size == 0 or q.size == 0:
            continue
        norm = {"pairs": p.size * q.size, "y2": p.size ** 2, "ybar2": q.size ** 2, "L": len(y),
                "L2": len(y) ** 2, "1": 1}[normaliser]
        e_p, e_q = np.exp(-o[i, p]), np.exp(o[i, q])           # exp(−(o_p − o_n)) = e_p e_n
        w_p, w_q = (e_p * f[i, p], e_q * f[i, q]) if both else (e_p, e_q)
        S_y, S_ybar = (w_q.sum(), w_p.sum()) if swapped else (w_p.sum(), w_q.sum())
        delta2[i, p] = -e_p * f[i, p] * S_ybar / norm
        delta2[i, q] = e_q * f[i, q] * S_y / norm
    return delta2


def _pwe_by_label(relevant, irrelevant):
    """mlnn's δ2 times ``relevant`` on the relevant labels, ``irrelevant`` on the others."""
    return lambda z2, o, Y: pwe_reference(z2, o, Y) * np.where(np.asarray(Y) > 0, relevant,
                                                               irrelevant)


PWE_MISTAKES = [
    *(Mistake(hint, _pwe_by_label(relevant, irrelevant)) for hint, relevant, irrelevant in (
        ("the sign is flipped: relevant labels get a negative δ2, irrelevant ones a positive δ2",
         -1, -1),
        ("the relevant labels' δ2 has the wrong sign", -1, 1),
        ("the irrelevant labels' δ2 has the wrong sign", 1, -1),
        ("the irrelevant labels' δ2 is missing: each n ∈ ȳ gets a term from each of its pairs", 1,
         0),
        ("the relevant labels' δ2 is missing: each p ∈ y gets a term from each of its pairs", 0,
         1))),
    *(Mistake(hint, variant(pwe_variant, **mistake)) for hint, mistake in (
        ("that is ∂J/∂o; δ2 = ∂J/∂z2 also needs tanh'(z2) = (1 + o)(1 − o)",
         {"derivative": "none"}),
        ("the derivative of tanh is (1 + o)(1 − o), not o(1 − o)", {"derivative": "sigmoid"}),
        ("tanh'(z2) is (1 + o)(1 − o) = 1 − o², not 1 − o", {"derivative": "one_minus_o"}),
        ("each label's δ2 takes only its own tanh'(z2), not also that of the other label of the "
         "pair", {"both": True}),
        ("S_y and S_ȳ are swapped: a relevant label's δ2 sums over the irrelevant labels, an "
         "irrelevant label's over the relevant ones", {"swapped": True}),
        ("wrong normaliser: divide by |y||ȳ|, the number of pairs, not |y|²", {"normaliser": "y2"}),
        ("wrong normaliser: divide by |y||ȳ|, not |ȳ|²", {"normaliser": "ybar2"}),
        ("the pair sum is not normalised: divide by |y||ȳ|", {"normaliser": "1"}),
        ("wrong normaliser: |y||ȳ|, not L²", {"normaliser": "L2"}),
        ("wrong normaliser: |y||ȳ|, not L", {"normaliser": "L"}),
        ("o is clipped: δ2 holds however close o is to ±1 (tanh'(z2) = (1 + o)(1 − o) is then "
         "small, rightly), and needs no clipping", {"clip": 0.99}))),
    Mistake("δ2 is per document: no 1/n here", lambda z2, o, Y: pwe_reference(z2, o, Y) / len(o))]
