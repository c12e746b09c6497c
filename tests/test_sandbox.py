"""The answer's process (:mod:`mlnn.sandbox`): what crosses (data and references, never pickle),
what comes back (answers, the arguments' new contents, the same objects), and what the kernel
enforces before the answer's code runs (files, imports, memory, CPU time, privileges, network).
"""

import os
import struct

import numpy as np
import pytest
import scipy.sparse as sp

from mlnn.sandbox import confine, wire
from mlnn.sandbox.client import Answer, Ended, Raised, is_remote

CODE = '''
import numpy as np

def echo(*args):
    return args

def add_one(d):
    d["a"] += 1

def keep(params, optimizer, update):
    update(params, optimizer)
    return params

class Rule:
    def __init__(self, k):
        self.k = k
    def step(self, p):
        p["w"] *= self.k

def read(path):
    return open(path, "rb").read(10)

def write(path):
    open(path, "w").write("x")

def imports(name):
    __import__(name)

def allocate(n):
    return float(np.ones(n).sum())

def spin():
    while True:
        pass

def connect():
    socket = __import__("socket")
    s = socket.socket()
    s.connect(("127.0.0.1", 9))

def who():
    import os
    return os.getuid()

def fork():
    import os
    return os.fork()

def env():
    import os
    return sorted(os.environ)

def scale(X):
    X.data *= 2

def relabel(h):
    h.dtype = np.int64

def float32_values(X):
    X.data = X.data.astype(np.float32)

def as_matrix(a):
    return np.asmatrix(a)
'''


@pytest.fixture(scope="module")
def answer():
    with Answer(CODE) as running:
        yield running


VALUES = [None, True, 3, -2 ** 70, 2.5, float("nan"), "text", (1, [2.0, {"k": None}]),
          np.arange(6, dtype=np.int8).reshape(2, 3), np.float32(1.5), np.array(4.0),
          np.zeros((0, 3)), np.asfortranarray(np.arange(6.0).reshape(2, 3)), np.bool_(True),
          sp.random(4, 7, density=0.4, format="csr", random_state=0),
          sp.random(3, 2, density=0.5, format="csc", random_state=1),
          sp.random(3, 2, density=0.5, format="coo", random_state=2)]


def same(a, b):
    if sp.issparse(a):
        return sp.issparse(b) and a.format == b.format and (a != b).nnz == 0
    if isinstance(a, np.ndarray) or isinstance(a, np.generic):
        return type(a) is type(b) and a.dtype == b.dtype and np.shape(a) == np.shape(b) and \
            np.array_equal(a, b, equal_nan=True)
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def test_data_crosses_both_ways_unchanged(answer):
    echo = answer.get("echo")
    assert is_remote(echo)
    back = echo(*VALUES)
    assert len(back) == len(VALUES)
    for sent, got in zip(VALUES, back):
        assert same(sent, got), (sent, got)


def test_a_generator_crosses_as_its_state_and_comes_back_advanced(answer):
    rng = np.random.default_rng(5)
    twin = np.random.default_rng(5)
    (got,) = answer.get("echo")(rng)
    assert got is rng                       # the caller's own generator, handed back
    assert got.random() == twin.random()


def test_changes_in_place_come_back_and_handed_back_arguments_are_the_callers():
    with Answer(CODE) as running:
        d = {"a": np.zeros(3)}
        running.get("add_one")(d)
        np.testing.assert_array_equal(d["a"], 1)
        seen = []

        class Optimizer:
            def step(self, params):
                seen.append(params)

        def update(params, optimizer):
            optimizer.step(params)
            seen.append(optimizer)

        params, optimizer = {"w": np.ones(2)}, Optimizer()
        assert running.get("keep")(params, optimizer, update) is params
        assert seen[0] is params and seen[1] is optimizer
        Rule = running.get("Rule")
        assert isinstance(Rule, type) and callable(Rule.step)
        rule, p = Rule(3.0), {"w": np.ones(2)}
        rule.step(p)
        np.testing.assert_array_equal(p["w"], 3.0)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_a_sparse_argument_changed_in_place_comes_back_changed(answer, fmt):
    X = sp.random(5, 8, density=0.4, format=fmt, random_state=3)
    before = X.toarray()
    answer.get("scale")(X)
    np.testing.assert_array_equal(X.toarray(), 2 * before)
    answer.get("float32_values")(X)
    assert X.format == fmt and X.dtype == np.float32


