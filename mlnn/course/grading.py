"""The one mechanism every grader of the notebooks uses: run, compare, name the mistake, report.

:func:`check` runs the student's function and a reference with the same signature on random
cases, each built on two draws (:data:`DRAWS`: the same shapes, new values, interleaved) and run
on copies of its inputs (:func:`run`: an input changed in place is named), compares the answers
(:func:`judge`: None, type, shape, dtype before any conversion, finite values, then values) and
names a wrong answer by the :class:`Mistake` of its table that gives the same answer on every
case, never by code; otherwise it says what it observed. :func:`grade` prints one line,
``PASS     title: …`` or ``NOT YET  title: hint``, and returns the :class:`Report`; it decides no
grade (the grade comes from the instructor's ``python -m mlnn course grade``, which runs the same
graders on answers in processes of their own, on draws no student sees:
:mod:`mlnn.course.answers`). How an answer works (its memory, its CPU time) is judged only
there, by limits the operating system enforces (:func:`within`). Random answers are judged by
their distribution (:func:`binomial_z`, :func:`dispersion`).
"""

import contextvars
import copy
import inspect
import sys
import textwrap
import time
import warnings
from typing import Callable, NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.special import gammainccinv, gammaincinv

from mlnn.nn.gradcheck import rel_error
from mlnn.sandbox.client import Ended, is_remote

#: Relative error below which a float64 answer counts as equal to its reference.
TOLERANCE = 1e-7

#: The hint for an exercise not done yet (its answer returns None or does nothing).
NO_ANSWER = "no answer yet"

#: Random cases per deterministic grader.
CASES = 8

#: Relative error below which a measure counts as equal to its reference.
MEASURE_TOLERANCE = 1e-9


class NotYet(Exception):
    """The answer is wrong; the message is the hint (what is wrong, never the code)."""


class Off(NotYet):
    """The answer has the right form and is off in value, like no mistake of the table."""


class StudentError(Exception):
    """The student's function raised ``error``; the message is one short line."""

    def __init__(self, name, error):
        text = " ".join(str(error).split())
        text = text if len(text) <= 160 else text[:157] + "..."
        kind = getattr(error, "kind", type(error).__name__)
        super().__init__(f"your {name} was stopped: {text}" if isinstance(error, Ended)
                         else f"your {name} raised {kind}: {text}")
        self.error, self.kind = error, kind


class Mistake(NamedTuple):
    """A wrong answer with the student's signature, and the hint that names it."""

    hint: str
    answer: Callable


def variant(reference, **mistake):
    """A wrong answer made from the exercise's one reference: called with the student's
    arguments and the keywords that plant the ``mistake``."""
    return lambda *args: reference(*args, **mistake)


class Report(NamedTuple):
    """``status`` "PASS", "NOT YET" or "ERROR" (the grader itself failed), the ``title`` of the
    exercise and one line of ``detail``; true when it passed."""

    status: str
    title: str
    detail: str

    def __bool__(self):
        return self.status == "PASS"


def grade(title, attempt):
    """Run ``attempt()`` (the PASS detail, or :class:`NotYet`), print the :class:`Report` line
    (PASS on standard output; NOT YET on standard error, which nbgrader's Validate shows as the
    cell's failure, without a traceback; wrapped at spaces) and return the report."""
    try:
        with warnings.catch_warnings():          # the answer's warnings are not its line
            warnings.simplefilter("ignore")
            report = Report("PASS", title, attempt())
    except (NotYet, StudentError) as hint:
        report = Report("NOT YET", title, str(hint))
    except Exception as error:              # the grader's own failure, not the student's
        report = Report("ERROR", title, f"the grader itself failed ({type(error).__name__}: "
                                      f"{error}); this is not a fault of your answer")
    line = textwrap.fill(f"{report.status:<8} {title}: {report.detail}", width=88,
                         subsequent_indent=" " * 9, break_long_words=False,
                         break_on_hyphens=False)
    print(line, file=sys.stdout if report else sys.stderr, flush=True)
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
        if not (sp.issparse(a) and sp.issparse(b) and a.format == b.format
                and a.shape == b.shape and a.dtype == b.dtype):
            return False
        A, B = (sp.csr_matrix(m, copy=True) for m in (a, b))
        for m in (A, B):
            m.sum_duplicates()
        return all(same(getattr(A, k), getattr(B, k)) for k in ("indptr", "indices", "data"))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a is b or a == b


