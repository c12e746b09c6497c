"""The grader's side: start an answer in a confined process of its own and call it as if it
were here (:class:`Answer`, :func:`remote`), with limits the grader enforces from outside.

The grader reads the process's CPU time from ``/proc`` (the process cannot change it) and
kills its session once a call passes its CPU or wall-clock budget; the address space, the
files and the privileges are the kernel's (:mod:`mlnn.sandbox.confine`). A call that raises
there raises :class:`~mlnn.sandbox.wire.Raised` here; one whose process ended or was killed
raises :class:`Ended`.
"""

import atexit
import inspect
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

from mlnn.sandbox.confine import landlock_abi
from mlnn.sandbox.wire import Channel, Raised, Ref, WireError, socket_pair

#: An answer's limits by default: address space beyond its start, CPU seconds per call, and
#: wall-clock seconds per call.
MEMORY, CPU, WALL = 3 << 30, 60.0, 120.0

#: The variables the student's processes see: no grading switch, one BLAS thread.
KEPT = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "LANG", "LC_ALL")

_ZYGOTE = {}


class Ended(Exception):
    """The answer's process ended, or was ended for passing a limit; ``kind`` says which."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def environment():
    env = {k: os.environ[k] for k in KEPT if k in os.environ}
    return dict(env, PATH="/usr/bin:/bin", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                MKL_NUM_THREADS="1", MPLBACKEND="Agg", PYTHONHASHSEED="0")


def zygote():
    """The one zygote of this process (started on first use): (its socket, its process)."""
    running = _ZYGOTE.get("process")
    if running is not None and running.poll() is None:
        return _ZYGOTE["socket"], running
    ours, theirs = socket_pair()
    root = str(Path(__file__).resolve().parents[2])
    boot = ("import sys; sys.path.insert(0, sys.argv[2]); "
            "from mlnn.sandbox.worker import zygote; zygote(int(sys.argv[1]))")
    scratch = os.environ.get("TMPDIR", "/tmp")
    process = subprocess.Popen([sys.executable, "-I", "-c", boot, str(theirs.fileno()), root],
                               pass_fds=(theirs.fileno(),), env=dict(environment(),
                                                                      MPLCONFIGDIR=scratch),
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               cwd=scratch, start_new_session=True)
    theirs.close()
    _ZYGOTE.update(socket=ours, process=process)
    atexit.register(stop_zygote)
    return ours, process


def forget_zygote():
    """In a process forked from one that has a zygote: leave it to that process (this one
    starts its own on first use)."""
    sock = _ZYGOTE.pop("socket", None)
    _ZYGOTE.pop("process", None)
    if sock is not None:
        sock.close()


def stop_zygote():
    """End the zygote (it ends every answer's process it started)."""
    process = _ZYGOTE.pop("process", None)
    sock = _ZYGOTE.pop("socket", None)
    if sock is not None:
        sock.close()
    if process is not None:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def cpu_seconds(pid):
    """User and system CPU seconds of process ``pid`` so far, read from ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Answer:
    """One answer's code running in a confined process: ``source`` after ``preamble`` (the
    notebook's imports), with the mlnn modules of ``allow`` importable and ``stand_ins``
    (name → (module, attribute)) defined; ``memory`` bytes, ``cpu`` and ``wall`` seconds per
    call. ``error`` is what running the code raised (None if it ran), ``enforced`` the limits
    in words."""

    def __init__(self, source, preamble="", allow=(), stand_ins=None, memory=MEMORY, cpu=CPU,
                 wall=WALL):
        self.config = {"source": source, "preamble": preamble, "allow": list(allow),
                       "stand_ins": dict(stand_ins or {}), "memory": int(memory), "cpu": cpu,
                       "abi": landlock_abi()}
        self.cpu, self.wall = cpu, wall
        sock, _ = zygote()
        ours, theirs = socket_pair()
        socket.send_fds(sock, [json.dumps(self.config).encode()], [theirs.fileno()])
        theirs.close()
        (self.pid,) = struct.unpack("!q", sock.recv(8))
        self.channel = Channel(ours, self.refuse, on_wait=self.wait)
        self.started = None
        hello, _ = self.channel.receive()
        self.error, self.enforced = hello.get("error"), hello.get("enforced") or []

    def refuse(self, request):
        """What the answer may call back: the objects the grader handed it, and of those
        only methods whose names do not start with an underscore."""
        target = self.channel.objects.get(request.get("ref")) if request.get("op") == "call" \
            and isinstance(request.get("ref"), int) else None
        method = request.get("method")
        if target is None or (method is not None and (not isinstance(method, str)
                                                      or method.startswith("_"))):
            raise WireError("a call the grader did not offer")
        return target if method is None else getattr(target, method)

    def wait(self):
        """Block until the answer's process speaks; kill it once the call being waited for has
        used its CPU or wall-clock budget."""
        start, cpu0 = self.started or (time.monotonic(), cpu_seconds(self.pid) or 0.0)
        while not select.select([self.channel.sock], [], [], 0.02)[0]:
            used = cpu_seconds(self.pid)
            if used is None:
                raise Ended("ended", "its process ended")
            if used - cpu0 > self.cpu:
                self.kill()
                raise Ended("cpu", f"it used more than {self.cpu:g} s of CPU time")
            if time.monotonic() - start > self.wall:
                self.kill()
                raise Ended("wall", f"it took more than {self.wall:g} s")

    def kill(self):
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass

    def close(self):
        try:
            self.channel.send({"op": "exit"}, [])
        except OSError:
            pass
        self.kill()
        self.channel.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def request(self, header, args=()):
        """A request, timed from now, its process's failure as :class:`Ended`."""
        self.started = (time.monotonic(), cpu_seconds(self.pid) or 0.0)
        try:
            return self.channel.request(header, list(args))
        except (EOFError, ConnectionError, WireError) as error:
            self.kill()
            kind = "ended" if not isinstance(error, WireError) else "wire"
            raise Ended(kind, f"its process ended ({error})") from None
        finally:
            self.started = None

    def get(self, name):
        """What the answer's code defines as ``name``: a callable proxy for a function, a
        proxy class for a class, a value as itself, None if it defines nothing of that name."""
        info = self.request({"op": "describe", "name": name})
        if not isinstance(info, dict) or info.get("kind") == "missing":
            return None
        value = self.request({"op": "get", "name": name})
        if isinstance(value, Ref):
            return (proxy_class if info.get("kind") == "class" else proxy_function)(
                self, value, name, info)
        return value

    def limited(self, memory, cpu):
        """The same answer in a new process with ``memory`` bytes and ``cpu`` seconds a call."""
        config = self.config
        return Answer(config["source"], config["preamble"], config["allow"],
                      config["stand_ins"], memory=memory, cpu=cpu, wall=max(4 * cpu, 10.0))


def _signature(parameters):
    if not isinstance(parameters, list):
        return None
    try:
        return inspect.Signature([
            inspect.Parameter(str(name), getattr(inspect.Parameter, str(kind)),
                              default=None if default else inspect.Parameter.empty)
            for name, kind, default in parameters])
    except (ValueError, TypeError, AttributeError):
        return None


class Remote:
    """A proxy of something in an answer's process (see :func:`proxy_function`)."""


def proxy_function(answer, ref, name, info):
    """A callable standing for the answer's function ``name``."""
    def function(*args):
        return answer.request({"op": "call", "ref": ref._number}, args)
    function.__name__ = function.__qualname__ = name
    function.__signature__ = _signature(info.get("parameters"))
    function.answer = answer
    function.remote = True
    return function


def proxy_class(answer, ref, name, info):
    """A class standing for the answer's class ``name``: constructing it constructs one there;
    its public methods are called there; ``ref`` hands the class itself back to its process."""
    def init(self, *args):
        self._ref = answer.request({"op": "call", "ref": ref._number}, args)

    def method(label):
        def call(self, *args):
            return answer.request({"op": "call", "ref": self._ref._number, "method": label},
                                  args)
        call.__name__ = label
        return call
    methods = [m for m in info.get("methods") or [] if isinstance(m, str) and m.isidentifier()]
    body = {m: method(m) for m in methods}
    body.update(__init__=init, answer=answer, remote=True, ref=ref)
    cls = type(name if name.isidentifier() else "Answer", (Remote,), body)
    cls.__signature__ = _signature(info.get("parameters"))
    return cls


def is_remote(function):
    """Whether ``function`` stands for an answer in another process."""
    return getattr(function, "remote", False) is True


__all__ = ["Answer", "Ended", "Raised", "is_remote", "cpu_seconds", "stop_zygote"]
