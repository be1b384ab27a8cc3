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
