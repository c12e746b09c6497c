"""``python -m mlnn``: the command line (:mod:`mlnn.cli`).

A process started in the background by a shell (``nohup ... &``) inherits SIGINT ignored; the
default handler is restored so that an interrupt (Ctrl-C, ``kill -INT``, ``timeout -s INT``)
stops a long run cleanly, keeping what it finished, as in the foreground.
"""

import signal
import sys

from mlnn.cli import main

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
sys.exit(main())
