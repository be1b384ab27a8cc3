"""First stage from a search engine, second stage from the index: :class:`EngineRetriever`.

The engine (:class:`~retrievers.engines.QdrantEngine`,
:class:`~retrievers.engines.OpenSearchEngine`) returns BM25 top-n and
nearest-neighbour top-n chunks; their union is ranked by the index's LightGBM
ranker over the hierarchy features (:func:`retrievers.rank.features.compute_features`),
computed from the index's stored structure -- section nodes, ancestor headings,
sibling positions, pages, BM25 statistics of chunks, headings, sections and
pages -- never by parsing again.  This is :meth:`retrievers.index.Index.rank`
with the engine in place of the index's own first stage, so with the same
candidates it gives the same ranking.  Hit text, section path and pages come
from the engine's stored fields.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping, Sequence

import numpy as np

from structrag.errors import ConfigError

from ..index import Index
from ..rank.ranker import LambdaRanker
from ..rank.search import Hit, Mode, check_query, check_request, named_docs, no_dense_error, rerank, rrf
from .records import EngineHit

__all__ = ["EngineRetriever"]

log = logging.getLogger("structrag.engines")


class EngineRetriever:
    """Search an index's documents through a search engine, reranked by the index's ranker.

    Parameters
    ----------
    index:
        The open :class:`~retrievers.index.Index` the engine was synced from
        (its tokenizer, query encoder, stored structure and ranker are used).
    engine:
        Anything with ``lexical(tokens, n, doc=)`` and ``dense(vector, n, doc=)``
        returning :class:`~retrievers.engines.EngineHit` lists.
    candidates:
        First-stage depth of each retriever (BM25 and dense) for ``ranker`` and ``hybrid``.
    ranker:
        A :class:`~retrievers.rank.ranker.LambdaRanker`; default: the index's.
    """

    def __init__(self, index: Index, engine: Any, *, candidates: int = 100, ranker: LambdaRanker | None = None) -> None:
        if candidates < 1:
            raise ConfigError(f"candidates must be at least 1, got {candidates}")
        self.index = index
        self.engine = engine
        self.candidates = int(candidates)
        self.ranker = ranker
        self._row_of: dict[tuple[str, str], int] | None = None

    def _rows(self, hits: Sequence[EngineHit]) -> tuple[np.ndarray, list[EngineHit]]:
        """Corpus rows of the hits the index knows (an engine out of sync may hold others: dropped)."""
        if self._row_of is None:
            corpus = self.index.corpus
            pos = {int(r): i for i, r in enumerate(corpus.chunk_rowid.tolist())}
            self._row_of = {(d, c): pos[r] for d, c, r in self.index.store.chunk_keys() if r in pos}
        rows, kept = [], []
        for h in hits:
            r = self._row_of.get((h.doc, h.chunk_id))
            if r is None:
                log.warning("engine hit %s/%s is not in the index (sync the engine)", h.doc, h.chunk_id)
                continue
            rows.append(r)
            kept.append(h)
        return np.asarray(rows, dtype=np.int64), kept

    @staticmethod
    def _hit(h: EngineHit, score: float) -> Hit:
        p = h.payload
        return Hit(h.doc, h.chunk_id, tuple(int(x) for x in p.get("pages", ())), tuple(p.get("section_path", ())),
                   float(score), p.get("text", ""))

    def search(self, query: str, k: int = 10, *, doc: str | None = None, mode: Mode = "ranker",
               where: Mapping[str, Any] | None = None, route: bool = True) -> list[Hit]:
        """The ``k`` best chunks for ``query`` (within document ``doc`` if given), best first.

        Modes as :meth:`Index.search`: ``ranker`` (default), ``bm25``, ``dense``, ``hybrid``; ``where``
        as there (the engine filters on the matching documents' names); ``route`` as there (the named
        documents' chunks first).
        """
        index = self.index
        check_request(mode, k, has_dense=index.has_dense, path=index.path)
        tokens = index.tokenizer.tokenize(query)
        check_query(query, tokens)
        if doc is not None:
            doc = index.resolve_doc(doc)
        asked = doc  # the caller's document (None: the collection), before where narrows the engine's filter
        if where:
            from ..store.identities import Where

            names = Where(where).select(index.identities(), path=index.path)
            names = [n for n in names if doc is None or n == doc]
            if not names:
                return []
            doc = names[0] if len(names) == 1 else names  # type: ignore[assignment]
        use_dense = index.has_dense and mode in ("dense", "hybrid", "ranker")
        if mode == "bm25":
            return [self._hit(h, h.score) for h in self.engine.lexical(tokens, k, doc=doc)]
        qv = index.query_vector(query) if use_dense else None
        if mode == "dense":
            return [self._hit(h, h.score) for h in self.engine.dense(qv, k, doc=doc)]
        n = max(self.candidates, k)
        lex = self.engine.lexical(tokens, n, doc=doc)
        dense = self.engine.dense(qv, n, doc=doc) if qv is not None else []
        by_key = {(h.doc, h.chunk_id): h for h in dense}
        by_key.update({(h.doc, h.chunk_id): h for h in lex})
        if mode == "hybrid":
            if qv is None:
                raise no_dense_error(index.path, mode)
            keys = list(by_key)
            ids = {key: i for i, key in enumerate(keys)}
            fused, s = rrf([[ids[(h.doc, h.chunk_id)] for h in lex], [ids[(h.doc, h.chunk_id)] for h in dense]])
            return [self._hit(by_key[keys[i]], sc) for i, sc in zip(fused[:k].tolist(), s[:k].tolist())]
        # ranker: BM25 candidates, then dense ones, then BM25 of the question's concept expansion
        # (retrievers.rank.concepts), each without those already in: rank.search.first_stage's order
        qs = index.query_scores(query, dense=use_dense)
        first, seen = [], set()
        xterms = list(qs.expansion.terms)
        more = self.engine.lexical(xterms, n, doc=doc) if xterms else []
        # then the documents the question names, each on its own (rank.search.first_stage)
        scope = None if doc is None else {doc} if isinstance(doc, str) else set(doc)
        named = named_docs(index.corpus, qs, asked)
        for i in named:
            name = index.corpus.doc_names[i]
            if scope is not None and name not in scope:
                continue
            more += self.engine.lexical(tokens, n, doc=name)
            if qv is not None:
                more += self.engine.dense(qv, n, doc=name)
            if xterms:
                more += self.engine.lexical(xterms, n, doc=name)
        for h in (*lex, *dense, *more):
            if (h.doc, h.chunk_id) not in seen:
                seen.add((h.doc, h.chunk_id))
                first.append(h)
        rows, kept = self._rows(first)
        if rows.size == 0:
            return []
        model = self.ranker or index.ranker
        order, s = rerank(index.corpus, qs, rows, model, k, named if route else ())
        return [self._hit(kept[i], sc) for i, sc in zip(order.tolist(), s.tolist())]
