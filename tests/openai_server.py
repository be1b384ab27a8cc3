"""The recording OpenAI-compatible server (:mod:`eval.bench.vlm_server`) and :func:`build_report_pdf`,
a PyMuPDF generator of documents with headings at known levels, styled by level, for end-to-end tests."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from eval.bench.vlm_server import (  # noqa: F401 - the tests' names for the server
    DecodedRequest,
    Fault,
    OpenAIServer,
    decode_body,
    estimate_tokens,
    levels_by_title,
    levels_in_order,
)

LEVEL_STYLE = {1: (20.0, True), 2: (15.0, True), 3: (12.0, True), 4: (10.5, True)}
BODY = ("This paragraph is ordinary body text. It is set in a small regular font and runs over a few lines so "
        "that the page looks like a real report with sections and sub-sections.")


def build_report_pdf(path: str | Path, outline: Sequence[tuple[int, str]], *, per_page: int = 3,
                     width: float = 595, height: float = 842) -> list[tuple[int, str, int]]:
    """Write a PDF whose headings are ``outline`` = [(level, title)], styled by level.

    ``per_page`` headings go on a page (a level-1 heading always starts a new
    page).  The PDF's own outline is set to the same entries; returns the
    ``[level, title, page]`` toc (1-based pages, PyMuPDF's shape).
    """
    import pymupdf

    doc = pymupdf.open()
    page = None
    on_page = 0
    y = 0.0
    toc: list[tuple[int, str, int]] = []
    for level, title in outline:
        if page is None or on_page >= per_page or (level == 1 and on_page > 0) or y > height - 200:
            page = doc.new_page(width=width, height=height)
            on_page = 0
            y = 72.0
        size, bold = LEVEL_STYLE.get(level, (10.0, True))
        page.insert_text((72, y + size), title, fontsize=size, fontname="hebo" if bold else "helv")
        toc.append((level, title, doc.page_count))
        y += size + 14
        rect = pymupdf.Rect(72, y, width - 72, y + 60)
        page.insert_textbox(rect, BODY, fontsize=9.5, fontname="helv")
        y += 74
        on_page += 1
    doc.set_toc([list(t) for t in toc])
    doc.save(str(path))
    doc.close()
    return toc
