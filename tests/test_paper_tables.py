"""The paper's Table 2 recomputed from its Table 3 (package copies of both, mlnn/data/):
Table 2 averages over the five datasets on which all eight methods ran; its NN and BR rows
follow from Table 3 as printed, its four BP-MLL rows only once Table 3's Reuters-21578 block
swaps BP-MLL_TA with BP-MLL_RA and BP-MLL_TAD with BP-MLL_RAD."""

import itertools

import numpy as np
import pytest

from mlnn.evaluation.metrics import LOWER_IS_BETTER, MEASURES
from mlnn.paper.methods import PAPER_METHODS
from mlnn.paper.ranks import paper_table2, rank_table
from mlnn.paper.reproduce import paper_table3

BPMLL = ("BP-MLL_TA", "BP-MLL_TAD", "BP-MLL_RA", "BP-MLL_RAD")
SWAP = {"BP-MLL_TA": "BP-MLL_RA", "BP-MLL_RA": "BP-MLL_TA",
        "BP-MLL_TAD": "BP-MLL_RAD", "BP-MLL_RAD": "BP-MLL_TAD"}


def complete_datasets(table3):
    return [d for d in dict.fromkeys(d for d, _ in table3)
            if all((d, m) in table3 for m in PAPER_METHODS)]


def recomputed_table2(table3):
    """Average ranks (methods × measures) over the datasets of ``table3`` with all eight."""
    values = np.array([[[table3[d, m][x] for x in MEASURES] for m in PAPER_METHODS]
                       for d in complete_datasets(table3)])
    return rank_table(values, [m in LOWER_IS_BETTER for m in MEASURES])[0]


def relabelled(table3, dataset, mapping):
    """``table3`` with the rows of ``dataset`` moved: row m gets the printed row mapping[m]."""
    return {**table3, **{(dataset, m): table3[dataset, other] for m, other in mapping.items()}}


@pytest.fixture(scope="module")
def printed():
    table2 = paper_table2()
    return np.array([[table2[m][x] for x in MEASURES] for m in PAPER_METHODS])


def test_table2_averages_over_the_five_datasets_with_bpmll_results():
    datasets = complete_datasets(paper_table3())
    assert len(datasets) == 5 and "EUR-Lex" not in datasets
    assert {d for d, _ in paper_table3()} == set(datasets) | {"EUR-Lex"}


def test_table3_as_printed_gives_table2s_nn_and_br_rows_not_its_bpmll_rows(printed):
    gap = dict(zip(PAPER_METHODS, np.abs(recomputed_table2(paper_table3()) - printed).max(1)))
    assert all(gap[m] < 1e-9 for m in ("NN_A", "NN_AD", "BR_B", "BR_R"))
    assert all(gap[m] > 0.85 for m in BPMLL), gap


def test_table3_with_the_reuters_bpmll_rows_swapped_gives_all_of_table2(printed):
    swapped = relabelled(paper_table3(), "Reuters-21578", SWAP)
    np.testing.assert_allclose(recomputed_table2(swapped), printed, atol=1e-9)


def test_no_other_relabelling_of_the_bpmll_rows_of_one_dataset_comes_close(printed):
    table3 = paper_table3()
    gaps = {}
    for dataset in complete_datasets(table3):
        for order in itertools.permutations(BPMLL):
            mapping = dict(zip(BPMLL, order))
            if mapping == dict(zip(BPMLL, BPMLL)) or \
                    (dataset == "Reuters-21578" and mapping == SWAP):
                continue
            recomputed = recomputed_table2(relabelled(table3, dataset, mapping))
            gaps[dataset, order] = np.abs(recomputed - printed).max()
    assert len(gaps) == 5 * 23 - 1 and min(gaps.values()) > 0.35
