"""Retrieval over structrag chunks: BM25, dense, hierarchy features, the LightGBM ranker, the persisted index.

>>> from retrievers import Index                                    # doctest: +SKIP
>>> index = Index.build(["reports/"], "my-index")
>>> index.search("capital expenditure 2018", k=5, doc="3M_2018_10K.pdf", mode="ranker")

The dense extra (sentence-transformers, faiss) is imported only when dense
retrieval is used; the LlamaIndex adapter lives in :mod:`retrievers.llama_index`.
"""

from __future__ import annotations

from .bm25 import BM25Params, ReferenceBM25, SparseBM25
from .corpus import Corpus
from .features import ALL_FEATURES, DENSE_FEATURES, HELD_FEATURES, LEXICAL_FEATURES, compute_features
from .index import MODES, AddReport, DocInfo, Hit, Index
from .ranker import LambdaRanker, rrf
from .tokenization import Tokenizer, tokenize
from .training import Query, cross_validate, load_queries, make_training_set, train_ranker

__all__ = [
    "Index",
    "Hit",
    "AddReport",
    "DocInfo",
    "MODES",
    "Tokenizer",
    "tokenize",
    "BM25Params",
    "SparseBM25",
    "ReferenceBM25",
    "Corpus",
    "ALL_FEATURES",
    "LEXICAL_FEATURES",
    "DENSE_FEATURES",
    "HELD_FEATURES",
    "compute_features",
    "LambdaRanker",
    "rrf",
    "Query",
    "load_queries",
    "make_training_set",
    "train_ranker",
    "cross_validate",
]
