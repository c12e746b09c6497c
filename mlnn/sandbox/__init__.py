"""Answers run apart from their grader: each in a process of its own, confined by the
operating system, reached only through calls that carry data (:mod:`~mlnn.sandbox.client`,
the grader's side; :mod:`~mlnn.sandbox.worker`, the student's; :mod:`~mlnn.sandbox.wire`,
what crosses; :mod:`~mlnn.sandbox.confine`, what the kernel enforces)."""
