"""A mixed-language collection: English filings first, then Chinese prospectuses, in one dense index.

    nice -n 10 python -m eval.bench.mixed_language [--english 3M_2018_10K.pdf,...] [--out structrag-out/mixed_language/mixed.json]

Builds one ``auto`` dense index under ``.cache/mixed``: the English filings named by ``--english``
first (the index picks MiniLM), then every Chinese prospectus of ``../shared/data/prospectus-zh`` (the
index widens to multilingual-e5-small and re-embeds the filings: :func:`retrievers.store.commit.widen_dense_model`).
Then scores the 93 Chinese prospectus questions (``eval/data/prospectus_zh_queries.jsonl``) and the
filings questions on those filings, with BM25, dense, hybrid and the shipped ranker, within the named
document and across the whole collection (a page of another document is wrong), with 95% bootstrap
intervals.  Before this change the same order of adding left the prospectuses in MiniLM's space.
The embedding cache (``.cache/embeddings.sqlite``) makes reruns cheap.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from eval.bench.collection import collection_pages
from eval.bench.common import CACHE, REPO, bootstrap_ci, data_dir, out_path
from eval.retrieval_metrics import evaluate
from retrievers.rank.training import load_queries

ZH_QUERIES = REPO / "eval" / "data" / "prospectus_zh_queries.jsonl"


def score(index, queries, mode: str, *, collection: bool) -> dict:
    run = {}
    for q in queries:
        rows = index.rank(q.query, k=50, doc=None if collection else q.doc, mode=mode, candidates=100).indices
        run[q.qid] = collection_pages(index, rows, q.doc)
    res = evaluate(run, {q.qid: set(q.relevant_pages) for q in queries}, ("map", "recall_any@5"))
    vals = [res.per_query[q.qid]["map"] for q in queries if q.qid in res.per_query]
    r5 = [res.per_query[q.qid]["recall_any@5"] for q in queries if q.qid in res.per_query]
    return {"n": len(vals), "map": round(float(np.mean(vals)), 4), "map_ci95": bootstrap_ci(vals),
            "recall_any@5": round(float(np.mean(r5)), 4)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.mixed_language", description=__doc__.splitlines()[0])
    ap.add_argument("--english", default="3M_2018_10K.pdf,PEPSICO_2022_10K.pdf",
                    help="filings of ../shared/data/retrieval/pdfs added first (comma list)")
    ap.add_argument("--index", default=str(CACHE / "mixed"))
    ap.add_argument("--out", default=out_path("mixed_language", "mixed.json"))
    args = ap.parse_args(argv)
    os.environ.setdefault("STRUCTRAG_EMBEDDING_CACHE", str(CACHE / "embeddings.sqlite"))
    from retrievers.index import Index

    fil_dir, zh_dir = data_dir("retrieval", "pdfs"), data_dir("prospectus-zh")
    english = [fil_dir / n for n in args.english.split(",")]
    shutil.rmtree(args.index, ignore_errors=True)  # the switch is what is measured: start empty
    t0 = time.perf_counter()
    with Index.create(args.index, dense=True) as ix:
        ix.add(english, progress=False)
        first_model = ix.dense_model
        t1 = time.perf_counter()
        ix.add([zh_dir], progress=False)
        t2 = time.perf_counter()
        result = {"english": args.english.split(","), "model_after_english": first_model,
                  "model_after_chinese": ix.dense_model, "english_s": round(t1 - t0, 1),
                  "chinese_s_incl_reembedding": round(t2 - t1, 1),
                  "documents": len(ix.documents()), "chunks": len(ix)}
        zh = load_queries(ZH_QUERIES)
        en = [q for q in load_queries(data_dir("retrieval", "queries.jsonl")) if q.doc in set(args.english.split(","))]
        for name, qs in (("prospectus-zh", zh), ("filings", en)):
            for scope in ("doc", "collection"):
                for mode in ("bm25", "dense", "hybrid", "ranker"):
                    result[f"{name}:{mode}@{scope}"] = score(ix, qs, mode, collection=scope == "collection")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1, ensure_ascii=False))
    print(json.dumps(result, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
