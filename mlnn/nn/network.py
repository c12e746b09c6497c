r"""The single-hidden-layer network of the paper (Sec. 3.2, Eq. 2), forward and backward by hand.

Notation (used verbatim in the code; rows are documents):

=========  ===========  ==============================================================
symbol     shape        meaning
=========  ===========  ==============================================================
X          n × D        input documents, tf-idf, scipy.sparse CSR
W1, b1     D × F, F     input-to-hidden weights and biases
z1         n × F        hidden pre-activations, z1 = X W1 + b1
h          n × F        hidden units, h = f_h(z1)  (ReLU, tanh or sigmoid)
mask       n × F        dropout mask on h (0 or 1/(1 − rate)), None without dropout
W2, b2     F × L, L     hidden-to-output weights and biases
z2         n × L        output pre-activations, z2 = (h ∘ mask) W2 + b2
o          n × L        outputs, o = f_o(z2)  (sigmoid for CE, tanh for PWE)
δ2         n × L        ∂J_i/∂z2, given by the loss (Sec. 3.4; PWE's δ2: Eq. 10)
δ1         n × F        ∂J_i/∂z1 = (δ2 W2ᵀ) ∘ mask ∘ f_h'(z1)   (backpropagation)
η          scalar       learning rate (see :mod:`mlnn.nn.optimizers`)
=========  ===========  ==============================================================

The gradients are those of the mean loss J = (1/n) Σ_i J_i over the minibatch:

    ∂J/∂W2 = (h ∘ mask)ᵀ δ2 / n,   ∂J/∂b2 = Σ_i δ2_i / n,
    ∂J/∂W1 = Xᵀ δ1 / n,            ∂J/∂b1 = Σ_i δ1_i / n.

Row j of Xᵀ δ1 is zero unless feature j occurs in the minibatch, so :meth:`Network.backward`
returns ∂J/∂W1 as a :class:`RowSparseGradient` of those rows; a dense D × F one is never formed.
"""

from typing import NamedTuple, Optional

import numpy as np
import scipy.sparse as sp

from mlnn.base.errors import MLNNError
from mlnn.base.validation import check_choice, check_positive_int, check_X
from mlnn.nn.activations import get_activation


class RowSparseGradient(NamedTuple):
    """A gradient that is zero outside the rows ``rows`` (sorted, unique): ``G[rows] = values``."""

    rows: np.ndarray     # (k,) int, sorted and unique
    values: np.ndarray   # (k, F)
    shape: tuple         # (D, F), the shape of the full gradient

    def toarray(self):
        """The full dense gradient (for tests and small models only)."""
        dense = np.zeros(self.shape, dtype=self.values.dtype)
        dense[self.rows] = self.values
        return dense


class Cache(NamedTuple):
    """What the forward pass keeps for the backward pass."""

    X: sp.csr_matrix        # n × D, the (possibly dropped-out) input
    z1: np.ndarray          # n × F
    h: np.ndarray           # n × F, f_h(z1) before dropout
    mask: Optional[np.ndarray]  # n × F dropout mask on h, or None
    z2: np.ndarray          # n × L
    o: np.ndarray           # n × L


class Gradients(NamedTuple):
    """∂J/∂θ for the mean loss over a minibatch, and the deltas they came from."""

    W1: RowSparseGradient
    b1: np.ndarray
    W2: np.ndarray
    b2: np.ndarray
    delta1: np.ndarray      # δ1, n × F
    delta2: np.ndarray      # δ2, n × L

    @property
    def params(self):
        """The parameter gradients by name, as the optimizers take them."""
        return {"W1": self.W1, "b1": self.b1, "W2": self.W2, "b2": self.b2}


INITIALISATIONS = ("glorot", "he")

#: The precisions a network computes in.
DTYPES = ("float32", "float64")


def check_dtype(dtype, name="dtype"):
    """The precision's name, "float32" or "float64", from a name, dtype or scalar type."""
    is_dtype = isinstance(dtype, np.dtype) or (isinstance(dtype, type)
                                               and issubclass(dtype, np.generic))
    return check_choice(np.dtype(dtype).name if is_dtype else dtype, name, DTYPES)


