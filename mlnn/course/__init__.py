"""The course's graders: ``from mlnn import course`` in a notebook, then
``course.check_<x>(answer)`` in a grader cell; each takes only the student's answer, prints one
line ``PASS …`` or ``NOT YET …`` and returns a report that is true when it passed (under
autograde a report other than PASS fails its cell: :data:`mlnn.course.grading.AUTOGRADE`,
decided once, at this import).

:mod:`~mlnn.course.registry` lists every exercise (notebook, answer, grader, points);
:mod:`~mlnn.course.grading` is the one mechanism every grader uses; the graders themselves are in
:mod:`~mlnn.course.graders` (notebooks 01–08), :mod:`~mlnn.course.scratch` (01b, the network built
from zero, whose :func:`yours_if` gives later cells mlnn's piece until the student's passes) and
:mod:`~mlnn.course.measures` (06b), over :mod:`~mlnn.course.pairwise` (PWE's δ2 and its
mistakes), :mod:`~mlnn.course.ranking` (the ranking measures and theirs) and
:mod:`~mlnn.course.rules` (update rules on named parameters). To add an
exercise: a reference with the student's signature, a function yielding random cases and a table
of ``Mistake(hint, wrong answer)``, each wrong answer the reference with one mistake planted
(``variant(reference, **mistake)``); ``make_grader(label, title, reference, cases, mistakes)`` is
its grader, entered in the registry. Every grader runs the same checks first: the answer's type,
shape and dtype as returned, inputs left unchanged, every number argument followed, a class's
methods present.
"""

from mlnn.course.graders import (check_adagrad_rates, check_average_precision_one,
                                 check_average_ranks, check_best_update, check_better_than_paper,
                                 check_ce_slope, check_coverage_one, check_critical_difference,
                                 check_delta1, check_f1_threshold, check_friedman,
                                 check_gradient_check, check_input_dropout, check_input_gradient,
                                 check_inverted_dropout, check_momentum_skip, check_pwe_delta,
                                 check_pwe_excluded, check_pwe_landscape, check_rank_loss_one,
                                 check_ridge, check_rmsprop, check_rmsprop_rule)
from mlnn.course.measures import (check_average_precision, check_coverage, check_micro_macro,
                                  check_one_error, check_rank_loss, check_select_C)
from mlnn.course.scratch import (check_adagrad, check_backward, check_ce_delta2, check_delta1_relu,
                                 check_forward, check_grad_W1_rows, check_pwe_delta2,
                                 check_pwe_delta2_pairs, check_train, check_update, yours_if)
