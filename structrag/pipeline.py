"""One call from a PDF to its heading tree: extract -> headings -> levels -> tree.

This is what ``structrag toc``, the indexer and the LlamaIndex reader run;
chunking is the next stage (:mod:`structrag.chunking`).  It also holds the two steps that join
the headings and levels stages: :func:`read_contents` (contents entries, their levels from the
contents layout, located as headings) and :func:`detect_headings` (outline, contents or layout).
"""

from __future__ import annotations

import os
import time
from functools import lru_cache
from typing import Any, Mapping, NamedTuple

from .errors import ConfigError
from .extraction import extract
from .headings.contents import SECONDARY, ContentsResult, contents_entries, locate_contents
from .headings.detect import layout_headings, merge_headings
from .headings.glossary import glossary_terms
from .levels.given import assign_contents_levels, outline_headings
from .model import Document, Heading
from ._progress import Progress
from .options import ContentsMode, OutlineMode, ParseOptions
from .tree import HeadingTree

__all__ = ["ParsedDocument", "parse_pdf", "parse_document", "detect_headings", "read_contents",
           "OutlineMode", "ContentsMode"]


def read_contents(
    document: Document,
    *,
    min_located: int = 3,
    min_located_share: float = 0.4,
) -> ContentsResult:
    """Find, parse, map, level and locate the printed contents of ``document``.

    The runs of :func:`~structrag.headings.contents.contents_entries`, levelled by
    :func:`~structrag.levels.given.assign_contents_levels`, go to
    :func:`~structrag.headings.contents.locate_contents`, which says when a run is
    used (``min_located``, ``min_located_share``) and never raises on odd contents.
    """
    runs = [(run, assign_contents_levels(entries)) for run, entries in contents_entries(document)]
    return locate_contents(document, runs, min_located=min_located, min_located_share=min_located_share)


def detect_headings(
    document: Document,
    options: ParseOptions | Mapping[str, Any] | None = None,
    *,
    min_outline_entries: int = 3,
    progress: Progress = None,
    **overrides: Any,
) -> tuple[Heading, ...]:
    """Headings of ``document`` in reading order.

    ``options`` (:class:`~structrag.options.ParseOptions`, a mapping of its
    fields, or its fields as keywords) say where headings come from; this step
    reads ``outline``, ``contents``, ``min_score``, ``layout_model``,
    ``heading_filter`` and ``password``.  With ``outline="auto"`` and an outline of at least
    ``min_outline_entries`` entries, its located entries are returned
    (``source="outline"``, levels set); entries not found on their pages are
    kept at the top of their page with ``bbox=None``.  Otherwise, with
    ``contents="auto"`` and a usable printed table of contents, its located
    entries (``source="contents"``, levels set from the contents layout, or
    levels within their run only for a secondary contents such as a financial
    statements index) are merged with the layout-detected headings that no
    contents entry holds (``source="layout"``, level unset).  Without either,
    the layout-detected headings (blocks scoring at least ``min_score``) are
    returned.  On both paths a glossary's defined terms are left out
    (:func:`.headings.glossary.glossary_terms`).  Every heading carries its
    reasons.

    ``layout_model=True`` asks PyMuPDF's layout model for a second opinion on
    the layout-detected headings (:mod:`.headings.layout_model`): one inside a
    table or a picture is left out.  It reads the PDF again (``password`` for
    an encrypted one) at about 0.2 s a page, with a bar (``progress``).
    ``heading_filter=True`` asks the learned filter (:mod:`.headings.learned_filter`)
    the same of every layout-detected heading: a table's row labels, column
    headers and titles, chart labels are left out.  It reads the ruling lines of
    the pages holding one.
    """
    opts, unknown = ParseOptions.split(options, overrides)
    if unknown:
        raise ConfigError(f"unknown parse option(s) {', '.join(map(repr, sorted(unknown)))}",
                          hint="the options are the fields of structrag.options.ParseOptions")
    o = opts.resolved()
    outline, contents, min_score, layout_model = o["outline"], o["contents"], o["min_score"], o["layout_model"]
    password = o["password"]
    if outline == "auto" and len(document.outline) >= min_outline_entries:
        return outline_headings(document)
    layout = layout_headings(document, min_score)
    if contents != "ignore":
        found = read_contents(document)
        if found.usable:
            layout = merge_headings(found.headings, layout, document)
    drop = set(glossary_terms(layout))  # a glossary's defined terms are its entries, not sections
    if layout_model:
        from .headings.layout_model import layout_vetoes

        drop |= set(layout_vetoes(document, layout, password=password, progress=progress))
    kept = tuple(h for k, h in enumerate(layout) if k not in drop)
    if o["heading_filter"]:
        from .headings.learned_filter import filter_vetoes

        # judged on the headings as they stand, as the filter was trained
        vetoed = filter_vetoes(document, kept, *_heading_filter(), password=password)
        kept = tuple(h for k, h in enumerate(kept) if k not in vetoed)
    return kept


