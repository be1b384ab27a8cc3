"""Render structured text (:mod:`eval.bench.synthetic_text` blocks) into a PDF in one publisher template
(:mod:`eval.bench.synthetic_styles`), with every heading's level and page known exactly.

The body is laid out by PyMuPDF's Story (HTML + CSS); each heading and each non-heading line that looks
like one (captions, table headers, callout titles, signatures) carries an ``id``, so Story's element
positions give its page.  The cover, the printed contents page and the running headers and footers are
drawn with the drawing API afterwards, when the body's page numbers are known.
"""

from __future__ import annotations

import html
import io
import random
import re
from dataclasses import dataclass

from eval.bench.synthetic_styles import SIDEBAR_TITLES, HeadingStyle, Style, company, number_label, person
from eval.bench.synthetic_text import Block

_IDS = re.compile(r'\bid="([hn]\d+)"')
MAX_BODY_PAGES = 150


class LayoutError(RuntimeError):
    """The body cannot be laid out (MuPDF's Story does not come to an end)."""


CONTENTS_TITLES = ("Contents", "Table of Contents", "CONTENTS", "Table of contents")
KINDS = ("table_header", "caption", "cover", "running", "signature", "sidebar", "contents")


@dataclass(frozen=True, slots=True)
class Rendered:
    """A rendered document: the PDF, its labels ``[level, title, page]`` (1-based) and its non-heading lines."""

    pdf: bytes
    toc: tuple[tuple[int, str, int], ...]
    lines: tuple[dict, ...]
    pages: int


def _caps(text: str, hs: HeadingStyle) -> tuple[str, str]:
    """The heading as printed (plain text) and its HTML."""
    if hs.caps == "upper":
        t = text.upper()
        return t, html.escape(t)
    if hs.caps == "small":
        t = text.upper()
        small = round(hs.size * 0.8, 1)
        parts = []
        for word in t.split(" "):
            parts.append(html.escape(word[:1]) + (f'<span style="font-size:{small}pt">{html.escape(word[1:])}</span>'
                                                  if word[1:] else ""))
        return t, " ".join(parts)
    return text, html.escape(text)


def css(style: Style) -> str:
    """The template's style sheet."""
    s = style
    out = [f"body {{font-family: {s.body_font}; font-size: {s.body_size}pt; line-height: {s.line_height};"
           f" text-align: {'justify' if s.justify else 'left'};}}",
           f"p, ul, ol {{margin-top: 0; margin-bottom: {round(s.body_size * 0.6, 1)}pt;}}",
           f"pre {{font-family: monospace; font-size: {s.body_size - 1.5}pt; line-height: 1.1;"
           f" background-color: #f3f3f3; text-align: left;}}",
           f"table {{font-size: {s.body_size - 1}pt; margin-bottom: {s.body_size}pt; text-align: left;}}",
           f"th {{font-weight: bold; background-color: #e4e4e4; color: {s.accent}; text-align: left;}}",
           "td.group {font-weight: bold; font-style: italic;}",
           f".cap {{font-size: {s.body_size - 0.5}pt; font-weight: bold; color: {s.accent}; text-align: left;}}",
           f".box {{border: 1px solid {s.accent}; background-color: #f0f2f5; padding: 5pt; margin: 6pt 0;}}",
           f".boxtitle {{font-weight: bold; color: {s.accent}; font-size: {s.body_size + 1}pt;}}",
           ".sig {margin: 0; text-align: left;}", "blockquote {font-style: italic;}"]
    for lv, hs in enumerate(s.levels, 1):
        out.append(f"h{lv} {{font-family: {hs.font}; font-size: {hs.size}pt; font-weight: "
                   f"{'bold' if hs.bold else 'normal'}; font-style: {'italic' if hs.italic else 'normal'};"
                   f" color: {hs.colour}; margin-left: {hs.indent}pt; text-align: {hs.align};"
                   f" margin-top: {round(hs.size * 0.9, 1)}pt; margin-bottom: {round(hs.size * 0.45, 1)}pt;"
                   f" line-height: 1.15;" + (f" border-bottom: 1px solid {s.accent};" if hs.rule else "") + "}")
    return "\n".join(out)


