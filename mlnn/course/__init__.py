"""Teaching support for the notebooks under ``notebooks/``.

=========  ====================================================================================
grading    the one mechanism every grader uses: :func:`~mlnn.course.grading.check` runs the
           student's function against a reference on random cases, names a wrong answer by the
           table of mistakes it equals, reports PASS / NOT YET (under nbgrader: fails the cell)
graders    the exercises of notebooks 01–08 (02b's update rules and dropout included)
scratch    notebook 01b: the network built from zero
measures   notebook 06b: the measures of Sec. 4 by hand, micro and macro averaging, the choice
           of C for BR_B and BR_R
=========  ====================================================================================

To add an exercise: write a reference with the student's signature, a function yielding random
cases ``(what, [(input name, value), ...])`` and a table of ``Mistake(hint, wrong answer)``;
``exercise(label, title, reference, cases, mistakes)`` is its grader, and every mistake of the
table is also a wrong answer the tests reject with its hint (``tests/test_exercises.py``).
"""
