"""Measuring (timings of the networks and of the SVMs beside liblinear, and what the machine is),
and the course in nbgrader's format for an instructor.

``bench`` — time per epoch and per δ2 of the networks
``svm_bench`` — the BR solvers timed beside liblinear (scikit-learn's build, when installed)
``machine`` — processor, BLAS threads and versions, recorded with every benchmark
``nbgrader_course`` — nbgrader metadata in the notebooks; the source version with the solutions
``course_grade`` — every submission graded, each answer cell in a confined process of its own
``course_audit`` — what the grade cannot see: mlnn's own routine used or copied, locked cells
changed
``course_bench`` — the grading of one student timed
"""
