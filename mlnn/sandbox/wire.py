"""What crosses between the grader's process and the student's: frames of JSON and raw array
bytes, never pickle, and the one request/answer loop both sides run (:class:`Channel`).

A value is data or a reference. Data: None, bools, ints, floats, strings; tuples, lists and
dicts of values; NumPy arrays (``numpy.matrix`` too) and scalars of bool, integer or float
dtype; SciPy CSR, CSC and COO matrices (their index arrays checked before use); a NumPy
``Generator`` (its bit generator's state). Anything else (a function, a class, an object) stays
in its process and crosses as a reference: the other side gets a :class:`Ref` whose calls and
method calls come back as requests. So no object of one process ever exists in the other.

Within one request the answering side keeps what it was given: handing back an argument it
received (``optimizer.step(params, ...)`` with the ``params`` it was called with) reaches the
caller as that same object, its new contents written into it; and after a call, every
argument's new contents are written back into the caller's copies (an update made in place
stays an update made in place, in a sparse matrix too, and so does a new dtype or shape).
"""

import json
import math
import socket
import struct
import warnings

import numpy as np
import scipy.sparse as sp

from mlnn.base.errors import MLNNError
from mlnn.base.validation import _check_sparse_indices

#: The most bytes one frame may hold, and how deep a value may nest.
MAX_FRAME, MAX_DEPTH = 1 << 32, 64

#: The dtype kinds an array may have: bool, signed and unsigned integers, floats.
KINDS = "biuf"

SPARSE = {"csr": sp.csr_matrix, "csc": sp.csc_matrix, "coo": sp.coo_matrix}


class WireError(MLNNError):
    """A frame that is not a value of this protocol (the other process is broken or hostile)."""


class Raised(Exception):
    """The other side's code raised: ``kind`` is its exception's class name."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


# -- frames ----------------------------------------------------------------------------------------

def send_frame(sock, header, buffers=()):
    """One frame: its length, the JSON header's length, the header, the buffers."""
    head = json.dumps(header, allow_nan=True).encode("utf-8")
    sizes = [len(b) for b in buffers]
    total = 4 + len(head) + sum(sizes)
    start = struct.pack("!Q", total) + struct.pack("!I", len(head)) + head
    if total < 1 << 20:
        sock.sendall(b"".join([start, *buffers]))
        return
    sock.sendall(start)
    for buffer in buffers:
        sock.sendall(buffer)


def _read(sock, size):
    data = bytearray(size)
    view, got = memoryview(data), 0
    while got < size:
        n = sock.recv_into(view[got:], size - got)
        if n == 0:
            raise EOFError("the other process closed the channel")
        got += n
    return data


def recv_frame(sock):
    """(header, buffer bytes) of the next frame; :class:`WireError` if it is malformed."""
    (total,) = struct.unpack("!Q", _read(sock, 8))
    if not 4 <= total <= MAX_FRAME:
        raise WireError(f"a frame of {total} bytes")
    body = _read(sock, total)
    (head_len,) = struct.unpack("!I", body[:4])
    if head_len > total - 4:
        raise WireError("a frame header longer than its frame")
    try:
        header = json.loads(bytes(body[4:4 + head_len]).decode("utf-8"),
                            parse_int=_bounded_int)
    except (ValueError, RecursionError) as error:
        raise WireError(f"a frame header that is not JSON ({type(error).__name__})") from None
    return header, memoryview(body)[4 + head_len:]


def _bounded_int(text):
    if len(text) > 40:
        raise ValueError("an integer of more than 40 digits")
    return int(text)


# -- values ----------------------------------------------------------------------------------------

class Ref:
    """An object of the other process: calling it, or a method of it, is a request there."""

    def __init__(self, channel, number, kind="object", names=()):
        self._channel, self._number, self._kind, self._names = channel, number, kind, names

    def __call__(self, *args):
        return self._channel.request({"op": "call", "ref": self._number}, args)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        channel, number = self._channel, self._number

        def method(*args):
            return channel.request({"op": "call", "ref": number, "method": name}, args)
        method.__name__ = name
        return method


