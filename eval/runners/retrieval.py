"""Retrieval runner: page- and passage-level scores of every search mode of an index."""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from structrag.errors import ConfigError, StructragError

from .. import retrieval_metrics as RM
from ..provenance import provenance

__all__ = ["load_queries", "retrieval_metric_names", "RetrievalReport", "run_retrieval"]


def load_queries(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The queries of a ``queries.jsonl`` file as the runner's dicts (``qid``, ``query``, ``doc``,
    ``relevant_pages`` 0-based, ``evidence`` [{page, text}], ``source``).

    Read by :func:`retrievers.rank.training.load_queries`, so that a file means the same to the runner as to
    ranker training: its rules (required keys, page numbers, duplicate ids) are the only ones.
    """
    from retrievers.rank.training import load_queries as read

    return [{"qid": q.qid, "query": q.query, "doc": q.doc, "relevant_pages": list(q.relevant_pages),
             "evidence": [{"page": pg, "text": t} for pg, t in q.evidence], "source": q.source}
            for q in read(path)]


def retrieval_metric_names(ks: Sequence[int]) -> list[str]:
    names = ["map", "mrr", "ndcg@10", "precision@1", "precision@5"]
    for k in ks:
        names += [f"recall@{k}", f"recall_any@{k}", f"recall_all@{k}"]
    return names


@dataclass
class RetrievalReport:
    modes: list[str]
    levels: list[str]
    scores: dict[str, dict[str, RM.RetrievalScores]]  # level -> mode -> scores
    by_source: dict[str, dict[str, dict[str, dict[str, float]]]]  # level -> mode -> source -> mean
    ks: list[int]
    n_queries: int
    missing_docs: list[str]
    skipped_modes: dict[str, str]
    ms_per_query: dict[str, float]
    provenance: dict[str, Any]
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "retrieval",
            "provenance": self.provenance,
            "options": self.options,
            "modes": self.modes,
            "levels": self.levels,
            "ks": self.ks,
            "n_queries": self.n_queries,
            "missing_docs": self.missing_docs,
            "skipped_modes": self.skipped_modes,
            "ms_per_query": self.ms_per_query,
            "mean": {lv: {m: s.mean for m, s in ms.items()} for lv, ms in self.scores.items()},
            "n_scored": {lv: {m: s.n_queries for m, s in ms.items()} for lv, ms in self.scores.items()},
            "by_source": self.by_source,
            "per_query": {lv: {m: s.per_query for m, s in ms.items()} for lv, ms in self.scores.items()},
        }

    def to_markdown(self) -> str:
        p = self.provenance
        lines = [
            "## Retrieval",
            "",
            f"`{p['command']}` at commit `{p['commit']}`{' (dirty tree)' if p.get('dirty') else ''}, {p['time']}.",
            f"{self.n_queries} queries; each searched within its own document; chunk hits reduced to distinct "
            "pages in first-hit order (page level) or to the evidence passages they cover (passage level).",
            "",
        ]
        cols = ["map", "mrr", "ndcg@10"] + [f"recall_any@{k}" for k in (1, 5, 10) if k in self.ks] + \
               [f"recall_all@{k}" for k in (5, 10) if k in self.ks] + [f"recall@{k}" for k in (1, 5, 10) if k in self.ks]
        for lv in self.levels:
            lines += [f"### {lv} level", "", "| mode | queries | " + " | ".join(cols) + " | ms/query |",
                      "|---|---:|" + "---:|" * (len(cols) + 1)]
            for m in self.modes:
                s = self.scores[lv].get(m)
                if s is None:
                    continue
                lines.append(f"| {m} | {s.n_queries} | " + " | ".join(f"{s.mean[c]:.3f}" for c in cols) +
                             f" | {self.ms_per_query.get(m, float('nan')):.1f} |")
            srcs = sorted({src for m in self.modes for src in self.by_source.get(lv, {}).get(m, {})})
            if len(srcs) > 1:
                lines += ["", "| mode | source | queries | map | mrr | recall_any@5 | recall_all@5 |",
                          "|---|---|---:|---:|---:|---:|---:|"]
                for m in self.modes:
                    for src in srcs:
                        d = self.by_source[lv].get(m, {}).get(src)
                        if d:
                            lines.append(f"| {m} | {src} | {int(d['n'])} | {d['map']:.3f} | {d['mrr']:.3f} | "
                                         f"{d.get('recall_any@5', float('nan')):.3f} | "
                                         f"{d.get('recall_all@5', float('nan')):.3f} |")
            lines.append("")
        if self.options.get("ranker_model"):
            lines.append(f"`ranker` model: `{self.options['ranker_model']}` -- if it was trained on these queries, "
                         "its figures are in-sample (python -m eval.bench.retrieval reports leave-one-company-out ones).")
        if self.skipped_modes:
            lines.append("Not run: " + "; ".join(f"`{k}` ({v})" for k, v in self.skipped_modes.items()) + ".")
        if self.missing_docs:
            lines.append(f"Queries on documents missing from the index (scored as empty rankings): "
                         f"{', '.join(self.missing_docs)}.")
        return "\n".join(lines) + "\n"

    def write(self, out_dir: str | os.PathLike, *, plots: bool = True) -> list[Path]:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / "retrieval.json", out / "retrieval.md"]
        paths[0].write_text(json.dumps(self.to_dict(), indent=1, ensure_ascii=False), encoding="utf-8")
        paths[1].write_text(self.to_markdown(), encoding="utf-8")
        if plots:
            from ..plots import plot_recall_curves

            for lv in self.levels:
                png = out / f"retrieval_{lv}_recall_at_k.png"
                plot_recall_curves(self, png, level=lv)
                paths.append(png)
        return paths


def _mode_available(index: Any, mode: str) -> str | None:
    if mode in ("dense", "hybrid") and not index.has_dense:
        return "the index was built without dense vectors"
    if mode == "ranker":
        try:
            r = index.ranker  # a property on retrievers.Index
            if callable(r):
                r()
        except StructragError as exc:
            return str(exc)
    return None


def _ranker_source(index: Any) -> str | None:
    """Which ranker model the ``ranker`` mode uses: the index's own file or the shipped default."""
    path = getattr(index, "path", None)
    if path is not None and (Path(path) / "ranker.txt").exists():
        return str(Path(path) / "ranker.txt")
    try:
        from retrievers.rank.ranker import default_model_path

        return str(default_model_path(bool(getattr(index, "has_dense", False))))
    except ImportError:  # pragma: no cover
        return None


