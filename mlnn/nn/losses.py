"""The two losses of the paper, PWE (Eq. 3, Sec. 3.2) and CE (Eq. 6, Sec. 3.4), and their
output deltas δ2 = ∂J/∂z2 (Sec. 3.4; PWE's δ2: Eq. 10).

Notation (one document per row): ``z2`` (n × L) output pre-activations, ``o = f_o(z2)`` (n × L)
outputs, ``Y`` (n × L, 0/1) the relevant labels y; ȳ are the irrelevant ones.

``Y`` may be bool, integer or real 0/1, dense, ``np.matrix`` or scipy.sparse (:func:`as_labels`
makes it a dense ndarray of the outputs' dtype); other values or a shape other than z2's raise
:class:`~mlnn.base.errors.MLNNError`.

Each loss is paired explicitly with its output activation (:attr:`Loss.output`): its delta is
∂J/∂z2 *through that activation*, so the network never assumes ``o − y``. Adding a loss is one
subclass of :class:`Loss` and its entry in :data:`LOSSES`; its constructor's arguments are its
``options`` (``get_loss(loss.name, **loss.options)`` builds it again). What a loss answers is
checked on first use (:func:`loss_class`, :func:`get_loss`, :func:`checked_delta`).

Reduction. ``per_document`` returns the loss J_i of each document; ``value`` is the mean over the
n documents of the minibatch, J = (1/n) Σ_i J_i. ``delta`` returns the paper's per-document δ2
(row i is ∂J_i/∂z2_i); the network divides by n when it forms the parameter gradients, so those
are the gradients of the mean J. ``value_and_delta`` returns both at once (the trainer needs both
every minibatch); a loss whose value and δ2 share work, like PWE's exponentials, does it once.
"""

import inspect
from abc import ABC, abstractmethod

import numpy as np

from mlnn.base.errors import MLNNError
from mlnn.base.validation import check_choice, check_dense_Y, check_registered
from mlnn.nn.activations import ACTIVATIONS


def as_labels(Y, like=None):
    """Y (0/1, dense, ``np.matrix`` or sparse; not modified) as a dense (n, L) ndarray of
    ``like``'s floating dtype (else float64), checked to be 0/1 and, given ``like``, its shape."""
    Y = check_dense_Y(Y, "Y", shape=None if like is None else np.shape(like))
    kind = np.asarray(like).dtype if like is not None else None
    return Y.astype(kind if kind is not None and kind.kind == "f" else np.float64, copy=False)


def mean_loss(J):
    """J = (1/n) Σ_i J_i, the mean of the per-document losses ``J`` (0 for an empty minibatch)."""
    return float(np.mean(J)) if len(J) else 0.0


def option_names(kind):
    """The options of the loss class ``kind``: the names of its constructor's arguments."""
    return list(inspect.signature(kind).parameters)


class Loss(ABC):
    """Base class: a loss J(o, y) paired with its output activation ``output``. A subclass sets
    ``name``, ``title`` and ``output`` and stores each constructor argument under its own name."""

    name = None
    title = None
    output = None

    @property
    def options(self):
        """The constructor's arguments, ``{option: value}``."""
        return {option: getattr(self, option) for option in option_names(type(self))}

    def __repr__(self):
        options = ", ".join(f"{option}={value!r}" for option, value in self.options.items())
        return f"{type(self).__name__}({options})"

    @abstractmethod
    def per_document(self, z2, o, Y):
        """J_i for each row, shape (n,)."""

    @abstractmethod
    def delta(self, z2, o, Y):
        """δ2 = ∂J_i/∂z2_i for each row, shape (n, L)."""

    def value(self, z2, o, Y):
        """J = (1/n) Σ_i J_i, the mean loss over the minibatch (0 for an empty minibatch)."""
        return mean_loss(self.per_document(z2, o, Y))

    def value_and_delta(self, z2, o, Y):
        """``(value(z2, o, Y), delta(z2, o, Y))``, computing what they share only once."""
        return self.value(z2, o, Y), self.delta(z2, o, Y)

    def excluded(self, Y):
        """Boolean mask of documents the loss is undefined for (and so leaves out); none here."""
        return np.zeros(len(as_labels(Y)), dtype=bool)


