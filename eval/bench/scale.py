"""Scale-out figures: Ray ingestion throughput, engine sizing, engine-vs-index agreement.

    python -m eval.bench.scale throughput [--docs 20] [--dense lexical,dense] [--configs single,ray1,ray2]
    python -m eval.bench.scale sizing [--chunks 100000] [--queries 200]
    python -m eval.bench.scale agreement --single DIR --ray DIR [--queries QUERIES.jsonl]

``throughput`` indexes the ``--docs`` smallest shared filings (by page count, a
fixed choice, so runs compare) with the single-process indexer
(``Index.build``, one process; torch uses every core for embedding) and with
Ray Data at 1 and 2 workers (one CPU each), each configuration in its own
process.  Per configuration: wall time (Ray's start-up included), pages/s,
CPU seconds per page summed over the workers (``time.process_time`` per
document: the figure that holds on a loaded machine), and the worker's peak
RSS after each document (ru_maxrss; its maximum is the per-document memory
peak, model included).  The machine's load average is recorded beside each run.

``sizing`` builds a 100k-chunk synthetic index (:mod:`retrievers.synthetic`,
random unit vectors of MiniLM's size, as ``bench_retrieval_latency.py``),
syncs it to Qdrant's embedded mode, and times the first stage of both
(BM25 top-100 + dense top-100, collection-wide) and the engine retriever's
full ranker query; disk sizes and vector bytes are extrapolated per million
chunks.  OpenSearch is timed too when ``STRUCTRAG_OPENSEARCH_URL`` is set.

``agreement`` compares the top-10 of the single-process index (ranker mode)
with :class:`retrievers.engines.EngineRetriever` over a Qdrant copy of the
Ray-built index, for every shared query whose document is indexed, within the
document and across the collection.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from eval.bench.common import REPO, commit, data_dir, out_path


def _shared() -> Path:
    d = data_dir()
    if not (d / "retrieval" / "pdfs").is_dir():
        sys.exit(f"shared data not found at {d} (set STRUCTRAG_SHARED_DATA)")
    return d


def smallest_reports(n: int) -> list[Path]:
    import pymupdf

    pdfs = sorted((_shared() / "retrieval" / "pdfs").glob("*.pdf"))
    sized = sorted(((pymupdf.open(p).page_count, p.name, p) for p in pdfs))
    return [p for _, _, p in sized[:n]]


def _dir_size(p: Path) -> int:
    return sum(f.stat().st_size for f in Path(p).rglob("*") if f.is_file())


# --- throughput -----------------------------------------------------------------------------------------
def _child_throughput(config: str, dense: bool, out: Path, n_docs: int) -> dict:
    from retrievers.index import Index

    files = smallest_reports(n_docs)
    load0 = os.getloadavg()
    w0, c0 = time.perf_counter(), time.process_time()
    per_doc: list[dict] = []
    if config == "single":
        def event(kind, name, detail):
            per_doc.append({"name": name, "status": kind,
                            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})

        index = Index.create(out, dense=dense)
        report = index.add(files, workers=1, progress=False, on_event=event)
        cpu = time.process_time() - c0
    else:
        from retrievers.ray_ingest import ray_add

        workers = int(config.removeprefix("ray"))
        index = Index.create(out, dense=dense)
        report = ray_add(index, files, workers=workers, progress=False, stats=per_doc)
        cpu = sum(d["cpu_s"] for d in per_doc)  # the workers' CPU time over their documents
    wall = time.perf_counter() - w0
    docs = index.documents()
    pages = sum(d.page_count for d in docs)
    res = {
        "config": config, "dense": dense, "documents": len(docs), "pages": pages, "chunks": len(index),
        "failed": report.failed, "wall_s": round(wall, 1), "pages_per_s": round(pages / wall, 2),
        "cpu_s": round(cpu, 1), "cpu_ms_per_page": round(1000 * cpu / max(pages, 1), 1),
        "peak_rss_mb_max": round(max((d["peak_rss_mb"] for d in per_doc), default=0.0), 1),
        "driver_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "load_before": [round(x, 2) for x in load0], "load_after": [round(x, 2) for x in os.getloadavg()],
        "per_doc": per_doc,
    }
    index.close()
    return res


def throughput(args) -> list[dict]:
    rows = []
    keep = Path(args.keep) if args.keep else None
    for kind in args.dense.split(","):
        for config in args.configs.split(","):
            tmp = Path(tempfile.mkdtemp(prefix=f"scale-{config}-"))
            out = (keep / f"{kind}-{config}") if keep else tmp / "ix"
            if out.exists():
                shutil.rmtree(out)
            env = {k: v for k, v in os.environ.items() if k != "STRUCTRAG_EMBEDDING_CACHE"}  # embed for real
            cmd = [sys.executable, "-m", "eval.bench.scale", "_child", config, kind, str(out), str(args.docs)]
            r = subprocess.run(cmd, capture_output=True, text=True, env={**env, "PYTHONPATH": str(REPO)})
            shutil.rmtree(tmp, ignore_errors=True)
            if r.returncode:
                sys.stderr.write(r.stderr[-5000:])
                raise SystemExit(r.returncode)
            row = json.loads(r.stdout.strip().splitlines()[-1])
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "per_doc"}), file=sys.stderr, flush=True)
    return rows


def busiest_worker_cpu_s(row: dict) -> float:
    """CPU seconds of the busiest worker: the wall time of the run on idle cores, one per worker
    (start-up aside); for the single process, its own CPU time."""
    if row["config"] == "single":
        return row["cpu_s"]
    per: dict[int, float] = {}
    for d in row["per_doc"]:
        per[d["worker"]] = per.get(d["worker"], 0.0) + d["cpu_s"]
    return max(per.values(), default=0.0)


def throughput_table(rows: list[dict]) -> str:
    lines = ["| index | engine | workers | documents | pages | chunks | wall s | pages/s (wall) | CPU ms/page | "
             "busiest worker CPU s | pages/s on idle cores | peak RSS per worker MB | load avg (1 min) before → after |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        eng = "single process" if r["config"] == "single" else "Ray Data"
        w = "1" if r["config"] == "single" else r["config"].removeprefix("ray")
        crit = busiest_worker_cpu_s(r)
        lines.append(f"| {'dense' if r['dense'] else 'lexical'} | {eng} | {w} | {r['documents']} | {r['pages']:,} | "
                     f"{r['chunks']:,} | {r['wall_s']} | {r['pages_per_s']} | {r['cpu_ms_per_page']} | {crit:.1f} | "
                     f"{r['pages'] / max(crit, 1e-9):.1f} | {r['peak_rss_mb_max']} | "
                     f"{r['load_before'][0]} → {r['load_after'][0]} |")
    return "\n".join(lines)


# --- sizing ---------------------------------------------------------------------------------------------
def _queries_for(index, n: int, seed: int = 2):
    rng = np.random.default_rng(seed)
    corpus = index.corpus
    rows = rng.integers(0, corpus.n_chunks, size=n)
    got = index._store.chunks_by_rowid(corpus.chunk_rowid[rows].tolist())
    texts = []
    for r in corpus.chunk_rowid[rows]:
        words = got[int(r)].text.split()
        k = int(rng.integers(3, 8))
        s = int(rng.integers(0, max(1, len(words) - k)))
        texts.append(" ".join(words[s : s + k]))
    qv = rng.normal(size=(n, corpus.chunk_vectors.shape[1])).astype(np.float32)
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    return texts, qv


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _ms(xs, p):
    return round(1000 * float(np.percentile(xs, p)), 2)


def _time_engine(engine, index, texts, qv, label: str) -> dict:
    from retrievers.engines import EngineRetriever

    first = []
    for i, t in enumerate(texts):
        toks = index.tokenizer.tokenize(t)
        a = time.perf_counter()
        engine.lexical(toks, 100)
        engine.dense(qv[i], 100)
        first.append(time.perf_counter() - a)
    # the full ranker query with the engine's first stage (query vectors injected: no model in the loop)
    retr = EngineRetriever(index, engine)
    full = []
    vec = {t: qv[i] for i, t in enumerate(texts)}
    index.query_vector = lambda q: vec[q]  # noqa: E731 - random vectors, as the SQLite side uses
    for t in texts:
        a = time.perf_counter()
        retr.search(t, k=10)
        full.append(time.perf_counter() - a)
    del index.query_vector
    return {"engine": label, "first_stage_p50_ms": _ms(first, 50), "first_stage_p95_ms": _ms(first, 95),
            "ranker_p50_ms": _ms(full, 50), "ranker_p95_ms": _ms(full, 95), "queries": len(texts)}


def sizing(args) -> dict:
    from eval.bench.retrieval_latency import build

    from retrievers.engines import QdrantEngine
    from retrievers.index import Index
    from retrievers.lexical.bm25 import top_k
    from retrievers.rank.query import query_scores

    tmp = Path(tempfile.mkdtemp(prefix="scale-sizing-"))
    try:
        b = build(args.chunks, tmp / "ix")
        index = Index.open(tmp / "ix")
        corpus = index.corpus
        texts, qv = _queries_for(index, args.queries)
        for i in range(3):  # warm-up
            index.vectors.top(qv[i], None, 100)
        first = []
        for i, t in enumerate(texts):
            a = time.perf_counter()
            toks = index.tokenizer.tokenize(t)
            top_k(corpus.bm25_chunks.scores(toks), 100)
            index.vectors.top(qv[i], None, 100)
            first.append(time.perf_counter() - a)
        full = []
        for i, t in enumerate(texts):
            a = time.perf_counter()
            index.rank(query_scores(corpus, index.tokenizer.tokenize(t), qv[i]), k=10, mode="ranker")
            full.append(time.perf_counter() - a)
        vec_bytes = int(corpus.chunk_vectors.nbytes + corpus.node_vectors.nbytes)
        res = {"chunks": corpus.n_chunks, "documents": len(corpus.doc_names), "sections": corpus.n_nodes,
               "vector_bytes": vec_bytes, "sqlite_index_mb": round(_dir_size(tmp / "ix") / 2**20, 1),
               "sqlite_build_s": b["build_s"],
               "sqlite": {"first_stage_p50_ms": _ms(first, 50), "first_stage_p95_ms": _ms(first, 95),
                          "ranker_p50_ms": _ms(full, 50), "ranker_p95_ms": _ms(full, 95)}}
        # in memory: the persisted embedded mode commits every point in its own SQLite transaction
        # (~9 ms a point here), which times the disk, not the engine
        rss0 = _rss_mb()
        t0 = time.perf_counter()
        engine = QdrantEngine.local(None)
        sync = engine.sync(index, progress=False)
        res["qdrant_sync_s"] = round(time.perf_counter() - t0, 1)
        res["qdrant_memory_mb"] = round(_rss_mb() - rss0, 1)
        res["qdrant_points"] = engine.count()
        # qdrant-client's embedded mode scores sparse vectors in a Python loop over every point: fewer queries
        m = args.engine_queries
        res["qdrant"] = _time_engine(engine, index, texts[:m], qv[:m], "qdrant-local")
        engine.close()
        res["qdrant_written"] = sync.chunks_written
        url = os.environ.get("STRUCTRAG_OPENSEARCH_URL")
        if url:
            from opensearchpy import OpenSearch

            from retrievers.engines import OpenSearchEngine

            os_engine = OpenSearchEngine(OpenSearch(url), "structrag-sizing")
            t0 = time.perf_counter()
            os_engine.sync(index, progress=False)
            res["opensearch_sync_s"] = round(time.perf_counter() - t0, 1)
            res["opensearch"] = _time_engine(os_engine, index, texts[:m], qv[:m], "opensearch")
            os_engine.drop()
        res["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        index.close()
        return res
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def sizing_table(r: dict) -> str:
    per_m = 1_000_000 / r["chunks"]
    lines = [f"Measured at {r['chunks']:,} synthetic chunks ({r['documents']} documents of 500 chunks, "
             f"{r['sections']:,} sections); per million chunks by linear extrapolation "
             f"({r['documents'] * per_m:,.0f} documents).", "",
             "| store | measured size MB | per 1M chunks GB | vector bytes per 1M chunks | first stage p50 / p95 ms "
             "| ranker query p50 / p95 ms | build / sync s |", "|---|---:|---:|---:|---|---|---:|"]
    vb = r["vector_bytes"] * per_m / 1e9
    sq = r["sqlite"]
    lines.append(f"| SQLite index (bm25s + faiss HNSW), on disk | {r['sqlite_index_mb']} | "
                 f"{r['sqlite_index_mb'] * per_m / 1024:.1f} | {vb:.2f} GB | {sq['first_stage_p50_ms']} / "
                 f"{sq['first_stage_p95_ms']} | {sq['ranker_p50_ms']} / {sq['ranker_p95_ms']} | {r['sqlite_build_s']} |")
    q = r["qdrant"]
    lines.append(f"| Qdrant embedded (local mode, in memory) | {r['qdrant_memory_mb']} (RSS) | "
                 f"{r['qdrant_memory_mb'] * per_m / 1024:.1f} | {vb:.2f} GB | {q['first_stage_p50_ms']} / "
                 f"{q['first_stage_p95_ms']} | {q['ranker_p50_ms']} / {q['ranker_p95_ms']} | {r['qdrant_sync_s']} |")
    if "opensearch" in r:
        o = r["opensearch"]
        lines.append(f"| OpenSearch | - | - | {vb:.2f} GB | {o['first_stage_p50_ms']} / {o['first_stage_p95_ms']} | "
                     f"{o['ranker_p50_ms']} / {o['ranker_p95_ms']} | {r['opensearch_sync_s']} |")
    return "\n".join(lines)


# --- agreement ------------------------------------------------------------------------------------------
def agreement(args) -> dict:
    from retrievers.engines import EngineRetriever, QdrantEngine
    from retrievers.index import Index
    from retrievers.rank.training import load_queries

    single = Index.open(args.single)
    other = Index.open(args.ray)
    queries = [q for q in load_queries(args.queries) if single.corpus.doc_id(q.doc) is not None]
    tmp = Path(tempfile.mkdtemp(prefix="scale-agree-"))
    try:
        engine = QdrantEngine.local(tmp / "qdrant")
        engine.sync(other, progress=False)
        retr = EngineRetriever(other, engine)
        out = {"queries": len(queries), "documents": len(single.corpus.doc_names),
               "same_documents": [d.name for d in single.documents()] == [d.name for d in other.documents()],
               "same_chunks": all([c.to_dict() for c in single.chunks(n)] == [c.to_dict() for c in other.chunks(n)]
                                  for n in single.corpus.doc_names)}
        if single.corpus.has_dense and other.corpus.has_dense:
            out["max_vector_difference"] = float(np.abs(single.corpus.chunk_vectors - other.corpus.chunk_vectors).max())
        for scope in ("doc", "collection"):
            same_order = same_set = 0
            for q in queries:
                doc = q.doc if scope == "doc" else None
                a = [h.chunk_id for h in single.search(q.query, k=10, doc=doc, mode="ranker")]
                b = [h.chunk_id for h in retr.search(q.query, k=10, doc=doc, mode="ranker")]
                same_order += a == b
                same_set += set(a) == set(b)
            out[scope] = {"same_top10_order": same_order, "same_top10_set": same_set,
                          "share_same_order": round(same_order / max(len(queries), 1), 4)}
        engine.close()
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        single.close()
        other.close()


def main(argv=None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "_child":
        config, kind, out, n = argv[1:5]
        print(json.dumps(_child_throughput(config, kind == "dense", Path(out), int(n))))
        return 0
    ap = argparse.ArgumentParser(prog="python -m eval.bench.scale", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    t = sub.add_parser("throughput")
    t.add_argument("--docs", type=int, default=20)
    t.add_argument("--dense", default="lexical,dense")
    t.add_argument("--configs", default="single,ray1,ray2")
    t.add_argument("--keep", default=None, metavar="DIR", help="keep the indexes here (DIR/<kind>-<config>)")
    t.add_argument("--out", default=out_path("scale", "scale-throughput.json"))
    s = sub.add_parser("sizing")
    s.add_argument("--chunks", type=int, default=100_000)
    s.add_argument("--queries", type=int, default=200)
    s.add_argument("--engine-queries", type=int, default=20, help="queries timed on each engine (default: 20)")
    s.add_argument("--out", default=out_path("scale", "scale-sizing.json"))
    tb = sub.add_parser("table", help="the throughput table of saved JSON files")
    tb.add_argument("files", nargs="+")
    a = sub.add_parser("agreement")
    a.add_argument("--single", required=True)
    a.add_argument("--ray", required=True)
    a.add_argument("--queries", default=str(data_dir("retrieval", "queries.jsonl")))
    a.add_argument("--out", default=out_path("scale", "scale-agreement.json"))
    args = ap.parse_args(argv)
    if args.what == "table":
        rows = [r for f in args.files for r in json.loads(Path(f).read_text())["rows"]]
        print(throughput_table(rows))
        return 0
    meta = {"commit": commit(mark_dirty=True), "command": " ".join(["python", "-m", "eval.bench.scale", *argv])}
    if args.what == "throughput":
        rows = throughput(args)
        body, table = {"meta": meta, "rows": rows}, throughput_table(rows)
    elif args.what == "sizing":
        r = sizing(args)
        body, table = {"meta": meta, **r}, sizing_table(r)
    else:
        r = agreement(args)
        body, table = {"meta": meta, **r}, json.dumps(r, indent=1)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(body, indent=1))
    print(f"{meta['command']} (commit {meta['commit']})\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
