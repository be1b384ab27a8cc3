"""Tokenisation for lexical retrieval (English and CJK).

English text is case-folded (NFKC first, so full-width forms and ligatures
become plain letters), split on punctuation, stop-worded and Snowball-stemmed.
Tokens that carry meaning in reports are kept whole:

* numbers with thousands separators and decimals: ``1,577`` -> ``1577``,
  ``$1,577.00`` -> ``1577`` (a zero fraction is dropped so a table's
  ``1,577`` meets a question's ``1577.00``), ``3.5%`` -> ``3.5``;
* hyphenated codes that contain a digit: ``10-K``, ``8-K``, ``COVID-19``;
* letter+digit words (``FY2018``, ``Q3``) stay whole and also give their
  digit part (``2018``), which is how the year is printed in a table header.

Chinese runs are cut into words by jieba's dictionary (``cjk="jieba-search"``,
the default: the words plus the shorter dictionary words inside each long one,
``募集资金`` also giving ``募集`` and ``资金``; HMM off, so a run is always cut
the same way wherever it occurs).  ``cjk="bigram"`` makes overlapping character
bigrams instead (a single character standing alone becomes a unigram) -- the
CJK analyser of Lucene, which needs no dictionary; it was the default before,
and indexes built with it keep it.  Japanese and Korean runs, which jieba does
not know, always become bigrams.  The modes were measured against each other on the Chinese
prospectus development queries.

A :class:`Tokenizer` is a frozen value; :meth:`Tokenizer.to_dict` is stored in
an index so queries are always tokenised the way the index was.
"""

from __future__ import annotations

import importlib.util
import re
import unicodedata
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any, Literal, Mapping

from structrag.errors import ConfigError
from structrag.text import CJK_SCRIPT

__all__ = ["Tokenizer", "ENGLISH_STOPWORDS", "CJK_MODES", "tokenize"]

#: How CJK runs are cut (see :class:`Tokenizer`).
CJK_MODES: tuple[str, ...] = ("bigram", "unigram", "jieba", "jieba-search", "jieba-search+bigram")

#: Function words that carry no topic.  Question words are included because
#: every query starts with one and no passage is about "what".
ENGLISH_STOPWORDS: frozenset[str] = frozenset(
    """
    a an and are as at be but by for if in into is it no not of on or such that the their then there these they
    this to was will with what which who whom whose how when where why does did do done has have had having were
    been being its from than our we us you your i me my he she his her them those can could would should may might
    about so also any all each other some very just only own same both more most over under again further once
    here s t am were doing until while against between through during before after above below up down out off
    """.split()
)

_CJK = CJK_SCRIPT  # kana, Han (extension A, unified, compatibility), Hangul syllables

# One alternation, tried left to right at each position:
#   1. a CJK run,
#   2. a number with thousands separators / decimals,
#   3. an alphanumeric word, optionally hyphen-joined to more (10-K, non-GAAP),
#      with an optional English possessive / contraction tail dropped later.
_TOKEN_RE = re.compile(
    rf"(?P<cjk>[{_CJK}]+)"
    r"|(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    rf"(?!-|[^\W{_CJK}])"
    rf"|(?P<word>[^\W_{_CJK}]+(?:-[^\W_{_CJK}]+)*)(?:['\u2019][a-z]{{1,2}}\b)?",
    re.UNICODE,
)
_HAS_DIGIT = re.compile(r"\d")
_DIGIT_RUN = re.compile(r"\d+")


def _normalise_number(s: str) -> str:
    s = s.replace(",", "")
    whole, _, frac = s.partition(".")
    # "007" and "7" are the same number; "1,577.00" and "1577" too
    whole = whole.lstrip("0") or "0"
    frac = frac.rstrip("0")
    return f"{whole}.{frac}" if frac else whole


_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@lru_cache(maxsize=1)
def _jieba():
    """jieba's default tokenizer, its dictionary loaded once per process (~1 s)."""
    try:
        import jieba
    except ImportError as e:
        raise ConfigError("cjk='jieba' needs the jieba package, which is not installed",
                          hint="pip install jieba, or use cjk='bigram'") from e
    import logging

    jieba.setLogLevel(logging.WARNING)  # it announces its dictionary load on stderr otherwise
    t = jieba.Tokenizer()
    t.initialize()
    return t


@lru_cache(maxsize=4)
def _stemmer(language: str):
    import Stemmer  # PyStemmer: C Snowball stemmers, a core dependency

    return Stemmer.Stemmer(language)


