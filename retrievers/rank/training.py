"""Training the ranker from queries with relevant pages, and cross-validation.

The query file is JSON lines in the shape of ``retrieval/queries.jsonl`` of the
shared data: ``{"qid", "query", "doc", "relevant_pages": [0-based], ...}``,
optionally ``"company"`` (the cross-validation group) and ``"evidence":
[{"page", "text"}]``.

A chunk's label is page-level, as the relevance is: 1 when one of its pages
is relevant, else 0 (``graded=True`` gives 2 to a chunk on a relevant page that
also holds most of an evidence passage's words).  Each query contributes the
first-stage candidates of its scope (its own document, or the collection) as
one LambdaRank group.
"""

from __future__ import annotations

import os
from pathlib import Path
from collections import Counter
from typing import Any, Callable, Iterable, Literal, NamedTuple, Sequence

import numpy as np

from structrag._progress import progress_bar
from structrag.errors import ConfigError, ReferenceFormatError
from structrag.files import read_json_lines

from .features import KNOWN_FEATURES, compute_features, feature_names, needs_dense
from .ranker import LambdaRanker

__all__ = [
    "Query",
    "load_queries",
    "TrainingSet",
    "make_training_set",
    "concat_training_sets",
    "train_ranker",
    "family_weights",
    "leave_one_family_out",
    "cross_validate",
]

Scope = Literal["doc", "collection"]


class Query(NamedTuple):
    qid: str
    query: str
    doc: str
    relevant_pages: tuple[int, ...]
    group: str  # company (cross-validation group); the document when absent
    source: str
    evidence: tuple[tuple[int, str], ...]
    family: str = ""  # template family (``family``, else the company, else the document)
    lang: str = "en"
    names_section: bool | None = None  # the question names a section of its document (where labelled)


def load_queries(path: str | os.PathLike) -> list[Query]:
    """Read a queries JSON-lines file; errors name the line."""
    p = Path(path)
    out: list[Query] = []
    seen: set[str] = set()
    for n, d in read_json_lines(p, what="queries file"):
        where = f"{p}:{n}"
        if not isinstance(d, dict):
            raise ReferenceFormatError(f"line {n} is not a JSON object", path=p)
        missing = [k for k in ("query", "doc", "relevant_pages") if k not in d]
        if missing:
            raise ReferenceFormatError(f"line {n} lacks {', '.join(missing)}", path=p)
        pages = d["relevant_pages"]
        if not isinstance(pages, list) or not all(isinstance(x, int) and x >= 0 for x in pages):
            raise ReferenceFormatError(f"line {n}: relevant_pages must be a list of 0-based page numbers", path=p)
        qid = str(d.get("qid", where))
        if qid in seen:
            raise ReferenceFormatError(f"line {n}: duplicate qid {qid!r}", path=p)
        seen.add(qid)
        evidence = d.get("evidence") or []
        try:
            if not isinstance(evidence, list) or not all(isinstance(e, dict) for e in evidence):
                raise TypeError
            ev = tuple((int(e["page"]), str(e.get("text", ""))) for e in evidence if "page" in e)
        except (TypeError, ValueError, OverflowError):
            raise ReferenceFormatError(f"line {n}: evidence must be a list of {{\"page\": N, \"text\": ...}}",
                                       path=p) from None
        group = str(d.get("company") or d["doc"])
        # a file that labels section naming has the key on every line (null: names none)
        ns = bool(d["names_section"]) if "names_section" in d else None
        out.append(Query(qid, str(d["query"]), str(d["doc"]), tuple(sorted(set(pages))), group,
                         str(d.get("source", "")), ev, str(d.get("family") or group), str(d.get("lang") or "en"),
                         ns))
    if not out:
        raise ReferenceFormatError("no queries in the file", path=p)
    return out


class TrainingSet(NamedTuple):
    """Candidate rows of every query, their features and labels."""

    X: np.ndarray  # (n_rows, len(features))
    y: np.ndarray  # (n_rows,) graded labels
    group: np.ndarray  # rows per query, in query order
    queries: list[Query]  # the queries kept (those whose document is indexed)
    rows: np.ndarray  # corpus row of each candidate
    first_stage: np.ndarray  # position of each candidate in the first-stage list
    features: tuple[str, ...]

    def query_slices(self) -> list[slice]:
        ends = np.cumsum(self.group)
        return [slice(int(e - g), int(e)) for g, e in zip(self.group, ends)]

    def subset(self, query_indices: Sequence[int], features: Sequence[str] | None = None) -> "TrainingSet":
        sl = self.query_slices()
        idx = np.concatenate([np.arange(sl[i].start, sl[i].stop) for i in query_indices]) if len(query_indices) else np.zeros(0, np.int64)
        cols = [self.features.index(f) for f in (features or self.features)]
        return TrainingSet(
            self.X[np.ix_(idx, cols)] if idx.size else np.zeros((0, len(cols)), np.float32),
            self.y[idx], self.group[list(query_indices)], [self.queries[i] for i in query_indices],
            self.rows[idx], self.first_stage[idx], tuple(features or self.features),
        )


