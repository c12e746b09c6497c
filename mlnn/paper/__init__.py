"""The paper's experiments, built on the library below them.

=================  ==========================================================================
module             job
=================  ==========================================================================
``methods``        the eight methods of Sec. 4 and Table 3, and the paper's grids for η0 and C
``selection``      η0 chosen for a network method on a validation split (Sec. 4)
``reproduce``      Table 3 on one dataset and seed: running every method, and the result files
``results``        where each stored (dataset, seed) run lives and how it is read back
``lock``           one writer per output directory (a lock file with the writer's pid)
``study``          the comparison over a list of datasets × seeds, resumable
``ranks``          average ranks, the Friedman test and Nemenyi's critical difference
``report``         a study's tables: mean ± std, ranks beside the paper's Table 2, paired diffs
``cdplot``         the critical-difference diagram (Demšar 2006)
``experiments``    the convergence experiments behind Figs. 3 and 4
``curves``         learning curves stored as CSV
``landscapes``     the loss landscapes of Fig. 2
``plots``          the figures (matplotlib)
``environment``    how the notebooks size their runs and where figures go (``MLNN_FAST`` ...)
``course``         the graders of the notebooks' exercises
=================  ==========================================================================

Nothing in the library imports from this package; the command line (:mod:`mlnn.cli`) and the
notebooks do.
"""
