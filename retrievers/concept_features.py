"""Concept features (issue 26: questions in the reader's words, answers in the
filer's words).  :mod:`retrievers.concepts` finds the concepts a question names
("capex") and the filer wordings and statement titles they stand for
("purchases of property, plant and equipment", "statements of cash flows").  The
question's own scores above are unchanged; the expansion is scored on its own,
so the ranker learns when it helps (all 0 when the question names no concept):

``x_bm25_z``        z-score among the candidates of the BM25 of the expansion terms.
``x_page_z``        the same summed over the chunk's (first) page.
``x_phrase``        best share of one filer wording's terms found in the chunk (a
                    statement row label "Purchases of property, plant and equipment").
``x_anc``           the same, filer wordings and statement titles, in the chunk's ancestor
                    headings ("Capital Spending", "Consolidated Statement of Cash Flows").
``x_stmt``          best share of a statement title's terms on the chunk's page.
``q_concept``       1 if the question names a concept.
``year_match``      share of the years the question names (2018, FY2018) found in the
                    chunk or its ancestor headings (a statement's title names its years);
                    0 when it names none.
``year_page``       the same on the chunk's whole (first) page (a table's column header).

Document features (issue 22: the question names its document; :mod:`retrievers.doc_cues`
compares it with each document's identity -- issuer, fiscal year and quarter -- once per
query).  Constant within a document, they only separate candidates across a collection;
NaN (missing, which LightGBM routes on its own) where the identity or the year is unknown:

``doc_entity``      how fully the question names the issuer of the chunk's document (1: the
                    whole name, less: a share of its words).
``doc_period``      1 if a year the question names is the document's fiscal year (and the
                    quarter agrees), 0.5 for a year match with another quarter, 0 otherwise.
``q_doc_named``     the best ``doc_entity`` over the collection: whether the question names
                    any indexed issuer.

Also the question cues :func:`question_years` and :func:`asks_for_amount` (``q_amount``); the helpers
:func:`mask` and :func:`zscore` are shared with :mod:`retrievers.features`.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

import numpy as np

from .concepts import Expansion
from .corpus import Corpus

__all__ = ["asks_for_amount", "concept_feature", "concept_rows", "doc_feature", "mask", "question_years", "zscore",
           "term_rows", "best_share"]


_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")


def question_years(text: str) -> tuple[str, ...]:
    """The years a question names ("in 2018", "FY2018", "2018年"), as the tokens tables print them."""
    return tuple(dict.fromkeys(_YEAR.findall(text)))


_AMOUNT = re.compile(
    r"\b(how much|how many|amount|total|sum|ratio|margin|rate|percent(age)?|value|cost|price|revenue|"
    r"income|expenses?|earnings|eps|cash|debt|usd|eur|dollars?|millions?|billions?|thousands?)\b|[$€£%¥％]|\d"
    # the same cues in Chinese: how much / how many, amount, share, ratio, revenue, profit, yuan
    r"|多少|几[个家名项年]|金额|数额|总额|合计|比例|比重|占比|增长率|毛利率|收入|利润|营业额|净额|万元|亿元|[万亿]股|元",
    re.IGNORECASE,
)


def asks_for_amount(query: str) -> bool:
    """Whether a question asks for a quantity (a cheap cue, see ``q_amount``)."""
    return bool(_AMOUNT.search(query))


def mask(n: int, rows: np.ndarray) -> np.ndarray:
    """Boolean membership over ``n`` rows (a lookup table beats np.isin by ~10x here)."""
    m = np.zeros(max(n, 1), dtype=bool)
    m[rows] = True
    return m


def zscore(v: np.ndarray) -> np.ndarray:
    sd = float(v.std())
    return (v - float(v.mean())) / sd if sd > 1e-12 else np.zeros_like(v)


def concept_rows(corpus: Corpus, tokens: Sequence[str], expansion: Expansion,
                  root_terms: Mapping[str, Sequence[int]] | None = None) -> list[np.ndarray]:
    """For each distinct known query term, the chunks that have it -- where a term named a concept
    (``capital expenditure``), also the chunks that print one of its filer wordings whole
    (``purchases of property, plant and equipment``): the coverage features then count the reader's
    word as found on the statement row that answers it.  ``root_terms`` (term -> corpus indices of the
    documents whose issuer name has it): the root of a document's tree is its identity, so "3M" in the
    question is found in every chunk of 3M's filings, as an ancestor heading would be."""
    bm = corpus.bm25_chunks
    rows = bm.contains(tokens)
    if root_terms:
        known = [t for t in dict.fromkeys(tokens) if t in bm.vocab_]
        rows = [np.union1d(r, np.concatenate([corpus.doc_rows(d) for d in root_terms[t]])) if root_terms.get(t) else r
                for t, r in zip(known, rows)]
    if not expansion.alias_terms or not expansion.phrases:
        return rows
    found = None
    for run in expansion.phrases:
        per = bm.contains(run)
        if len(per) < len(set(run)):  # a word of the wording is in no chunk
            continue
        both = per[0]
        for r in per[1:]:
            both = np.intersect1d(both, r, assume_unique=True)
        found = both if found is None else np.union1d(found, both)
    if found is None or not found.size:
        return rows
    alias = set(expansion.alias_terms)
    known = [t for t in dict.fromkeys(tokens) if t in bm.vocab_]
    return [np.union1d(r, found) if t in alias else r for t, r in zip(known, rows)]