def concat_training_sets(sets: Sequence[TrainingSet]) -> TrainingSet:
    """One training set of the groups of ``sets`` in order (e.g. the same queries'
    document and collection candidates: ``train-ranker --scope both``)."""
    if not sets:
        raise ConfigError("nothing to concatenate: no training sets")
    names = sets[0].features
    if any(s.features != names for s in sets):
        raise ConfigError("training sets with different features cannot be concatenated")
    if len(sets) == 1:
        return sets[0]
    cat = lambda f: np.concatenate([getattr(s, f) for s in sets])  # noqa: E731
    return TrainingSet(cat("X"), cat("y"), cat("group"), [q for s in sets for q in s.queries],
                       cat("rows"), cat("first_stage"), names)


def _words(tokenizer, text: str) -> set[str]:
    return set(tokenizer.tokenize(text))


def make_training_set(
    index,
    queries: Iterable[Query],
    *,
    features: Sequence[str] | None = None,
    scope: Scope = "doc",
    candidates: int = 100,
    graded: bool = False,
    progress: bool | None = False,
) -> TrainingSet:
    """Features and labels of the first-stage candidates of each query.

    Queries whose document is not in the index are left out (they are not in
    ``TrainingSet.queries``).  ``progress``: a bar on stderr (None: when stderr is a terminal).
    """
    if scope not in ("doc", "collection"):
        raise ConfigError(f"scope must be 'doc' or 'collection', got {scope!r}")
    corpus = index.corpus
    names = tuple(features or feature_names(corpus))
    Xs, ys, groups, kept, rows_all, pos_all = [], [], [], [], [], []
    qlist = list(queries)
    bar = progress_bar(len(qlist), desc="features", unit="query", enabled=progress)
    for q in qlist:
        bar.update(1)
        d = corpus.doc_id(q.doc)
        if d is None:
            continue
        qs = index.query_scores(q.query, dense=needs_dense(names))
        cand = index.candidates(qs, doc=q.doc if scope == "doc" else None, n=candidates)
        if cand.size == 0:
            continue
        X = compute_features(corpus, qs, cand, names)
        rel = set(q.relevant_pages)
        y = np.zeros(cand.size, dtype=np.int32)
        ev_words = [(p, _words(index.tokenizer, t)) for p, t in q.evidence if t] if graded else []
        texts = None
        if graded and ev_words:
            got = index.store.chunks_by_rowid(corpus.chunk_rowid[cand].tolist())
            texts = [got[int(r)].text for r in corpus.chunk_rowid[cand]]
        for i, r in enumerate(cand):
            if int(corpus.chunk_doc[r]) != d:
                continue
            pages = set(corpus.pages_of(int(r)).tolist())
            if pages & rel:
                y[i] = 1
                if texts is not None:
                    cw = _words(index.tokenizer, texts[i])
                    for p, ew in ev_words:
                        if p in pages and cw and len(cw & ew) / max(min(len(cw), len(ew)), 1) >= 0.5:
                            y[i] = 2
                            break
        Xs.append(X)
        ys.append(y)
        groups.append(cand.size)
        kept.append(q)
        rows_all.append(cand)
        pos_all.append(np.arange(cand.size))
    bar.close()
    if not kept:
        raise ConfigError("none of the queries' documents is in the index", path=getattr(index, "path", None))
    return TrainingSet(np.concatenate(Xs), np.concatenate(ys), np.asarray(groups, np.int64), kept,
                       np.concatenate(rows_all), np.concatenate(pos_all), names)


Balance = Literal["none", "family"]


def family_weights(queries: Sequence[Query], *, key: Callable[[Query], str] | None = None) -> np.ndarray:
    """One weight per query so that every family weighs the same in total (``1 / queries of
    its family``, scaled to mean 1); ``key`` gives a query's family (default ``Query.family``).

    A query that appears in several groups (``--scope both``) counts once per group,
    so its family's weight is shared among all of them.  No queries: an empty array.
    """
    key = key or (lambda q: q.family)
    fam = [key(q) for q in queries]
    if not fam:
        return np.zeros(0)
    counts = Counter(fam)
    w = np.array([1.0 / counts[f] for f in fam])
    return w * (len(w) / w.sum())


def _weights(queries: Sequence[Query], balance: Balance) -> np.ndarray | None:
    if balance not in ("none", "family"):
        raise ConfigError(f"balance must be 'none' or 'family', got {balance!r}")
    return family_weights(queries) if balance == "family" else None


def train_ranker(
    ts: TrainingSet,
    *,
    features: Sequence[str] | None = None,
    seed: int = 0,
    balance: Balance = "none",
    metadata: dict[str, Any] | None = None,
    **params: Any,
) -> LambdaRanker:
    """Fit a :class:`LambdaRanker` on a training set (optionally a subset of its features);
    ``balance="family"`` weighs the queries with :func:`family_weights`."""
    names = tuple(features or ts.features)
    unknown = [f for f in names if f not in KNOWN_FEATURES or f not in ts.features]
    if unknown:
        raise ConfigError(f"features {unknown} are not in the training set ({', '.join(ts.features)})")
    sub = ts.subset(range(len(ts.queries)), names)
    model = LambdaRanker(names, seed=seed, **params)
    meta = {"queries": len(sub.queries), "balance": balance}
    meta.update(metadata or {})
    return model.fit(sub.X, sub.y, sub.group, group_weight=_weights(sub.queries, balance), metadata=meta)


