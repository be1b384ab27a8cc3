"""The pages around a synthetic document's body: a cover, a printed contents page with dotted leaders, and
running headers and footers.  They are drawn once the body's pages are known (the contents page prints
them), and every line drawn is recorded as a non-heading line of its kind.  Used by
:mod:`eval.bench.synthetic_build` after :func:`eval.bench.synthetic_render.layout`.
"""

from __future__ import annotations

import math
import random

from eval.bench.synthetic_render import CONTENTS_TITLES, Rendered, _Body
from eval.bench.synthetic_styles import Style, company

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
KINDS_OF_REPORT = ("Annual Report", "Technical Report", "Guidance Note", "White Paper", "Policy Framework",
                   "Programme Review", "Assessment Report", "Standard", "Handbook", "Briefing")


def _fonts(style: Style):
    import pymupdf

    serif = style.levels[0].font != "sans-serif"
    return pymupdf.Font("tiro" if serif else "helv"), pymupdf.Font("tibo" if serif else "hebo")


def _rgb(hexcol: str) -> tuple[float, float, float]:
    return tuple(int(hexcol[i: i + 2], 16) / 255 for i in (1, 3, 5))


def _wrap(text: str, font, size: float, width: float) -> list[str]:
    lines, cur = [], ""
    for word in text.split():
        trial = f"{cur} {word}".strip()
        if cur and font.text_length(trial, size) > width:
            lines.append(cur)
            cur = word
        else:
            cur = trial
    return lines + ([cur] if cur else [])


class _Pen:
    """Draws lines of text on one page and records each as a non-heading line."""

    def __init__(self, page, page_no: int, lines: list[dict]):
        import pymupdf

        self.page, self.page_no, self.lines, self.pymupdf = page, page_no, lines, pymupdf

    def text(self, x: float, y: float, text: str, font, size: float, colour: str = "#000000",
             kind: str = "", align: str = "left") -> None:
        if not text.strip():
            return
        w = font.text_length(text, size)
        if align == "right":
            x -= w
        elif align == "center":
            x -= w / 2
        tw = self.pymupdf.TextWriter(self.page.rect)
        tw.append((x, y), text, font=font, fontsize=size)
        tw.write_text(self.page, color=_rgb(colour))
        if kind:
            self.lines.append({"text": text, "page": self.page_no, "kind": kind})


def cover(doc, style: Style, rng: random.Random, title: str, lines: list[dict]) -> str:
    """Draw the cover as page 1; the organisation's name (for running lines and signatures)."""
    org, address = company(rng)
    page = doc.new_page(-1, *_size(style))
    pen = _Pen(page, 1, lines)
    regular, bold = _fonts(style)
    w, h = page.rect.width, page.rect.height
    m = style.margin
    pen.text(m, m + 20, org, bold, 13, style.accent, "cover")
    y = h * 0.38
    size = rng.choice((22, 26, 30))
    for ln in _wrap(title, bold, size, w - 2 * m):
        pen.text(m, y, ln, bold, size, style.accent, "cover")
        y += size * 1.2
    pen.text(m, y + 10, rng.choice(KINDS_OF_REPORT), regular, 15, "#333333", "cover")
    year = rng.randint(2012, 2024)
    pen.text(m, y + 34, f"{rng.choice(MONTHS)} {year}", regular, 12, "#333333", "cover")
    if rng.random() < 0.5:
        pen.text(m, y + 52, f"Version {rng.randint(1, 4)}.{rng.randint(0, 9)}", regular, 11, "#333333", "cover")
    y = h - m - 14 * len(address)
    for ln in address:
        pen.text(m, y, ln, regular, 10, "#333333", "cover")
        y += 14
    return org


def _size(style: Style) -> tuple[float, float]:
    import pymupdf

    r = pymupdf.paper_rect(style.page)
    return r.width, r.height


