"""Detection rules meant to hold on documents nobody tuned for (issue 13), on generated PDFs.

Each test builds a document with one pattern seen in reports from other publishers and checks the
headings that come out, and the reasons they carry.
"""

from __future__ import annotations

import pymupdf

from structrag import extract
from structrag.pipeline import detect_headings
from structrag.numbering import word_number

from pdfgen import LOREM, PDFBuilder


def _texts(path, **kw):
    return [h.text for h in detect_headings(extract(path), outline="ignore", **kw)]


def test_numbered_headings_in_body_type_are_taken_when_the_sequence_runs_through_the_text(tmp_path):
    b = PDFBuilder()
    b.heading("Company Information", size=16)
    for i, title in enumerate(["Key financial data", "Total number of shares", "Dividend policy",
                               "Employees"], 1):
        b.para(f"{i}. {title}", gap_before=8)  # body type: only the number and the place say heading
        b.para()
        b.para()
    path = b.save(tmp_path / "seq.pdf")
    heads = detect_headings(extract(path), outline="ignore")
    got = [h.text for h in heads]
    assert got[0] == "Company Information"
    assert got[1:] == ["1. Key financial data", "2. Total number of shares", "3. Dividend policy", "4. Employees"]
    assert all(any("sequence" in r for r in h.reasons) for h in heads[1:])


def test_a_numbered_list_is_not_a_run_of_headings(tmp_path):
    b = PDFBuilder()
    b.heading("Risk factors", size=16)
    b.para()
    for i, item in enumerate(["Higher interest rates", "Currency movements", "Supplier concentration"], 1):
        b.para(f"{i}. {item}", gap_after=2)  # list items: nothing between them
    b.para()
    path = b.save(tmp_path / "list.pdf")
    assert _texts(path) == ["Risk factors"]


def test_a_number_continuing_a_styled_heading_is_taken_in_body_type(tmp_path):
    b = PDFBuilder()
    b.heading("Shares", size=16)
    for _ in range(6):
        b.para()
    b.para("(1) TOTAL NUMBER OF SHARES", gap_before=8)  # capitals make it a heading on its own
    for _ in range(4):
        b.para()
    b.para("(2) Treasury shares", gap_before=8)  # same type, no capitals: only the number says heading
    for _ in range(4):
        b.para()
    path = b.save(tmp_path / "anchored.pdf")
    heads = detect_headings(extract(path), outline="ignore")
    assert [h.text for h in heads] == ["Shares", "(1) TOTAL NUMBER OF SHARES", "(2) Treasury shares"]
    assert any("continues a numbered heading sequence" in r for r in heads[2].reasons)


