"""Tokeniser, stop words, the Porter stemmer, and tf-idf against a hand-computed example."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from mlnn.base.errors import DataFormatError, MLNNError
from mlnn.datasets.text import (STOP_WORDS, TfidfVectorizer, analyze, decode, idf_from_counts,
                                porter_stem, tfidf_weight, tokenize)

# Word/stem pairs from the examples in Porter (1980), "An algorithm for suffix stripping",
# run through the whole algorithm (e.g. the paper's step-2 example relational -> relate
# continues to relat in steps 4-5).
PORTER_PAIRS = """
caresses caress  ponies poni  ties ti  caress caress  cats cat  feed feed  agreed agre
plastered plaster  bled bled  motoring motor  sing sing  conflated conflat  troubled troubl
sized size  hopping hop  tanned tan  falling fall  hissing hiss  fizzed fizz  failing fail
filing file  happy happi  sky sky  relational relat  conditional condit  rational ration
valenci valenc  hesitanci hesit  digitizer digit  conformabli conform  radicalli radic
differentli differ  vileli vile  analogousli analog  vietnamization vietnam
predication predic  operator oper  feudalism feudal  decisiveness decis  hopefulness hope
callousness callous  formaliti formal  sensitiviti sensit  sensibiliti sensibl
triplicate triplic  formative form  formalize formal  electriciti electr  electrical electr
hopeful hope  goodness good  revival reviv  allowance allow  inference infer
airliner airlin  gyroscopic gyroscop  adjustable adjust  defensible defens  irritant irrit
replacement replac  adjustment adjust  dependent depend  adoption adopt  homologou homolog
communism commun  activate activ  angulariti angular  homologous homolog  effective effect
bowdlerize bowdler  probate probat  rate rate  cease ceas  controll control  roll roll
generalizations gener  oscillators oscil
""".split()


@pytest.mark.parametrize("word, stem", list(zip(PORTER_PAIRS[0::2], PORTER_PAIRS[1::2])))
def test_porter_stemmer_on_published_examples(word, stem):
    assert porter_stem(word) == stem


def test_tokenize_and_analyze():
    assert tokenize("The U.S. company's 3rd-quarter NET rose 12 pct") == \
        ["the", "companys", "rd", "quarter", "net", "rose", "pct"]
    assert analyze("The companies were rising", stem=True) == ["compani", "rise"]
    assert analyze("The companies were rising", stem=False) == ["companies", "rising"]
    assert {"the", "and", "of", "were"} <= STOP_WORDS


def test_tfidf_against_hand_computed_example():
    train = ["apple banana apple", "banana cherry", "cherry cherry date"]
    test = ["apple cherry durian"]
    vectorizer = TfidfVectorizer(stem=False, stop_words=None, token_pattern=r"[a-z]+")
    X = vectorizer.fit_transform(train).toarray()
    assert vectorizer.vocabulary_ == ["apple", "banana", "cherry", "date"]
    # N = 3 training documents; df = apple 1, banana 2, cherry 2, date 1.
    idf = [math.log(3), math.log(3 / 2), math.log(3 / 2), math.log(3)]
    np.testing.assert_allclose(vectorizer.idf_, idf)
    # Document 1: tf apple = 2, banana = 1 -> (2 log 3, log 1.5, 0, 0) / its norm.
    row1 = np.array([2 * math.log(3), math.log(1.5), 0, 0])
    # Document 3: tf cherry = 2, date = 1 -> (0, 0, 2 log 1.5, log 3) / its norm.
    row3 = np.array([0, 0, 2 * math.log(1.5), math.log(3)])
    # Document 2: (0, log 1.5, log 1.5, 0) -> (0, 1/sqrt 2, 1/sqrt 2, 0).
    np.testing.assert_allclose(X[0], row1 / np.sqrt(row1 @ row1))
    np.testing.assert_allclose(X[1], [0, 1 / math.sqrt(2), 1 / math.sqrt(2), 0])
    np.testing.assert_allclose(X[2], row3 / np.sqrt(row3 @ row3))
    # The test document reuses the training idf; "durian" is not in the vocabulary.
    row = np.array([math.log(3), 0, math.log(1.5), 0])
    np.testing.assert_allclose(vectorizer.transform(test).toarray()[0], row / np.sqrt(row @ row))


def test_tfidf_options():
    train = ["apple apple apple banana", "banana cherry"]
    raw = TfidfVectorizer(stem=False, stop_words=None, norm=False).fit_transform(train)
    np.testing.assert_allclose(raw.toarray()[0], [3 * math.log(2), 0, 0])
    sub = TfidfVectorizer(stem=False, stop_words=None, norm=False, sublinear_tf=True)
    np.testing.assert_allclose(sub.fit_transform(train).toarray()[0],
                               [(1 + math.log(3)) * math.log(2), 0, 0])
    assert TfidfVectorizer(stem=False, stop_words=None, min_df=2).fit(train).vocabulary_ == \
        ["banana"]
    with pytest.raises(MLNNError):
        TfidfVectorizer(min_df=0)
    with pytest.raises(MLNNError):
        TfidfVectorizer().transform(["x"])


def test_idf_and_l2_norm():
    counts = sp.csr_matrix([[2, 0, 0], [1, 1, 0]])
    np.testing.assert_allclose(idf_from_counts(counts), [0, math.log(2), 0])
    X = tfidf_weight(sp.csr_matrix([[3.0, 4.0], [0, 0]]), np.ones(2))
    np.testing.assert_allclose(X.toarray(), [[0.6, 0.8], [0, 0]])


@pytest.mark.parametrize("raw, text", [
    ("héllo\n".encode("utf-8"), "héllo\n"),
    ("héllo\n".encode("utf-8-sig"), "héllo\n"),        # the byte-order mark is dropped
    ("héllo\n".encode("latin-1"), "héllo\n"),          # not UTF-8: every byte a character
    (b"", ""),
])
def test_decode_reads_utf8_else_latin1(raw, text):
    assert decode(raw, "f") == text


@pytest.mark.parametrize("encoding, name", [
    ("utf-16", "UTF-16"), ("utf-16-le", "UTF-16"), ("utf-16-be", "UTF-16"),
    ("utf-32", "UTF-32"), ("utf-32-le", "UTF-32"), ("utf-32-be", "UTF-32"),
])
def test_decode_refuses_wide_encodings_naming_them(encoding, name):
    raw = "@relation x\n@attribute a numeric\n".encode(encoding)
    with pytest.raises(DataFormatError, match=f"^f.arff: the file is encoded as {name}; "
                                              f"mlnn reads UTF-8 .*iconv -f {name}"):
        decode(raw, "f.arff")


def test_decode_refuses_binary_files_naming_the_line():
    with pytest.raises(DataFormatError, match=r"^f:2: a zero byte: this is a binary file"):
        decode(b"first line\nsecond \x00\x01\x02 line\n", "f")