class CrossEntropy(Loss):
    r"""Cross-entropy over independent sigmoid outputs (paper Eq. 6).

    J_i = − Σ_l [ y_l log o_l + (1 − y_l) log(1 − o_l) ],   o_l = σ(z2_l).

    Computed from the logits (finite for any finite z2): the term of label l is softplus(s_l),
    s_l = (1 − 2 y_l) z2_l, softplus(s) = log(1 + e^s) = max(s, 0) + log1p(e^−|s|).

    Delta (Sec. 3.4): with δ2_l = ∂J/∂o_l · f_o'(z2_l) and f_o' = o(1 − o),

        δ2_l = ( −y_l / o_l + (1 − y_l) / (1 − o_l) ) · o_l (1 − o_l) = o_l − y_l.
    """

    name = "ce"
    title = "CE"
    output = ACTIVATIONS["sigmoid"]

    def per_document(self, z2, o, Y):
        # NumPy's ufuncs in z2's dtype: scipy's log_expit(−s) is much slower on float32
        z2 = np.asarray(z2)
        Y = as_labels(Y, z2)
        s = (1 - 2 * Y) * z2
        with np.errstate(under="ignore"):         # e^−|s| → 0 for |s| ≫ 1 is the right value
            return (np.maximum(s, 0) + np.log1p(np.exp(-np.abs(s)))).sum(axis=1)

    def delta(self, z2, o, Y):
        o = np.asarray(o)
        return o - as_labels(Y, o)


class PairwiseExponential(Loss):
    r"""BP-MLL's pairwise exponential error (PWE, paper Eq. 3) over tanh outputs.

    J_i = 1 / (|y| |ȳ|) · Σ_{p ∈ y} Σ_{n ∈ ȳ} exp(−(o_p − o_n)).

    Delta (Eq. 10, Sec. 3.4), with f_o'(z) = (1 + o)(1 − o) for tanh outputs:

        δ2_p = −1/(|y||ȳ|) · Σ_{n ∈ ȳ} exp(−(o_p − o_n)) · (1 + o_p)(1 − o_p)     for p ∈ y
        δ2_n = +1/(|y||ȳ|) · Σ_{p ∈ y} exp(−(o_p − o_n)) · (1 + o_n)(1 − o_n)     for n ∈ ȳ

    ``form="pairwise"``: the literal double sum, O(|y| · |ȳ|) per document — the cost the paper
    attributes to PWE (up to L²/4 pairs). ``form="factorised"`` (default), the same numbers:
    exp(−(o_p − o_n)) = exp(−o_p) · exp(o_n), so with S_y = Σ_{p∈y} exp(−o_p) and
    S_ȳ = Σ_{n∈ȳ} exp(o_n):

        J_i = S_y · S_ȳ / (|y||ȳ|),
        ∂J_i/∂o_p = −exp(−o_p) · S_ȳ / (|y||ȳ|),   ∂J_i/∂o_n = exp(o_n) · S_y / (|y||ȳ|),

    which is O(L) per document (o ∈ [−1, 1]: every exponential lies in [e⁻¹, e]).

    As in BP-MLL, documents with no relevant or no irrelevant label are excluded
    (:meth:`excluded`): their J_i and δ2 rows are 0; they still count in the n of the mean.
    """

    name = "pwe"
    title = "PWE"
    output = ACTIVATIONS["tanh"]
    FORMS = ("factorised", "pairwise")

    def __init__(self, form="factorised"):
        self.form = check_choice(form, "PWE form", self.FORMS)

    def excluded(self, Y):
        n_relevant = np.count_nonzero(as_labels(Y), axis=1)
        return (n_relevant == 0) | (n_relevant == np.shape(Y)[1])

    def per_document(self, z2, o, Y):
        return self._forms(o, Y)[0]

    def delta(self, z2, o, Y):
        return self.value_and_delta(z2, o, Y)[1]

    def value_and_delta(self, z2, o, Y):
        J, dJ_do = self._forms(o, Y)
        return mean_loss(J), dJ_do * self.output.grad(np.asarray(z2), np.asarray(o))

    def _forms(self, o, Y):
        """(J_i, ∂J_i/∂o) by the chosen form, with Y as a float array of o's dtype."""
        o = np.asarray(o)
        Y = as_labels(Y, o)
        return self._pairwise(o, Y) if self.form == "pairwise" else self._factorised(o, Y)

    @staticmethod
    def _normaliser(Y, dtype):
        """1 / (|y||ȳ|) per document (as ``dtype``), 0 for excluded documents."""
        n_relevant = np.count_nonzero(Y, axis=1)
        pairs = n_relevant * (Y.shape[1] - n_relevant)
        return np.divide(1.0, pairs, out=np.zeros(len(Y)), where=pairs > 0).astype(dtype)

    def _factorised(self, o, Y):
        """(J_i, ∂J_i/∂o) by the factorised O(L) form."""
        relevant = Y > 0
        norm = self._normaliser(Y, o.dtype)[:, None]
        exp_o = np.exp(o)
        exp_minus_o = 1 / exp_o
        S_y = np.where(relevant, exp_minus_o, 0).sum(axis=1, keepdims=True)
        S_ybar = np.where(relevant, 0, exp_o).sum(axis=1, keepdims=True)
        J = (norm * S_y * S_ybar)[:, 0]
        dJ_do = norm * np.where(relevant, -exp_minus_o * S_ybar, exp_o * S_y)
        return J, dJ_do

    def _pairwise(self, o, Y):
        """(J_i, ∂J_i/∂o) by the literal double sum over (relevant, irrelevant) pairs."""
        J = np.zeros(len(o), dtype=o.dtype)
        dJ_do = np.zeros_like(o)
        norm = self._normaliser(Y, o.dtype)
        for i in np.flatnonzero(norm):
            p = np.flatnonzero(Y[i] > 0)
            n = np.flatnonzero(Y[i] == 0)
            E = np.exp(-(o[i, p][:, None] - o[i, n][None, :]))   # E[a, b] = exp(−(o_p − o_n))
            J[i] = norm[i] * E.sum()
            dJ_do[i, p] = -norm[i] * E.sum(axis=1)
            dJ_do[i, n] = norm[i] * E.sum(axis=0)
        return J, dJ_do


