"""Retrieval over structrag chunks: BM25, dense, hierarchy features, the LightGBM ranker, the persisted index.

>>> from retrievers import Index                                    # doctest: +SKIP
>>> index = Index.build(["reports/"], "my-index")
>>> index.search("capital expenditure 2018", k=5, doc="3M_2018_10K.pdf", mode="ranker")

The dense extra (sentence-transformers, faiss) is imported only when dense
retrieval is used; the LlamaIndex adapter lives in :mod:`retrievers.llama_index`.
"""

from __future__ import annotations

from structrag._lazy import lazy_exports

# Names are imported on first use: the CLI loads this package to register its
# sub-commands, and should not pay for numpy/numba/lightgbm imports to print --help.
_LAZY = {
    "BM25Params": "bm25",
    "ReferenceBM25": "bm25",
    "SparseBM25": "bm25",
    "Corpus": "corpus",
    "ALL_FEATURES": "features",
    "DENSE_FEATURES": "features",
    "HELD_FEATURES": "features",
    "LEXICAL_FEATURES": "features",
    "KNOWN_FEATURES": "features",
    "PORTABLE_FEATURES": "features",
    "compute_features": "features",
    "MODES": "index",
    "AddReport": "index",
    "DocInfo": "index",
    "Hit": "index",
    "Index": "index",
    "LambdaRanker": "ranker",
    "rrf": "ranker",
    "Tokenizer": "tokenization",
    "tokenize": "tokenization",
    "Query": "training",
    "cross_validate": "training",
    "family_weights": "training",
    "leave_one_family_out": "training",
    "load_queries": "training",
    "make_training_set": "training",
    "train_ranker": "training",
}

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
    "KNOWN_FEATURES",
    "PORTABLE_FEATURES",
    "compute_features",
    "LambdaRanker",
    "rrf",
    "Query",
    "load_queries",
    "make_training_set",
    "train_ranker",
    "cross_validate",
    "family_weights",
    "leave_one_family_out",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
