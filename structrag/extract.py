"""PDF -> :class:`~structrag.model.Document` with PyMuPDF.

Per page: ``get_text("dict")`` lines are regrouped into blocks of one dominant
style (a bold heading line and the paragraph under it end up in different
blocks even when PyMuPDF puts them in one), fragments on one baseline that
start with a bare heading number are joined ("Item 7." + "Management's ..."),
and blocks are put in reading order by a recursive XY-cut that only accepts a
vertical cut between real text columns (so tables read row by row).

Across pages: running headers, footers and page numbers (the same text at the
same place on several pages) are taken out of the text but kept in
:attr:`Document.furniture`; printed table-of-contents pages are marked so
their lines are never taken for headings.

Memory stays bounded by the size of the extracted text: pages are loaded one
at a time and dropped, and the file hash is computed in pieces.
"""

from __future__ import annotations

import logging
import os
import warnings as _warnings
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Sequence

from ._pymupdf import route_mupdf_messages
from .contents import Fragment, PageEvidence, block_fragments, is_contents_title, page_evidence
from .errors import CorruptPDFError, EncryptedPDFError, NotAPDFError, StructragWarning
from .files import file_sha1, require_regular_file
from .text import clean_extracted, strip_control
from .model import Block, Document, OutlineEntry
from .numbering import is_bare_label, parse_numbering

__all__ = ["extract", "open_pdf", "file_sha1"]

log = logging.getLogger(__name__)

# "Medi" is URW's name for the bold cut of its Times/Helvetica clones (NimbusRomNo9L-Medi)
_BOLD_RE = re.compile(r"bold|black|heavy|bld|smbd|semibd|demi|-bd\b|bd$|-sb\b|-hv\b|-blk\b|-medi(?:ital)?$", re.I)
_ITALIC_RE = re.compile(r"italic|oblique|-it\b|,italic", re.I)
_DIGITS_RE = re.compile(r"\d+")
_WS_RE = re.compile(r"\s+")
_PAGE_NO_RE = re.compile(
    r"^(?:page\s*)?[-–—|]?\s*(?:\d{1,4}|[ivxlcdm]{1,7})\s*[-–—|]?(?:\s*(?:of|/)\s*\d{1,4})?$"
    r"|^\d{1,3}(?:\s*-\s*\d{1,4}){1,3}$"  # "1-1-3": Chinese prospectus page numbers
    r"|^第\s*\d+\s*页(?:\s*共\s*\d+\s*页)?$",
    re.I,
)
# a line that may be a contents row: ends in a page label after a space or leaders, is a bare label
# (page numbers set in a column of their own), or starts with one ("12 Strategy")
_TOC_END_RE = re.compile(r"(?:^|[\s.…·])(?:\d{1,4}|[ivxlc]{1,7})\s*$|^\s*\d{1,4}\s+(?:\d{1,2}(?:\.\d{1,3})*\.?\s+)?"
                         r"[^\W\d_]", re.I)

# Margins (share of page height) where running headers / footers live.
_MARGIN = 0.12


def open_pdf(path: str | os.PathLike[str], password: str | None = None):
    """Open ``path`` with PyMuPDF, turning its failures into structrag errors."""
    import pymupdf

    p = require_regular_file(path, what="PDF file")  # a FIFO or a device would block or never end
    try:
        with open(p, "rb") as f:
            head = f.read(1024)
    except OSError as exc:
        raise NotAPDFError(f"cannot be read: {exc.strerror or exc}", path=p) from None
    if b"%PDF" not in head:
        raise NotAPDFError(
            "not a PDF file (no %PDF header)", path=p, hint="structrag reads PDF files only"
        )
    try:
        str(p).encode("utf-8")
        source = {"filename": str(p)}
    except UnicodeEncodeError:  # MuPDF takes UTF-8 file names only: a name in another encoding is read as bytes
        source = {"stream": p.read_bytes()}
    try:
        doc = pymupdf.open(filetype="pdf", **source)
    except Exception as exc:  # PyMuPDF raises FileDataError, RuntimeError, ValueError ...
        raise CorruptPDFError(f"cannot be opened as a PDF: {exc}", path=p,
                              hint="the file is damaged or truncated; re-download or re-export it") from None
    if doc.needs_pass:
        if password is None or not doc.authenticate(password):
            doc.close()
            raise EncryptedPDFError(
                "is encrypted and needs a password" if password is None else "password is wrong",
                path=p,
                hint="pass password=... (CLI: --password), or decrypt it first, e.g. "
                "`qpdf --decrypt --password=SECRET in.pdf out.pdf`",
            )
    if doc.page_count == 0:
        doc.close()
        raise CorruptPDFError("has no readable pages", path=p, hint="the file is damaged or truncated")
    return doc


