"""Serve a structrag index from a search engine: Qdrant or OpenSearch.

>>> from retrievers import Index                                           # doctest: +SKIP
>>> from retrievers.engines import EngineRetriever, QdrantEngine
>>> index = Index.open("my-index")
>>> engine = QdrantEngine.local("my-qdrant")          # or QdrantEngine(QdrantClient(url=...))
>>> engine.sync(index)                                # chunks, section paths, pages, BM25 weights, vectors
>>> EngineRetriever(index, engine).search("capital expenditure 2018", k=5, doc="3M_2018_10K.pdf")

The engine holds every chunk (text, section path as a keyword array, pages,
provenance), its BM25 weights and its embedding, and answers the first stage
(BM25 top-n and nearest-neighbour top-n, filtered to a document if asked).
:class:`EngineRetriever` reranks those candidates with the index's LightGBM
ranker over the hierarchy features, computed from the index's stored
structure (:class:`retrievers.store.corpus.Corpus`), never by re-parsing.
``pip install "structrag[engines]"`` (qdrant-client, opensearch-py,
llama-index-vector-stores-qdrant); each engine imports its client only when used.
"""

from __future__ import annotations

from structrag._lazy import lazy_exports

_LAZY = {
    "EngineChunk": "records",
    "EngineHit": "records",
    "SyncReport": "records",
    "iter_engine_chunks": "records",
    "term_index": "records",
    "query_sparse": "records",
    "QdrantEngine": "qdrant",
    "qdrant_vector_store": "qdrant",
    "OpenSearchEngine": "opensearch",
    "EngineRetriever": "retriever",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
