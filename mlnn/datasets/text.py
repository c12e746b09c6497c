"""Text to tf-idf features: tokeniser, stop words, the Porter stemmer, tf-idf, L2 norm.

The paper (Sec. 4) represents the documents of every dataset but Delicious and Bookmarks as tf-idf
vectors of unit length. Tokenisation, stop words and stemming for Reuters-21578 are our choice,
each step written out to be read and changed: :func:`tokenize`, :data:`STOP_WORDS`,
:func:`porter_stem` (M. F. Porter, "An algorithm for suffix stripping", 1980, steps 1a-5b) and
:class:`TfidfVectorizer` (``idf_j = log(N / df_j)`` from the training documents only).
:func:`decode` reads UTF-8, else Latin-1, and refuses UTF-16, UTF-32 and binary files.
"""

import codecs
import functools
import re
import warnings
from collections import Counter

import numpy as np
import scipy.sparse as sp

from mlnn.base.errors import DataFormatError, MLNNError, MLNNWarning
from mlnn.base.validation import check_fitted

#: Byte-order marks of the encodings :func:`decode` refuses, longest first.
_WIDE_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
              (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))

#: English function words removed before stemming.
STOP_WORDS = frozenset("""
a about above across after afterwards again against all almost alone along already also
although always am among amongst an and another any anybody anyhow anyone anything anyway
anywhere are around as at be became because become becomes becoming been before beforehand
behind being below beside besides between beyond both but by can cannot could did do does
doing done down during each either else elsewhere enough etc even ever every everybody
everyone everything everywhere except few for former formerly from further had has have
having he hence her here hereafter hereby herein hereupon hers herself him himself his how
however i ie if in indeed instead into is it its itself just last latter latterly least less
many may me meanwhile might mine more moreover most mostly much must my myself namely neither
never nevertheless next no nobody none noone nor not nothing now nowhere of off often on once
one only onto or other others otherwise our ours ourselves out over own per perhaps rather
same seem seemed seeming seems several she should since so some somebody somehow someone
something sometime sometimes somewhere still such than that the their theirs them themselves
then thence there thereafter thereby therefore therein thereupon these they this those though
through throughout thru thus to together too toward towards under until up upon us very via
was we well were what whatever when whence whenever where whereafter whereas whereby wherein
whereupon wherever whether which while whither who whoever whole whom whose why will with
within without would yet you your yours yourself yourselves s t don didn doesn isn wasn weren
won wouldn shouldn couldn aren hasn haven hadn ll ve re d m o y
""".split())

DEFAULT_TOKEN_PATTERN = r"[a-z][a-z]+"

#: The fixed steps of :func:`analyze`, named in a saved vectorizer's state: a vectorizer saved by
#: a version whose steps differ is refused rather than silently giving other features.
ANALYZER = "lowercase; inner apostrophes dropped; token_pattern; stop words; Porter 1980 stem"


def decode(raw, source):
    """The text of the bytes ``raw`` read from ``source`` (named in messages): UTF-8 (a byte-order
    mark dropped), else Latin-1."""
    check_text_bytes(raw, source)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.removeprefix(codecs.BOM_UTF8).decode("latin-1")


def check_text_bytes(raw, source):
    """Raise :class:`~mlnn.base.errors.DataFormatError` if the bytes ``raw`` of ``source`` are
    UTF-16 or UTF-32 text or hold a zero byte (a binary file)."""
    encoding = _wide_encoding(raw)
    if encoding is not None:
        raise DataFormatError(f"{source}: the file is encoded as {encoding}; mlnn reads UTF-8 "
                              f"text (convert it, e.g. iconv -f {encoding} -t UTF-8)")
    if b"\x00" in raw:
        line = raw.count(b"\n", 0, raw.index(b"\x00")) + 1
        raise DataFormatError(f"{source}:{line}: a zero byte: this is a binary file, not text")


def _wide_encoding(raw):
    """"UTF-16" or "UTF-32" if ``raw`` starts with their byte-order mark or looks like ASCII
    text in them (every other / every fourth byte zero at the start), else None."""
    for bom, name in _WIDE_BOMS:
        if raw.startswith(bom):
            return name
    head = raw[:400]
    if len(head) >= 8 and head.count(b"\x00") * 4 >= len(head) * 3:
        return "UTF-32"
    if len(head) >= 4 and head.count(b"\x00") * 2 >= len(head) - 1 and \
            (head[0::2].count(0) == 0 or head[1::2].count(0) == 0):
        return "UTF-16"
    return None


def tokenize(text, token_pattern=DEFAULT_TOKEN_PATTERN):
    """The matches of ``token_pattern`` in the lower-cased ``text``, inner apostrophes dropped
    first (``company's`` -> ``companys``, not a stray ``s``)."""
    text = re.sub(r"(?<=[a-z])'(?=[a-z])", "", text.lower())
    return re.findall(token_pattern, text)


# --- The Porter stemmer (Porter 1980) -----------------------------------------------------

