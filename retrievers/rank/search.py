"""The rank stage's front: a search in one of its modes, over a corpus, from the query's scores to the best rows.

``bm25``    BM25 over chunks (bm25s sparse index).
``dense``   embedding similarity (exact within a scope or a small collection, else approximate).
``hybrid``  reciprocal-rank fusion of the two (no training, :func:`rrf`).
``ranker``  (default) LightGBM LambdaRank over the hierarchy features (:mod:`retrievers.rank.features`)
            of the first stage's candidates (:func:`first_stage`).

:func:`rank` runs a mode for :class:`retrievers.index.Index`; :class:`retrievers.engines.EngineRetriever`
takes its first stage from a search engine and shares the rest (the checks, :func:`rrf`,
:func:`rerank`), so both check a request the same way and rerank with the same features and model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Literal, NamedTuple, Sequence

import numpy as np

from structrag.errors import ConfigError, ModelError

from ..lexical.bm25 import TopK, top_k
from ..store.arrays import VectorSearch
from ..store.corpus import Corpus
from .features import available_features, compute_features
from .named_documents import named_documents
from .query import QueryScores
from .ranker import LambdaRanker, default_model_path

__all__ = ["Hit", "page_fields", "Mode", "MODES", "RANKER_FILE", "check_request", "check_query", "no_dense_error",
           "bm25_top", "dense_top", "named_docs", "first_stage", "rrf", "rerank", "named_first", "load_ranker",
           "check_ranker", "rank"]

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


def no_dense_error(path: str | Path | None, mode: str = "dense") -> ConfigError:
    return ConfigError(f"--mode {mode} needs embeddings, and this index has none (built without dense retrieval)",
                       path=path, hint="use --mode bm25 or ranker, or build a dense index: pip install structrag[dense]")


def check_request(mode: str, k: int, *, has_dense: bool, path: str | Path | None = None) -> None:
    """Refuse an unknown ``mode``, ``k`` below 1, or ``dense`` / ``hybrid`` on an index without embeddings
    (hybrid is half dense: answering it with BM25 alone would hide that)."""
    if mode not in MODES:
        raise ConfigError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
    if k < 1:
        raise ConfigError(f"k must be at least 1, got {k}")
    if mode in ("dense", "hybrid") and not has_dense:
        raise no_dense_error(path, mode)


def bm25_top(qs: QueryScores, rows: np.ndarray | None, n: int) -> TopK:
    """The ``n`` best chunks by BM25 (among ``rows`` if given); chunks sharing no term are left out."""
    t = top_k(qs.chunk_bm25, n, rows)
    keep = t.scores > 0
    return TopK(t.indices[keep], t.scores[keep])


def dense_top(vectors: VectorSearch, qs: QueryScores, rows: np.ndarray | None, n: int) -> TopK:
    """The ``n`` chunks nearest the query's vector (among ``rows`` if given); ConfigError without one."""
    if qs.query_vector is None:
        raise no_dense_error(vectors.path)
    return vectors.top(qs.query_vector, rows, n)


def named_docs(corpus: Corpus, qs: QueryScores, doc: str | None = None) -> list[int]:
    """Corpus indices of the documents the question names (:func:`retrievers.rank.named_documents.named_documents`),
    when searching the collection (no ``doc``) and they are not all of it."""
    if doc is not None or qs.doc_cues is None:
        return []
    named = named_documents(qs.doc_cues)
    return [int(i) for i in named] if len(named) < len(corpus.doc_names) else []


def first_stage(corpus: Corpus, qs: QueryScores, rows: np.ndarray | None, n: int, vectors: VectorSearch,
                named: Sequence[int] = ()) -> np.ndarray:
    """The ranker's candidates among ``rows`` (None: all): BM25 top ``n``, then dense top ``n``, then the top
    ``n`` by BM25 of the question's concept expansion (:mod:`retrievers.rank.concepts`), each without rows
    already in: a statement row worded only in the filer's words must reach the ranker.  The documents
    the question names (``named``, :func:`named_docs`) add their own top ``n`` by each: every 10-K shares
    the question's words, and the named one's chunks must compete with the rest in the one ranking."""
    out = bm25_top(qs, rows, n).indices
    more = []
    if qs.query_vector is not None:
        more.append(dense_top(vectors, qs, rows, n).indices)
    if qs.x_chunk_bm25 is not None:
        more.append(bm25_top(qs._replace(chunk_bm25=qs.x_chunk_bm25), rows, n).indices)
    for i in named:
        routed = corpus.doc_rows(i)
        if rows is not None:
            routed = np.intersect1d(routed, rows)
        more.append(bm25_top(qs, routed, n).indices)
        if qs.query_vector is not None:
            more.append(dense_top(vectors, qs, routed, n).indices)
        if qs.x_chunk_bm25 is not None:
            more.append(bm25_top(qs._replace(chunk_bm25=qs.x_chunk_bm25), routed, n).indices)
    for m in more:
        out = np.concatenate([out, m[~np.isin(m, out)]])
    return out


def rrf(rankings: Sequence[Sequence[int]], *, k: float = 60.0, weights: Sequence[float] | None = None
        ) -> tuple[np.ndarray, np.ndarray]:
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

    ``named``: corpus indices of the documents the question names (:func:`named_docs`);
    their chunks come first, each part in the model's order (scores unchanged, so a later hit may score
    higher).  Across a collection the issuer and period a question names decide the document more surely
    than any chunk's wording."""
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


def rank(corpus: Corpus, qs: QueryScores, *, mode: Mode, k: int, vectors: VectorSearch,
         model: Callable[[], LambdaRanker], rows: np.ndarray | None = None, doc: str | None = None,
         candidates: int = 100, route: bool = True) -> TopK:
    """Corpus rows and scores of the best ``k`` chunks for the query's scores ``qs`` in ``mode`` (a request
    :func:`check_request` passed).

    ``rows``: the scope (None: the collection); ``doc``: the document it was asked in (None: the
    collection, where the documents the question names are routed, :func:`named_docs`); ``candidates``:
    first-stage depth per retriever for ``ranker`` and ``hybrid``; ``vectors``: the corpus's vector search;
    ``model``: gives the ranker (called only when there are candidates to rank); ``route``: put the named
    documents' chunks first (``ranker`` mode).
    """
    if corpus.n_chunks == 0:
        return TopK(np.zeros(0, np.int64), np.zeros(0, np.float32))
    if mode == "bm25":
        return bm25_top(qs, rows, k)
    if mode == "dense":
        return dense_top(vectors, qs, rows, k)
    n = max(candidates, k)
    if mode == "hybrid":
        ids, s = rrf([bm25_top(qs, rows, n).indices, dense_top(vectors, qs, rows, n).indices])
        return TopK(ids[:k], s[:k])
    named = named_docs(corpus, qs, doc)
    cand = first_stage(corpus, qs, rows, n, vectors, named)
    if cand.size == 0:
        return TopK(cand, np.zeros(0, np.float32))
    order, s = rerank(corpus, qs, cand, model(), k, named if route else ())
    return TopK(cand[order], s)
