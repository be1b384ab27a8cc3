"""The embedding cache (``$STRUCTRAG_EMBEDDING_CACHE``): texts already embedded are not embedded again."""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from structrag.errors import ConfigError

__all__ = ["EmbeddingCache"]


class EmbeddingCache:
    """Embeddings in a SQLite file, keyed by (model, sha1 of text); float32 bytes, no pickle.

    ``source`` names where the path came from in errors (the argument, or ``$STRUCTRAG_EMBEDDING_CACHE``).
    A path that is no cache is an error rather than a warning and a run without one: the setting was made
    on purpose, a run without it embeds everything again (minutes to hours) with a line on stderr as its
    only sign, and a file that is not a cache is someone's data, never written into.
    """

    def __init__(self, path: str | os.PathLike, model_key: str, *, source: str = "cache") -> None:
        import sqlite3

        self.path = str(path)
        self.model_key = model_key
        hint = (f"point {source} at a new file (it is created) or at an earlier embedding cache, or unset it; "
                "the file named is left as it is")
        if os.path.exists(self.path) and not os.path.isfile(self.path):
            raise ConfigError(f"{source} names a folder or a special file, not an embedding cache", path=self.path,
                              hint=hint)
        conn = None
        try:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None, check_same_thread=False)
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables and "emb" not in tables:
                raise ConfigError(f"{source} names a SQLite database of something else, not an embedding cache",
                                  path=self.path, hint=hint)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("CREATE TABLE IF NOT EXISTS emb (model TEXT, key TEXT, vec BLOB, PRIMARY KEY (model, key))")
        except (sqlite3.Error, OSError) as exc:
            if conn is not None:
                conn.close()
            raise ConfigError(f"{source} is not a usable embedding cache ({exc})", path=self.path,
                              hint=hint) from None
        except ConfigError:
            conn.close()  # type: ignore[union-attr]
            raise
        self._conn = conn

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
