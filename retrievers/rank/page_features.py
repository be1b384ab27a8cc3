"""Whole-page text features: the BM25 of a chunk's page as one text, against its document's pages.

Relevance is judged by page, and a page's wording as a whole -- its heading, its running header,
every paragraph on it -- often decides where no single chunk stands out: BM25 over whole pages beat
the ranker on long non-financial documents and on questions that name a section.  ``page_bm25``
(:mod:`retrievers.rank.chunk_features`) sums the chunks' own BM25, which is not the same: it counts a
word once per chunk, saturates per chunk, and misses the headings and running lines that are in no
chunk's text.  These read the BM25 of the chunk's (first) page as one document
(``Corpus.bm25_pages``: idf over every page of the collection), always against the pages of the
chunk's *own* document, so that across a collection each document's best page stands out in it
whatever the other documents hold.  All 0 when the question shares no term with the document's pages.

They carry no monotone constraint: the ranker may learn that on some questions the best whole page
is not the answer (that free form was chosen by cross-validation over families,
``python -m eval.bench.page_text_select``).  Trained with them on every question, the ranker matched
page-BM25 on long documents but lost the filings 0.07 mAP: on a 10-K, the page that shares most words
with a question in the reader's words ("capital expenditure") is seldom the statement that answers
it ("purchases of property, plant and equipment").  So the shipped rankers read their ``open_page_*``
twins instead: the same values on a question that names no concept (:mod:`retrievers.rank.concepts`),
unknown (NaN) on one that does, so that the trees need not learn where whole-page wording misleads.

One function per feature of :mod:`retrievers.rank.features` (which describes each).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..store.corpus import Corpus
from .candidates import Candidates, zscore

__all__ = ["page_text_scores"]


def page_text_scores(corpus: Corpus, tokens) -> np.ndarray:
    """BM25 of ``tokens`` against every page of the collection (one value per page key)."""
    return corpus.bm25_pages.scores(list(tokens))


def _pages(c: Candidates) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The query's page scores (computed once, only for a ranker that reads the pages), the candidates'
    page keys, their documents and their pages' scores."""
    qs = c.qs
    scores = c.shared("page_text", lambda: qs.page_text_bm25 if qs.page_text_bm25 is not None
                      else page_text_scores(c.corpus, qs.tokens))
    keys = c.corpus.chunk_page_key[c.rows]
    return scores, keys, c.corpus.chunk_doc[c.rows], scores[keys].astype(np.float64)


def _doc_best(corpus: Corpus, scores: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """Best page score of each document in ``docs`` (per element)."""
    starts = corpus.doc_page_start
    u, inv = np.unique(docs, return_inverse=True)
    best = np.array([float(scores[starts[d]:starts[d + 1]].max(initial=0.0)) for d in u.tolist()])
    return best[inv]


def page_text_rel(c: Candidates) -> np.ndarray:
    scores, _, docs, s = _pages(c)
    best = _doc_best(c.corpus, scores, docs)
    return np.divide(s, best, out=np.zeros(c.m), where=best > 0)


def page_text_rank(c: Candidates) -> np.ndarray:
    scores, _, docs, s = _pages(c)
    out = np.zeros(c.m)
    starts = c.corpus.doc_page_start
    for d in np.unique(docs).tolist():
        here = docs == d
        ordered = np.sort(scores[starts[d]:starts[d + 1]])
        # pages of the document scoring strictly higher
        out[here] = ordered.size - np.searchsorted(ordered, s[here], side="right")
    return out


def page_text_z(c: Candidates) -> np.ndarray:
    return zscore(_pages(c)[3])


def page_text_nb(c: Candidates) -> np.ndarray:
    scores, keys, docs, _ = _pages(c)
    best = _doc_best(c.corpus, scores, docs)
    lo, hi = c.corpus.doc_page_start[docs], c.corpus.doc_page_start[docs + 1]
    prev = np.where(keys - 1 >= lo, scores[np.maximum(keys - 1, 0)], 0.0)
    nxt = np.where(keys + 1 < hi, scores[np.minimum(keys + 1, scores.size - 1)], 0.0)
    nb = np.maximum(prev, nxt).astype(np.float64)
    return np.divide(nb, best, out=np.zeros(c.m), where=best > 0)


def _open(page_feature: Callable[[Candidates], np.ndarray]) -> Callable[[Candidates], np.ndarray]:
    """``page_feature`` on a question that names no concept; unknown (NaN) on one that does: there the
    best whole page misleads (a question in the reader's words)."""

    def feature(c: Candidates) -> np.ndarray:
        return np.full(c.m, np.nan) if c.qs.expansion.concepts else page_feature(c)

    feature.__name__ = feature.__qualname__ = page_feature.__name__.replace("page_text_", "open_page_")
    return feature


open_page_rel = _open(page_text_rel)
open_page_rank = _open(page_text_rank)
open_page_z = _open(page_text_z)
open_page_nb = _open(page_text_nb)