def call(function, *args, name="function"):
    """``function(*args)``; an exception it raises becomes a :class:`StudentError`."""
    try:
        return function(*args)
    except Exception as error:
        raise StudentError(name, error) from error


def expect_arguments(function, named):
    """:class:`NotYet` naming the arguments of ``named`` that a Python ``function`` cannot take
    (a stub of an older signature), or those it lacks a value for, before it is called."""
    if not inspect.isfunction(function):
        return
    labels = [label for label, _ in named]
    parameters = inspect.signature(function).parameters
    keyword = [p for p in list(parameters.values())[:len(labels)] if p.kind == p.KEYWORD_ONLY]
    if keyword:
        raise NotYet(f"your {function.__name__} takes {keyword[0].name} as a keyword-only "
                     f"argument (after *); it is called with every argument by position: "
                     f"{function.__name__}({', '.join(labels)})")
    try:
        inspect.signature(function).bind(*labels)
    except TypeError:
        takes = f"your {function.__name__}({', '.join(parameters)})"
        called = f"it is called as {function.__name__}({', '.join(labels)})"
        extra = labels[len(parameters):]
        if extra:
            raise NotYet(f"{takes} takes {len(parameters)} arguments and {called}: add the "
                         f"argument{'s' * (len(extra) > 1)} {', '.join(extra)}") from None
        raise NotYet(f"{takes} needs more arguments than the {len(labels)} it is given: "
                     f"{called}") from None


def run(function, *named, name="function"):
    """``function`` called on copies of the named inputs ``(name, value), ...``; :class:`NotYet`
    naming every input it modified in place (a changed dtype included), or the arguments it
    cannot take (:func:`expect_arguments`)."""
    expect_arguments(function, named)
    given = [pristine(value) for _, value in named]
    result = call(function, *given, name=name)
    changed = [label for (label, value), used in zip(named, given) if not same(value, used)]
    if changed:
        raise NotYet(f"your {name} modified its input {', '.join(changed)} in place; "
                     "leave the inputs unchanged and work on new arrays")
    return result


#: The names under which a grader runs its own functions (never judged by their work).
OURS = ("reference", "mistake")

#: What a limited call may allocate beyond its budget and three copies of its inputs, and the
#: CPU seconds it may use beyond ten times the reference's.
SLACK, CPU_SLACK = 64 << 20, 0.25


