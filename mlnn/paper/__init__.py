"""The paper's Table 3 (and the rank study beyond it), built on the model and the baselines.

Nothing in the library imports from this package; the command line (:mod:`mlnn.cli`), the
course and the notebooks do. The figures live in :mod:`mlnn.figures`.
"""