def init_weights(fan_in, fan_out, rng, dtype, scheme="glorot"):
    """A fan_in × fan_out weight matrix drawn uniformly from [−a, a].

    ``glorot`` (Glorot & Bengio 2010): a = sqrt(6 / (fan_in + fan_out)).
    ``he`` (He et al. 2015, for ReLU): a = sqrt(6 / fan_in).
    """
    check_choice(scheme, "initialisation", INITIALISATIONS)
    a = np.sqrt(6.0 / (fan_in + fan_out)) if scheme == "glorot" else np.sqrt(6.0 / fan_in)
    # in blocks of rows, the same numbers in the same order without a float64 copy of all of W1
    W = np.empty((fan_in, fan_out), dtype=dtype)
    block = max(1, 2**20 // max(fan_out, 1))
    for start in range(0, fan_in, block):
        rows = W[start:start + block]
        rows[...] = rng.uniform(-a, a, size=rows.shape)
    return W


def dropped(h, mask):
    """h ∘ mask, the hidden units after dropout (h itself without a mask; h is not modified)."""
    return h if mask is None else h * mask


class Network:
    """z1 = X W1 + b1, h = f_h(z1), z2 = (h ∘ mask) W2 + b2, o = f_o(z2)  (paper Eq. 2).

    :attr:`params` holds the arrays ``W1, b1, W2, b2`` (also attributes), updated in place by the
    optimizers; f_h and f_o are activation names or :class:`~mlnn.nn.activations.Activation`.
    """

    def __init__(self, W1, b1, W2, b2, hidden_activation, output="sigmoid"):
        self.params = {"W1": W1, "b1": b1, "W2": W2, "b2": b2}
        self.hidden_activation = get_activation(hidden_activation)
        self.output = get_activation(output)
        D, F = W1.shape
        if b1.shape != (F,) or W2.shape[0] != F or b2.shape != (W2.shape[1],):
            raise MLNNError(f"inconsistent parameter shapes: W1 {W1.shape}, b1 {b1.shape}, "
                            f"W2 {W2.shape}, b2 {b2.shape}")

    @classmethod
    def initialize(cls, n_features, n_labels, hidden_units, hidden_activation, output="sigmoid",
                   random_state=None, dtype=np.float32, *, init):
        """A new network with weights from :func:`init_weights` and zero biases, seeded by
        ``random_state`` (int, Generator or None)."""
        hidden_units = check_positive_int(hidden_units, "hidden_units")
        dtype = np.dtype(check_dtype(dtype))
        entries = (int(n_features) + int(n_labels)) * hidden_units
        if entries * dtype.itemsize > np.iinfo(np.intp).max:
            raise MLNNError(f"hidden_units={hidden_units} is too large: the weights W1 and W2 "
                            f"would hold {entries:.3g} numbers, more than any memory can store")
        rng = np.random.default_rng(random_state)
        W1 = init_weights(n_features, hidden_units, rng, dtype, init)
        W2 = init_weights(hidden_units, n_labels, rng, dtype, init)
        return cls(W1, np.zeros(hidden_units, dtype), W2, np.zeros(n_labels, dtype),
                   hidden_activation, output)

    W1 = property(lambda self: self.params["W1"])
    b1 = property(lambda self: self.params["b1"])
    W2 = property(lambda self: self.params["W2"])
    b2 = property(lambda self: self.params["b2"])

    @property
    def dtype(self):
        return self.W1.dtype

    @property
    def shape(self):
        """(D, F, L): input features, hidden units, labels."""
        D, F = self.W1.shape
        return D, F, self.W2.shape[1]

    def forward(self, X, mask=None):
        """The forward pass on X (n × D, CSR or dense) with an optional n × F dropout ``mask``
        on h; returns a :class:`Cache`."""
        X = self._as_input(X)
        p = self.params
        z1 = X @ p["W1"]
        z1 += p["b1"]
        h = self.hidden_activation.fn(z1)
        z2 = dropped(h, mask) @ p["W2"]
        z2 += p["b2"]
        return Cache(X, z1, h, mask, z2, self.output.fn(z2))

    def backward(self, cache, delta2):
        """Backpropagate δ2 (n × L, per document) to the gradients of the mean loss (see the
        module doc)."""
        X, z1, h, mask, _, _ = cache
        n = X.shape[0]
        p = self.params
        dJ_dh = (p["W2"] @ delta2.T).T      # δ2 W2ᵀ, in the layout BLAS runs fastest
        if mask is not None:
            dJ_dh *= mask
        delta1 = dJ_dh * self.hidden_activation.grad(z1, h)
        scale = X.dtype.type(1.0 / n)
        return Gradients(
            W1=self._input_gradient(X, delta1, scale),
            b1=delta1.sum(axis=0) * scale,
            W2=(dropped(h, mask).T @ delta2) * scale,
            b2=delta2.sum(axis=0) * scale,
            delta1=delta1,
            delta2=delta2,
        )

    def _input_gradient(self, X, delta1, scale):
        """∂J/∂W1 = Xᵀ δ1 / n on the rows of the features present in X only: the k occurring
        columns renumbered give X = X_k P (P a 0/1 selection), so Xᵀ δ1 = Pᵀ (X_kᵀ δ1), X_kᵀ δ1
        the k × F nonzero rows (sorted, found in O(nnz + D)); 1/n is applied to δ1 (k ≫ n)."""
        present = np.zeros(X.shape[1], dtype=bool)
        present[X.indices] = True
        rows = np.flatnonzero(present)
        new_index = np.empty(X.shape[1], dtype=X.indices.dtype)
        new_index[rows] = np.arange(len(rows), dtype=X.indices.dtype)
        X_k = sp.csr_matrix((X.data, new_index[X.indices], X.indptr), shape=(X.shape[0], len(rows)))
        values = X_k.T @ (delta1 * scale)
        return RowSparseGradient(rows, values, self.W1.shape)

    def scores(self, X, batch_size=2048):
        """The outputs o for X (no dropout), computed in batches to bound memory."""
        X = self._as_input(X)
        out = np.empty((X.shape[0], self.W2.shape[1]), dtype=self.dtype)
        for start in range(0, X.shape[0], batch_size):
            out[start:start + batch_size] = self.forward(X[start:start + batch_size]).o
        return out

    def _as_input(self, X):
        return check_X(X, n_features=self.W1.shape[0], dtype=self.dtype)