def nbytes(value):
    """The bytes of the arrays inside ``value``."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if sp.issparse(value):
        return sum(getattr(value, a).nbytes for a in ("data", "indices", "indptr", "row", "col")
                   if hasattr(value, a))
    if isinstance(value, dict):
        return sum(map(nbytes, value.values()))
    if isinstance(value, (list, tuple)):
        return sum(map(nbytes, value))
    return 0


def cpu_time(function, named):
    """The CPU seconds ``function`` takes here on copies of the named inputs."""
    copies = [pristine(value) for _, value in named]
    start = time.process_time()
    function(*copies)
    return time.process_time() - start


def within(function, *named, name="function", memory=np.inf, reference=None, cpu=None,
           hint=""):
    """:class:`NotYet` with ``hint`` when the student's ``function``, run in a process of its
    own on the named inputs, needs more than ``memory`` bytes (the kernel refuses it the
    address space) or more CPU time than ``cpu`` seconds, by default ten times what
    ``reference`` takes here (the grader reads its CPU time from outside and stops it): work of
    the wrong order, whatever form the code takes. Only an answer of another process is
    judged so (:mod:`mlnn.course.answers`)."""
    if name in OURS or not is_remote(function):
        return
    seen = getattr(function, "limits_judged", None)
    if seen is None:
        seen = function.limits_judged = set()
    if (memory, cpu, str(hint)) in seen:         # each limit once per answer, not per draw
        return
    seen.add((memory, cpu, str(hint)))
    copies = [pristine(value) for _, value in named]
    if cpu is None:
        cpu = 10 * min(cpu_time(reference, named) for _ in range(3))
    allowance = min(memory, 1 << 40) + 3 * sum(map(nbytes, copies)) + SLACK
    with function.answer.limited(memory=allowance, cpu=cpu + CPU_SLACK) as limited:
        try:
            call(limited.get(function.__name__), *copies, name=name)
        except StudentError as error:
            kind = "memory" if error.kind == "MemoryError" else error.kind
            if kind in ("memory", "cpu", "wall"):
                raise NotYet(hint.get(kind, hint.get("cpu")) if isinstance(hint, dict)
                             else hint) from None
            raise


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


#: The one rule on an answer's dtype, as every grader applies it (:func:`expect_dtype`).
DTYPE_RULE = ("a float answer has the float dtype of its inputs (float64, or float32 where they "
              "are float32); a whole number (a count, 0/1) may also be an int or a bool")


def expect_dtype(array, reference, what, kind):
    """The dtype, before any conversion, by :data:`DTYPE_RULE`: a float answer has the
    reference's float dtype (never float32 where float64 is asked, nor the other way round);
    ``kind`` lists the dtype kinds allowed ("biuf" where the value is a whole number)."""
    expected = np.asarray(reference).dtype
    wanted = expected if expected.kind == "f" else np.dtype(np.float64)
    if array.dtype.kind not in kind or (array.dtype.kind == "f" and array.dtype != wanted):
        name = {"b": "bool"}.get(kind, str(wanted) if "f" in kind else expected)
        rule = f" ({DTYPE_RULE})" if "f" in kind else ""
        raise NotYet(f"{what} has dtype {array.dtype}, expected {name}{rule}")


def close(answer, reference, tolerance=TOLERANCE):
    """Whether ``answer`` equals ``reference`` within ``tolerance`` (False if it cannot be read)."""
    try:
        a = np.asarray(answer.toarray() if sp.issparse(answer) else answer, dtype=np.float64)
        b = np.asarray(reference, dtype=np.float64)
    except (TypeError, ValueError, AttributeError):
        return False
    return (a.shape == b.shape and bool(np.all(np.isfinite(a)))
            and rel_error(a, b) < tolerance)


def scale_of(answer, reference):
    """c if ``answer`` is c · ``reference`` for one scalar c ≠ 1, else None."""
    a, r = (np.asarray(v, dtype=np.float64).ravel() for v in (answer, reference))
    if a.shape != r.shape or not np.all(np.isfinite(a)) or not np.any(r):
        return None
    c = float(a @ r / (r @ r))
    return c if close(a, c * r) and not np.isclose(c, 1.0) else None


def name_mistake(array, reference, wrongs, what, tolerance):
    """:class:`NotYet` with the hint of the mistake the answer equals (and the reference does
    not), if every such mistake has that hint."""
    hints = {hint for wrong, hint in wrongs if wrong is not None and close(array, wrong, tolerance)
             and not close(wrong, reference, tolerance)}
    if len(hints) == 1:
        raise NotYet(f"{what}: {hints.pop()}")


def judge(answer, reference, what, wrongs=(), kind="f", tolerance=None, scale=None,
          nonfinite="holds NaN or infinite values"):
    """Check ``answer`` against ``reference``: None, type, shape, dtype, finite, then values;
    a wrong value equal to one of ``wrongs`` (pairs: what a mistake returns, its hint) is named.

    ``kind`` lists the dtype kinds allowed ("f" float, "b" bool, "biuf" any real number);
    an answer c times the reference is told so with the hint ``scale``, one with NaN or infinite
    values with ``nonfinite``. Returns the array.
    """
    if isinstance(answer, np.matrix):
        raise NotYet(f"{what} is a numpy.matrix; return a dense numpy.ndarray")
    array = as_array(answer, what)
    reference = np.asarray(reference)
    tolerance = tolerance or (TOLERANCE if reference.dtype != np.float32 else 2e-4)
    expect_shape(array, reference.shape, what)
    expect_dtype(array, reference, what, kind)
    values = array.astype(np.float64)
    if close(values, reference, tolerance):
        return array
    name_mistake(values, reference, wrongs, what, tolerance)
    if not np.all(np.isfinite(values)):
        raise NotYet(f"{what} {nonfinite}")
    if values.ndim == 2 and close(values.T, reference, tolerance):
        raise NotYet(f"{what} is transposed")
    c = scale_of(values, reference)
    if c is not None and np.isclose(c, -1.0):
        raise NotYet(f"the sign of {what} is flipped")
    if c is not None and scale:
        raise NotYet(f"{what} is {c:.3g} times the right value: {scale}")
    raise Off(f"{what} is off (relative error "
                 f"{rel_error(values, reference):.1e})")


def expect_tuple(answer, names):
    """The items of an answer that must be a tuple (or list) of ``names``, in that order."""
    if answer is None:
        raise NotYet(NO_ANSWER)
    if not isinstance(answer, (tuple, list)) or len(answer) != len(names):
        size = f" of {len(answer)}" if isinstance(answer, (tuple, list)) else ""
        items = {2: "a pair (a tuple of two values)", 4: "the four arrays"}.get(len(names))
        raise NotYet(f"the result must be {items or len(names)} "
                     f"({', '.join(names)}, in that order), not a {type(answer).__name__}{size}")
    return answer


def expect_class(answer, what, methods):
    """:class:`NotYet` unless ``answer`` is a class with every method of ``methods`` (its name →
    how it is called), naming the first one missing."""
    if answer is None:
        raise NotYet(NO_ANSWER)
    if not isinstance(answer, type):
        raise NotYet(f"{what} must be a class with the methods {' and '.join(methods.values())}")
    for method, called in methods.items():
        if not callable(getattr(answer, method, None)):
            raise NotYet(f"your {what} has no method {method}: write {called}")


def expect_items(names, order=None, kind="f", label="{}"):
    """Judge an answer made of several arrays, a tuple in the order of ``names`` or a dict with
    the keys ``names``, item by item (in ``order``, or that of ``names``), each called
    ``label.format(name)`` (a mistake is named by :func:`check`, which sees every item)."""
    def expect(answer, expected, what, wrongs, inputs=None):
        if isinstance(expected, dict):
            keys = names
            if not isinstance(answer, dict) or set(answer) != set(names):
                raise NotYet(NO_ANSWER if answer is None
                             else f"return a dict with the keys {', '.join(names)}")
        else:
            keys = range(len(names))
            expect_tuple(answer, names)
        for i in order or range(len(names)):
            judge(answer[keys[i]], expected[keys[i]], f"{label.format(names[i])} {what}".strip(),
                  kind=kind)
    return expect


#: How a hint names an argument of the student's function.
SYMBOLS = {"eta": "η", "eta0": "η0", "rho": "ρ", "eps": "ε", "epsilon": "ε", "mu": "μ",
           "gamma": "γ", "lam": "λ", "q_alpha": "q_α", "h": "step h", "skipped": "Δ"}


def agree(a, b, tolerance=TOLERANCE):
    """Whether two answers (arrays, numbers, or tuples, lists and dicts of them) are equal
    within ``tolerance``."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()
                and all(agree(a[k], b[k], tolerance) for k in a))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(agree(x, y, tolerance) for x, y in zip(a, b))
    try:                                     # NaN and infinite values equal where both have them
        x, y = (np.asarray(v, dtype=np.float64) for v in (a, b))
        finite = np.isfinite(x)
        if x.shape == y.shape and not finite.all():
            return (np.array_equal(finite, np.isfinite(y))
                    and np.array_equal(x[~finite], y[~finite], equal_nan=True)
                    and close(x[finite], y[finite], tolerance))
    except (TypeError, ValueError):
        pass
    return close(a, b, tolerance)


