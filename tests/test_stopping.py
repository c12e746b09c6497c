"""The stopping rules side by side (mlnn.paper.stopping): tables over seeds with the paper's
tolerance, and the validation curves with each rule's stop, read from run records."""

import json
from pathlib import Path

import numpy as np
import pytest

from mlnn.datasets import load
from mlnn.evaluation.metrics import MEASURES
from mlnn.paper.reproduce import PAPER_DATASETS, paper_table3, reproduce
from mlnn.paper.stopping import (TOLERANCES, plot_curves, rule_entries, rule_markdown,
                                 rule_stops, rule_values, stored_runs, study_tables,
                                 validation_curves, within_tolerance)

ROOT = Path(__file__).resolve().parents[1]

RULES = ("meanF_best", "rankloss", "meanF", "fixed")


@pytest.fixture(scope="module")
def runs():
    data = load("synthetic", n_train=240, n_test=80, n_features=60, n_labels=6)
    stored = []
    for seed in (0, 1):
        _, run = reproduce(data, methods=["nn-a"], learning_rates=(0.01, 0.3), quick=True,
                           random_state=seed, stopping="meanF_best", other_rules=RULES[1:],
                           log=lambda m: None)
        stored.append(json.loads(json.dumps(run)))            # as read back from a run file
    return stored


def test_tolerances_are_absolute_or_relative_to_the_paper():
    assert set(TOLERANCES) == set(MEASURES)
    assert within_tolerance("rankloss", 0.0034, 0.0031) and \
        not within_tolerance("rankloss", 0.0036, 0.0031)
    assert within_tolerance("coverage", 101.0, 100.0) and \
        not within_tolerance("coverage", 101.5, 100.0)
    assert within_tolerance("maF", 0.185, 0.196) and not within_tolerance("maF", 0.18, 0.196)


def test_rule_values_follow_each_rule_over_the_seeds(runs):
    for rule in RULES:
        values = rule_values(runs, "synthetic", "NN_A", rule, "maF")
        assert set(values) == {0, 1}
        expected = [rule_entries(run["methods"]["NN_A"])[rule]["test"]["maF"] for run in runs]
        assert [values[0], values[1]] == expected
    assert set(rule_values(runs, "synthetic", "NN_A", "fixed", "best_epoch").values()) == {3}
    assert rule_values(runs, "other", "NN_A", "fixed", "maF") == {}
    earlier = {"dataset": "synthetic", "seed": 5, "methods": {"NN_A": {        # before the rules
        "learning_rate": 0.1, "best_epoch": 7, "test": {"maF": 0.25}}}}
    assert rule_values([earlier], "synthetic", "NN_A", "rankloss", "maF") == {5: 0.25}
    assert rule_values([earlier], "synthetic", "NN_A", "fixed", "maF") == {}


def test_the_table_gives_mean_std_and_the_tolerance_mark(runs):
    values = np.array(list(rule_values(runs, "synthetic", "NN_A", "meanF_best", "maF").values()))
    paper = {"NN_A": {m: 0.5 for m in MEASURES}}
    table = rule_markdown(runs, "synthetic", ["NN_A"], RULES, paper).splitlines()
    assert len(table) == 2 + len(RULES) + 1                  # header, 4 rules, the paper's row
    row = table[2].split(" | ")
    assert row[1] == "meanF_best" and row[2] == "2"
    cell = row[4 + MEASURES.index("maF")].rstrip(" |")
    assert cell.startswith(f"{values.mean():.4f} ± {values.std(ddof=1):.4f}")
    assert cell.endswith("✓" if abs(values.mean() - 0.5) <= 0.012 else "✗")
    assert table[-1].startswith("| NN_A | paper |")


def test_study_tables_show_the_networks_and_bpmll_under_their_rules(runs):
    def run(seed, method, rule, maF):
        return {"dataset": "synthetic", "seed": seed, "methods": {method: {
            "stopping": rule, "learning_rate": 0.01, "best_epoch": 9 + seed,
            "test": {m: maF for m in MEASURES}}}}
    bpmll = [run(0, "BP-MLL_TA", "rankloss", 0.2), run(1, "BP-MLL_TA", "rankloss", 0.4),
             run(0, "BP-MLL_TA", "meanF_best", 0.3), run(1, "BP-MLL_TA", "fixed", 0.9)]
    tables = study_tables(runs + bpmll, {}, {"synthetic": "Synthetic", "other": "Other"})
    assert list(tables) == ["synthetic"] and len(tables["synthetic"]) == 2
    assert tables["synthetic"][0] == rule_markdown(runs + bpmll, "synthetic", ["NN_A"], RULES, {})
    rows = tables["synthetic"][1].splitlines()[2:]
    assert [row.split(" | ")[1:4] for row in rows] == [["meanF_best", "1", "9"],
                                                        ["rankloss", "2", "9, 10"]]
    assert " 0.3000 |" in rows[1 - 1] and " 0.3000 ± 0.1414 |" in rows[1]
    assert "0.9000" not in tables["synthetic"][1]                      # not a rule shown