def clean_outline(entries: Iterable[OutlineEntry]) -> tuple[OutlineEntry, ...]:
    """Outline entries without blank titles; the children of a dropped entry move up one level."""
    out: list[OutlineEntry] = []
    dropped: list[int] = []  # levels of the blank entries whose subtrees are still open
    for e in entries:
        while dropped and e.level <= dropped[-1]:
            dropped.pop()
        if not e.title:
            dropped.append(e.level)
            continue
        out.append(replace(e, level=max(1, e.level - len(dropped))) if dropped else e)
    return tuple(out)


# ---------------------------------------------------------------------------
# per-page extraction


@dataclass(slots=True)
class _Line:
    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    font: str
    size: float
    bold: bool
    italic: bool
    color: int
    horizontal: bool
    weight: int  # non-space characters, for dominant-style votes


@dataclass(slots=True)
class _RawBlock:
    x0: float
    y0: float
    x1: float
    y1: float
    lines: list[_Line] = field(default_factory=list)
    column: int = 0

    @property
    def text(self) -> str:
        return "\n".join(ln.text for ln in self.lines)


_FONT_FLAGS: dict[str, tuple[bool, bool]] = {}


def _font_flags(font: str) -> tuple[bool, bool]:
    """(bold, italic) from a font name, cached: the regexes are the hot path."""
    v = _FONT_FLAGS.get(font)
    if v is None:
        v = _FONT_FLAGS[font] = (bool(_BOLD_RE.search(font)), bool(_ITALIC_RE.search(font)))
    return v


def _style_of_spans(spans: list[dict]) -> tuple[str, float, bool, bool, int, int]:
    """Dominant (font, size, bold, italic, color) of a line by character count, and the count."""
    if len(spans) == 1:
        s = spans[0]
        t = s["text"]
        font, fl = s["font"], s["flags"]
        fb, fi = _font_flags(font)
        return (font, round(s["size"] * 2) / 2, bool(fl & 16) or fb, bool(fl & 2) or fi, s["color"],
                len(t) - t.count(" "))
    # vote on the raw span attributes; resolve bold/italic only for the winner
    votes: dict[tuple, int] = {}
    total = 0
    for s in spans:
        t = s["text"]
        w = len(t) - t.count(" ")
        if w <= 0:
            continue
        total += w
        key = (s["font"], s["size"], s["flags"] & 18, s["color"])
        votes[key] = votes.get(key, 0) + w
    if not votes:
        s = spans[0]
        return s["font"], round(s["size"] * 2) / 2, False, False, s["color"], 0
    font, size, fl, color = max(votes.items(), key=lambda kv: kv[1])[0]
    fb, fi = _font_flags(font)
    return font, round(size * 2) / 2, bool(fl & 16) or fb, bool(fl & 2) or fi, color, total


def _transform(bbox, mat) -> tuple[float, float, float, float]:
    if mat is None:
        return bbox
    import pymupdf

    r = pymupdf.Rect(bbox) * mat
    return (r.x0, r.y0, r.x1, r.y1)


