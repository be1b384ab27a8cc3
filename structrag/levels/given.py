"""Levels that the document gives: the PDF's outline and the layout of its printed contents.

The levels stage's other half (:mod:`.walk`) predicts the levels nobody gave.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from ..headings.contents_entries import ContentsEntry
from ..headings.outline import locate_outline
from ..model import Document, Heading
from ..text import capitals_share, clean_heading

__all__ = ["outline_headings", "assign_contents_levels"]


def outline_headings(document: Document) -> tuple[Heading, ...]:
    """The outline's entries as headings with the outline's levels (``source="outline"``).

    Entries not found on their pages are kept at the top of their page with ``bbox=None``.
    """
    out: list[Heading] = []
    for le in locate_outline(document):
        if le.heading is not None:
            out.append(replace(le.heading, reasons=(f"outline match {le.match:.2f}",), score=le.match))
        elif le.entry.page >= 0:
            blk = min(document.first_block_on_or_after(le.entry.page), len(document.blocks))
            out.append(Heading(text=clean_heading(le.entry.title), page=le.entry.page, bbox=None, block=blk, block_end=blk,
                               source="outline", level=le.entry.level, level_source="outline",
                               confidence=1.0, score=0.0, reasons=("outline entry not found on its page",)))
    # outline order is reading order for well-formed outlines; keep a stable sort by position
    # for the rest so sections stay well defined
    out.sort(key=lambda h: h.block)
    return tuple(out)


# ---------------------------------------------------------------------------
# levels from the contents layout

#: heading-number schemes that nest in this order (smaller rank = higher level); others are compared by layout
_SCHEME_RANK = {"part": 0, "cn-part": 0, "chapter": 1, "cn-chapter": 1, "cn-section": 1, "article": 1,
                "item": 2, "section": 2, "cn-ordinal": 3, "cn-paren": 4, "num-dun": 5, "paren-num": 6}


def _compare(a: ContentsEntry, b: ContentsEntry, tol: float) -> tuple[int, str]:
    """(+1 if ``a`` is a higher level than ``b``, 0 if the same, -1 if lower; the evidence)."""
    na, nb = a.numbering, b.numbering
    if na is not None and nb is not None:
        if na.scheme == nb.scheme == "decimal":
            if len(na.values) != len(nb.values):
                return (1 if len(na.values) < len(nb.values) else -1), "numbering"
            return 0, "numbering"
        ra, rb = _SCHEME_RANK.get(na.scheme), _SCHEME_RANK.get(nb.scheme)
        if ra is not None and rb is not None and ra != rb:
            return (1 if ra < rb else -1), "numbering"
        if na.scheme == nb.scheme:
            return 0, "numbering"
    dx = a.indent - b.indent
    if (na is None) == (nb is None):
        if abs(dx) > tol:
            return (1 if dx < 0 else -1), "indent"
        return _compare_type(a, b)
    # a number often hangs left of the text column: between a numbered and an unnumbered entry a small
    # step of indentation may be the number's width, so the type decides first and the step only then
    if abs(dx) > max(tol, 2.5 * max(a.size, b.size)):
        return (1 if dx < 0 else -1), "indent"
    c, why = _compare_type(a, b)
    if c == 0 and abs(dx) > tol:
        return (1 if dx < 0 else -1), "indent"
    return c, why


def _caps(text: str) -> bool:
    return capitals_share(text, min_letters=3, share=0.9, ascii_only=True)


def _compare_type(a: ContentsEntry, b: ContentsEntry) -> tuple[int, str]:
    if abs(a.size - b.size) > 0.6:
        return (1 if a.size > b.size else -1), "size"
    if a.bold != b.bold:
        return (1 if a.bold else -1), "bold"
    ca, cb = _caps(a.title), _caps(b.title)
    if ca != cb:
        return (1 if ca else -1), "capitals"
    return 0, "same layout"


def assign_contents_levels(entries: Sequence[ContentsEntry]) -> list[ContentsEntry]:
    """Levels from numbering, indentation and type (a stack walk: the first is 1, each <= previous + 1)."""
    if not entries:
        return []
    sizes = sorted(e.size for e in entries)
    tol = max(2.0, 0.5 * sizes[len(sizes) // 2])  # indentation steps smaller than half an em are noise
    out: list[ContentsEntry] = []
    stack: list[tuple[ContentsEntry, int]] = []
    for e in entries:
        level, why = 1, "first" if not out else "top level"
        while stack:
            top, lv = stack[-1]
            c, ev = _compare(top, e, tol)
            if c == 0:
                level, why = lv, f"sibling by {ev}"
                stack.pop()
                break
            if c > 0:
                level, why = lv + 1, f"child by {ev}"
                break
            stack.pop()
        stack.append((e, level))
        out.append(replace(e, level=level, level_reason=why))
    return out
