"""``python -m mlnn``: the command line (:mod:`mlnn.cli`).

Ctrl-C or SIGTERM while NumPy and SciPy load is held back until they are loaded; then
:func:`mlnn.cli.main` ends the command with one line, ``mlnn: interrupted`` (exit code 130) or
``mlnn: terminated`` (143), as it does later (:mod:`mlnn.base.interrupts`). A process started in
the background by a shell (``nohup ... &``) inherits SIGINT ignored; the default handler is
restored so that Ctrl-C stops a long run cleanly, as in the foreground.
"""

import signal
import sys

from mlnn.base import interrupts

interrupts.hold()

from mlnn.cli import main  # noqa: E402

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
sys.exit(main())
