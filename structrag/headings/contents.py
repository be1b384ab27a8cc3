"""The printed table of contents as a heading signal.

Most long reports print a contents page ("Contents", "Table of Contents", "目录") even when the
file has no bookmarks.  Extraction marks those pages (:mod:`structrag.extraction.contents_pages`);
this stage reads them in sub-stages:

1. **entries** (:mod:`.contents_entries`): rows parsed into titles, printed page labels,
   numbering and indentation;
2. **pages** (:mod:`.page_labels`): printed labels mapped to physical pages;
3. **levels** from the contents layout: the levels stage's
   :func:`structrag.levels.given.assign_contents_levels`;
4. **headings** (:func:`locate_contents`): each mapped entry located on its page with
   :func:`~structrag.headings.outline.locate_outline` (the locator used for bookmarks).

:func:`structrag.pipeline.read_contents` runs the four.  Every rule is generic (no document or
publisher is named anywhere); the reasons each heading carries say which evidence placed it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple, Sequence

from ..model import Document, Heading, OutlineEntry
from .contents_entries import ContentsEntry, contents_runs, parse_contents
from ..text import clean_heading
from .not_headings import text_code
from .not_headings.reasons import NotHeading
from .outline import locate_outline
from .page_labels import TitleIndex, footer_labels, map_pages

__all__ = ["ContentsResult", "contents_entries", "locate_contents", "SECONDARY", "LOST_BEFORE", "follows_lost_entry"]


def _heads_no_section(title: str, page: int) -> bool:
    """An entry that heads no section: the period line of the contents page's title block ("For the Year
    Ended ..."), or a row of a printed list of figures or tables ("Figure 3: ...", "Table 4.2. ...").  A list
    numbers its rows: a lettered one ("TABLE A - CALCULATION OF PENSIONS") may open a plan's schedule."""
    code = text_code(title, page)
    if code is NotHeading.CAPTION:
        words = title.split()
        return len(words) > 1 and any(c.isdigit() for c in words[1])
    return code is NotHeading.COLUMN_HEADER


#: ``level_source`` of a secondary contents run's entries: ``level`` is their level within the run only
SECONDARY = "contents-secondary"


class ContentsResult(NamedTuple):
    """What the printed contents gave: located headings, every entry, and counts.

    ``headings`` are in reading order (``source="contents"``); those from the
    main run (the first run that locates enough of its entries) carry their contents
    level (``level_source="contents"``), those of other runs (a financial
    statements index, an attached document's contents) carry their level within
    their run (``level_source="contents-secondary"``): the level predictor places
    the run and keeps how its entries nest.  ``usable`` says whether the main run located enough
    entries to be trusted; ``stats`` counts entries found / labelled / mapped /
    located per run.
    """

    headings: tuple[Heading, ...]
    entries: tuple[ContentsEntry, ...]
    runs: tuple[tuple[int, ...], ...]
    usable: bool
    stats: dict


def _plausible(document: Document, h: Heading, title: str) -> bool:
    """A located block must be the heading, not a contents line or a paragraph that starts like it."""
    bs = document.blocks[h.block:h.block_end]
    if any(b.role == "toc" for b in bs):
        return False
    n = sum(len(b.text) for b in bs)
    return n <= max(3 * len(title), len(title) + 100)


#: the reason a located entry carries when the contents list an entry with a page number that was not located,
#: on a page from the previous located entry's to this one's: the headings between them may belong to it
LOST_BEFORE = "after a contents entry not located: "


def follows_lost_entry(h: Heading) -> bool:
    """Whether ``h`` is a located entry that :data:`LOST_BEFORE` marks (a reason is the one field a heading
    carries it in; this module writes it and reads it)."""
    return any(r.startswith(LOST_BEFORE) for r in h.reasons)


def _mark_lost_before(entries: Sequence[ContentsEntry], found: dict[int, Heading]) -> None:
    """Add :data:`LOST_BEFORE` to the reasons of each located entry (``found``, by index into ``entries``)
    with an unlocated entry of the contents mapped to a page from the located entry before it up to its own.
    Pages, not the contents' order or levels: a contents set in two columns can be read out of order.
    Dividers (no page label) are placed by :func:`_unprinted_parents` and lose nothing."""
    lost = [e for k, e in enumerate(entries) if k not in found and e.label is not None]
    prev = -1
    for k in sorted(found, key=lambda k: (found[k].page, found[k].block)):
        h = found[k]
        here = [e for e in lost if prev <= e.page <= h.page]
        if here:
            found[k] = replace(h, reasons=h.reasons + (LOST_BEFORE + repr(here[0].title[:60]),))
        prev = h.page