def test_the_stopping_readme_holds_the_tables_of_the_stored_runs():
    """figures/stopping/README.md quotes every table the stored run files give, unchanged."""
    readme = (ROOT / "figures" / "stopping" / "README.md").read_text()
    tables = study_tables(stored_runs(ROOT / "figures"), paper_table3(), PAPER_DATASETS)
    assert set(tables) == set(PAPER_DATASETS)
    for dataset, markdown in tables.items():
        for table in markdown:
            assert table in readme, f"{dataset}: the README's table is not the stored runs' one"


def test_curves_and_stops_come_from_the_run_record(runs):
    record = runs[0]["methods"]["NN_A"]
    curves, stops = validation_curves(record), rule_stops(record)
    assert set(curves) == {0.01, 0.3} and set(stops) == set(RULES)
    for rule, by_eta in stops.items():
        assert set(by_eta) == {0.01, 0.3}
        chosen = rule_entries(record)[rule]
        assert by_eta[float(chosen["learning_rate"])] == chosen["best_epoch"]
    best = curves[0.3]["epoch"][np.argmax(curves[0.3]["meanF"])]
    assert stops["meanF_best"][0.3] == best
    fig = plot_curves(record, "NN_A")
    assert len([ax for ax in fig.axes if ax.lines]) == len(MEASURES) + 2


def test_a_validation_run_chooses_what_reproduce_chooses_without_test_numbers(runs, tmp_path):
    from mlnn.paper.reproduce import BUDGETS
    from mlnn.paper.stopping import validation_run
    data = load("synthetic", n_train=240, n_test=80, n_features=60, n_labels=6)
    budget = {**BUDGETS["quick"], "learning_rates": (0.01, 0.3)}
    run = validation_run(data, "nn-a", budget, RULES, random_state=1,
                         out=tmp_path / "validation.json")
    stored = json.loads((tmp_path / "validation.json").read_text())
    assert stored["validation_only"] and "test" not in stored["methods"]["NN_A"]
    full = runs[1]["methods"]["NN_A"]                      # reproduce, same seed and grid
    for rule, entry in rule_entries(stored["methods"]["NN_A"]).items():
        expected = rule_entries(full)[rule]
        assert (entry["learning_rate"], entry["best_epoch"], entry["threshold_lambda"]) == \
            (expected["learning_rate"], expected["best_epoch"], expected["threshold_lambda"])
    assert rule_stops(stored["methods"]["NN_A"]) == rule_stops(full)
    assert run["methods"]["NN_A"]["curves"].keys() == {0.01, 0.3}


def test_refitting_a_validation_run_gives_reproduces_test_numbers(runs):
    from mlnn.paper.reproduce import BUDGETS
    from mlnn.paper.stopping import refit_validation_run, validation_run
    data = load("synthetic", n_train=240, n_test=80, n_features=60, n_labels=6)
    budget = {**BUDGETS["quick"], "learning_rates": (0.01, 0.3)}
    run = refit_validation_run(data, validation_run(data, "nn-a", budget, RULES, random_state=1),
                               budget)
    full = runs[1]["methods"]["NN_A"]                      # reproduce, same seed and grid
    for rule, entry in rule_entries(run["methods"]["NN_A"]).items():
        assert entry["test"] == rule_entries(full)[rule]["test"]