@lru_cache(maxsize=1)
def _heading_filter() -> tuple[Any, float]:
    """The shipped heading filter model and its threshold, read once."""
    from .headings.learned_filter import filter_model_files
    from .levels.gbdt import load_model

    path, threshold = filter_model_files()
    return load_model(path), threshold


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
    options: ParseOptions | Mapping[str, Any] | None = None,
    *,
    progress: Progress = None,
    checkpoint: str | os.PathLike[str] | None = None,
    **overrides: Any,
) -> ParsedDocument:
    """Headings and tree for an extracted document (see :func:`parse_pdf`)."""
    opts, predictor_options = ParseOptions.split(options, overrides)
    o = opts.resolved()
    stats: dict[str, Any] = {}
    t0 = time.perf_counter()
    headings = detect_headings(document, opts, progress=progress)
    stats["detect_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    if headings and any(h.level is None or h.level_source == SECONDARY for h in headings):
        from .levels import assign_levels

        result = assign_levels(
            document,
            headings,
            predictor=o["predictor"],
            memory=o["memory"],
            granularity=o["granularity"],
            progress=False if callable(progress) else progress,  # a page counter counts no headings
            checkpoint=checkpoint,
            fallback=o["fallback"],
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
    options: ParseOptions | Mapping[str, Any] | None = None,
    *,
    progress: Progress = None,
    checkpoint: str | os.PathLike[str] | None = None,
    **overrides: Any,
) -> ParsedDocument:
    """Extract ``path``, find its headings, predict their levels, build the tree.

    >>> parse_pdf("report.pdf", outline="ignore", predictor="rules")      # doctest: +SKIP
    >>> parse_pdf("report.pdf", ParseOptions(layout_model=True))          # doctest: +SKIP

    The options are the fields of :class:`~structrag.options.ParseOptions`,
    given as one object or mapping, as keywords, or both (a keyword wins); a
    keyword that is not a field goes to the level predictor (``seed``,
    ``model_path``, a model server's ``base_url``).  ``outline="auto"`` takes
    the PDF's own outline as the headings when it has one (the strongest signal
    in production); ``"ignore"`` detects headings otherwise.
    ``contents="auto"`` then takes the entries of the printed table of
    contents, located on their pages, as headings with their levels fixed,
    beside the layout-detected headings it does not list (``"ignore"``: layout
    only; ``layout_model=True``: PyMuPDF's layout model rules out headings
    inside tables and pictures, :func:`detect_headings`).  Levels not fixed are
    predicted with ``predictor`` (a name such as ``learned``, ``rules``,
    ``font-size``, ``vlm``, or a :class:`~structrag.levels.base.LevelPredictor`)
    over the ``memory`` strategy.  ``progress`` and ``checkpoint`` belong to
    this run only: ``progress`` shows bars on stderr (None: on a terminal), or is a
    function called with each page read (and each page the layout model reads).  Raises the errors of :func:`structrag.extraction.extract`.
    """
    opts, predictor_options = ParseOptions.split(options, overrides)
    o = opts.resolved()
    t0 = time.perf_counter()
    document = extract(path, password=o["password"], max_pages=o["max_pages"], progress=progress)
    extract_s = time.perf_counter() - t0
    parsed = parse_document(document, opts, progress=progress, checkpoint=checkpoint, **predictor_options)
    parsed.stats["extract_s"] = extract_s
    parsed.stats["pages"] = document.page_count
    return parsed
