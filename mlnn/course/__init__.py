"""Teaching support for the notebooks under ``notebooks/``: :mod:`~mlnn.course.grading` is the
one mechanism every grader uses; :mod:`~mlnn.course.graders` holds the exercises of notebooks
01–08, :mod:`~mlnn.course.scratch` those of 01b (the network built from zero),
:mod:`~mlnn.course.measures` those of 06b (the measures of Sec. 4 by hand, the choice of C).

To add an exercise: write a reference with the student's signature, a function yielding random
cases ``(what, [(input name, value), ...])`` and a table of ``Mistake(hint, wrong answer)``;
``exercise(label, title, reference, cases, mistakes)`` is its grader, and every mistake of the
table is also a wrong answer the tests reject with its hint (``tests/test_exercises.py``).
"""
