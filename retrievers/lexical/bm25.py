"""BM25 scoring: a sparse-matrix engine (bm25s) and a reference (rank-bm25).

Both score the same formula, so they agree to float precision (tested):

    score(q, d) = sum over query terms t (repeats counted) of
                  idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))

with ``idf = "lucene"``: ``log(1 + (N - df + 0.5) / (df + 0.5))`` (never negative,
the default: within one report many terms occur in more than half of the
passages, and Robertson's idf would make them count *against* a passage), or
``idf = "robertson"``: ``log((N - df + 0.5) / (df + 0.5))`` floored at 0.

:class:`SparseBM25` precomputes the per-(passage, term) weights in a CSC
matrix (bm25s' eager index): a query costs one pass over the postings of its
terms, which is what makes it the collection-wide first stage.
:class:`ReferenceBM25` is rank-bm25's ``BM25Okapi`` scoring loop with the
chosen idf; it is slow and exists to check the engine.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Literal, NamedTuple, Sequence

import numpy as np

from structrag.errors import ConfigError, IndexFormatError

__all__ = ["BM25Params", "SparseBM25", "ReferenceBM25", "TopK"]

IdfKind = Literal["lucene", "robertson"]


class BM25Params(NamedTuple):
    k1: float = 1.5
    b: float = 0.75
    idf: IdfKind = "lucene"


class TopK(NamedTuple):
    """Row indices (best first) and their scores."""

    indices: np.ndarray
    scores: np.ndarray


def _check(k1: float, b: float, idf: str) -> None:
    if not k1 >= 0:
        raise ConfigError(f"BM25 k1 must be >= 0, got {k1}")
    if not 0 <= b <= 1:
        raise ConfigError(f"BM25 b must be in [0, 1], got {b}")
    if idf not in ("lucene", "robertson"):
        raise ConfigError(f"unknown idf {idf!r}; use 'lucene' or 'robertson'")


def top_k(scores: np.ndarray, k: int, rows: np.ndarray | None = None) -> TopK:
    """The ``k`` best of ``scores`` (restricted to ``rows`` if given), ties by lower index.

    Rows scoring exactly 0 are kept (a caller filters them if it wants): with
    restricted scope a caller may need a full ranking.
    """
    if rows is not None:
        sub = scores[rows]
        t = top_k(sub, k)
        return TopK(np.asarray(rows)[t.indices], t.scores)
    n = scores.shape[0]
    k = min(int(k), n)
    if k <= 0:
        return TopK(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=scores.dtype))
    if k < n:
        part = np.argpartition(-scores, k - 1)[:k]
    else:
        part = np.arange(n)
    # stable order: score desc, then index asc
    order = np.lexsort((part, -scores[part]))
    idx = part[order]
    return TopK(idx.astype(np.int64), scores[idx])


class SparseBM25:
    """BM25 over a fixed corpus, on bm25s' sparse (CSC) eager index.

    ``fit(corpus_tokens)`` indexes a sequence of token lists; ``scores(query)``
    returns one score per corpus row.  Fitted state: ``n_docs_``,
    ``vocab_`` (term -> column).  Saved with :meth:`save` as ``.npy`` arrays
    (``allow_pickle=False``) and JSON; :meth:`load` never unpickles.
    """

    def __init__(self, k1: float = 1.5, b: float = 0.75, idf: IdfKind = "lucene") -> None:
        _check(k1, b, idf)
        self.k1 = float(k1)
        self.b = float(b)
        self.idf = idf

    @property
    def params(self) -> BM25Params:
        return BM25Params(self.k1, self.b, self.idf)

    def _engine(self):
        import bm25s

        # "atire" term-frequency component = rank-bm25's (k1 + 1) numerator
        return bm25s.BM25(
            k1=self.k1, b=self.b, method="atire", idf_method=self.idf, backend="numpy", csc_backend="scipy"
        )

    def fit(self, corpus_tokens: Sequence[Sequence[str]]) -> "SparseBM25":
        import bm25s

        n = len(corpus_tokens)
        vocab: dict[str, int] = {}
        ids: list[list[int]] = []
        for toks in corpus_tokens:
            ids.append([vocab.setdefault(t, len(vocab)) for t in toks])
        self.n_docs_ = n
        self.vocab_ = vocab
        if n == 0 or not vocab:
            self._bm = None
            return self
        # bm25s' robertson idf floors log's argument at 1 (idf 0), as documented above
        eng = self._engine()
        eng.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)
        self._bm = eng
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "n_docs_"):
            raise ConfigError("SparseBM25 is not fitted: call fit(corpus_tokens) or load(path) first")

    def term_ids(self, query_tokens: Sequence[str]) -> np.ndarray:
        """Columns of the query's known terms, repeats kept."""
        self._check_fitted()
        v = self.vocab_
        return np.asarray([v[t] for t in query_tokens if t in v], dtype=np.int64)

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """BM25 of the query against every row (float32, length ``n_docs_``)."""
        self._check_fitted()
        ids = self.term_ids(query_tokens)
        if self._bm is None or ids.size == 0:
            return np.zeros(self.n_docs_, dtype=np.float32)
        # one bincount over the query terms' postings of bm25s' CSC matrix: the same sums as
        # bm25s' get_scores (np.add.at per term), ~10x faster on long postings
        sc = self._bm.scores
        indptr, indices, data = sc["indptr"], sc["indices"], sc["data"]
        spans = [(int(indptr[i]), int(indptr[i + 1])) for i in ids]
        rows = np.concatenate([indices[a:b] for a, b in spans])
        weights = np.concatenate([data[a:b] for a, b in spans])
        return np.bincount(rows, weights=weights, minlength=self.n_docs_).astype(np.float32)

    def top_k(self, query_tokens: Sequence[str], k: int = 10, rows: np.ndarray | None = None) -> TopK:
        """Best ``k`` rows (optionally among ``rows``), best first."""
        return top_k(self.scores(query_tokens), k, rows)

    def contains(self, query_tokens: Sequence[str]) -> list[np.ndarray]:
        """For each distinct known query term (in first-seen order), the rows containing it."""
        self._check_fitted()
        out = []
        seen = set()
        if self._bm is None:
            return out
        indptr = self._bm.scores["indptr"]
        indices = self._bm.scores["indices"]
        for t in query_tokens:
            if t in seen or t not in self.vocab_:
                continue
            seen.add(t)
            c = self.vocab_[t]
            out.append(indices[indptr[c] : indptr[c + 1]])
        return out

    # --- persistence -----------------------------------------------------
    def save(self, path: str | os.PathLike) -> None:
        """Write into the (new or empty) directory ``path``."""
        self._check_fitted()
        p = Path(path)
        p.mkdir(parents=True, exist_ok=True)
        meta = {"k1": self.k1, "b": self.b, "idf": self.idf, "n_docs": self.n_docs_, "format": "structrag-bm25/1"}
        if self._bm is not None:
            self._bm.save(p / "bm25s", show_progress=False)
        else:
            (p / "vocab.json").write_text(json.dumps(self.vocab_, ensure_ascii=False), encoding="utf-8")
        (p / "params.json").write_text(json.dumps(meta), encoding="utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike) -> "SparseBM25":
        import bm25s

        p = Path(path)
        try:
            meta = json.loads((p / "params.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise IndexFormatError(f"cannot read BM25 index: {e}", path=p) from e
        if meta.get("format") != "structrag-bm25/1":
            raise IndexFormatError(f"not a structrag BM25 index (format {meta.get('format')!r})", path=p)
        try:
            obj = cls(meta["k1"], meta["b"], meta["idf"])
            obj.n_docs_ = int(meta["n_docs"])
            if (p / "bm25s").is_dir():
                bm = bm25s.BM25.load(p / "bm25s", allow_pickle=False, show_progress=False)
                obj._bm = bm
                obj.vocab_ = bm.vocab_dict
            else:
                obj._bm = None
                obj.vocab_ = json.loads((p / "vocab.json").read_text(encoding="utf-8"))
        except Exception as e:  # noqa: BLE001 - a damaged cache file fails in many ways; the caller rebuilds it
            raise IndexFormatError(f"cannot read BM25 index: {type(e).__name__}: {e}", path=p) from e
        return obj


class ReferenceBM25:
    """rank-bm25's ``BM25Okapi`` with the idf of :class:`SparseBM25` (for checking).

    ``idf="okapi"`` keeps rank-bm25's own idf (negative idfs replaced by
    ``epsilon * mean idf``), which equals ``"robertson"`` when no term occurs
    in more than half the documents.
    """

    def __init__(self, k1: float = 1.5, b: float = 0.75, idf: Literal["lucene", "robertson", "okapi"] = "lucene",
                 epsilon: float = 0.25) -> None:
        if idf != "okapi":
            _check(k1, b, idf)
        self.k1, self.b, self.idf, self.epsilon = float(k1), float(b), idf, epsilon

    def fit(self, corpus_tokens: Sequence[Sequence[str]]) -> "ReferenceBM25":
        from rank_bm25 import BM25Okapi

        kind = self.idf

        class _Okapi(BM25Okapi):
            def _calc_idf(self, nd):  # noqa: D401 - rank-bm25 hook
                if kind == "okapi":
                    return super()._calc_idf(nd)
                for word, freq in nd.items():
                    inner = (self.corpus_size - freq + 0.5) / (freq + 0.5)
                    if kind == "lucene":
                        self.idf[word] = math.log(1.0 + inner)
                    else:
                        self.idf[word] = math.log(max(inner, 1.0))

        self.n_docs_ = len(corpus_tokens)
        self._bm = _Okapi([list(t) for t in corpus_tokens], k1=self.k1, b=self.b, epsilon=self.epsilon)
        return self

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        return np.asarray(self._bm.get_scores(list(query_tokens)), dtype=np.float64)