class Encoder:
    """Turns values into JSON trees and buffers; objects that are not data into references,
    and an object received in the call being answered into a mention of it."""

    def __init__(self, channel):
        self.channel, self.buffers = channel, []
        self.given = channel.answering[-1] if channel.answering else {}

    def array(self, a):
        self.buffers.append(a.tobytes(order="C"))
        return {"array": len(self.buffers) - 1, "dtype": a.dtype.str, "shape": list(a.shape)}

    def __call__(self, value, depth=0):
        if depth > MAX_DEPTH:
            raise WireError(f"a value nested more than {MAX_DEPTH} deep")
        if isinstance(value, np.generic) and value.dtype.kind in KINDS:
            return {"scalar": self.array(np.asarray(value))}
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int):
            if abs(value) >= 10 ** 100:
                raise WireError("an integer of more than 100 digits")
            return value if abs(value) < 2 ** 63 else {"bigint": str(value)}
        if isinstance(value, float):
            return {"float": repr(value)}
        entry = self.given.get(id(value))
        if entry is not None and entry[1] is value:   # handed back: the caller's own object
            return {"given": entry[0], "now": self.plain(value, depth)}
        return self.plain(value, depth)

    def plain(self, value, depth):
        if isinstance(value, np.ndarray) and value.dtype.kind in KINDS:
            if isinstance(value, np.matrix):
                return {"matrix": self.array(np.asarray(value))}
            return self.array(value)
        if sp.issparse(value) and value.format in SPARSE and value.dtype.kind in KINDS:
            parts = ((value.data, value.row, value.col) if value.format == "coo"
                     else (value.data, value.indices, value.indptr))
            return {"sparse": value.format, "shape": list(value.shape),
                    "parts": [self.array(p) for p in parts]}
        if isinstance(value, np.random.Generator):
            return {"generator": _state(value)}
        if type(value) in (list, tuple):
            return {type(value).__name__: [self(v, depth + 1) for v in value]}
        if type(value) is dict:
            return {"dict": [[self(k, depth + 1), self(v, depth + 1)] for k, v in value.items()]}
        if isinstance(value, Ref) and value._channel is self.channel:
            return {"own": value._number}             # the other side's object, sent home
        return {"ref": self.channel.keep(value)}


def _state(generator):
    state = generator.bit_generator.state
    return json.loads(json.dumps(state, default=int))


class Decoder:
    """Turns JSON trees and buffers back into values; references into :class:`Ref`."""

    def __init__(self, channel, buffers, offsets, tokens):
        self.channel, self.buffers, self.offsets, self.tokens = channel, buffers, offsets, tokens

    def array(self, node):
        try:
            dtype, shape = np.dtype(node["dtype"]), tuple(int(s) for s in node["shape"])
            index = int(node["array"])
            start, stop = self.offsets[index], self.offsets[index + 1]
        except (KeyError, TypeError, ValueError, IndexError):
            raise WireError("an array node without a valid dtype, shape and buffer") from None
        if dtype.kind not in KINDS or dtype.hasobject or any(s < 0 for s in shape) or \
                math.prod(shape) * dtype.itemsize != stop - start:
            raise WireError(f"an array of dtype {dtype} and shape {shape} in {stop - start} "
                            "bytes")
        return np.frombuffer(self.buffers[start:stop], dtype=dtype).reshape(shape).copy()

    def __call__(self, node, depth=0):
        if depth > MAX_DEPTH:
            raise WireError(f"a value nested more than {MAX_DEPTH} deep")
        if node is None or isinstance(node, (bool, str, int)):
            return node
        if not isinstance(node, dict) or len(node) not in (1, 2, 3):
            raise WireError(f"a value node of type {type(node).__name__}")
        kind = next(iter(node))
        if kind == "float":
            return float(node["float"])
        if kind == "bigint":
            digits = str(node["bigint"])
            if len(digits) > 100 or not digits.lstrip("-").isdigit():
                raise WireError("an integer of more than 100 digits")
            return int(digits)
        if kind == "array":
            return self.array(node)
        if kind == "scalar":
            return self.array(node["scalar"])[()]
        if kind == "matrix":
            with warnings.catch_warnings():        # (NumPy advises against the class)
                warnings.simplefilter("ignore", PendingDeprecationWarning)
                return np.asmatrix(self.array(node["matrix"]))
        if kind in ("list", "tuple"):
            items = [self(v, depth + 1) for v in _listed(node[kind])]
            return items if kind == "list" else tuple(items)
        if kind == "dict":
            pairs = [_listed(pair) for pair in _listed(node["dict"])]
            if any(len(pair) != 2 for pair in pairs):
                raise WireError("a dict node whose items are not pairs")
            try:
                return {self(k, depth + 1): self(v, depth + 1) for k, v in pairs}
            except TypeError:
                raise WireError("a dict key that cannot be a key") from None
        if kind == "sparse":
            return self.sparse(node)
        if kind == "generator":
            return _generator(node["generator"])
        if kind == "ref":
            return self.channel.ref(node["ref"])
        if kind == "own":
            if node["own"] not in self.channel.objects:
                raise WireError("a mention of an object that was never sent")
            return self.channel.objects[node["own"]]
        if kind == "given":
            return self.given(node, depth)
        raise WireError(f"an unknown value node {kind!r}")

    def sparse(self, node):
        build = SPARSE.get(node.get("sparse"))
        parts = [self.array(p) for p in _listed(node.get("parts"))]
        shape = tuple(int(s) for s in _listed(node.get("shape")))
        if build is None or len(parts) != 3 or len(shape) != 2:
            raise WireError("a sparse node without its format, shape and three arrays")
        try:
            if build is sp.coo_matrix:
                matrix = sp.coo_matrix((parts[0], (parts[1], parts[2])), shape=shape)
            else:
                matrix = build((parts[0], parts[1], parts[2]), shape=shape)
            _check_sparse_indices(matrix, "a sparse matrix")
            if build is not sp.coo_matrix and len(matrix.data) < matrix.indptr[-1]:
                raise ValueError("data shorter than indptr")
        except (ValueError, TypeError, MLNNError) as error:
            raise WireError(f"a malformed sparse matrix ({error})") from None
        return matrix

    def given(self, node, depth):
        entry = self.tokens.get(node["given"]) if isinstance(node["given"], int) else None
        if entry is None:
            raise WireError("a reference to an argument that was never given")
        now = self(node["now"], depth + 1)
        write_back(entry, now)
        return entry