def _page_lines(page, flags: int) -> list[list[_Line]]:
    """The page's PyMuPDF blocks as lists of lines (rotation applied)."""
    d = page.get_text("dict", flags=flags)
    mat = page.rotation_matrix if page.rotation else None
    out: list[list[_Line]] = []
    for b in d["blocks"]:
        if b.get("type", 0) != 0:
            continue
        lines: list[_Line] = []
        for ln in b["lines"]:
            # invisible machine text (tiny ids under the page) is no content: drop it
            spans = [s for s in ln["spans"] if s["size"] >= 2.5]
            if not spans:
                continue
            dx, dy = ln["dir"]
            if mat is not None:
                # direction in displayed space
                import pymupdf

                p = pymupdf.Point(dx, dy) * pymupdf.Matrix(mat.a, mat.b, mat.c, mat.d, 0, 0)
                dx, dy = p.x, p.y
            horizontal = abs(dy) < 0.2 and dx > 0
            for part in _split_heading_spans(spans) if horizontal and len(spans) > 1 else (spans,):
                text = clean_extracted("".join(s["text"] for s in part))
                if not text.strip():
                    continue
                font, size, bold, italic, color, weight = _style_of_spans(part)
                bbox = ln["bbox"] if part is spans else _span_box(part)
                x0, y0, x1, y1 = _transform(bbox, mat)
                lines.append(
                    _Line(min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1), " ".join(text.split()),
                          font, size, bold, italic, color, horizontal, weight)
                )
        if lines:
            out.append(lines)
    return out


def _span_box(spans: list[dict]) -> tuple[float, float, float, float]:
    return (min(s["bbox"][0] for s in spans), min(s["bbox"][1] for s in spans),
            max(s["bbox"][2] for s in spans), max(s["bbox"][3] for s in spans))


#: Schemes whose number, opening a span in the middle of a short numbered line, starts a second
#: heading ("Part 1. Company Information" + "I. Overview of Company" in one line box).
_SPLIT_SCHEMES = frozenset({"part", "chapter", "item", "section", "article", "roman", "decimal", "alpha",
                            "cn-part", "cn-chapter", "cn-section", "cn-ordinal", "cn-paren"})


def _second_heading(before: str, after: str) -> bool:
    """Whether ``after`` opens a second numbered heading after the numbered title ``before``."""
    before, after = before.strip(), after.lstrip()
    if not before or not after or is_bare_label(before) or _SENT_END.search(before):
        return False
    if parse_numbering(before)[0] is None:
        return False
    num, rest = parse_numbering(after)
    if num is None or num.scheme not in _SPLIT_SCHEMES or not rest[:1].isalpha():
        return False
    # "12 Months" in a table row is no heading number
    return not (num.scheme == "decimal" and len(num.values) == 1 and not num.label.endswith((".", ")")))


def _split_heading_spans(spans: list[dict]) -> list[list[dict]]:
    """Split a line's spans where a second numbered heading starts; usually one part.

    Only short lines that open with a heading number are looked at, and the second part must open
    with a number of its own after a gap or a change of type, so "see Note 3. Leases" in running
    text (one span, or a long line) is never split.
    """
    total = sum(len(s["text"]) for s in spans)
    if total > 140 or parse_numbering(spans[0]["text"].lstrip())[0] is None:
        return [spans]
    for k in range(1, len(spans)):
        if not _second_heading("".join(s["text"] for s in spans[:k]), spans[k]["text"]):
            continue
        prev, cur = spans[k - 1], spans[k]
        gap = cur["bbox"][0] - prev["bbox"][2]
        restyled = abs(cur["size"] - prev["size"]) >= 0.5 or (cur["flags"] & 16) != (prev["flags"] & 16) \
            or cur["font"] != prev["font"]
        if gap >= 0.6 * cur["size"] or restyled or spans[k]["text"][:1].isspace() and gap >= 0.25 * cur["size"]:
            return [spans[:k]] + _split_heading_spans(spans[k:])
    return [spans]


def _capitals(text: str) -> bool:
    """A line in capitals (at least a short word of them): str.isupper ignores digits and marks."""
    return len(text) >= 4 and text.isupper()


def _same_row(a: _Line, b: _Line) -> bool:
    h = min(a.y1 - a.y0, b.y1 - b.y0)
    ov = min(a.y1, b.y1) - max(a.y0, b.y0)
    return h > 0 and ov > 0.5 * h


