"""Retrieval over structrag chunks: BM25, dense, hierarchy features, the LightGBM ranker, the persisted index."""