class _Body:
    """Builds the body HTML, numbering headings and noting the id of every labelled line."""

    def __init__(self, style: Style, rng: random.Random):
        self.style, self.rng = style, rng
        self.heads: list[tuple[int, str]] = []  # (level, printed title); the id is "h<index>"
        self.negs: list[tuple[str, str]] = []  # (text, kind); the id is "n<index>"
        self.counters: list[int] = []
        self.tables = 0
        self.parts: list[str] = []  # HTML, one part per block (a table with its caption is one part)
        self.breaks: dict[int, str] = {}  # part index -> "page" or "column": the part starts a new one
        self.part_of: dict[str, int] = {}  # element id -> its part
        self.flat: dict[int, tuple[str, list[str]]] = {}  # a table's part -> it as paragraphs, its cells' ids
        self.dropped: set[str] = set()  # ids no longer printed (a table made paragraphs)

    def add(self, html_text: str) -> None:
        for key in _IDS.findall(html_text):
            self.part_of[key] = len(self.parts)
        self.parts.append(html_text)

    def segments(self) -> list[tuple[str, str]]:
        """The parts joined between breaks: (HTML, the break before it)."""
        out: list[tuple[str, str]] = []
        for k, part in enumerate(self.parts):
            if k == 0 or k in self.breaks:
                out.append(("", self.breaks.get(k, "page")))
            out[-1] = (out[-1][0] + part, out[-1][1])
        return out

    def neg(self, text: str, kind: str) -> str:
        self.negs.append((text, kind))
        return f'id="n{len(self.negs) - 1}"'

    def heading(self, b: Block) -> None:
        s = self.style
        c = self.counters[: b.level]
        c += [0] * (b.level - len(c))
        c[-1] += 1
        self.counters = c
        title = b.text
        if s.numbering != "none" and b.level <= s.numbered_levels:
            title = number_label(s.numbering, c) + _bare(title)
        printed, markup = _caps(title.strip(), s.levels[b.level - 1])
        if b.level == 1 and s.level1_new_page and self.heads:
            self.breaks[len(self.parts)] = "page"
        self.add(f'<h{b.level} id="h{len(self.heads)}">{markup}</h{b.level}>')
        self.heads.append((b.level, printed))

    def block(self, b: Block, section: str) -> None:
        e = html.escape
        if b.kind == "p":
            self.add(f"<p>{e(b.text)}</p>")
        elif b.kind == "quote":
            self.add(f"<blockquote>{e(b.text)}</blockquote>")
        elif b.kind in ("ul", "ol"):
            self.add(f"<{b.kind}>" + "".join(f"<li>{e(i)}</li>" for i in b.items) + f"</{b.kind}>")
        elif b.kind == "pre":
            self.add(f"<pre>{e(b.text)}</pre>")
        elif b.kind == "table":
            self.table(list(b.rows[0]), [list(r) for r in b.rows[1:]], {}, section)
            if self.style.columns > 1 and len(b.rows[0]) > 3:
                self.flatten(len(self.parts) - 1)  # too wide for a column: its cells would be cut off

    def table(self, header: list[str], rows: list[list[str]], groups: dict[int, str], section: str) -> None:
        """A table with a caption, a header row and row-group labels (``groups``: row index -> label, set
        before that row)."""
        self.tables += 1
        cap = self.style.caption.format(n=self.tables) + (section or "Summary")
        cap_html = f'<p class="cap" {self.neg(cap, "caption")}>{html.escape(cap)}</p>'
        first_cell = len(self.negs)
        out = [cap_html, "<table>"]
        cells = "".join(f'<th {self.neg(h, "table_header")}>{html.escape(h)}</th>' if h.strip() else "<th></th>"
                        for h in header)
        out.append(f"<tr>{cells}</tr>")
        for k, r in enumerate(rows):
            if k in groups:
                label = groups[k]
                out.append(f'<tr><td class="group" colspan="{len(header)}" {self.neg(label, "table_header")}>'
                           f"{html.escape(label)}</td></tr>")
            out.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>")
        out.append("</table>")
        text = "".join(f"<p>{html.escape(x)}</p>" for x in (
            "; ".join(f"{h}: {c}" if h.strip() else c for h, c in zip(header, r) if c.strip()) for r in rows) if x)
        self.flat[len(self.parts)] = (cap_html + text, [f"n{j}" for j in range(first_cell, len(self.negs))])
        self.add("".join(out))

    def flatten(self, part: int) -> None:
        """The table of ``part`` printed as paragraphs ("header: cell; ..."), its caption kept: the layout
        cut or lost its cells.  The header cells' ids are no longer printed."""
        text, ids = self.flat.pop(part)
        self.parts[part] = text
        self.dropped.update(ids)

    def numeric_table(self, section: str) -> None:
        rng = self.rng
        year = rng.randint(2012, 2023)
        cols = [""] + [str(year - k) for k in range(rng.choice((2, 3, 4)))][::-1]
        groups: dict[int, str] = {}
        rows: list[list[str]] = []
        names = ("Revenue", "Operating costs", "Staff", "Assets", "Liabilities", "Programmes", "Capital works",
                 "Services", "Grants", "Other items", "Income", "Expenses")
        for g in rng.sample(names, rng.choice((2, 3))):
            groups[len(rows)] = g
            for _ in range(rng.randint(2, 4)):
                rows.append([rng.choice(("Salaries", "Suppliers", "Depreciation", "Licences", "Travel", "Interest",
                                          "Contracts", "Rent", "Training", "Equipment", "Fees", "Transfers"))]
                            + [f"{rng.randint(100, 99999):,}" for _ in cols[1:]])
            rows.append(["Total"] + [f"{rng.randint(10000, 999999):,}" for _ in cols[1:]])
        self.table(cols, rows, groups, section)

    def sidebar(self, text: str) -> None:
        title = self.rng.choice(SIDEBAR_TITLES)
        self.add(f'<div class="box"><p class="boxtitle" {self.neg(title, "sidebar")}>'
                                 f"{html.escape(title)}</p><p>{html.escape(text)}</p></div>")

    def signature(self, org: str) -> None:
        name, role = person(self.rng)
        lines = [self.rng.choice(("Signed on behalf of the Board", "Approved by", "Authorised for issue by")),
                 name, role, org]
        self.add("<p></p>" + "".join(
            f'<p class="sig" {self.neg(t, "signature")}>{html.escape(t)}</p>' for t in lines))


