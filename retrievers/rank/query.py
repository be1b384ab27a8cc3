"""The work done once per query and shared by the first stage and the features: :class:`QueryScores`.

Its BM25 scores against chunks, headings and sections, the rows holding each of its terms, its
vector, concepts, years and the documents it names.
"""

from __future__ import annotations

from typing import Mapping, NamedTuple, Sequence

import numpy as np

from ..store.corpus import Corpus
from .concepts import NO_EXPANSION, Expansion
from .named_documents import DocCues
from .question import normalise, question_years

__all__ = ["QueryScores", "query_scores", "chunk_rows_per_term"]


class QueryScores(NamedTuple):
    """Per-query work shared by the first stage and the features."""

    tokens: list[str]
    chunk_bm25: np.ndarray  # (n_chunks,)
    head_bm25: np.ndarray  # (n_nodes,)
    section_bm25: np.ndarray  # (n_nodes,)
    head_rows_per_term: list[np.ndarray]  # for each distinct query term, nodes whose heading has it
    query_vector: np.ndarray | None
    amount: bool = False
    chunk_rows_per_term: list[np.ndarray] | None = None  # for each distinct query term, chunks that have it
    n_terms: int = 0  # distinct query terms
    text_norm: str = ""  # the query normalised for section-name mentions (.question.normalise)
    expansion: Expansion = NO_EXPANSION  # the question's concepts (.concepts)
    x_chunk_bm25: np.ndarray | None = None  # (n_chunks,) BM25 of the expansion terms, None without any
    years: tuple[str, ...] = ()  # the years the question names
    doc_cues: DocCues | None = None  # per-document issuer/period agreement (.named_documents); None: unknown
    page_text_bm25: np.ndarray | None = None  # (n_page_keys,) BM25 of each whole page; None: computed when a feature needs it


def query_scores(corpus: Corpus, tokens: Sequence[str], query_vector: np.ndarray | None = None,
                 *, amount: bool = False, text: str = "", expansion: Expansion = NO_EXPANSION,
                 doc_cues: DocCues | None = None, root_terms: Mapping[str, Sequence[int]] | None = None
                 ) -> QueryScores:
    """Scores shared by the first stage and the features (``amount``: see
    :func:`~retrievers.rank.question.asks_for_amount`; ``text``: the query itself, for section-name mentions
    and years; ``expansion``: its concepts, :meth:`retrievers.rank.concepts.ConceptVocabulary.expand`)."""
    tokens = list(tokens)
    return QueryScores(
        tokens=tokens,
        chunk_bm25=corpus.bm25_chunks.scores(tokens),
        head_bm25=corpus.bm25_heads.scores(tokens),
        section_bm25=corpus.bm25_sections.scores(tokens),
        head_rows_per_term=corpus.bm25_heads.contains(tokens),
        query_vector=query_vector,
        amount=bool(amount),
        chunk_rows_per_term=chunk_rows_per_term(corpus, tokens, expansion, root_terms),
        n_terms=len(set(tokens)),
        text_norm=normalise(text) if text else "",
        expansion=expansion,
        x_chunk_bm25=corpus.bm25_chunks.scores(list(expansion.terms)) if expansion.terms else None,
        years=question_years(text) if text else (),
        doc_cues=doc_cues,
    )


def chunk_rows_per_term(corpus: Corpus, tokens: Sequence[str], expansion: Expansion,
                        root_terms: Mapping[str, Sequence[int]] | None = None) -> list[np.ndarray]:
    """For each distinct known query term, the chunks that have it -- where a term named a concept
    (``capital expenditure``), also the chunks that print one of its filer wordings whole
    (``purchases of property, plant and equipment``): the coverage features then count the reader's
    word as found on the statement row that answers it.  ``root_terms`` (term -> corpus indices of the
    documents whose issuer name has it): the root of a document's tree is its identity, so "3M" in the
    question is found in every chunk of 3M's filings, as an ancestor heading would be."""
    bm = corpus.bm25_chunks
    n = corpus.n_chunks
    rows = bm.contains(tokens)
    if root_terms:
        known = [t for t in dict.fromkeys(tokens) if t in bm.vocab_]
        rows = [_union(n, r, *(corpus.doc_rows(d) for d in root_terms[t])) if root_terms.get(t) else r
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
            both = _intersect(n, both, r)
        found = both if found is None else _union(n, found, both)
    if found is None or not found.size:
        return rows
    alias = set(expansion.alias_terms)
    known = [t for t in dict.fromkeys(tokens) if t in bm.vocab_]
    return [_union(n, r, found) if t in alias else r for t, r in zip(known, rows)]


# Row sets as sorted unique arrays, combined through a mask over the corpus's rows: linear in the
# corpus, where np.union1d sorts the concatenation (at 80k chunks, most of a query's time).
def _union(n: int, *parts: np.ndarray) -> np.ndarray:
    mask = np.zeros(n, bool)
    for p in parts:
        mask[p] = True
    return np.flatnonzero(mask)


def _intersect(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    mask = np.zeros(n, bool)
    mask[a] = True
    return b[mask[b]]
