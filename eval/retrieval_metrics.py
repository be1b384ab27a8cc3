"""Retrieval metrics over ranked lists: mAP, recall@k, precision@k, MRR, nDCG@k.

Inputs
------
*run*: ``{qid: ranked}`` where ``ranked`` is a sequence of item ids, best
first, or a mapping ``{item: score}`` (sorted by descending score; equal
scores keep the mapping's insertion order, i.e. ties are broken by the order
the retriever produced them -- ranx breaks them by its own sort, so compare
against ranx only on untied scores).  Items must be hashable and unique in a
list (:func:`dedupe` keeps first occurrences).

*qrels*: ``{qid: relevant}`` where ``relevant`` is an iterable of relevant
items (binary relevance) or a mapping ``{item: gain}`` (graded; gain <= 0 means
not relevant).  Only nDCG uses the gain; the other metrics treat gain > 0 as
relevant.

Queries in *qrels* missing from *run* score as an empty ranking.  Queries in
*run* missing from *qrels* are not scored (listed in ``unjudged``).  Queries
whose relevant set is empty are handled by ``no_relevant``: ``"skip"``
(default; per-query values NaN, left out of the means), ``"zero"`` (every
metric 0) or ``"error"``.

Metrics (binary relevance unless noted; R = relevant set, r_i = rank of i)
-------------------------------------------------------------------------
- ``map`` / ``map@k``: AP = (1/|R|) sum over relevant items ranked <= k of
  precision at their rank (ranx / trec_eval definition: the denominator is
  |R|, not min(k, |R|));
- ``mrr`` / ``mrr@k``: 1 / rank of the first relevant item (0 if none <= k);
- ``precision@k``: |R ∩ top-k| / k (k, even if fewer items were returned);
- ``recall@k``: |R ∩ top-k| / |R|;
- ``recall_any@k`` (hit rate): 1 if any relevant item is in the top k;
- ``recall_all@k``: 1 if every relevant item is in the top k;
- ``ndcg@k``: DCG = sum gain_i / log2(rank_i + 1) over the top k, divided by
  the DCG of the ideal ordering of the relevant items (Järvelin & Kekäläinen;
  ranx ``ndcg``).

Page-level and passage-level relevance
--------------------------------------
A chunk retriever returns chunks; :func:`pages_from_hits` reduces a hit list to
distinct pages in first-hit order (a chunk spanning pages 3 and 4 contributes 3
then 4), which is then scored against ``relevant_pages``.
:func:`passages_from_hits` maps each hit to the evidence passages it covers
(word 3-gram containment, :func:`evidence_overlap`), keeping non-covering hits
as placeholders so ranks stay honest.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any, Hashable, Iterable, Literal, Mapping, NamedTuple, Sequence

from structrag.errors import ConfigError

__all__ = [
    "DEFAULT_METRICS",
    "average_precision",
    "reciprocal_rank",
    "precision_at_k",
    "recall_at_k",
    "recall_any_at_k",
    "recall_all_at_k",
    "ndcg_at_k",
    "dedupe",
    "pages_from_hits",
    "evidence_overlap",
    "passages_from_hits",
    "RetrievalScores",
    "evaluate",
    "parse_metric",
]

NoRelevant = Literal["skip", "zero", "error"]

#: The figures the evaluation reports by default.
DEFAULT_METRICS: tuple[str, ...] = (
    "map",
    "mrr",
    "recall@1",
    "recall@5",
    "recall@10",
    "recall_any@1",
    "recall_any@5",
    "recall_any@10",
    "recall_all@5",
    "recall_all@10",
    "precision@1",
    "precision@5",
    "ndcg@10",
)


# --------------------------------------------------------------------------
# Per-query helpers (no validation beyond what they need; evaluate() validates)
# --------------------------------------------------------------------------
def _rel_set(relevant: Iterable[Hashable] | Mapping[Hashable, float]) -> set:
    if isinstance(relevant, Mapping):
        return {k for k, g in relevant.items() if g > 0}
    return set(relevant)


def _cut(ranked: Sequence[Hashable], k: int | None) -> Sequence[Hashable]:
    if k is None:
        return ranked
    if k < 1:
        raise ConfigError(f"k must be >= 1, got {k}")
    return ranked[:k]


def average_precision(ranked: Sequence[Hashable], relevant: Iterable[Hashable], k: int | None = None) -> float:
    """AP (@k): mean precision at the ranks of relevant items; 0 if nothing is relevant."""
    rel = _rel_set(relevant)
    if not rel:
        return 0.0
    hits, total = 0, 0.0
    for i, item in enumerate(_cut(ranked, k), start=1):
        if item in rel:
            hits += 1
            total += hits / i
    return total / len(rel)


def reciprocal_rank(ranked: Sequence[Hashable], relevant: Iterable[Hashable], k: int | None = None) -> float:
    """1 / rank of the first relevant item within the top k (0 if none)."""
    rel = _rel_set(relevant)
    for i, item in enumerate(_cut(ranked, k), start=1):
        if item in rel:
            return 1.0 / i
    return 0.0


def precision_at_k(ranked: Sequence[Hashable], relevant: Iterable[Hashable], k: int) -> float:
    rel = _rel_set(relevant)
    return sum(1 for x in _cut(ranked, k) if x in rel) / k


def recall_at_k(ranked: Sequence[Hashable], relevant: Iterable[Hashable], k: int) -> float:
    """Share of the relevant items in the top k (0 if nothing is relevant)."""
    rel = _rel_set(relevant)
    if not rel:
        return 0.0
    return sum(1 for x in _cut(ranked, k) if x in rel) / len(rel)


def recall_any_at_k(ranked: Sequence[Hashable], relevant: Iterable[Hashable], k: int) -> float:
    """1.0 if at least one relevant item is in the top k (hit rate)."""
    rel = _rel_set(relevant)
    return float(any(x in rel for x in _cut(ranked, k)))


def recall_all_at_k(ranked: Sequence[Hashable], relevant: Iterable[Hashable], k: int) -> float:
    """1.0 if every relevant item is in the top k (0 if nothing is relevant)."""
    rel = _rel_set(relevant)
    if not rel:
        return 0.0
    return float(rel.issubset(_cut(ranked, k)))


def ndcg_at_k(
    ranked: Sequence[Hashable], relevant: Iterable[Hashable] | Mapping[Hashable, float], k: int | None = None
) -> float:
    """nDCG (@k) with gain / log2(rank + 1); binary gains for a plain set."""
    gains = dict(relevant) if isinstance(relevant, Mapping) else {x: 1.0 for x in relevant}
    gains = {x: float(g) for x, g in gains.items() if g > 0}
    if not gains:
        return 0.0
    top = _cut(ranked, k)
    dcg = sum(gains.get(x, 0.0) / math.log2(i + 1) for i, x in enumerate(top, start=1))
    ideal = sorted(gains.values(), reverse=True)
    if k is not None:
        ideal = ideal[:k]
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, start=1))
    return dcg / idcg


def dedupe(items: Iterable[Hashable]) -> list[Hashable]:
    """First occurrences, in order."""
    seen: set = set()
    out = []
    for x in items:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


# --------------------------------------------------------------------------
# Hits -> ranked units
# --------------------------------------------------------------------------
def _hit_pages(hit: Any) -> Sequence[int]:
    if isinstance(hit, Mapping):
        pages = hit.get("pages")
    elif isinstance(hit, int):
        return (hit,)
    elif isinstance(hit, (list, tuple)) and all(isinstance(p, int) for p in hit):
        return hit
    else:
        pages = getattr(hit, "pages", None)
    if pages is None:
        raise ConfigError(f"a hit must carry 'pages' (an object with .pages, a dict, or page ints), got {hit!r:.80}")
    return tuple(pages)


def pages_from_hits(hits: Iterable[Any], *, limit: int | None = None) -> list[int]:
    """Distinct pages of ranked hits in first-hit order (a hit's own pages in their order).

    ``hits``: objects with ``.pages`` (``retrievers`` hits), dicts with
    ``"pages"``, sequences of page ints, or page ints.  Pages are returned as
    given (0-based inside the library).  ``limit`` stops after that many pages.
    """
    out: list[int] = []
    seen: set[int] = set()
    for h in hits:
        for p in _hit_pages(h):
            if p not in seen:
                seen.add(p)
                out.append(int(p))
                if limit is not None and len(out) >= limit:
                    return out
    return out


_WORD = re.compile(r"\w+", re.UNICODE)


def _words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text).lower())


def _ngrams(words: list[str], n: int) -> set[tuple[str, ...]]:
    if len(words) < n:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def evidence_overlap(text: str, evidence: str, *, ngram: int = 3) -> float:
    """How much of one passage the other contains: max of the two word-n-gram containments.

    ``|G(text) ∩ G(evidence)| / |G(evidence)|`` (the chunk holds the
    evidence) and ``/ |G(text)|`` (the chunk lies inside a long evidence
    passage); 0 for empty texts.
    """
    a, b = _ngrams(_words(text), ngram), _ngrams(_words(evidence), ngram)
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return max(inter / len(b), inter / len(a))


def passages_from_hits(
    hits: Iterable[Any],
    evidence: Sequence[Mapping[str, Any]],
    *,
    threshold: float = 0.5,
    ngram: int = 3,
    check_page: bool = True,
) -> list[str]:
    """Ranked units for passage-level scoring.

    Each hit (needs ``.text`` / ``["text"]``, and ``pages`` when
    ``check_page``) becomes the ids ``"e0"``, ``"e1"``, ... of the evidence
    passages it covers (overlap >= ``threshold``; with ``check_page`` the
    evidence page must be one of the hit's pages), or ``"hit:<rank>"`` if it
    covers none.  Deduplicated in first-hit order; score against
    ``{"e0", ..., "e<n-1>"}``.
    """
    if not 0 < threshold <= 1:
        raise ConfigError(f"threshold must be in (0, 1], got {threshold}")
    ev = [(f"e{i}", e.get("page"), str(e.get("text", ""))) for i, e in enumerate(evidence)]
    units: list[str] = []
    for rank, h in enumerate(hits):
        text = h.get("text") if isinstance(h, Mapping) else getattr(h, "text", None)
        if text is None:
            raise ConfigError("passage-level scoring needs hit texts (.text or ['text'])")
        pages = set(_hit_pages(h)) if check_page else set()
        covered = [
            eid for eid, pg, etext in ev
            if (not check_page or pg is None or pg in pages) and evidence_overlap(text, etext, ngram=ngram) >= threshold
        ]
        units.extend(covered or [f"hit:{rank}"])
    return dedupe(units)


# --------------------------------------------------------------------------
# evaluate()
# --------------------------------------------------------------------------
class _Metric(NamedTuple):
    name: str
    kind: str
    k: int | None


_KINDS = {"map", "mrr", "precision", "recall", "recall_any", "recall_all", "ndcg"}
_NEEDS_K = {"precision", "recall", "recall_any", "recall_all"}


def parse_metric(name: str) -> _Metric:
    """``"recall@5"`` -> (name, "recall", 5); raises ConfigError with the list of known metrics."""
    kind, _, k = name.partition("@")
    kind = {"hit_rate": "recall_any", "hit": "recall_any"}.get(kind, kind)
    if kind not in _KINDS:
        raise ConfigError(f"unknown metric {name!r}; known: {sorted(_KINDS)} (with @k where needed)")
    if k:
        if not k.isdigit() or int(k) < 1:
            raise ConfigError(f"metric {name!r}: k must be a positive integer")
        kk: int | None = int(k)
    else:
        kk = None
    if kind in _NEEDS_K and kk is None:
        raise ConfigError(f"metric {name!r} needs a cutoff, e.g. {kind}@10")
    return _Metric(name, kind, kk)


def _query_value(m: _Metric, ranked: Sequence[Hashable], rel: Mapping[Hashable, float]) -> float:
    rs = {x for x, g in rel.items() if g > 0}
    if m.kind == "map":
        return average_precision(ranked, rs, m.k)
    if m.kind == "mrr":
        return reciprocal_rank(ranked, rs, m.k)
    if m.kind == "precision":
        return precision_at_k(ranked, rs, m.k)  # type: ignore[arg-type]
    if m.kind == "recall":
        return recall_at_k(ranked, rs, m.k)  # type: ignore[arg-type]
    if m.kind == "recall_any":
        return recall_any_at_k(ranked, rs, m.k)  # type: ignore[arg-type]
    if m.kind == "recall_all":
        return recall_all_at_k(ranked, rs, m.k)  # type: ignore[arg-type]
    return ndcg_at_k(ranked, rel, m.k)


class RetrievalScores(NamedTuple):
    """Means over the scored queries and the per-query values."""

    metrics: tuple[str, ...]
    mean: dict[str, float]
    per_query: dict[str, dict[str, float]]
    n_queries: int  # scored queries (the denominator of the means)
    skipped: tuple[str, ...]  # queries with no relevant item under no_relevant="skip"
    unjudged: tuple[str, ...]  # queries in the run but not in the qrels

    def to_dict(self) -> dict[str, Any]:
        return {
            "metrics": list(self.metrics),
            "mean": self.mean,
            "n_queries": self.n_queries,
            "skipped": list(self.skipped),
            "unjudged": list(self.unjudged),
            "per_query": self.per_query,
        }


def _ranked(qid: Any, r: Any) -> list[Hashable]:
    if isinstance(r, Mapping):
        items = list(r.items())
        for item, s in items:
            if isinstance(s, bool) or not isinstance(s, (int, float)) or math.isnan(s):
                raise ConfigError(f"query {qid!r}: score of {item!r} must be a number, got {s!r}")
        order = sorted(range(len(items)), key=lambda i: (-float(items[i][1]), i))  # stable on ties
        return [items[i][0] for i in order]
    if isinstance(r, (str, bytes)) or not isinstance(r, Iterable):
        raise ConfigError(f"query {qid!r}: a ranking must be a sequence of items or a {{item: score}} mapping")
    ranked = list(r)
    if len(set(ranked)) != len(ranked):
        dup = next(x for i, x in enumerate(ranked) if x in ranked[:i])
        raise ConfigError(f"query {qid!r}: item {dup!r} appears twice in the ranking",
                          hint="deduplicate with eval.retrieval_metrics.dedupe (or pages_from_hits for chunk hits)")
    return ranked


def _gains(qid: Any, rel: Any) -> dict[Hashable, float]:
    if isinstance(rel, Mapping):
        out = {}
        for item, g in rel.items():
            if isinstance(g, bool) or not isinstance(g, (int, float)):
                raise ConfigError(f"query {qid!r}: gain of {item!r} must be a number, got {g!r}")
            out[item] = float(g)
        return out
    if isinstance(rel, (str, bytes)) or not isinstance(rel, Iterable):
        raise ConfigError(f"query {qid!r}: relevant items must be an iterable or an {{item: gain}} mapping")
    return {x: 1.0 for x in rel}


def evaluate(
    run: Mapping[Any, Any],
    qrels: Mapping[Any, Any],
    metrics: Sequence[str] = DEFAULT_METRICS,
    *,
    no_relevant: NoRelevant = "skip",
) -> RetrievalScores:
    """Score a run against qrels (see the module docstring for formats and conventions)."""
    if no_relevant not in ("skip", "zero", "error"):
        raise ConfigError(f"no_relevant must be 'skip', 'zero' or 'error', got {no_relevant!r}")
    if isinstance(metrics, str):
        metrics = (metrics,)
    ms = [parse_metric(m) for m in metrics]
    if not isinstance(run, Mapping) or not isinstance(qrels, Mapping):
        raise ConfigError("run and qrels must be mappings keyed by query id")
    per_query: dict[str, dict[str, float]] = {}
    skipped: list[str] = []
    for qid, rel in qrels.items():
        gains = _gains(qid, rel)
        ranked = _ranked(qid, run.get(qid, ()))
        if not any(g > 0 for g in gains.values()):
            if no_relevant == "error":
                raise ConfigError(f"query {qid!r} has no relevant item", hint="pass no_relevant='skip' or 'zero'")
            if no_relevant == "skip":
                skipped.append(str(qid))
                per_query[str(qid)] = {m.name: float("nan") for m in ms}
                continue
        per_query[str(qid)] = {m.name: _query_value(m, ranked, gains) for m in ms}
    scored = [q for q in per_query if q not in set(skipped)]
    mean = {
        m.name: (sum(per_query[q][m.name] for q in scored) / len(scored) if scored else float("nan")) for m in ms
    }
    unjudged = tuple(str(q) for q in run if q not in qrels)
    return RetrievalScores(tuple(m.name for m in ms), mean, per_query, len(scored), tuple(skipped), unjudged)