def _segment(lines: list[_Line]) -> list[_RawBlock]:
    """Split one PyMuPDF block into runs of one style; join fragments on one row."""
    # join fragments PyMuPDF left as separate lines on the same row
    rows: list[_Line] = []
    for ln in lines:
        prev = rows[-1] if rows else None
        if (
            prev is not None
            and prev.horizontal
            and ln.horizontal
            and _same_row(prev, ln)
            and ln.x0 >= prev.x1 - 1
            and (round(prev.size) == round(ln.size) or is_bare_label(prev.text))
            and not (len(prev.text) + len(ln.text) <= 140 and _second_heading(prev.text, ln.text))
        ):
            rows[-1] = _Line(
                prev.x0, min(prev.y0, ln.y0), ln.x1, max(prev.y1, ln.y1), prev.text + " " + ln.text,
                prev.font if prev.weight >= ln.weight else ln.font,
                max(prev.size, ln.size), prev.bold and ln.bold, prev.italic and ln.italic,
                prev.color if prev.weight >= ln.weight else ln.color, True, prev.weight + ln.weight,
            )
        else:
            rows.append(ln)
    blocks: list[_RawBlock] = []
    cur: _RawBlock | None = None
    prev_label = False
    right = max(r.x1 for r in rows)
    for ln in rows:
        label = _is_label_line(ln.text)
        if cur is not None:
            last = cur.lines[-1]
            gap = ln.y0 - last.y1
            same_style = (
                abs(ln.size - last.size) < 0.6 and ln.bold == last.bold and ln.italic == last.italic
                and ln.horizontal == last.horizontal
                # a line in capitals is a look of its own: "CONSOLIDATED BALANCE SHEETS" over
                # "(in millions)", or a heading set in body type over its paragraph
                and _capitals(ln.text) == _capitals(last.text)
            )
            # "Item 5. Other Information." set in body type is still a block of its own, and so
            # is a numbered line after a line that stopped short ("一、发行人简介" / "(一)公司概况")
            apart = (label and _SENT_END.search(last.text) is not None) or prev_label or (
                last.x1 < right - 2 * last.size and parse_numbering(ln.text)[0] is not None)
            if same_style and not apart and gap < 1.2 * max(last.y1 - last.y0, 1.0):
                cur.lines.append(ln)
                cur.x0, cur.y0 = min(cur.x0, ln.x0), min(cur.y0, ln.y0)
                cur.x1, cur.y1 = max(cur.x1, ln.x1), max(cur.y1, ln.y1)
                continue
        cur = _RawBlock(ln.x0, ln.y0, ln.x1, ln.y1, [ln])
        blocks.append(cur)
        prev_label = label and len(cur.lines) == 1
    return blocks


_SENT_END = re.compile(r"[.:;!?。；：]['\"”’)]?$")
_LABEL_LINE = re.compile(r"^(?:item\s+\d{1,2}[a-z]?\.|part\s+[ivx]{1,4}\b)", re.I)


def _is_label_line(text: str) -> bool:
    """A short line opening with a 10-K/10-Q section label ("Item 7.", "PART II")."""
    return len(text) <= 110 and _LABEL_LINE.match(text) is not None


def _is_column_part(blocks: Sequence[_RawBlock], region_width: float) -> bool:
    """Whether a side of a vertical cut looks like running text, not table cells."""
    if not blocks:
        return False
    width = max(b.x1 for b in blocks) - min(b.x0 for b in blocks)
    multi = sum(len(b.lines) for b in blocks if len(b.lines) >= 3)
    lines = sum(len(b.lines) for b in blocks)
    return width >= 0.22 * region_width and (multi >= 0.4 * lines or width >= 0.4 * region_width)


def _cuts(intervals: list[tuple[float, float, int]], min_gap: float) -> list[list[int]]:
    """Group items whose projections overlap; groups are separated by gaps >= min_gap."""
    intervals.sort()
    groups: list[list[int]] = []
    end = None
    for a, b, i in intervals:
        if end is None or a > end + min_gap:
            groups.append([i])
            end = b
        else:
            groups[-1].append(i)
            end = max(end, b)
    return groups


