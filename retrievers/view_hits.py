"""Search hits on their pages, through the core's HTML view (:mod:`structrag.view`).

``structrag query DIR "question" --html hits.html`` and ``structrag view DIR
--query "question" -o hits.html`` write the top hits with their section-path
breadcrumb, score and page image, the chunk's block boxes highlighted (the
index keeps each chunk's ``bboxes``).  ``structrag view DIR --queries
queries.jsonl -o misses.html`` runs an evaluation's queries and shows those
whose first hit is not on a relevant page, with the relevant pages beside what
was returned, so a retrieval failure can be looked at, not only counted.

This module extends the core's ``view`` command (``index_view``); the core
never imports retrievers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from structrag.errors import ConfigError, InputError
from structrag.view import DEFAULT_DPI, HitView, PageRef, QueryView, ViewStats, write_hits_view
from structrag.view.render import check_dpi, check_view_paths

__all__ = ["hit_views", "query_view", "write_query_view", "failed_queries_view", "register"]

#: relevant pages drawn beside a missed query's hits (a query with 30 relevant pages shows the first ones)
MAX_EXPECTED_PAGES = 3


def hit_views(index: Any, hits: Sequence[Any], relevant: Mapping[str, Iterable[int]] | None = None,
              _chunks: dict[str, dict[str, Any]] | None = None) -> tuple[HitView, ...]:
    """:class:`HitView` s for index hits, with each chunk's boxes; ``relevant`` (doc -> 0-based pages)
    marks each hit relevant or not."""
    cache = {} if _chunks is None else _chunks
    rel = {d: set(ps) for d, ps in (relevant or {}).items()}
    ids = index.identities() if hits and hasattr(index, "identities") else {}
    out = []
    for h in hits:
        if h.doc not in cache:
            cache[h.doc] = {c.id: c for c in index.chunks(h.doc)}
        c = cache[h.doc].get(h.chunk_id)
        out.append(HitView(doc=h.doc, score=float(h.score), section_path=tuple(h.section_path), text=h.text,
                           pages=tuple(h.pages), boxes=tuple(c.bboxes) if c is not None else (),
                           chunk_id=h.chunk_id, label=ids[h.doc].label() if ids.get(h.doc) else "",
                           relevant=None if relevant is None else bool(set(h.pages) & rel.get(h.doc, set()))))
    return tuple(out)


def query_view(index: Any, query: str, hits: Sequence[Any], *, doc: str | None = None,
               relevant_pages: Sequence[int] = (), _chunks: dict | None = None) -> QueryView:
    """One query's view; with ``relevant_pages`` (of ``doc``, 0-based) the hits are judged and the
    first relevant pages shown beside them."""
    if not relevant_pages or doc is None:
        return QueryView(query, hit_views(index, hits, _chunks=_chunks))
    hv = hit_views(index, hits, {doc: relevant_pages}, _chunks=_chunks)
    first = next((i for i, h in enumerate(hv, 1) if h.relevant), None)
    pages = ", ".join(str(p + 1) for p in relevant_pages[:MAX_EXPECTED_PAGES])
    note = (f"relevant: {doc} p. {pages}{' ...' if len(relevant_pages) > MAX_EXPECTED_PAGES else ''}; "
            + (f"first relevant hit at rank {first}" if first else f"no relevant hit in the top {len(hv)}"))
    return QueryView(query, hv, expected=tuple(PageRef(doc, p) for p in relevant_pages[:MAX_EXPECTED_PAGES]),
                     note=note)


def _sources(index: Any, needed: Iterable[str] | None = None) -> dict[str, str]:
    """Document name -> the PDF the index read; a PDF moved since then is an error naming both."""
    out = {d.name: d.path for d in index.documents()}
    for name in needed or ():
        if name in out and not Path(out[name]).is_file():
            raise InputError(f"the PDF of {name} is no longer at {out[name]}", path=index.path,
                             hint="page images are rendered from the indexed file: put it back, or index it again")
    return out


def write_query_view(index: Any, queries: Sequence[tuple[str, Sequence[Any]]] | Sequence[QueryView],
                     out: str | Path, *, inline: bool = False, dpi: int = DEFAULT_DPI) -> ViewStats:
    """Write the view of ``(query, hits)`` pairs (or prepared :class:`QueryView` s) searched in ``index``."""
    cache: dict[str, dict[str, Any]] = {}
    views = [q if isinstance(q, QueryView) else query_view(index, q[0], q[1], _chunks=cache) for q in queries]
    sources = _sources(index, {h.doc for v in views for h in v.hits})
    return write_hits_view(out, views, sources, inline=inline, dpi=dpi,
                           title=views[0].query if len(views) == 1 else f"{len(views)} queries")


def failed_queries_view(index: Any, queries: Sequence[Any], out: str | Path, *, k: int = 5, mode: str = "ranker",
                        candidates: int = 100, everything: bool = False, inline: bool = False,
                        dpi: int = DEFAULT_DPI) -> tuple[ViewStats | None, int, int]:
    """Search each query (a :class:`retrievers.rank.training.Query`) in its own document and write the view
    of those whose first hit is not on a relevant page (``everything``: of all).

    Returns (stats or None when nothing was written, queries searched, queries shown).  Queries
    on documents the index does not hold are left out.
    """
    held = set(_sources(index))
    cache: dict[str, dict[str, Any]] = {}
    views: list[QueryView] = []
    searched = 0
    for q in queries:
        if q.doc not in held:
            continue
        searched += 1
        hits = index.search(q.query, k=k, doc=q.doc, mode=mode, candidates=candidates)
        missed = not hits or not set(hits[0].pages) & set(q.relevant_pages)
        if missed or everything:
            views.append(query_view(index, q.query, hits, doc=q.doc, relevant_pages=q.relevant_pages, _chunks=cache))
    if not views:
        return None, searched, 0
    sources = _sources(index, {h.doc for v in views for h in v.hits} | {e.doc for v in views for e in v.expected})
    stats = write_hits_view(out, views, sources, inline=inline, dpi=dpi,
                            title=f"{len(views)} of {searched} queries")
    return stats, searched, len(views)


# --- command line -------------------------------------------------------------------------


def register(subparsers: Any, query_parser: argparse.ArgumentParser) -> None:
    """Add ``--html`` to ``query``, and index folders (``--query`` / ``--queries``) to the core's ``view``."""
    query_parser.add_argument("--html", default=None, metavar="FILE",
                              help="also write the hits as an HTML view: breadcrumb, score, the page with the "
                              "chunk's boxes (page images in FILE's _pages/ folder)")
    view = getattr(subparsers, "choices", {}).get("view")
    if view is None:  # a core without the view command
        return
    g = view.add_argument_group("search hits (TARGET is an index folder)")
    g.add_argument("--query", action="append", default=None, metavar="TEXT",
                   help="a question to search (repeat for several)")
    g.add_argument("--queries", default=None, metavar="JSONL",
                   help="an evaluation's queries (qid, query, doc, relevant_pages 0-based): show those whose "
                   "first hit is not on a relevant page, beside the relevant pages")
    g.add_argument("--all-queries", action="store_true", help="with --queries: show every query, not only misses")
    g.add_argument("-k", type=int, default=5, help="hits per query (default: 5)")
    g.add_argument("--doc", default=None, metavar="NAME", help="search only this indexed file")
    g.add_argument("--mode", default="ranker", choices=["bm25", "dense", "hybrid", "ranker"],
                   help="retrieval mode (default: ranker)")
    g.add_argument("--candidates", type=int, default=100, help="first-stage depth per retriever (default: 100)")
    view.set_defaults(index_view=_cmd_view_index)