def _listed(value):
    if not isinstance(value, list):
        raise WireError(f"a list node holding a {type(value).__name__}")
    return value


def _generator(state):
    try:
        bits = {"PCG64": np.random.PCG64, "PCG64DXSM": np.random.PCG64DXSM,
                "Philox": np.random.Philox, "SFC64": np.random.SFC64,
                "MT19937": np.random.MT19937}[state["bit_generator"]]()
        bits.state = state
    except (KeyError, TypeError, ValueError):
        raise WireError("a generator node with an unknown state") from None
    return np.random.Generator(bits)


def write_back(original, now):
    """Write the new contents ``now`` of a value into the ``original`` in place where its type
    allows: arrays (a new dtype or shape included), sparse matrices, dicts, lists, a
    generator's state; recursively."""
    if isinstance(original, np.ndarray) and isinstance(now, np.ndarray):
        if original.flags.writeable and (original.shape != now.shape
                                         or original.dtype != now.dtype):
            _refit(original, now)
        if original.flags.writeable and original.shape == now.shape \
                and original.dtype == now.dtype:
            np.copyto(original, now)
    elif sp.issparse(original) and sp.issparse(now) and original.format == now.format:
        if original.shape != now.shape:
            original.resize(now.shape)
        for part in ("data", "row", "col") if now.format == "coo" else (
                "data", "indices", "indptr"):
            setattr(original, part, getattr(now, part))
    elif isinstance(original, dict) and isinstance(now, dict):
        for key in [k for k in original if k not in now]:
            del original[key]
        for key, value in now.items():
            if key in original and _same_kind(original[key], value):
                write_back(original[key], value)
            else:
                original[key] = value
    elif isinstance(original, list) and isinstance(now, list):
        if len(original) == len(now) and all(map(_same_kind, original, now)):
            for a, b in zip(original, now):
                write_back(a, b)
        else:
            original[:] = now
    elif isinstance(original, tuple) and isinstance(now, tuple) and len(original) == len(now):
        for a, b in zip(original, now):
            write_back(a, b)
    elif isinstance(original, np.random.Generator) and isinstance(now, np.random.Generator):
        original.bit_generator.state = now.bit_generator.state


