"""Whole-page text features (issue 22, item 5: never below the 20-line page-BM25 baseline).

Relevance is judged by page, and a page's wording as a whole -- its heading, its
running header, every paragraph on it -- often decides where no single chunk
stands out: BM25 over whole pages beat the ranker on long non-financial
documents and on questions that name a section (``eval/RESULTS.md`` section 20).
``page_bm25`` (:mod:`retrievers.features`) sums the chunks' own BM25, which is
not the same: it counts a word once per chunk, saturates per chunk, and misses
the headings and running lines that are in no chunk's text.  These read the
BM25 of the chunk's (first) page as one document (``Corpus.bm25_pages``: idf over
every page of the collection), always against the pages of the chunk's *own*
document, so that across a collection each document's best page stands out in
it whatever the other documents hold:

``page_text_rel``   the page's BM25 over the best page BM25 of its document (1: the
                    page the page-BM25 baseline would put first).
``page_text_rank``  rank of the page among its document's pages by that BM25 (0 = best;
                    equal scores share the better rank).
``page_text_z``     z-score of the page's BM25 among the query's candidates.
``page_text_nb``    the best ``page_text_rel`` of the pages just before and after it in
                    its document (an answer that runs over a page break; 0 at the ends).

All 0 when the question shares no term with the document's pages.

They carry no monotone constraint (:data:`retrievers.features.EVIDENCE_DIRECTION`): the ranker
may learn that on some questions the best whole page is not the answer.  Chosen over the
constrained form and over ``page_text_rel`` + ``page_text_rank`` alone by cross-validation over
families (``python -m eval.bench.page_text_select``, ``eval/RESULTS.md`` section 21).  Trained with
them on every question, the ranker matched page-BM25 on long documents but lost the filings 0.07
mAP: on a 10-K, the page that shares most words with a question in the reader's words ("capital
expenditure") is seldom the statement that answers it ("purchases of property, plant and equipment").

What the shipped rankers read instead (:data:`OPEN_PAGE_FEATURES`, in
:data:`retrievers.features.PORTABLE_FEATURES`): ``open_page_rel``, ``open_page_rank``,
``open_page_z``, ``open_page_nb`` -- the same four on a question that names no concept
(:mod:`retrievers.concepts`), unknown (NaN) on one that does, so that the trees need not learn where
whole-page wording misleads.  Chosen by the same family-fold cross-validation, rerun
(``eval/RESULTS.md`` section 27).
"""

from __future__ import annotations

import numpy as np

from .concept_features import zscore
from .corpus import Corpus

__all__ = ["PAGE_TEXT_FEATURES", "OPEN_PAGE_FEATURES", "page_text_scores", "page_text_feature"]

PAGE_TEXT_FEATURES: tuple[str, ...] = ("page_text_rel", "page_text_rank", "page_text_z", "page_text_nb")
#: the page-text features of a question that names no concept (module docstring)
OPEN_PAGE_FEATURES: tuple[str, ...] = ("open_page_rel", "open_page_rank", "open_page_z", "open_page_nb")


def page_text_scores(corpus: Corpus, tokens) -> np.ndarray:
    """BM25 of ``tokens`` against every page of the collection (one value per page key)."""
    return corpus.bm25_pages.scores(list(tokens))


def _doc_best(corpus: Corpus, scores: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """Best page score of each document in ``docs`` (per element)."""
    starts = corpus.doc_page_start
    u, inv = np.unique(docs, return_inverse=True)
    best = np.array([float(scores[starts[d]:starts[d + 1]].max(initial=0.0)) for d in u.tolist()])
    return best[inv]


def page_text_feature(name: str, corpus: Corpus, scores: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """Feature ``name`` (:data:`PAGE_TEXT_FEATURES`; an :data:`OPEN_PAGE_FEATURES` name gives its
    page-text twin, the caller leaves it unknown where the question names a concept) of candidate rows
    ``cand``, given the query's :func:`page_text_scores`."""
    name = name.replace("open_page_", "page_text_")
    keys = corpus.chunk_page_key[cand]
    docs = corpus.chunk_doc[cand]
    s = scores[keys].astype(np.float64)
    if name == "page_text_z":
        return zscore(s)
    if name == "page_text_rank":
        out = np.zeros(cand.size)
        starts = corpus.doc_page_start
        for d in np.unique(docs).tolist():
            here = docs == d
            ordered = np.sort(scores[starts[d]:starts[d + 1]])
            # pages of the document scoring strictly higher
            out[here] = ordered.size - np.searchsorted(ordered, s[here], side="right")
        return out
    best = _doc_best(corpus, scores, docs)
    if name == "page_text_rel":
        return np.divide(s, best, out=np.zeros(cand.size), where=best > 0)
    if name == "page_text_nb":
        lo, hi = corpus.doc_page_start[docs], corpus.doc_page_start[docs + 1]
        prev = np.where(keys - 1 >= lo, scores[np.maximum(keys - 1, 0)], 0.0)
        nxt = np.where(keys + 1 < hi, scores[np.minimum(keys + 1, scores.size - 1)], 0.0)
        nb = np.maximum(prev, nxt).astype(np.float64)
        return np.divide(nb, best, out=np.zeros(cand.size), where=best > 0)
    raise ValueError(f"not a page-text feature: {name!r}")
