"""A test's own answer judged as the grading command judges a notebook's: from a process of its
own, through :mod:`mlnn.sandbox.wire`, so that only calls and values cross.

:func:`across` forks this process; the child serves the answer (a function or a class of the
test's) on the channel an answer's process answers on (:func:`mlnn.sandbox.worker.answering`);
the parent gets the proxy the graders get from :class:`mlnn.sandbox.client.Answer`. A limited call (a grader's judgement of
how the answer works) runs in a new fork under the same kernel limit on its address space.
Nothing is confined: the tests' answers are ours; what crosses, and how, is the real thing.
"""

import importlib
import os
import resource
import signal

from mlnn.course.drivers import DRIVERS
from mlnn.course.pieces import standing_in
from mlnn.course.registry import EXERCISES
from mlnn.sandbox import client, worker
from mlnn.sandbox.confine import address_space
from mlnn.sandbox.wire import Channel, socket_pair


class Forked(client.Answer):
    """An :class:`~mlnn.sandbox.client.Answer` whose process is a fork serving ``namespace``."""

    def __init__(self, namespace, memory=None, cpu=client.CPU, wall=client.WALL):
        self.namespace, self.cpu, self.wall, self.started = namespace, cpu, wall, None
        ours, theirs = socket_pair()
        pid = os.fork()
        if pid == 0:                             # the answer's process: serve, then vanish
            try:
                ours.close()
                os.setsid()
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                if memory is not None:
                    limit = address_space() + int(memory)
                    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
                worker.answering(theirs, namespace).serve()
            except (EOFError, ConnectionError):
                pass
            finally:
                os._exit(0)
        theirs.close()
        self.pid, self.error, self.enforced = pid, None, []
        self.channel = Channel(ours, self.refuse, on_wait=self.wait)

    def limited(self, memory, cpu):
        return Forked(self.namespace, memory=memory, cpu=cpu, wall=max(4 * cpu, 10.0))

    def close(self):
        super().close()
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


#: The answers' processes started by :func:`across`, ended by :func:`end_all`.
STARTED = []


def across(answer, name=None):
    """``answer`` (a function or a class, or None) as a grader sees a notebook's answer: a proxy
    whose calls run in a process of its own (with the driver of a class answer beside it)."""
    if answer is None:
        return None
    name = name or getattr(answer, "__name__", "answer")
    name = name if name.isidentifier() else "answer"
    drivers = {attribute: getattr(importlib.import_module(module), attribute)
               for exercise, (module, attribute) in DRIVERS.items() if exercise == name}
    forked = Forked({name: answer, **drivers})
    STARTED.append(forked)
    return forked.get(name)


def end_all():
    """End every answer's process :func:`across` started."""
    while STARTED:
        STARTED.pop().close()


def judged(grader, answer):
    """The report of ``grader`` (``mlnn.course.check_<x>``) on ``answer`` judged from a process
    of its own, as the grading command judges the answer cell of its exercise (in notebook 01b
    with mlnn's pieces standing in for the others, as there)."""
    exercise = next(e for e in EXERCISES if e.grader == grader.__name__)
    if exercise.notebook == "01b":
        answer = standing_in(answer)
    return grader(across(answer, exercise.name))
