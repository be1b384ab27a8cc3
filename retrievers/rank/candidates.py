"""The first-stage candidates of one query, as the feature functions read them: :class:`Candidates`.

A feature function (:mod:`retrievers.rank.features`) takes a :class:`Candidates` and returns one value
per candidate.  It reads the corpus, the query's scores (:class:`~retrievers.rank.query.QueryScores`),
the candidates' rows and ancestor nodes, and other features through ``c[name]``: each feature is
computed once per call and kept as float32, the value the ranker reads, so a feature built on another
reads that float32 value.  Also the numeric helpers the feature functions share.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from ..store.corpus import Corpus
from .query import QueryScores

__all__ = ["Candidates", "mask", "zscore", "ranks", "share_of_best"]


class Candidates:
    """The candidate chunks ``rows`` of query ``qs`` over ``corpus``, and their features computed so far.

    ``compute`` maps each feature name to its function (:data:`retrievers.rank.features.FEATURES`).
    """

    def __init__(self, corpus: Corpus, qs: QueryScores, rows: np.ndarray,
                 compute: Mapping[str, Callable[["Candidates"], np.ndarray]]) -> None:
        self.corpus = corpus
        self.qs = qs
        self.rows = rows  # corpus rows of the candidates (int64)
        self.m = rows.shape[0]
        self.anc = corpus.chunk_anc[rows]  # (m, depth): each candidate's ancestor nodes, -1 past its depth
        self.valid = self.anc >= 0
        self.safe = np.where(self.valid, self.anc, 0)  # usable as an index; mask with ``valid``
        self._compute = compute
        self._values: dict[str, np.ndarray] = {}
        self._shared: dict[str, Any] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        """Feature ``name`` of every candidate (float32), computed on first use."""
        v = self._values.get(name)
        if v is None:
            v = self._values[name] = np.asarray(self._compute[name](self), dtype=np.float32)
        return v

    def shared(self, key: str, make: Callable[[], Any]) -> Any:
        """What several features of this query read (``make()`` on first use): computed once."""
        if key not in self._shared:
            self._shared[key] = make()
        return self._shared[key]


def mask(n: int, rows: np.ndarray) -> np.ndarray:
    """Boolean membership over ``n`` rows (a lookup table beats np.isin by ~10x here)."""
    m = np.zeros(max(n, 1), dtype=bool)
    m[rows] = True
    return m


def zscore(v: np.ndarray) -> np.ndarray:
    sd = float(v.std())
    return (v - float(v.mean())) / sd if sd > 1e-12 else np.zeros_like(v)


def ranks(v: np.ndarray) -> np.ndarray:
    """0 for the best value; equal values share the better rank ("min" ranking)."""
    order = np.argsort(-v, kind="stable")
    sv = v[order]
    r = np.arange(v.size, dtype=np.float64)
    # a tie takes the rank of the first of its run
    new_run = np.r_[True, sv[1:] != sv[:-1]]
    r = np.maximum.accumulate(np.where(new_run, r, 0))
    out = np.empty(v.size)
    out[order] = r
    return out


def share_of_best(v: np.ndarray) -> np.ndarray:
    """``v`` over its largest value (all 0 when that is not positive)."""
    top = float(v.max()) if v.size else 0.0
    return v / top if top > 0 else np.zeros_like(v)
