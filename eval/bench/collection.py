"""Collection-wide retrieval, leave one family out.

    nice -n 10 python -m eval.bench.collection [--sets filings,longdoc] [--variants portable,no-concepts] \
        [--route] [--one-index] [--out structrag-out/collection/collection.json]   # variants: portable, no-concepts, no-doc, page-text, no-open-page

The question does not name its document: each query is ranked over every chunk of its
set's index (the 37 filings, the 24 long documents), and a page counts only in the
query's own document (another company's or another year's filing is wrong).  Beside
it, the same queries within their document, so the ratio collection / within is read
off one table.

Ranker rows are **leave-one-family-out** (family = company for the filings): each
query is ranked by a model trained on every other family's queries, within-document
groups of every query set (filings, longdoc, prospectus-zh, prospectus-en, narrative-en) plus the
filings' collection groups, as the shipped rankers train
(:func:`eval.bench.generalise.training_sets`).  Baselines: BM25, dense and hybrid
over chunks, and the 20-line **page-BM25** (BM25 over each page's whole PyMuPDF
text, all pages of the set ranked together).  95% bootstrap intervals (queries
resampled).  Uses the indexes of ``python -m eval.bench.generalise_build``; with ``--one-index``, every set's
questions are ranked over one index of all the shared reports (``generalise_build --sets all
--models e5``: filings, long documents, prospectuses, one multilingual model), the rankers still
trained on the per-set indexes.

``--index scale`` ranks the filings' questions over the collection-scale index (the 37 filings among
hundreds of other reports, ``generalise_build --sets distractors`` then ``--sets scale``); the table adds
R@10 and document recall@5 (the question's filing among the first five documents of the ranking), and
``--latency RUNS`` times :meth:`retrievers.index.Index.search` (routed ranker, query embedding included)
on every question, with the index's documents, pages, chunks and size on disk::

    taskset -c 0 env OMP_NUM_THREADS=1 STRUCTRAG_EMBED_THREADS=1 python -m eval.bench.collection \
        --index scale --sets filings --variants portable --route --latency 3
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from eval.bench.common import REPO, bootstrap_ci, bootstrap_ratio, out_path, paired_diff
from eval.bench.generalise import (
    DEPTH, EN_QUERIES, ZH_QUERIES, PageBM25, add_narrative_arg, monotone_for, load_parts, per_query, training_sets,
)
from eval.bench.generalise_build import ALL, SCALE, index_dir
from retrievers.rank.features import (
    CONCEPT_FEATURES, DOC_FEATURES, OPEN_PAGE_FEATURES, PAGE_TEXT_FEATURES, PORTABLE_FEATURES, available_features,
)
from retrievers.index import Index
from retrievers.rank.search import named_first
from retrievers.rank.training import leave_one_family_out, make_training_set

#: feature sets compared (the shipped set, and the same without the concept features)
VARIANTS = {
    "portable": lambda feats: tuple(f for f in PORTABLE_FEATURES if f in feats),
    "no-concepts": lambda feats: tuple(f for f in PORTABLE_FEATURES if f in feats and f not in CONCEPT_FEATURES),
    # without the issuer/period agreement features (the routed candidates and the identity
    # words counted as found stay: they are not features)
    "no-doc": lambda feats: tuple(f for f in PORTABLE_FEATURES if f in feats and f not in DOC_FEATURES),
    # with the whole-page text features (retrievers.rank.page_features; not shipped: they cost the filings)
    "page-text": lambda feats: tuple(f for f in PORTABLE_FEATURES + PAGE_TEXT_FEATURES
                                     if f in feats and f not in OPEN_PAGE_FEATURES),
    # without the open-question page-text features (the design shipped before them)
    "no-open-page": lambda feats: tuple(f for f in PORTABLE_FEATURES if f in feats and f not in OPEN_PAGE_FEATURES),
}


def collection_pages(index, rows, doc: str, docs_seen: list[str] | None = None) -> list[int]:
    """Pages of ``rows`` in first-hit order, where a page of another document becomes a distinct
    negative number (ranked, never relevant).  ``docs_seen``, when given, receives the documents in
    the order their first page comes (for document recall)."""
    out, other = [], {}
    for d, p in index.page_ranking(rows):
        if docs_seen is not None and d not in docs_seen:
            docs_seen.append(d)
        if d == doc:
            out.append(p)
        else:
            out.append(other.setdefault((d, p), -1 - len(other)))
    return out


def doc_recall(docs_seen: list[str], doc: str, k: int = 5) -> float:
    """1.0 when the question's document is among the first ``k`` documents of the ranking."""
    return float(doc in docs_seen[:k])


