"""Measuring (timings of the networks and of the SVMs beside liblinear, and what the machine is),
and the course in nbgrader's format for an instructor.

``bench`` — time per epoch and per δ2 of the networks
``svm_bench`` — the BR solvers timed beside liblinear (scikit-learn's build, when installed)
``machine`` — processor, BLAS threads and versions, recorded with every benchmark
``nbgrader_course`` — nbgrader metadata in the notebooks; the source version with the solutions
``course_audit`` — what each submitted answer cell reaches (solutions, graders, the environment,
the library routine of its exercise), and changed locked cells; the export's flags column
``course_bench`` — nbgrader's autograde of one student timed
"""