def _xycut(blocks: list[_RawBlock], idx: list[int], depth: int, column: int, out: list[int]) -> None:
    if len(idx) <= 1 or depth > 40:
        for i in sorted(idx, key=lambda i: (blocks[i].y0, blocks[i].x0)):
            if column and not blocks[i].column:
                blocks[i].column = column
            out.append(i)
        return
    x0 = min(blocks[i].x0 for i in idx)
    x1 = max(blocks[i].x1 for i in idx)
    # vertical cut: columns separated by a gutter of at least ~8pt
    cols = _cuts([(blocks[i].x0, blocks[i].x1, i) for i in idx], 8.0)
    if len(cols) > 1 and all(_is_column_part([blocks[i] for i in g], x1 - x0) for g in cols):
        for k, g in enumerate(cols, 1):
            _xycut(blocks, g, depth + 1, column or k, out)
        return
    rows = _cuts([(blocks[i].y0, blocks[i].y1, i) for i in idx], 0.5)
    if len(rows) > 1:
        for g in rows:
            _xycut(blocks, g, depth + 1, column, out)
        return
    if len(cols) > 1:
        # side by side but not text columns (a table, a form): read row by row
        for i in sorted(idx, key=lambda i: (round(blocks[i].y0 / 3), blocks[i].x0)):
            if column and not blocks[i].column:
                blocks[i].column = column
            out.append(i)
        return
    for i in sorted(idx, key=lambda i: (blocks[i].y0, blocks[i].x0)):
        if column and not blocks[i].column:
            blocks[i].column = column
        out.append(i)


def _merge_labels(blocks: list[_RawBlock]) -> list[_RawBlock]:
    """Join a bare heading number with the title beside it on the same row."""
    out: list[_RawBlock] = []
    for b in blocks:
        prev = out[-1] if out else None
        if (
            prev is not None
            and len(prev.lines) == 1
            and prev.lines[0].horizontal
            and b.lines[0].horizontal
            and _same_row(prev.lines[0], b.lines[0])
            and b.x0 >= prev.x1 - 1
            and b.x0 - prev.x1 < 200
            and is_bare_label(prev.lines[0].text)
        ):
            first = b.lines[0]
            lab = prev.lines[0]
            merged = _Line(lab.x0, min(lab.y0, first.y0), first.x1, max(lab.y1, first.y1),
                           lab.text + " " + first.text, first.font, max(lab.size, first.size),
                           first.bold, first.italic, first.color, True, lab.weight + first.weight)
            nb = _RawBlock(min(prev.x0, b.x0), min(prev.y0, b.y0), max(prev.x1, b.x1), max(prev.y1, b.y1),
                           [merged] + b.lines[1:], b.column or prev.column)
            out[-1] = nb
        else:
            out.append(b)
    return out


def _page_blocks(page, flags: int) -> list[_RawBlock]:
    blocks: list[_RawBlock] = []
    for lines in _page_lines(page, flags):
        blocks.extend(_segment(lines))
    if not blocks:
        return blocks
    order: list[int] = []
    # text that does not run left to right (an arXiv stamp or a "Downloaded from" strip up the
    # margin) is out of the flow: left in, it bars the vertical cut between two text columns
    flow = [i for i, b in enumerate(blocks) if all(ln.horizontal for ln in b.lines)]
    _xycut(blocks, flow, 0, 0, order)
    if len(flow) < len(blocks):
        side = set(flow)
        order.extend(i for i in range(len(blocks)) if i not in side)
    return _merge_paragraph_lines(_merge_labels([blocks[i] for i in order]))


def _merge_paragraph_lines(blocks: list[_RawBlock]) -> list[_RawBlock]:
    """Join consecutive blocks that continue one paragraph.

    Some producers (many Chinese filings) write every line as a block of its
    own.  A block continues the previous one when it has the same style, sits
    right below it in the same column, and the previous line ran to the full
    width (a line that stops short ends a paragraph — or is a heading).
    """
    col_right: dict[int, float] = {}
    for b in blocks:
        col_right[b.column] = max(col_right.get(b.column, 0.0), b.x1)
    out: list[_RawBlock] = []
    for b in blocks:
        a = out[-1] if out else None
        if a is not None and b.lines[0].horizontal and a.lines[-1].horizontal and a.column == b.column:
            la, lb = a.lines[-1], b.lines[0]
            height = max(la.y1 - la.y0, 1.0)
            right = col_right[a.column]
            width = right - min(a.x0, b.x0)
            if (
                abs(la.size - lb.size) < 0.6 and la.bold == lb.bold and la.italic == lb.italic
                and -1.0 <= lb.y0 - la.y1 <= 1.25 * height
                and abs(lb.x0 - a.x0) <= max(2.5 * la.size, 0.08 * width)
                and la.x1 >= right - max(1.5 * la.size, 0.06 * width)
                and width > 0
            ):
                a.lines.extend(b.lines)
                a.x0, a.y0, a.x1, a.y1 = min(a.x0, b.x0), min(a.y0, b.y0), max(a.x1, b.x1), max(a.y1, b.y1)
                continue
        out.append(b)
    return out


