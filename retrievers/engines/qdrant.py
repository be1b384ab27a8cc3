"""Qdrant as the first stage: one point per chunk, a dense and a BM25 sparse vector, the chunk as payload.

>>> engine = QdrantEngine.local("my-qdrant")           # embedded (qdrant-client's local mode)  # doctest: +SKIP
>>> engine = QdrantEngine(QdrantClient(url="http://localhost:6333"))                            # doctest: +SKIP
>>> engine.sync(index)
>>> engine.lexical(tokens, 100, doc="3M_2018_10K.pdf"); engine.dense(vector, 100)

Collection ``name``: named vectors ``dense`` (dot product over unit vectors,
i.e. cosine) and ``bm25`` (sparse, the index's own BM25 weights, see
:mod:`retrievers.engines.records`), payload :meth:`EngineChunk.payload`
(``section_path`` a keyword array, ``doc`` indexed for filters).  A second
collection ``name + "_documents"`` lists each synced document with its content
hash and index options, so :meth:`QdrantEngine.sync` sends only what changed.
Point ids are UUIDs derived from document name and chunk id (deterministic).

The same collection reads as a LlamaIndex vector store:
:func:`qdrant_vector_store` returns llama-index-vector-stores-qdrant's
``QdrantVectorStore`` on it (dense vector ``dense``, text key ``text``).
"""

from __future__ import annotations

import os
import uuid
import warnings
from typing import Any, Sequence

import numpy as np

from structrag._progress import progress_bar
from structrag.errors import ConfigError

from ..extras import require
from .records import EngineHit, Exporter, SyncReport, query_sparse

__all__ = ["QdrantEngine", "qdrant_vector_store", "point_id"]

_NS = uuid.UUID("6f1c2a52-5d0e-5b7a-9a51-7374727563a7")  # fixed namespace of structrag point ids
_DENSE, _SPARSE = "dense", "bm25"


def _require():
    require("qdrant_client", what="the Qdrant engine", package="qdrant-client", extra="engines")
    from qdrant_client import QdrantClient, models

    return QdrantClient, models


def point_id(doc: str, chunk_id: str) -> str:
    """The point id of a chunk: a name-based UUID (the same chunk always lands on the same point)."""
    return str(uuid.uuid5(_NS, f"{doc}\x1f{chunk_id}"))


