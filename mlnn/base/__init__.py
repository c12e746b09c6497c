"""Plumbing beneath everything: nothing here knows the paper.

==============  ===========================================================================
module          job
==============  ===========================================================================
``errors``      the error and warning types (:class:`MLNNError` and its kinds)
``validation``  every input check, and the one seeded train/validation split
``fileio``      atomic writes, output-path checks, the arrays' SHA-256 digest
``progress``    progress lines on standard error
``lock``        one writer per output directory (a lock file with the writer's pid)
``interrupts``  Ctrl-C held back while a result's files are written and while the command starts
==============  ===========================================================================
"""
