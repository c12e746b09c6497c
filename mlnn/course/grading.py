"""The toolkit the notebooks' graders are built from: run, compare, sample, report.

A grader is a small test suite for one student function (CS231n's checks, nbgrader's hidden
cases). It

* runs the function with :func:`run`, on copies of its inputs, and fails it if it changed them
  (:func:`call` for a method meant to change its arguments);
* reports an exception raised *inside* the function as the student's (:class:`StudentError`),
  and any other exception as the grader's own failure, never blamed on the student;
* compares an answer with :func:`expect_array` (None, type, shape — transposed or not —, dtype,
  non-finite values, then values), with messages that say what is wrong and never the code, and
  names a known mistake first with :func:`judge` (:func:`scale_of`, :func:`pair` and
  :func:`judge_shape` for answers of a given form);
* draws several random cases (:func:`case_rngs`, :func:`label_rows`, :func:`sparse_rows`), varying
  every value an answer could hard-code, and judges random answers by their distribution
  (:func:`binomial_z`, :func:`dispersion`);
* ends in a :class:`Report`, printed as one stable line: ``PASS     title: …`` or
  ``NOT YET  title: hint``.
"""

import copy
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

#: Relative error below which a float64 answer counts as equal to its reference.
TOLERANCE = 1e-7

#: The hint for an exercise not done yet (its function returns None).
NO_ANSWER = "no answer yet (the function returned None)"


class NotYet(Exception):
    """The answer is wrong; the message is the hint (what is wrong, never the code)."""


class StudentError(Exception):
    """The student's function raised: ``error`` is its exception."""

    def __init__(self, name, error):
        text = " ".join(str(error).split())           # one line, however the error was written
        text = text if len(text) <= 160 else text[:157] + "..."
        super().__init__(f"your {name} raised {type(error).__name__}: {text}")
        self.error = error


class Report(NamedTuple):
    """The outcome of one grader: ``status`` ("PASS", "NOT YET", or "ERROR" when the grader
    itself failed), the exercise's ``title`` and one line of ``detail``; true when it passed."""

    status: str
    title: str
    detail: str

    @property
    def passed(self):
        return self.status == "PASS"

    def __bool__(self):
        return self.passed

    def line(self):
        """The printed line, e.g. ``PASS     title: detail`` or ``NOT YET  title: hint``."""
        return f"{self.status:<8} {self.title}: {self.detail}"


def grade(title, attempt):
    """Run ``attempt()``, print its :class:`Report` line and return the report.

    ``attempt`` returns the PASS detail (e.g. "12 random cases") or raises :class:`NotYet`;
    a :class:`StudentError` is reported as the student's, any other exception as the grader's.
    """
    try:
        report = Report("PASS", title, attempt())
    except (NotYet, StudentError) as hint:
        report = Report("NOT YET", title, str(hint))
    except Exception as error:              # the grader's own failure, not the student's
        report = Report("ERROR", title, f"the grader itself failed ({type(error).__name__}: "
                                      f"{error}); this is not a fault of your answer")
    print(report.line())
    return report


def pristine(value):
    """A deep copy of arrays, sparse matrices, lists, tuples and dicts; anything else as is
    (a random generator is passed on itself, so that its use can be checked)."""
    if isinstance(value, (np.ndarray, list, tuple, dict)) or sp.issparse(value):
        return copy.deepcopy(value)
    return value


def same(a, b):
    """Whether two inputs are identical: same type, shape, dtype and bits (NaN equal to NaN)."""
    if sp.issparse(a) or sp.issparse(b):
        return (sp.issparse(a) and sp.issparse(b) and a.shape == b.shape
                and same(a.tocsr().toarray(), b.tocsr().toarray()))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a is b or a == b


def run(function, *named, name="function"):
    """Call ``function`` on copies of the named inputs ``(name, value), ...`` and return its result.

    Raises :class:`StudentError` if it raises, and :class:`NotYet` naming every input it
    modified in place (its references are built from the pristine values, never from these).
    """
    given = [pristine(value) for _, value in named]
    try:
        result = function(*given)
    except Exception as error:
        raise StudentError(name, error) from error
    changed = [label for (label, value), used in zip(named, given) if not same(value, used)]
    if changed:
        raise NotYet(f"your {name} modified its input {', '.join(changed)} in place; "
                     "leave the inputs unchanged and work on new arrays")
    return result


def call(function, *args, name="function"):
    """``function(*args)`` as is (for a method meant to change its arguments, such as an
    optimizer's ``step``); an exception it raises becomes a :class:`StudentError`."""
    try:
        return function(*args)
    except Exception as error:
        raise StudentError(name, error) from error


def as_array(answer, what):
    """``answer`` as a NumPy array (a sparse matrix densified), or :class:`NotYet` saying why."""
    if answer is None:
        raise NotYet(NO_ANSWER)
    if sp.issparse(answer):
        return answer.toarray()
    try:
        array = np.asarray(answer)
    except Exception as error:               # an answer NumPy cannot read is the answer's fault
        raise NotYet(f"{what} is not an array of numbers ({type(error).__name__})") from error
    if array.dtype.kind not in "biuf":
        raise NotYet(f"{what} is not an array of real numbers (dtype {array.dtype})")
    return array


