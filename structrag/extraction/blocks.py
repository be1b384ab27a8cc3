"""One page's lines and style blocks, from PyMuPDF's ``get_text("dict")``.

Lines are regrouped into blocks of one dominant style (a bold heading line and the paragraph
under it end up in different blocks even when PyMuPDF puts them in one); fragments on one
baseline are joined, and a line box holding two numbered headings is split in two.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from ..model import Block
from ..numbering import is_bare_label, parse_numbering
from ..text import clean_extracted, upper_line

# "Medi" is URW's name for the bold cut of its Times/Helvetica clones (NimbusRomNo9L-Medi)
_BOLD_RE = re.compile(r"bold|black|heavy|bld|smbd|semibd|demi|-bd\b|bd$|-sb\b|-hv\b|-blk\b|-medi(?:ital)?$", re.I)
_ITALIC_RE = re.compile(r"italic|oblique|-it\b|,italic", re.I)


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
    from .._pymupdf import import_pymupdf

    pymupdf = import_pymupdf()

    r = pymupdf.Rect(bbox) * mat
    return (r.x0, r.y0, r.x1, r.y1)


#: a span of nine Latin letters or more and no space: one long word, or words set without space characters
#: (Chinese needs no spaces, and its justified lines space characters unevenly)
_GLUED = re.compile(r"[A-Za-z\u00c0-\u024f]{9,}")


def _latin(c: str) -> bool:
    return c.isalpha() and c <= "\u024f"


def _respace(chars: list[dict], size: float) -> str:
    """A span's text with a space wherever the gap between two letters is wider than the span's usual
    gap by a tenth of an em.  Some producers set a title's word spaces as shifts, with no space
    character, which PyMuPDF reads as one word ("Ourfindings", "Regulatedactivity"); an ordinary
    word's letters sit at an even spacing and are left alone."""
    text = "".join(c["c"] for c in chars)
    gaps = [b["bbox"][0] - a["bbox"][2] for a, b in zip(chars, chars[1:])]
    if len(gaps) < 4:
        return text
    usual = sorted(gaps)[len(gaps) // 2]
    out = [chars[0]["c"]]
    for g, a, b in zip(gaps, chars, chars[1:]):
        if g - usual > 0.1 * size and _latin(a["c"]) and _latin(b["c"]):
            out.append(" ")
        out.append(b["c"])
    return "".join(out)


def _respace_glued(page, d: dict, flags: int) -> None:
    """Put the word spaces back into title lines set without space characters (in place, in ``d``).

    Looked at: a horizontal line with no space in it, nine Latin letters in a row, set at least 1.25 times
    the page's main size (a title, not a table cell's long word); only then are the page's character boxes
    read (``rawdict``, about twice the cost of ``dict``), so ordinary pages pay one pass over their lines.
    """
    cands = []
    for bi, b in enumerate(d["blocks"]):
        for li, ln in enumerate(b.get("lines", ())):
            if ln["dir"][0] > 0.99 and ln["spans"] and not any(" " in s["text"] for s in ln["spans"]) \
                    and _GLUED.search("".join(s["text"] for s in ln["spans"])):
                cands.append((bi, li, ln))
    if not cands:
        return
    sizes: dict[float, int] = defaultdict(int)
    for b in d["blocks"]:
        for ln in b.get("lines", ()):
            for s in ln["spans"]:
                sizes[round(s["size"], 1)] += len(s["text"])
    main = max(sizes.items(), key=lambda kv: kv[1])[0]
    cands = [c for c in cands if max(s["size"] for s in c[2]["spans"]) >= 1.25 * main]
    if not cands:
        return
    raw = page.get_text("rawdict", flags=flags)
    for bi, li, ln in cands:
        for si, s in enumerate(ln["spans"]):
            chars = raw["blocks"][bi]["lines"][li]["spans"][si]["chars"]
            if _GLUED.search(s["text"]) and "".join(c["c"] for c in chars) == s["text"]:
                s["text"] = _respace(chars, s["size"])


def _page_lines(page, flags: int) -> list[list[_Line]]:
    """The page's PyMuPDF blocks as lists of lines (rotation applied)."""
    d = page.get_text("dict", flags=flags)
    mat = page.rotation_matrix if page.rotation else None
    out: list[list[_Line]] = []
    _respace_glued(page, d, flags)
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
                from .._pymupdf import import_pymupdf

                pymupdf = import_pymupdf()

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
            out.append(_merge_overprint(lines))
    return out


def _merge_overprint(lines: list[_Line]) -> list[_Line]:
    """One line for a title drawn over itself: a shadow or outline effect prints it two or more times a
    fraction of a glyph apart, sometimes in overlapping pieces ("The", "The Limes", "Limes Residential",
    "esidential Home"), which would otherwise read "The The Limes Limes ...".  A line is merged into the
    one before it when both are horizontal, of one size, on one baseline and overlap sideways (ordinary
    text never does), and its start repeats the earlier line's end (only the new part is kept) or it lies
    within the earlier line and repeats part of it (dropped)."""
    out: list[_Line] = []
    for ln in lines:
        p = out[-1] if out else None
        if (p is not None and p.horizontal and ln.horizontal and abs(p.size - ln.size) < 0.1
                and abs(p.y1 - ln.y1) < 0.25 * ln.size and p.x0 - 0.3 * ln.size < ln.x0 < p.x1 - 0.3 * ln.size):
            if ln.text in p.text and ln.x1 <= p.x1 + 0.3 * ln.size:  # a copy drawn over what is read already
                continue
            k = _repeated_start(p.text, ln.text)
            if k:
                out[-1] = _Line(p.x0, min(p.y0, ln.y0), max(p.x1, ln.x1), max(p.y1, ln.y1),
                                " ".join((p.text + ln.text[k:]).split()), p.font, p.size, p.bold, p.italic, p.color,
                                p.horizontal, p.weight + sum(not c.isspace() for c in ln.text[k:]))
                continue
        out.append(ln)
    return out


def _repeated_start(before: str, text: str) -> int:
    """Length of the longest start of ``text`` that ends ``before`` (0 unless 2+ characters, or all of a
    shorter ``text``)."""
    for k in range(min(len(before), len(text)), 0, -1):
        if before.endswith(text[:k]):
            return k if k >= 2 or k == len(text) else 0
    return 0


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
                and upper_line(ln.text) == upper_line(last.text)
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