def latency(ix, queries, runs: int = 1) -> dict:
    """Wall and CPU milliseconds of :meth:`Index.search` (ranker, routed, no document named, query
    embedding included) per question, p50 and p95, after five warm-up questions."""
    for q in queries[:5]:
        ix.search(q.query, k=10)
    wall, cpu = [], []
    for _ in range(runs):
        for q in queries:
            a, b = time.perf_counter(), time.process_time()
            ix.search(q.query, k=10)
            wall.append(time.perf_counter() - a)
            cpu.append(time.process_time() - b)
    ms = lambda xs, p: round(1000 * float(np.percentile(xs, p)), 1)  # noqa: E731
    return {"queries": len(wall), "p50_ms": ms(wall, 50), "p95_ms": ms(wall, 95), "cpu_p50_ms": ms(cpu, 50),
            "cpu_p95_ms": ms(cpu, 95), "load_avg_1m": round(os.getloadavg()[0], 1)}


def page_bm25_collection(pb: PageBM25, query: str, doc: str, depth: int = DEPTH,
                         docs_seen: list[str] | None = None) -> list[int]:
    """Page-BM25 over every page of the set, pages of other documents as negatives."""
    s = pb.bm25.scores(pb.tok.tokenize(query))
    order = [int(i) for i in np.argsort(-s, kind="stable")[:depth] if s[i] > 0]
    if docs_seen is not None:
        ends = np.array([pb.start[d][1] for d in pb.docs])
        for i in order:
            d = pb.docs[int(np.searchsorted(ends, i, side="right"))]
            if d not in docs_seen:
                docs_seen.append(d)
    lo, hi = pb.start[doc]
    return [i - lo if lo <= i < hi else -1 - i for i in order]


def routed(ix, query: str, rows) -> np.ndarray:
    """``rows`` as :meth:`retrievers.index.Index.search` routes them: the named documents' chunks first."""
    rows = np.asarray(rows)
    return rows[named_first(ix.corpus, rows, ix.named_docs(ix.query_scores(query, dense=False)))]


