"""``python -m mlnn``: the command line (:mod:`mlnn.cli`).

A process started in the background by a shell (``nohup ... &``) inherits SIGINT ignored; the
default handler is restored so that an interrupt (Ctrl-C, ``kill -INT``, ``timeout -s INT``)
stops a long run cleanly, keeping what it finished, as in the foreground. Ctrl-C (or SIGTERM)
while the modules load (NumPy and SciPy take a moment) is held back until they are loaded: the
package's ``__init__`` starts holding it when started as ``python -m mlnn``
(:mod:`mlnn.base.interrupts`) and :func:`mlnn.cli.main` releases it first thing, printing
``mlnn: interrupted`` and exiting with 130 (``mlnn: terminated``, 143) if one came, as it does
later, without a traceback.
"""

import signal
import sys

from mlnn.cli import main

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
sys.exit(main())
