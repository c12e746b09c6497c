"""Teaching support for the notebooks under ``notebooks/``.

``graders`` checks the exercises: each grader tries many random cases against a reference built
from pristine copies of its inputs, and says what is wrong without printing the answer.
"""