def summary(pq: dict, qids: list[str], docs: dict[str, float] | None = None) -> dict:
    """Means and 95% intervals of mAP and R@5, the mean R@10, and document R@5 where ``docs``
    (question -> 1.0 / 0.0) is given."""
    out = {"n": len(qids)}
    for m in ("map", "recall_any@5"):
        vals = [pq[q][m] for q in qids]
        out[m] = round(float(np.mean(vals)), 4) if vals else float("nan")
        out[m + "_ci95"] = bootstrap_ci(vals)
    out["recall_any@10"] = round(float(np.mean([pq[q]["recall_any@10"] for q in qids])), 4) if qids else float("nan")
    if docs:
        vals = [docs[q] for q in qids if q in docs]
        out["doc_recall@5"] = round(float(np.mean(vals)), 4) if vals else float("nan")
        out["doc_recall@5_ci95"] = bootstrap_ci(vals)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.collection", description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="filings,longdoc", help="query sets scored collection-wide")
    ap.add_argument("--variants", default="portable,no-concepts")
    ap.add_argument("--scopes", default="collection,doc", help="collection (no document named) and/or doc")
    ap.add_argument("--en-model", default="minilm")
    ap.add_argument("--zh-model", default="e5-jieba-search")
    ap.add_argument("--zh-queries", default=str(ZH_QUERIES))
    ap.add_argument("--en-queries", default=str(EN_QUERIES))
    add_narrative_arg(ap)
    ap.add_argument("--cache", default=str(REPO / ".cache"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--trees", type=int, default=500)
    ap.add_argument("--learning-rate", type=float, default=0.01)
    ap.add_argument("--balance", choices=["none", "family"], default="none")
    ap.add_argument("--monotone", choices=["evidence", "none"], default="evidence")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--route", action="store_true",
                    help="also score each collection ranking with the named documents' chunks first")
    ap.add_argument("--one-index", action="store_true",
                    help="rank every set's questions over one index of all the shared reports "
                         "(python -m eval.bench.generalise_build --sets all --models e5) instead of its set's index")
    ap.add_argument("--index", choices=[ALL, SCALE], default=None,
                    help="the one index to rank over: all (= --one-index) or scale (the filings among distractor "
                         "reports: generalise_build --sets distractors, then --sets scale --models minilm)")
    ap.add_argument("--latency", type=int, default=0, metavar="RUNS",
                    help="also time Index.search over the one index, every question RUNS times (one thread)")
    ap.add_argument("--out", default=out_path("collection", "collection.json"))
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    t0 = time.perf_counter()

    def log(msg):
        print(f"[{time.perf_counter() - t0:7.1f}s] {msg}", file=sys.stderr, flush=True)

    parts, opened = load_parts(args)
    one = None
    which = args.index or (ALL if args.one_index else None)
    if which:
        model = "e5" if which == ALL else "minilm"
        d = index_dir(Path(args.cache), which, model)
        if not (d / "index.sqlite").exists():
            ap.error(f"{d}: no such index; build it: python -m eval.bench.generalise_build --sets {which} --models {model}")
        one = opened[which] = Index.open(d)
    feats = tuple(f for f in PORTABLE_FEATURES + PAGE_TEXT_FEATURES
                  if all(f in available_features(x.corpus) for x in [p.index for p in parts] + ([one] if one else [])))
    _, train, _ = training_sets(parts, feats)
    log(f"training groups: {len(train.queries)}")
    params = {"n_estimators": args.trees, "learning_rate": args.learning_rate, "n_jobs": args.jobs}
    result: dict = {"sets": {}, "variants": args.variants.split(","), "seed": args.seed,
                    "one_index": which, "command": " ".join(["python", "-m", "eval.bench.collection", *(argv or sys.argv[1:])])}
    for name in args.sets.split(","):
        mine = [p for p in parts if p.name == name]
        if not mine:
            ap.error(f"unknown set {name!r}; known: {sorted({p.name for p in parts})}")
        # a set may span two indexes (prospectus-en: filings and headings documents); the one index holds both
        ix = one if one is not None else mine[0].index
        qs = [q for p in mine for q in p.queries] if one is not None else mine[0].queries
        runs: dict[str, dict] = {}
        # per run and question: is the question's document among the first five documents?
        docs: dict[str, dict[str, float]] = {}

        def seen(key: str, qid: str) -> list[str]:
            out: list[str] = []
            docs.setdefault(key, {})[qid] = out  # filled by the ranking, read back below
            return out

        pb = PageBM25(ix, Path(args.cache))
        runs["page-bm25@collection"] = {q.qid: page_bm25_collection(pb, q.query, q.doc,
                                                                    docs_seen=seen("page-bm25@collection", q.qid))
                                        for q in qs}
        runs["page-bm25"] = {q.qid: pb.rank(q.query, q.doc) for q in qs}
        modes = ("bm25", "dense", "hybrid") if ix.has_dense else ("bm25",)
        for q in qs:
            s = ix.query_scores(q.query, dense=ix.has_dense)
            for m in modes:
                runs.setdefault(f"{m}@collection", {})[q.qid] = collection_pages(
                    ix, ix.rank(s, k=DEPTH, mode=m, candidates=DEPTH).indices, q.doc, seen(f"{m}@collection", q.qid))
                runs.setdefault(m, {})[q.qid] = collection_pages(
                    ix, ix.rank(s, k=DEPTH, doc=q.doc, mode=m, candidates=DEPTH).indices, q.doc)
        log(f"{name}: baselines done")
        for scope in args.scopes.split(","):
            test = make_training_set(ix, qs, features=feats, scope=scope, candidates=DEPTH)
            for v in args.variants.split(","):
                names = VARIANTS[v](feats)
                ranked = leave_one_family_out(test, train=train, features=names, seed=args.seed,
                                              balance=args.balance, monotone=monotone_for(args, names), **params)
                key = f"ranker:{v}" + ("@collection" if scope == "collection" else "")
                runs[key] = {q.qid: collection_pages(ix, rows[:DEPTH], q.doc, seen(key, q.qid))
                             for q, rows in zip(test.queries, ranked) if rows is not None}
                if scope == "collection" and args.route:
                    runs[key + "+route"] = {q.qid: collection_pages(ix, routed(ix, q.query, rows)[:DEPTH], q.doc,
                                                                    seen(key + "+route", q.qid))
                                            for q, rows in zip(test.queries, ranked) if rows is not None}
                log(f"{name}: LOFO {v} {scope} done")
        qids = [q.qid for q in qs]
        pq = {m: per_query(r, [q for q in qs if q.qid in r]) for m, r in runs.items()}
        doc_of = {q.qid: q.doc for q in qs}
        found = {m: {q: doc_recall(d, doc_of[q]) for q, d in per.items()} for m, per in docs.items()}
        table = {m: summary(pq[m], [q for q in qids if q in pq[m]], found.get(m)) for m in pq}
        for v in args.variants.split(","):
            for key in (f"ranker:{v}@collection", f"ranker:{v}@collection+route"):
                both = [q for q in qids if q in pq.get(key, {}) and q in pq.get(f"ranker:{v}", {})]
                if both and table[f"ranker:{v}"]["map"] > 0:
                    r = bootstrap_ratio([pq[key][q]["map"] for q in both], [pq[f"ranker:{v}"][q]["map"] for q in both])
                    table[key]["ratio_to_within"] = round(r["ratio"], 3)
                    table[key]["ratio_ci95"] = r["ci95"]
        diffs = {b: paired_diff(pq["ranker:portable@collection"], pq[b], qids)
                 for b in ("bm25@collection", "dense@collection", "hybrid@collection", "page-bm25@collection",
                           "ranker:no-concepts@collection", "ranker:no-doc@collection",
                           "ranker:page-text@collection", "ranker:no-open-page@collection",
                           "ranker:no-open-page@collection+route", "ranker:portable@collection+route")
                 if b in pq and "ranker:portable@collection" in pq}
        result["sets"][name] = {"table": table, "diff_ranker_portable_collection_vs": diffs,
                                "per_query_map": {m: {q: round(v["map"], 4) for q, v in pq[m].items()}
                                                  for m in pq if m.startswith("ranker")}}
    if one is not None and args.latency:
        qs = [q for p in parts for q in p.queries if p.name in args.sets.split(",")]
        result["latency"] = latency(one, qs, args.latency)
        result["index"] = {"documents": len(one.documents()), "pages": sum(d.page_count for d in one.documents()),
                           "chunks": len(one), "disk_mb": round(sum(f.stat().st_size for f in Path(one.path).rglob("*")
                                                                    if f.is_file()) / 2**20, 1)}
    result["seconds"] = round(time.perf_counter() - t0, 1)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1, ensure_ascii=False))
    print(render(result))
    for x in opened.values():
        x.close()
    return 0


