"""``python -m mlnn``: the command line (:mod:`mlnn.cli`).

Ctrl-C or SIGTERM while NumPy and SciPy load is held back until they are loaded, then reported
as later (:mod:`mlnn.base.interrupts`). A background process (``nohup ... &``) inherits SIGINT
ignored; the default handler is restored so that Ctrl-C stops a long run cleanly.
"""

import signal
import sys

from mlnn.base import interrupts

interrupts.hold()

from mlnn.cli import main  # noqa: E402

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
sys.exit(main())