def _unprinted_parents(entries: Sequence[ContentsEntry], found: dict[int, Heading]) -> list[Heading]:
    """Contents dividers printed nowhere in the body, placed before the first of their located entries.

    A 10-Q's contents groups its sections under "Part I – Financial information" and "Item 2. Management's
    Discussion ...", lines with no page number that the body never prints: the sections start with their own
    titles.  Such a divider (no page label, not located) that heads located entries (the deeper entries after
    it, up to the next one at its level or above) becomes a heading with no box and no text of its own
    (``bbox=None``, ``block == block_end``, like an outline entry not found on its page), at the earliest
    block of those entries, so the tree keeps the contents' grouping.  An entry with a page number that could
    not be located is a title the locator missed, and nothing is made up for it.
    """
    out: list[Heading] = []
    for k, e in enumerate(entries):
        if k in found or e.label is not None or e.level is None or text_code(e.title, e.page) is not None:
            continue  # a "(continued)" repeat of a parent, or a wrapped "Years Ended ..." line, heads nothing
        kids: list[Heading] = []
        for j in range(k + 1, len(entries)):
            if entries[j].level is None or entries[j].level <= e.level:
                break
            if j in found:
                kids.append(found[j])
        if not kids:
            continue
        first = min(kids, key=lambda h: h.block)
        out.append(Heading(
            text=clean_heading(e.title), page=first.page, bbox=None, block=first.block, block_end=first.block,
            source="contents", level=e.level, level_source="contents", confidence=1.0, score=0.0,
            reasons=(f"contents entry on p.{e.contents_page + 1} (divider)",
                     f"not printed in the body: placed before {first.text[:40]!r}",
                     f"level {e.level}: {e.level_reason}")))
    return out


def contents_entries(document: Document) -> list[tuple[tuple[int, ...], list[ContentsEntry]]]:
    """Each run of contents pages with its entries, pages mapped, levels not set."""
    titles = TitleIndex(document)
    footers = footer_labels(document)
    return [(run, map_pages(document, parse_contents(document, run), titles=titles, footers=footers))
            for run in contents_runs(document)]


def locate_contents(
    document: Document,
    runs: Sequence[tuple[tuple[int, ...], Sequence[ContentsEntry]]],
    *,
    min_located: int = 3,
    min_located_share: float = 0.4,
) -> ContentsResult:
    """Locate the entries of each run (levels set) on their pages and choose the runs to use.

    A run is used when it located at least ``min_located`` entries and
    ``min_located_share`` of those mapped to a page of the file; the contents
    is ``usable`` when one run is.
    Never raises on odd contents: entries that cannot be mapped or located
    are counted and left out of the headings.
    """
    stats: dict = {"runs": [], "entries": 0, "labelled": 0, "mapped": 0, "located": 0}
    if not runs:
        return ContentsResult((), (), (), False, stats)
    per_run: list[tuple[tuple[int, ...], Sequence[ContentsEntry], list[Heading]]] = []
    for run, entries in runs:
        usable_entries = [e for e in entries if e.page >= 0 and e.page not in run]
        located = locate_outline(document, [OutlineEntry(e.level, e.title, e.page) for e in usable_entries],
                                 source="contents")
        found: dict[int, Heading] = {}
        for k, (e, le) in enumerate(zip(usable_entries, located)):
            h = le.heading
            if h is None or not _plausible(document, h, e.title):
                continue
            if _heads_no_section(e.title, e.page):
                continue
            reasons = (
                f"contents entry on p.{e.contents_page + 1}"
                + (f" (label {e.label})" if e.label is not None else " (divider)"),
                f"page from {e.mapped}",
                f"contents match {le.match:.2f}",
                f"level {e.level}: {e.level_reason}",
            )
            found[k] = replace(h, score=le.match, reasons=reasons, confidence=1.0)
        _mark_lost_before(usable_entries, found)
        heads: list[Heading] = list(found.values()) + _unprinted_parents(usable_entries, found)
        labelled = sum(1 for e in entries if e.label is not None)
        stats["runs"].append({"pages": [p + 1 for p in run], "entries": len(entries), "labelled": labelled,
                              "mapped": sum(1 for e in entries if e.page >= 0), "located": len(found)})
        per_run.append((run, entries, heads))
    # the main run is the first one that locates enough of its entries: the document's own contents
    # comes before a financial statements index, a chapter's contents or an attached document's
    # the share counts the entries mapped inside the file: a truncated file's contents stays usable
    # (unprinted parents do not count: a run is trusted for the entries it found on their pages)
    ok = [rs["located"] >= min_located and rs["located"] >= min_located_share * max(rs["mapped"], 1)
          for rs in stats["runs"]]
    usable = any(ok)
    main = ok.index(True) if usable else 0
    taken: set[int] = set()
    out: list[Heading] = []
    order = [main] + [k for k in range(len(per_run)) if k != main]
    for k in order:
        run, entries, heads = per_run[k]
        rs = stats["runs"][k]
        rs["used"] = bool(ok[k])
        if not rs["used"]:
            continue
        for h in heads:
            span = set(range(h.block, h.block_end))
            if span & taken:
                continue  # an entry of an earlier run (or of this one) already holds the block
            taken |= span
            if k != main:
                # the run's own levels only say how its entries nest among themselves: the level
                # predictor places the run and reads these relative to its first entry
                h = replace(h, level_source=SECONDARY, confidence=None,
                            reasons=h.reasons + ("level relative to the run (secondary contents)",))
            out.append(h)
    # an unprinted parent comes before the entries it heads at the same block (stable: contents order)
    out.sort(key=lambda h: (h.block, h.bbox is not None))
    all_entries = tuple(e for _, es, _ in per_run for e in es)
    stats.update(entries=len(all_entries), labelled=sum(1 for e in all_entries if e.label is not None),
                 mapped=sum(1 for e in all_entries if e.page >= 0), located=len(out), main_run=main + 1,
                 usable=usable)
    return ContentsResult(tuple(out), all_entries, tuple(run for run, _ in runs), usable, stats)