"""The project's prose, cut into sentences and numbers, for the tests that hold it to its sources
(``test_citations.py``: the paper; ``test_own_numbers.py``: the result files and cell outputs).

Read: the four READMEs and every notebook markdown cell (:func:`markdown_texts`), and the module
docstrings of the package (:func:`docstrings`). A *part* is a README's section (the text under
one heading, named ``file#heading``) or one notebook cell (``notebook.ipynb#index``)."""

import ast
import json
import os
import re
import unicodedata
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
READMES = ("README.md", "notebooks/README.md", "figures/README.md", "figures/stopping/README.md")

#: Where a sentence ends: after . ! ? or : before a capital, at a paragraph break, before a list
#: item, a numbered item, a table row or a heading.
SENTENCE_END = re.compile(r"(?<=[.!?:])\s+(?=[A-Z*(\[`\"])|\n\s*\n|\n\s*(?=[-*|] |\d+\. |#)")

#: A number as the texts print it: 0.0031, 1,000, −0.040, 7. :func:`numbers` drops the ones that
#: are part of a name (Reuters-21578, rcv1subset1, F1, W2, the base of 10⁻³) or of a version.
NUMBER = re.compile(r"[−+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
GLUED = "_/⁰¹²³⁴⁵⁶⁷⁸⁹⁻"

#: Numbers that are not results: a citation of the paper or another work (Sec. 3.4, Eqs. 3–6,
#: Table 5(a), Fig. 2 (b)), a seed, a year beside a name, code and links.
NOT_A_RESULT = re.compile(
    r"\b(?:Sec(?:tions?|s)?\.?|Eqs?\.|Equations?|Figs?\.|Figures?|Tables?|notebooks?|step|"
    r"[Pp]iece|[Ee]xercises?|seeds?|cell|version|Python|NumPy|SciPy|PyTorch \d|OpenBLAS|liblinear|"
    r"Demšar|ECML PKDD|LNCS|pp\.|JMLR|ACML)\s*\(?(?:\d+(?:\.\d+)*(?:\s*(?:,|and|or|–|-|/)\s*)?)+"
    r"|`[^`\n]*`|\[[^\]\n]*\]\([^)\n]*\)|!\[[^\]\n]*\]\([^)\n]*\)|\b(?:19[5-9]\d|20[0-3]\d)\b"
    r"|\bsorted\(|https?://\S+")


#: The LaTeX of the notebooks' formulas as plain text writes it; a command not listed loses its
#: backslash (\tanh: tanh).
SYMBOLS = {
    "delta": "δ", "Delta": "Δ", "eta": "η", "theta": "θ", "lambda": "λ", "sigma": "σ",
    "alpha": "α", "gamma": "γ", "mu": "μ", "rho": "ρ", "chi": "χ", "varepsilon": "ε", "ell": "ℓ",
    "partial": "∂", "nabla": "∇", "sum": "Σ", "prod": "Π", "times": "×", "cdot": "·", "circ": "∘",
    "in": "∈", "le": "≤", "ge": "≥", "ne": "≠", "ll": "≪", "gg": "≫", "approx": "≈", "pm": "±",
    "leftarrow": "←", "mid": "|", "lvert": "|", "rvert": "|", "langle": "⟨", "rangle": "⟩",
    "dots": "…", "top": "ᵀ", "sqrt": "√", "|": "‖", "{": "\x01", "}": "\x02", "#": "#", ",": "",
    " ": " ", "\\": " ", "quad": " ", "qquad": " ", "big": ""}
SUPERSCRIPT = str.maketrans("0123456789()−+ᵀ", "⁰¹²³⁴⁵⁶⁷⁸⁹⁽⁾⁻⁺ᵀ")
ACCENT = {"bar": "\u0304", "hat": "\u0302"}


def _script(match):
    """A sub- or superscript: digits glued on (δ_2: δ2, W^{(1)}: W⁽¹⁾); others kept with ``_``,
    ``^``."""
    mark, body = match.group(1), match.group(2) or match.group(3)
    if mark == "_" and body.isdigit():
        return body
    if mark == "^" and all(c in "0123456789()−+ᵀ" for c in body):
        return body.translate(SUPERSCRIPT)
    return mark + (body if re.fullmatch(r"\w+", body) else "{" + body + "}")


def _formula(match):
    """One formula (``$...$`` or ``$$...$$``) as plain text: symbols, scripts, minus signs."""
    tex = match.group(0).strip("$").replace("{,}", ",")
    tex = re.sub(r"\\(?:begin|end)\{[^{}]*\}", "", tex)
    tex = re.sub(r"\\(?:mathbf|mathrm|mathbb|text|boldsymbol)\{([^{}]*)\}", r"\1", tex)
    tex = re.sub(r"\\(bar|hat)\s*\{?(\w)\}?",
                 lambda m: unicodedata.normalize("NFC", m.group(2) + ACCENT[m.group(1)]), tex)
    tex = re.sub(r"\\t?frac\{([^{}]*)\}\{([^{}]*)\}", r"\1/\2", tex)
    tex = re.sub(r"\\([A-Za-z]+|.)", lambda m: SYMBOLS.get(m.group(1), m.group(1)), tex)
    tex = re.sub(r"([_^])(?:\{([^{}]*)\}|(\w|ᵀ))", _script, tex.replace("-", "−"))
    tex = re.sub(r"√\{(\w+)\}|√\{([^{}]*)\}", lambda m: f"√{m[1]}" if m[1] else f"√({m[2]})", tex)
    return tex.replace("\x01", "{").replace("\x02", "}")


def plain(text):
    """``text`` with its LaTeX formulas written as plain text (:func:`_formula`), so that a
    sentence is the same whether its symbols are typeset or not; the words are left alone."""
    return re.sub(r"\$\$.*?\$\$|\$(?:[^$\n]|\n(?!\s*\n))+?\$", _formula, text, flags=re.S)


def _cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def notebooks():
    return sorted((ROOT / "notebooks").glob("*.ipynb"))


def markdown_texts():
    """(part, text) of every section of the four READMEs and every notebook markdown cell."""
    for rel in READMES:
        heading, lines = "top", []
        for line in (ROOT / rel).read_text(encoding="utf-8").splitlines(keepends=True):
            if line.startswith("#") and not lines[-1:] == ["```bash\n"]:
                if lines:
                    yield f"{rel}#{heading}", "".join(lines)
                heading, lines = line.lstrip("#").strip(), []
            lines.append(line)
        yield f"{rel}#{heading}", "".join(lines)
    for path in notebooks():
        for index, cell in enumerate(_cells(path)):
            if cell["cell_type"] == "markdown":
                yield f"{path.name}#{index}", plain("".join(cell["source"]))


def docstrings():
    """(part, text) of every module docstring of the package."""
    for path in sorted((ROOT / "mlnn").rglob("*.py")):
        text = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)
        if text:
            yield str(path.relative_to(ROOT)), text


