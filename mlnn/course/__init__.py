"""The course's graders: ``from mlnn import course`` in a notebook, then
``course.check_<x>(answer)`` in a grader cell; each takes only the student's answer, prints one
line ``PASS …`` or ``NOT YET …`` and returns a report that is true when it passed. It decides no
grade: the points come from the instructor's ``python -m mlnn course grade``, which judges each
answer cell with the same grader in a process of its own (:mod:`~mlnn.course.answers`); a grader
cell judges the answer the same way.

:mod:`~mlnn.course.registry` lists every exercise (notebook, answer, grader, points);
:mod:`~mlnn.course.grading` is the one mechanism every grader uses. The graders are in one
module per concept of the paper (:data:`MODULES`), none importing another:
:mod:`~mlnn.course.derivatives` (δ1, ∂J/∂W1, the forward pass, gradient checking),
:mod:`~mlnn.course.pwe` (PWE's δ2, excluded documents), :mod:`~mlnn.course.loss_landscapes`,
:mod:`~mlnn.course.update_rules` (AdaGrad, RMSProp, momentum), :mod:`~mlnn.course.dropout_masks`,
:mod:`~mlnn.course.training_loop`, :mod:`~mlnn.course.ranking_measures`,
:mod:`~mlnn.course.bipartition` (micro/macro, thresholds, the choice of C) and
:mod:`~mlnn.course.comparison` (ranks, Friedman, Nemenyi). What several share is in helper
modules: :mod:`~mlnn.course.pieces` (notebook 01b's network built from zero, :func:`yours_if`),
:mod:`~mlnn.course.standins` (mlnn's own pieces of 01b, which import nothing of the graders),
:mod:`~mlnn.course.pairwise` (PWE's δ2 and its mistakes), :mod:`~mlnn.course.ranking` (the
ranking measures and theirs) and :mod:`~mlnn.course.rules` (update rules on named parameters).
This package loads them on first use, so that importing :mod:`~mlnn.course.standins` loads no
grader.

To add an exercise: in the module of its concept, a reference with the student's signature, a
function yielding random cases and a table of ``Mistake(hint, wrong answer)``, each wrong answer
the reference with one mistake planted (``variant(reference, **mistake)``);
``make_grader(label, title, reference, cases, mistakes)`` is its grader; enter it in the
registry. Every grader runs the same checks first: the answer's type, shape and dtype as
returned, inputs left unchanged, every number argument followed, a class's methods present.
"""

import importlib

#: The grader modules, one per concept.
MODULES = ("bipartition", "comparison", "derivatives", "dropout_masks", "loss_landscapes", "pwe",
           "ranking_measures", "training_loop", "update_rules")


def raw_grader(name):
    """The grader ``name`` as its module defines it (it judges the answer it is given here)."""
    for module in MODULES:
        found = getattr(importlib.import_module(f"mlnn.course.{module}"), name, None)
        if found is not None:
            return found
    raise AttributeError(f"module 'mlnn.course' has no grader {name!r}")


def __getattr__(name):
    """``check_<x>``: the grader as a grader cell calls it (:func:`answers.feedback`);
    ``yours_if``."""
    if name == "yours_if":
        from mlnn.course.pieces import yours_if
        return yours_if
    if name.startswith("check_"):
        from mlnn.course.answers import feedback
        globals()[name] = feedback(raw_grader(name))     # one grader object per name
        return globals()[name]
    raise AttributeError(f"module 'mlnn.course' has no attribute {name!r}")
