"""Page-level retrieval quality on ../shared/data/retrieval: BM25, dense, RRF, the ranker.

    nice -n 10 python -m eval.bench.retrieval --index .cache/retrieval-dense \
        [--queries ../shared/data/retrieval/queries.jsonl] [--ablation] [--seeds 0,1,2,3,4] \
        [--train-scope both] [--out structrag-out/retrieval/retrieval.json]

Two settings: **within the target document** (HELD's: each query ranks the
chunks of its own PDF) and **across the collection** (all 37 PDFs; an item is
a (document, page) pair).  Every method ranks chunks to the same depth (100),
mapped to distinct pages in first-hit order, and is scored with
``eval.retrieval_metrics``.  The ranker is scored by leave-one-company-out
cross-validation: a query is ranked by a model that never saw its company.
Each fold's model is trained the way the shipped rankers are (``train-ranker
--scope both``: every training query once with its document's candidates and
once with the collection's), minus the held-out company's queries in both.
The "ranker" rows use the first seed; the run is repeated for every seed of
``--seeds`` and the spread reported, with a bootstrap interval (queries
resampled) of the ranker-to-BM25 mAP ratio, so a figure is never one lucky seed.
``--ablation`` retrains without each feature in turn (within-document, first seed);
``--group-ablation`` without each group of ``GROUPS`` (the heading tree's features, the
page-level ones, the dense ones), over every seed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from eval.bench.common import bootstrap_diff, bootstrap_ratio, data_dir, out_path
from eval.retrieval_metrics import evaluate
from retrievers.index import Index
from retrievers.rank.features import ALL_FEATURES, DENSE_FEATURES, HELD_FEATURES, LEXICAL_FEATURES, feature_names
from retrievers.rank.training import cross_validate, load_queries, make_training_set

SCOPES = ("doc", "collection")
#: features dropped together by ``--group-ablation``: one at a time, tree features stand in for
#: each other (a chunk's depth, section position and ancestor words are correlated), so the
#: tree's worth shows only when all of them go
GROUPS = {
    "tree": ("bm25_anc_max", "same_word_anc", "pos", "pos_ratio", "bm25_section", "depth", "sec_pos_ratio",
             "coverage_ctx", "dense_path"),
    "page": ("page_pos", "page_bm25", "page_bm25_rel", "page_coverage", "page_num_ratio"),
    "dense": DENSE_FEATURES,
}

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


def ranker_run(index, sets, scope, features, train_scope="both", **params):
    """Leave-one-company-out run of ``scope``'s queries; ``sets`` maps scope -> training set."""
    also = [sets[s] for s in SCOPES if s != scope and train_scope in ("both", s)]
    ranked = cross_validate(sets[scope], features=features, also=also, **params)
    return {q.qid: _items(index, rows[:DEPTH], scope, q.doc) for q, rows in zip(sets[scope].queries, ranked)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.retrieval", description=__doc__.splitlines()[0])
    ap.add_argument("--index", required=True)
    ap.add_argument("--queries", default=str(data_dir("retrieval", "queries.jsonl")))
    ap.add_argument("--scopes", default="doc,collection")
    ap.add_argument("--ablation", action="store_true", help="drop each feature in turn (within-document, first seed)")
    ap.add_argument("--group-ablation", action="store_true",
                    help="drop each feature group (tree, page, dense) in turn (within-document, every seed)")
    ap.add_argument("--graded", action="store_true", help="also score a ranker trained with evidence-graded labels")
    ap.add_argument("--trees", type=int, default=500)
    ap.add_argument("--learning-rate", type=float, default=0.01)
    ap.add_argument("--seeds", default="0,1,2,3,4", help="ranker seeds (the first gives the main rows)")
    ap.add_argument("--train-scope", choices=["doc", "collection", "both"], default="both",
                    help="candidate groups each fold trains on (default: both, as the shipped rankers)")
    ap.add_argument("--out", default=out_path("retrieval", "retrieval.json"))
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    index = Index.open(args.index)
    queries = [q for q in load_queries(args.queries) if index.corpus.doc_id(q.doc) is not None]
    feats = feature_names(index.corpus)
    params = {"n_estimators": args.trees, "learning_rate": args.learning_rate}
    seeds = [int(x) for x in args.seeds.split(",")]
    modes = ["bm25"] + (["dense", "hybrid"] if index.has_dense else [])
    result = {"index": str(index.path), "documents": len(index.documents()), "chunks": len(index),
              "queries": len(queries), "depth_chunks": DEPTH, "features": list(feats), "params": params,
              "seeds": seeds, "train_scope": args.train_scope, "scopes": {}}
    scopes = args.scopes.split(",")
    need = set(scopes) | (set(SCOPES) if args.train_scope == "both" else {args.train_scope})
    sets = {s: make_training_set(index, queries, features=feats, scope=s, candidates=DEPTH) for s in SCOPES if s in need}
    graded = {s: make_training_set(index, queries, features=feats, scope=s, candidates=DEPTH, graded=True)
              for s in sets} if args.graded else {}
    for scope in scopes:
        ts = sets[scope]
        kw = dict(train_scope=args.train_scope, seed=seeds[0], **params)
        runs = baseline_runs(index, queries, scope, modes)
        runs["ranker"] = ranker_run(index, sets, scope, feats, **kw)
        if index.has_dense:
            runs["ranker-lexical"] = ranker_run(index, sets, scope, LEXICAL_FEATURES, **kw)
        runs["ranker-held"] = ranker_run(index, sets, scope, HELD_FEATURES, **kw)
        if args.graded:
            runs["ranker-graded"] = ranker_run(index, graded, scope, feats, **kw)
        sc = {name: _score(run, queries, scope) for name, run in runs.items()}
        # the same ranker with every other seed: the spread is what one figure can be trusted to
        per_seed = {seeds[0]: sc["ranker"]}
        for sd in seeds[1:]:
            per_seed[sd] = _score(ranker_run(index, sets, scope, feats, **{**kw, "seed": sd}), queries, scope)
        maps = np.array([v["all"]["map"] for v in per_seed.values()])
        base = sc["bm25"]["all"]["map"]
        per_query = {m: [sc[m]["per_query"][q.qid]["map"] for q in queries] for m in ("ranker", *modes)}
        spread = {
            "map": {str(k): v["all"]["map"] for k, v in per_seed.items()},
            "map_mean": round(float(maps.mean()), 4), "map_sd": round(float(maps.std(ddof=1)) if maps.size > 1 else 0.0, 4),
            "ratio_to_bm25": {"mean": round(float(maps.mean() / base), 3), "min": round(float(maps.min() / base), 3),
                              "max": round(float(maps.max() / base), 3)},
            "bootstrap": bootstrap_ratio(per_query["ranker"], per_query["bm25"]),
            "bootstrap_diff": {m: bootstrap_diff(per_query["ranker"], per_query[m]) for m in modes},
        }
        # candidate recall: share of queries with a relevant page among the candidates at all
        cand_hit = np.mean([bool(set(_items(index, ts.rows[s], scope, q.doc)) & _qrels([q], scope)[q.qid])
                            for q, s in zip(ts.queries, ts.query_slices())])
        result["scopes"][scope] = {"methods": sc, "candidate_recall": round(float(cand_hit), 4), "seeds": spread}
        if args.ablation and scope == "doc":
            abl = {}
            for f in feats:
                keep = [x for x in feats if x != f]
                abl[f] = _score(ranker_run(index, sets, scope, keep, **kw), queries, scope)["all"]
            result["scopes"][scope]["ablation"] = abl
        if args.group_ablation and scope == "doc":
            grp = {}
            for g, members in GROUPS.items():
                keep = [x for x in feats if x not in members]
                if len(keep) == len(feats):
                    continue  # the index lacks the group (lexical index: no dense features)
                gm = np.array([_score(ranker_run(index, sets, scope, keep, **{**kw, "seed": sd}), queries, scope)["all"]["map"]
                               for sd in seeds])
                grp[g] = {"dropped": [x for x in feats if x in members], "map_mean": round(float(gm.mean()), 4),
                          "map_sd": round(float(gm.std(ddof=1)) if gm.size > 1 else 0.0, 4),
                          "delta": round(float(gm.mean() - maps.mean()), 4)}
            result["scopes"][scope]["group_ablation"] = grp
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
        sp = r["seeds"]
        print(f"\nranker mAP over seeds {', '.join(sp['map'])}: {sp['map_mean']:.3f} +- {sp['map_sd']:.3f} "
              f"(min {min(sp['map'].values()):.3f}, max {max(sp['map'].values()):.3f}); "
              f"ratio to BM25 {sp['ratio_to_bm25']['mean']:.2f}x (min {sp['ratio_to_bm25']['min']:.2f}x, "
              f"max {sp['ratio_to_bm25']['max']:.2f}x); first seed {sp['bootstrap']['ratio']:.2f}x, "
              f"bootstrap 95% [{sp['bootstrap']['ci95'][0]:.2f}, {sp['bootstrap']['ci95'][1]:.2f}], "
              f"P(< 1.8x) {sp['bootstrap']['p_below_1.8']:.2f}")
        for m, d in sp["bootstrap_diff"].items():
            print(f"ranker (first seed) minus {m}: {d['diff']:+.3f} mAP, bootstrap 95% [{d['ci95'][0]:+.3f}, "
                  f"{d['ci95'][1]:+.3f}], P(<= 0) {d['p_not_above']:.3f}")
        if "ablation" in r:
            full = r["methods"]["ranker"]["all"]["map"]
            print("\n| without | mAP | ΔmAP | R@1 | MRR |\n|---|---|---|---|---|")
            for f, a in r["ablation"].items():
                print(f"| {f} | {a['map']:.3f} | {a['map'] - full:+.3f} | {a['recall_any@1']:.3f} | {a['mrr']:.3f} |")
        if "group_ablation" in r:
            print("\n| without group | features | mAP (mean +- sd over seeds) | ΔmAP |\n|---|---|---|---|")
            for g, a in r["group_ablation"].items():
                print(f"| {g} | {', '.join(a['dropped'])} | {a['map_mean']:.3f} +- {a['map_sd']:.3f} | {a['delta']:+.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
