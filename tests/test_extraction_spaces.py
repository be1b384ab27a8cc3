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


def _shadowed_pdf(path, pieces, shift: float = 0.9):
    """A title drawn twice, the second copy ``shift`` points to the right, as overlapping ``pieces``
    (start, text), as a shadow effect prints it; then body text."""
    doc = pymupdf.open()
    page = doc.new_page()
    size = 30
    for dx in (0.0, shift):
        for start, text in pieces:
            x = 72 + dx + pymupdf.get_text_length(start, fontname="helv", fontsize=size)
            page.insert_text((x, 100), text, fontsize=size, fontname="helv")
    page.insert_textbox(pymupdf.Rect(72, 140, 520, 300), LOREM, fontsize=11, fontname="helv")
    doc.save(path)
    return path


def test_a_title_drawn_over_itself_is_read_once(tmp_path):
    title = "The Limes Residential Home"
    # overlapping pieces, the way the CQC inspection reports' titles come out of PyMuPDF
    path = _shadowed_pdf(tmp_path / "shadow.pdf", [("", "The Limes"), ("The ", "Limes Residential"),
                                                   ("The Limes R", "esidential Home")])
    texts = [b.text for b in extract(path).blocks]
    assert title in texts, texts
    assert not any("Limes Limes" in t or "The The" in t for t in texts), texts
    assert title in [h.text for h in detect_headings(extract(path), outline="ignore")]


def test_repeated_words_side_by_side_are_kept(tmp_path):
    # the same word twice in a row, not overlapping (a table row, a stutter in the source): both stay
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 100), "Total", fontsize=12, fontname="helv")
    page.insert_text((72 + pymupdf.get_text_length("Total ", fontname="helv", fontsize=12), 100), "Total",
                     fontsize=12, fontname="helv")
    doc.save(tmp_path / "twice.pdf")
    texts = [b.text for b in extract(tmp_path / "twice.pdf").blocks]
    assert any("Total Total" in t for t in texts), texts
