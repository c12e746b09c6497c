"""The one registry of the course's exercises: which notebook asks for which answer, the grader
that judges it (an attribute of :mod:`mlnn.course`), its points and what would solve it for the
student.

The tests, the nbgrader metadata (points), the grading command and the course index all read
:data:`EXERCISES`.
Points follow the effort: a one-line sign or count 1, a derivative or a short formula 2, a
derivation in closed form, a class with state or a full measure 3, the training loop and the
choice of C 4. ``reaches`` lists the dotted names of library code that, used in the answer cell,
does the exercise for the student (the instructor's audit flags them); ``allows`` the mlnn
modules the answer's process may import (nothing else of mlnn is there); ``uses`` the other
pieces of notebook 01b the answer calls by name, mlnn's own standing in for the student's.
"""

from typing import NamedTuple


class Exercise(NamedTuple):
    """One answer cell: the ``notebook`` key ("01", "01b", …), the ``name`` the cell defines,
    the ``grader`` (``mlnn.course.<grader>``), its ``points`` and what ``reaches`` a solution."""

    notebook: str
    name: str
    grader: str
    points: int
    reaches: tuple
    allows: tuple = ()
    uses: tuple = ()

    @property
    def solution(self):
        """The stem of the worked solution's file under ``notebooks/solutions/`` (instructor's
        only: never shipped with a release, never loaded by a notebook or a grader)."""
        return SOLUTIONS[self.notebook]


#: The stem of each notebook's worked solution under ``notebooks/solutions/``.
SOLUTIONS = {"01": "ex01_derivatives", "01b": "ex01b_build_it_from_zero",
             "02": "ex02_landscapes", "02b": "ex02b_optimizers_dropout",
             "03": "ex03_convergence", "04": "ex04_dropout", "05": "ex05_learning_rates",
             "06": "ex06_thresholds", "06b": "ex06b_measures_and_baseline",
             "07": "ex07_paper_table", "08": "ex08_beyond_the_paper"}

_NETWORK = ("mlnn.nn.network.Network", "mlnn.nn.activations")
_PWE = ("mlnn.nn.losses.PairwiseExponential", "mlnn.nn.losses.get_loss")
_CE = ("mlnn.nn.losses.CrossEntropy", "mlnn.nn.losses.get_loss")
_RANKING = ("mlnn.evaluation.metrics.ranking_measures", "mlnn.evaluation.metrics.evaluate",
            "mlnn.evaluation.metrics._rank_statistics", "sklearn.metrics")

