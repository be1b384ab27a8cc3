"""OpenSearch as the first stage: one document per chunk, BM25 over the index's tokens, a knn_vector.

>>> from opensearchpy import OpenSearch                                   # doctest: +SKIP
>>> engine = OpenSearchEngine(OpenSearch("http://localhost:9200"), "filings")
>>> engine.sync(index)                                 # bulk requests (opensearch-py's helpers.streaming_bulk)
>>> engine.lexical(tokens, 100, doc="3M_2018_10K.pdf"); engine.dense(vector, 100)

Index ``name`` (:meth:`OpenSearchEngine.mapping`): ``tokens`` holds the
chunk's BM25 tokens as the index made them (stemmed, ``1,577`` and ``10-K``
whole, CJK bigrams) and is analysed by whitespace only, under a BM25
similarity with the index's ``k1`` and ``b`` -- Lucene's idf is the index's
``lucene`` idf, so the ranking is the index's BM25 up to Lucene's one-byte
length norms; ``text`` is the chunk for people (standard analyser);
``section_path`` a keyword array (filter or aggregate by any heading);
``vector`` a ``knn_vector`` (HNSW, inner product over unit vectors);
pages, sibling positions, offsets and boxes as stored fields.  Index
``name + "-documents"`` lists the synced documents with their content hash.
One shard by default: BM25 statistics are then collection-wide, as in the
index (with more shards, search with ``search_type=dfs_query_then_fetch``,
which :meth:`lexical` does).
"""

from __future__ import annotations

import os
from typing import Any, Iterator, Sequence

import numpy as np

from structrag._progress import progress_bar
from structrag.errors import BackendError, ConfigError

from ..extras import require
from .records import IDENTITY_INTEGERS, IDENTITY_KEYWORDS, EngineHit, Exporter, SyncReport

__all__ = ["OpenSearchEngine"]


def _require():
    require("opensearchpy.helpers", what="the OpenSearch engine", package="opensearch-py", extra="engines")
    return require("opensearchpy", what="the OpenSearch engine", package="opensearch-py", extra="engines")


_SOURCE_EXCLUDES = ["vector", "tokens"]


