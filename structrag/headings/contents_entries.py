"""Entries of a printed table of contents: one run of contents pages read into titles, printed
page labels, numbering and indentation.

Each row is parsed into a title and a printed page label (``12``, ``iii``, ``F-3``,
``1-1-20``; trailing after dot leaders or a gap, or leading as in "12 Strategy"); titles wrapped
over two rows are joined; rows without a label are section dividers ("PART II") that point where
the next entry does.  Levels are not set here: the levels stage does it from the layout
(:func:`structrag.levels.given.assign_contents_levels`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Sequence

from ..extraction.contents_pages import (
    COLUMN_HEAD_RE,
    LABEL_FULL,
    PAGE_HEAD,
    TRAIL_SPACE,
    HAS_WORD,
    Segment,
    block_fragments,
    label_ok,
    label_value,
    page_evidence,
    row_segments,
    rows_of,
)
from ..model import Document, Numbering
from ..numbering import parse_numbering
from ..text import HAN_ANY, is_contents_title

__all__ = ["ContentsEntry", "contents_runs", "parse_contents"]

_CJK = re.compile(rf"[{HAN_ANY}]")


@dataclass(frozen=True, slots=True)
class ContentsEntry:
    """One entry of a printed table of contents.

    ``label`` is the printed page label (None: a divider such as "PART II",
    which points where the next entry does); ``page`` the physical page
    (0-based) it was mapped to, -1 when unknown or past the end of the file;
    ``mapped`` says how: ``title`` (its title is printed on that page),
    ``footer`` (a printed page number there carries the label), ``offset``
    (the run's offset, not confirmed for this entry), ``divider`` (the next
    entry's page) or ``""`` (not mapped).  ``level`` comes from the contents
    layout (``level_reason`` says which evidence decided it); ``indent`` is
    the entry's left edge from the left of its column of the contents page
    (points), ``contents_page`` that page.
    """

    title: str
    label: str | None
    page: int = -1
    level: int = 1
    indent: float = 0.0
    numbering: Numbering | None = None
    contents_page: int = -1
    size: float = 0.0
    bold: bool = False
    mapped: str = ""
    level_reason: str = ""

    def to_dict(self) -> dict:
        return {
            "title": self.title, "label": self.label, "page": self.page, "level": self.level,
            "indent": round(self.indent, 2), "numbering": self.numbering.to_dict() if self.numbering else None,
            "contents_page": self.contents_page, "size": self.size, "bold": self.bold, "mapped": self.mapped,
            "level_reason": self.level_reason,
        }


def contents_runs(document: Document) -> list[tuple[int, ...]]:
    """The document's contents pages in runs of consecutive pages (an empty page in between is allowed).

    Back-of-book indexes that extraction took for contents pages are left out.
    """
    runs: list[list[int]] = []
    for p in sorted(document.toc_pages):
        if runs and (p - runs[-1][-1] == 1 or (p - runs[-1][-1] == 2 and not document.page_blocks(p - 1))):
            runs[-1].append(p)
        else:
            runs.append([p])
    out = []
    for r in runs:
        ev = page_evidence(block_fragments(document.page_blocks(r[0])), document.page_count)
        if not ev.index:
            out.append(tuple(r))
    return out


def _words(text: str) -> int:
    return len(text.split()) + len(_CJK.findall(text)) // 2


_SENTENCE = re.compile(r"[.;!?。；！？]['\"”’)]?$")  # not ":" - a divider may end with one


def _clean(segs: list[Segment], page_count: int) -> list[Segment]:
    """Drop what is not an entry: the title and what is above it, column heads, bare numbers, notes."""
    title_y = None
    for s in segs:
        # the page's title carries no page label ("Index . . . 226" is an entry)
        if s.label is None and is_contents_title(" ".join(f.text for f in s.frags), index=True):
            title_y = s.y1 if title_y is None else title_y
    sizes = sorted(s.size for s in segs if s.label is not None)
    entry_size = sizes[len(sizes) // 2] if sizes else 0.0
    out = []
    for s in segs:
        text = " ".join(f.text for f in s.frags)
        if s.label is None and s.size < entry_size - 1.0:
            continue  # smaller than the entries: a note or a disclaimer set on the contents page
        if title_y is not None and s.y1 <= title_y + 0.5:
            continue  # the title and the page's own header above it
        if COLUMN_HEAD_RE.match(text) or COLUMN_HEAD_RE.match(s.title):
            continue
        if s.label is None:
            if not HAS_WORD.search(s.title):
                continue
            numbered = parse_numbering(s.title)[0] is not None
            if _words(s.title) > 30 or (_SENTENCE.search(s.title) and _words(s.title) >= 6 and not numbered):
                continue  # a note under the table, not an entry
            if PAGE_HEAD.search(s.title):
                s = s._replace(title=PAGE_HEAD.sub("", s.title))  # "Part I – Financial information  Page"
        out.append(s)
    return out


def _merge(a: Segment, b: Segment, label_from: Segment) -> Segment:
    # Chinese lines wrap inside a word: no space where both sides are CJK
    sep = "" if _CJK.match(a.title[-1:] or " ") and _CJK.match(b.title[:1] or " ") else " "
    title = (a.title + sep + b.title).strip()
    return Segment(a.frags + b.frags, title, label_from.label, label_from.leading, a.x0,
                   max(a.title_x1, b.title_x1), min(a.y0, b.y0), max(a.y1, b.y1), a.size, a.bold)


def _join_wraps(segs: list[Segment]) -> list[Segment]:
    """Join titles wrapped over two rows (the page label sits on the first or on the second row)."""
    if not segs:
        return segs
    left = min(s.x0 for s in segs)
    right = max(max(f.x1 for f in s.frags) for s in segs)

    def long(s: Segment) -> bool:
        return s.title_x1 >= left + 0.6 * (right - left)

    def full(s: Segment) -> bool:  # the line ran to the right edge: it wrapped
        return max(f.x1 for f in s.frags) >= right - 4 * max(s.size, 1.0)

    def alone(i: int, x: float) -> bool:
        # a wrapped line is the only row at its indentation: the next row goes back (a list of
        # children, which a divider has, continues at the deeper indentation)
        return i + 1 >= len(segs) or segs[i + 1].x0 <= x + 2

    gaps = sorted(b.y0 - a.y1 for a, b in zip(segs, segs[1:]) if b.y0 - a.y1 > -1)
    usual = gaps[len(gaps) // 2] if gaps else 0.0  # the usual space between rows (wrapped lines keep it)
    out: list[Segment] = []
    for i, s in enumerate(segs):
        if out:
            p = out[-1]
            gap = s.y0 - p.y1
            tight = (-0.5 * max(p.size, s.size, 1.0) < gap < max(0.6 * max(p.size, s.size, 1.0), 1.15 * usual)
                     and abs(s.x0 - p.x0) < 0.4 * (right - left) and abs(s.size - p.size) <= 1.0)
            first = s.title[:1]
            cont = first == "" or first.islower() or not HAS_WORD.match(first) and not _CJK.match(first)
            own_number = parse_numbering(s.title)[0] is not None
            # a numbered title that ran to the right edge, its rest on the next row (unnumbered, alone)
            wrapped = full(p) and parse_numbering(p.title)[0] is not None and alone(i, p.x0)
            if tight and p.label is None and s.label is not None and not s.leading and not own_number and (
                    cont or wrapped or (long(p) and (s.x0 > p.x0 + 2 or _words(s.title) <= 3) and alone(i, p.x0))):
                out[-1] = _merge(p, s, s)
                continue
            if (tight and p.label is None and s.label is None and not own_number and full(p) and s.x0 > p.x0 + 2
                    and i + 1 < len(segs) and segs[i + 1].label is not None and abs(segs[i + 1].x0 - s.x0) <= 2):
                out[-1] = _merge(p, s, s)  # the middle line of a title wrapped over three rows
                continue
            if tight and p.label is not None and s.label is None and not p.leading and not own_number and long(p) and (
                    cont or (s.x0 > p.x0 + 2 and alone(i, p.x0))):
                out[-1] = _merge(p, s, p)
                continue
        out.append(s)
    return out


def _columns(rows: list[list[Segment]]) -> list[list[Segment]]:
    """The page's segments column by column when the contents is set in columns, else in row order.

    A page is in columns when a quarter of its rows hold two or more labelled entries side by side;
    the columns start where the second entries of those rows start.
    """
    multi = [r for r in rows if sum(1 for s in r if s.label is not None) >= 2]
    flat = [s for r in rows for s in r]
    if len(multi) < max(2, 0.25 * len(rows)):
        return [flat]
    starts = sorted({round(r[k].x0) for r in multi for k in range(1, len(r))})
    bounds = [starts[0]] + [b for a, b in zip(starts, starts[1:]) if b - a > 100]
    cols: list[list[Segment]] = [[] for _ in range(len(bounds) + 1)]
    for s in flat:
        cols[sum(1 for x in bounds if s.x0 >= x - 20)].append(s)
    return [sorted(c, key=lambda s: s.y0) for c in cols if c]


def _wraps_over_page(page: list[Segment], s: Segment) -> bool:
    """The last row of a contents page is a numbered title without a label and the next page opens with
    the unnumbered rest of it, labelled."""
    p = page[-1]
    right = max(max(f.x1 for f in x.frags) for x in page)
    return (p.label is None and s.label is not None and not s.leading and abs(p.size - s.size) <= 1.0
            and parse_numbering(p.title)[0] is not None and parse_numbering(s.title)[0] is None
            and max(f.x1 for f in p.frags) >= right - 4 * max(p.size, 1.0))


def parse_contents(document: Document, pages: Sequence[int]) -> list[ContentsEntry]:
    """The entries of one run of contents pages, in order; levels and pages not yet set."""
    n = document.page_count
    frags_by_page = {p: block_fragments(document.page_blocks(p)) for p in pages}
    leading = any(page_evidence(frags_by_page[p], n).leading for p in pages[:2])
    entries: list[ContentsEntry] = []
    per_page: list[tuple[int, list[Segment]]] = []
    for p in pages:
        rows = [row_segments(r, n, leading) for r in rows_of(frags_by_page[p])]
        segs: list[Segment] = []
        for col in _columns(rows):
            col = _join_wraps(_clean(col, n))
            if col:
                # indentation counts from the column's left edge (contents set in two columns)
                left = min(x.x0 for x in col)
                segs.extend(x._replace(x0=x.x0 - left, title_x1=x.title_x1 - left) for x in col)
        if per_page and per_page[-1][1] and segs and _wraps_over_page(per_page[-1][1], segs[0]):
            per_page[-1][1][-1] = _merge(per_page[-1][1][-1], segs[0], segs[0])
            segs = segs[1:]
        per_page.append((p, segs))
    for p, segs in per_page:
        top = 0.08 * (document.page_sizes[p][1] if p < len(document.page_sizes) else 792.0)
        titled = any(is_contents_title(b.text, index=True) for b in document.page_blocks(p) if len(b.text) <= 80)
        for s in segs:
            if s.label is None and s.y1 <= top and not titled and _HEADER_NUMBER.search(s.title):
                continue  # a running header the furniture pass missed ("ii 110th Annual Report | 2023")
            title = s.title.strip(" |:–—-")
            if not HAS_WORD.search(title):
                continue
            indent = s.x0
            if s.leading and len(s.frags) > 1 and LABEL_FULL.match(s.frags[0].text):
                indent += s.frags[1].x0 - s.frags[0].x0
            entries.append(ContentsEntry(title=title, label=s.label, indent=indent,
                                         numbering=parse_numbering(title)[0], contents_page=p,
                                         size=s.size, bold=s.bold))
    return _letter_numbers(_late_labels(entries, n))


_HEADER_NUMBER = re.compile(r"^(?:\d{1,4}|[ivxlc]{1,6})\s|\s(?:\d{1,4}|[ivxlc]{1,6})$")
_LETTER = re.compile(r"^([A-Z])\s+(?=[A-Z][a-z])")


def _letter_numbers(entries: list[ContentsEntry]) -> list[ContentsEntry]:
    """"A Federal Reserve ...", "B Minutes ...", "C ...": a bare capital letter before the title numbers the
    entries when at least three of them run A, B, C in order (a single "A New Era" is a title)."""
    letters = [(i, m.group(1)) for i, e in enumerate(entries) if e.numbering is None
               for m in [_LETTER.match(e.title)] if m]
    run = 0
    for (_, a), (_, b) in zip(letters, letters[1:]):
        run = run + 1 if ord(b) == ord(a) + 1 else 0
        if run >= 2:
            break
    if run < 2:
        return entries
    out = list(entries)
    for i, ch in letters:
        out[i] = replace(out[i], numbering=Numbering(scheme="alpha", values=(ord(ch) - 64,), label=ch))
    return out


def _late_labels(entries: list[ContentsEntry], page_count: int) -> list[ContentsEntry]:
    """Take a title's trailing number as its page label when it fits between its neighbours' labels.

    "Business Strategy 8" between entries on pages 7 and 9, "Appendix 102" between 37 and 117: the first
    pass leaves such numbers in the title when a word before them can own a number.
    """
    vals = [label_value(e.label) if e.label is not None else None for e in entries]
    out = list(entries)
    for i, e in enumerate(entries):
        if e.label is not None:
            continue
        m = TRAIL_SPACE.match(e.title)
        if not m or not m.group("label").isdigit() or not label_ok(m.group("label"), page_count,
                                                                   roman_needs_sep=True):
            continue
        v = int(m.group("label"))
        before = next((x for x in reversed(vals[:i]) if x is not None and x[0] == ""), None)
        after = next((x for x in vals[i + 1:] if x is not None and x[0] == ""), None)
        if before is None and after is None:
            continue
        if (before is None or before[1] <= v) and (after is None or v <= after[1]):
            title = m.group("title").strip()
            out[i] = replace(e, title=title, label=m.group("label"), numbering=parse_numbering(title)[0])
            vals[i] = ("", v)
    return out
