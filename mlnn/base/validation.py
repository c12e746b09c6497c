"""Every input and option check of the project, and its one seeded train/validation split.

Each check returns its input in canonical form (X: CSR, sorted indices, no duplicate, of the
requested dtype; Y: 0/1) or raises :class:`~mlnn.base.errors.MLNNError` naming the argument and
the problem, never a traceback from inside NumPy (nor a crash: a sparse matrix's index arrays
are checked before anything reads through them).
"""

import functools
import sys
import warnings

import numpy as np
import scipy.sparse as sp

from mlnn.base.errors import MLNNError, MLNNWarning, NotFittedError


def _as_2d(A, name, columns, what="a 2-D array or sparse matrix"):
    """A sparse ``A`` as CSR (its index arrays checked first), anything else as a 2-D ndarray."""
    if sp.issparse(A):
        _check_sparse_indices(A, name)
        return sp.csr_matrix(A)
    _check_rows_equal(A, name, columns)
    try:
        A = np.asarray(A)
    except Exception as error:  # e.g. nested sequences numpy cannot stack
        raise MLNNError(f"{name} must be {what}: {error}") from None
    if A.ndim != 2:
        raise MLNNError(f"{name} must be 2-D (documents × {columns}), got shape {A.shape}. "
                        "Reshape your data so that each row is a document")
    return A


def _check_rows_equal(A, name, columns):
    """Raise if ``A`` is a list or tuple of rows of different lengths (a ragged label list)."""
    rows = (list, tuple, np.ndarray)
    if not isinstance(A, (list, tuple)) or not all(isinstance(row, rows) for row in A):
        return
    lengths = [len(row) for row in A]
    if len(set(lengths)) > 1:
        first = next(i for i, n in enumerate(lengths) if n != lengths[0])
        labels = columns == "labels"
        example = " (e.g. a multi-label indicator matrix from label sets)" if labels else ""
        raise MLNNError(f"{name} must be a 2-D matrix (documents × {columns}){example}, but its "
                        f"rows have different lengths (row 0 has {lengths[0]} entries, row "
                        f"{first} has {lengths[first]}); give one {'0/1 ' if labels else ''}"
                        f"column per {columns[:-1]}")