class OpenSearchEngine:
    """An OpenSearch index holding an index's chunks.

    Parameters
    ----------
    client:
        An ``opensearchpy.OpenSearch`` client.
    name:
        Index name (default ``structrag``); the document list is ``name-documents``.
    shards, replicas:
        Index settings used when :meth:`create` makes the index.
    knn_engine:
        ``lucene`` (default) or ``faiss``: the k-NN plugin's HNSW implementation.
    ef_construction, m:
        HNSW parameters.
    chunk_size:
        Records per bulk request.
    """

    def __init__(self, client: Any, name: str = "structrag", *, shards: int = 1, replicas: int = 0,
                 knn_engine: str = "lucene", ef_construction: int = 128, m: int = 16, chunk_size: int = 500) -> None:
        _require()
        if knn_engine not in ("lucene", "faiss"):
            raise ConfigError(f"unknown knn engine {knn_engine!r}; use lucene or faiss")
        if name != name.lower() or not name:
            raise ConfigError(f"OpenSearch index names are lower case, got {name!r}")
        self.client = client
        self.name = name
        self.shards = int(shards)
        self.replicas = int(replicas)
        self.knn_engine = knn_engine
        self.ef_construction = int(ef_construction)
        self.m = int(m)
        self.chunk_size = int(chunk_size)

    @classmethod
    def from_env(cls, name: str = "structrag", **kwargs: Any) -> "OpenSearchEngine":
        """A client for ``$STRUCTRAG_OPENSEARCH_URL`` (``http://user:password@host:9200``)."""
        url = os.environ.get("STRUCTRAG_OPENSEARCH_URL")
        if not url:
            raise ConfigError("STRUCTRAG_OPENSEARCH_URL is not set", hint="export STRUCTRAG_OPENSEARCH_URL=http://localhost:9200")
        opensearchpy = _require()
        return cls(opensearchpy.OpenSearch(url, timeout=60), name, **kwargs)

    @property
    def documents_index(self) -> str:
        return f"{self.name}-documents"

    # --- schema -------------------------------------------------------------------------------
    def mapping(self, dim: int | None, *, k1: float = 1.5, b: float = 0.75) -> dict[str, Any]:
        """The body of the chunk index's create request (settings and mappings)."""
        # section_path is a keyword array: one value per heading, root first
        keyword = ("schema", "doc", "doc_id", "doc_sha1", "chunk_id", "section_path", "section_id")
        integer = ("ordinal", "heading_levels", "pages", "page_start", "page_end", "page_count", "sibling_index",
                   "sibling_count", "start", "end")
        props: dict[str, Any] = {
            **{f: {"type": "keyword"} for f in keyword},
            **{f: {"type": "integer"} for f in integer},
            **self.identity_mapping(),
            "text": {"type": "text"},
            "tokens": {"type": "text", "analyzer": "structrag_tokens", "similarity": "structrag_bm25"},
            "bboxes": {"type": "object", "enabled": False},  # provenance: stored, not indexed
            "block_ids": {"type": "integer", "index": False},
        }
        if dim:
            props["vector"] = {
                "type": "knn_vector",
                "dimension": int(dim),
                "method": {"name": "hnsw", "space_type": "innerproduct", "engine": self.knn_engine,
                           "parameters": {"m": self.m, "ef_construction": self.ef_construction}},
            }
        return {
            "settings": {
                "index": {"number_of_shards": self.shards, "number_of_replicas": self.replicas, "knn": bool(dim),
                          "similarity": {"structrag_bm25": {"type": "BM25", "k1": float(k1), "b": float(b)}}},
                # the tokens were made by structrag's tokenizer: split on spaces, change nothing
                "analysis": {"analyzer": {"structrag_tokens": {"type": "custom", "tokenizer": "whitespace"}}},
            },
            "mappings": {"dynamic": "strict", "properties": props},
        }

    @staticmethod
    def identity_mapping() -> dict[str, Any]:
        """The document identity's fields (:func:`~retrievers.engines.records.identity_payload`)."""
        return {**{f: {"type": "keyword"} for f in IDENTITY_KEYWORDS}, **{f: {"type": "integer"} for f in IDENTITY_INTEGERS}}

    def documents_mapping(self) -> dict[str, Any]:
        return {"settings": {"index": {"number_of_shards": 1, "number_of_replicas": self.replicas}},
                "mappings": {"dynamic": "strict", "properties": {
                    "doc": {"type": "keyword"}, "identity": {"type": "keyword"}, "chunks": {"type": "integer"}}}}

    def create(self, dim: int | None, *, k1: float = 1.5, b: float = 0.75, recreate: bool = False) -> None:
        for name, body in ((self.name, self.mapping(dim, k1=k1, b=b)), (self.documents_index, self.documents_mapping())):
            if self.client.indices.exists(index=name):
                if not recreate:
                    if name == self.name:  # an index made before identities: its strict mapping gains their fields
                        self.client.indices.put_mapping(index=name, body={"properties": self.identity_mapping()})
                    continue
                self.client.indices.delete(index=name)
            self.client.indices.create(index=name, body=body)

    def drop(self) -> None:
        """Delete both indices."""
        for name in (self.name, self.documents_index):
            if self.client.indices.exists(index=name):
                self.client.indices.delete(index=name)

    # --- writing ----------------------------------------------------------------------------------
    def source(self, chunk) -> dict[str, Any]:
        """The stored document of one chunk (:class:`~retrievers.engines.EngineChunk`)."""
        src = chunk.payload()
        src["tokens"] = " ".join(chunk.tokens)
        if chunk.vector is not None:
            src["vector"] = [float(x) for x in np.asarray(chunk.vector, dtype=np.float32)]
        return src

    def bulk_actions(self, chunks) -> Iterator[dict[str, Any]]:
        """opensearch-py bulk actions (``helpers.bulk`` / ``streaming_bulk`` input) that index ``chunks``."""
        for c in chunks:
            yield {"_op_type": "index", "_index": self.name, "_id": f"{c.doc}:{c.chunk_id}", "_source": self.source(c)}

    def _bulk(self, actions) -> int:
        helpers = _require().helpers
        n = 0
        for ok, item in helpers.streaming_bulk(self.client, actions, chunk_size=self.chunk_size, raise_on_error=False,
                                               max_retries=3):
            if not ok:
                raise BackendError(f"OpenSearch refused a record: {item}")
            n += 1
        return n

    def synced_documents(self) -> dict[str, str]:
        if not self.client.indices.exists(index=self.documents_index):
            return {}
        helpers = _require().helpers
        return {h["_source"]["doc"]: h["_source"]["identity"]
                for h in helpers.scan(self.client, index=self.documents_index, query={"query": {"match_all": {}}})}

    def sync(self, index, *, progress: bool | None = None) -> SyncReport:
        """Make the engine hold exactly ``index``'s documents (bulk-index new or changed ones, delete the rest).

        BM25 statistics live in Lucene, so unchanged documents are not touched.
        """
        ex = Exporter(index)
        dim = int(index.corpus.chunk_vectors.shape[1]) if index.corpus.has_dense else None
        self.create(dim, k1=index.bm25_params.k1, b=index.bm25_params.b)
        want = ex.documents()
        added, removed, unchanged = ex.plan(want, self.synced_documents())
        for n in removed:
            for target in (self.name, self.documents_index):
                self.client.delete_by_query(index=target, body={"query": {"term": {"doc": n}}}, refresh=True,
                                            conflicts="proceed")
        written = 0
        bar = progress_bar(len(added), desc="sync (opensearch)", unit="doc", enabled=progress)
        for n in added:
            chunks = ex.chunks(n)
            written += self._bulk(self.bulk_actions(chunks))
            # listed after its chunks: a sync that stops in between sends the document again next time
            self.client.index(index=self.documents_index, id=n, body={"doc": n, "identity": want[n][0],
                                                                     "chunks": len(chunks)})
            bar.update(1)
        bar.close()
        self.client.indices.refresh(index=self.name)
        self.client.indices.refresh(index=self.documents_index)
        return SyncReport(added, removed, unchanged, written, 0)

    def count(self) -> int:
        return int(self.client.count(index=self.name)["count"])

    # --- the first stage ------------------------------------------------------------------------
    @staticmethod
    def lexical_query(tokens: Sequence[str], n: int, doc: str | Sequence[str] | None = None) -> dict[str, Any]:
        """The search body of the BM25 first stage (every query term a should-clause, repeats counted)."""
        must = {"match": {"tokens": {"query": " ".join(tokens), "operator": "or"}}}
        query: dict[str, Any] = {"bool": {"must": [must]}}
        if doc is not None:
            query["bool"]["filter"] = [_doc_term(doc)]
        return {"size": int(n), "query": query, "_source": {"excludes": _SOURCE_EXCLUDES}}

    @staticmethod
    def knn_query(vector: np.ndarray, n: int, doc: str | Sequence[str] | None = None) -> dict[str, Any]:
        """The search body of the dense first stage (a filter inside the knn clause: efficient filtering)."""
        knn: dict[str, Any] = {"vector": [float(x) for x in np.asarray(vector, dtype=np.float32)], "k": int(n)}
        if doc is not None:
            knn["filter"] = _doc_term(doc)
        return {"size": int(n), "query": {"knn": {"vector": knn}}, "_source": {"excludes": _SOURCE_EXCLUDES}}

    def _hits(self, res) -> list[EngineHit]:
        return [EngineHit(h["_source"]["doc"], h["_source"]["chunk_id"], float(h["_score"]), h["_source"])
                for h in res["hits"]["hits"]]

    def lexical(self, tokens: Sequence[str], n: int, *, doc: str | Sequence[str] | None = None) -> list[EngineHit]:
        if not tokens:
            return []
        res = self.client.search(index=self.name, body=self.lexical_query(tokens, n, doc),
                                 params={"search_type": "dfs_query_then_fetch"})
        return [h for h in self._hits(res) if h.score > 0]

    def dense(self, vector: np.ndarray, n: int, *, doc: str | Sequence[str] | None = None) -> list[EngineHit]:
        return self._hits(self.client.search(index=self.name, body=self.knn_query(vector, n, doc)))


def _doc_term(doc: str | Sequence[str]) -> dict[str, Any]:
    """The filter on one document's name or on several (a ``where`` over identities)."""
    return {"term": {"doc": doc}} if isinstance(doc, str) else {"terms": {"doc": list(doc)}}
