"""Does the question name the document?  Issuer and period agreement for collection-wide ranking.

Across a collection the question usually names its document in passing ("What was 3M's capital
expenditure in FY2018?") and every 10-K shares the rest of its words, so the chunk features alone
rank another company's or another year's filing as high as the right one.  The identity
at the root of each document's tree (:class:`structrag.model.DocumentIdentity`, read from its cover
and metadata or set by the user) is compared with the question here, once per query and document:

* ``entity``: 1 when the question names the issuer (:meth:`IssuerTable.cues`): its name (legal suffixes
  dropped, :func:`structrag.identity.normalize_issuer`) as a run of words (or, for a Chinese name, as a
  substring), or the short name readers use -- the name's leading words, capitalised in the question
  ("Amazon" for AMAZON.COM, "Verizon", "MGM Resorts"; a generic first word such as "General" alone names
  no one), one slip of the keyboard in a leading word of six letters or more ("Neflix", "Activsion"), or
  an upper-case abbreviation its first word starts with ("JPM" for JPMorgan Chase), or a trading symbol of
  the issuer read from any of its filings' covers ("MMM" for 3M, ``DocumentIdentity.tickers``); else the share of its
  words (or character pairs) the question has; NaN when the issuer is unknown;
* ``period``: 1 when a year the question names is the document's fiscal year (and, if the question
  names a quarter, the quarter agrees; a quarterly report for a question naming no quarter gets 0.5),
  0.5 when the year agrees but the quarter does not, 0 when the year differs; NaN when the question
  names no year or the document's year is unknown.

The ranker sees them as the features ``doc_entity``, ``doc_period`` and ``q_doc_named`` (the best
``entity`` over the collection: whether the question names any indexed issuer at all), and
:func:`retrievers.rank.search.first_stage` adds the best chunks of the documents the question names
to the first stage, so that they compete with every other document's in one ranking.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Sequence

import numpy as np

from structrag.identity import normalize_issuer
from structrag.model import DocumentIdentity
from structrag.text import HAN, normalize_title

from .question import question_years

_HAN_RE = re.compile(f"[{HAN}]")

__all__ = ["DocCues", "IssuerTable", "doc_cues", "question_quarter", "question_types", "named_documents"]

_QUARTER = re.compile(r"\bq([1-4])\b|\b(first|second|third|fourth|1st|2nd|3rd|4th) quarter\b|第([一二三四])季度")
_ORD = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4,
        "一": 1, "二": 2, "三": 3, "四": 4}
#: the longest issuer name, in words, looked for as a run in the question
_MAX_RUN = 8
#: first words of issuer names that name no one alone ("General" Mills, "American" Express, "First" Solar):
#: the short name must then go on to the next word
_GENERIC_LEAD = frozenset(
    "general american united national international first global new great southern northern eastern western "
    "central pacific atlantic public standard royal bank banco group holdings china the de la le".split())
_RAW_WORD = re.compile(r"[^\W_]+(?:[.&'-][^\W_]+)*")


class DocCues(NamedTuple):
    """Per-document agreement with one question (indexed like ``Corpus.doc_names``)."""

    entity: np.ndarray  # (n_docs,) float, NaN: issuer unknown
    period: np.ndarray  # (n_docs,) float, NaN: no year in the question or none known for the document
    named: float  # max of entity over the documents (0 when none is named or none is known)
    #: (n_docs,) bool: the document is of the type the question names ("10-Q", "earnings release");
    #: None when the question names no type
    doc_type: np.ndarray | None = None


#: a document type a question names -> the identity types that answer it (an annual report is a 10-K too)
_QUESTION_TYPES: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (re.compile(r"\b10-?k\b", re.I), frozenset({"10-K"})),
    (re.compile(r"\b10-?q\b", re.I), frozenset({"10-Q"})),
    (re.compile(r"\b8-?k\b", re.I), frozenset({"8-K"})),
    (re.compile(r"\b20-?f\b", re.I), frozenset({"20-F"})),
    (re.compile(r"\bearnings\s+(?:release|report|call)|\bpress\s+release", re.I), frozenset({"earnings release"})),
    (re.compile(r"\bquarterly\s+(?:report|filing)|\binterim\s+report", re.I), frozenset({"10-Q", "interim report"})),
    (re.compile(r"\bannual\s+(?:report|filing)", re.I), frozenset({"10-K", "20-F", "annual report"})),
)


def question_types(text: str) -> frozenset[str]:
    """The document types a question names ("in its 10-Q", "the earnings release"), empty when none."""
    return frozenset().union(*(types for rx, types in _QUESTION_TYPES if rx.search(text)))


def question_quarter(text: str) -> int | None:
    """The quarter a question names ("Q2", "second quarter", "第二季度"), else None."""
    m = _QUARTER.search(text.lower())
    if not m:
        return None
    if m.group(1):
        return int(m.group(1))
    return _ORD[m.group(2) or m.group(3)]


def _issuer_key(issuer: str | None) -> tuple[str, tuple[str, ...]] | None:
    """(joined name, its words) for matching, None if nothing distinctive is left."""
    if not issuer:
        return None
    joined = normalize_issuer(issuer)
    if not joined:
        return None
    words, pos = [], 0
    for w in normalize_title(issuer).split():  # the words normalize_issuer kept, in order
        if joined.startswith(w, pos):
            words.append(w)
            pos += len(w)
    return joined, tuple(words)


def _entity(key: tuple[str, tuple[str, ...]], qwords: list[str], qflat: str) -> float:
    joined, words = key
    if _HAN_RE.search(joined):
        if joined in qflat:
            return 1.0
        pairs = {joined[i:i + 2] for i in range(len(joined) - 1)} or {joined}
        return sum(p in qflat for p in pairs) / len(pairs)
    for i in range(len(qwords)):  # the name as a run of the question's words, spaces ignored ("coca cola")
        s = ""
        for w in qwords[i:i + _MAX_RUN]:
            s += w
            if s == joined:
                return 1.0
            if not joined.startswith(s):
                break
    if not words:
        return 0.0
    have = set(qwords)
    return sum(w in have for w in words) / len(words)


def _one_slip(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` differ by one inserted, dropped, replaced or swapped letter."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return a[i + 1:] == b[i + 1:] or (a[i + 2:] == b[i + 2:] and a[i:i + 2] == b[i:i + 2][::-1])
    return (a[i + 1:] == b[i:]) if len(a) > len(b) else (a[i:] == b[i + 1:])


def _short_name(words: tuple[str, ...], raw: list[str], i: int) -> bool:
    """Does the question's word ``raw[i]`` (capitalised, as typed) begin a short name of the issuer whose
    name has ``words`` (module docstring)?"""
    lead, w = words[0], raw[i]
    low = w.lower()
    if low == lead or (len(lead) >= 6 and len(low) >= 6 and _one_slip(low, lead)):
        # a generic lead ("General") names the issuer only with its next word ("General Mills")
        return lead not in _GENERIC_LEAD or len(words) == 1 or (i + 1 < len(raw) and raw[i + 1].lower() == words[1])
    return 3 <= len(w) < len(lead) and w.isupper() and w.isalpha() and lead.startswith(low)  # "JPM"


def _period(ident: DocumentIdentity, years: set[int], quarter: int | None) -> float:
    if not years or ident.year is None:
        return float("nan")
    if ident.year not in years:
        return 0.0
    if quarter is None:
        return 1.0 if ident.quarter is None else 0.5
    return 1.0 if ident.quarter == quarter else 0.5


class IssuerTable:
    """A collection's identities prepared once for matching (:meth:`cues`, :meth:`root_terms` per query
    cost a lookup per question word, not a pass over every document's name)."""

    def __init__(self, identities: Sequence[DocumentIdentity | None], tokenizer=None) -> None:
        n = len(identities)
        self.keys = [_issuer_key(i.issuer) if i is not None else None for i in identities]
        self.year = np.array([i.year if i is not None and i.year is not None else -1 for i in identities], np.int64)
        self.quarter = np.array([i.quarter if i is not None and i.quarter is not None else 0 for i in identities],
                                np.int64)
        self.known = np.array([k is not None for k in self.keys], bool)
        self.types = [i.doc_type if i is not None else None for i in identities]
        self.by_word: dict[str, list[int]] = {}  # issuer word (and whole name) -> documents
        self.cjk: list[int] = []
        self.by_token: dict[str, list[int]] = {}  # index token of an issuer word -> documents
        leads: dict[tuple[str, ...], list[int]] = {}  # issuer words -> documents (for short names)
        for d, key in enumerate(self.keys):
            if key is None:
                continue
            if key[1] and not _HAN_RE.search(key[0]):
                leads.setdefault(key[1], []).append(d)
            if _HAN_RE.search(key[0]):
                self.cjk.append(d)
            for w in {key[0], *key[1]}:
                self.by_word.setdefault(w, []).append(d)
            if tokenizer is not None:
                for t in set(tokenizer.tokenize(" ".join(key[1]) if key[1] else key[0])):
                    self.by_token.setdefault(t, []).append(d)
        #: first letter of an issuer's first word -> (its words, its documents): short names are looked up
        #: by the first letter of the question's capitalised words, not by a pass over every issuer
        self.by_initial: dict[str, list[tuple[tuple[str, ...], np.ndarray]]] = {}
        for words, ds in leads.items():
            self.by_initial.setdefault(words[0][:1], []).append((words, np.array(ds, np.int64)))
        #: trading symbol -> documents of its issuer: a symbol read from one filing's cover names the same
        #: issuer's other documents too (covers before 2019 print none)
        self.by_ticker: dict[str, list[int]] = {}
        of_key: dict[str, list[int]] = {}
        for d, key in enumerate(self.keys):
            if key is not None:
                of_key.setdefault(key[0], []).append(d)
        for d, ident in enumerate(identities):
            for t in (ident.tickers if ident is not None else ()):
                if len(t) >= 2:
                    same = of_key.get(self.keys[d][0], [d]) if self.keys[d] is not None else [d]
                    self.by_ticker.setdefault(t, [])
                    self.by_ticker[t] = sorted(set(self.by_ticker[t]) | set(same))
        self.n = n

    def cues(self, text: str) -> DocCues:
        """How each document's identity agrees with question ``text`` (see the module docstring)."""
        entity = np.where(self.known, 0.0, np.nan)
        norm = normalize_title(text)
        qwords = norm.split()
        qflat = norm.replace(" ", "")
        docs = set(self.cjk)
        for w in set(qwords):
            docs.update(self.by_word.get(w, ()))
        for d in docs:
            entity[d] = _entity(self.keys[d], qwords, qflat)  # type: ignore[arg-type]
        raw = [w.replace("\u2019", "'").split("'")[0] for w in _RAW_WORD.findall(text)]
        raw = [w for w in raw if w]
        for i, w in enumerate(raw):
            if w[0].isupper() or w[0].isdigit():
                for words, ds in self.by_initial.get(w[0].lower(), ()):
                    if _short_name(words, raw, i):
                        entity[ds] = 1.0
        if self.by_ticker and sum(w.isupper() for w in raw) * 2 < len(raw):  # a question in capitals names no symbol
            for w in raw:
                if w.isupper() and w in self.by_ticker:
                    entity[self.by_ticker[w]] = 1.0
        years = np.array(sorted({int(y) for y in question_years(text)}), np.int64)
        quarter = question_quarter(text)
        period = np.full(self.n, np.nan)
        if years.size:
            has = self.year >= 0
            hit = np.isin(self.year, years)
            if quarter is None:
                agree = np.where(self.quarter == 0, 1.0, 0.5)
            else:
                agree = np.where(self.quarter == quarter, 1.0, 0.5)
            period[has] = np.where(hit, agree, 0.0)[has]
        named = float(np.nanmax(entity)) if self.n and self.known.any() else 0.0
        wanted = question_types(text)
        doc_type = np.array([t in wanted for t in self.types], bool) if wanted else None
        return DocCues(entity, period, named, doc_type)

    def root_terms(self, tokens: Sequence[str]) -> dict[str, list[int]]:
        """Question ``tokens`` that are words of a document's issuer name -> those documents (the root of
        their trees: :func:`retrievers.rank.query.query_scores`); legal suffixes ("Inc.") name no one."""
        return {t: self.by_token[t] for t in set(tokens) if t in self.by_token}


def doc_cues(identities: Sequence[DocumentIdentity | None], text: str) -> DocCues:
    """How each document's identity agrees with question ``text`` (see the module docstring)."""
    return IssuerTable(identities).cues(text)


def named_documents(cues: DocCues) -> np.ndarray:
    """Indices of the documents the question names best (full issuer match, period not contradicted; when
    the period contradicts every one of them -- "What is Boeing forecasting for FY2023?" over its 2022
    10-K -- all of the issuer's documents), of the type the question names where one of them is;
    empty when it names none."""
    if cues.named < 1.0:
        return np.zeros(0, np.int64)
    issuer = cues.entity >= 1.0
    ok = issuer & ~(cues.period == 0.0)
    if cues.doc_type is not None and (ok & cues.doc_type).any():
        ok &= cues.doc_type  # "in its Q2 2023 10-Q": not the same period's earnings release or 8-K
    return np.flatnonzero(ok if ok.any() else issuer)
