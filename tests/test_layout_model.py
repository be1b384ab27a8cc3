"""PyMuPDF's layout model as a second opinion on layout-detected headings (``layout_model=True``).

The model itself runs (it ships with PyMuPDF 2): a chart's title inside the picture is left out, the section
headings around it stay.  The rules for reading its regions are checked with regions given by hand: a region
holding running text is the model's misreading, a contents heading is never vetoed.  A file changed since it
was extracted, or an encrypted one without its password, is an error naming the file, never a silent guess.
"""

from __future__ import annotations

from dataclasses import replace

import pymupdf
import pytest

from structrag import extract
from structrag.cli import main
from structrag.errors import InputError
from structrag.headings.layout_model import layout_vetoes
from structrag.pipeline import detect_headings

from pdfgen import LOREM, PDFBuilder


def _report(path, **save_kw):
    """Two sections with a bar chart between them, its title set bold inside the chart."""
    b = PDFBuilder()
    b.new_page()
    b.heading("Results of Operations", size=14)
    b.para(LOREM)
    b.para(LOREM)
    x0, y0 = 72, b.y + 10
    page = b.page
    page.draw_rect(pymupdf.Rect(x0, y0, x0 + 420, y0 + 240), color=(0, 0, 0), width=0.8)
    for i, h in enumerate((60, 120, 90, 160, 130)):
        page.draw_rect(pymupdf.Rect(x0 + 40 + i * 70, y0 + 210 - h, x0 + 80 + i * 70, y0 + 210), color=None,
                       fill=(0.2, 0.4, 0.8))
    for i, label in enumerate(("Retail", "Foodservice", "Pet", "Europe", "Asia")):
        page.insert_text((x0 + 40 + i * 70, y0 + 228), label, fontsize=8, fontname="helv")
    page.insert_text((x0 + 150, y0 + 24), "Net Sales by Segment", fontsize=12, fontname="hebo")
    b.y = y0 + 260
    b.text("Figure 1: Net sales by segment.", size=9, gap_after=10)
    b.heading("Liquidity", size=14)
    b.para(LOREM)
    b.para(LOREM)
    return b.save(path, **save_kw)


def _titles(headings) -> list[str]:
    return [h.text for h in headings]


def test_a_charts_title_inside_the_picture_is_no_heading_with_the_layout_model(tmp_path, capsys):
    doc = extract(_report(tmp_path / "report.pdf"))
    assert "Net Sales by Segment" in _titles(detect_headings(doc, outline="ignore"))  # the rules alone take it
    assert _titles(detect_headings(doc, outline="ignore", layout_model=True)) == ["Results of Operations",
                                                                                   "Liquidity"]
    assert main(["toc", str(tmp_path / "report.pdf"), "--layout-model", "--json"]) == 0
    assert "Net Sales by Segment" not in capsys.readouterr().out


def test_regions_holding_running_text_are_misread_and_contents_headings_stay(tmp_path):
    doc = extract(_report(tmp_path / "report.pdf"))
    heads = detect_headings(doc, outline="ignore")
    chart = _titles(heads).index("Net Sales by Segment")
    box = heads[chart].bbox
    around = (box[0] - 20, box[1] - 20, box[2] + 20, box[3] + 20)
    assert layout_vetoes(doc, heads, {0: [(around, "table")]}) == {chart: "inside a table (layout model)"}
    assert layout_vetoes(doc, heads, {0: [(around, "caption")]}) == {}  # only tables and pictures are evidence
    # a "table" reaching over the paragraphs under the first section is the model's misreading
    page = (0.0, 0.0, 595.0, 842.0)
    assert layout_vetoes(doc, heads, {0: [(page, "table")]}) == {}
    # a heading the printed contents placed is never vetoed
    placed = tuple(replace(h, source="contents") if k == chart else h for k, h in enumerate(heads))
    assert layout_vetoes(doc, placed, {0: [(around, "picture")]}) == {}


def test_a_file_changed_since_extraction_is_an_error_naming_it(tmp_path):
    path = _report(tmp_path / "report.pdf")
    doc = extract(path)
    b = PDFBuilder()
    b.new_page()
    b.heading("Another Document", size=14)
    b.para(LOREM)
    b.save(path)  # the same name, other contents
    with pytest.raises(InputError) as e:
        detect_headings(doc, outline="ignore", layout_model=True)
    assert "report.pdf" in str(e.value) and "changed since it was extracted" in str(e.value)


def test_an_encrypted_pdf_needs_its_password_for_the_layout_model(tmp_path):
    path = _report(tmp_path / "locked.pdf", encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner",
                   user_pw="secret")
    doc = extract(path, password="secret")
    with pytest.raises(InputError) as e:
        detect_headings(doc, outline="ignore", layout_model=True)
    assert "locked.pdf" in str(e.value) and "password" in str(e.value)
    kept = detect_headings(doc, outline="ignore", layout_model=True, password="secret")
    assert _titles(kept) == ["Results of Operations", "Liquidity"]
