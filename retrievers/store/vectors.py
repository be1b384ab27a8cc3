"""Searched vectors: the faiss index of a collection, and exact search within a scope."""

from __future__ import annotations

import os
from typing import Literal

import numpy as np

from structrag.errors import ConfigError, IndexFormatError

from ..embed.runtimes import require_dense
from ..lexical.bm25 import TopK, top_k

__all__ = ["VectorIndex", "exact_top_k"]


class VectorIndex:
    """Nearest neighbours by inner product over unit vectors (faiss).

    ``kind="auto"``: exact (``IndexFlatIP``) below ``exact_below`` vectors,
    HNSW above; ``"flat"``, ``"hnsw"`` and ``"ivf"`` force one.  Saved with
    faiss' own binary format (no pickle).
    """

    def __init__(
        self,
        kind: Literal["auto", "flat", "hnsw", "ivf"] = "auto",
        *,
        exact_below: int = 20_000,
        hnsw_m: int = 32,
        ef_construction: int = 80,
        ef_search: int = 128,
        nlist: int | None = None,
        nprobe: int = 16,
    ) -> None:
        if kind not in ("auto", "flat", "hnsw", "ivf"):
            raise ConfigError(f"unknown vector index kind {kind!r}; use auto, flat, hnsw or ivf")
        self.kind = kind
        self.exact_below = int(exact_below)
        self.hnsw_m = int(hnsw_m)
        self.ef_construction = int(ef_construction)
        self.ef_search = int(ef_search)
        self.nlist = nlist
        self.nprobe = int(nprobe)

    def fit(self, vectors: np.ndarray) -> "VectorIndex":
        require_dense("a vector index")
        import faiss

        x = np.ascontiguousarray(vectors, dtype=np.float32)
        if x.ndim != 2:
            raise ConfigError(f"vectors must be 2-D, got shape {x.shape}")
        n, d = x.shape
        kind = self.kind
        if kind == "auto":
            kind = "flat" if n < self.exact_below else "hnsw"
        if kind == "flat":
            index = faiss.IndexFlatIP(d)
        elif kind == "hnsw":
            index = faiss.IndexHNSWFlat(d, self.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = self.ef_construction
        else:
            nlist = self.nlist or max(1, int(4 * np.sqrt(max(n, 1))))
            quant = faiss.IndexFlatIP(d)
            index = faiss.IndexIVFFlat(quant, d, nlist, faiss.METRIC_INNER_PRODUCT)
            index.train(x)
        if n:
            index.add(x)
        self._configure(index)
        self.index_ = index
        self.kind_ = kind
        self.n_ = n
        self.dim_ = d
        return self

    def _configure(self, index) -> None:
        import faiss

        if isinstance(index, faiss.IndexHNSW):
            index.hnsw.efSearch = self.ef_search
        elif isinstance(index, faiss.IndexIVF):
            index.nprobe = self.nprobe

    def search(self, query: np.ndarray, k: int = 10) -> TopK:
        q = np.ascontiguousarray(np.asarray(query, dtype=np.float32).reshape(1, -1))
        k = min(int(k), self.n_)
        if k <= 0:
            return TopK(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
        s, i = self.index_.search(q, k)
        keep = i[0] >= 0
        return TopK(i[0][keep].astype(np.int64), s[0][keep])

    def save(self, path: str | os.PathLike) -> None:
        import faiss

        faiss.write_index(self.index_, str(path))

    @classmethod
    def load(cls, path: str | os.PathLike, **params) -> "VectorIndex":
        require_dense("a vector index")
        import faiss

        try:
            index = faiss.read_index(str(path))
        except RuntimeError as e:
            raise IndexFormatError(f"cannot read faiss index: {e}", path=path) from e
        obj = cls(**params)
        obj._configure(index)
        obj.index_ = index
        obj.n_ = index.ntotal
        obj.dim_ = index.d
        obj.kind_ = "hnsw" if isinstance(index, faiss.IndexHNSW) else ("ivf" if isinstance(index, faiss.IndexIVF) else "flat")
        return obj


def exact_top_k(vectors: np.ndarray, query: np.ndarray, k: int, rows: np.ndarray | None = None) -> TopK:
    """Exact inner-product top-k with numpy (for a restricted scope such as one document)."""
    if rows is not None:
        s = vectors[rows] @ query
        t = top_k(s, k)
        return TopK(np.asarray(rows)[t.indices], t.scores)
    return top_k(vectors @ query, k)


