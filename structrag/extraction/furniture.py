"""Page furniture: running headers, footers and page numbers (the same text at the same place on
several pages), and running lines printed over the first heading of many pages.

They are taken out of the text (``Block.role``) but kept in :attr:`Document.furniture`.
"""

from __future__ import annotations

import re
from collections import defaultdict

from .blocks import _block_style, _PageBlock, _RawBlock

_DIGITS_RE = re.compile(r"\d+")
_WS_RE = re.compile(r"\s+")
_PAGE_NO_RE = re.compile(
    r"^(?:page\s*)?[-–—|]?\s*(?:\d{1,4}|[ivxlcdm]{1,7})\s*[-–—|]?(?:\s*(?:of|/)\s*\d{1,4})?$"
    r"|^\d{1,3}(?:\s*-\s*\d{1,4}){1,3}$"  # "1-1-3": Chinese prospectus page numbers
    r"|^第\s*\d+\s*页(?:\s*共\s*\d+\s*页)?$",
    re.I,
)
# a line that may be a contents row: ends in a page label after a space or leaders, is a bare label

# Margins (share of page height) where running headers / footers live.
_MARGIN = 0.12


def _furniture_key(text: str) -> str:
    return _DIGITS_RE.sub("#", _WS_RE.sub(" ", text.lower())).strip()


def _numbers_track_pages(texts_pages: list[tuple[str, int]]) -> bool:
    """Whether texts that differ only in numbers differ by the page number.

    "Annual Report | 45" on page 45 and "Annual Report | 46" on page 46 are a
    running footer; "1.2 Results" and "2.1 Outlook" at the top of two pages
    are headings that happen to share a shape.
    """
    offsets: list[set[int]] = []
    for text, page in texts_pages:
        nums = [int(n) for n in _DIGITS_RE.findall(text)]
        offsets.append({n - page for n in nums})
    common = set.intersection(*offsets) if offsets else set()
    if common:
        return True
    # a constant offset up to +-1 (odd/even page layouts, roman front matter)
    for base in offsets[0]:
        if all(any(abs(o - base) <= 1 for o in off) for off in offsets[1:]):
            return True
    return False


#: Where a block's first line is looked at for a repeated running line (share of page height).
_RUNNING_ZONE = 0.35


def _split_running_lines(pages: list[list[_PageBlock]], heights: list[float]) -> None:
    """Split off a block's first line when that line runs on many pages, in place.

    Financial statements print the company name over every statement title ("TD SYNNEX
    CORPORATION" / "CONSOLIDATED BALANCE SHEETS"); some reports repeat the chapter name over the
    first heading of each page.  A line that opens blocks (or stands alone) near the top of at
    least three pages is a running line: as a block of its own it is furniture or a repeated
    text, and the heading under it keeps its own words.
    """
    seen: dict[str, set[int]] = defaultdict(set)
    for p, blocks in enumerate(pages):
        limit = _RUNNING_ZONE * heights[p]
        for b in blocks:
            if b.bbox[1] > limit or b.rotated:
                continue
            first = b.text.split("\n", 1)[0]
            if 3 <= len(first) <= 80:
                seen[_furniture_key(first)].add(p)
    running = {k for k, ps in seen.items() if len(ps) >= 3 and k.strip("# ")}
    if not running:
        return
    for blocks in pages:
        out: list[_PageBlock] = []
        for b in blocks:
            if b.head_lines and _furniture_key(b.head_lines[0].text) in running:
                out.extend(_split_first_line(b))
            else:
                b.head_lines = None
                out.append(b)
        blocks[:] = out


def _split_first_line(b: _PageBlock) -> list[_PageBlock]:
    first, rest = b.head_lines[:1], b.head_lines[1:]
    out = []
    for part in (first, rest):
        rb = _RawBlock(min(ln.x0 for ln in part), min(ln.y0 for ln in part), max(ln.x1 for ln in part),
                       max(ln.y1 for ln in part), part, b.column)
        font, size, bold, italic, color = _block_style(rb)
        out.append(_PageBlock(b.page, (rb.x0, rb.y0, rb.x1, rb.y1), rb.text, font, size, bold, italic, color,
                              len(part), b.column, b.rotated, lines=part if b.lines is not None else None))
    return out


def _mark_furniture(pages: list[list[_PageBlock]], heights: list[float]) -> None:
    """Set the role of running headers, footers and page numbers, in place."""
    occurrences: dict[tuple[str, str], list[tuple[int, int, float, str]]] = defaultdict(list)
    for p, blocks in enumerate(pages):
        h = heights[p]
        for j, b in enumerate(blocks):
            if b.bbox[3] <= _MARGIN * h:
                zone = "top"
            elif b.bbox[1] >= (1 - _MARGIN) * h:
                zone = "bottom"
            else:
                continue
            t = b.text.strip()
            if len(t) > 200:
                continue
            if _PAGE_NO_RE.match(t.replace("\n", " ")):
                b.role = "page_number"
                continue
            occurrences[(zone, _furniture_key(t))].append((p, j, (b.bbox[1] + b.bbox[3]) / 2, t))
    n_pages = len(pages)
    min_pages = 2 if n_pages <= 6 else 3
    for (zone, key), occ in occurrences.items():
        if len({o[0] for o in occ}) < min_pages or not key.strip("# "):
            continue
        ys = sorted(o[2] for o in occ)
        med = ys[len(ys) // 2]
        close = [o for o in occ if abs(o[2] - med) <= 8]
        if len({o[0] for o in close}) < min_pages:
            continue
        if "#" in key:
            exact: dict[str, set[int]] = defaultdict(set)
            for o in close:
                exact[o[3]].add(o[0])
            same_text = any(len(ps) >= min_pages for ps in exact.values())
            if not same_text and not _numbers_track_pages([(o[3], o[0]) for o in close]):
                continue
        role = "header" if zone == "top" else "footer"
        for p, j, _, _ in close:
            pages[p][j].role = role

