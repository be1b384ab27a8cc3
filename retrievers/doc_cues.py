"""Does the question name the document?  Issuer and period agreement for collection-wide ranking.

Across a collection the question usually names its document in passing ("What was 3M's capital
expenditure in FY2018?") and every 10-K shares the rest of its words, so the chunk features alone
rank another company's or another year's filing as high as the right one (issue 22).  The identity
at the root of each document's tree (:class:`structrag.model.DocumentIdentity`, read from its cover
and metadata or set by the user) is compared with the question here, once per query and document:

* ``entity``: 1 when the issuer's name (legal suffixes dropped, :func:`structrag.identity.normalize_issuer`)
  occurs in the question as a run of words (or, for a Chinese name, as a substring), else the share of
  its words (or character pairs) the question has; NaN when the issuer is unknown;
* ``period``: 1 when a year the question names is the document's fiscal year (and, if the question
  names a quarter, the quarter agrees; a quarterly report for a question naming no quarter gets 0.5),
  0.5 when the year agrees but the quarter does not, 0 when the year differs; NaN when the question
  names no year or the document's year is unknown.

The ranker sees them as the features ``doc_entity``, ``doc_period`` and ``q_doc_named`` (the best
``entity`` over the collection: whether the question names any indexed issuer at all), and
:meth:`retrievers.index.Index.candidates` adds the best chunks of the documents the question names
to the first stage, so that they compete with every other document's in one ranking.
"""

from __future__ import annotations

import re
from typing import Mapping, NamedTuple, Sequence

import numpy as np

from structrag.identity import normalize_issuer
from structrag.model import DocumentIdentity
from structrag.text import HAN, normalize_title

_HAN_RE = re.compile(f"[{HAN}]")

__all__ = ["DocCues", "doc_cues", "cues_for", "question_quarter", "named_documents", "root_terms"]

_QUARTER = re.compile(r"\bq([1-4])\b|\b(first|second|third|fourth|1st|2nd|3rd|4th) quarter\b|第([一二三四])季度")
_ORD = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4,
        "一": 1, "二": 2, "三": 3, "四": 4}
_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
#: the longest issuer name, in words, looked for as a run in the question
_MAX_RUN = 8


class DocCues(NamedTuple):
    """Per-document agreement with one question (indexed like ``Corpus.doc_names``)."""

    entity: np.ndarray  # (n_docs,) float, NaN: issuer unknown
    period: np.ndarray  # (n_docs,) float, NaN: no year in the question or none known for the document
    named: float  # max of entity over the documents (0 when none is named or none is known)


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


def _period(ident: DocumentIdentity, years: set[int], quarter: int | None) -> float:
    if not years or ident.year is None:
        return float("nan")
    if ident.year not in years:
        return 0.0
    if quarter is None:
        return 1.0 if ident.quarter is None else 0.5
    return 1.0 if ident.quarter == quarter else 0.5


def doc_cues(identities: Sequence[DocumentIdentity | None], text: str) -> DocCues:
    """How each document's identity agrees with question ``text`` (see the module docstring)."""
    n = len(identities)
    entity = np.full(n, np.nan)
    period = np.full(n, np.nan)
    norm = normalize_title(text)
    qwords = norm.split()
    qflat = norm.replace(" ", "")
    years = {int(y) for y in _YEAR.findall(text)}
    quarter = question_quarter(text)
    for i, ident in enumerate(identities):
        if ident is None:
            continue
        key = _issuer_key(ident.issuer)
        if key is not None:
            entity[i] = _entity(key, qwords, qflat)
        period[i] = _period(ident, years, quarter)
    named = float(np.nanmax(entity)) if n and not np.all(np.isnan(entity)) else 0.0
    return DocCues(entity, period, named)


def named_documents(cues: DocCues) -> np.ndarray:
    """Indices of the documents the question names best (full issuer match, period not contradicted);
    empty when it names none."""
    if cues.named < 1.0:
        return np.zeros(0, np.int64)
    ok = (cues.entity >= 1.0) & ~(cues.period == 0.0)
    return np.flatnonzero(ok)


def cues_for(identities: Mapping[str, DocumentIdentity | None], doc_names: Sequence[str], text: str) -> DocCues:
    """:func:`doc_cues` over ``doc_names`` (a corpus's document order) from a name -> identity mapping."""
    return doc_cues([identities.get(n) for n in doc_names], text)


def root_terms(identities: Mapping[str, DocumentIdentity | None], doc_names: Sequence[str], tokenizer,
               tokens: Sequence[str]) -> dict[str, list[int]]:
    """Question ``tokens`` that are words of a document's issuer name -> the corpus indices of those
    documents (the root of their trees: :func:`retrievers.features.query_scores`).  Legal suffixes
    ("Inc.", "Company") are left out: they name no one."""
    want = set(tokens)
    out: dict[str, list[int]] = {}
    for i, name in enumerate(doc_names):
        ident = identities.get(name)
        key = _issuer_key(ident.issuer if ident is not None else None)
        if key is None:
            continue
        for t in set(tokenizer.tokenize(" ".join(key[1]) if key[1] else key[0])) & want:
            out.setdefault(t, []).append(i)
    return out
