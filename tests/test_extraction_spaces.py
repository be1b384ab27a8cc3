"""Titles whose word spaces are drawn as shifts, with no space character, are read with their spaces."""

from __future__ import annotations

import pymupdf

from structrag import extract
from structrag.pipeline import detect_headings

from pdfgen import LOREM


def _glued_pdf(path, gap_em: float = 0.13):
    doc = pymupdf.open()
    page = doc.new_page()
    y = 90
    for words, size in ((("Our", "findings"), 23), (("Regulated", "activity"), 18), (("Operations",), 23)):
        x = 72
        for w in words:  # one call per word, no space character between: the gap is a shift only
            page.insert_text((x, y), w, fontsize=size, fontname="helv")
            x += pymupdf.get_text_length(w, fontname="helv", fontsize=size) + gap_em * size
        y += 40
        page.insert_textbox(pymupdf.Rect(72, y, 520, y + 90), LOREM, fontsize=11, fontname="helv")
        y += 110
    doc.save(path)
    return path


def test_a_title_set_without_space_characters_gets_its_spaces(tmp_path):
    path = _glued_pdf(tmp_path / "glued.pdf")
    raw = pymupdf.open(path)[0].get_text()
    assert "Ourfindings" in raw and "Regulatedactivity" in raw  # what PyMuPDF alone reads
    texts = [b.text for b in extract(path).blocks]
    assert "Our findings" in texts and "Regulated activity" in texts, texts
    assert "Operations" in texts, texts  # one word at an even spacing is left whole
    titles = [h.text for h in detect_headings(extract(path), outline="ignore")]
    assert "Our findings" in titles, titles


def test_body_text_and_ordinary_spacing_are_untouched(tmp_path):
    path = _glued_pdf(tmp_path / "spaced.pdf", gap_em=0.0)  # letters of two words touching: nothing to see
    texts = [b.text for b in extract(path).blocks]
    assert "Ourfindings" in texts and "Regulatedactivity" in texts, texts
    assert any(t.startswith("The company reports its results") for t in texts)