def _pattern(word):
    """Porter's consonants "c" and vowels "v" of ``word`` (y after a consonant is a vowel)."""
    pattern = ""
    for letter in word:
        vowel = letter in "aeiou" or (letter == "y" and pattern.endswith("c"))
        pattern += "v" if vowel else "c"
    return pattern


def _measure(stem):
    """m in [C](VC)^m[V]: the number of vowel-consonant sequences."""
    return len(re.findall("v+c+", _pattern(stem)))


def _has_vowel(stem):
    return "v" in _pattern(stem)


def _ends_double_consonant(word):
    return len(word) >= 2 and word[-1] == word[-2] and _pattern(word).endswith("c")


def _ends_cvc(word):
    """*o: the stem ends consonant-vowel-consonant, the last not w, x or y."""
    return _pattern(word).endswith("cvc") and word[-1] not in "wxy"


def _replace_longest(word, rules, m=0):
    """Apply the rule with the longest matching suffix if m(stem) > ``m`` (-ion only after s or
    t); a longest suffix whose stem fails leaves ``word`` as it is."""
    for suffix, replacement in rules:
        if word.endswith(suffix):
            stem = word[:len(word) - len(suffix)]
            ok = _measure(stem) > m and (suffix != "ion" or stem.endswith(("s", "t")))
            return stem + replacement if ok else word
    return word


def _longest_first(rules):
    return sorted(rules, key=lambda rule: -len(rule[0]))


_STEP2 = _longest_first([
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
    ("izer", "ize"), ("abli", "able"), ("alli", "al"), ("entli", "ent"), ("eli", "e"),
    ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"),
    ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"),
    ("iviti", "ive"), ("biliti", "ble")])
_STEP3 = _longest_first([("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"),
                         ("ical", "ic"), ("ful", ""), ("ness", "")])
_STEP4 = _longest_first([(suffix, "") for suffix in (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou",
    "ism", "ate", "iti", "ous", "ive", "ize")])