@dataclass(slots=True)
class _PageBlock:
    """A block before the cross-page passes have given it its role and index."""

    page: int
    bbox: tuple[float, float, float, float]
    text: str
    font: str
    size: float
    bold: bool
    italic: bool
    color: int
    line_count: int
    column: int
    rotated: bool
    role: str = "body"
    lines: list[_Line] | None = None  # kept only on pages that may be contents pages
    head_lines: list[_Line] | None = None  # a multi-line block near the top, until the running-line pass

    def freeze(self, index: int, start: int, end: int) -> Block:
        return Block(index=index, page=self.page, bbox=self.bbox, text=self.text, font=self.font, size=self.size,
                     bold=self.bold, italic=self.italic, color=self.color, line_count=self.line_count,
                     column=self.column, role=self.role, start=start, end=end,  # type: ignore[arg-type]
                     rotated=self.rotated)


def _block_style(rb: _RawBlock) -> tuple[str, float, bool, bool, int]:
    votes: dict[tuple, int] = defaultdict(int)
    for ln in rb.lines:
        votes[(ln.font, ln.size, ln.bold, ln.italic, ln.color)] += max(ln.weight, 1)
    return max(votes.items(), key=lambda kv: kv[1])[0]


# ---------------------------------------------------------------------------
# cross-page passes


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


def _is_toc_page(blocks: list[_PageBlock], page_count: int) -> bool:
    """A printed table of contents: many rows ending (or starting) in page numbers that go up."""
    if not any(b.lines is not None for b in blocks):
        return False
    return _toc_evidence(blocks, page_count).is_contents()


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


# ---------------------------------------------------------------------------


def _progress(total: int, desc: str, enabled: bool | None):
    if enabled is None:
        enabled = sys.stderr.isatty() and total >= 50
    from ._progress import progress_bar  # no tqdm import for a bar nobody sees

    return progress_bar(total, desc=desc, unit="page", enabled=enabled)


def _compact_pages(pages: Iterable[int]) -> str:
    """1-based page list as ranges: ``3, 7-9``."""
    ps = sorted(set(pages))
    parts: list[str] = []
    i = 0
    while i < len(ps):
        j = i
        while j + 1 < len(ps) and ps[j + 1] == ps[j] + 1:
            j += 1
        parts.append(str(ps[i] + 1) if i == j else f"{ps[i] + 1}-{ps[j] + 1}")
        i = j + 1
    return ", ".join(parts)


