"""The paper's experiments, built on the library below them.

=================  ==========================================================================
module             job
=================  ==========================================================================
``methods``        the eight methods of Sec. 4 and Table 3, and the paper's grids for η0 and C
``selection``      η0 chosen for a network method on a validation split (Sec. 4)
``reproduce``      Table 3 on one dataset: running every method, and the result files
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