def run_retrieval(
    queries: str | os.PathLike | Sequence[Mapping[str, Any]],
    index: Any,
    *,
    modes: Sequence[str] | None = None,
    ks: Sequence[int] = (1, 2, 3, 5, 10, 20),
    depth: int = 50,
    levels: Sequence[str] = ("page", "passage"),
    passage_threshold: float = 0.5,
    scope: str = "document",
    progress: bool | None = None,
    command: str | None = None,
) -> RetrievalReport:
    """Score search ``modes`` of ``index`` (a :class:`retrievers.Index` or its directory) on ``queries``.

    ``scope="document"`` searches each query within its own ``doc`` (the
    FinanceBench / MMLongBench-Doc setting); ``"collection"`` searches all
    documents and counts a page relevant only in the query's document (what a
    user who does not name the document gets); ``"both"`` runs the two, the
    collection runs reported as ``<mode>@collection``.
    ``depth`` chunks are retrieved per query and mode.
    """
    from tqdm.auto import tqdm

    if scope not in ("document", "collection", "both"):
        raise ConfigError(f"scope must be 'document', 'collection' or 'both', got {scope!r}")
    scopes = ("document", "collection") if scope == "both" else (scope,)
    bad = set(levels) - {"page", "passage"}
    if bad:
        raise ConfigError(f"unknown relevance level(s) {sorted(bad)}; use 'page' and/or 'passage'")
    qs = load_queries(queries) if isinstance(queries, (str, os.PathLike)) else [dict(q) for q in queries]
    opened = False
    if isinstance(index, (str, os.PathLike)):
        from retrievers.index import Index

        index, opened = Index.open(index), True
    try:
        from retrievers.index import MODES

        modes = list(modes) if modes else list(MODES)
        skipped, active = {}, []
        for m in modes:
            if m not in MODES:
                raise ConfigError(f"unknown mode {m!r}; known: {list(MODES)}")
            why = _mode_available(index, m)
            (skipped.__setitem__(m, why) if why else active.append(m))
        ranker_model = _ranker_source(index) if "ranker" in active else None
        names = {d.name for d in index.documents()}
        missing = sorted({q.get("doc") for q in qs if q.get("doc") and q.get("doc") not in names})
        # (reported name, mode, scope): a collection run is "<mode>@collection" when both scopes run
        plan = [(m if sc == "document" or scope != "both" else f"{m}@collection", m, sc)
                for sc in scopes for m in active]
        runs: dict[str, dict[str, dict[str, list]]] = {lv: {key: {} for key, _, _ in plan} for lv in levels}
        ms: dict[str, float] = {}
        enabled = sys.stderr.isatty() if progress is None else progress
        for key, m, sc in plan:
            t0 = time.perf_counter()
            for q in tqdm(qs, desc=f"retrieval {key}", disable=not enabled, leave=False, file=sys.stderr):
                doc = q.get("doc")
                if doc in missing:
                    hits = []
                else:
                    hits = index.search(q["query"], k=depth, doc=doc if sc == "document" else None, mode=m)
                    if sc == "collection":
                        hits = [h if h.doc == doc else h._replace(pages=tuple(-1 - p for p in h.pages))
                                for h in hits]  # pages of other documents never match
                if "page" in levels:
                    runs["page"][key][q["qid"]] = RM.pages_from_hits(hits)
                if "passage" in levels and q.get("evidence"):
                    runs["passage"][key][q["qid"]] = RM.passages_from_hits(hits, q["evidence"],
                                                                           threshold=passage_threshold)
            ms[key] = 1000 * (time.perf_counter() - t0) / max(1, len(qs))
        active = [key for key, _, _ in plan]
    finally:
        if opened:
            index.close()
    names_ = retrieval_metric_names(ks)
    scores: dict[str, dict[str, RM.RetrievalScores]] = {}
    by_source: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for lv in levels:
        if lv == "page":
            qrels = {q["qid"]: q["relevant_pages"] for q in qs}
        else:
            qrels = {q["qid"]: [f"e{i}" for i in range(len(q["evidence"]))] for q in qs if q.get("evidence")}
            if not qrels:
                continue
        scores[lv], by_source[lv] = {}, {}
        for m in active:
            s = RM.evaluate(runs[lv][m], qrels, names_)
            scores[lv][m] = s
            groups: dict[str, list[str]] = {}
            for q in qs:
                if q["qid"] in qrels and q["qid"] not in s.skipped:
                    groups.setdefault(str(q.get("source", "")), []).append(q["qid"])
            by_source[lv][m] = {
                src: {"n": float(len(ids)), **{n: sum(s.per_query[i][n] for i in ids) / len(ids) for n in names_}}
                for src, ids in groups.items()
            }
    return RetrievalReport(
        modes=active, levels=list(scores), scores=scores, by_source=by_source, ks=list(ks), n_queries=len(qs),
        missing_docs=[str(d) for d in missing], skipped_modes=skipped, ms_per_query=ms,
        provenance=provenance(command),
        options={"depth": depth, "scope": scope, "passage_threshold": passage_threshold,
                 "ranker_model": ranker_model},
    )