def _check_sparse_indices(A, name):
    """Raise on the faults of scipy's ``check_format(full_check=True)`` (an index outside the
    matrix, a bad ``indptr``, arrays of different lengths), in one pass: products read memory
    through the index arrays, so a bad index crashes the process or gives arbitrary results."""
    if A.format in ("csr", "csc", "bsr"):
        blocks = A.blocksize if A.format == "bsr" else (1, 1)
        rows, columns = (n // b for n, b in zip(A.shape, blocks))
        if A.format == "csc":
            rows, columns = columns, rows
        indptr, indices = np.asarray(A.indptr), np.asarray(A.indices)
        if indptr.shape != (rows + 1,) or indptr.dtype.kind not in "iu" \
                or indices.dtype.kind not in "iu" or indices.ndim != 1:
            _malformed(name, A, f"its indptr has shape {indptr.shape} ({indptr.dtype}), "
                                f"expected ({rows + 1},) integers")
        data = np.asarray(A.data)
        if data.shape[:1] != indices.shape:
            _malformed(name, A, f"its data (shape {data.shape}) and indices (shape "
                                f"{indices.shape}) differ in length")
        if indptr[0] != 0 or np.any(np.diff(indptr) < 0) or indptr[-1] > indices.size:
            _malformed(name, A, "its indptr is not a non-decreasing sequence from 0 to the "
                                "number of stored entries")
        _check_index_range(name, A, indices[:indptr[-1]], columns,
                           "row index" if A.format == "csc" else "column index")
    elif A.format == "coo":
        for axis, (index, n) in enumerate(zip((A.row, A.col), A.shape)):
            if np.asarray(index).shape != np.shape(A.data):
                _malformed(name, A, "its row, column and data arrays differ in length")
            _check_index_range(name, A, np.asarray(index), n, ("row", "column")[axis] + " index")


def _check_index_range(name, A, indices, n, what):
    """Raise unless every entry of the integer array ``indices`` lies in [0, n)."""
    if indices.dtype.kind not in "iu":
        _malformed(name, A, f"its indices are of dtype {indices.dtype}, not integers")
    # a negative index, read as unsigned, is larger than any dimension: one comparison each
    unsigned = indices.view(f"u{indices.itemsize}")
    if indices.size and unsigned.max() >= n:
        bad = indices[np.flatnonzero((indices < 0) | (indices >= n))[0]]
        _malformed(name, A, f"it stores the {what} {bad}, outside [0, {n})")


def _malformed(name, A, problem):
    raise MLNNError(f"{name} is a malformed {A.format.upper()} matrix of shape {A.shape}: "
                    f"{problem}; rebuild it from valid index arrays (scipy's check_format("
                    "full_check=True) finds such faults)")


def _check_shape(A, name, shape):
    if shape is not None and A.shape != tuple(shape):
        raise MLNNError(f"{name} has shape {A.shape}, expected {tuple(shape)} "
                        "(documents × labels)")


def _check_finite(X, name, overflow=None):
    """Raise unless every stored value of the CSR X is finite, naming the first bad entry (as an
    overflow of the dtype ``overflow`` when given)."""
    if np.issubdtype(X.dtype, np.inexact) and not np.all(np.isfinite(X.data)):
        bad = np.flatnonzero(~np.isfinite(X.data))[0]
        row = np.searchsorted(X.indptr, bad, side="right") - 1
        where = f"row {row}, column {X.indices[bad]}"
        if overflow is not None:
            raise MLNNError(f"{name} has a value too large for {overflow} (overflow at {where})")
        raise MLNNError(f"{name} contains NaN or infinite values (first at {where})")


def _check_count(A, name, axis, expected, what):
    if expected is not None and A.shape[axis] != expected:
        raise MLNNError(f"{name} has {A.shape[axis]} {what}, expected {expected}")


def check_X(X, name="X", n_features=None, dtype=np.float64, n_samples=None):
    """X (n × D, sparse or dense) as a canonical CSR matrix of ``dtype``: dense and sparse input
    take the same path. Dense float16 is widened (scipy.sparse does not hold it)."""
    X = _as_2d(X, name, "features")
    if np.issubdtype(X.dtype, np.complexfloating):
        raise MLNNError(f"{name} must hold real numbers (Complex data not supported), "
                        f"got dtype {X.dtype}")
    if not np.issubdtype(X.dtype, np.number):
        raise MLNNError(f"{name} must hold real numbers, got dtype {X.dtype}")
    if X.dtype == np.float16:              # scipy.sparse holds no float16; float32 is exact
        X = X.astype(np.float32)
    X = sp.csr_matrix(X)
    _check_finite(X, name)
    if X.dtype != dtype:
        with np.errstate(over="ignore"):
            cast = X.astype(dtype)
        _check_finite(cast, name, overflow=np.dtype(dtype).name)
        X = cast
    _check_count(X, name, 0, n_samples, "rows (documents)")
    _check_count(X, name, 1, n_features, "features (columns)")
    if not X.has_canonical_format:         # sorted, each entry once (duplicates summed)
        X = X.copy()
        X.sum_duplicates()
    return X


def check_Y(Y, name="Y", n_samples=None, n_labels=None, shape=None):
    """The 0/1 label matrix Y (n × L; bool, integer or real; dense, nested lists or sparse) as a
    new CSR int8 matrix without explicit zeros. Sparse input is judged after summing duplicates
    (a COO entry stored twice as 1 is a 2)."""
    Y = _as_2d(Y, name, "labels", "a 2-D 0/1 array or sparse matrix")
    if sp.issparse(Y):
        Y = Y.copy()                       # sum_duplicates works in place
        Y.sum_duplicates()
    check_label_values(Y.data if sp.issparse(Y) else Y, name)
    if n_samples is not None and Y.shape[0] != n_samples:
        raise MLNNError(f"{name} has {Y.shape[0]} rows but X has {n_samples} documents")
    _check_count(Y, name, 1, n_labels, "labels (columns)")
    _check_shape(Y, name, shape)
    Y = sp.csr_matrix(Y.astype(np.int8, copy=True))
    Y.eliminate_zeros()
    return Y


def check_label_values(values, name):
    """Raise unless the array ``values`` holds only 0 and 1, of a bool, integer or real dtype."""
    if values.dtype.kind not in "biuf":
        names = "; label names must first become a 0/1 matrix with one column per label" \
            if values.dtype.kind in "USO" else ""
        raise MLNNError(f"{name} must hold 0/1 values (bool, integer or real), "
                        f"got dtype {values.dtype}{names}")
    if not np.all((values == 0) | (values == 1)):
        bad = values[(values != 0) & (values != 1)][0].item()
        kind = " (a continuous target, not a label)" if bad != np.round(bad) else ""
        raise MLNNError(f"{name} must be a 0/1 label matrix; found the value {bad!r}{kind}")


def check_dense_Y(Y, name="Y", shape=None):
    """Y checked as :func:`check_Y` does, as a dense ndarray of its own dtype (a dense ndarray
    is returned as is): for the losses' minibatch labels."""
    Y = _as_2d(Y, name, "labels", "a 2-D 0/1 array or sparse matrix")
    Y = Y.toarray() if sp.issparse(Y) else Y
    check_label_values(Y, name)
    _check_shape(Y, name, shape)
    return Y


def check_scores(scores, name="scores"):
    """The dense real matrix ``scores`` as float64; raise on sparse or NaN/inf."""
    if sp.issparse(scores):
        raise MLNNError(f"{name} must be a dense array (documents × labels), got a sparse matrix")
    scores = _as_2d(scores, name, "labels", "a 2-D array of real numbers")
    if scores.dtype.kind not in "biuf":
        raise MLNNError(f"{name} must hold real numbers, got dtype {scores.dtype}")
    scores = scores.astype(np.float64, copy=False)
    if not np.all(np.isfinite(scores)):
        row = int(np.flatnonzero(~np.all(np.isfinite(scores), axis=1))[0])
        raise MLNNError(f"{name} contains NaN or infinite values (first in row {row})")
    return scores


def _check_real(value, name, requirement, accept):
    """``value`` as a float if it is a real scalar (no bool, no complex) that ``accept``s; else
    raise naming the ``requirement``."""
    real = not isinstance(value, (bool, np.bool_)) and isinstance(
        value, (int, float, np.integer, np.floating))
    try:
        ok = real and bool(accept(value))
    except (OverflowError, TypeError):     # e.g. an int too large for a float
        ok = False
    if not ok:
        raise MLNNError(f"{name} must be {requirement}, got {value!r}")
    return float(value)


def check_finite_float(value, name):
    return _check_real(value, name, "a finite number", np.isfinite)


def check_positive_float(value, name):
    return _check_real(value, name, "a positive finite number",
                       lambda v: np.isfinite(v) and v > 0)


def check_nonnegative_float(value, name):
    return _check_real(value, name, "a finite number ≥ 0", lambda v: np.isfinite(v) and v >= 0)


def check_float_in(value, name, low, high, closed="left"):
    """``value`` as a float between ``low`` and ``high``, the ends included as ``closed`` says:
    "left", "right", "both" or "neither"."""
    ends = {"left": "[)", "right": "(]", "both": "[]", "neither": "()"}
    left, right = ends[check_choice(closed, "closed", ends)]

    def inside(v):
        return (v >= low if left == "[" else v > low) and (v <= high if right == "]" else v < high)

    return _check_real(value, name, f"a number in {left}{low:g}, {high:g}{right}", inside)


def check_fraction(value, name, allow_zero=False):
    """``value`` as a float in (0, 1), or in [0, 1) with ``allow_zero``."""
    return check_float_in(value, name, 0, 1, closed="left" if allow_zero else "neither")


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_integer(value, name, minimum=1):
    """``value`` as an int; raise unless it is an integer (not a bool) of at least ``minimum``."""
    if not _is_int(value) or value < minimum:
        requirement = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise MLNNError(f"{name} must be {requirement}, got {value!r}")
    return int(value)


#: ``check_positive_int(value, name)``: an integer ≥ 1.
check_positive_int = check_integer


def check_bool(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise MLNNError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_seed(value, name="random_state"):
    """``value`` unchanged; raise unless it is None or an integer ≥ 0 (a seed)."""
    if value is not None and (not _is_int(value) or value < 0):
        raise MLNNError(f"{name} must be None or an integer >= 0 (a seed), got {value!r}")
    return value


def check_choice(value, name, choices):
    """``value`` unchanged; raise unless it is one of ``choices`` (an array or a list never is)."""
    try:
        known = hash(value) is not None and value in choices
    except TypeError:                      # unhashable: an array, a list, a dict
        known = False
    if not known:
        raise MLNNError(f"unknown {name} {value!r}; choose one of {list(choices)}")
    return value


def check_registered(value, name, registry):
    """``value`` unchanged; raise unless it is a string key of the dict ``registry`` (read now,
    so that an entry registered later counts)."""
    return check_choice(value, name, sorted(key for key in registry if isinstance(key, str)))


def check_length(values, name, expected):
    """``values`` as a list; raise unless it has ``expected`` entries."""
    values = list(values)
    if len(values) != expected:
        raise MLNNError(f"{name} has {len(values)} entries, expected {expected}")
    return values


def check_fitted(model, attribute):
    """Raise :class:`NotFittedError` unless ``model`` has ``attribute`` (set by its ``fit``). When
    scikit-learn is loaded (looked up in ``sys.modules``, never imported) the error is also its
    ``NotFittedError``, so that its ``except`` catches ours."""
    if hasattr(model, attribute):
        return
    sklearn_class = getattr(sys.modules.get("sklearn.exceptions"), "NotFittedError", None)
    joined = isinstance(sklearn_class, type) and issubclass(sklearn_class, Exception)
    error = _joined_not_fitted_error(sklearn_class) if joined else NotFittedError
    raise error(f"this {type(model).__name__} is not fitted yet; call fit first")


@functools.lru_cache(maxsize=None)
def _joined_not_fitted_error(sklearn_class):
    """One class per scikit-learn ``NotFittedError``: ours first, so it is still an MLNNError."""
    return type("NotFittedError", (NotFittedError, sklearn_class),
                {"__module__": __name__, "__doc__": NotFittedError.__doc__,
                 "__qualname__": "NotFittedError"})


def check_sample_weight(sample_weight, n):
    """``sample_weight`` as a float64 array of ``n`` finite weights ≥ 0, not all 0."""
    try:
        weights = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError):
        raise MLNNError("sample_weight must be a 1-D array of numbers") from None
    if weights.shape != (n,):
        raise MLNNError(f"sample_weight has shape {weights.shape}, expected ({n},): "
                        "one weight per document")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0) or not weights.sum() > 0:
        raise MLNNError("sample_weight must hold finite weights >= 0, not all 0")
    return weights


