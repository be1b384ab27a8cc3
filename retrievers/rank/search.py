"""The rank stage: search modes, the BM25 first stage and the LambdaRank second stage over a corpus.

Shared by :class:`retrievers.index.Index` (first stage from its own arrays) and
:class:`retrievers.engines.EngineRetriever` (first stage from a search
engine), so both check a request the same way and rerank with the same
features (:mod:`retrievers.rank.features`) and model (:mod:`retrievers.rank.ranker`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, NamedTuple, Sequence

import numpy as np

from structrag.errors import ConfigError, ModelError

from ..lexical.bm25 import TopK, top_k
from ..store.corpus import Corpus
from .features import available_features, compute_features
from .query import QueryScores
from .ranker import LambdaRanker, default_model_path

__all__ = ["Hit", "page_fields", "Mode", "MODES", "RANKER_FILE", "check_request", "check_query", "no_dense_error",
           "bm25_top", "rrf", "rerank", "named_first", "load_ranker", "check_ranker"]

Mode = Literal["bm25", "dense", "hybrid", "ranker"]
MODES: tuple[str, ...] = ("bm25", "dense", "hybrid", "ranker")
#: A ranker trained on an index, in the index's folder (``structrag train-ranker``).
RANKER_FILE = "ranker.txt"
_TRAIN_HINT = "structrag train-ranker QUERIES.jsonl --index DIR"


def page_fields(pages: Sequence[int]) -> dict[str, Any]:
    """``pages`` (0-based) and the first and last of them, as hit metadata carries them (None when none)."""
    pages = list(pages)
    return {"pages": pages, "page_start": pages[0] if pages else None, "page_end": pages[-1] if pages else None}


class Hit(NamedTuple):
    """One retrieved chunk.  ``pages`` are 0-based here, 1-based in :meth:`to_dict`."""

    doc: str
    chunk_id: str
    pages: tuple[int, ...]
    section_path: tuple[str, ...]
    score: float
    text: str

    def to_dict(self) -> dict[str, Any]:
        """The CLI's JSON shape (1-based pages)."""
        return {
            "doc": self.doc,
            "chunk_id": self.chunk_id,
            "pages": [p + 1 for p in self.pages],
            "section_path": list(self.section_path),
            "score": float(self.score),
            "text": self.text,
        }


def no_dense_error(path: str | Path | None) -> ConfigError:
    return ConfigError("this index has no embeddings (built without dense retrieval)", path=path,
                       hint="use --mode bm25, or build a dense index: pip install structrag[dense]")


def check_request(mode: str, k: int, *, has_dense: bool, path: str | Path | None = None) -> None:
    """Refuse an unknown ``mode``, ``k`` below 1, or ``dense`` on an index without embeddings."""
    if mode not in MODES:
        raise ConfigError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
    if k < 1:
        raise ConfigError(f"k must be at least 1, got {k}")
    if mode == "dense" and not has_dense:
        raise no_dense_error(path)


def bm25_top(qs: QueryScores, rows: np.ndarray | None, n: int) -> TopK:
    """The ``n`` best chunks by BM25 (among ``rows`` if given); chunks sharing no term are left out."""
    t = top_k(qs.chunk_bm25, n, rows)
    keep = t.scores > 0
    return TopK(t.indices[keep], t.scores[keep])


def rrf(rankings: Sequence[Sequence[int]], *, k: float = 60.0, weights: Sequence[float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Reciprocal-rank fusion of ranked id lists -> (ids best first, fused scores).

    An id missing from a list gets nothing from it.  Ties keep the order of
    first appearance (earlier lists first).
    """
    if k <= 0:
        raise ConfigError(f"RRF k must be > 0, got {k}")
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ConfigError(f"{len(rankings)} rankings but {len(weights)} weights")
    score: dict[int, float] = {}
    for w, ranking in zip(weights, rankings):
        for r, i in enumerate(ranking):
            score[int(i)] = score.get(int(i), 0.0) + w / (k + r + 1)
    ids = list(score)  # insertion order = first appearance
    s = np.asarray([score[i] for i in ids], dtype=np.float64)
    order = np.argsort(-s, kind="stable")
    return np.asarray(ids, dtype=np.int64)[order], s[order]


def rerank(corpus: Corpus, qs: QueryScores, candidates: np.ndarray, model: LambdaRanker, k: int,
           named: Sequence[int] = ()) -> tuple[np.ndarray, np.ndarray]:
    """Positions in ``candidates`` of the ``k`` best by ``model`` over the hierarchy features, and their scores.

    ``named``: corpus indices of the documents the question names (:meth:`retrievers.index.Index.named_docs`);
    their chunks come first, each part in the model's order (scores unchanged, so a later hit may score
    higher).  Across a collection the issuer and period a question names decide the document more surely
    than any chunk's wording (``eval/RESULTS.md`` section 27)."""
    s = model.predict(compute_features(corpus, qs, candidates, model.features))
    order = np.argsort(-s, kind="stable")
    order = order[named_first(corpus, candidates[order], named)][:k]
    return order, s[order]


def named_first(corpus: Corpus, rows: np.ndarray, named: Sequence[int]) -> np.ndarray:
    """The stable permutation of ranked ``rows`` that puts the chunks of documents ``named`` first."""
    if not len(named):
        return np.arange(len(rows))
    return np.argsort(~np.isin(corpus.chunk_doc[rows], named), kind="stable")


def check_ranker(model: LambdaRanker, corpus: Corpus, path: str | Path | None = None) -> LambdaRanker:
    """``model`` if ``corpus`` has every feature it needs; else ModelError."""
    missing = set(model.features) - set(available_features(corpus))
    if missing:
        raise ModelError(f"the ranker needs features this index lacks: {sorted(missing)}", path=path,
                         hint=f"train a ranker on this index: {_TRAIN_HINT}")
    return model


def load_ranker(folder: Path, corpus: Corpus, *, has_dense: bool) -> LambdaRanker:
    """An index's own ranker (``RANKER_FILE`` in ``folder``), else the one shipped for its features."""
    own = folder / RANKER_FILE
    p = own if own.exists() else default_model_path(has_dense)
    if not p.exists():
        raise ModelError("no ranker model found", path=p, hint=f"train one: {_TRAIN_HINT}")
    return check_ranker(LambdaRanker.load(p), corpus, p)


def check_query(query: str, tokens: Sequence[str]) -> None:
    """A query must hold a searchable term: one rule for every mode (a dense model would rank anything
    for "?!", BM25 nothing)."""
    if not tokens:
        raise ConfigError(f"the query {query!r} has no searchable term (a word or a number that is not a "
                          "stop word)", hint="ask with the words you expect in the document")
