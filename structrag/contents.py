"""The printed table of contents as a heading signal.

Most long reports print a contents page ("Contents", "Table of Contents",
"目录") even when the file has no bookmarks.  This module reads it:

1. **rows**: the lines of a contents page grouped by baseline (a title and a
   page number set in separate columns are one row), split where two entries
   share a baseline (contents laid out in columns or boxes);
2. **entries**: each row parsed into a title, a printed page label
   (``12``, ``iii``, ``F-3``, ``1-1-20``; trailing after dot leaders or a gap,
   or leading as in "12 Strategy"), the numbering and the indentation; titles
   wrapped over two rows are joined; rows without a label are section
   dividers ("PART II") that point where the next entry does;
3. **pages**: printed labels mapped to physical pages by the offset between
   the two numberings, voted over the entries whose titles are printed on the
   page their label points to (a best path over entries lets the offset
   change: roman front matter, numbering that restarts in an attached
   document, "F-" pages); printed page numbers in the page footers count as
   votes too.  Labels past the end of the document keep ``page=-1``;
4. **headings**: each mapped entry located on its page with
   :func:`~structrag.outline.locate_outline` (the locator used for bookmarks),
   and its level taken from the contents layout: heading numbers first
   (``1`` < ``1.1``; Part > Item; 第一节 > 一、 > （一）), then indentation, then
   type size and weight.

Every rule is generic (no document or publisher is named anywhere); the
reasons each heading carries say which evidence placed it.

The row reader is shared with :mod:`structrag.extract`, which uses
:func:`page_evidence` to mark contents pages while extracting.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from typing import Iterable, NamedTuple, Sequence

from .model import Block, Document, Heading, Numbering, OutlineEntry
from .numbering import parse_numbering, roman_value
from .outline import locate_outline, normalize_title

__all__ = [
    "ContentsEntry",
    "ContentsResult",
    "Fragment",
    "PageEvidence",
    "read_contents",
    "contents_runs",
    "parse_contents",
    "map_pages",
    "page_evidence",
    "rows_of",
    "is_contents_title",
]

# ---------------------------------------------------------------------------
# rows and entries on one page

#: "Contents", "Table of Contents", "目录" / "目 录", "Contents (continued)"
_TITLE_RE = re.compile(
    r"^\s*(?:table\s+of\s+contents?|contents?|目\s*录|目\s*次)\s*(?:\(\s*continued\s*\)|（\s*续\s*）)?\s*[:：]?\s*$",
    re.I,
)
_INDEX_RE = re.compile(r"^\s*(?:general\s+|subject\s+|alphabetical\s+)?index(?:\s+to\s+(?:the\s+)?[a-z][\w ,&]{2,60})?"
                       r"\s*$|^\s*索\s*引\s*$", re.I)
#: column headings of a contents table ("Page", "Item No. Page", "页码")
_COLUMN_HEAD_RE = re.compile(r"^\s*(?:(?:item|section|note)s?\s*(?:no\.?)?\s*)?(?:page|pages|page\s+no\.?|页码|页)\s*$",
                             re.I)
# dot leaders: each dot after the first takes its own spaces, so the pattern cannot backtrack exponentially
_PAGE_HEAD = re.compile(r"(?<=\S)\s+(?:page|pages|页码)$", re.I)
_LEADER = r"\s*[.·…_•‧∙⋯](?:[ \t]*[.·…_•‧∙⋯])+\s*"
# a printed page label: 12, iii, F-3 / A.1 / S-12, 1-1-20 (Chinese prospectuses)
_LABEL = r"(?:[A-Z]{1,2}\s?[-–.]\s?\d{1,4}|\d{1,3}(?:\s?[-–]\s?\d{1,4}){1,2}|\d{1,4}|[ivxlcdm]{1,7})"
_LABEL_FULL = re.compile(rf"^\s*(?:page\s+)?({_LABEL})\s*$", re.I)
_TRAIL_LEADER = re.compile(rf"^(?P<title>.*?\S)?{_LEADER}\s*(?P<label>{_LABEL})\s*$")
_TRAIL_SPACE = re.compile(rf"^(?P<title>.*?\S)\s+(?P<label>{_LABEL})\s*$")
_TRAIL_CJK = re.compile(r"^(?P<title>.*[\u3400-\u9fff）)])(?P<label>\d{1,4})\s*$")
_LEAD = re.compile(r"^(?P<label>\d{1,4})\s+(?P<title>(?:\d{1,2}(?:\.\d{1,3})*\.?\s+)?[^\W\d_].*)$")
_STRIP_LEADERS = re.compile(rf"{_LEADER}\s*$")
# "Item 7", "Note 12", "Appendix 3": a number that belongs to the title (taken as a page label later only
# when it fits between its neighbours' labels, see _late_labels)
_OWN_NUMBER = re.compile(r"(?:item|part|note|section|chapter|article|schedule|appendix|exhibit|第)\s*$", re.I)
_MULTI_REF = re.compile(r"\d\s*,\s*\d{1,4}\s*$")
_HAS_WORD = re.compile(r"[^\W\d_]")
_CJK = re.compile(r"[\u3400-\u9fff]")


_SPACED = re.compile(r"^(?:\w ){2,}\w$")


def _squeeze(text: str) -> str:
    """Whitespace collapsed; letter-spaced titles ("I N D E X", "C O N T E N T S") closed up."""
    t = " ".join(text.split())
    return t.replace(" ", "") if _SPACED.match(t) else t


def is_contents_title(text: str, *, index: bool = False) -> bool:
    """Whether ``text`` is the title of a contents page ("Table of Contents", "目 录", ...).

    ``index=True`` accepts "Index" too (a filing's contents is often called so).
    """
    t = _squeeze(text)
    return _TITLE_RE.match(t) is not None or (index and _INDEX_RE.match(t) is not None)


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


def _label_ok(label: str, page_count: int, *, roman_needs_sep: bool) -> bool:
    low = label.lower()
    if low.isalpha():
        # roman labels only in lower case and only after leaders or set apart: "Part II", "Appendix C" are titles
        return not roman_needs_sep and label == low and roman_value(low) is not None
    if label.isdigit():
        return int(label) <= page_count + 100  # "2023" ending a title is no page number
    return True


def _segment(frags: Sequence[Fragment], page_count: int, leading_mode: bool) -> Segment:
    if len(frags) > 1 and _COLUMN_HEAD_RE.match(frags[-1].text):
        frags = frags[:-1]  # the "Page" column head set on the row of the first entry
    text = " ".join(f.text for f in frags).strip()
    last = frags[-1]
    label: str | None = None
    title = text
    leading = False
    sep_label = len(frags) > 1 and _LABEL_FULL.match(last.text) is not None
    if sep_label:
        lab = _LABEL_FULL.match(last.text).group(1)  # type: ignore[union-attr]
        if _label_ok(lab, page_count, roman_needs_sep=False):
            label = lab
            title = _STRIP_LEADERS.sub("", " ".join(f.text for f in frags[:-1])).strip()
    if label is None:
        m = _TRAIL_LEADER.match(text)
        if m and _label_ok(m.group("label"), page_count, roman_needs_sep=False):
            label, title = m.group("label"), (m.group("title") or "").strip()
        elif not leading_mode:
            m = _TRAIL_SPACE.match(text)
            if m and _label_ok(m.group("label"), page_count, roman_needs_sep=True) and not m.group("label").isalpha():
                t = m.group("title")
                # "Item 7" / "Note 12" / "第 3 节": a number that belongs to the title's own label
                if not _OWN_NUMBER.search(t):
                    label, title = m.group("label"), t
    if label is None and not leading_mode:
        m = _TRAIL_CJK.match(text)  # "...持股情况176": Chinese contents set the label right after the title
        if m and _label_ok(m.group("label"), page_count, roman_needs_sep=True):
            label, title = m.group("label"), m.group("title")
    if label is None and leading_mode:
        m = _LEAD.match(text)
        if m and _label_ok(m.group("label"), page_count, roman_needs_sep=True):
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
            if wide and _HAS_WORD.match(f.text[:1] or " ") is not None:
                cur_seg = _segment(cur, page_count, leading_mode)  # only parsed where a split is possible
                if cur_seg.label is not None and not cur_seg.leading:
                    pieces.append([f])
                    continue
            if wide and leading_mode and _LEAD.match(f.text):
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
        t = _squeeze(" ".join(f.text for f in r))
        if _TITLE_RE.match(t) or any(is_contents_title(f.text) for f in r):
            title = True
        elif _INDEX_RE.match(t):
            index_title = True  # a filing's "INDEX" is its contents; a book's index is not (see below)
    segs = [s for r in rows for s in row_segments(r, page_count)]
    n_text = sum(1 for s in segs if _HAS_WORD.search(" ".join(f.text for f in s.frags)))
    refs = _column_order([s for s in segs if s.label is not None and _HAS_WORD.search(s.title)])
    multi = sum(1 for r in rows if _MULTI_REF.search(" ".join(f.text for f in r)))
    titles = [normalize_title(s.title) for s in segs if s.label is not None and _HAS_WORD.search(s.title)]
    alpha = sum(1 for a, b in zip(titles, titles[1:]) if a <= b) / max(len(titles) - 1, 1)
    # a back-of-book index: entries listing several pages, or titles in alphabetical order with pages
    # that do not follow them
    if (multi >= 5 and multi >= 0.25 * len(rows)) or (len(titles) >= 8 and alpha >= 0.9 and _mono(refs) < 0.9):
        index = True
    if index_title and not index and _mono(refs) >= 0.8:
        title = True
    leading = False
    if len(refs) < 3 and (title or sum(1 for f in frags if _LEAD.match(f.text)) >= 4):
        # "12 Strategy" contents: labels first, never going down, and not a numbered list (which goes
        # up by exactly one at every row)
        lsegs = [s for r in rows for s in row_segments(r, page_count, leading_mode=True)]
        lrefs = [int(s.label) for s in lsegs if s.label is not None and s.leading]
        steps = [b - a for a, b in zip(lrefs, lrefs[1:])]
        if (len(lrefs) >= 4 and _mono(lrefs) >= 0.8 and sum(1 for d in steps if d == 1) <= 0.5 * len(steps)
                and (title or len(lrefs) >= 8)):
            refs, leading = lrefs, True
            n_text = sum(1 for s in lsegs if _HAS_WORD.search(" ".join(f.text for f in s.frags)))
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
# entries


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
        if _COLUMN_HEAD_RE.match(text) or _COLUMN_HEAD_RE.match(s.title):
            continue
        if s.label is None:
            if not _HAS_WORD.search(s.title):
                continue
            numbered = parse_numbering(s.title)[0] is not None
            if _words(s.title) > 30 or (_SENTENCE.search(s.title) and _words(s.title) >= 6 and not numbered):
                continue  # a note under the table, not an entry
            if _PAGE_HEAD.search(s.title):
                s = s._replace(title=_PAGE_HEAD.sub("", s.title))  # "Part I – Financial information  Page"
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
            cont = first == "" or first.islower() or not _HAS_WORD.match(first) and not _CJK.match(first)
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
    """The entries of one run of contents pages, in order, levels set, pages not yet mapped."""
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
            if not _HAS_WORD.search(title):
                continue
            indent = s.x0
            if s.leading and len(s.frags) > 1 and _LABEL_FULL.match(s.frags[0].text):
                indent += s.frags[1].x0 - s.frags[0].x0
            entries.append(ContentsEntry(title=title, label=s.label, indent=indent,
                                         numbering=parse_numbering(title)[0], contents_page=p,
                                         size=s.size, bold=s.bold))
    return assign_contents_levels(_letter_numbers(_late_labels(entries, n)))


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
        m = _TRAIL_SPACE.match(e.title)
        if not m or not m.group("label").isdigit() or not _label_ok(m.group("label"), page_count,
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


def _compare_type(a: ContentsEntry, b: ContentsEntry) -> tuple[int, str]:
    if abs(a.size - b.size) > 0.6:
        return (1 if a.size > b.size else -1), "size"
    if a.bold != b.bold:
        return (1 if a.bold else -1), "bold"
    ca, cb = _caps(a.title), _caps(b.title)
    if ca != cb:
        return (1 if ca else -1), "capitals"
    return 0, "same layout"


def _caps(text: str) -> bool:
    letters = [c for c in text if c.isalpha() and c.isascii()]
    return len(letters) >= 3 and sum(c.isupper() for c in letters) >= 0.9 * len(letters)


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


# ---------------------------------------------------------------------------
# printed page labels -> physical pages

_FOOTER_LABEL = re.compile(
    rf"^(?:page\s*)?[-–—|]?\s*({_LABEL})\s*[-–—|]?(?:\s*(?:of|/)\s*\d{{1,4}})?$|^第\s*(\d+)\s*页", re.I)
_EDGE_NUMBER = re.compile(r"^(\d{1,4})\s*[|/•·–—-]?\s+\S|\S\s+[|/•·–—-]?\s*(\d{1,4})$")


class _TitleIndex:
    """Where short body blocks are printed, keyed by their first words (with and without their number)."""

    def __init__(self, document: Document) -> None:
        self.keys: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
        for b in document.blocks:
            if b.role != "body" or b.line_count > 3 or len(b.text) > 200 or b.rotated:
                continue
            norm = normalize_title(b.text)
            if not norm:
                continue
            bare = _bare(norm, b.text)
            rec = (b.page, norm, bare)
            self.keys[_key(norm)].append(rec)
            if bare != norm and bare:
                self.keys[_key(bare)].append(rec)

    def pages(self, title: str) -> set[int]:
        from .outline import _similarity

        norm = normalize_title(title)
        bare = _bare(norm, title)
        out: set[int] = set()
        for k in {_key(norm), _key(bare)}:
            for page, n, b in self.keys.get(k, ()):
                if max(_similarity(norm, n), _similarity(bare, b), _similarity(bare, n)) >= 0.8:
                    out.add(page)
        return out


def _key(norm: str) -> str:
    return " ".join(norm.split()[:4])


# a heading number at the start of a normalised title ("2 3 ", "item 7a ", "note 12 ", "第一节 ", "一 ")
_NORM_NUMBER = re.compile(r"^(?:(?:item|part|note|section|chapter|article|schedule|appendix|exhibit)\s+\w{1,5}\s+"
                          r"|(?:\d{1,3}\s+)+|[ivx]{1,5}\s+|[a-z]\s+(?=\w{3})|第[\w]{1,4}[节章部篇条]\s*"
                          r"|[一二三四五六七八九十]{1,3}\s+)")


def _bare(norm: str, raw: str = "") -> str:
    """The normalised title without its heading number (a cheap pattern: it only widens the candidates)."""
    return _NORM_NUMBER.sub("", norm, count=1) or norm


def _footer_labels(document: Document) -> dict[tuple[str, int], set[int]]:
    """Printed page labels found in the page furniture -> the physical pages printing them."""
    out: dict[tuple[str, int], set[int]] = defaultdict(set)
    for f in document.furniture:
        t = " ".join(f.text.split())
        lab = None
        if f.role == "page_number":
            m = _FOOTER_LABEL.match(t)
            if m:
                lab = m.group(1) or m.group(2)
        else:
            m = _EDGE_NUMBER.search(t)  # "45 | Annual Report 2023", "Annual Report | 45"
            if m:
                lab = m.group(1) or m.group(2)
        if lab is not None:
            scheme, v = label_value(lab)
            if v and (scheme or v <= document.page_count + 100):
                out[(scheme, v)].add(f.page)
    return out


def map_pages(
    document: Document,
    entries: Sequence[ContentsEntry],
    *,
    titles: _TitleIndex | None = None,
    footers: dict[tuple[str, int], set[int]] | None = None,
    switch_cost: float = 2.5,
) -> list[ContentsEntry]:
    """Physical pages for one run's entries: the best path of offsets over the entries.

    Each labelled entry votes for the offsets (physical - printed) at which
    its title is printed (or a footer prints its label); a path over the
    entries pays 1 per entry whose vote it does not follow and
    ``switch_cost`` per change of offset within one label scheme (a change of
    scheme, roman to arabic or to "F-" pages, is free), 0.8 for a page
    before the contents (except roman front matter) and 1.2 for a page past
    the end of the file (an excerpt).  A run whose best path is supported by
    fewer than two entries, or by less than a fifth of those it maps inside
    the file, stays unmapped.
    """
    n = document.page_count
    titles = titles if titles is not None else _TitleIndex(document)
    footers = footers if footers is not None else _footer_labels(document)
    lab = [(i, *label_value(e.label)) for i, e in enumerate(entries) if e.label is not None]
    if not lab:
        return list(entries)
    votes: list[dict[int, str]] = []
    pool: Counter = Counter()
    for i, scheme, v in lab:
        cand: dict[int, str] = {}
        for p in footers.get((scheme, v), ()):
            cand[p - v] = "footer"
        for p in titles.pages(entries[i].title):
            if p not in document.toc_pages:
                cand[p - v] = "title"
        votes.append(cand)
        pool.update(cand.keys())
    states = [o for o, _ in pool.most_common(40)]
    if 0 not in states:
        states.append(0)
    inf = float("inf")

    first = min(e.contents_page for e in entries if e.contents_page >= 0) if entries else 0

    def cost(k: int, o: int) -> float:
        _, scheme, v = lab[k]
        p = v + o
        if not 0 <= p < n:
            return 1.2  # past the end (an excerpt, a truncated file) is a reading too, barely worse than a miss
        # a contents page lists what follows it: a page before it is a weaker reading (numbering that
        # restarts in an attached document otherwise sends its entries back to the main document);
        # roman front matter may well come before it
        return (0.0 if o in votes[k] else 1.0) + (0.8 if p < first and scheme != "roman" else 0.0)

    # Viterbi over entries; back pointers per step
    prev = {o: cost(0, o) for o in states}
    back: list[dict[int, int]] = []
    for k in range(1, len(lab)):
        sw = switch_cost if lab[k][1] == lab[k - 1][1] else 0.0  # another label scheme, another offset
        best_o = min(prev, key=prev.get)  # type: ignore[arg-type]
        cur: dict[int, float] = {}
        bp: dict[int, int] = {}
        for o in states:
            stay, jump = prev[o], prev[best_o] + sw
            if stay <= jump:
                cur[o], bp[o] = stay + cost(k, o), o
            else:
                cur[o], bp[o] = jump + cost(k, o), best_o
        back.append(bp)
        prev = cur
    o = min(prev, key=prev.get)  # type: ignore[arg-type]
    path = [o]
    for bp in reversed(back):
        o = bp[o]
        path.append(o)
    path.reverse()
    support = sum(1 for k, o in enumerate(path) if o in votes[k])
    inside = sum(1 for (_, _, v), o in zip(lab, path) if 0 <= v + o < n)
    out = list(entries)
    if support < max(2, 0.2 * inside) or prev[path[-1]] == inf:
        return out
    for k, ((i, _, v), o) in enumerate(zip(lab, path)):
        p = v + o
        if 0 <= p < n:
            out[i] = replace(out[i], page=p, mapped=votes[k].get(o, "offset"))
        else:
            out[i] = replace(out[i], page=-1, mapped="")  # past the end of the file (or before its start)
    # dividers point where the next mapped entry does
    nxt = -1
    for i in range(len(out) - 1, -1, -1):
        if out[i].label is None:
            if nxt >= 0:
                out[i] = replace(out[i], page=nxt, mapped="divider")
        elif out[i].page >= 0:
            nxt = out[i].page
    return out


# ---------------------------------------------------------------------------
# the whole signal


class ContentsResult(NamedTuple):
    """What the printed contents gave: located headings, every entry, and counts.

    ``headings`` are in reading order (``source="contents"``); those from the
    main run (the first run that locates enough of its entries) carry their contents
    level (``level_source="contents"``), those of other runs (a financial
    statements index, an attached document's contents) leave the level to the
    level predictor.  ``usable`` says whether the main run located enough
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


def read_contents(
    document: Document,
    *,
    min_located: int = 3,
    min_located_share: float = 0.4,
) -> ContentsResult:
    """Find, parse, map and locate the printed contents of ``document``.

    A run is used when it located at least ``min_located`` entries and
    ``min_located_share`` of those mapped to a page of the file; the contents
    is ``usable`` when one run is.
    Never raises on odd contents: entries that cannot be mapped or located
    are counted and left out of the headings.
    """
    runs = contents_runs(document)
    stats: dict = {"runs": [], "entries": 0, "labelled": 0, "mapped": 0, "located": 0}
    if not runs:
        return ContentsResult((), (), (), False, stats)
    titles = _TitleIndex(document)
    footers = _footer_labels(document)
    per_run: list[tuple[tuple[int, ...], list[ContentsEntry], list[Heading]]] = []
    for run in runs:
        entries = map_pages(document, parse_contents(document, run), titles=titles, footers=footers)
        usable_entries = [e for e in entries if e.page >= 0 and e.page not in run]
        located = locate_outline(document, [OutlineEntry(e.level, e.title, e.page) for e in usable_entries],
                                 source="contents")
        heads: list[Heading] = []
        for e, le in zip(usable_entries, located):
            h = le.heading
            if h is None or not _plausible(document, h, e.title):
                continue
            reasons = (
                f"contents entry on p.{e.contents_page + 1}"
                + (f" (label {e.label})" if e.label is not None else " (divider)"),
                f"page from {e.mapped}",
                f"contents match {le.match:.2f}",
                f"level {e.level}: {e.level_reason}",
            )
            heads.append(replace(h, score=le.match, reasons=reasons, confidence=1.0))
        labelled = sum(1 for e in entries if e.label is not None)
        stats["runs"].append({"pages": [p + 1 for p in run], "entries": len(entries), "labelled": labelled,
                              "mapped": sum(1 for e in entries if e.page >= 0), "located": len(heads)})
        per_run.append((run, entries, heads))
    # the main run is the first one that locates enough of its entries: the document's own contents
    # comes before a financial statements index, a chapter's contents or an attached document's
    # the share counts the entries mapped inside the file: a truncated file's contents stays usable
    ok = [len(heads) >= min_located and len(heads) >= min_located_share * max(rs["mapped"], 1)
          for (_, _, heads), rs in zip(per_run, stats["runs"])]
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
                h = replace(h, level=None, level_source=None, confidence=None,
                            reasons=h.reasons + ("level left to the predictor (secondary contents)",))
            out.append(h)
    out.sort(key=lambda h: h.block)
    all_entries = tuple(e for _, es, _ in per_run for e in es)
    stats.update(entries=len(all_entries), labelled=sum(1 for e in all_entries if e.label is not None),
                 mapped=sum(1 for e in all_entries if e.page >= 0), located=len(out), main_run=main + 1,
                 usable=usable)
    return ContentsResult(tuple(out), all_entries, tuple(runs), usable, stats)