def check_training_data(X, Y, X_val=None, Y_val=None, n_features=None, n_labels=None,
                        dtype=np.float64, warn=False):
    """(X, Y, X_val, Y_val) checked for training; ``X_val`` and ``Y_val`` together or not at all.
    Raise if X and Y leave nothing to learn; with ``warn``, warn naming the labels without a
    positive document."""
    if Y is None:
        raise MLNNError("the labels Y are missing: training requires y to be passed, "
                        "but the target y is None")
    X = check_X(X, "X", n_features=n_features, dtype=dtype)
    Y = check_Y(Y, "Y", n_samples=X.shape[0], n_labels=n_labels)
    if X.shape[0] == 0:
        raise MLNNError("X has no documents to train on")
    if X.shape[1] == 0:
        raise MLNNError(f"X has 0 feature(s) (shape={X.shape}) while a minimum of 1 is required: "
                        "there is nothing to learn from")
    if Y.shape[1] == 0:
        raise MLNNError(f"Y has 0 labels (shape={Y.shape}): there is nothing to predict")
    if Y.nnz == 0:
        raise MLNNError(f"Y has no positive label: none of its {Y.shape[0]} documents has a "
                        "relevant label, so there is nothing to learn (check that the labels "
                        "were read from the right columns)")
    if X.count_nonzero() == 0:
        raise MLNNError(f"every one of the {X.shape[0]} documents of X is empty (no non-zero "
                        "feature): there is nothing to learn from")
    positives = np.bincount(Y.indices, minlength=Y.shape[1])
    missing = np.flatnonzero(positives == 0)
    if warn and missing.size:
        shown = ", ".join(str(j) for j in missing[:10]) + (", ..." if missing.size > 10 else "")
        warnings.warn(f"{missing.size} of the {Y.shape[1]} labels have no positive training "
                      f"document (columns {shown} of Y): the network learns them as never "
                      "relevant, but a document's threshold can still predict them; add "
                      "positive documents or leave these labels out", MLNNWarning, stacklevel=2)
    if (X_val is None) != (Y_val is None):
        raise MLNNError("give both X_val and Y_val, or neither")
    if X_val is not None:
        X_val = check_X(X_val, "X_val", n_features=X.shape[1], dtype=dtype)
        Y_val = check_Y(Y_val, "Y_val", n_samples=X_val.shape[0], n_labels=Y.shape[1])
        if X_val.shape[0] == 0:
            raise MLNNError("X_val has no documents: give validation documents, or none "
                            "(X_val=None) to hold out a validation_fraction of X")
        check_validation_labels(Y_val, "Y_val")
    return X, Y, X_val, Y_val


