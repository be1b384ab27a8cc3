"""The embedding cache (``$STRUCTRAG_EMBEDDING_CACHE``): texts already embedded are not embedded again."""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

__all__ = ["EmbeddingCache"]


class EmbeddingCache:
    """Embeddings in a SQLite file, keyed by (model, sha1 of text); float32 bytes, no pickle."""

    def __init__(self, path: str | os.PathLike, model_key: str) -> None:
        import sqlite3

        self.path = str(path)
        self.model_key = model_key
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        self._conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("CREATE TABLE IF NOT EXISTS emb (model TEXT, key TEXT, vec BLOB, PRIMARY KEY (model, key))")

    @staticmethod
    def _k(text: str) -> str:
        import hashlib

        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def get(self, texts: Sequence[str]) -> list[np.ndarray | None]:
        keys = [self._k(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        uniq = sorted(set(keys))
        for i in range(0, len(uniq), 500):
            part = uniq[i : i + 500]
            q = f"SELECT key, vec FROM emb WHERE model = ? AND key IN ({','.join('?' * len(part))})"
            for k, blob in self._conn.execute(q, [self.model_key, *part]):
                found[k] = np.frombuffer(blob, dtype=np.float32)
        return [found.get(k) for k in keys]

    def put(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        rows = [(self.model_key, self._k(t), np.asarray(v, dtype=np.float32).tobytes()) for t, v in zip(texts, vectors)]
        self._conn.execute("BEGIN")
        self._conn.executemany("INSERT OR REPLACE INTO emb (model, key, vec) VALUES (?, ?, ?)", rows)
        self._conn.execute("COMMIT")