def expect_shape(array, shape, what):
    """:class:`NotYet` unless ``array.shape == shape``; says so when it is the transpose."""
    if array.shape == tuple(shape):
        return
    if array.ndim == 2 and array.shape == tuple(shape)[::-1]:
        raise NotYet(f"{what} has shape {array.shape}, expected {tuple(shape)}: it is transposed")
    raise NotYet(f"{what} has shape {array.shape}, expected {tuple(shape)}")


def expect_array(answer, reference, what, kind="f", tolerance=TOLERANCE):
    """Check ``answer`` against ``reference``: None, type, shape, dtype kind, finite, values.

    ``kind`` is the dtype kinds allowed: "f" float64 (the precision of the inputs), "b" boolean,
    "biuf" any real number. Returns the answer as an array; raises :class:`NotYet` with what is
    wrong.
    """
    array = as_array(answer, what)
    reference = np.asarray(reference)
    expect_shape(array, reference.shape, what)
    if array.dtype.kind not in kind or (kind == "f" and array.dtype != np.float64):
        raise NotYet(f"{what} has dtype {array.dtype}; expected {_KINDS[kind[0]]} values")
    values = array.astype(np.float64)
    if not np.all(np.isfinite(values)):
        raise NotYet(f"{what} holds NaN or infinite values")
    error = relative_error(values, reference.astype(np.float64))
    if not error < tolerance and values.ndim == 2 and close(values.T, reference, tolerance):
        raise NotYet(f"{what} is transposed")
    if not error < tolerance:
        raise NotYet(f"{what} is off (relative error {error:.1e})")
    return array


_KINDS = {"f": "float64", "b": "boolean (True/False)"}


def relative_error(a, b, floor=1e-8):
    """max |a − b| / max(|a| + |b|, floor) entrywise: a scale-free error (0 for empty arrays)."""
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(a) + np.abs(b), floor)))


def close(answer, reference, tolerance=TOLERANCE):
    """Whether ``answer`` equals ``reference`` within ``tolerance`` (False if it cannot be read)."""
    try:
        a = np.asarray(answer.toarray() if sp.issparse(answer) else answer, dtype=np.float64)
        b = np.asarray(reference, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return a.shape == b.shape and bool(np.all(np.isfinite(a))) and relative_error(a, b) < tolerance


def case_rngs(seed, count):
    """``count`` independent generators for the random cases of one grader."""
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(count)]


def label_rows(rng, n, L):
    """An n × L float 0/1 label matrix whose every row has a relevant and an irrelevant label,
    with |y| drawn uniformly from 1 … L − 1 (so |y| ≠ |ȳ| in most rows)."""
    Y = np.zeros((n, L))
    for row, size in zip(Y, rng.integers(1, L, size=n)):
        row[rng.choice(L, size=size, replace=False)] = 1.0
    return Y


def sparse_rows(rng, n, D, density=0.3):
    """A CSR n × D float64 matrix with positive values, at least one stored entry per row."""
    X = sp.random(n, D, density=density, random_state=rng, format="lil")
    for i in range(n):
        X[i, rng.integers(D)] = rng.uniform(0.5, 2.0)
    return X.tocsr()


def binomial_z(count, trials, p):
    """The z-score of ``count`` successes in ``trials`` Bernoulli(p) draws (0 when p is 0 or 1)."""
    spread = np.sqrt(trials * p * (1 - p))
    return 0.0 if spread == 0 else float((count - trials * p) / spread)


def dispersion(counts, trials, p):
    """Σ (k_i − m_i p)² / (m_i p (1 − p)) / #groups: about 1 when the groups' counts k_i of m_i
    draws are binomial, far above 1 when the draws within a group share one coin."""
    counts, trials = np.asarray(counts, float), np.asarray(trials, float)
    used = trials > 0
    expected = trials[used] * p
    return float(np.mean((counts[used] - expected) ** 2 / (expected * (1 - p))))


def judge(answer, reference, what, mistakes=(), kind="f"):
    """Check ``answer`` against ``reference`` (:func:`~mlnn.course.grading.expect_array`), first
    naming a known mistake: ``mistakes`` are pairs (what that mistake returns, what is wrong)."""
    array = as_array(answer, what)
    expect_shape(array, np.shape(reference), what)
    for wrong, hint in mistakes:
        if close(array, wrong) and not close(wrong, reference):
            raise NotYet(f"{what}: {hint}")
    return expect_array(array, reference, what, kind)


def scale_of(answer, reference):
    """c if ``answer`` is c · ``reference`` for one scalar c ≠ 1, else None."""
    a, r = (np.asarray(v, dtype=np.float64).ravel() for v in (answer, reference))
    if a.shape != r.shape or not np.all(np.isfinite(a)) or not np.any(r):
        return None
    c = float(a @ r / (r @ r))
    return c if close(a, c * r) and not np.isclose(c, 1.0) else None


def pair(answer, what):
    """The two items of an answer that must be a pair (a tuple of two)."""
    if answer is None:
        raise NotYet(NO_ANSWER)
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        raise NotYet(f"{what} must be a pair (a tuple of two values), got {type(answer).__name__}")
    return answer


def judge_shape(answer, reference, what):
    """``answer`` as an array of ``reference``'s shape, or :class:`NotYet` saying why not."""
    array = as_array(answer, what)
    expect_shape(array, np.shape(reference), what)
    return array