def test_a_partial_refit_stores_only_the_rules_it_refitted(tmp_path):
    from mlnn.paper.reproduce import BUDGETS
    from mlnn.paper.stopping import refit_validation_run, validation_run
    data = load("synthetic", n_train=120, n_test=40, n_features=30, n_labels=4)
    budget = {**BUDGETS["quick"], "learning_rates": (0.3,)}
    run = refit_validation_run(data, validation_run(data, "nn-a", budget, RULES), budget,
                               out=tmp_path / "refit.json", rules=("fixed",))
    stored = json.loads((tmp_path / "refit.json").read_text())
    entries = rule_entries(stored["methods"]["NN_A"])
    assert [rule for rule, entry in entries.items() if "test" in entry] == ["fixed"]
    assert rule_values([stored], "synthetic", "NN_A", "meanF_best", "maF") == {}
    assert rule_values([run], "synthetic", "NN_A", "fixed", "maF") == \
        {0: entries["fixed"]["test"]["maF"]}


MAIN_RUNS = sorted(path for dataset in PAPER_DATASETS
                   for path in (ROOT / "figures").glob(f"run_{dataset}*.json"))


@pytest.mark.parametrize("path", MAIN_RUNS, ids=lambda path: path.name)
def test_the_main_rows_of_the_papers_datasets_are_the_declared_rules(path):
    """figures/run_<dataset>*.json of Reuters-21578 and Delicious hold every network under the
    declared rule, and their tables are the rows reproduce makes of them, digit for digit."""
    from mlnn.paper.methods import METHODS
    from mlnn.paper.reproduce import DECLARED_RULE, comparison_rows, markdown_table
    from mlnn.paper.results import read_run, table_paths
    run = read_run(path)
    assert run["settings"]["stopping"] == run["stopping_rules"]["main"] == DECLARED_RULE["rule"]
    networks = [m for m in run["methods"] if METHODS[m]["kind"] == "nn"]
    assert networks and all(run["methods"][m]["stopping"] == DECLARED_RULE["rule"]
                            for m in networks)
    csv_path, md_path = table_paths(path.parent, run["dataset"], run["seed"])
    stored = [(row.split(",")[1], row.split(",")[2], float(row.split(",")[3]))
              for row in csv_path.read_text().splitlines()[1:]]
    rows = comparison_rows(run)
    assert stored == [(row["method"], row["measure"], row["ours"]) for row in rows]
    assert markdown_table(rows) in md_path.read_text()


#: Networks of the main rows never run under the rank-loss rule: the Delicious BP-MLL networks with
#: dropout on seeds 1 and 2 were first run under the declared rule, without sensitivity rows.
NO_RANK_LOSS_RUN = {("delicious", seed, method) for seed in (1, 2)
                    for method in ("BP-MLL_TAD", "BP-MLL_RAD")}


def test_every_network_of_the_main_rows_keeps_its_rank_loss_row():
    """The rank-loss rule's rows stay as sensitivity rows: every network of a main run file
    has a rank-loss result for the same seed, in its record or under figures/stopping/."""
    runs = stored_runs(ROOT / "figures")
    main = [run for run in runs if run.get("stopping_rules", {}).get("main") == "meanF_best"]
    assert {run["dataset"] for run in main} == set(PAPER_DATASETS)
    for run in main:
        for method, record in run["methods"].items():
            if "stopping" in record and (run["dataset"], run["seed"], method) not in \
                    NO_RANK_LOSS_RUN:
                assert run["seed"] in rule_values(runs, run["dataset"], method, "rankloss",
                                                  "maF"), (run["dataset"], run["seed"], method)


def test_the_figures_readme_shows_the_main_rows_of_seed_0():
    """The first tables of figures/README.md are the committed main rows of seed 0."""
    from mlnn.paper.reproduce import comparison_rows, markdown_table
    from mlnn.paper.results import read_run
    readme = (ROOT / "figures" / "README.md").read_text()
    for dataset in PAPER_DATASETS:
        table = markdown_table(comparison_rows(read_run(ROOT / "figures" / f"run_{dataset}.json")))
        assert table in readme, f"figures/README.md does not show the main rows of {dataset}"


def test_the_study_beyond_the_paper_reads_every_collection_under_the_rank_loss_rule():
    """rank_loss_runs: one run per stored (dataset, seed), none of them the declared rule's."""
    from mlnn.paper.results import load_runs, rank_loss_runs
    runs = rank_loss_runs(ROOT / "figures")
    keys = [(run["dataset"], run["seed"]) for run in runs]
    assert sorted(set(keys)) == keys == sorted((run["dataset"], run["seed"])
                                               for run in load_runs(ROOT / "figures"))
    assert all(run.get("settings", {}).get("stopping", "rankloss") == "rankloss" for run in runs)
    assert {"reuters21578", "delicious"} <= {dataset for dataset, _ in keys}
