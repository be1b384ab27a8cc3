"""Locate outline (bookmark) entries on their pages.

A PDF outline gives a title, a level and a target page, but no position.  To
use it as headings — in production, where it is the strongest signal, and in
evaluation, where it is the reference — each entry is matched to the body
block(s) printing it: same page first, then the page after and before (an
outline jumps to the page before or after the printed heading now and then),
fuzzy on normalised text because outline titles drop or add numbers, change
case, and get abbreviated.  Matches go forward in reading order.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Sequence

from ..model import Block, Document, Heading, OutlineEntry
from ..numbering import parse_numbering
from ..text import clean_heading, normalize_title, strip_number

__all__ = ["locate_outline", "LocatedEntry", "heading_from_block", "similarity"]

@dataclass(frozen=True, slots=True)
class LocatedEntry:
    """An outline entry and where it was found (``heading`` is None if nowhere)."""

    entry: OutlineEntry
    heading: Heading | None
    match: float  # similarity of the best match, 0 when not found


def heading_from_block(
    document: Document,
    first: int,
    last: int,
    *,
    text: str | None = None,
    source: str = "layout",
    level: int | None = None,
    level_source: str | None = None,
    score: float = 1.0,
    reasons: tuple[str, ...] = (),
) -> Heading:
    """A :class:`Heading` spanning body blocks ``first..last`` (inclusive)."""
    bs = document.blocks[first : last + 1]
    b0 = bs[0]
    bbox = (
        min(b.bbox[0] for b in bs),
        min(b.bbox[1] for b in bs),
        max(b.bbox[2] for b in bs),
        max(b.bbox[3] for b in bs),
    )
    if text is None:
        text = " ".join(b.text for b in bs)
    # every path (layout, contents, outline, references) gives the text a reader sees: no soft hyphens
    # or control characters, one line
    text = clean_heading(text)
    num, _ = parse_numbering(text)
    return Heading(
        text=text,
        page=b0.page,
        bbox=bbox,
        block=first,
        block_end=last + 1,
        font=b0.font,
        size=b0.size,
        bold=b0.bold,
        italic=b0.italic,
        color=b0.color,
        numbering=num,
        score=score,
        reasons=reasons,
        source=source,
        level=level,
        level_source=level_source,
        confidence=1.0 if level_source in ("outline", "reference") else None,
    )


def similarity(a: str, b: str) -> float:
    """How alike two normalised titles are, 0..1 (a prefix of the other counts high)."""
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    if b.startswith(a) or a.startswith(b):
        short, long_ = sorted((len(a), len(b)))
        # a heading whose title continues ("Item 7." vs "Item 7. Management's ...")
        return 0.85 + 0.15 * short / long_ if short >= 4 else 0.5
    if 2 * min(len(a), len(b)) < 0.75 * (len(a) + len(b)):
        return 0.0  # SequenceMatcher.real_quick_ratio, without building the matcher (the costly part)
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if sm.quick_ratio() < 0.75:
        return 0.0
    return sm.ratio()


def _candidates(blocks: Sequence[Block], max_join: int = 3):
    """(first, last, normalised text) for single blocks and short runs of blocks."""
    for i in range(len(blocks)):
        text = ""
        for j in range(i, min(i + max_join, len(blocks))):
            if j > i and blocks[j].page != blocks[i].page:
                break
            text = (text + " " + blocks[j].text).strip()
            if len(text) > 400:
                break
            yield i, j, normalize_title(text)


def _goes_on(document: Document, first: int, last: int, rest: str) -> bool:
    """Whether the block after ``last`` or the one before ``first``, on their page, prints the start of
    ``rest`` (normalised): the title wraps on there ("Item 3. Quantitative and Qualitative Disclosures About"
    / "Market Risk."; a line read out of order, "baskets" before "Removing the freezer")."""
    head = " ".join(rest.split()[:2])
    page = document.blocks[first].page
    for k in (last + 1, first - 1):
        if 0 <= k < len(document.blocks) and document.blocks[k].page == page:
            near = normalize_title(document.blocks[k].text)
            if near and head and (near.startswith(head) or rest.startswith(near)):
                return True
    return False


def locate_outline(
    document: Document,
    entries: Sequence[OutlineEntry] | None = None,
    *,
    threshold: float = 0.8,
    source: str = "outline",
) -> list[LocatedEntry]:
    """Find each outline entry's printed heading; entries stay in outline order.

    The returned headings carry the entry's title as ``text``, its level
    (``level_source`` = ``source``) and the style of the block found.
    """
    if entries is None:
        entries = document.outline
    out: list[LocatedEntry] = []
    cursor = 0  # matches move forward in reading order
    cache: dict[int, list[tuple[int, int, str]]] = {}
    singles: dict[int, list[tuple[int, str]]] = {}

    def page_cands(p: int) -> list[tuple[int, int, str]]:
        if p not in cache:
            lo, hi = document._page_block_range(p)
            cache[p] = [(lo + a, lo + b, t) for a, b, t in _candidates(document.blocks[lo:hi])]
        return cache[p]

    def page_singles(p: int) -> list[tuple[int, str]]:
        if p not in singles:
            lo, hi = document._page_block_range(p)
            singles[p] = [(lo + k, normalize_title(b.text)) for k, b in enumerate(document.blocks[lo:hi])]
        return singles[p]

    for e in entries:
        want = normalize_title(e.title)
        want_bare = strip_number(want, e.title)
        best: tuple[float, int, int] | None = None
        if 0 <= e.page < document.page_count and want:
            # fast path: an exact single-block match on the target page, in reading order, scores the
            # maximum (1.0) and the first one found wins anyway
            for first, cand in page_singles(e.page):
                if first >= cursor and cand == want:
                    best = (1.0, first, first)
                    break
        if best is None and e.page >= 0 and want:
            for k, p in enumerate((e.page, e.page + 1, e.page - 1)):
                if not 0 <= p < document.page_count:
                    continue
                for first, last, cand in page_cands(p):
                    s = max(similarity(want, cand), similarity(want_bare, cand) - 0.02 if want_bare != want else 0.0)
                    if s < threshold:
                        continue
                    s -= 0.05 * k  # prefer the target page
                    if first < cursor:
                        s -= 0.1  # prefer reading order
                    s -= 0.01 * (last - first)  # prefer the shortest run that matches
                    if best is None or s > best[0]:
                        best = (s, first, last)
                if best is not None and best[0] >= 0.97:
                    break
        if best is None:
            out.append(LocatedEntry(e, None, 0.0))
            continue
        s, first, last = best
        cursor = max(cursor, first)
        title = e.title
        if source == "contents":
            # a contents entry may describe more than its page prints ("Consolidated balance sheets
            # (unaudited) at June 30, 2023 and December 31, 2022" over "Consolidated balance sheets
            # (unaudited)"): the title printed where the section opens is the heading's
            printed = " ".join(b.text for b in document.blocks[first : last + 1])
            short = normalize_title(printed)
            if len(short) >= 4 and want != short and want.startswith(short + " ") \
                    and not _goes_on(document, first, last, want[len(short) + 1 :]):
                title = printed
        h = heading_from_block(document, first, last, text=title, source=source, level=e.level,
                               level_source=source)
        out.append(LocatedEntry(e, h, round(min(1.0, s + 0.05), 4)))
    return out
