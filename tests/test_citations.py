"""Every "Sec. N" and "Eq. N" the project cites names a section or equation the paper has
(the package data ``data/paper_contents.csv``; every "Fig. N" and "Table N" one of its figures
and tables), and the one meant: a citation next to a concept must be one of the places the
paper puts that concept (a citation beside "PWE" is Eq. 3 / Sec. 3.2, beside "CE"
Eq. 6 / Sec. 3.4, and so on). Read: the notebooks' cell sources, the READMEs and every module
of the package (docstrings and comments)."""

import csv
import json
import re
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]


class Item(NamedTuple):
    """One numbered item of the paper: ``kind`` (section, equation, figure, table), its
    ``number`` as the paper prints it, its ``title`` and the ``section`` it appears in ('' for a
    top section)."""

    kind: str
    number: str
    title: str
    section: str


def paper_contents():
    """``{(kind, number): Item}`` of every numbered section, equation, figure and table."""
    text = resources.files("mlnn").joinpath("data/paper_contents.csv").read_text(encoding="utf-8")
    return {(row["kind"], row["number"]): Item(**row) for row in csv.DictReader(text.splitlines())}

_NUMBER = r"\d+(?:\.\d+)*"
_LIST = rf"((?:\s*(?:,|and|or|–|-|/)\s*{_NUMBER})*)"
CITATION = re.compile(rf"\b(?P<kind>Sec(?:tions?|s)?\.?|Eqs?\.|Equations?|Figs?\.|Figures?|"
                      rf"Tables?)\s*\(?"
                      rf"(?P<first>{_NUMBER})(?P<rest>{_LIST[1:-1]})")

#: Works other than the paper whose sections a text may cite: a citation with one of these
#: names before it, in the same parenthesis, is not the paper's.
OTHER_WORKS = re.compile(r"\b(?:Demšar|Zhang|Zhou|Duchi|Srivastava|Hinton|Glorot|Nair|"
                         r"Elisseeff|Joachims|Schapire|Dembczyński|Tsoumakas|CS231n|Nielsen|"
                         r"Goodfellow|Bishop|PEP|RFC)\b[^)]{0,100}$")

#: Where the paper puts each concept: (pattern, equations, sections). The first concepts are the
#: more specific ones; the concept named nearest to a citation decides what it may cite.
CONCEPTS = [
    (r"PWE[^.()|]{0,30}(?:δ|error term|gradient)|(?:δ2|δ₂|error term|gradient)[^.()|]{0,20}"
     r"(?:of|for) (?:the )?PWE|plateau|landscape|[Ll] times", {"10"}, {"3.4"}),
    (r"footnote|(?:tanh|sigmoid) for (?:PWE|CE)", set(), {"5"}),
    (r"\bPWE\b|pairwise (?:exponential )?error", {"3"}, {"3.2"}),
    (r"\bCE\b|cross[- ]entropy", {"6", "7", "8", "9"}, {"3.4"}),
    (r"threshold", {"5"}, {"3.3"}),
    (r"rank loss\b(?! rule)", {"1"}, {"3.1", "4", "5"}),
    (r"AdaGrad|[Dd]ropout|ReLU|momentum", set(), {"3.5", "5"}),
    (r"z1 = X ?W1|forward|backward|\bf_h\b|hidden units?\b", {"2"}, {"3", "3.2", "3.5", "4"}),
    (r"tf-idf|stop[- ]?words|stemming|Table 1|1,?000 hidden units|\bη0 (?:from|in|∈)|"
     r"C (?:from|in|∈) |measures\b|one-error|coverage|binary relevance|\bBR", set(), {"4", "5"}),
]


#: What separates a concept from a citation that is not about it: a closing parenthesis, a
#: semicolon, a paragraph break, a new table row (Markdown or reStructuredText).
BARRIER = re.compile(r"[);]|\n\s*(?:\n|\||``)")


def _texts():
    """(name, text) of every notebook cell source, README and module."""
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            yield f"{path.name} cell {index}", "".join(cell["source"])
    readmes = [ROOT / "README.md", *sorted((ROOT / "notebooks").glob("**/README.md")),
               *sorted((ROOT / "figures").glob("**/README.md"))]
    for path in readmes + sorted((ROOT / "notebooks" / "solutions").glob("*.py")) + \
            sorted((ROOT / "mlnn").rglob("*.py")):
        yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")


