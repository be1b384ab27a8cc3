"""Printed contents pages: the evidence that a page is one, and the rows it is read by.

Extraction marks contents pages (``Block.role == "toc"``) so their lines are never taken for
headings; the headings stage (:mod:`structrag.headings.contents`) reads their entries with the
same row reader (:func:`rows_of`, :func:`row_segments`) and page labels (:func:`label_value`).
"""

from __future__ import annotations

import re
from typing import Iterable, NamedTuple, Sequence

from ..model import Block
from ..numbering import roman_value
from ..text import HAN_ANY, INDEX_TITLE, CONTENTS_TITLE, is_contents_title, normalize_title, squeeze
from .blocks import _PageBlock, _RawBlock

__all__ = ["Fragment", "Segment", "PageEvidence", "block_fragments", "rows_of", "row_segments", "page_evidence",
           "label_value", "label_ok", "mark_contents_pages",
           "LABEL", "LABEL_FULL", "TRAIL_SPACE", "LEAD", "COLUMN_HEAD_RE", "PAGE_HEAD", "HAS_WORD"]

# a line that may be a contents row: ends in a page label after a space or leaders, is a bare label
# (page numbers set in a column of their own), or starts with one ("12 Strategy")
_TOC_END_RE = re.compile(r"(?:^|[\s.…·])(?:\d{1,4}|[ivxlc]{1,7})\s*$|^\s*\d{1,4}\s+(?:\d{1,2}(?:\.\d{1,3})*\.?\s+)?"
                         r"[^\W\d_]", re.I)

#: column headings of a contents table ("Page", "Item No. Page", "页码")
COLUMN_HEAD_RE = re.compile(r"^\s*(?:(?:item|section|note)s?\s*(?:no\.?)?\s*)?(?:page|pages|page\s+no\.?|页码|页)\s*$",
                             re.I)
