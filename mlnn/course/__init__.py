"""The course's graders: ``from mlnn import course`` in a notebook, then
``course.check_<x>(answer)`` in a grader cell; each takes only the student's answer, prints one
line ``PASS …`` or ``NOT YET …`` and returns a report that is true when it passed (under
autograde a report other than PASS fails its cell: :data:`mlnn.course.grading.AUTOGRADE`,
decided once, at this import).

:mod:`~mlnn.course.registry` lists every exercise (notebook, answer, grader, points);
:mod:`~mlnn.course.grading` is the one mechanism every grader uses. The graders are in one
module per concept of the paper, none importing another: :mod:`~mlnn.course.derivatives`
(δ1, ∂J/∂W1, the forward pass, gradient checking), :mod:`~mlnn.course.pwe` (PWE's δ2, excluded
documents), :mod:`~mlnn.course.loss_landscapes`, :mod:`~mlnn.course.update_rules` (AdaGrad,
RMSProp, momentum), :mod:`~mlnn.course.dropout_masks`, :mod:`~mlnn.course.training_loop`,
:mod:`~mlnn.course.ranking_measures`, :mod:`~mlnn.course.bipartition` (micro/macro,
thresholds, the choice of C) and :mod:`~mlnn.course.comparison` (ranks, Friedman, Nemenyi).
What several share is in helper modules: :mod:`~mlnn.course.pieces` (notebook 01b's network
built from zero: mlnn's pieces standing in, the guards, :func:`yours_if`),
:mod:`~mlnn.course.pairwise` (PWE's δ2 and its mistakes), :mod:`~mlnn.course.ranking` (the
ranking measures and theirs) and :mod:`~mlnn.course.rules` (update rules on named parameters).

To add an exercise: in the module of its concept, a reference with the student's signature, a
function yielding random cases and a table of ``Mistake(hint, wrong answer)``, each wrong answer
the reference with one mistake planted (``variant(reference, **mistake)``);
``make_grader(label, title, reference, cases, mistakes)`` is its grader, re-exported here and
entered in the registry. Every grader runs the same checks first: the answer's type, shape and
dtype as returned, inputs left unchanged, every number argument followed, a class's methods
present.
"""

from mlnn.course.bipartition import (check_f1_threshold, check_micro_macro, check_ridge,
                                     check_select_C)
from mlnn.course.comparison import (check_average_ranks, check_better_than_paper,
                                    check_critical_difference, check_friedman)
from mlnn.course.derivatives import (check_backward, check_ce_delta2, check_delta1,
                                     check_delta1_relu, check_forward, check_grad_W1_rows,
                                     check_gradient_check, check_input_gradient)
from mlnn.course.dropout_masks import check_input_dropout, check_inverted_dropout
from mlnn.course.loss_landscapes import check_ce_slope, check_pwe_landscape
from mlnn.course.pieces import yours_if
from mlnn.course.pwe import (check_pwe_delta, check_pwe_delta2, check_pwe_delta2_pairs,
                             check_pwe_excluded)
from mlnn.course.ranking_measures import (check_average_precision, check_average_precision_one,
                                          check_coverage, check_coverage_one, check_one_error,
                                          check_rank_loss, check_rank_loss_one)
from mlnn.course.training_loop import check_best_update, check_train, check_update
from mlnn.course.update_rules import (check_adagrad, check_adagrad_rates, check_momentum_skip,
                                      check_rmsprop, check_rmsprop_rule)
