"""Page-level retrieval quality on ../shared/data/retrieval: BM25, dense, RRF, the ranker.

    nice -n 10 python eval/bench_retrieval.py --index .cache/retrieval-dense \
        [--queries ../shared/data/retrieval/queries.jsonl] [--ablation] [--out eval/out/retrieval.json]

Two settings: **within the target document** (HELD's: each query ranks the
chunks of its own PDF) and **across the collection** (all 37 PDFs; an item is
a (document, page) pair).  Every method ranks chunks to the same depth (100),
mapped to distinct pages in first-hit order, and is scored with
``eval.retrieval_metrics``.  The ranker is scored by leave-one-company-out
cross-validation: a query is ranked by a model that never saw its company.
``--ablation`` retrains without each feature in turn (within-document).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from eval.retrieval_metrics import evaluate  # noqa: E402
from retrievers.features import ALL_FEATURES, HELD_FEATURES, LEXICAL_FEATURES, feature_names  # noqa: E402
from retrievers.index import Index  # noqa: E402
from retrievers.training import cross_validate, load_queries, make_training_set  # noqa: E402

METRICS = ("map", "mrr", "recall_any@1", "recall_any@5", "recall_any@10", "recall_all@5", "recall_all@10", "ndcg@10")
DEPTH = 100


def _items(index, rows, scope, doc):
    pairs = index.page_ranking(rows)
    if scope == "doc":
        return [p for d, p in pairs if d == doc]
    return pairs


def _qrels(queries, scope):
    if scope == "doc":
        return {q.qid: set(q.relevant_pages) for q in queries}
    return {q.qid: {(q.doc, p) for p in q.relevant_pages} for q in queries}


def _score(run, queries, scope):
    res = evaluate(run, _qrels(queries, scope), METRICS)
    out = {"all": {m: round(res.mean[m], 4) for m in METRICS}, "n": res.n_queries}
    for src in sorted({q.source for q in queries}):
        sub = [q for q in queries if q.source == src]
        r = evaluate({q.qid: run[q.qid] for q in sub}, _qrels(sub, scope), METRICS)
        out[src] = {m: round(r.mean[m], 4) for m in METRICS}
        out[src + "_n"] = r.n_queries
    out["per_query"] = {qid: v for qid, v in res.per_query.items()}
    return out


def baseline_runs(index, queries, scope, modes):
    runs = {m: {} for m in modes}
    for q in queries:
        doc = q.doc if scope == "doc" else None
        for m in modes:
            t = index.rank(q.query, k=DEPTH, doc=doc, mode=m, candidates=DEPTH)
            runs[m][q.qid] = _items(index, t.indices, scope, q.doc)
    return runs


def ranker_run(index, ts, scope, features, **params):
    ranked = cross_validate(ts, features=features, **params)
    return {q.qid: _items(index, rows[:DEPTH], scope, q.doc) for q, rows in zip(ts.queries, ranked)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", required=True)
    ap.add_argument("--queries", default=str(REPO.parent / "shared" / "data" / "retrieval" / "queries.jsonl"))
    ap.add_argument("--scopes", default="doc,collection")
    ap.add_argument("--ablation", action="store_true")
    ap.add_argument("--graded", action="store_true", help="also score a ranker trained with evidence-graded labels")
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--out", default=str(REPO / "eval" / "out" / "retrieval.json"))
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    index = Index.open(args.index)
    queries = [q for q in load_queries(args.queries) if index.corpus.doc_id(q.doc) is not None]
    feats = feature_names(index.corpus)
    params = {"n_estimators": args.trees}
    modes = ["bm25"] + (["dense", "hybrid"] if index.has_dense else [])
    result = {"index": str(index.path), "documents": len(index.documents()), "chunks": len(index),
              "queries": len(queries), "depth_chunks": DEPTH, "features": list(feats), "params": params,
              "scopes": {}}
    for scope in args.scopes.split(","):
        runs = baseline_runs(index, queries, scope, modes)
        ts = make_training_set(index, queries, features=feats, scope=scope, candidates=DEPTH)
        runs["ranker"] = ranker_run(index, ts, scope, feats, **params)
        if index.has_dense:
            runs["ranker-lexical"] = ranker_run(index, ts, scope, LEXICAL_FEATURES, **params)
        runs["ranker-held"] = ranker_run(index, ts, scope, HELD_FEATURES, **params)
        if args.graded:
            tsg = make_training_set(index, queries, features=feats, scope=scope, candidates=DEPTH, graded=True)
            runs["ranker-graded"] = ranker_run(index, tsg, scope, feats, **params)
        sc = {name: _score(run, queries, scope) for name, run in runs.items()}
        # candidate recall: share of queries with a relevant page among the candidates at all
        cand_hit = np.mean([bool(set(_items(index, ts.rows[s], scope, q.doc)) & _qrels([q], scope)[q.qid])
                            for q, s in zip(ts.queries, ts.query_slices())])
        result["scopes"][scope] = {"methods": sc, "candidate_recall": round(float(cand_hit), 4)}
        if args.ablation and scope == "doc":
            abl = {}
            for f in feats:
                keep = [x for x in feats if x != f]
                abl[f] = _score(ranker_run(index, ts, scope, keep, **params), queries, scope)["all"]
            result["scopes"][scope]["ablation"] = abl
        print(f"[{time.perf_counter() - t0:6.1f}s] scope {scope} done", file=sys.stderr, flush=True)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    for scope, r in result["scopes"].items():
        print(f"\n## {scope} (candidate recall {r['candidate_recall']})")
        print("| method | mAP | MRR | R@1 | R@5 | R@10 | all@5 | all@10 | nDCG@10 |")
        print("|---|---|---|---|---|---|---|---|---|")
        for name, s in r["methods"].items():
            a = s["all"]
            print(f"| {name} | " + " | ".join(f"{a[m]:.3f}" for m in METRICS) + " |")
        if "ablation" in r:
            full = r["methods"]["ranker"]["all"]["map"]
            print("\n| without | mAP | ΔmAP | R@1 | MRR |\n|---|---|---|---|---|")
            for f, a in r["ablation"].items():
                print(f"| {f} | {a['map']:.3f} | {a['map'] - full:+.3f} | {a['recall_any@1']:.3f} | {a['mrr']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