# dot leaders: each dot after the first takes its own spaces, so the pattern cannot backtrack exponentially
PAGE_HEAD = re.compile(r"(?<=\S)\s+(?:page|pages|页码)$", re.I)
_LEADER = r"\s*[.·…_•‧∙⋯](?:[ \t]*[.·…_•‧∙⋯])+\s*"
# a printed page label: 12, iii, F-3 / A.1 / S-12, 1-1-20 (Chinese prospectuses)
LABEL = r"(?:[A-Z]{1,2}\s?[-–.]\s?\d{1,4}|\d{1,3}(?:\s?[-–]\s?\d{1,4}){1,2}|\d{1,4}|[ivxlcdm]{1,7})"
LABEL_FULL = re.compile(rf"^\s*(?:page\s+)?({LABEL})\s*$", re.I)
_TRAIL_LEADER = re.compile(rf"^(?P<title>.*?\S)?{_LEADER}\s*(?P<label>{LABEL})\s*$")
TRAIL_SPACE = re.compile(rf"^(?P<title>.*?\S)\s+(?P<label>{LABEL})\s*$")
_TRAIL_CJK = re.compile(rf"^(?P<title>.*[{HAN_ANY}）)])(?P<label>\d{{1,4}})\s*$")
LEAD = re.compile(r"^(?P<label>\d{1,4})\s+(?P<title>(?:\d{1,2}(?:\.\d{1,3})*\.?\s+)?[^\W\d_].*)$")
_STRIP_LEADERS = re.compile(rf"{_LEADER}\s*$")
# "Item 7", "Note 12", "Appendix 3": a number that belongs to the title (taken as a page label later only
# when it fits between its neighbours' labels, see _late_labels)
_OWN_NUMBER = re.compile(r"(?:item|part|note|section|chapter|article|schedule|appendix|exhibit|第)\s*$", re.I)
_MULTI_REF = re.compile(r"\d\s*,\s*\d{1,4}\s*$")
HAS_WORD = re.compile(r"[^\W\d_]")
class Fragment(NamedTuple):
    """One printed line (or a piece of one) on a page, with its block (-1: none yet)."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    size: float
    bold: bool
    block: int = -1


class Segment(NamedTuple):
    """The fragments of one row that make one contents entry (or a divider / wrapped line)."""

    frags: tuple[Fragment, ...]
    title: str
    label: str | None
    leading: bool  # the label came before the title ("12 Strategy")
    x0: float  # left edge of the row piece (indentation)
    title_x1: float  # right edge of the title text
    y0: float
    y1: float
    size: float
    bold: bool


def block_fragments(blocks: Iterable[Block]) -> list[Fragment]:
    """Fragments of extracted blocks: one per line (multi-line blocks share their box evenly)."""
    out: list[Fragment] = []
    for b in blocks:
        if b.rotated:
            continue
        lines = [t for t in b.text.split("\n") if t.strip()]
        if not lines:
            continue
        x0, y0, x1, y1 = b.bbox
        h = (y1 - y0) / len(lines)
        for k, t in enumerate(lines):
            out.append(Fragment(x0, y0 + k * h, x1, y0 + (k + 1) * h, " ".join(t.split()), b.size, b.bold, b.index))
    return out


def rows_of(frags: Sequence[Fragment]) -> list[list[Fragment]]:
    """Fragments grouped by baseline, rows top to bottom, fragments left to right."""
    rows: list[list[Fragment]] = []
    boxes: list[list[float]] = []  # y0, y1 per row
    for f in sorted(frags, key=lambda f: ((f.y0 + f.y1) / 2, f.x0)):
        h = max(f.y1 - f.y0, 0.1)
        best, best_ov = -1, 0.0
        # only the last few rows can share a baseline with a fragment further down; page numbers set in
        # a table cell of their own often sit half a line low, so a quarter of the height is enough
        for r in range(len(rows) - 1, max(-1, len(rows) - 4), -1):
            y0, y1 = boxes[r]
            ov = min(y1, f.y1) - max(y0, f.y0)
            if (ov > 0.25 * min(h, y1 - y0) and ov > best_ov
                    and all(f.x0 >= g.x1 - 1 or f.x1 <= g.x0 + 1 for g in rows[r])):
                best, best_ov = r, ov
        if best >= 0:
            rows[best].append(f)
            boxes[best] = [min(boxes[best][0], f.y0), max(boxes[best][1], f.y1)]
        else:
            rows.append([f])
            boxes.append([f.y0, f.y1])
    for r in rows:
        r.sort(key=lambda f: f.x0)
    return rows


def label_ok(label: str, page_count: int, *, roman_needs_sep: bool) -> bool:
    low = label.lower()
    if low.isalpha():
        # roman labels only in lower case and only after leaders or set apart: "Part II", "Appendix C" are titles
        return not roman_needs_sep and label == low and roman_value(low) is not None
    if label.isdigit():
        return int(label) <= page_count + 100  # "2023" ending a title is no page number
    return True


def _segment(frags: Sequence[Fragment], page_count: int, leading_mode: bool) -> Segment:
    if len(frags) > 1 and COLUMN_HEAD_RE.match(frags[-1].text):
        frags = frags[:-1]  # the "Page" column head set on the row of the first entry
    text = " ".join(f.text for f in frags).strip()
    last = frags[-1]
    label: str | None = None
    title = text
    leading = False
    sep_label = len(frags) > 1 and LABEL_FULL.match(last.text) is not None
    if sep_label:
        lab = LABEL_FULL.match(last.text).group(1)  # type: ignore[union-attr]
        if label_ok(lab, page_count, roman_needs_sep=False):
            label = lab
            title = _STRIP_LEADERS.sub("", " ".join(f.text for f in frags[:-1])).strip()
    if label is None:
        m = _TRAIL_LEADER.match(text)
        if m and label_ok(m.group("label"), page_count, roman_needs_sep=False):
            label, title = m.group("label"), (m.group("title") or "").strip()
        elif not leading_mode:
            m = TRAIL_SPACE.match(text)
            if m and label_ok(m.group("label"), page_count, roman_needs_sep=True) and not m.group("label").isalpha():
                t = m.group("title")
                # "Item 7" / "Note 12" / "第 3 节": a number that belongs to the title's own label
                if not _OWN_NUMBER.search(t):
                    label, title = m.group("label"), t
    if label is None and not leading_mode:
        m = _TRAIL_CJK.match(text)  # "...持股情况176": Chinese contents set the label right after the title
        if m and label_ok(m.group("label"), page_count, roman_needs_sep=True):
            label, title = m.group("label"), m.group("title")
    if label is None and leading_mode:
        m = LEAD.match(text)
        if m and label_ok(m.group("label"), page_count, roman_needs_sep=True):
            label, title, leading = m.group("label"), m.group("title").strip(), True
    title = _STRIP_LEADERS.sub("", title).strip()
    x1 = max(f.x1 for f in (frags[:-1] if sep_label and label is not None else frags))
    size = max(frags, key=lambda f: len(f.text)).size
    bold = max(frags, key=lambda f: len(f.text)).bold
    return Segment(tuple(frags), title, label, leading, frags[0].x0, x1,
                   min(f.y0 for f in frags), max(f.y1 for f in frags), size, bold)


def row_segments(row: Sequence[Fragment], page_count: int, leading_mode: bool = False) -> list[Segment]:
    """One row split into entries: a new entry starts after a label when words follow at a gap."""
    pieces: list[list[Fragment]] = [[]]
    for f in row:
        cur = pieces[-1]
        if cur:
            prev = cur[-1]
            wide = f.x0 - prev.x1 > 1.5 * max(f.size, 1)
            if wide and HAS_WORD.match(f.text[:1] or " ") is not None:
                cur_seg = _segment(cur, page_count, leading_mode)  # only parsed where a split is possible
                if cur_seg.label is not None and not cur_seg.leading:
                    pieces.append([f])
                    continue
            if wide and leading_mode and LEAD.match(f.text):
                pieces.append([f])
                continue
        cur.append(f)
    return [_segment(p, page_count, leading_mode) for p in pieces if p]


# ---------------------------------------------------------------------------
# page evidence (shared with extraction)


class PageEvidence(NamedTuple):
    """What makes a page look like a printed contents page.

    ``rows``: rows holding words; ``refs``: the page labels (numeric values;
    roman ones count 0) of rows that end (or, in leading mode, start) with
    one, in reading order; ``mono``: share of consecutive labels that do not
    go down; ``title``: a "Contents" title on the page; ``index``: an "Index"
    title or rows listing several pages ("foo, 12, 45") - a back-of-book index,
    not a contents page; ``leading``: labels lead their titles.
    """

    rows: int
    refs: tuple[int, ...]
    mono: float
    title: bool
    index: bool
    leading: bool

    def is_contents(self, *, continuation: bool = False) -> bool:
        """The page is a contents page (``continuation``: it follows one, so less is asked)."""
        n = len(self.refs)
        if self.rows == 0 or self.index:
            return False
        if self.title and n >= 3 and self.mono >= 0.6:
            return True
        if continuation:
            return n >= 3 and n >= 0.4 * self.rows and self.mono >= 0.6
        return n >= 6 and n >= 0.5 * self.rows and self.mono >= 0.75


def _mono(vals: Sequence[int]) -> float:
    if len(vals) < 2:
        return 0.0
    return sum(1 for a, b in zip(vals, vals[1:]) if b >= a) / (len(vals) - 1)


def label_value(label: str) -> tuple[str, int]:
    """(scheme, value) of a printed page label: ``12`` -> ("", 12), ``iii`` -> ("roman", 3),
    ``F-3`` -> ("F-", 3), ``1-1-20`` -> ("1-1-", 20)."""
    s = re.sub(r"\s+", "", label).replace("–", "-")
    if s.isdigit():
        return "", int(s)
    if s.isalpha():
        return "roman", roman_value(s.lower()) or 0
    m = re.match(r"^(.*?[-.])(\d+)$", s)
    if m:
        return m.group(1).upper(), int(m.group(2))
    return s, 0


def page_evidence(frags: Sequence[Fragment], page_count: int) -> PageEvidence:
    """Contents-page evidence of one page's fragments (body text only, furniture removed)."""
    rows = rows_of(frags)
    title = index = False
    index_title = False
    for r in rows:
        t = squeeze(" ".join(f.text for f in r))
        if CONTENTS_TITLE.match(t) or any(is_contents_title(f.text) for f in r):
            title = True
        elif INDEX_TITLE.match(t):
            index_title = True  # a filing's "INDEX" is its contents; a book's index is not (see below)
    segs = [s for r in rows for s in row_segments(r, page_count)]
    n_text = sum(1 for s in segs if HAS_WORD.search(" ".join(f.text for f in s.frags)))
    refs = _column_order([s for s in segs if s.label is not None and HAS_WORD.search(s.title)])
    multi = sum(1 for r in rows if _MULTI_REF.search(" ".join(f.text for f in r)))
    titles = [normalize_title(s.title) for s in segs if s.label is not None and HAS_WORD.search(s.title)]
    alpha = sum(1 for a, b in zip(titles, titles[1:]) if a <= b) / max(len(titles) - 1, 1)
    # a back-of-book index: entries listing several pages, or titles in alphabetical order with pages
    # that do not follow them
    if (multi >= 5 and multi >= 0.25 * len(rows)) or (len(titles) >= 8 and alpha >= 0.9 and _mono(refs) < 0.9):
        index = True
    if index_title and not index and _mono(refs) >= 0.8:
        title = True
    leading = False
    if len(refs) < 3 and (title or sum(1 for f in frags if LEAD.match(f.text)) >= 4):
        # "12 Strategy" contents: labels first, never going down, and not a numbered list (which goes
        # up by exactly one at every row)
        lsegs = [s for r in rows for s in row_segments(r, page_count, leading_mode=True)]
        lrefs = [int(s.label) for s in lsegs if s.label is not None and s.leading]
        steps = [b - a for a, b in zip(lrefs, lrefs[1:])]
        if (len(lrefs) >= 4 and _mono(lrefs) >= 0.8 and sum(1 for d in steps if d == 1) <= 0.5 * len(steps)
                and (title or len(lrefs) >= 8)):
            refs, leading = lrefs, True
            n_text = sum(1 for s in lsegs if HAS_WORD.search(" ".join(f.text for f in s.frags)))
    return PageEvidence(n_text, tuple(refs), _mono(refs), title, index, leading)


