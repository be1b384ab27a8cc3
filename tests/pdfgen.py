"""Build small, real PDFs with PyMuPDF for the tests.

A :class:`PDFBuilder` lays text out top to bottom with wrapping, so tests can
describe documents as a sequence of headings and paragraphs (one or two
columns, running headers and footers, CJK, rotation) and get a genuine PDF
that structrag reads like any other.

Fixed documents some tests hold results against (so their drawing code must not change):
:func:`build_report_pdf` (the golden chunk file's input), :func:`headings_pdf` (headings of given
sizes), :func:`deep_pdf` (sections nested deep under long headings), :func:`one_section_pdf`.
Every test builds its PDFs here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

LOREM = (
    "The company reports its results in this section. Revenue grew in every segment during the year, "
    "driven by higher volumes and by prices. Operating costs rose less than revenue, so margins improved. "
    "Cash from operations funded capital expenditure and the dividend, and net debt fell at year end."
)

_BOLD = {"helv": "hebo", "tiro": "tibo", "cour": "cobo"}


@dataclass
class PDFBuilder:
    width: float = 595
    height: float = 842
    margin: float = 72
    font: str = "helv"
    body_size: float = 10
    header: str | None = None  # running header, "{page}" is replaced by the page number
    footer: str | None = "{page}"
    doc: pymupdf.Document = field(default_factory=pymupdf.open)
    y: float = 0.0
    _page: pymupdf.Page | None = None
    columns: int = 1
    _col: int = 0

    # --- page handling ------------------------------------------------
    def new_page(self) -> pymupdf.Page:
        self._page = self.doc.new_page(width=self.width, height=self.height)
        n = self.doc.page_count
        if self.header:
            self._page.insert_text((self.margin, 40), self.header.format(page=n), fontsize=8, fontname=self.font)
        if self.footer:
            t = self.footer.format(page=n)
            w = pymupdf.get_text_length(t, fontname=self.font, fontsize=8)
            self._page.insert_text(((self.width - w) / 2, self.height - 36), t, fontsize=8, fontname=self.font)
        self.y = self.margin
        self._col = 0
        return self._page

    @property
    def page(self) -> pymupdf.Page:
        if self._page is None:
            self.new_page()
        return self._page  # type: ignore[return-value]

    def _col_box(self) -> tuple[float, float]:
        usable = self.width - 2 * self.margin
        if self.columns == 1:
            return self.margin, self.width - self.margin
        gutter = 24
        w = (usable - gutter * (self.columns - 1)) / self.columns
        x0 = self.margin + self._col * (w + gutter)
        return x0, x0 + w

    def set_columns(self, n: int) -> None:
        self.columns = n
        self._col = 0
        self._col_top = self.y

    def next_column(self) -> None:
        if self._col + 1 < self.columns:
            self._col += 1
            self.y = self._col_top
        else:
            self.new_page()
            self._col_top = self.y

    # --- content ----------------------------------------------------------
    def _lines(self, text: str, size: float, font: str, width: float) -> list[str]:
        if font in ("china-s", "china-t", "japan", "korea"):
            # CJK: wrap by characters
            per = max(1, int(width // size))
            return [text[i : i + per] for i in range(0, len(text), per)] or [""]
        words, lines, cur = text.split(), [], ""
        for w in words:
            cand = (cur + " " + w).strip()
            if pymupdf.get_text_length(cand, fontname=font, fontsize=size) <= width or not cur:
                cur = cand
            else:
                lines.append(cur)
                cur = w
        if cur:
            lines.append(cur)
        return lines or [""]

    def text(self, text: str, *, size: float | None = None, bold: bool = False, font: str | None = None,
             gap_before: float = 0.0, gap_after: float = 6.0, indent: float = 0.0,
             color: tuple[float, float, float] = (0, 0, 0)) -> None:
        size = size or self.body_size
        font = font or self.font
        if bold:
            font = _BOLD.get(font, font)
        x0, x1 = self._col_box()
        lines = self._lines(text, size, font, x1 - x0 - indent)
        lead = size * 1.25
        self.y += gap_before
        for ln in lines:
            if self.y + lead > self.height - self.margin:
                if self.columns > 1:
                    self.next_column()
                else:
                    self.new_page()
                x0, x1 = self._col_box()
            self.page.insert_text((x0 + indent, self.y + size), ln, fontsize=size, fontname=font, color=color)
            self.y += lead
        self.y += gap_after

    def row(self, cells: list[tuple[float, str]], *, size: float | None = None, bold: bool = False,
            gap_after: float = 2.0) -> None:
        """One line of text pieces, each at its own x offset from the column's left edge (table rows,
        signature lines, chart labels)."""
        size = size or self.body_size
        font = _BOLD.get(self.font, self.font) if bold else self.font
        x0, _ = self._col_box()
        if self.y + size * 1.25 > self.height - self.margin:
            self.new_page()
            x0, _ = self._col_box()
        for dx, t in cells:
            self.page.insert_text((x0 + dx, self.y + size), t, fontsize=size, fontname=font)
        self.y += size * 1.25 + gap_after

    def heading(self, text: str, *, size: float = 16, bold: bool = True, **kw) -> None:
        kw.setdefault("gap_before", 10)
        kw.setdefault("gap_after", 6)
        self.text(text, size=size, bold=bold, **kw)

    def para(self, text: str = LOREM, **kw) -> None:
        self.text(text, **kw)

    def save(self, path: str | Path, *, toc: list | None = None, **save_kw) -> Path:
        if toc:
            self.doc.set_toc(toc)
        path = Path(path)
        self.doc.save(path, **save_kw)
        return path


def numbered_report(path: str | Path, *, chapters: int = 3, sections: int = 2, subsections: int = 2,
                    with_toc: bool = False, header: str | None = "ACME Corp — Annual Report 2024") -> Path:
    """A report with 1 / 1.1 / 1.1.1 headings at 18 / 14 / 11 pt bold, two paragraphs each."""
    b = PDFBuilder(header=header)
    toc = []
    for c in range(1, chapters + 1):
        b.new_page()
        t = f"{c} Chapter {['One', 'Two', 'Three', 'Four', 'Five', 'Six'][c - 1]}"
        b.heading(t, size=18)
        toc.append([1, t, b.doc.page_count])
        b.para()
        for s in range(1, sections + 1):
            t = f"{c}.{s} Section {c}.{s} results"
            b.heading(t, size=14)
            toc.append([2, t, b.doc.page_count])
            b.para()
            for u in range(1, subsections + 1):
                t = f"{c}.{s}.{u} Detail {c}.{s}.{u} discussion"
                b.heading(t, size=11)
                toc.append([3, t, b.doc.page_count])
                b.para()
                b.para()
    return b.save(path, toc=toc if with_toc else None)


def contents_report(
    path: str | Path,
    *,
    chapters: tuple[tuple[str, tuple[str, ...]], ...] | None = None,
    style: str = "leaders",
    front: int = 1,
    roman_front: bool = False,
    footers: bool = True,
    contents_pages: int = 1,
    label_shift: int = 0,
    listed_depth: int = 2,
    font: str = "helv",
    title_block: tuple[str, ...] = (),
    figures: bool = False,
) -> Path:
    """A report with a printed table of contents and no outline.

    The body has chapters (16pt bold, "1 Title"), sections (12pt bold, "1.1 Title") and unlisted
    sub-sections (10.5pt bold, "1.1.1 ..."); ``listed_depth`` says how deep the contents goes.
    ``front`` title pages come first (cover, preface...), then the contents (``contents_pages`` pages),
    then the body, whose pages print "1", "2", ... in the footer (``footers``); with ``roman_front`` the
    front pages print "i", "ii" and the contents lists a "Preface" among them.  ``style``:
    ``leaders`` ("Title . . . . 12"), ``columns`` (the number set apart at the right margin),
    ``leading`` ("12  Title").  ``label_shift`` adds to every printed label (labels past the end).
    ``title_block`` lines (a filing's "FORM 10-K", "For the Year Ended ...") are set in bold under the
    contents page's title and again at the top of the first body page, as 10-Ks print them.
    With ``figures`` every section opens on a figure captioned in bold ("Figure 3: ..."), and a "List of
    Figures" page, set like the contents, follows the contents.
    """
    if chapters is None:
        chapters = (
            ("Company Overview", ("History and Structure", "Markets We Serve")),
            ("Financial Review", ("Revenue Development", "Cost of Operations", "Cash and Liquidity")),
            ("Risk Management", ("Credit Risk", "Market Risk")),
            ("Outlook", ("Guidance for Next Year",)),
        )
    cjk = font in ("china-s", "china-t")
    bold = (lambda f: f) if cjk else (lambda f: _BOLD.get(f, f))
    b = PDFBuilder(footer=None, font=font)
    # front matter
    b.new_page()
    b.text("ACME Holdings Annual Report", size=24, bold=True, gap_before=200)
    front_titles = []
    for k in range(1, front):
        b.new_page()
        t = "Preface" if k == 1 else f"Foreword {k}"
        b.heading(t, size=16)
        b.para()
        front_titles.append((t, k))
    n_front = b.doc.page_count
    if roman_front:
        for p in range(n_front):
            b.doc[p].insert_text((b.width / 2, b.height - 36), ["i", "ii", "iii", "iv", "v", "vi"][p],
                                 fontsize=8, fontname=font)
    # body
    entries: list[tuple[int, str, int]] = []  # level, title, physical body page index (0-based in the body)
    captions: list[tuple[int, str, int]] = []
    body_start = b.doc.page_count
    for c, (title, sections) in enumerate(chapters, 1):
        b.new_page()
        if c == 1:
            for line in title_block:
                b.text(line, size=11, bold=True)
        t = f"{c} {title}" if not cjk else f"第{'一二三四五六七八九十'[c - 1]}节 {title}"
        b.heading(t, size=16, bold=not cjk, font=font)
        entries.append((1, t, b.doc.page_count - 1 - body_start))
        b.para(font=font) if cjk else b.para()
        for s, sec in enumerate(sections, 1):
            t = f"{c}.{s} {sec}" if not cjk else f"{'一二三四五六七八九十'[s - 1]}、{sec}"
            b.heading(t, size=12, bold=not cjk, font=font)
            entries.append((2, t, b.doc.page_count - 1 - body_start))
            if figures:
                caption = f"Figure {len(captions) + 1}: {sec} by quarter"
                b.text(caption, size=10, bold=True, gap_before=40)
                captions.append((1, caption, b.doc.page_count - 1 - body_start))
            b.para(font=font) if cjk else b.para()
            for u in (1, 2):
                t = f"{c}.{s}.{u} Detail {u} of {sec.lower()}" if not cjk else f"（{'一二三'[u - 1]}）{sec}明细{u}"
                b.heading(t, size=10.5, bold=not cjk, font=font)
                entries.append((3, t, b.doc.page_count - 1 - body_start))
                b.para(font=font) if cjk else b.para()
                b.para(font=font) if cjk else b.para()
    if footers:
        for p in range(body_start, b.doc.page_count):
            t = str(p - body_start + 1)
            b.doc[p].insert_text((b.width / 2, b.height - 36), t, fontsize=8, fontname=font)
    # contents pages, inserted after the front matter
    listed = [(lv, t, pg) for lv, t, pg in entries if lv <= listed_depth]
    per_page = -(-len(listed) // contents_pages)
    right = b.width - b.margin
    lists = [("目 录" if cjk else "Table of Contents", listed, per_page)] * contents_pages
    if captions:
        lists.append(("List of Figures", captions, len(captions)))
    for k, (heading, listed, per_page) in enumerate(lists):
        page = b.doc.new_page(pno=n_front + k, width=b.width, height=b.height)
        y = b.margin
        if k == 0 or k == contents_pages:
            page.insert_text((b.margin, y + 18), heading, fontsize=18, fontname=bold(font))
            y += 40
            for line in title_block if k == 0 else ():
                y += 16
                page.insert_text((b.margin + 150, y), line, fontsize=11, fontname=bold(font))
            y += 10 if title_block and k == 0 else 0
        rows = listed[k * per_page:(k + 1) * per_page] if k < contents_pages else listed
        if k == 0 and roman_front:
            rows = [(1, t, None, ["i", "ii", "iii", "iv"][p]) for t, p in front_titles] + rows  # type: ignore
        for row in rows:
            lv, t = row[0], row[1]
            label = row[3] if len(row) == 4 else str(row[2] + 1 + label_shift)
            size = 11 if lv == 1 else 10
            fnt = bold(font) if lv == 1 else font
            x = b.margin + 18 * (lv - 1)
            y += 18
            if style == "leading":
                page.insert_text((b.margin, y), label, fontsize=size, fontname=fnt)
                page.insert_text((b.margin + 36 + 18 * (lv - 1), y), t, fontsize=size, fontname=fnt)
                continue
            page.insert_text((x, y), t, fontsize=size, fontname=fnt)
            lw = pymupdf.get_text_length(label, fontname=fnt, fontsize=size)
            if style == "leaders":
                tw = pymupdf.get_text_length(t, fontname=fnt, fontsize=size) if not cjk else len(t) * size
                dots = " ." * max(3, int((right - lw - x - tw - 12) / pymupdf.get_text_length(" .", fontsize=size)))
                page.insert_text((x + tw + 4, y), dots, fontsize=size, fontname="helv")
            page.insert_text((right - lw, y), label, fontsize=size, fontname=fnt)
    return b.save(path)


# ---------------------------------------------------------------------------
# the Northwind report: prose, a list, a table, CJK text (the golden chunk file's input)

PARA_INTRO = [
    "Northwind Logistics is a regional freight company that operates warehouses, cross-docking hubs and "
    "a fleet of medium-duty trucks. This report describes the year ended December 31, 2024 and compares it "
    "with the prior year.",
    "The company served 4,210 business customers in 2024. Most of them are retailers and food distributors "
    "in the northern provinces, and about a fifth are manufacturers that ship spare parts.",
]
PARA_SCOPE = (
    "This report covers the parent company and its three subsidiaries. Figures are in thousands of euros "
    "unless stated otherwise. The consolidated statements follow the accounting policies described in the "
    "notes. Comparative figures were restated where the presentation changed. Segment information is given "
    "for freight, warehousing and value-added services. The warehousing segment includes the new cold-storage "
    "site that opened in March. Value-added services include labelling, kitting and returns handling for "
    "online retailers. Management reviews segment results monthly. The auditor's report is attached at the "
    "end of the document. Forward-looking statements are subject to risks that are described in the outlook "
    "section. Readers should not place undue reliance on them."
)
BULLETS = [
    "- Revenue grew 8.4% to 312.5 million euros, driven by warehousing volumes.",
    "- Operating margin improved to 6.1% from 5.3% a year earlier.",
    "- The cold-storage site in Tampere opened on schedule in March.",
    "- Fleet emissions per tonne-kilometre fell by 11% after the electric truck pilot.",
    "- Net debt decreased to 1.9 times adjusted EBITDA.",
    "- The board proposes a dividend of 0.42 euros per share.",
]
TABLE = [
    ["(in thousands of euros)", "2024", "2023", "Change"],
    ["Freight revenue", "181,204", "172,915", "4.8%"],
    ["Warehousing revenue", "96,377", "84,120", "14.6%"],
    ["Value-added services", "34,912", "31,277", "11.6%"],
    ["Total revenue", "312,493", "288,312", "8.4%"],
    ["Personnel expenses", "(121,550)", "(115,032)", "5.7%"],
    ["Fuel and energy", "(48,216)", "(47,903)", "0.7%"],
    ["Depreciation", "(27,804)", "(25,116)", "10.7%"],
    ["Operating profit", "19,063", "15,280", "24.8%"],
]
PARA_NOTES = [
    "Note 1. Revenue is recognised when the service is rendered. Warehousing contracts are billed monthly "
    "and recognised over the storage period.",
    "Note 2. Leases of trucks and warehouses are presented as right-of-use assets. The lease liability is "
    "measured at the present value of the remaining payments.",
    "Note 3. Goodwill arose from the acquisition of Polar Cold Chain in 2021. It was tested for impairment "
    "at year end and no impairment was needed.",
    "Note 4. The company has committed credit lines of 80 million euros, of which 25 million euros were drawn "
    "at the end of the year.",
]
PARA_CJK = (
    "本公司是一家区域性物流企业，主要从事仓储、转运和城市配送业务。报告期内，公司营业收入同比增长百分之八点四。"
    "冷链仓库于三月投入使用，带动仓储收入明显增长。公司将继续优化运输网络，提高车辆利用率。"
)
PARA_OUTLOOK = "We expect revenue growth of 5% to 7% in 2025."

OUTLINE = [
    [1, "Annual Report 2024", 1],
    [2, "1 Introduction", 1],
    [3, "1.1 Scope", 1],
    [3, "1.2 Highlights", 2],
    [2, "2 Financial Statements", 2],
    [3, "2.1 Income Statement", 2],
    [3, "2.2 Notes", 2],
    [2, "3 中文摘要", 3],
    [2, "4 Outlook", 3],
    [2, "5 Appendix", 3],
]


class _NorthwindWriter:
    """Lays out headings, paragraphs, lists and tables top to bottom, page after page."""

    def __init__(self, doc) -> None:
        self.doc = doc
        self.page = None
        self.y = 0.0
        self.new_page()

    def new_page(self) -> None:
        self.page = self.doc.new_page(width=595, height=842)
        n = self.doc.page_count
        self.page.insert_text((280, 815), f"Page {n}", fontsize=8, fontname="helv")
        self.page.insert_text((72, 30), "Northwind Logistics Annual Report 2024", fontsize=8, fontname="helv")
        self.y = 72.0

    def _room(self, h: float) -> None:
        if self.y + h > 780:
            self.new_page()

    def line(self, text: str, size: float = 10, font: str = "helv", gap: float = 6) -> None:
        self._room(size * 1.6)
        self.page.insert_text((72, self.y + size), text, fontsize=size, fontname=font)
        self.y += size * 1.3 + gap

    def heading(self, text: str, size: float = 14) -> None:
        self._room(size * 1.6 + 40)
        self.y += 8
        self.line(text, size=size, font="china-s" if any(ord(c) > 0x3000 for c in text) else "hebo", gap=8)

    def para(self, text: str, font: str = "helv", size: float = 10) -> None:
        for h in range(40, 800, 20):
            self._room(h)
            rect = pymupdf.Rect(72, self.y, 523, self.y + h)
            rc = self.page.insert_textbox(rect, text, fontsize=size, fontname=font, lineheight=1.2)
            if rc >= 0:
                self.y += h - rc + 12
                return
        raise AssertionError("paragraph does not fit a page")

    def table(self, rows) -> None:
        xs = [72, 260, 360, 460]
        for r, row in enumerate(rows):
            self._room(16)
            for x, cell in zip(xs, row):
                self.page.insert_text((x, self.y + 9), cell, fontsize=9, fontname="hebo" if r == 0 else "helv")
            self.y += 14
        self.y += 10


def build_report_pdf(path: Path) -> Path:
    """A 3-page report with an outline, a preamble, prose, a list, a table, CJK text; byte-stable."""
    doc = pymupdf.open()
    w = _NorthwindWriter(doc)
    w.line("Published by the Board of Directors, 12 March 2025")
    w.heading("Annual Report 2024", size=20)
    w.para("A summary of the year for shareholders, customers and employees.")
    w.heading("1 Introduction", size=16)
    for p in PARA_INTRO:
        w.para(p)
    w.heading("1.1 Scope", size=12)
    w.para(PARA_SCOPE)
    w.new_page()
    w.heading("1.2 Highlights", size=12)
    w.para("\n".join(BULLETS))
    w.heading("2 Financial Statements", size=16)
    w.heading("2.1 Income Statement", size=12)
    w.table(TABLE)
    w.heading("2.2 Notes", size=12)
    for p in PARA_NOTES:
        w.para(p)
    w.new_page()
    w.heading("3 中文摘要", size=16)
    w.para(PARA_CJK, font="china-s")
    w.heading("4 Outlook", size=16)
    w.para(PARA_OUTLOOK)
    w.heading("5 Appendix", size=16)
    doc.set_toc(OUTLINE)
    doc.set_metadata({"title": "Northwind Logistics Annual Report 2024", "creationDate": "D:20250312000000",
                      "modDate": "D:20250312000000", "producer": "structrag tests", "creator": "structrag tests"})
    path.write_bytes(doc.tobytes(no_new_id=True, garbage=3, deflate=True))
    doc.close()
    return path


def chinese_report(path: Path, titles: tuple[str, ...] = ("第一节 发行人基本情况", "第二节 风险因素", "第三节 财务会计信息"),
                   paragraphs: int = 3) -> Path:
    """A short report in Chinese: each title over ``paragraphs`` paragraphs of Chinese text (a document an
    ``auto`` index embeds with its multilingual model)."""
    doc = pymupdf.open()
    w = _NorthwindWriter(doc)
    for t in titles:
        w.heading(t, size=16)
        for _ in range(paragraphs):
            w.para(PARA_CJK, font="china-s")
    path.write_bytes(doc.tobytes(no_new_id=True, garbage=3, deflate=True))
    doc.close()
    return path


# ---------------------------------------------------------------------------
# headings of given sizes over body text (the level predictors' tests)


def headings_pdf(path: str | Path, body: str, spec, per_page: int = 3) -> list[dict]:
    """A PDF of headings ``(text, size, bold, level)`` with ``body`` under each, ``per_page`` a page; returns
    reference records ``{text, page (1-based), bbox}``."""
    doc = pymupdf.open()
    records = []
    page = None
    y = 0.0
    for i, (text, size, bold, _lv) in enumerate(spec):
        if i % per_page == 0:
            page = doc.new_page(width=595, height=842)
            y = 72.0
        y += size + 6
        page.insert_text((72, y), text, fontsize=size, fontname="hebo" if bold else "helv")
        rect = page.search_for(text)[0]
        records.append({"text": text, "page": doc.page_count, "bbox": [rect.x0, rect.y0, rect.x1, rect.y1]})
        y += 8
        box = pymupdf.Rect(72, y, 523, y + 70)
        page.insert_textbox(box, body, fontsize=10, fontname="helv")
        y += 80
    doc.save(path)
    doc.close()
    return records


# ---------------------------------------------------------------------------
# sections nested deep under long headings (metadata length in the LlamaIndex adapter)


def deep_pdf(path: Path, long_title: str, depth: int = 7) -> Path:
    """A PDF whose sections nest ``depth`` deep under very long headings (``long_title`` in each)."""
    doc = pymupdf.open()
    page = doc.new_page()
    y = 60.0
    toc = []
    for level in range(1, depth + 1):
        title = f"{level}. {long_title} (part {level})"
        rect = pymupdf.Rect(72, y, 523, y + 60)
        page.insert_textbox(rect, title, fontsize=13 - level * 0.5, fontname="hebo")
        y += 48
        body = (f"Section {level} holds the reconciliation of opening and closing balances for tier {level}. "
                "Transfers into and out of the level are recognised at the end of the reporting period. ") * 2
        page.insert_textbox(pymupdf.Rect(72, y, 523, y + 70), body, fontsize=9, fontname="helv")
        y += 64
        toc.append([level, title, 1])
        if y > 700:
            page = doc.new_page()
            y = 60.0
            toc[-1][2] = toc[-1][2]
    doc.set_toc(toc)
    doc.set_metadata({"creationDate": "D:20250101000000", "modDate": "D:20250101000000"})
    path.write_bytes(doc.tobytes(no_new_id=True, garbage=3, deflate=True))
    return path


def one_section_pdf(path: Path, title: str, text: str) -> Path:
    """One page: ``title`` in bold 14 pt (also the outline's only entry) over ``text`` in 9 pt."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 60), title, fontsize=14, fontname="hebo")
    page.insert_textbox(pymupdf.Rect(72, 80, 523, 800), text, fontsize=9, fontname="helv")
    doc.set_toc([[1, title, 1]])
    doc.save(path)
    doc.close()
    return path


def page_blocks(specs, page: int = 12, first: int = 0) -> list:
    """Blocks of one page from ``(bbox, text, size, bold)`` specs, indexed from ``first``: a page's layout as
    PyMuPDF reads it, without a PDF (the heading rules' unit tests)."""
    from structrag.model import Block

    return [Block(index=first + i, page=page, bbox=bbox, text=text, font="Helvetica", size=size, bold=bold,
                  italic=False, color=0, line_count=text.count("\n") + 1)
            for i, (bbox, text, size, bold) in enumerate(specs)]


# ---------------------------------------------------------------------------
# an IPO prospectus: a cover, its title again, front matter, a printed contents, numbered sections

#: (cover, page 2, front matter, contents title, sections) of each language; a cover line is (text, size)
_PROSPECTUS = {
    "zh": dict(
        font="china-s",
        cover=(("湖南星辰电子股份有限公司", 24), ("（湖南省长沙市岳麓区麓谷大道58号）", 12),
               ("首次公开发行股票招股意向书", 26), ("保荐人（主承销商）", 14), ("长江证券股份有限公司", 16),
               ("武汉市江汉区新华路特8号长江证券大厦", 12)),
        notice="本次股票发行后拟在创业板市场上市，该市场具有较高的投资风险。创业板公司具有业绩不稳定、经营风险高、"
               "退市风险大等特点，投资者面临较大的市场风险。投资者应充分了解创业板市场的投资风险。",
        repeat=("湖南星辰电子股份有限公司", "首次公开发行股票招股意向书"),
        fields="发行股票类型：人民币普通股（A股）　发行股数：1,600万股　每股面值：人民币1.00元",
        front=("发行人声明", "重大事项提示"), front_subs=("一、股份锁定承诺", "二、滚存利润的分配"),
        contents="目 录", glossary="释 义",
        sections=("第一节 概览", "第二节 本次发行概况", "第三节 风险因素"),
        subs=("一、发行人简介", "二、主要财务数据"),
        para="本公司的主营业务为电子元器件的研发、生产和销售。报告期内公司营业收入持续增长，毛利率保持稳定，"
             "经营活动产生的现金流量净额逐年增加，公司的资产负债结构合理，具备持续经营能力。",
    ),
    "en": dict(
        font="helv",
        cover=(("Starlight Electronics Holdings Limited", 24), ("1200 Harbour Road, Wan Chai, Hong Kong", 12),
               ("Global Offering Prospectus", 26), ("(Stock code: 1234)", 12), ("Sole Sponsor and Underwriter", 14),
               ("Yangtze Capital Securities Limited", 16), ("8 Finance Street, Central, Hong Kong", 12)),
        notice="If you are in any doubt about any of the contents of this prospectus, you should obtain independent "
               "professional advice. The securities offered have not been registered under any securities laws of "
               "other jurisdictions and may not be offered or sold except in transactions exempt from registration.",
        repeat=("Starlight Electronics Holdings Limited", "Global Offering Prospectus"),
        fields="Number of Offer Shares: 16,000,000 Shares. Nominal value: HK$0.01 per Share. Stock code: 1234.",
        front=("Important Notice", "Expected Timetable"), front_subs=("1. Lock-up Undertakings", "2. Dividends"),
        contents="Table of Contents", glossary="Definitions",
        sections=("Chapter 1 Summary", "Chapter 2 The Global Offering", "Chapter 3 Risk Factors"),
        subs=("1.1 Overview of the Company", "1.2 Key Financial Data"),
        para=LOREM,
    ),
}


def prospectus_pdf(path: str | Path, lang: str = "zh") -> Path:
    """An IPO prospectus as Chinese exchanges print them (``lang="zh"``) or in English: a cover (the issuer,
    its address, the title, the underwriter's label, name and address, a risk notice), the title again on
    page 2 over the offering's fields, the issuer's statement, the important matters (with sub-sections), a
    printed contents listing the numbered sections (and nothing before them) with page numbers, definitions, and three numbered sections
    with sub-sections.  Every page prints its number in the footer."""
    s = _PROSPECTUS[lang]
    font, cjk = s["font"], lang == "zh"
    head = (lambda f: f) if cjk else (lambda f: _BOLD.get(f, f))
    b = PDFBuilder(font=font, footer="{page}")
    b.new_page()
    for k, (t, size) in enumerate(s["cover"]):
        b.text(t, size=size, bold=not cjk and size > 12, gap_before=60 if k in (2, 3) else 8, gap_after=10)
    b.text(s["notice"], size=10, gap_before=40)
    b.new_page()
    for t in s["repeat"]:
        b.text(t, size=16, bold=not cjk, gap_after=8)
    b.para(s["fields"])
    b.para(s["para"])
    for k, t in enumerate(s["front"]):
        b.new_page()
        b.heading(t, size=18, bold=not cjk)
        b.para(s["para"])
        b.para(s["para"])
        if k == 1:
            for sub in s["front_subs"]:
                b.heading(sub, size=14, bold=not cjk)
                b.para(s["para"])
    contents_at = b.doc.page_count  # the contents page goes here, once the sections' pages are known
    b.new_page()
    b.heading(s["glossary"], size=18, bold=not cjk)
    for _ in range(3):
        b.para(s["para"])
    listed = []
    for t in s["sections"]:
        b.new_page()
        b.heading(t, size=18, bold=not cjk)
        listed.append((t, b.doc.page_count + 1))  # + 1: the contents page is inserted before it
        b.para(s["para"])
        for sub in s["subs"]:
            b.heading(sub, size=14, bold=not cjk)
            b.para(s["para"])
            b.para(s["para"])
    page = b.doc.new_page(pno=contents_at, width=b.width, height=b.height)
    page.insert_text((b.margin, b.margin + 18), s["contents"], fontsize=18, fontname=head(font))
    y = b.margin + 40
    right = b.width - b.margin
    for t, pg in listed:
        y += 20
        page.insert_text((b.margin, y), t, fontsize=11, fontname=font)
        lw = pymupdf.get_text_length(str(pg), fontname="helv", fontsize=11)
        tw = len(t) * 11 if cjk else pymupdf.get_text_length(t, fontname=font, fontsize=11)
        dots = " ." * int((right - lw - b.margin - tw - 12) / pymupdf.get_text_length(" .", fontsize=11))
        page.insert_text((b.margin + tw + 4, y), dots, fontsize=11, fontname="helv")
        page.insert_text((right - lw, y), str(pg), fontsize=11, fontname="helv")
    # the footer of the inserted page and of the pages after it: their physical numbers
    for p in range(contents_at, b.doc.page_count):
        b.doc[p].add_redact_annot(pymupdf.Rect(0, b.height - 50, b.width, b.height))
        b.doc[p].apply_redactions()
        t = str(p + 1)
        b.doc[p].insert_text(((b.width - 8) / 2, b.height - 36), t, fontsize=8, fontname="helv")
    return b.save(path)


def ruled_table_report(path: str | Path) -> Path:
    """A report whose second page holds a bold heading over a ruled table: bold column headers, bold row
    labels, figures in right-aligned columns, a rule under every row (the learned heading filter's test)."""
    b = PDFBuilder()
    b.heading("Annual Review", size=18)
    for _ in range(4):
        b.para()
    b.new_page()
    b.heading("Segment Results", size=10)  # bold in body size: a heading by its boldness alone
    b.para()
    b.para()
    page = b.page
    x0, x1 = b.margin, b.width - b.margin
    y = b.y + 8
    cols = (300.0, 380.0, 460.0)
    rows = [("Segment", ("2024", "2023", "Change")), ("Retail Banking", ()), ("Deposits", ("1,204", "1,118", "7.7%")),
            ("Mortgages", ("846", "790", "7.1%")), ("Corporate Lending", ()), ("Term Loans", ("2,015", "1,932", "4.3%")),
            ("Trade Finance", ("512", "498", "2.8%")), ("Group Total", ("4,577", "4,338", "5.5%"))]
    page.draw_line((x0, y - 12), (x1, y - 12), width=1.0)
    for label, figures in rows:
        # the header row and the row groups' names in bold, the rows' own names in body type
        page.insert_text((x0, y), label, fontsize=10, fontname="hebo" if label == "Segment" or not figures else "helv")
        for right, t in zip(cols, figures):
            w = pymupdf.get_text_length(t, fontname="hebo" if label == "Segment" else "helv", fontsize=10)
            page.insert_text((right + 60 - w, y), t, fontsize=10, fontname="hebo" if label == "Segment" else "helv")
        page.draw_line((x0, y + 5), (x1, y + 5), width=0.5)
        y += 20
    b.y = y + 10
    b.para()
    b.heading("Outlook", size=10)
    b.para()
    b.para()
    return b.save(path)
