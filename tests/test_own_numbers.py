"""Every number the texts give for the project's own results comes from a file or a cell, and
still says what it says there: the main README, ``figures/README.md``,
``figures/stopping/README.md`` and every notebook markdown cell.

``tests/data/number_sources.json`` ties every number of these texts that is a result
(:func:`tests.texts.numbers`; the numbers attributed to the paper are ``test_citations.py``'s),
as printed, part by part (a README section, a notebook cell: :func:`tests.texts.markdown_texts`),
to its source (:func:`source_text`): a result file under ``figures/`` or a key or rows of one, the
code and outputs of notebook cells, a module, a table another test holds to its files
(``text:PART``) or the paper (``paper``), or a list of them where one number stands for two
results of a part. The source must still hold the number, rounded to the
digits the text prints; a number measured or derived where no file keeps it is tied to
``none: <why>``. A figure that goes stale fails: a changed number is no longer tied, and a
changed file no longer holds the number tied to it. So does a new number, or a new part."""

import json
from functools import lru_cache

import pytest

from tests import texts

SCOPE = ("README.md#", "figures/README.md#", "figures/stopping/README.md#", ".ipynb#")


def registry():
    return texts.load("number_sources.json")


def _select(tree, path):
    """The part of a JSON ``tree`` at a dotted ``path`` (``*``: every key), without the
    per-epoch ``curves`` unless the path goes into them; None if there is none."""
    if not path:
        return {k: _select(v, "") for k, v in tree.items() if k != "curves"} \
            if isinstance(tree, dict) else tree
    key, _, rest = path.partition(".")
    if isinstance(tree, list):
        tree = {str(index): value for index, value in enumerate(tree)}
    if not isinstance(tree, dict) or (key != "*" and key not in tree):
        return None
    if key == "*":
        return [_select(value, rest) for value in tree.values()]
    return tree[key] if key == "curves" and not rest else _select(tree[key], rest)


@lru_cache(maxsize=None)
def source_text(source):
    """The text whose numbers ``source`` stands for: ``FILE`` (a JSON file without its
    ``curves``), ``FILE.json:a.b.*.c`` (a part of it), ``FILE.csv:column=value`` (its rows with
    that value), ``notebook:NAME`` or ``notebook:NAME#i,j`` (the code and outputs of a notebook
    or of those cells), ``text:PART`` (another part of the texts), ``calc:A:key / B:key`` (the
    quotient of two numbers of JSON files, a part with several standing for their sum; or the
    sum of the two, with +), ``ms:SOURCE`` (seconds in ms)."""
    kind, _, name = source.partition(":")
    if kind == "notebook":
        name, _, chosen = name.partition("#")
        cells = json.loads((texts.ROOT / "notebooks" / name).read_text(encoding="utf-8"))["cells"]
        keep = {int(i) for i in chosen.split(",")} if chosen else range(len(cells))
        return "\n".join("".join(cell["source"]) + "".join(
            "".join(output.get("text", "")) + "".join(
                "".join(value) for kind, value in output.get("data", {}).items()
                if kind.startswith("text/"))
            for output in cell.get("outputs", [])) for index, cell in enumerate(cells)
            if cell["cell_type"] == "code" and index in keep)
    if kind == "text":
        return dict(texts.markdown_texts())[name]
    if kind == "ms":                    # ms:SOURCE, its seconds in milliseconds
        return " ".join(repr(1000 * value) for value in texts.numbers_in(source_text(name)))
    if kind == "calc":                  # calc:A.json:key / B.json:key (or +): one number
        operator = " / " if " / " in name else " + "
        a, b = (sum(texts.numbers_in(source_text(side))) for side in name.split(operator))
        return repr(a / b if operator == " / " else a + b)
    if source == "paper":
        return None
    path, _, selector = source.partition(":")
    text = (texts.ROOT / path).read_text(encoding="utf-8")
    if path.endswith(".json"):
        return json.dumps(_select(json.loads(text), selector))
    if path.endswith(".csv") and selector:
        column, _, value = selector.partition("=")
        return "\n".join(row for row in text.splitlines()
                         if row.split(",")[text.splitlines()[0].split(",").index(column)] == value)
    return text