def test_two_numbered_headings_in_one_line_box_are_two_headings(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    # one line of text drawn as two spans: the part title in bold, the section title after a gap
    tw = pymupdf.TextWriter(page.rect)
    bold, reg = pymupdf.Font("hebo"), pymupdf.Font("helv")
    tw.append((72, 100), "Part 1. Company Information", font=bold, fontsize=14)
    tw.append((300, 100), "I. Overview of Company", font=bold, fontsize=14)
    y = 140
    for _ in range(6):
        tw.append((72, y), "The company reports its results in this section and in the notes.", font=reg,
                  fontsize=10)
        y += 14
    tw.write_text(page)
    path = tmp_path / "twoinone.pdf"
    doc.save(path)
    got = _texts(path)
    assert "Part 1. Company Information" in got and "I. Overview of Company" in got


def test_company_name_over_statement_titles_is_split_off(tmp_path):
    b = PDFBuilder()
    for title in ("CONSOLIDATED BALANCE SHEETS", "CONSOLIDATED STATEMENTS OF OPERATIONS",
                  "CONSOLIDATED STATEMENTS OF CASH FLOWS", "NOTES TO CONSOLIDATED FINANCIAL STATEMENTS"):
        b.new_page()
        # the company line and the statement title drawn as one block, as statement pages do
        b.text(f"ACME HOLDINGS CORPORATION", bold=True, size=11, gap_after=1)
        b.text(title, bold=True, size=11, gap_after=1)
        b.text("(in millions, except per share amounts)", size=9, gap_after=10)
        b.para()
    path = b.save(tmp_path / "statements.pdf")
    got = _texts(path)
    for title in ("CONSOLIDATED BALANCE SHEETS", "CONSOLIDATED STATEMENTS OF OPERATIONS",
                  "CONSOLIDATED STATEMENTS OF CASH FLOWS"):
        assert title in got, got
    assert not any(t.startswith("ACME HOLDINGS CORPORATION CONSOLIDATED") for t in got)


def test_a_heading_in_capitals_set_in_body_type_is_taken(tmp_path):
    b = PDFBuilder()
    b.heading("Proxy Statement", size=16)
    for _ in range(6):
        b.para()
    b.para("INFORMATION CONCERNING VOTING AND SOLICITATION", gap_before=8)
    for _ in range(6):
        b.para()
    path = b.save(tmp_path / "caps.pdf")
    assert "INFORMATION CONCERNING VOTING AND SOLICITATION" in _texts(path)


def test_a_margin_stamp_does_not_merge_two_columns(tmp_path):
    b = PDFBuilder(footer=None)
    b.new_page()
    b.heading("A Survey of Things", size=16)
    b.set_columns(2)
    b.text("1 Introduction", size=12, bold=True, gap_before=6)
    for _ in range(5):
        b.para()
    b.text("2 Related Work", size=12, bold=True, gap_before=6)
    for _ in range(5):
        b.para()
    # an arXiv-style stamp up the left margin
    b.doc[0].insert_text((30, 600), "arXiv:2401.00001v1 [cs.CL] 1 Jan 2024", fontsize=14, rotate=90)
    path = b.save(tmp_path / "stamp.pdf")
    got = _texts(path)
    assert "1 Introduction" in got and "2 Related Work" in got


def test_word_number_labels():
    assert word_number("Strategic Goal 2").values == (2,)
    assert word_number("Strategy 1.1.1 Improve safety").values == (1, 1, 1)
    assert word_number("Goal 3: Equity").label == "Goal 3"
    for caption in ("Table 3 Revenue by segment", "Figure 2", "December 31, 2022", "In 2022 we"):
        assert word_number(caption) is None


def test_goal_sequence_in_body_type(tmp_path):
    b = PDFBuilder()
    b.heading("Strategic Plan", size=16)
    for g in (1, 2, 3):
        b.para(f"Strategic Goal {g} Safety and mobility", gap_before=8)
        b.para()
        b.para()
    path = b.save(tmp_path / "goals.pdf")
    got = _texts(path)
    assert [t for t in got if t.startswith("Strategic Goal")] == [
        f"Strategic Goal {g} Safety and mobility" for g in (1, 2, 3)]


def test_small_capital_section_titles_smaller_than_the_body_are_taken_as_a_sequence(tmp_path):
    # IEEE-style papers and some reports set "I. INTRODUCTION" in small capitals below the body size
    b = PDFBuilder()
    b.text("Retrieval for Long Reports: A Survey", size=20, bold=True)
    for i, title in enumerate(["INTRODUCTION", "OVERVIEW OF RETRIEVAL", "GENERATION", "CONCLUSION"]):
        b.text(f"{'I II III IV'.split()[i]}. {title}", size=8, gap_before=10)
        b.para()
        b.para()
    path = b.save(tmp_path / "smallcaps.pdf")
    heads = detect_headings(extract(path), outline="ignore")
    assert [h.text for h in heads][1:] == ["I. INTRODUCTION", "II. OVERVIEW OF RETRIEVAL", "III. GENERATION",
                                            "IV. CONCLUSION"]
    assert all(any("sequence" in r for r in h.reasons) for h in heads[1:])


def test_small_numbered_notes_in_lower_case_are_not_headings(tmp_path):
    b = PDFBuilder()
    b.heading("Notes to the accounts", size=16)
    for i in range(1, 5):
        b.para()
        b.text(f"{i}. Amounts restated for the change in policy", size=8, gap_before=4)  # footnotes
    path = b.save(tmp_path / "notes.pdf")
    assert _texts(path) == ["Notes to the accounts"]


def test_only_cased_scripts_count_as_small_capitals():
    from structrag.text import all_capitals as _all_capitals

    assert _all_capitals("II. RELATED WORK")
    assert not _all_capitals("II. Related work")
    assert not _all_capitals("1、本表数据未经审计")  # no case in Chinese: a small numbered line is a note
    assert not _all_capitals("IV. ")
