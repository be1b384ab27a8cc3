"""A mixed-language collection: English filings first, then Chinese prospectuses, in one dense index.

    nice -n 10 python -m eval.bench.mixed_language [--english 3M_2018_10K.pdf,...] [--timing]
        [--out structrag-out/mixed_language/mixed.json]

Builds one ``auto`` dense index under ``.cache/mixed``: the English filings named by ``--english`` first,
then every Chinese prospectus of ``../shared/data/prospectus-zh``.  An ``auto`` index embeds each document
in its script's space (MiniLM for the filings, multilingual-e5-small for the prospectuses,
``retrievers.embed.spaces``); before, the index moved to e5 at the first prospectus and embedded every
filing again.  Then scores the 93 Chinese prospectus questions (``eval/data/prospectus_zh_queries.jsonl``)
and the filings questions on those filings, with BM25, dense, hybrid and the shipped ranker, within the
named document and across the whole collection (a page of another document is wrong), with 95% bootstrap
intervals.  The embedding cache (``.cache/embeddings.sqlite``) makes reruns cheap.

``--timing`` measures what a user pays, with no embedding cache: one prospectus indexed alone into a new
index, and the same prospectus added to an index holding the English filings (the ratio is the cost of
adding it to a collection, 1.0 when nothing stored is embedded again).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from eval.bench.collection import collection_pages
from eval.bench.common import CACHE, REPO, bootstrap_ci, data_dir, out_path
from eval.retrieval_metrics import evaluate

ZH_QUERIES = REPO / "eval" / "data" / "prospectus_zh_queries.jsonl"


def _queries(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def score(index, queries: list[dict], mode: str, *, collection: bool) -> dict:
    run = {}
    for q in queries:
        rows = index.rank(q["query"], k=50, doc=None if collection else q["doc"], mode=mode, candidates=100).indices
        run[q["qid"]] = collection_pages(index, rows, q["doc"])
    res = evaluate(run, {q["qid"]: set(q["relevant_pages"]) for q in queries}, ("map", "recall_any@5"))
    vals = [res.per_query[q["qid"]]["map"] for q in queries if q["qid"] in res.per_query]
    r5 = [res.per_query[q["qid"]]["recall_any@5"] for q in queries if q["qid"] in res.per_query]
    return {"n": len(vals), "map": round(float(np.mean(vals)), 4), "map_ci95": bootstrap_ci(vals),
            "recall_any@5": round(float(np.mean(r5)), 4)}


def timing(english: list[Path], zh: Path) -> dict:
    """Seconds to index ``zh`` alone and to add it to an index of ``english``, with no embedding cache."""
    from retrievers.index import Index

    saved = os.environ.pop("STRUCTRAG_EMBEDDING_CACHE", None)
    try:
        with tempfile.TemporaryDirectory(prefix="mixed-timing-") as tmp:
            t0 = time.perf_counter()
            with Index.create(Path(tmp) / "alone", dense=True) as ix:
                ix.add([zh], progress=False)
            alone = time.perf_counter() - t0
            t0 = time.perf_counter()
            with Index.create(Path(tmp) / "mixed", dense=True) as ix:
                ix.add(english, progress=False)
                t1 = time.perf_counter()
                ix.add([zh], progress=False)
                added = time.perf_counter() - t1
            english_s = t1 - t0
    finally:
        if saved is not None:
            os.environ["STRUCTRAG_EMBEDDING_CACHE"] = saved
    return {"prospectus": zh.name, "alone_s": round(alone, 1), "added_to_english_s": round(added, 1),
            "ratio": round(added / alone, 2), "english_index_s": round(english_s, 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.mixed_language", description=__doc__.splitlines()[0])
    ap.add_argument("--english", default="3M_2018_10K.pdf,PEPSICO_2022_10K.pdf",
                    help="filings of ../shared/data/retrieval/pdfs added first (comma list)")
    ap.add_argument("--index", default=str(CACHE / "mixed"))
    ap.add_argument("--timing", action="store_true", help="also time adding a prospectus, with no embedding cache")
    ap.add_argument("--out", default=out_path("mixed_language", "mixed.json"))
    args = ap.parse_args(argv)
    from retrievers.index import Index

    fil_dir, zh_dir = data_dir("retrieval", "pdfs"), data_dir("prospectus-zh")
    english = [fil_dir / n for n in args.english.split(",")]
    result: dict = {"english": args.english.split(",")}
    if args.timing:
        result["timing"] = timing(english, sorted(zh_dir.rglob("*.pdf"))[0])
        print(json.dumps(result["timing"], ensure_ascii=False), file=sys.stderr)
    os.environ.setdefault("STRUCTRAG_EMBEDDING_CACHE", str(CACHE / "embeddings.sqlite"))
    shutil.rmtree(args.index, ignore_errors=True)  # the order of adding is what is measured: start empty
    t0 = time.perf_counter()
    with Index.create(args.index, dense=True) as ix:
        ix.add(english, progress=False)
        t1 = time.perf_counter()
        ix.add([zh_dir], progress=False)
        t2 = time.perf_counter()
        layout = getattr(ix.corpus, "vector_layout", None)  # None: one space (and code from before spaces)
        result.update({"dense_model": ix.dense_model,
                       "spaces": [s.model for s in layout.spaces] if layout is not None else [ix.dense_model],
                       "english_s": round(t1 - t0, 1), "chinese_s": round(t2 - t1, 1),
                       "documents": len(ix.documents()), "chunks": len(ix)})
        zh = _queries(ZH_QUERIES)
        en = [q for q in _queries(data_dir("retrieval", "queries.jsonl")) if q["doc"] in set(result["english"])]
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