def is_number(value):
    """A number argument (int or float, not bool), or a tuple of them: one an answer could
    hard-code."""
    if isinstance(value, tuple):
        return all(map(is_number, value))
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_))


def unfollowed(student, reference, named, answer, expected, every, runner, name):
    """The name of a number argument that the student's answer ignores: with it set to its value
    in another case of ``every``, the reference's answer moves and the student's does not (None
    if there is none)."""
    values = {}
    for _, others in every:
        for label, value in others:
            values.setdefault(label, []).append(value)
    for i, (label, value) in enumerate(named):
        others = [v for v in values.get(label, ()) if is_number(value) and v != value
                  and type(v) is type(value)]
        for other in others[:1]:
            changed = [*named[:i], (label, other), *named[i + 1:]]
            try:
                with np.errstate(all="ignore"):
                    moved = runner(reference, *changed, name=OURS[0])
                    yours = runner(student, *changed, name=name)
            except Exception:
                continue
            if not agree(moved, expected) and agree(yours, answer):
                return SYMBOLS.get(label, label)
    return None


def answered(runner, function, named):
    """What ``function`` answers on the named inputs (None if it cannot run)."""
    try:
        with np.errstate(all="ignore"):
            return runner(function, *named, name=OURS[1])
    except Exception:
        return None


