"""Lexical retrieval, the first stage: the BM25 tokenizer and the BM25 engines.

Modules: :mod:`.tokenizer` (text to BM25 terms, English and CJK), :mod:`.bm25` (the sparse-matrix engine,
its reference, top-k).
"""