def contents_pages(style: Style, entries: list[tuple[int, str]]) -> int:
    """How many pages the printed contents takes for ``entries`` (levels 1-2)."""
    if not style.contents or not entries:
        return 0
    _, h = _size(style)
    per_page = int((h - 2 * style.margin - 50) // (style.body_size * 1.9))
    return math.ceil(len(entries) / per_page)


def draw_contents(doc, style: Style, rng: random.Random, entries: list[tuple[int, str, int]], first: int,
                  lines: list[dict]) -> None:
    """The printed contents (levels 1-2 with dotted leaders and printed page numbers) from page ``first``."""
    regular, bold = _fonts(style)
    w, h = _size(style)
    m = style.margin
    size = style.body_size + 0.5
    step = style.body_size * 1.9
    per_page = int((h - 2 * m - 50) // step)
    title = rng.choice(CONTENTS_TITLES)
    for k in range(0, len(entries), per_page):
        page = doc.new_page(-1, w, h)
        pen = _Pen(page, first + k // per_page, lines)
        y = m + 30
        if k == 0:
            pen.text(m, y, title, bold, style.levels[0].size, style.accent, "contents")
        y += 40
        for lv, text, printed in entries[k: k + per_page]:
            font = bold if lv == 1 else regular
            x = m + (lv - 1) * 16
            num = str(printed)
            room = w - m - x - font.text_length(num, size) - 24
            words = text.split()
            while len(words) > 1 and font.text_length(" ".join(words), size) > room:
                words.pop()
            shown = " ".join(words)
            pen.text(x, y, shown, font, size, "#000000", "contents")
            dots_from = x + font.text_length(shown, size) + 6
            dots_to = w - m - font.text_length(num, size) - 6
            n = max(0, int((dots_to - dots_from) / regular.text_length(" .", size)))
            if n:
                pen.text(dots_to, y, " ." * n, regular, size, "#777777", align="right")
            pen.text(w - m, y, num, font, size, "#000000", "contents", align="right")
            y += step


def running(doc, style: Style, front: int, org: str, title: str, heads: list[tuple[int, str, int]],
            lines: list[dict]) -> None:
    """Running headers (organisation or title, and the current level-1 section on the pages after the one
    that opens it) and footers with printed page numbers, on every body page."""
    regular, bold = _fonts(style)
    w, h = _size(style)
    m = style.margin
    size = max(7.0, style.body_size - 1.5)
    total = len(doc) - (front if style.body_numbers else 0)
    left = org if len(title) > 60 else title
    for p in range(front + 1, len(doc) + 1):
        page = doc[p - 1]
        page.wrap_contents()  # the body's content stream flips the y axis and leaves it flipped
        pen = _Pen(page, p, lines)
        if style.header:
            opened = [t for lv, t, q in heads if lv == 1 and q <= p]
            here = any(lv == 1 and q == p for lv, _, q in heads)
            pen.text(m, m - 8, left, regular, size, "#666666", "running")
            if opened and not here:
                pen.text(w - m, m - 8, opened[-1][:70], regular, size, "#666666", "running", align="right")
        if style.footer:
            n = p - front if style.body_numbers else p
            pen.text(w / 2 if style.footer.startswith(("-", "{n}")) else w - m, h - m / 2,
                     style.footer.format(n=n, org=org, total=total), regular, size, "#444444", "running",
                     align="center" if style.footer.startswith(("-", "{n}")) else "right")


def assemble(body_pdf: bytes, where: dict[str, int], body: _Body, style: Style, rng: random.Random,
             title: str) -> Rendered:
    """The whole document: cover, contents, the body with its running lines; labels and negatives with
    their final pages."""
    import pymupdf

    lines: list[dict] = []
    doc = pymupdf.open()
    org = cover(doc, style, rng, title, lines) if style.cover else company(rng)[0]
    level12 = [(lv, t) for lv, t in body.heads if lv <= 2]
    n_contents = contents_pages(style, level12)
    front = len(doc) + n_contents
    heads = [(lv, t, where[f"h{i}"] + front) for i, (lv, t) in enumerate(body.heads) if f"h{i}" in where]
    if n_contents:
        printed = [(lv, t, q - front if style.body_numbers else q) for lv, t, q in heads if lv <= 2]
        draw_contents(doc, style, rng, printed, len(doc) + 1, lines)
    with pymupdf.open("pdf", body_pdf) as bdoc:
        doc.insert_pdf(bdoc)
    running(doc, style, front, org, title, heads, lines)
    for j, (text, kind) in enumerate(body.negs):
        if f"n{j}" in where and f"n{j}" not in body.dropped and text.strip():
            lines.append({"text": text, "page": where[f"n{j}"] + front, "kind": kind})
    lines.sort(key=lambda x: x["page"])
    doc.set_metadata({"title": title, "author": org, "producer": "structrag synthetic corpus",
                      "creator": "", "creationDate": "", "modDate": ""})
    pdf = doc.tobytes(garbage=3, deflate=True, no_new_id=True)
    pages = len(doc)
    doc.close()
    return Rendered(pdf=pdf, toc=tuple(heads), lines=tuple(lines), pages=pages)