@dataclass(frozen=True)
class Tokenizer:
    """Turns text into BM25 terms.

    Parameters
    ----------
    lowercase:
        Case-fold (after NFKC normalisation).
    stem:
        ``"snowball"`` (English Snowball stemmer) or ``"none"``.
    stopwords:
        ``"en"`` (:data:`ENGLISH_STOPWORDS`) or ``"none"``.
    cjk:
        ``"jieba-search"`` (default; chosen on the Chinese prospectus development
        queries, where its chunk BM25 mAP was 0.701 against 0.686 for bigrams and
        0.676 for plain jieba -- within the noise of 93 questions): jieba words plus the shorter dictionary
        words inside each long word;
        ``"bigram"``: overlapping character bigrams per CJK run (the default before);
        ``"unigram"``: one term per character;
        ``"jieba"``: dictionary word segmentation of Chinese runs (jieba, a core
        dependency);
        ``"jieba-search+bigram"``: both, the ``jieba-search`` words and then each
        character bigram that is not already one of them (a term a question and a
        page share whether or not the dictionary cuts them alike).
    min_length:
        Latin-script words shorter than this are dropped (numbers never are).
    """

    lowercase: bool = True
    stem: Literal["snowball", "none"] = "snowball"
    stopwords: Literal["en", "none"] = "en"
    cjk: Literal["bigram", "unigram", "jieba", "jieba-search", "jieba-search+bigram"] = "jieba-search"
    min_length: int = 1
    _stop: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.stem not in ("snowball", "none"):
            raise ConfigError(f"unknown stem option {self.stem!r}; use 'snowball' or 'none'")
        if self.stopwords not in ("en", "none"):
            raise ConfigError(f"unknown stopwords option {self.stopwords!r}; use 'en' or 'none'")
        if self.cjk not in CJK_MODES:
            raise ConfigError(f"unknown cjk option {self.cjk!r}; use one of {', '.join(map(repr, CJK_MODES))}")
        if self.cjk.startswith("jieba") and importlib.util.find_spec("jieba") is None:
            # fail at construction, with the fix, rather than at the first Chinese text (the
            # dictionary itself loads at the first Chinese text: ~1 s that English never pays)
            raise ConfigError(f"cjk={self.cjk!r} needs the jieba package, which is not installed",
                              hint="pip install jieba, or use cjk='bigram'")
        object.__setattr__(self, "_stop", ENGLISH_STOPWORDS if self.stopwords == "en" else frozenset())

    # --- the work -----------------------------------------------------------
    def __call__(self, text: str) -> list[str]:
        return self.tokenize(text)

    def tokenize(self, text: str) -> list[str]:
        """Terms of ``text`` in order (duplicates kept: BM25 counts them)."""
        if not text:
            return []
        text = unicodedata.normalize("NFKC", text)
        if self.lowercase:
            text = text.lower()
        out: list[str] = []
        words: list[tuple[int, str]] = []  # (position in out, word) awaiting the stemmer
        stop = self._stop
        for m in _TOKEN_RE.finditer(text):
            kind = m.lastgroup
            if kind == "cjk":
                run = m.group("cjk")
                if len(run) == 1 or self.cjk == "unigram":
                    out.extend(run)
                elif self.cjk == "jieba" and _HAN.search(run):
                    out.extend(_jieba().lcut(run, HMM=False))
                elif self.cjk == "jieba-search" and _HAN.search(run):
                    out.extend(_jieba().lcut_for_search(run, HMM=False))
                elif self.cjk == "jieba-search+bigram" and _HAN.search(run):
                    cut = _jieba().lcut_for_search(run, HMM=False)
                    have = set(cut)
                    out.extend(cut)
                    out.extend(b for b in (run[i : i + 2] for i in range(len(run) - 1)) if b not in have)
                else:
                    out.extend(run[i : i + 2] for i in range(len(run) - 1))
            elif kind == "num":
                out.append(_normalise_number(m.group("num")))
            else:
                w = m.group("word")
                if "-" in w:
                    if _HAS_DIGIT.search(w):  # 10-k, covid-19, 2018-2019: a code, keep whole
                        out.append(w)
                        continue
                    parts = w.split("-")
                else:
                    parts = [w]
                for p in parts:
                    if _HAS_DIGIT.search(p):
                        if p.isdigit():
                            out.append(_normalise_number(p))
                        else:  # fy2018, q3: whole, plus its numbers
                            out.append(p)
                            out.extend(_normalise_number(d) for d in _DIGIT_RUN.findall(p) if len(d) >= 2)
                    elif p not in stop and len(p) >= self.min_length:
                        words.append((len(out), p))
                        out.append(p)
        if words and self.stem == "snowball":
            stemmed = _stemmer("english").stemWords([w for _, w in words])
            for (i, _), s in zip(words, stemmed):
                out[i] = s
        return out

    def tokenize_many(self, texts) -> list[list[str]]:
        return [self.tokenize(t) for t in texts]

    # --- persistence ---------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("_stop", None)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Tokenizer":
        known = {"lowercase", "stem", "stopwords", "cjk", "min_length"}
        unknown = set(d) - known
        if unknown:
            raise ConfigError(f"unknown tokenizer settings {sorted(unknown)}; known: {sorted(known)}")
        return cls(**dict(d))


_DEFAULT = Tokenizer()


def tokenize(text: str) -> list[str]:
    """Tokenise with the default :class:`Tokenizer`."""
    return _DEFAULT.tokenize(text)
