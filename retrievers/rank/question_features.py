"""The features of what a question names: the concepts, the years and the document it asks about.

Questions come in the reader's words, answers in the filer's words.  :mod:`retrievers.rank.concepts`
finds the concepts a question names ("capex") and the filer wordings and statement titles they stand
for ("purchases of property, plant and equipment", "statements of cash flows").  The question's own
scores are unchanged; the expansion is scored on its own, so the ranker learns when it helps (all 0
when the question names no concept).

Across a collection the question names its document in passing ("3M's capital expenditure in
FY2018"); :mod:`retrievers.rank.named_documents` compares it with each document's identity -- issuer,
fiscal year and quarter -- once per query.  Constant within a document, the document features only
separate candidates across a collection; NaN (missing, which LightGBM routes on its own) where the
identity or the year is unknown.

One function per feature of :mod:`retrievers.rank.features` (which describes each).
"""

from __future__ import annotations

import functools
from typing import Callable, Sequence

import numpy as np

from .candidates import Candidates, mask, zscore

__all__ = ["term_rows", "best_share"]


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


def _page_rows(c: Candidates, rows: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], int, np.ndarray]:
    """``rows`` (term -> chunk rows) as page keys, the number of page keys, and the candidates' page keys."""
    keys = c.corpus.chunk_page_key
    return {t: keys[r] for t, r in rows.items()}, int(keys.max()) + 1, keys[c.rows]


# --- concepts ---------------------------------------------------------------------------------------


def _with_concepts(compute: Callable[[Candidates], np.ndarray]) -> Callable[[Candidates], np.ndarray]:
    """``compute`` on a question that names a concept; 0 for every candidate on one that does not."""

    @functools.wraps(compute)
    def feature(c: Candidates) -> np.ndarray:
        return compute(c) if c.qs.expansion.concepts else np.zeros(c.m)

    return feature


@_with_concepts
def x_bm25_z(c: Candidates) -> np.ndarray:
    x = c.qs.x_chunk_bm25
    return zscore(x[c.rows].astype(np.float64)) if x is not None else np.zeros(c.m)


@_with_concepts
def x_page_z(c: Candidates) -> np.ndarray:
    x = c.qs.x_chunk_bm25
    if x is None:
        return np.zeros(c.m)
    keys = c.corpus.chunk_page_key
    per_page = np.bincount(keys, weights=x, minlength=int(keys.max()) + 1)
    return zscore(per_page[keys[c.rows]])


@_with_concepts
def x_phrase(c: Candidates) -> np.ndarray:
    phrases = c.qs.expansion.phrases
    rows = term_rows(c.corpus.bm25_chunks, [t for r in phrases for t in r])
    return best_share(phrases, rows, c.corpus.n_chunks, c.rows)


@_with_concepts
def x_anc(c: Candidates) -> np.ndarray:
    if not c.corpus.n_nodes:
        return np.zeros(c.m)
    runs = c.qs.expansion.phrases + c.qs.expansion.statements
    rows = term_rows(c.corpus.bm25_heads, [t for r in runs for t in r])
    return best_share(runs, rows, c.corpus.n_nodes, c.safe, c.valid)


@_with_concepts
def x_stmt(c: Candidates) -> np.ndarray:
    statements = c.qs.expansion.statements
    page_rows, n_pages, keys = _page_rows(c, term_rows(c.corpus.bm25_chunks, [t for r in statements for t in r]))
    return best_share(statements, page_rows, n_pages, keys)


def q_concept(c: Candidates) -> np.ndarray:
    return np.full(c.m, 1.0 if c.qs.expansion.concepts else 0.0)


# --- years ------------------------------------------------------------------------------------------


def year_match(c: Candidates) -> np.ndarray:
    corpus, years = c.corpus, c.qs.years
    if not years:
        return np.zeros(c.m)
    rows = term_rows(corpus.bm25_chunks, years)
    # in the chunk, or in a heading above it ("... for the years ended 2018, 2017")
    got = best_share([years], rows, corpus.n_chunks, c.rows) if rows else np.zeros(c.m)
    heads = term_rows(corpus.bm25_heads, years) if corpus.n_nodes else {}
    return np.maximum(got, best_share([years], heads, corpus.n_nodes, c.safe, c.valid)) if heads else got


def year_page(c: Candidates) -> np.ndarray:
    years = c.qs.years
    if not years:
        return np.zeros(c.m)
    page_rows, n_pages, keys = _page_rows(c, term_rows(c.corpus.bm25_chunks, years))
    return best_share([years], page_rows, n_pages, keys)


# --- the document ------------------------------------------------------------------------------------


def doc_entity(c: Candidates) -> np.ndarray:
    cues = c.qs.doc_cues
    return cues.entity[c.corpus.chunk_doc[c.rows]] if cues is not None else np.full(c.m, np.nan)


def doc_period(c: Candidates) -> np.ndarray:
    cues = c.qs.doc_cues
    return cues.period[c.corpus.chunk_doc[c.rows]] if cues is not None else np.full(c.m, np.nan)


def q_doc_named(c: Candidates) -> np.ndarray:
    cues = c.qs.doc_cues
    return np.full(c.m, cues.named) if cues is not None else np.full(c.m, np.nan)
