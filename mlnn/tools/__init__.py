"""Measuring (``bench``, ``svm_bench``, ``startup``, and the ``machine`` they ran on) and the
course in nbgrader's format for an instructor (``nbgrader_course``, ``course_grade``,
``course_audit``, ``course_bench``)."""