@route_mupdf_messages  # MuPDF's own messages: the structrag log and a counted warning, not stdout
def extract(
    path: str | os.PathLike[str],
    *,
    password: str | None = None,
    max_pages: int | None = None,
    progress: bool | None = None,
) -> Document:
    """Read a PDF into a :class:`Document`.

    ``max_pages`` keeps only the first pages (for previews and benchmarks).
    ``progress`` shows a bar on stderr (default: only on a terminal, for
    documents of 50 pages or more).  Raises :class:`NotAPDFError`,
    :class:`EncryptedPDFError` or :class:`CorruptPDFError` with the file named.
    """
    import pymupdf

    path = Path(path)
    doc = open_pdf(path, password)
    flags = pymupdf.TEXTFLAGS_DICT & ~pymupdf.TEXT_PRESERVE_IMAGES
    warnings: list[str] = []
    try:
        if doc.is_repaired:
            warnings.append(f"{path}: the PDF was damaged and has been repaired; some content may be missing")
        n = doc.page_count if max_pages is None else min(doc.page_count, max_pages)
        try:
            outline = clean_outline(
                OutlineEntry(level=int(lv), title=_WS_RE.sub(" ", strip_control(str(t))).strip(), page=int(pg) - 1)
                for lv, t, pg, *_ in doc.get_toc(simple=True)
            )
        except Exception as exc:  # a broken outline must not cost the document
            warnings.append(f"{path}: the PDF outline could not be read ({exc}); ignoring it")
            outline = ()
        metadata = tuple(sorted((k, str(v)) for k, v in (doc.metadata or {}).items() if v))
        pages: list[list[_PageBlock]] = []
        sizes: list[tuple[float, float]] = []
        textless: list[int] = []
        failed: list[int] = []
        with _progress(n, path.name, progress) as bar:
            for pno in range(n):
                try:
                    page = doc.load_page(pno)
                    rect = page.rect
                    sizes.append((float(rect.width), float(rect.height)))
                    raws = _page_blocks(page, flags)
                except Exception as exc:
                    failed.append(pno)
                    log.debug("%s, page %d: text extraction failed: %s", path, pno + 1, exc)
                    if len(sizes) <= pno:
                        sizes.append((0.0, 0.0))
                    raws = []
                page_blocks: list[_PageBlock] = []
                keep_lines = _may_be_toc(raws)
                for rb in raws:
                    font, size, bold, italic, color = _block_style(rb)
                    page_blocks.append(
                        _PageBlock(pno, (rb.x0, rb.y0, rb.x1, rb.y1), rb.text, font, size, bold, italic, color,
                                   len(rb.lines), rb.column, not all(ln.horizontal for ln in rb.lines),
                                   lines=rb.lines if keep_lines else None,
                                   head_lines=rb.lines if len(rb.lines) > 1 and rb.y0 <= _RUNNING_ZONE * rect.height
                                   else None)
                    )
                if not page_blocks and pno not in failed:
                    textless.append(pno)
                pages.append(page_blocks)
                bar.update(1)
        page_count = n
    finally:
        doc.close()

    _split_running_lines(pages, [h for _, h in sizes])
    _mark_furniture(pages, [h for _, h in sizes])
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

    if textless:
        warnings.append(
            f"{path}: {len(textless)} page(s) without a text layer (scanned?), "
            f"pages {_compact_pages(textless)}: no text taken from them"
        )
    if failed:
        warnings.append(f"{path}: text extraction failed on pages {_compact_pages(failed)}")
    for w in warnings:
        _warnings.warn(w, StructragWarning, stacklevel=3)  # past route_mupdf_messages, to the caller

    body: list[Block] = []
    furniture: list[Block] = []
    parts: list[str] = []
    page_block_starts: list[int] = []
    pos = 0
    sep = "\n\n"
    for p, blocks in enumerate(pages):
        page_block_starts.append(len(body))
        for b in blocks:
            if b.role in ("header", "footer", "page_number"):
                furniture.append(b.freeze(len(furniture), -1, -1))
                continue
            if parts:
                pos += len(sep)
            start = pos
            pos += len(b.text)
            parts.append(b.text)
            body.append(b.freeze(len(body), start, pos))
    page_block_starts.append(len(body))
    text = sep.join(parts)
    # a page starts where its first body block starts; an empty page where the next one does
    page_offsets = [len(text)] * (page_count + 1)
    for p in range(page_count - 1, -1, -1):
        lo, hi = page_block_starts[p], page_block_starts[p + 1]
        page_offsets[p] = body[lo].start if hi > lo else page_offsets[p + 1]

    return Document(
        path=str(path),
        name=path.name,
        sha1=file_sha1(path),
        page_count=page_count,
        page_sizes=tuple(sizes),
        blocks=tuple(body),
        furniture=tuple(furniture),
        text=text,
        page_offsets=tuple(page_offsets),
        page_block_starts=tuple(page_block_starts),
        toc_pages=tuple(toc_pages),
        textless_pages=tuple(textless),
        outline=outline,
        metadata=metadata,
        warnings=tuple(warnings),
    )