EXERCISES = tuple(Exercise(*entry) for entry in [
    ("01", "delta1_tanh", "check_delta1", 2, _NETWORK),
    ("01", "grad_W1_dense", "check_input_gradient", 2, _NETWORK),
    ("01", "pwe_delta_one", "check_pwe_delta", 3, _PWE),
    ("01", "central_differences", "check_gradient_check", 2, ("mlnn.nn.gradcheck",)),
    ("01b", "forward", "check_forward", 2, _NETWORK),
    ("01b", "ce_delta2", "check_ce_delta2", 1, _CE),
    ("01b", "pwe_delta2_pairs", "check_pwe_delta2_pairs", 3, _PWE),
    ("01b", "pwe_delta2", "check_pwe_delta2", 3, _PWE),
    ("01b", "delta1_relu", "check_delta1_relu", 2, _NETWORK),
    ("01b", "grad_W1_rows", "check_grad_W1_rows", 2, _NETWORK),
    ("01b", "backward", "check_backward", 3, _NETWORK, (), ("delta1_relu", "grad_W1_rows")),
    ("01b", "AdaGrad", "check_adagrad", 3, ("mlnn.nn.optimizers", "mlnn.nn.lazy_updates")),
    ("01b", "update", "check_update", 2,
     ("mlnn.nn.training.minibatch_update", "mlnn.nn.network.Network"), (),
     ("forward", "ce_delta2", "backward")),
    ("01b", "train", "check_train", 4,
     ("mlnn.nn.training.train", "mlnn.nn.training.minibatches"), (), ("update",)),
    ("02", "pwe_closed_form", "check_pwe_landscape", 3,
     ("mlnn.figures.landscapes.loss_surface",)),
    ("02", "ce_dJ_dW2_1", "check_ce_slope", 2,
     ("mlnn.figures.landscapes.loss_surface", "mlnn.figures.landscapes.surface_gradient")),
    ("02b", "rmsprop_step", "check_rmsprop", 2, ()),
    ("02b", "RMSProp", "check_rmsprop_rule", 3, ()),
    ("02b", "momentum_skip", "check_momentum_skip", 3,
     ("mlnn.nn.lazy_updates.powers", "mlnn.nn.lazy_updates.matrix_powers",
      "mlnn.nn.lazy_updates.apply_powers")),
    ("02b", "inverted_dropout", "check_inverted_dropout", 2,
     ("mlnn.nn.dropout.hidden_mask",)),
    ("03", "rank_loss_one", "check_rank_loss_one", 2,
     _RANKING + ("mlnn.evaluation.metrics.rank_loss",)),
    ("03", "effective_rates", "check_adagrad_rates", 2, ("mlnn.nn.optimizers.AdaGrad",)),
    ("04", "input_dropout", "check_input_dropout", 3,
     ("mlnn.nn.dropout.input_mask", "mlnn.nn.dropout.apply_input_mask")),
    ("04", "best_update", "check_best_update", 1, ()),
    ("05", "excluded", "check_pwe_excluded", 1, ("mlnn.nn.losses.PairwiseExponential",)),
    ("05", "average_precision_one", "check_average_precision_one", 2, _RANKING),
    ("06", "best_threshold_one", "check_f1_threshold", 2,
     ("mlnn.evaluation.thresholds.optimal_thresholds",)),
    ("06", "ridge_solve", "check_ridge", 2,
     ("mlnn.evaluation.thresholds.ridge", "mlnn.evaluation.thresholds.ridge_with_intercept",
      "sklearn.linear_model")),
    ("06b", "one_error_by_hand", "check_one_error", 2, _RANKING),
    ("06b", "coverage_by_hand", "check_coverage", 2, _RANKING),
    ("06b", "rank_loss_by_hand", "check_rank_loss", 2,
     _RANKING + ("mlnn.evaluation.metrics.rank_loss",)),
    ("06b", "average_precision_by_hand", "check_average_precision", 2, _RANKING),
    ("06b", "micro_macro_by_hand", "check_micro_macro", 3,
     ("mlnn.evaluation.metrics.bipartition_measures", "mlnn.evaluation.metrics.evaluate",
      "sklearn.metrics")),
    ("06b", "select_C", "check_select_C", 4,
     ("mlnn.paper.selection.fit_br", "mlnn.paper.selection._search_C",
      "mlnn.paper.selection.choose"), ("mlnn.evaluation.metrics",)),
    ("07", "better_than_paper", "check_better_than_paper", 1, (), ("mlnn.evaluation.metrics",)),
    ("07", "coverage_one", "check_coverage_one", 2, _RANKING),
    ("08", "average_ranks_by_hand", "check_average_ranks", 2,
     ("mlnn.paper.ranks.average_ranks", "mlnn.paper.ranks.rank_table")),
    ("08", "friedman_chi2", "check_friedman", 3,
     ("mlnn.paper.ranks.friedman_test", "mlnn.paper.ranks.Friedman",
      "scipy.stats.friedmanchisquare")),
    ("08", "nemenyi_cd", "check_critical_difference", 2,
     ("mlnn.paper.ranks.critical_difference", "mlnn.paper.ranks.cliques")),
])


def exercise(notebook, name):
    """The :class:`Exercise` of ``notebook`` whose answer cell defines ``name``."""
    for entry in EXERCISES:
        if entry.notebook == notebook and entry.name == name:
            return entry
    known = ", ".join(e.name for e in EXERCISES if e.notebook == notebook) or "none"
    raise KeyError(f"notebook {notebook!r} has no exercise {name!r} (its exercises: {known})")