def render(result: dict) -> str:
    lines = []
    for name, r in result["sets"].items():
        lines += [f"### {name} ({next(iter(r['table'].values()))['n']} questions)", "",
                  "| method | mAP [95% CI] | R@5 [95% CI] | R@10 | document R@5 | collection / within |",
                  "|---|---|---|---:|---:|---:|"]
        for m, s in sorted(r["table"].items(), key=lambda kv: ("@collection" not in kv[0], kv[0])):
            ci, ci5 = s["map_ci95"], s["recall_any@5_ci95"]
            lines.append(f"| {m} | {s['map']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}] | {s['recall_any@5']:.3f} "
                         f"[{ci5[0]:.3f}, {ci5[1]:.3f}] | {s['recall_any@10']:.3f} | "
                         + (f"{s['doc_recall@5']:.3f}" if "doc_recall@5" in s else "") + f" | {s.get('ratio_to_within', '')}"
                         + (f" [{s['ratio_ci95'][0]:.2f}, {s['ratio_ci95'][1]:.2f}]" if "ratio_ci95" in s else "") + " |")
        lines.append("")
        for b, d in r["diff_ranker_portable_collection_vs"].items():
            if d:
                lines.append(f"- ranker:portable@collection − {b}: mAP {d.get('diff', float('nan')):+.3f} "
                             f"[{d.get('ci95', [float('nan')] * 2)[0]:+.3f}, {d.get('ci95', [float('nan')] * 2)[1]:+.3f}]")
        lines.append("")
    if "latency" in result:
        la, ix = result["latency"], result.get("index", {})
        lines.append(f"Index: {ix.get('documents')} documents, {ix.get('pages')} pages, {ix.get('chunks')} chunks, "
                     f"{ix.get('disk_mb')} MB on disk. Index.search, one thread, {la['queries']} questions: p50 "
                     f"{la['p50_ms']} ms, p95 {la['p95_ms']} ms (CPU {la['cpu_p50_ms']} / {la['cpu_p95_ms']} ms; load "
                     f"{la['load_avg_1m']}).")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
