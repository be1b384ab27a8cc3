"""One call from a PDF to its heading tree: extract -> detect -> levels -> tree.

This is what ``structrag toc``, the indexer and the LlamaIndex reader run;
chunking is the next stage (:mod:`structrag.chunking`).
"""

from __future__ import annotations

import os
import time
from typing import Any, NamedTuple

from .detect import ContentsMode, OutlineMode, detect_headings
from .extract import extract
from .model import Document, Heading
from .tree import HeadingTree

__all__ = ["ParsedDocument", "parse_pdf", "parse_document"]


class ParsedDocument(NamedTuple):
    """A document with its headings (levels set) and the tree they make.

    ``stats`` holds timings (``extract_s``, ``detect_s``, ``levels_s``) and the
    level predictor's accounting (calls, retries, projections, ...).
    """

    document: Document
    headings: tuple[Heading, ...]
    tree: HeadingTree
    stats: dict[str, Any]


def parse_document(
    document: Document,
    *,
    outline: OutlineMode = "auto",
    contents: ContentsMode = "auto",
    predictor: Any = "learned",
    memory: str = "recent",
    granularity: str | int = "heading",
    min_score: float = 2.0,
    progress: bool | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    fallback: Any = None,
    **predictor_options: Any,
) -> ParsedDocument:
    """Headings and tree for an extracted document (see :func:`parse_pdf`)."""
    stats: dict[str, Any] = {}
    t0 = time.perf_counter()
    headings = detect_headings(document, outline=outline, contents=contents, min_score=min_score)
    stats["detect_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    if headings and any(h.level is None for h in headings):
        from .levels import assign_levels

        result = assign_levels(
            document,
            headings,
            predictor=predictor,
            memory=memory,
            granularity=granularity,
            progress=progress,
            checkpoint=checkpoint,
            fallback=fallback,
            **predictor_options,
        )
        headings = tuple(result.headings)
        stats["levels"] = dict(result.stats)
    stats["levels_s"] = time.perf_counter() - t0
    stats["headings"] = len(headings)
    stats["heading_source"] = headings[0].source if headings else None
    sources: dict[str, int] = {}
    for h in headings:
        sources[h.source] = sources.get(h.source, 0) + 1
    stats["heading_sources"] = sources
    tree = HeadingTree.from_headings(headings, len(document.blocks), document.name)
    return ParsedDocument(document, headings, tree, stats)


def parse_pdf(
    path: str | os.PathLike[str],
    *,
    outline: OutlineMode = "auto",
    contents: ContentsMode = "auto",
    predictor: Any = "learned",
    memory: str = "recent",
    granularity: str | int = "heading",
    password: str | None = None,
    max_pages: int | None = None,
    progress: bool | None = None,
    min_score: float = 2.0,
    checkpoint: str | os.PathLike[str] | None = None,
    fallback: Any = None,
    **predictor_options: Any,
) -> ParsedDocument:
    """Extract ``path``, find its headings, predict their levels, build the tree.

    ``outline="auto"`` takes the PDF's own outline as the headings when it has
    one (the strongest signal in production); ``"ignore"`` detects headings
    otherwise.  ``contents="auto"`` then takes the entries of the printed table
    of contents, located on their pages, as headings with their levels fixed,
    beside the layout-detected headings it does not list (``"ignore"``: layout
    only).  Levels not fixed are predicted with ``predictor`` (a name
    such as ``learned``, ``rules``, ``font-size``, ``vlm``, or a
    :class:`~structrag.levels.base.LevelPredictor`) over the ``memory``
    strategy.  Raises the errors of :func:`structrag.extract.extract`.
    """
    t0 = time.perf_counter()
    document = extract(path, password=password, max_pages=max_pages, progress=progress)
    extract_s = time.perf_counter() - t0
    parsed = parse_document(
        document,
        outline=outline,
        contents=contents,
        predictor=predictor,
        memory=memory,
        granularity=granularity,
        min_score=min_score,
        progress=progress,
        checkpoint=checkpoint,
        fallback=fallback,
        **predictor_options,
    )
    parsed.stats["extract_s"] = extract_s
    parsed.stats["pages"] = document.page_count
    return parsed
