"""Every "Sec. N" and "Eq. N" the project cites names a section or equation the paper has (the
package data ``data/paper_contents.csv``; every "Fig. N" and "Table N" one of its figures and
tables), and the one meant: a citation next to a concept must be one of the places the paper
puts that concept (a citation beside "PWE" is Eq. 3 / Sec. 3.2, beside "CE" Eq. 6 / Sec. 3.4, and
so on). Read: the notebooks' cell sources, the READMEs and every module of the package
(docstrings and comments).

Every sentence that names the paper (the paper, Nam et al., or a section, equation, figure or table
of it) in the READMEs, the notebooks' markdown and the module docstrings, whatever its wording, is
a claim of ``tests/data/paper_claims.json``: the sentence, and the passages of the paper's LaTeX
source (or rows of its table CSVs) it rests on; a sentence saying what the paper does not say rests
on a pattern its LaTeX source must not match (``absent: REGEX``). A new or reworded sentence fails
until it is listed with its passages; with ``MLNN_PAPER_TEX`` naming the LaTeX file, every passage
is checked to be in it, and every number a sentence attributes to the paper (the numbers after
"paper", "the paper's", "Table 3" up to the end of the clause) to be in its passages."""

import csv
import json
import os
import re
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import pytest

from tests import texts

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
    """(name, text) of every notebook cell source (a markdown cell's formulas as plain text:
    :func:`tests.texts.plain`), README and module."""
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            source = "".join(cell["source"])
            yield f"{path.name} cell {index}", \
                texts.plain(source) if cell["cell_type"] == "markdown" else source
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


def names_the_paper(sentence):
    """Whether ``sentence`` names the paper, or one of its sections, equations, figures, tables."""
    return bool(PAPER.search(sentence)) or any(True for _ in citations(sentence))


#: The paper by name (not "paper" in "a paper trail": the word with "the", "its", "our").
PAPER = re.compile(r"\b(?:the|this|its|whose|a) paper(?:'s)?\b|\bpaper(?:'s)? \d|\(paper\b|"
                   r"\bpapers?'|Nam et al\b|\bthe paper\b", re.IGNORECASE)

def prose():
    """(part, sentence) of every sentence of the READMEs, notebook markdown and docstrings."""
    for part, text in [*texts.markdown_texts(), *texts.docstrings()]:
        for sentence in texts.sentences(text):
            yield part, sentence


def claims():
    """``{sentence: claim}`` of ``tests/data/paper_claims.json``."""
    return {claim["sentence"]: claim for claim in texts.load("paper_claims.json")}


def quoted_numbers(claim):
    """Every number of the passages a claim quotes."""
    return texts.numbers_in(" ".join(claim["source"]))


@pytest.mark.parametrize("sentence, names", [
    ("The paper chooses η0 on validation data.", True),
    ("Eq. 5 has no constant.", True),
    ("Its Table 1 counts 10,789 documents.", True),
    ("Demšar (2006, Table 5) gives q_α.", False),
    ("A label is predicted iff o > T(x).", False),
])
def test_the_check_finds_every_sentence_naming_the_paper(sentence, names):
    assert names_the_paper(sentence) == names


@pytest.mark.parametrize("sentence, expected", [
    ("NN_AD's rank loss is 0.0031 (paper 0.0031) and 0.0842 on Delicious (paper 0.0836).",
     ["0.0031", "0.0836"]),
    ("macro-F1 0.462 ± 0.002 over 3 seeds (paper 0.496); trained longer, 0.538.", ["0.496"]),
    ("our 1.235 labels per document against the paper's Table 1 value of 1.13", ["1.13"]),
    ("the paper's 0.182 against our 0.171", ["0.182"]),
])
def test_the_check_finds_the_numbers_attributed_to_the_paper(sentence, expected):
    assert [text for text, _, _ in texts.attributed(sentence)] == expected


def test_every_sentence_naming_the_paper_is_a_listed_claim():
    listed = claims()
    missing = {sentence: part for part, sentence in prose()
               if names_the_paper(sentence) and sentence not in listed}
    stubs = [{"part": part, "sentence": sentence, "source": ["<the LaTeX it rests on>"]}
             for sentence, part in missing.items()]
    assert not missing, (f"{len(missing)} sentences name the paper but are not claims of "
                         "tests/data/paper_claims.json (add each with the passages of the "
                         "paper it rests on):\n" + json.dumps(stubs, indent=1, ensure_ascii=False))


def test_every_claim_is_made_somewhere():
    made = {sentence for _, sentence in prose()}
    unused = [sentence for sentence in claims() if sentence not in made]
    assert not unused, "claims no text makes any more (remove them):\n" + "\n".join(unused)


def _paper_or_skip():
    if texts.paper_text() is None:
        message = "set MLNN_PAPER_TEX to the paper's LaTeX source (nam2014.tex) to check"
        if os.environ.get("MLNN_REQUIRE_DATA") == "1":       # CI: the paper is there
            pytest.fail(message)
        pytest.skip(message)


def _in_the_paper(passage):
    """Whether ``passage`` is in the LaTeX source, or, as ``file.csv: text``, in that table; an
    ``absent: REGEX`` passage, the ground of "the paper does not say ...", must match nowhere
    in the LaTeX source (case-insensitive)."""
    if passage.startswith("absent: "):
        return re.search(passage[len("absent: "):], texts.paper_text(), re.IGNORECASE) is None
    name, _, row = passage.partition(".csv: ")
    if row:
        path = Path(texts.paper_tex_path()).parent / f"{name}.csv"
        return path.exists() and row in path.read_text(encoding="utf-8")
    return " ".join(passage.split()) in texts.paper_text()


def test_every_claim_rests_on_passages_of_the_paper():
    _paper_or_skip()
    wrong = [(claim["sentence"][:80], passage) for claim in claims().values()
             for passage in claim["source"] or ["(none)"] if not _in_the_paper(passage)]
    assert not wrong, f"passages not in {texts.paper_tex_path()} or its tables: {wrong}"


def test_every_number_attributed_to_the_paper_is_in_its_passages():
    listed = claims()
    wrong = []
    for part, sentence in prose():
        claim = listed.get(sentence)
        if claim is None:
            continue
        pool = quoted_numbers(claim)
        wrong += [f"{part}: {text!r} in {sentence[:120]!r}" for text, value, decimals
                  in texts.attributed(sentence)
                  if text not in claim.get("unquoted", {})
                  and not texts.matches(value, decimals, pool)]
    assert not wrong, ("numbers attributed to the paper that the passages quoted for their "
                       "sentence do not hold:\n" + "\n".join(wrong))
