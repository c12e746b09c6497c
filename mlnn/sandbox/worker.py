"""The student's side: a zygote that loads NumPy, SciPy and matplotlib once and forks one
confined process per answer, which runs the answer's code and answers the grader's calls.

The zygote runs no student code and holds nothing of the graders: it imports the
:data:`PRELOADED` modules and the wire, then waits for the grader's requests, each a
configuration and a socket. Its child, per request: a new session and an empty working
directory; the mlnn modules the exercise allows and mlnn's own pieces standing in for the
student's other pieces (notebook 01b) and a class answer's driver; then
:func:`~mlnn.sandbox.confine.confine`, and every mlnn module but the allowed ones forgotten; then
the preamble (the notebook's imports) and the answer's code; then it answers calls until told to
exit. Once confined it can import only what is loaded already, of mlnn only what is allowed:
every other import is refused with the list of what is allowed.
"""

import builtins
import importlib
import inspect
import json
import os
import shutil
import signal
import socket
import struct
import sys
import tempfile

from mlnn.sandbox.confine import confine
from mlnn.sandbox.wire import Channel

#: What every answer may import: the standard library's common modules, NumPy, SciPy,
#: matplotlib (loaded once, in the zygote).
PRELOADED = ("math", "cmath", "itertools", "functools", "collections", "heapq", "bisect",
             "operator", "statistics", "random", "fractions", "decimal", "numbers", "typing",
             "dataclasses", "re", "string", "copy", "warnings", "time", "types", "abc", "enum",
             "contextlib", "numpy", "numpy.linalg", "numpy.random", "scipy", "scipy.sparse",
             "scipy.sparse.linalg", "scipy.special", "scipy.linalg", "scipy.stats",
             "scipy.optimize", "matplotlib", "matplotlib.pyplot")


class Refuse:
    """The import finder of a confined answer: every module not loaded already is refused by
    name (the file system would refuse it too, less clearly)."""

    def __init__(self, allowed):
        self.allowed = allowed

    def find_spec(self, name, path=None, target=None):
        raise ModuleNotFoundError(
            f"No module named {name!r} for an answer: it may import the standard library's "
            f"common modules, NumPy, SciPy and matplotlib{self.allowed}")


def describe(value):
    """What the grader needs to know of a name the answer defines: a function's parameters, a
    class's methods, or the value itself."""
    if inspect.isclass(value):
        methods = sorted(n for n, v in inspect.getmembers(value, callable) if not n.startswith("_"))
        return {"kind": "class", "methods": methods, "parameters": _parameters(value)}
    if callable(value):
        return {"kind": "function", "parameters": _parameters(value),
                "name": getattr(value, "__name__", "function")}
    return {"kind": "value"}


def _parameters(function):
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    return [[p.name, p.kind.name, p.default is not p.empty]
            for p in signature.parameters.values()]


def forget_modules(allowed):
    """Drop from ``sys.modules`` every mlnn module but those ``allowed`` (and their packages):
    what the stand-ins, the drivers and this process loaded keeps working, and an import of it
    is refused."""
    kept = {".".join(name.split(".")[:i + 1]) for name in allowed
            for i in range(name.count(".") + 1)}
    for name in [n for n in sys.modules if n.split(".")[0] == "mlnn" and n not in kept]:
        del sys.modules[name]


def answering(sock, namespace):
    """The channel on which an answer's process answers the grader's requests: what a name of
    ``namespace`` is (``describe``), its value (``get``), and calls of what it handed over."""
    def resolve(request):
        if request.get("op") == "describe":
            name = request.get("name")
            return lambda: describe(namespace[name]) if name in namespace else {"kind": "missing"}
        if request.get("op") == "get":
            return lambda: namespace.get(request.get("name"))
        target = channel.objects[request["ref"]]
        return getattr(target, request["method"]) if "method" in request else target

    channel = Channel(sock, resolve)
    return channel


def child(fd, config, workdir):
    """One confined answer (never returns)."""
    os.setsid()
    os.chdir(workdir)
    null = os.open(os.devnull, os.O_RDWR)
    for std in (0, 1, 2):
        os.dup2(null, std)
    sock = socket.socket(fileno=fd)
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    for name, (module, attribute) in config.get("stand_ins", {}).items():
        namespace[name] = getattr(importlib.import_module(module), attribute)
    allowed = config.get("allow", [])
    for module in allowed:
        importlib.import_module(module)
    os.closerange(3, fd)
    os.closerange(fd + 1, 1024)
    enforced = confine(workdir, config["memory"], config["cpu"], config["abi"])
    sys.meta_path.insert(0, Refuse(f", and {', '.join(allowed)}" if allowed else ""))
    sys.path[:] = []
    forget_modules(allowed)

    channel = answering(sock, namespace)
    error = None
    try:
        for code in (config.get("preamble", ""), config["source"]):
            exec(compile(code, "<answer>", "exec"), namespace)
    except BaseException as raised:             # the answer's cell itself fails: say so
        error = f"{type(raised).__name__}: {' '.join(str(raised).split())}"[:300]
    channel.send({"op": "ready", "enforced": enforced, "error": error}, [])
    try:
        channel.serve()
    finally:
        os._exit(0)


def preload():
    """Import :data:`PRELOADED`, matplotlib drawing off screen."""
    os.environ["MPLBACKEND"] = "Agg"
    for module in PRELOADED:
        importlib.import_module(module)


def zygote(fd):
    """Fork a confined child per request on socket ``fd`` (a JSON configuration and the
    child's socket), answering each with the child's pid; remove the working directories of
    children that ended. Ends when the grader closes the socket."""
    preload()
    sock, children = socket.socket(fileno=fd), {}
    while True:
        for pid in list(children):
            try:
                done = os.waitpid(pid, os.WNOHANG)[0] == pid
            except ChildProcessError:
                done = True
            if done:
                shutil.rmtree(children.pop(pid), ignore_errors=True)
        try:
            message, fds, _, _ = socket.recv_fds(sock, 1 << 20, 1)
        except OSError:
            break
        if not message or not fds:
            break
        workdir = tempfile.mkdtemp(prefix="mlnn-answer-")
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            sock.close()
            try:
                child(fds[0], json.loads(message), workdir)
            finally:
                os._exit(70)
        os.close(fds[0])
        children[pid] = workdir
        sock.sendall(struct.pack("!q", pid))
    for pid, workdir in children.items():
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    zygote(int(sys.argv[1]))
