"""The paper's Table 3 (and the rank study beyond it), built on the model and the baselines.

``methods`` — the eight methods of Sec. 4 and Table 3, and the paper's grids for η0 and C
``selection`` — η0 chosen for a network method on a validation split (Sec. 4)
``reproduce`` — Table 3 on one dataset and seed: running every method, and the result files
``results`` — where each stored (dataset, seed) run lives and how it is read back
``study`` — the comparison over a list of datasets × seeds, resumable
``stopping`` — the stopping rules side by side, read from stored run files
``ranks`` — average ranks, the Friedman test and Nemenyi's critical difference
``report`` — a study's tables (mean ± std, ranks beside the paper's Table 2, paired diffs)
           and critical-difference diagrams (Demšar 2006)

Nothing in the library imports from this package; the command line (:mod:`mlnn.cli`), the
course and the notebooks do. The figures live in :mod:`mlnn.figures`.
"""