#: The losses by name: a new loss is registered by its entry here.
LOSSES = {"ce": CrossEntropy, "pwe": PairwiseExponential}


def loss_class(name, option="loss"):
    """The class registered as ``name`` in :data:`LOSSES`, refused unless a subclass of
    :class:`Loss`; an unknown name is refused naming ``option``."""
    kind = LOSSES[check_registered(name, option, LOSSES)]
    if not (isinstance(kind, type) and issubclass(kind, Loss)):
        raise MLNNError(f"loss {name!r}: registered as {kind!r}, not a subclass of "
                        "mlnn.nn.losses.Loss")
    return kind


def get_loss(name, **options):
    """The loss ``name`` (``ce``, ``pwe``) built with its ``options``, e.g. ``get_loss("pwe",
    form="pairwise")``; a :class:`Loss` instance is passed through (options with one refused)."""
    if isinstance(name, Loss):
        if options:
            raise MLNNError(f"get_loss: {name!r} is built with its options already; give its "
                            f"name {name.name!r} with the options instead")
        return name
    kind = loss_class(name)
    known = option_names(kind)
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise MLNNError(f"loss {name!r} has no option {unknown[0]!r}; its options: "
                        f"{known or 'none'}")
    loss = kind(**options)
    hidden = [option for option in known if option not in vars(loss)]
    if hidden:
        raise MLNNError(f"loss {name!r}: its option {hidden[0]!r} must be stored under its own "
                        f"name (self.{hidden[0]} = {hidden[0]}), so that its options can be saved")
    return loss


def checked_delta(loss, delta2, z2):
    """``delta2``, refused unless a real NumPy array of z2's shape (n, L)."""
    if not isinstance(delta2, np.ndarray) or delta2.shape != np.shape(z2) \
            or delta2.dtype.kind != "f":
        raise MLNNError(f"loss {loss.name!r}: its δ2 must be a real NumPy array of z2's shape "
                        f"{np.shape(z2)}, got {type(delta2).__name__} of shape "
                        f"{getattr(delta2, 'shape', None)}")
    return delta2