def _refit(original, now):
    """Give the array ``original`` (one that owns its buffer) the dtype and shape of ``now``, in
    place, as the answer did to its copy (a relabelled or resized argument is a change the
    caller must see)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            original.resize((original.size,), refcheck=False)
            original.dtype = np.uint8
            original.resize((now.nbytes,), refcheck=False)
            original.dtype = now.dtype
            original.resize(now.shape, refcheck=False)
    except (ValueError, TypeError, AttributeError):
        pass


def _same_kind(a, b):
    arrays = isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape \
        and a.dtype == b.dtype
    return arrays or (type(a) is type(b) and isinstance(a, (dict, list, tuple)))


def containers(values, found=None, depth=0):
    """Every array, sparse matrix, dict, list, tuple and generator inside ``values``, in the
    order of a walk through them: both sides number a call's arguments so, to mention one
    handed back."""
    found = [] if found is None else found
    for value in values:
        if isinstance(value, (np.ndarray, dict, list, tuple, np.random.Generator)) or (
                sp.issparse(value) and value.format in SPARSE):
            found.append(value)
        if depth < MAX_DEPTH and isinstance(value, dict):
            containers(value.values(), found, depth + 1)
        elif depth < MAX_DEPTH and isinstance(value, (list, tuple)):
            containers(value, found, depth + 1)
    return found


# -- the request loop ------------------------------------------------------------------------------

class Channel:
    """Requests and answers over one socket, the same on both sides: :meth:`request` sends a
    call and answers the other side's calls (callbacks) until its own answer comes;
    :meth:`serve` answers calls until the other side says exit. ``resolve(request)`` is what a
    call of the other side names; ``on_wait()`` runs before each wait (a time limit)."""

    def __init__(self, sock, resolve, on_wait=None):
        self.sock, self.resolve, self.on_wait = sock, resolve, on_wait
        self.objects, self.answering = {}, []

    def keep(self, value):
        self.objects[len(self.objects)] = value
        return len(self.objects) - 1

    def ref(self, number):
        if not isinstance(number, int) or isinstance(number, bool):
            raise WireError("a reference that is not a number")
        return Ref(self, number)

    def send(self, header, values):
        encoder = Encoder(self)
        header = dict(header, values=[encoder(v) for v in values])
        header["buffers"] = [len(b) for b in encoder.buffers]
        send_frame(self.sock, header, encoder.buffers)

    def receive(self, tokens=()):
        if self.on_wait is not None:
            self.on_wait()
        header, body = recv_frame(self.sock)
        if not isinstance(header, dict) or not isinstance(header.get("values"), list):
            raise WireError("a frame header that is not a message")
        sizes = header.get("buffers")
        if not isinstance(sizes, list) or not all(
                isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in sizes) \
                or sum(sizes) != len(body):
            raise WireError("a frame whose buffer sizes do not add up to its length")
        offsets = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).tolist()
        return header, Decoder(self, body, offsets, dict(enumerate(tokens)))

    def request(self, header, args):
        """Send a call with ``args``, answer callbacks, and return its answer (its arguments'
        new contents written back into ``args``), or raise :class:`Raised`."""
        self.send(header, args)
        tokens = containers(args)
        while True:
            reply, decoder = self.receive(tokens)
            op = reply.get("op")
            if op not in ("answer", "raised"):
                self.answer(reply, decoder)
                continue
            values = [decoder(v) for v in reply["values"]]
            if op == "raised":
                raise Raised(str(reply.get("kind", "Exception"))[:80],
                             str(reply.get("message", ""))[:500])
            if len(values) != len(args) + 1:     # (each argument written back as it is read)
                raise WireError("an answer without the arguments' new contents")
            return values[0]

    def answer(self, request, decoder):
        """Run one call of the other side; send its answer and the arguments' new contents,
        or what it raised."""
        try:
            args = [decoder(v) for v in request["values"]]
            target = self.resolve(request)
        except WireError:
            raise
        except Exception as error:
            self.send({"op": "raised", "kind": type(error).__name__, "message": str(error)}, [])
            return
        self.answering.append({id(v): (i, v) for i, v in enumerate(containers(args))})
        try:
            try:
                result = target(*args)
            except Exception as error:
                self.send({"op": "raised", "kind": type(error).__name__,
                           "message": " ".join(str(error).split())[:500]}, [])
                return
            self.send({"op": "answer"}, [result, *args])
        finally:
            self.answering.pop()

    def serve(self):
        """Answer calls until the other side says exit or closes the channel."""
        while True:
            request, decoder = self.receive()
            if request.get("op") == "exit":
                return
            self.answer(request, decoder)


def socket_pair():
    """Two connected stream sockets."""
    return socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