def test_an_array_relabelled_in_place_comes_back_relabelled(answer):
    h = np.linspace(0.5, 2.0, 6).reshape(2, 3)
    bits = h.view(np.int64).copy()
    answer.get("relabel")(h)
    assert h.dtype == np.int64 and h.shape == (2, 3)
    np.testing.assert_array_equal(h, bits)


def test_a_numpy_matrix_crosses_as_a_matrix(answer):
    got = answer.get("as_matrix")(np.arange(6.0).reshape(2, 3))
    assert isinstance(got, np.matrix) and got.shape == (2, 3)


def test_what_the_answer_raises_is_raised_here_by_name(answer):
    with pytest.raises(Raised) as raised:
        answer.get("allocate")("many")
    assert raised.value.kind == "TypeError"
    assert answer.get("missing") is None


def test_no_file_outside_its_own_folder(answer, tmp_path):
    secret = tmp_path / "gradebook.db"
    secret.write_bytes(b"secret")
    os.chmod(tmp_path, 0o755)
    for function, path in (("read", secret), ("read", "/etc/hostname"),
                           ("write", tmp_path / "new")):
        with pytest.raises(Raised) as raised:
            answer.get(function)(str(path))
        assert raised.value.kind == "PermissionError", (function, path)
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("module", ["mlnn.course", "mlnn.nn.network", "mlnn.course.pwe",
                                    "nbgrader", "sqlite3"])
def test_nothing_of_the_graders_or_of_mlnn_is_importable(answer, module):
    with pytest.raises(Raised) as raised:
        answer.get("imports")(module)
    assert raised.value.kind == "ModuleNotFoundError"


def test_what_an_exercise_allows_is_importable():
    with Answer(CODE, allow=["mlnn.evaluation.metrics"]) as running:
        running.get("imports")("mlnn.evaluation.metrics")
        with pytest.raises(Raised):
            running.get("imports")("mlnn.nn.network")


def test_what_the_stand_ins_and_drivers_load_is_not_importable():
    stand_ins = {"forward": ("mlnn.course.standins", "mlnn_forward"),
                 "drive_rule": ("mlnn.course.standins", "drive_rule")}
    with Answer(CODE, allow=["mlnn.evaluation.metrics"], stand_ins=stand_ins) as running:
        assert running.get("forward") is not None
        running.get("imports")("mlnn.evaluation.metrics")
        for module in ("mlnn.nn.network", "mlnn.nn.optimizers", "mlnn.course.standins"):
            with pytest.raises(Raised) as raised:
                running.get("imports")(module)
            assert raised.value.kind == "ModuleNotFoundError", module


def test_memory_beyond_the_limit_is_refused_by_the_kernel():
    with Answer(CODE, memory=200 << 20) as running:
        assert running.get("allocate")(10 ** 6) == 10 ** 6
        with pytest.raises(Raised) as raised:
            running.get("allocate")(10 ** 8)            # 800 MB
        assert raised.value.kind == "MemoryError"


def test_a_call_past_its_cpu_budget_is_stopped_from_outside():
    with Answer(CODE, cpu=0.5) as running:
        with pytest.raises(Ended) as ended:
            running.get("spin")()
        assert ended.value.kind == "cpu"


@pytest.mark.skipif(confine.landlock_abi() < 4, reason="the kernel has no Landlock network rules")
def test_no_network(answer):
    with pytest.raises(Raised) as raised:
        answer.get("connect")()
    assert raised.value.kind == "PermissionError"