@lru_cache(maxsize=None)
def rounded(source, decimals):
    """The numbers of ``source`` (and their percentages) rounded to ``decimals``, unsigned; a
    value half-way between two roundings (0.4725 as printed) gives both."""
    pool = texts.paper_numbers() if source == "paper" else texts.numbers_in(source_text(source))
    return frozenset(round(abs(v) * scale + nudge, decimals) for v in pool or ()
                     for scale in (1, 100) for nudge in (-1e-9, 0, 1e-9))


def result_numbers(text):
    """(sentence, text, value, decimals) of every result number of a part's text: not one the
    sentence attributes to the paper."""
    for sentence in texts.sentences(text):
        theirs = {token for token, _, _ in texts.attributed(sentence)}
        for _, token, value, decimals in texts.numbers(sentence):
            if token not in theirs:
                yield sentence, token, value, decimals


def untied(part, text, entry):
    """The result numbers of a part that no source holds: untied, or tied to a source that does
    not hold them (any more)."""
    if "held_by" in entry:
        held_by = entry["held_by"]
        return [] if (texts.ROOT / held_by).exists() else [f"{part}: no {held_by}"]
    ties, wrong = entry.get("numbers", {}), []
    for sentence, token, value, decimals in result_numbers(text):
        sources = ties.get(token)
        sources = [sources] if isinstance(sources, str) else sources or []
        if not sources:
            wrong.append(f"{part}: {token!r} is tied to no source, in {sentence[:140]!r}")
        elif any(source.startswith("none:") for source in sources):
            continue
        elif "paper" in sources and texts.paper_numbers() is None:
            pytest.skip("set MLNN_PAPER_TEX to the paper's LaTeX source to check these numbers")
        elif not any(round(abs(value), decimals) in rounded(source, decimals)
                     for source in sources):
            wrong.append(f"{part}: {token!r} is not in {' or '.join(sources)}, in "
                         f"{sentence[:140]!r}")
    return wrong


def parts():
    return [(part, text) for part, text in texts.markdown_texts()
            if any(marker in part for marker in SCOPE) and not part.startswith("notebooks/README")]


def test_a_stale_figure_fails():
    """The README's performance line as it once was: 1.30 s against 2.61 s, where the file says
    0.98 s against 2.14 s."""
    source = "figures/bench_reuters21578.json"
    entry = {"numbers": {"1.30": source, "0.98": source, "0.28": source}}
    stale = "On Reuters-21578 an NN_AD epoch takes 1.30 s; the floor is 0.28 s."
    assert [p.split("'")[1] for p in untied("test", stale, entry)] == ["1.30"]
    assert not untied("test", stale.replace("1.30", "0.98"), entry)
    assert untied("test", stale.replace("0.28", "0.29"), entry)     # a number tied to nothing


def test_every_number_of_the_texts_is_held_to_its_source():
    entries = registry()
    wrong = []
    for part, text in parts():
        if part not in entries:
            if any(True for _ in result_numbers(text)):
                wrong.append(f"{part}: not in tests/data/number_sources.json")
            continue
        wrong += untied(part, text, entries[part])
    assert not wrong, (f"{len(wrong)} numbers no source of their part holds (correct the text, "
                       "or tie the number to its file or cell):\n" + "\n".join(wrong))


def test_every_source_and_part_of_the_registry_exists():
    known = {part for part, _ in parts()}
    entries = registry()
    assert not set(entries) - known, f"parts no text has any more: {sorted(set(entries) - known)}"
    for entry in entries.values():
        for sources in entry.get("numbers", {}).values():
            for source in [sources] if isinstance(sources, str) else sources:
                assert source == "paper" or source.startswith("none: ") or source_text(source), \
                    source