def sentences(text):
    """The sentences of ``text``, each with its whitespace collapsed and without ``**``; code
    blocks are left out."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    for piece in SENTENCE_END.split(text):
        sentence = " ".join(piece.replace("**", "").split())
        if sentence:
            yield sentence


def numbers(sentence):
    """(start, text, value, decimals) of every number of ``sentence`` that may be a result:
    not in :data:`NOT_A_RESULT`, not an integer up to 12 (counts, list items, seeds)."""
    masked = NOT_A_RESULT.sub(lambda m: " " * len(m.group(0)), sentence)
    for match in NUMBER.finditer(masked):
        token, before, after = match.group(0), masked[:match.start()], masked[match.end():]
        if re.search(rf"[\w.{GLUED}]$|[A-Za-z]-$", before) or re.match(rf"[\w{GLUED}]|\.\d", after):
            continue
        plain = token.replace(",", "").replace("−", "-").lstrip("+")
        value = float(plain)
        decimals = len(plain.partition(".")[2])
        if decimals == 0 and abs(value) <= 12:
            continue
        yield match.start(), token, value, decimals


def matches(value, decimals, pool):
    """Whether ``value``, printed with ``decimals`` decimals, is some number of ``pool`` (a set
    of floats) rounded so, or a fraction of ``pool`` as a percentage; signs are ignored."""
    target = round(abs(value), decimals)
    return any(round(abs(v), decimals) == target or round(abs(100 * v), decimals) == target
               for v in pool)


def numbers_in(text):
    """Every number written in ``text`` (a source: JSON, CSV, cell output, LaTeX, code)."""
    found = set()
    for token in re.findall(r"[-−]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?", text):
        plain = token.replace("−", "-")
        for candidate in (plain.replace(",", ""), *plain.split(",")):
            try:
                found.add(float(candidate))
            except ValueError:
                pass
    return found


#: Where a number is attributed to the paper: after one of these, up to the end of the clause.
ATTRIBUTION = re.compile(r"\bpaper(?:'s)?(?: Table [123](?: as printed)?)?(?: value of)?|"
                         r"\b(?:its |the paper's )?Table [123](?: as printed)?:?|Nam et al\.")
CLAUSE_END = re.compile(r"[);]|\b(?:against|ours?|we|vs\.?|here|while|but|and ours)\b|—|\. ")


def attributed(sentence):
    """(text, value, decimals) of every number ``sentence`` attributes to the paper."""
    spans = []
    for match in ATTRIBUTION.finditer(sentence):
        end = CLAUSE_END.search(sentence, match.end())
        spans.append((match.end(), end.start() if end else len(sentence)))
    return [(text, value, decimals) for start, text, value, decimals in numbers(sentence)
            if any(a <= start < b for a, b in spans)]


def paper_tex_path():
    return os.environ.get("MLNN_PAPER_TEX")


@lru_cache(maxsize=None)
def paper_text():
    """The paper's LaTeX source (``MLNN_PAPER_TEX``) with its whitespace collapsed, or None."""
    path = paper_tex_path()
    return " ".join(Path(path).read_text(encoding="utf-8").split()) if path else None


@lru_cache(maxsize=None)
def paper_numbers():
    """Every number of the paper's LaTeX and of its table CSVs beside it (or None)."""
    path = paper_tex_path()
    if not path:
        return None
    texts = [Path(path).read_text(encoding="utf-8")]
    texts += [p.read_text(encoding="utf-8") for p in sorted(Path(path).parent.glob("*.csv"))]
    return frozenset(numbers_in("\n".join(texts)))


def load(name):
    return json.loads((DATA / name).read_text(encoding="utf-8"))
