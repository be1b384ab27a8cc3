"""Build the benchmark indexes over ../shared/data/retrieval (run once; results cached under .cache/).

1. a lexical index (parse + chunk + BM25) of every PDF, timing each document;
2. a dense index with the same chunks (no second parse), embedding them with the
   default MiniLM model through an embedding cache, so a rerun embeds nothing.

    nice -n 10 python -m eval.bench.retrieval_build [--data ../shared/data/retrieval] [--cache .cache]

Parse options: headings from each PDF's outline where it has one, else detected
and levelled by the ``learned`` predictor, the library's default (``--predictor`` to change;
the first published run used ``rules``).
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.retrieval_build", description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(data_dir("retrieval")))
    ap.add_argument("--cache", default=str(REPO / ".cache"))
    ap.add_argument("--predictor", default="learned")
    ap.add_argument("--threads", type=int, default=1, help="torch threads for embedding")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    cache = Path(args.cache)
    os.environ.setdefault("STRUCTRAG_EMBEDDING_CACHE", str(cache / "embeddings.sqlite"))
    from retrievers.index import Index

    lex_dir, dense_dir = cache / "retrieval-lexical", cache / "retrieval-dense"
    timings = {}
    t0 = time.perf_counter()

    def ev(kind, name, detail):
        timings[name] = {"kind": kind, "done_at_s": round(time.perf_counter() - t0, 2), "detail": detail}
        print(f"{time.perf_counter() - t0:8.1f}s {kind} {name} {detail}", file=sys.stderr, flush=True)

    lex = Index.open(lex_dir) if (lex_dir / "index.sqlite").exists() else Index.create(
        lex_dir, dense=False, parse_options={"predictor": args.predictor})
    report = lex.add([Path(args.data) / "pdfs"], on_event=ev)
    lex_s = time.perf_counter() - t0

    import torch

    torch.set_num_threads(args.threads)
    t1 = time.perf_counter()
    dense = Index.open(dense_dir) if (dense_dir / "index.sqlite").exists() else Index.create(dense_dir, dense=True)
    have = {d.name: d.sha1 for d in dense.documents()}
    for d in lex.documents():
        if have.get(d.name) == d.sha1:
            continue
        t = time.perf_counter()
        dense.add_chunks(d.name, lex.chunks(d.name), page_count=d.page_count, sha1=d.sha1, path=d.path,
                         tree=lex.tree(d.name), document=lex.document(d.name), publish=False)
        print(f"embedded {d.name}: {d.n_chunks} chunks in {time.perf_counter() - t:.1f}s", file=sys.stderr, flush=True)
    dense.flush()
    dense_s = time.perf_counter() - t1
    out = {
        "lexical_index": str(lex_dir), "dense_index": str(dense_dir),
        "documents": len(lex.documents()), "pages": sum(d.page_count for d in lex.documents()),
        "chunks": len(lex), "failed": report.failed,
        "lexical_build_s": round(lex_s, 1), "dense_build_s": round(dense_s, 1), "per_document": timings,
    }
    (cache / "retrieval-build.json").write_text(json.dumps(out, indent=2))
    print(json.dumps({k: v for k, v in out.items() if k != "per_document"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