def doc_feature(name: str, corpus: Corpus, qs, cand: np.ndarray) -> np.ndarray:
    """One document feature of ``cand`` (NaN without identities: unknown, which LightGBM routes itself)."""
    c = qs.doc_cues
    if c is None:
        return np.full(cand.size, np.nan)
    if name == "q_doc_named":
        return np.full(cand.size, c.named)
    return (c.entity if name == "doc_entity" else c.period)[corpus.chunk_doc[cand]]


def term_rows(bm, terms: Sequence[str]) -> dict[str, np.ndarray]:
    """Rows holding each of ``terms`` that the BM25 index knows (term -> rows)."""
    known = [t for t in dict.fromkeys(terms) if t in bm.vocab_]
    return dict(zip(known, bm.contains(known))) if known else {}


def best_share(runs, rows: dict[str, np.ndarray], n: int, keys: np.ndarray, valid: np.ndarray | None = None
                ) -> np.ndarray:
    """Per candidate, the best share of one run's distinct terms present (``keys``: the candidate's row,
    page or ancestor rows in a table of ``n``; ``valid``: which ancestor columns are real)."""
    best = np.zeros(keys.shape[0])
    masks: dict[str, np.ndarray] = {}
    for run in runs:
        terms = list(dict.fromkeys(run))
        got = np.zeros(keys.shape[0])
        for t in terms:
            if t not in rows:
                continue
            if t not in masks:
                hit = mask(n, rows[t])[keys]
                masks[t] = (hit & valid).any(axis=1) if valid is not None else hit
            got += masks[t]
        best = np.maximum(best, got / len(terms))
    return best


def concept_feature(name: str, corpus: Corpus, qs, cand: np.ndarray, safe: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """One concept or year feature of ``cand`` (``safe``/``valid``: their ancestor nodes, as in
    :func:`retrievers.features.compute_features`)."""
    m = cand.size
    x = qs.expansion
    if name == "q_concept":
        return np.full(m, 1.0 if x.concepts else 0.0)
    if name in ("year_match", "year_page"):
        if not qs.years:
            return np.zeros(m)
        rows = term_rows(corpus.bm25_chunks, qs.years)
        if name == "year_match":  # in the chunk, or in a heading above it ("... for the years ended 2018, 2017")
            got = best_share([qs.years], rows, corpus.n_chunks, cand) if rows else np.zeros(m)
            heads = term_rows(corpus.bm25_heads, qs.years) if corpus.n_nodes else {}
            return np.maximum(got, best_share([qs.years], heads, corpus.n_nodes, safe, valid)) if heads else got
        n_pages = int(corpus.chunk_page_key.max()) + 1
        page_rows = {t: corpus.chunk_page_key[r] for t, r in rows.items()}
        return best_share([qs.years], page_rows, n_pages, corpus.chunk_page_key[cand])
    if not x.concepts:
        return np.zeros(m)
    if name == "x_bm25_z":
        return zscore(qs.x_chunk_bm25[cand].astype(np.float64)) if qs.x_chunk_bm25 is not None else np.zeros(m)
    if name == "x_page_z":
        if qs.x_chunk_bm25 is None:
            return np.zeros(m)
        n_pages = int(corpus.chunk_page_key.max()) + 1
        per_page = np.bincount(corpus.chunk_page_key, weights=qs.x_chunk_bm25, minlength=n_pages)
        return zscore(per_page[corpus.chunk_page_key[cand]])
    if name == "x_phrase":
        rows = term_rows(corpus.bm25_chunks, [t for r in x.phrases for t in r])
        return best_share(x.phrases, rows, corpus.n_chunks, cand)
    if name == "x_anc":
        if not corpus.n_nodes:
            return np.zeros(m)
        runs = x.phrases + x.statements
        rows = term_rows(corpus.bm25_heads, [t for r in runs for t in r])
        return best_share(runs, rows, corpus.n_nodes, safe, valid)
    # x_stmt
    rows = term_rows(corpus.bm25_chunks, [t for r in x.statements for t in r])
    n_pages = int(corpus.chunk_page_key.max()) + 1
    page_rows = {t: corpus.chunk_page_key[r] for t, r in rows.items()}
    return best_share(x.statements, page_rows, n_pages, corpus.chunk_page_key[cand])
