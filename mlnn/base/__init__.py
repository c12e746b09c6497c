"""Plumbing beneath everything: nothing here knows the paper.

``errors``: the error and warning types; ``validation``: every input check and the one seeded
train/validation split; ``fileio``: atomic writes, output-path checks, the arrays' SHA-256;
``progress``: progress lines on standard error; ``lock``: one writer per output directory;
``interrupts``: Ctrl-C held back while a result's files are written and as the command starts.
"""