class QdrantEngine:
    """A Qdrant collection holding an index's chunks.

    Parameters
    ----------
    client:
        A ``qdrant_client.QdrantClient`` (server or local mode).
    collection:
        Collection name (default ``structrag``).
    batch_size:
        Points per upsert request.
    """

    def __init__(self, client: Any, collection: str = "structrag", *, batch_size: int = 256) -> None:
        _require()
        if batch_size < 1:
            raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
        self.client = client
        self.collection = collection
        self.batch_size = int(batch_size)

    @classmethod
    def local(cls, path: str | os.PathLike | None = None, collection: str = "structrag", **kwargs: Any) -> "QdrantEngine":
        """qdrant-client's embedded mode: in a folder (persisted) or in memory (``path=None``)."""
        QdrantClient, _ = _require()
        client = QdrantClient(path=str(path)) if path is not None else QdrantClient(location=":memory:")
        return cls(client, collection, **kwargs)

    @property
    def documents_collection(self) -> str:
        return f"{self.collection}_documents"

    def close(self) -> None:
        self.client.close()

    # --- schema ---------------------------------------------------------------------------
    def create(self, dim: int | None, *, recreate: bool = False) -> None:
        """Create the collections (``dim``: the embedding size, None for a lexical index)."""
        _, models = _require()
        for name in (self.collection, self.documents_collection):
            if self.client.collection_exists(name):
                if not recreate:
                    continue
                self.client.delete_collection(name)
            if name == self.collection:
                vectors = {_DENSE: models.VectorParams(size=int(dim), distance=models.Distance.DOT)} if dim else {}
                self.client.create_collection(name, vectors_config=vectors,
                                              sparse_vectors_config={_SPARSE: models.SparseVectorParams()})
                with warnings.catch_warnings():  # local mode says payload indexes do nothing there
                    warnings.simplefilter("ignore", UserWarning)
                    for field, kind in (("doc", models.PayloadSchemaType.KEYWORD),
                                        ("section_path", models.PayloadSchemaType.KEYWORD)):
                        self.client.create_payload_index(name, field, field_schema=kind)
            else:
                # one tiny vector per point: a collection must have one; this one is only scrolled
                self.client.create_collection(name, vectors_config=models.VectorParams(size=1, distance=models.Distance.DOT))

    def synced_documents(self) -> dict[str, str]:
        """name -> identity (content hash and options) of the documents in the engine."""
        if not self.client.collection_exists(self.documents_collection):
            return {}
        out: dict[str, str] = {}
        offset = None
        while True:
            points, offset = self.client.scroll(self.documents_collection, limit=1000, offset=offset,
                                                with_payload=True, with_vectors=False)
            for p in points:
                out[p.payload["doc"]] = p.payload["identity"]
            if offset is None:
                return out

    # --- writing ----------------------------------------------------------------------------
    def _points(self, chunks) -> list:
        _, models = _require()
        out = []
        for c in chunks:
            vec: dict[str, Any] = {_SPARSE: models.SparseVector(indices=c.sparse[0], values=c.sparse[1])}
            if c.vector is not None:
                vec[_DENSE] = np.asarray(c.vector, dtype=np.float32).tolist()
            out.append(models.PointStruct(id=point_id(c.doc, c.chunk_id), vector=vec, payload=c.payload()))
        return out

    def _delete_doc(self, name: str) -> None:
        _, models = _require()
        flt = models.Filter(must=[models.FieldCondition(key="doc", match=models.MatchValue(value=name))])
        for coll in (self.collection, self.documents_collection):
            self.client.delete(coll, points_selector=models.FilterSelector(filter=flt), wait=True)

    def sync(self, index, *, progress: bool | None = None) -> SyncReport:
        """Make the engine hold exactly ``index``'s documents (send new or changed ones, drop the rest).

        When any document was added or removed, the BM25 weights of every other
        chunk are rewritten too (they hold the collection's idf).
        """
        _, models = _require()
        ex = Exporter(index)
        dim = int(index.corpus.chunk_vectors.shape[1]) if index.corpus.has_dense else None
        self.create(dim)
        want = ex.documents()
        added, removed, unchanged = ex.plan(want, self.synced_documents())
        for n in removed:
            self._delete_doc(n)
        written = 0
        bar = progress_bar(len(added), desc="sync (qdrant)", unit="doc", enabled=progress)
        for n in added:
            written += self._send(ex, n, want[n][0])
            bar.update(1)
        bar.close()
        refreshed = 0
        if added or removed:
            for n in unchanged:
                ids = self._chunk_ids(n)
                sparse = ex.sparse(n)
                if len(ids) != len(sparse):  # the engine's copy is incomplete: send the document again
                    self._delete_doc(n)
                    written += self._send(ex, n, want[n][0])
                    continue
                upd = [models.PointVectors(id=point_id(n, cid),
                                           vector={_SPARSE: models.SparseVector(indices=s[0], values=s[1])})
                       for cid, s in zip(ids, sparse)]
                for i in range(0, len(upd), self.batch_size):
                    self.client.update_vectors(self.collection, points=upd[i : i + self.batch_size], wait=True)
                refreshed += len(upd)
        return SyncReport(added, removed, unchanged, written, refreshed)

    def _send(self, ex: Exporter, name: str, identity: str) -> int:
        """Upsert one document's points, then its entry in the documents collection (so a crash between
        the two leaves the document unlisted, and the next sync sends it again)."""
        _, models = _require()
        points = self._points(ex.chunks(name))
        for i in range(0, len(points), self.batch_size):
            self.client.upsert(self.collection, points=points[i : i + self.batch_size], wait=True)
        self.client.upsert(self.documents_collection, wait=True, points=[models.PointStruct(
            id=point_id(name, ""), vector=[1.0], payload={"doc": name, "identity": identity, "chunks": len(points)})])
        return len(points)

    def _chunk_ids(self, name: str) -> list[str]:
        """The chunk ids of one synced document, in reading order."""
        _, models = _require()
        flt = models.Filter(must=[models.FieldCondition(key="doc", match=models.MatchValue(value=name))])
        got: list[tuple[int, str]] = []
        offset = None
        while True:
            points, offset = self.client.scroll(self.collection, scroll_filter=flt, limit=1000, offset=offset,
                                                with_payload=["chunk_id", "ordinal"], with_vectors=False)
            got.extend((p.payload["ordinal"], p.payload["chunk_id"]) for p in points)
            if offset is None:
                return [c for _, c in sorted(got)]

    def count(self) -> int:
        return int(self.client.count(self.collection, exact=True).count)

    # --- the first stage ------------------------------------------------------------------------
    def _filter(self, doc: str | Sequence[str] | None):
        if doc is None:
            return None
        _, models = _require()
        match = models.MatchValue(value=doc) if isinstance(doc, str) else models.MatchAny(any=list(doc))
        return models.Filter(must=[models.FieldCondition(key="doc", match=match)])

    def _hits(self, points) -> list[EngineHit]:
        return [EngineHit(p.payload["doc"], p.payload["chunk_id"], float(p.score), p.payload) for p in points]

    def lexical(self, tokens: Sequence[str], n: int, *, doc: str | Sequence[str] | None = None) -> list[EngineHit]:
        """BM25 top ``n`` (chunks sharing no term with the query are not returned)."""
        _, models = _require()
        idx, val = query_sparse(tokens)
        if not idx:
            return []
        res = self.client.query_points(self.collection, query=models.SparseVector(indices=idx, values=val),
                                       using=_SPARSE, limit=int(n), query_filter=self._filter(doc), with_payload=True)
        return [h for h in self._hits(res.points) if h.score > 0]

    def dense(self, vector: np.ndarray, n: int, *, doc: str | Sequence[str] | None = None) -> list[EngineHit]:
        """Nearest ``n`` chunks by inner product of unit vectors."""
        res = self.client.query_points(self.collection, query=np.asarray(vector, dtype=np.float32).tolist(),
                                       using=_DENSE, limit=int(n), query_filter=self._filter(doc), with_payload=True)
        return self._hits(res.points)


def qdrant_vector_store(engine: QdrantEngine, **kwargs: Any):
    """LlamaIndex's ``QdrantVectorStore`` over the engine's collection (llama-index-vector-stores-qdrant).

    Nodes come back with the chunk text and the payload as metadata
    (``section_path``, ``pages``, ``doc``, ...); filter with LlamaIndex's
    ``MetadataFilters`` on those keys.
    """
    try:
        from llama_index.vector_stores.qdrant import QdrantVectorStore
    except ImportError as e:
        raise ConfigError("the LlamaIndex path needs llama-index-vector-stores-qdrant, which is not installed",
                          hint='pip install "structrag[engines]"') from e
    return QdrantVectorStore(collection_name=engine.collection, client=engine.client, dense_vector_name=_DENSE,
                             text_key="text", **kwargs)