@functools.lru_cache(maxsize=None)
def porter_stem(word):
    """The Porter (1980) stem of a lower-case ``word``; words of <= 2 letters are unchanged."""
    if len(word) <= 2:
        return word
    # Step 1a: plurals.
    if word.endswith(("sses", "ies")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    # Step 1b: -eed, -ed, -ing.
    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    else:
        stem = re.sub("(ed|ing)$", "", word)
        if stem != word and _has_vowel(stem):
            word = stem
            if word.endswith(("at", "bl", "iz")):
                word += "e"
            elif _ends_double_consonant(word) and word[-1] not in "lsz":
                word = word[:-1]
            elif _measure(word) == 1 and _ends_cvc(word):
                word += "e"
    # Step 1c: y -> i when the stem has a vowel.
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    # Steps 2 and 3: double and single suffixes, m > 0; step 4: m > 1, -ion only after s or t.
    word = _replace_longest(_replace_longest(word, _STEP2), _STEP3)
    word = _replace_longest(word, _STEP4, m=1)
    # Step 5a: final -e.
    if word.endswith("e"):
        stem = word[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _ends_cvc(stem)):
            word = stem
    # Step 5b: -ll -> -l when m > 1.
    if _measure(word) > 1 and _ends_double_consonant(word) and word.endswith("l"):
        word = word[:-1]
    return word


def analyze(text, token_pattern=DEFAULT_TOKEN_PATTERN, stop_words=STOP_WORDS, stem=True):
    """Tokenise, drop stop words, and optionally stem: ``text`` -> list of terms."""
    tokens = [t for t in tokenize(text, token_pattern) if t not in stop_words]
    return [porter_stem(t) for t in tokens] if stem else tokens


class TfidfVectorizer:
    """tf-idf features of the terms of :func:`analyze` found in at least ``min_df`` training
    documents; ``tf = 1 + log(count)`` if ``sublinear_tf``; rows of unit length if ``norm``.
    After :meth:`fit`: ``vocabulary_`` (sorted terms) and ``idf_`` (D values ``log(N / df)``)."""

    def __init__(self, stem=True, stop_words=STOP_WORDS, token_pattern=DEFAULT_TOKEN_PATTERN,
                 min_df=1, sublinear_tf=False, norm=True):
        if int(min_df) < 1:
            raise MLNNError(f"min_df must be >= 1, got {min_df!r}")
        self.stem, self.token_pattern, self.sublinear_tf, self.norm = \
            stem, token_pattern, sublinear_tf, norm
        self.stop_words, self.min_df = frozenset(stop_words or ()), int(min_df)

    def _analyze(self, documents):
        return [analyze(doc, self.token_pattern, self.stop_words, self.stem) for doc in documents]

    def fit(self, documents):
        """Learn vocabulary and idf from the training ``documents`` (list of str)."""
        self.fit_transform(documents)
        return self

    def fit_transform(self, documents):
        terms = self._analyze(documents)
        df = Counter(term for doc in terms for term in set(doc))     # documents per term
        vocabulary = sorted(term for term, count in df.items() if count >= self.min_df)
        counts = np.array([df[term] for term in vocabulary], dtype=np.float64)
        self.set_vocabulary(vocabulary, np.log(len(terms) / counts))
        return self._tfidf(terms)

    def set_vocabulary(self, vocabulary, idf):
        """This vectorizer, fitted with the D terms ``vocabulary`` and their ``idf`` (how a model
        file or the dataset cache restores it)."""
        vocabulary = [str(term) for term in vocabulary]
        idf = np.array(idf, dtype=np.float64).reshape(-1)
        if idf.size != len(vocabulary):
            raise MLNNError(f"the vocabulary has {len(vocabulary)} terms but idf has {idf.size} "
                            "values")
        self._index = {term: j for j, term in enumerate(vocabulary)}
        if len(self._index) != len(vocabulary):
            raise MLNNError("the vocabulary has repeated terms")
        self.vocabulary_, self.idf_ = vocabulary, idf
        return self

    def get_state(self):
        """``(settings, arrays)``: JSON-ready settings (with :data:`ANALYZER`) and plain arrays
        from which :meth:`from_state` rebuilds this fitted vectorizer, without pickle."""
        check_fitted(self, "vocabulary_")
        settings = {"analyzer": ANALYZER, "stem": bool(self.stem),
                    "token_pattern": self.token_pattern, "min_df": self.min_df,
                    "sublinear_tf": bool(self.sublinear_tf), "norm": bool(self.norm)}
        arrays = {"vocabulary": np.array(self.vocabulary_, dtype=str),
                  "idf": np.asarray(self.idf_, dtype=np.float64),
                  "stop_words": np.array(sorted(self.stop_words), dtype=str)}
        return settings, arrays

    @classmethod
    def from_state(cls, settings, arrays):
        """The fitted vectorizer of :meth:`get_state`'s ``(settings, arrays)``, unless they were
        written by a different analyzer."""
        if settings.get("analyzer") != ANALYZER:
            raise MLNNError(f"the text analyzer {settings.get('analyzer')!r} is not this "
                            f"version's ({ANALYZER!r})")
        vectorizer = cls(stop_words=[str(w) for w in arrays["stop_words"]],
                         token_pattern=str(settings["token_pattern"]), min_df=settings["min_df"],
                         **{key: bool(settings[key]) for key in ("stem", "sublinear_tf", "norm")})
        return vectorizer.set_vocabulary(arrays["vocabulary"].tolist(), arrays["idf"])

    def transform(self, documents, warn_empty=False):
        """tf-idf matrix of ``documents``: CSR (n × D), float64, sorted indices. A document
        without a word of the vocabulary gives an empty row, and with ``warn_empty`` a warning
        naming it (a model can only answer for it from its biases)."""
        check_fitted(self, "vocabulary_")
        X = self._tfidf(self._analyze(documents))
        empty = np.flatnonzero(np.diff(X.indptr) == 0)
        if warn_empty and empty.size:
            shown = ", ".join(str(i) for i in empty[:10]) + (", ..." if empty.size > 10 else "")
            warnings.warn(f"{empty.size} of the {X.shape[0]} documents (number {shown}, counting "
                          "from 0) have no word of the vocabulary: their rows are empty, and a "
                          "model's labels for them rest on its biases alone", MLNNWarning,
                          stacklevel=3)
        return X

    def _tfidf(self, terms):
        """The tf-idf matrix (n × D CSR) of the analysed documents ``terms``."""
        found = [[self._index[t] for t in doc if t in self._index] for doc in terms]
        rows = np.repeat(np.arange(len(found)), [len(columns) for columns in found])
        columns = np.array([j for columns in found for j in columns], dtype=np.int64)
        counts = sp.csr_matrix((np.ones(len(columns)), (rows, columns)),
                               shape=(len(terms), len(self.vocabulary_)))
        return tfidf_weight(counts, self.idf_, self.sublinear_tf, self.norm)


def idf_from_counts(counts):
    """``idf_j = log(N / df_j)`` of a count matrix (N × D), ``df_j`` the rows with a non-zero in
    column ``j``; 0 where ``df_j = 0``."""
    counts = sp.csr_matrix(counts)
    df = np.bincount(counts.indices[counts.data != 0], minlength=counts.shape[1])
    idf = np.zeros(counts.shape[1])
    seen = df > 0
    idf[seen] = np.log(counts.shape[0] / df[seen])
    return idf


def tfidf_weight(counts, idf, sublinear_tf=False, norm=True):
    """tf-idf of the term counts (n × D sparse): ``tf · idf`` per entry (``tf = 1 + log(count)``
    if ``sublinear_tf``), each row then divided by its Euclidean norm if ``norm`` (an empty row
    stays empty). CSR float64, sorted indices, no explicit zeros."""
    X = sp.csr_matrix(counts, dtype=np.float64, copy=True)
    X.sum_duplicates()                                  # and sorts the indices
    if sublinear_tf:
        X.data = 1.0 + np.log(X.data)
    X.data *= np.asarray(idf, dtype=np.float64)[X.indices]
    X.eliminate_zeros()
    if norm:
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        norms = np.sqrt(np.bincount(rows, weights=X.data ** 2, minlength=X.shape[0]))
        norms[norms == 0] = 1.0
        X.data /= norms[rows]
    return X
