"""The nested benchmark's prepared features in memory, and how one ranking of them is scored.

Shared by :mod:`eval.bench.nested` (the runs) and :mod:`eval.bench.nested_tables` (the tables).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from eval.retrieval_metrics import average_precision

__all__ = ["BASELINES", "RRF_K", "Data", "pages_ap", "fused_order", "ranked_pages", "query_ap", "top_pages"]

RRF_K = 60.0
BASELINES = ("page-bm25", "bm25", "dense", "hybrid")


class Data:
    def __init__(self, cache: Path) -> None:
        z = np.load(cache / "gen" / "nested-features.npz")
        self.meta = json.loads((cache / "gen" / "nested-meta.json").read_text(encoding="utf-8"))
        self.features = tuple(self.meta["features"])
        self.test_X, self.test_y, self.test_group = z["test_X"], z["test_y"], z["test_group"]
        self.train_X, self.train_y, self.train_group = z["train_X"], z["train_y"], z["train_group"]
        self.test_q = self.meta["test"]
        self.train_q = self.meta["train"]
        self.test_sl = _slices(self.test_group)
        self.train_sl = _slices(self.train_group)
        self.cand_pages = self.meta["cand_pages"]
        self.bm25_rank_col = self.features.index("bm25_rank")
        self.families = sorted({q["family"] for q in self.test_q})
        self.fam_docs = defaultdict(set)
        for q in self.test_q:
            self.fam_docs[q["family"]].add(q["doc"])
        self.set_of_family = {q["family"]: q["set"] for q in self.test_q}

    def train_rows(self, excluded_families: set[str]) -> list[int]:
        """Training groups with neither an excluded family nor a question on one of their documents."""
        docs = set().union(*(self.fam_docs[f] for f in excluded_families)) if excluded_families else set()
        return [i for i, q in enumerate(self.train_q) if q["family"] not in excluded_families and q["doc"] not in docs]

    def test_of(self, families: set[str]) -> list[int]:
        return [i for i, q in enumerate(self.test_q) if q["family"] in families]


def _slices(group: np.ndarray) -> list[slice]:
    ends = np.cumsum(group)
    return [slice(int(e - g), int(e)) for g, e in zip(group, ends)]


def pages_ap(order_pages: list[list[int]], relevant: set[int]) -> float:
    """AP of the pages of ranked candidates (each page once, first-hit order); NaN without relevant pages."""
    if not relevant:
        return float("nan")
    return average_precision(list(dict.fromkeys(p for pages in order_pages for p in pages)), relevant)


def fused_order(scores: np.ndarray, bm25_rank: np.ndarray, w: float) -> np.ndarray:
    # Not retrievers.rank.search.rrf: the BM25 side is a feature column whose tied candidates share the
    # best rank, ranks count from 0, and ties fall back to the candidate order -- the weighting the
    # nested runs chose with; rrf (ranked lists, ranks from 1) would move their figures.
    order = np.argsort(-scores, kind="stable")
    if not w:
        return order
    r = np.empty(scores.size)
    r[order] = np.arange(scores.size)
    # bm25_rank shares the best rank among ties; break ties by the candidate order (BM25 first)
    s = (1 - w) / (RRF_K + r) + w / (RRF_K + bm25_rank)
    return np.argsort(-s, kind="stable")


def ranked_pages(data: Data, i: int, scores: np.ndarray, w: float) -> list[list[int]]:
    order = fused_order(scores, data.test_X[data.test_sl[i], data.bm25_rank_col], w)
    pages = data.cand_pages[i]
    return [pages[j] for j in order]


def query_ap(data: Data, i: int, scores: np.ndarray, w: float) -> float:
    return pages_ap(ranked_pages(data, i, scores, w), set(data.test_q[i]["relevant"]))


def top_pages(order_pages: list[list[int]], n: int = 10) -> list[int]:
    out: list[int] = []
    for pages in order_pages:
        for p in pages:
            if p not in out:
                out.append(p)
                if len(out) == n:
                    return out
    return out