def check_validation_labels(Y_val, name):
    """Warn unless a row of the 0/1 CSR ``Y_val`` has both a relevant and an irrelevant label:
    otherwise the validation rank loss (Eq. 1) that early stopping follows is undefined."""
    sizes = np.diff(Y_val.indptr)
    if Y_val.shape[1] == 1:
        warnings.warn(f"{name}: with a single label the validation rank loss is never defined "
                      "(no document has both a relevant and an irrelevant label), so early "
                      "stopping has nothing to go by; use validation_fraction=0", MLNNWarning,
                      stacklevel=3)
    elif not np.any((sizes > 0) & (sizes < Y_val.shape[1])):
        warnings.warn(f"{name}: none of the {Y_val.shape[0]} validation documents has both a "
                      "relevant and an irrelevant label, so the validation rank loss is "
                      "undefined and early stopping has nothing to go by; use more validation "
                      "documents (a larger validation fraction) or none (validation_fraction=0)",
                      MLNNWarning, stacklevel=3)


def validation_split(n, fraction, random_state=0):
    """``(fit_rows, val_rows)``, both sorted: the validation documents are the first
    ``round(fraction · n)`` entries of ``default_rng(random_state).permutation(n)`` (ours: the
    paper chooses η0 and C on validation data, Sec. 4, but does not say where they come from).
    The only place that carves validation documents out of training documents."""
    fraction = check_fraction(fraction, "validation fraction")
    n_val = int(round(fraction * n))
    if n_val < 1 or n_val >= n:
        raise MLNNError(f"a validation fraction of {fraction} leaves no documents for fitting or "
                        f"for validation out of {n} (n_samples={n})")
    order = np.random.default_rng(random_state).permutation(n)
    return np.sort(order[n_val:]), np.sort(order[:n_val])


def check_split(validation, n):
    """An explicit ``(fit_rows, val_rows)`` as flat ``intp`` arrays: non-empty, inside
    ``[0, n)`` and disjoint."""
    try:
        fit_rows, val_rows = (np.asarray(part, dtype=np.intp).ravel() for part in validation)
    except (TypeError, ValueError):
        raise MLNNError("validation must be a pair (fit_indices, validation_indices)") from None
    if fit_rows.size == 0 or val_rows.size == 0:
        raise MLNNError("validation: both index sets must be non-empty")
    if min(fit_rows.min(), val_rows.min()) < 0 or max(fit_rows.max(), val_rows.max()) >= n:
        raise MLNNError(f"validation: indices must lie in [0, {n})")
    if np.intersect1d(fit_rows, val_rows).size:
        raise MLNNError("validation: the fit and validation indices overlap")
    return fit_rows, val_rows
