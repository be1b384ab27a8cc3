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
    **dict.fromkeys(("Index", "Hit", "AddReport", "DocInfo", "MODES"), "index"),
    **dict.fromkeys(("ParseOptions", "ChunkOptions"), "ingest.documents"),
    "Tokenizer": "lexical.tokenizer",
    "BM25Params": "lexical.bm25",
    "LambdaRanker": "rank.ranker",
    **dict.fromkeys(("Query", "load_queries", "make_training_set", "train_ranker"), "rank.training"),
}

# What the README documents.  Experiment helpers (cross-validation, leave-one-family-out, the
# feature sets of the ablations) stay importable from their modules: retrievers.rank.training, .features.
__all__ = list(_LAZY)


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