KINDS = {"Sec": "section", "Eq.": "equation", "Eqs": "equation", "Equ": "equation",
         "Fig": "figure", "Tab": "table"}


def citations(text):
    """(kind "equation"/"section", number, start, end) of every citation of the paper in
    ``text``; a list ("Sec. 3.2 and 3.4", "Eqs. 3–6") gives one per number named."""
    for match in CITATION.finditer(text):
        if OTHER_WORKS.search(text[max(0, match.start() - 120):match.start()]):
            continue
        kind = KINDS[match["kind"][:3]]
        for number in [match["first"], *re.findall(_NUMBER, match["rest"])]:
            yield kind, number, match.start(), match.end()


def meant(text, start, end, kind, window=50):
    """The places the concept named nearest to a citation lets it cite: (concept, allowed
    numbers), or None if none is near. Near: within ``window`` characters, with no
    :data:`BARRIER` between the two."""
    best = None
    for pattern, equations, sections in CONCEPTS:
        allowed = equations if kind == "equation" else sections
        if not allowed:
            continue
        offset = max(0, start - 2 * window)
        for found in re.finditer(pattern, text[offset:end + 2 * window]):
            left, right = found.start() + offset, found.end() + offset
            between = text[right:start] if right <= start else text[end:left]
            distance = start - right if right <= start else max(0, left - end)
            if distance > window or BARRIER.search(between):
                continue
            if best is None or distance < best[0]:
                best = (distance, found.group(0), allowed)
    return None if best is None else best[1:]


def problems(name, text, contents):
    """Every citation in ``text`` that names nothing in the paper or not the place meant."""
    found = []
    for kind, number, start, end in citations(text):
        line = text.count("\n", 0, start) + 1
        quoted = text[start:end]
        if (kind, number) not in contents:
            found.append(f"{name}:{line}: {quoted!r}: the paper has no {kind} {number}")
            continue
        near = meant(text, start, end, kind) if kind in ("equation", "section") else None
        if near is not None and number not in near[1]:
            found.append(f"{name}:{line}: {quoted!r} beside {near[0]!r}: the paper puts it in "
                         f"{kind} {' or '.join(sorted(near[1]))}")
    return found


def test_the_contents_table_lists_the_papers_numbering():
    contents = paper_contents()
    assert [n for k, n in contents if k == "equation"] == [str(i) for i in range(1, 11)]
    assert {n for k, n in contents if k == "section"} == \
        {"1", "2", "2.1", "3", "3.1", "3.2", "3.3", "3.4", "3.5", "4", "5", "6"}
    assert all(contents["section", item.section] for item in contents.values() if item.section)
    assert contents["equation", "3"].section == "3.2" and contents["equation", "6"].section == "3.4"


@pytest.mark.parametrize("text, expected", [
    ("PWE (Eq. 3, Sec. 3.2) and CE (Eq. 6, Sec. 3.4)", []),
    ("PWE (Eq. 6) and CE (Eq. 3)", ["'Eq. 6' beside 'PWE'", "'Eq. 3' beside 'CE'"]),
    ("the glossary: PWE, Sec. 3.4; CE, Sec. 3.2", ["'Sec. 3.4' beside 'PWE'",
                                                   "'Sec. 3.2' beside 'CE'"]),
    ("thresholds (Eq. 5) are fitted as in Sec. 4.1", ["the paper has no section 4.1"]),
    ("Sec. 3.1–3.2 and Eqs. 2 and 11", ["the paper has no equation 11"]),
    ("Figs. 3–5 and Table 2", ["the paper has no figure 5"]),
    ("δ2 of PWE (Eq. 3)", ["'Eq. 3' beside 'δ2 of PWE'"]),
    ("Demšar (2006, Sec. 3.2.4), and tanh in Sec. 5", []),
    ("relu: hidden units (Sec. 3.1)", ["'Sec. 3.1' beside 'hidden units'"]),
])
def test_the_check_finds_a_wrong_or_missing_citation(text, expected):
    found = problems("text", text, paper_contents())
    assert len(found) == len(expected) and all(e in f for e, f in zip(expected, found)), found


def test_every_citation_of_the_paper_names_what_it_means():
    contents = paper_contents()
    found = [p for name, text in _texts() for p in problems(name, text, contents)]
    assert not found, f"{len(found)} citations to fix:\n" + "\n".join(found)
