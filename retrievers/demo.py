"""``structrag demo``: index one report into a cache folder and answer a question, offline.

Registered with the core CLI through the ``structrag.commands`` entry points.  Without arguments it
takes the shared 3M 10-K and asks for its capital expenditure.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from pathlib import Path
from typing import Any

from structrag.cli.options import add_progress_arguments
from structrag.errors import InputError
from structrag.files import cache_folder

from .cli import add_query_arguments, event_printer, print_hits

__all__ = ["register_demo", "default_demo_pdf", "DEMO_PDF", "DEMO_QUERY"]

DEMO_PDF = "3M_2018_10K.pdf"
DEMO_QUERY = "What was 3M's capital expenditure in 2018?"
GENERIC_QUERY = "What are the main risk factors?"


def _shared_data_dirs() -> list[Path]:
    out = []
    env = os.environ.get("STRUCTRAG_SHARED_DATA")
    if env:
        out.append(Path(env))
    here = Path(__file__).resolve()
    # a checkout sits beside shared/ (…/main/retrievers/demo.py -> …/shared/data)
    out += [here.parents[2] / "shared" / "data", Path.cwd().parent / "shared" / "data", Path.cwd() / "shared" / "data"]
    return out


def default_demo_pdf() -> Path:
    tried = []
    for d in _shared_data_dirs():
        p = d / "retrieval" / "pdfs" / DEMO_PDF
        tried.append(str(p))
        if p.is_file():
            return p
    raise InputError(
        f"the demo report {DEMO_PDF} was not found (looked in: {'; '.join(dict.fromkeys(tried))})",
        hint="pass a PDF: structrag demo REPORT.pdf \"your question\", or set STRUCTRAG_SHARED_DATA to the data folder",
    )


def register_demo(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "demo",
        help="index a report and answer a question, offline",
        description=f"Index a report into a cache folder and print the best passages for a question. Without "
        f"arguments: the shared {DEMO_PDF} and the question {DEMO_QUERY!r}.",
    )
    p.add_argument("pdf", nargs="?", default=None, metavar="PDF", help=f"the report (default: the shared {DEMO_PDF})")
    p.add_argument("query", nargs="?", default=None, metavar="QUERY", help="the question")
    p.add_argument("--cache", default=None, metavar="DIR", help="where the demo index is kept (default: ~/.cache/structrag)")
    p.add_argument("--no-dense", dest="dense", action="store_false", default=True,
                   help="BM25 and the lexical ranker only (no embeddings; faster on a slow machine)")
    add_query_arguments(p)
    p.set_defaults(k=5)
    add_progress_arguments(p)
    p.set_defaults(func=_cmd_demo)


def _cmd_demo(args: argparse.Namespace) -> int:
    from structrag.files import file_sha1

    from .index import Index
    from .store.database import DB_NAME

    pdf = Path(args.pdf) if args.pdf else default_demo_pdf()
    if not pdf.is_file():
        raise InputError("no such file", path=pdf)
    query = args.query or (DEMO_QUERY if pdf.name == DEMO_PDF else GENERIC_QUERY)
    sha = file_sha1(pdf)
    root = Path(args.cache) if args.cache else cache_folder()
    from .embed.encoder import dense_available

    dense = bool(args.dense) and dense_available()
    out = root / f"demo-{hashlib.sha1(sha.encode()).hexdigest()[:12]}{'' if dense else '-lexical'}"
    t0 = time.perf_counter()
    if (out / DB_NAME).exists():
        index = Index.open(out)
    else:
        print(f"indexing {pdf} into {out} (once; later runs reuse it)", file=sys.stderr)
        index = Index.create(out, dense=dense)
    with index:
        report = index.add([pdf], progress=args.progress, on_event=event_printer(False))
        if report.failed:
            print(f"structrag: error: {report.failed[0][1]}", file=sys.stderr)
            return 2
        t1 = time.perf_counter()
        from .store.identities import parse_where

        hits = index.search(query, k=args.k, mode=args.mode, where=parse_where(args.where), route=args.route)
        identities = index.identities()
        t2 = time.perf_counter()
        if not args.json:
            d = index.documents()[0]
            print(f"{d.name}: {d.page_count} pages, {d.n_chunks} chunks "
                  f"(index ready in {t1 - t0:.1f}s; search {1000 * (t2 - t1):.0f} ms, mode {args.mode})")
            print(f"question: {query}\n")
    print_hits(hits, as_json=args.json, identities=identities)
    return 0
