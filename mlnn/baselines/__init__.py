"""The baseline of Sec. 4: binary relevance with linear SVMs.

``svm`` holds the solvers (dual coordinate descent and a primal trust-region Newton method, as
liblinear's) behind :class:`~mlnn.baselines.svm.LinearSVMBR`. How C is chosen for BR_B and BR_R
is the paper's protocol, and lives with it in :mod:`mlnn.paper.selection`.
"""