def explaining(mistakes, records, mistaken):
    """The hint of the mistakes that answer as the student on every record (answer, expected,
    what, named inputs), each left at its first difference; None if there is none, or if they
    differ in hint (the grader cannot tell which mistake it sees)."""
    hints = set()
    for mistake in mistakes:
        for answer, _, _, named in records:
            loose = any(getattr(value, "dtype", None) == np.float32 for _, value in named)
            out = mistaken(mistake, named)
            if out is None or not agree(answer, out, 2e-4 if loose else TOLERANCE):
                break
        else:
            hints.add(mistake.hint)
    return hints.pop() if len(hints) == 1 else None


#: The draws of every grader's random cases, each case built once per draw (the same shapes,
#: new values) and the answer judged on all of them, interleaved: an answer that keeps what it
#: answered for one shape is seen at the next draw. The notebooks use these; the grading command
#: sets draws of its own (:func:`drawing`), so that its cases are not those the student saw.
DRAWS = contextvars.ContextVar("draws", default=(0, 1))

#: The (shapes, values) salts of the draw the cases are being built for.
_DRAW = contextvars.ContextVar("draw", default=(0, 0))


def each_draw():
    """Yields each draw of :data:`DRAWS` with the cases' generators (:func:`case_rng`) set to
    it: the shapes of the first draw, the values of this one."""
    draws = DRAWS.get()
    for draw in draws:
        token = _DRAW.set((draws[0], draw))
        try:
            yield draw
        finally:
            _DRAW.reset(token)


def drawn_seed(*entropy):
    """The seed of a generator handed to an answer in a case, salted by the draw being built."""
    return [*entropy, _DRAW.get()[1]]


def drawing(*draws):
    """Set :data:`DRAWS` (two or more ints) for what follows; returns the token to reset it."""
    return DRAWS.set(tuple(int(d) for d in draws))


def drawn_cases(cases):
    """``cases()`` built under each draw, interleaved: case i of every draw, then case i + 1; a
    case that no draw changes (built by hand) once."""
    built = [list(cases()) for _ in each_draw()]
    every = []
    for i, (what, named) in enumerate(built[0]):
        every.append((what, named))
        every += [(f"{other[i][0]} (another draw)", other[i][1]) for other in built[1:]
                  if i < len(other) and not same(other[i][1], named)]
    return every