@pytest.mark.skipif(os.geteuid() != 0, reason="privileges are dropped only from root")
def test_root_becomes_nobody_without_new_processes(answer):
    assert answer.get("who")() == confine.NOBODY
    with pytest.raises(Raised) as raised:
        answer.get("fork")()
    assert raised.value.kind in ("BlockingIOError", "PermissionError")


def test_the_answers_process_sees_no_grading_switch(answer, monkeypatch):
    assert not any(name.startswith(("NBGRADER", "MLNN")) for name in answer.get("env")())


def test_the_cell_failing_is_reported_not_raised():
    with Answer("raise RuntimeError('my cell')") as running:
        assert running.error == "RuntimeError: my cell"


# -- what crosses: malformed frames are refused, never crash the grader ---------------------------

def frame(header, body=b""):
    import json
    head = json.dumps(header).encode()
    return struct.pack("!Q", 4 + len(head) + len(body)) + struct.pack("!I", len(head)) + head + body


@pytest.mark.parametrize("header, body", [
    ({"op": "answer", "values": [{"array": 0, "dtype": "|O", "shape": [1]}], "buffers": [8]},
     b"\0" * 8),
    ({"op": "answer", "values": [{"array": 0, "dtype": "<f8", "shape": [3]}], "buffers": [8]},
     b"\0" * 8),
    ({"op": "answer", "values": [{"array": 0, "dtype": "<f8", "shape": [1]}], "buffers": [9]},
     b"\0" * 8),
    ({"op": "answer", "values": [{"sparse": "csr", "shape": [2, 2], "parts": [
        {"array": 0, "dtype": "<f8", "shape": [1]}, {"array": 1, "dtype": "<i4", "shape": [1]},
        {"array": 2, "dtype": "<i4", "shape": [3]}]}], "buffers": [8, 4, 12]},
     b"\0" * 8 + struct.pack("<i", 5) + struct.pack("<3i", 0, 1, 1)),
    ({"op": "answer", "values": [{"given": 99, "now": 1}], "buffers": []}, b""),
    ({"op": "answer", "values": [{"own": 3}], "buffers": []}, b""),
    ({"op": "answer", "values": [{"pickle": "x"}], "buffers": []}, b""),
    ({"op": "answer", "values": [{"bigint": "1" * 5000}], "buffers": []}, b""),
])
def test_a_malformed_value_is_one_wire_error(header, body):
    a, b = wire.socket_pair()
    channel = wire.Channel(a, lambda request: None)
    b.sendall(frame(header, body))
    with pytest.raises(wire.WireError):
        header, decoder = channel.receive()
        [decoder(v) for v in header["values"]]


def test_a_deep_or_huge_frame_is_refused():
    a, b = wire.socket_pair()
    channel = wire.Channel(a, lambda request: None)
    b.sendall(struct.pack("!Q", 1 << 40))
    with pytest.raises(wire.WireError):
        channel.receive()
    a, b = wire.socket_pair()
    channel = wire.Channel(a, lambda request: None)
    nested = "[" * 100_000 + "]" * 100_000
    head = ('{"op": "answer", "buffers": [], "values": ' + nested + "}").encode()
    b.sendall(struct.pack("!Q", 4 + len(head)) + struct.pack("!I", len(head)) + head)
    with pytest.raises(wire.WireError):
        channel.receive()


def test_the_grader_offers_only_what_it_handed_over():
    with Answer("def call(obj):\n    return obj._hidden()\n") as running:
        class Secret:
            def _hidden(self):
                return "secret"
        with pytest.raises(Raised) as raised:           # a private method of what it was given
            running.get("call")(Secret())
        assert raised.value.kind == "AttributeError"
        for request in ({"op": "call", "ref": 999}, {"op": "get", "name": "x"},
                        {"op": "call", "ref": 0, "method": "_hidden"}):
            with pytest.raises(wire.WireError):
                running.refuse(request)
