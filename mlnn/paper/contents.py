"""The paper's numbered sections, equations, figures and tables, with their titles (from the
package data ``data/paper_contents.csv``; facts only), so that a citation such as "Eq. 3" or
"Sec. 3.4" can be checked against what the paper numbers that way."""

import csv
from importlib import resources
from typing import NamedTuple


class Item(NamedTuple):
    """One numbered item: ``kind`` (section, equation, figure, table), its ``number`` as the
    paper prints it, its ``title`` and the ``section`` it appears in ('' for a top section)."""

    kind: str
    number: str
    title: str
    section: str


def paper_contents():
    """``{(kind, number): Item}`` of every numbered section, equation, figure and table."""
    text = resources.files("mlnn").joinpath("data/paper_contents.csv").read_text(encoding="utf-8")
    return {(row["kind"], row["number"]): Item(**row) for row in csv.DictReader(text.splitlines())}
