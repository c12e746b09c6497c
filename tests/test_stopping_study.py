"""The stopping-rule study's arithmetic and bookkeeping (:mod:`mlnn.paper.stopping`): the
tolerance at its boundary, relative to the paper's value; the validation run choosing η0 by the
selection criterion it is given; the later of two stored runs of the same network winning, and
which stored run file wins where two hold the same network."""

import json
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

from mlnn.base.validation import validation_split
from mlnn.evaluation.metrics import MEASURES
from mlnn.paper.results import rank_loss_runs, stem
from mlnn.paper.selection import choose
from mlnn.paper.stopping import (TOLERANCES, rule_values, stored_runs, validation_run,
                                 within_tolerance)

#: A paper value for each kind of tolerance (coverage is a count of labels, the others rates).
PAPER = {"abs": 0.5, "rel": 20.0}


@pytest.mark.parametrize("measure", sorted(TOLERANCES))
def test_the_tolerance_holds_just_inside_and_fails_just_outside_on_both_sides(measure):
    kind, size = TOLERANCES[measure]
    paper = PAPER[kind]
    bound = size * paper if kind == "rel" else size          # relative to the paper's value
    for side in (1, -1):
        assert within_tolerance(measure, paper + side * 0.999 * bound, paper)
        assert not within_tolerance(measure, paper + side * 1.001 * bound, paper)


def test_a_relative_tolerance_is_a_fraction_of_the_papers_value_not_of_ours():
    relative = [m for m, (kind, _) in TOLERANCES.items() if kind == "rel"]
    assert relative, "the test needs a measure with a relative tolerance"
    for measure in relative:
        size = TOLERANCES[measure][1]
        paper = 100.0
        ours = paper * (1 + 1.005 * size)     # outside size·paper, inside size·ours
        assert abs(ours - paper) <= size * ours
        assert not within_tolerance(measure, ours, paper)
        assert within_tolerance(measure, paper * (1 - 0.995 * size), paper)


def _contrary(seed, n=160, n_features=6, n_labels=4):
    """A dataset whose validation documents (validation_split(n, 0.1, 0), the split of
    validation_run) have as relevant their lowest-scoring label under a random linear scoring,
    the training documents their highest-scoring one: rank loss and mean F1 then disagree about
    which η0 learned best."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    S = X @ rng.normal(size=(n_features, n_labels))
    Y = (S == S.max(axis=1, keepdims=True)).astype(np.int8)
    _, val = validation_split(n, 0.1, 0)
    Y[val] = (S == S.min(axis=1, keepdims=True))[val]
    return SimpleNamespace(name="contrary", X_train=sp.csr_matrix(X), Y_train=sp.csr_matrix(Y))


BUDGET = {"hidden_units": 8, "max_epochs": 6, "patience": 2, "learning_rates": (0.3, 0.03, 0.003),
          "batch_size": 64}


@pytest.fixture(scope="module")
def by_criterion():
    """{criterion: the NN_A record of a validation run selecting η0 by it}, on data where the
    two criteria choose different η0."""
    return {criterion: validation_run(_contrary(2), "nn-a", BUDGET, ("rankloss", "meanF"),
                                      select_by=criterion)["methods"]["NN_A"]
            for criterion in ("rankloss", "meanF")}


def test_the_validation_run_chooses_eta_by_the_criterion_it_is_given(by_criterion):
    scores = by_criterion["meanF"]["validation"]
    assert scores == by_criterion["rankloss"]["validation"]         # the same runs
    assert choose(scores["meanF"], "meanF") != choose(scores["rankloss"], "rankloss"), \
        "the test needs data on which the criteria disagree"
    for criterion, record in by_criterion.items():
        assert record["selected_by"] == criterion
        assert record["learning_rate"] == choose(record["validation"][criterion], criterion)
        for rule, entry in record["rules"].items():
            assert entry["selected_by"] == criterion
            assert entry["learning_rate"] == choose(entry["validation"][criterion], criterion)


def _run(seed, maF, rules=None, stopping="rankloss"):
    """A stored run record of NN_A on "synthetic" with the test macro-F1 ``maF``."""
    record = {"stopping": stopping, "learning_rate": 0.01, "best_epoch": 4,
              "test": {"maF": maF}, "rules": rules or {}}
    return {"dataset": "synthetic", "seed": seed, "methods": {"NN_A": record}}


def test_where_two_stored_runs_hold_the_same_network_the_later_wins():
    earlier, later = _run(0, 0.25), _run(0, 0.5)
    other_seed = _run(1, 0.75)
    assert rule_values([earlier, later, other_seed], "synthetic", "NN_A", "rankloss",
                       "maF") == {0: 0.5, 1: 0.75}
    assert rule_values([later, earlier], "synthetic", "NN_A", "rankloss", "maF") == {0: 0.25}
    refit = _run(0, 0.125, rules={"fixed": {"learning_rate": 0.3, "best_epoch": 3,
                                            "test": {"maF": 0.375}}})
    assert rule_values([earlier, refit], "synthetic", "NN_A", "fixed", "maF") == {0: 0.375}
    assert rule_values([refit, earlier], "synthetic", "NN_A", "fixed", "maF") == {0: 0.375}
    assert rule_values([refit, earlier], "synthetic", "NN_A", "rankloss", "maF") == {0: 0.25}


def _stored(directory, seed, maF, stopping, main=None):
    """Write the run file of NN_A on "synthetic" (every test measure 0.5 but maF) into
    ``directory``, as ``reproduce`` names it; ``main``: the run's declared main rule."""
    run = _run(seed, maF, stopping=stopping)
    run["methods"]["NN_A"]["test"] = {**dict.fromkeys(MEASURES, 0.5), "maF": maF}
    run["settings"] = {"stopping": stopping}
    if main:
        run["stopping_rules"] = {"main": main}
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"run_{stem('synthetic', seed)}.json").write_text(json.dumps(run))


def test_the_main_run_files_win_over_the_stopping_folder_where_they_disagree(tmp_path):
    """stored_runs reads figures/stopping/ first, then the main run files, which win for the
    same network, rule and seed: tested with files that disagree (the committed ones agree)."""
    _stored(tmp_path / "stopping", 0, 0.25, "rankloss")
    _stored(tmp_path / "stopping", 1, 0.75, "rankloss")
    _stored(tmp_path, 0, 0.5, "rankloss")
    runs = stored_runs(tmp_path)
    assert rule_values(runs, "synthetic", "NN_A", "rankloss", "maF") == {0: 0.5, 1: 0.75}


def test_the_rank_loss_collection_takes_the_stopping_folder_over_a_main_run(tmp_path):
    """rank_loss_runs: where figures/stopping/ holds the rank-loss run of a (dataset, seed), it
    replaces the main run file (run under another rule); elsewhere the main run is kept."""
    _stored(tmp_path / "stopping", 0, 0.25, "rankloss")
    _stored(tmp_path, 0, 0.5, "meanF_best", main="meanF_best")
    _stored(tmp_path, 1, 0.75, "rankloss")
    runs = rank_loss_runs(tmp_path)
    assert [(run["seed"], run["methods"]["NN_A"]["test"]["maF"]) for run in runs] == [
        (0, 0.25), (1, 0.75)]