def _column_order(segs: Sequence[Segment]) -> list[int]:
    """Label values read column by column (contents set in two columns read down, then across)."""
    xs = sorted({round(s.x0) for s in segs})
    starts = [xs[0]] + [b for a, b in zip(xs, xs[1:]) if b - a > 100] if xs else []

    def col(s: Segment) -> int:
        return sum(1 for x in starts if s.x0 >= x - 0.5) - 1

    return [_ref_value(s.label) for s in sorted(segs, key=lambda s: (col(s), s.y0))]  # type: ignore[arg-type]


def _ref_value(label: str) -> int:
    scheme, v = label_value(label)
    return 0 if scheme == "roman" else v


# ---------------------------------------------------------------------------
# contents pages while extracting


def _may_be_toc(raws: Sequence[_RawBlock]) -> bool:
    """Cheap pre-check: at least three lines that end (or start) with a number, or a contents title."""
    n = 0
    for rb in raws:
        for ln in rb.lines:
            if _TOC_END_RE.search(ln.text):
                n += 1
                if n >= 3:
                    return True
            elif len(ln.text) <= 40 and is_contents_title(ln.text):
                return True
    return False


def _toc_evidence(blocks: list[_PageBlock], page_count: int) -> PageEvidence:
    frags: list[Fragment] = []
    for b in blocks:
        if b.role != "body" or b.rotated:
            continue
        if b.lines is not None:
            frags.extend(Fragment(ln.x0, ln.y0, ln.x1, ln.y1, ln.text, ln.size, ln.bold) for ln in b.lines)
        else:
            frags.extend(block_fragments([Block(0, b.page, b.bbox, b.text, b.font, b.size, b.bold, b.italic,
                                                b.color, b.line_count)]))
    return page_evidence(frags, page_count)


