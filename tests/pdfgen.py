"""Build small, real PDFs with PyMuPDF for the tests.

A :class:`PDFBuilder` lays text out top to bottom with wrapping, so tests can
describe documents as a sequence of headings and paragraphs (one or two
columns, running headers and footers, CJK, rotation) and get a genuine PDF
that structrag reads like any other.
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
) -> Path:
    """A report with a printed table of contents and no outline.

    The body has chapters (16pt bold, "1 Title"), sections (12pt bold, "1.1 Title") and unlisted
    sub-sections (10.5pt bold, "1.1.1 ..."); ``listed_depth`` says how deep the contents goes.
    ``front`` title pages come first (cover, preface...), then the contents (``contents_pages`` pages),
    then the body, whose pages print "1", "2", ... in the footer (``footers``); with ``roman_front`` the
    front pages print "i", "ii" and the contents lists a "Preface" among them.  ``style``:
    ``leaders`` ("Title . . . . 12"), ``columns`` (the number set apart at the right margin),
    ``leading`` ("12  Title").  ``label_shift`` adds to every printed label (labels past the end).
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
    body_start = b.doc.page_count
    for c, (title, sections) in enumerate(chapters, 1):
        b.new_page()
        t = f"{c} {title}" if not cjk else f"第{'一二三四五六七八九十'[c - 1]}节 {title}"
        b.heading(t, size=16, bold=not cjk, font=font)
        entries.append((1, t, b.doc.page_count - 1 - body_start))
        b.para(font=font) if cjk else b.para()
        for s, sec in enumerate(sections, 1):
            t = f"{c}.{s} {sec}" if not cjk else f"{'一二三四五六七八九十'[s - 1]}、{sec}"
            b.heading(t, size=12, bold=not cjk, font=font)
            entries.append((2, t, b.doc.page_count - 1 - body_start))
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
    for k in range(contents_pages):
        page = b.doc.new_page(pno=n_front + k, width=b.width, height=b.height)
        y = b.margin
        if k == 0:
            page.insert_text((b.margin, y + 18), "目 录" if cjk else "Table of Contents", fontsize=18,
                             fontname=bold(font))
            y += 40
        rows = listed[k * per_page:(k + 1) * per_page]
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