def check(title, student, reference, cases, mistakes=(), *, name="function", runner=run,
          expect=None, **judging):
    """The generic grader: ``student`` and ``reference`` (same signature) on every case of
    ``cases()`` under every draw (:func:`drawn_cases`), pairs (what the case is, [(input name,
    value), ...]). A wrong answer is named by the mistakes that answer as it does on every case
    (:func:`explaining`); else its first wrong case says what is wrong there.
    ``runner(function, *named, name=...)`` replaces :func:`run` (to arm guards, or to drive a
    class through steps), ``expect(answer, reference, what, wrongs, inputs)`` replaces
    :func:`judge` (``judging`` are its options). Returns the :class:`Report`."""
    def mistaken(mistake, named):            # what a mistake answers (None if it cannot run)
        return answered(runner, mistake.answer, named)

    def compare(answer, expected, what, named):
        if expect:
            expect(answer, expected, what, (), dict(named))
        else:
            judge(answer, expected, what, **judging)

    def wrong(record):
        try:
            compare(*record)
            return False
        except NotYet:
            return True

    def attempt():
        every, records, failed = drawn_cases(cases), [], []
        for what, named in every:
            try:
                answer = runner(student, *named, name=name)
            except (NotYet, StudentError):
                if failed:                   # judged by the cases seen so far
                    break
                raise
            records.append((answer, runner(reference, *named, name=OURS[0]), what, named))
            failed += [records[-1]] if wrong(records[-1]) else []
        if not failed:
            return f"{len(records)} random cases (each drawn twice), inputs unchanged"
        answer, expected, what, named = failed[0]
        others = [record for record in records if not any(record is f for f in failed)]
        hint = explaining(mistakes, failed + others, mistaken)
        if hint:
            raise NotYet(f"{what}: {hint}")
        try:
            compare(answer, expected, f"{what} (and {len(failed) - 1} more)" if len(failed) > 1
                    else what, named)
        except Off:
            ignored = unfollowed(student, reference, named, answer, expected, every, runner,
                                 name)
            if ignored:
                raise NotYet(f"{what}: it does not follow the {ignored} passed in") from None
            raise
    return grade(title, attempt)


def make_grader(label, title, reference, cases, mistakes=(), **options):
    """The grader called ``label``: ``grader(student)`` runs :func:`check` and returns its
    :class:`Report` (true when it passed); ``grader.mistakes`` is its table, ``grader.cases()``
    its cases."""
    def grader(student):
        return check(title, student, reference, cases, mistakes, **options)
    grader.__name__ = grader.__qualname__ = label
    grader.__doc__ = f"{title}: {cases.__doc__}"
    grader.mistakes, grader.cases = list(mistakes), cases
    return grader


class CaseRng(np.random.Generator):
    """The generator of one case, for the draw being built (:func:`each_draw`): its scalar
    integers (sizes, positions) follow the shapes' salt, everything else the values' salt."""

    def __init__(self, *entropy):
        shapes, values = _DRAW.get()
        super().__init__(np.random.PCG64([*entropy, values]))
        self.shapes = np.random.default_rng([*entropy, shapes])

    def integers(self, low, high=None, size=None, **options):
        if size is None:
            return self.shapes.integers(low, high, **options)
        return super().integers(low, high, size, **options)


def case_rngs(seed, count):
    """``count`` independent generators for the random cases of one grader (:class:`CaseRng`)."""
    return [CaseRng(seed, i) for i in range(count)]


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
    draws are binomial; far above 1 when the draws within a group share one coin, far below 1
    when every group keeps a fixed count."""
    counts, trials = np.asarray(counts, float), np.asarray(trials, float)
    used = trials > 0
    expected = trials[used] * p
    return float(np.mean((counts[used] - expected) ** 2 / (expected * (1 - p))))


def dispersion_bounds(groups, low=0.3, high=3.0, chance=1e-9):
    """The range of :func:`dispersion` over ``groups`` binomial counts (their proportion
    estimated from them) that independent coins leave with probability below ``chance``: the
    chi-square quantiles with groups − 1 degrees of freedom, over groups, widened to at least
    (``low``, ``high``); few groups spread widely, and a fixed count still gives 0."""
    df = max(groups - 1, 1)
    return (min(low, 2 * gammaincinv(df / 2, chance) / groups),
            max(high, 2 * gammainccinv(df / 2, chance) / groups))