def _cmd_view_index(args: argparse.Namespace) -> int:
    from .index import Index

    if not args.query and not args.queries:
        raise ConfigError("an index folder needs --query TEXT or --queries FILE", path=args.target)
    if args.k < 1:
        raise ConfigError("-k must be at least 1")
    dpi = check_dpi(DEFAULT_DPI if args.dpi is None else args.dpi)
    out = check_view_paths(args.output if args.output else "hits.html", inline=args.inline, flag="-o")
    with Index.open(args.target) as index:
        if args.queries:
            from .rank.training import load_queries

            stats, searched, shown = failed_queries_view(
                index, load_queries(args.queries), out, k=args.k, mode=args.mode, candidates=args.candidates,
                everything=args.all_queries, inline=args.inline, dpi=dpi)
            print(f"structrag: {shown} of {searched} queries shown"
                  + ("" if args.all_queries else " (first hit not on a relevant page)"), file=sys.stderr)
            if stats is None:
                return 0
        else:
            pairs = [(q, index.search(q, k=args.k, doc=args.doc, mode=args.mode, candidates=args.candidates))
                     for q in args.query]
            stats = write_query_view(index, pairs, out, inline=args.inline, dpi=dpi)
    print(f"structrag: {stats.summary()}", file=sys.stderr)
    return 0