def _toc_pages(pages: list[list[_PageBlock]], page_count: int) -> list[int]:
    """Contents pages, and the pages that continue them (less evidence asked of those)."""
    out: list[int] = []
    for p, blocks in enumerate(pages):
        if not any(b.lines is not None for b in blocks):
            continue
        follows = bool(out) and (out[-1] == p - 1 or (out[-1] == p - 2 and not pages[p - 1]))
        # cheap rejection before the row analysis: a contents page has many rows ending (or starting) in
        # a page label, fewer only under a contents title or after a contents page
        ends, title = 0, False
        for b in blocks:
            if b.role != "body" or b.lines is None:
                continue
            for ln in b.lines:
                if _TOC_END_RE.search(ln.text):
                    ends += 1
                elif not title and len(ln.text) <= 80 and is_contents_title(ln.text, index=True):
                    title = True
        if ends < 3 or (ends < 6 and not title and not follows):
            continue
        ev = _toc_evidence(blocks, page_count)
        if ev.is_contents(continuation=follows):
            out.append(p)
    return out


def _split_toc_lines(blocks: list[_PageBlock]) -> list[_PageBlock]:
    """A contents page's blocks, one per printed line: entries keep their own indentation and style."""
    out: list[_PageBlock] = []
    for b in blocks:
        if b.role != "toc" or b.lines is None or len(b.lines) <= 1:
            out.append(b)
            continue
        for ln in b.lines:
            out.append(_PageBlock(b.page, (ln.x0, ln.y0, ln.x1, ln.y1), ln.text, ln.font, ln.size, ln.bold,
                                  ln.italic, ln.color, 1, b.column, not ln.horizontal, "toc"))
    return out