def _bare(title: str) -> str:
    """A source title without its own number ("1.2 Scope", "V3 Session", "A01:2021 - Broken"), for styles
    that number headings themselves."""
    return re.sub(r"^(?:\d{1,3}(?:\.\d{1,3})*\.?|[A-Z]{1,3}\d{1,3}(?:[.:]\d{1,4})*\.?)\s+(?:[-–—:]\s+)?", "",
                  title) or title


def body_html(blocks: tuple[Block, ...], style: Style, rng: random.Random, org: str) -> _Body:
    """The body, one HTML string per segment (a segment starts on a new page)."""
    body = _Body(style, rng)
    section = ""
    pending = False  # a numeric table or a callout waits for the section's first paragraph
    for b in blocks:
        if b.kind == "h":
            body.heading(b)
            section = b.text
            pending = b.level <= 2
            continue
        body.block(b, section)
        if b.kind == "p" and pending and len(b.text) > 80:
            pending = False
            if rng.random() < style.table_rate:
                body.numeric_table(section)
            elif rng.random() < style.sidebar_rate:
                body.sidebar(b.text.split(". ")[0][:220].rstrip(".") + ".")
    if style.signature:
        body.signature(org)
    return body


def layout(body: _Body, style: Style) -> tuple[bytes, dict[str, int], int]:
    """The body laid out page by page: its PDF, the page (1-based) of every id, and the page count.

    A segment after a "page" break starts a new page, after a "column" break the next column (a new
    page after the last one)."""
    import pymupdf

    mb = pymupdf.paper_rect(style.page)
    m = style.margin
    gap = 18
    width = (mb.width - 2 * m - gap * (style.columns - 1)) / style.columns
    cols = [pymupdf.Rect(m + k * (width + gap), m + 14, m + k * (width + gap) + width, mb.height - m - 6)
            for k in range(style.columns)]
    buf = io.BytesIO()
    writer = pymupdf.DocumentWriter(buf)
    where: dict[str, int] = {}
    page = 0
    sheet = css(style)

    def note(pos) -> None:
        if pos.id and pos.open_close & 1 and pos.id not in where:
            where[pos.id] = page

    col, open_page = 0, False
    for seg, brk in body.segments():
        if brk == "page" and open_page:
            writer.end_page()
            col, open_page = 0, False
        story = pymupdf.Story(html=seg, user_css=sheet)
        more = 1
        while more:
            if page >= MAX_BODY_PAGES:  # a block that fits no column makes MuPDF add empty pages forever
                raise LayoutError(f"no end after {page} pages")
            if not open_page:
                dev = writer.begin_page(mb)
                page += 1
                col, open_page = 0, True
            more, _ = story.place(cols[col])
            story.element_positions(note)
            story.draw(dev)
            col += 1
            if col == style.columns:
                writer.end_page()
                open_page = False
    if open_page:
        writer.end_page()
    writer.close()
    return buf.getvalue(), where, page


def lost_lines(pdf: bytes, where: dict[str, int], body: _Body) -> list[str]:
    """The ids of headings and labelled lines that are not printed (whole) on the page Story gave them.

    A heading of two lines may break at the end of a column, and MuPDF's layout sometimes drops the
    rest of a table, and what follows it, where the table breaks at the end of a column (depending on
    the geometry); such a render must not be labelled as it is.
    """
    import pymupdf

    from structrag.text import normalize_title

    with pymupdf.open("pdf", pdf) as doc:
        pages = [normalize_title(p.get_text()) for p in doc]
    wanted = [(f"h{i}", t) for i, (_, t) in enumerate(body.heads)] + [(f"n{j}", t) for j, (t, _) in enumerate(body.negs)]
    return [key for key, t in wanted if key not in body.dropped
            and (key not in where or normalize_title(t) not in pages[where[key] - 1])]
