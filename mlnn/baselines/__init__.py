"""The baseline of Sec. 4: binary relevance with linear SVMs.

``svm`` holds :class:`~mlnn.baselines.svm.LinearSVMBR`, trained by liblinear's primal
trust-region Newton method. How C is chosen for BR_B and BR_R
is the paper's protocol, and lives with it in :mod:`mlnn.paper.selection`.
"""
