"""Teaching support for the notebooks under ``notebooks/``.

=========  ====================================================================================
grading    the toolkit every grader uses: run a student's function on copies of its inputs,
           tell its exceptions from the grader's own, compare shapes, dtypes and values, random
           cases, binomial checks of random masks, the PASS / NOT YET report
graders    the exercises of notebooks 01–08 (those of 02b in ``updates``: RMSProp, momentum's
           catch-up, dropout, AdaGrad's rates)
scratch    notebook 01b: the network built from zero (the learning pieces in ``scratch_training``,
           the shared random cases in ``scratch_cases``)
measures   notebook 06b: the measures of Sec. 4 by hand, micro and macro averaging (the choice
           of C for BR_B and BR_R in ``c_selection``)
=========  ====================================================================================

Each grader tries many random cases against a reference built from pristine copies of its
inputs, and says what is wrong without printing the answer.
"""