def leave_one_family_out(
    test: TrainingSet,
    *,
    train: TrainingSet | None = None,
    features: Sequence[str] | None = None,
    families: Sequence[str] | None = None,
    seed: int = 0,
    balance: Balance = "family",
    **params: Any,
) -> list[np.ndarray | None]:
    """Each query of ``test`` re-ordered by a ranker that saw neither its family nor its document.

    ``train`` (default ``test``) holds the training groups of every query set, e.g.
    the concatenation of several indexes' training sets; for a held-out family,
    every training query of that family *or on one of its documents* is left out
    (two question sets can share a filing).  ``families``: the ones to score
    (default: every family in ``test``); the other queries get ``None``.
    Returns one row array per query of ``test``, best first.  ``n_jobs`` (in ``params``):
    folds trained in that many worker processes.
    """
    train = train if train is not None else test
    names = tuple(features or test.features)
    n_jobs = int(params.pop("n_jobs", 1))
    for part, what in ((test, "test"), (train, "training")):
        if not set(names) <= set(part.features):
            raise ConfigError(f"the {what} set lacks features {sorted(set(names) - set(part.features))}")
    fams = list(families) if families is not None else sorted({q.family for q in test.queries})
    if len({q.family for q in train.queries}) < 2:
        raise ConfigError("leave-one-family-out needs training queries of at least two families")
    sl = test.query_slices()
    cols = [test.features.index(f) for f in names]
    out: list[np.ndarray | None] = [None] * len(test.queries)
    tasks = []
    for f in fams:
        held = [i for i, q in enumerate(test.queries) if q.family == f]
        if not held:
            continue
        docs = {test.queries[i].doc for i in held}
        keep = [i for i, q in enumerate(train.queries) if q.family != f and q.doc not in docs]
        if not keep:
            raise ConfigError(f"nothing left to train on without family {f!r}")
        tr = train.subset(keep, names)
        Xt = [test.X[sl[i]][:, cols] for i in held]
        tasks.append((held, (names, seed, params, tr.X, tr.y, tr.group, _weights(tr.queries, balance), Xt)))
    if n_jobs > 1 and len(tasks) > 1:
        from concurrent.futures import ProcessPoolExecutor
        from multiprocessing import get_context

        # spawn: a forked child would inherit the parent's thread pools (torch, faiss)
        with ProcessPoolExecutor(max_workers=n_jobs, mp_context=get_context("spawn")) as ex:
            scores = list(ex.map(_fit_predict, [t for _, t in tasks]))
    else:
        scores = [_fit_predict(t) for _, t in tasks]
    for (held, _), per_query in zip(tasks, scores):
        for i, s in zip(held, per_query):
            out[i] = test.rows[sl[i]][np.argsort(-s, kind="stable")]
    return out


def _fit_predict(task) -> list[np.ndarray]:
    """One fold of :func:`leave_one_family_out` (a top-level function, so a worker process can run it)."""
    names, seed, params, X, y, group, weight, tests = task
    model = LambdaRanker(names, seed=seed, **params).fit(X, y, group, group_weight=weight)
    return [model.predict(x) for x in tests]


def cross_validate(
    ts: TrainingSet,
    *,
    features: Sequence[str] | None = None,
    seed: int = 0,
    also: Sequence[TrainingSet] = (),
    **params: Any,
) -> list[np.ndarray]:
    """Leave-one-group-out (company) scores: for each query, its candidates' rows re-ordered
    by a ranker trained on the other groups only.  Returns one row array per query of
    ``ts.queries``, best first.

    ``also``: more training groups (e.g. the same queries' collection-scope
    candidates, as ``train-ranker --scope both`` trains); their queries of the
    held-out group are left out of its model too, so nothing of a company is
    seen when it is scored."""
    names = tuple(features or ts.features)
    groups = sorted({q.group for q in ts.queries})
    if len(groups) < 2:
        raise ConfigError("cross-validation needs queries from at least two groups (companies)")
    for extra in also:
        if not set(names) <= set(extra.features):
            raise ConfigError(f"an extra training set lacks features {sorted(set(names) - set(extra.features))}")
    sl = ts.query_slices()
    out: list[np.ndarray | None] = [None] * len(ts.queries)
    for g in groups:
        test = [i for i, q in enumerate(ts.queries) if q.group == g]
        parts = [s.subset([i for i, q in enumerate(s.queries) if q.group != g], names) for s in (ts, *also)]
        tr = concat_training_sets([p for p in parts if len(p.queries)])
        model = LambdaRanker(names, seed=seed, **params).fit(tr.X, tr.y, tr.group)
        cols = [ts.features.index(f) for f in names]
        for i in test:
            s = model.predict(ts.X[sl[i]][:, cols])
            order = np.argsort(-s, kind="stable")
            out[i] = ts.rows[sl[i]][order]
    return out  # type: ignore[return-value]