def mark_contents_pages(pages: list[list[_PageBlock]], sizes: list[tuple[float, float]], page_count: int) -> list[int]:
    """Give the blocks of printed contents pages the role ``toc``, one block per printed line, in place.

    Returns the contents pages (0-based).
    """
    toc_pages = _toc_pages(pages, page_count)
    for p in toc_pages:
        for b in pages[p]:
            if b.role == "body":
                b.role = "toc"
        pages[p] = _split_toc_lines(pages[p])
        # what is printed above the contents title is not part of it ("Item 8. Financial Statements" over
        # a filing's "INDEX" to them): it stays body text.  Titles sit in the upper part of the page (an
        # "Index" entry at the foot of a contents page is no title)
        height = sizes[p][1] or 792.0
        tops = [b.bbox[1] for b in pages[p] if b.role == "toc" and len(b.text) <= 80 and b.bbox[1] < 0.4 * height
                and is_contents_title(b.text, index=True)]
        if tops:
            for b in pages[p]:
                if b.role == "toc" and b.bbox[3] <= min(tops) + 0.5:
                    b.role = "body"
        # nor is a line set far larger than the entries (the chapter title over a chapter's contents)
        entry_sizes = sorted(b.size for b in pages[p] if b.role == "toc")
        if entry_sizes:
            big = 1.6 * entry_sizes[len(entry_sizes) // 2]
            for b in pages[p]:
                if b.role == "toc" and b.size >= big and not is_contents_title(b.text, index=True):
                    b.role = "body"
    return toc_pages
