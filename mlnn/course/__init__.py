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
"""
