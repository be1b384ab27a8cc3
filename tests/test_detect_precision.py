"""Heading precision (issue 23, items 3-4): whole headings, and lines that only look like headings.

Each test builds a small PDF whose real headings must stay and whose table labels, signature lines,
closings, cover lines and wrapped title fragments must not become headings of their own.
"""

from __future__ import annotations

import pytest

from structrag import extract
from structrag.headings import merge_headings
from structrag.headings.outline import heading_from_block
from structrag.pipeline import detect_headings
from structrag.text import clean_heading

from pdfgen import LOREM, PDFBuilder
from pdfgen import page_blocks as _blocks


def _titles(path, **kw) -> list[str]:
    doc = extract(path)
    return [h.text for h in detect_headings(doc, outline="ignore", **kw)]


def test_clean_heading_drops_soft_hyphens_and_control_characters():
    assert clean_heading("Risk Manage\u00ad ment") == "Risk Management"
    assert clean_heading("Sustain\u00adability\tReport\x07") == "Sustainability Report"
    assert clean_heading("  Outlook \n 2024 ") == "Outlook 2024"


def test_heading_text_has_no_soft_hyphen_on_the_contents_and_layout_paths(tmp_path):
    b = PDFBuilder()
    b.heading("Corporate Governance")
    b.para()
    pdf = b.save(tmp_path / "soft.pdf")
    doc = extract(pdf)
    i = next(k for k, x in enumerate(doc.blocks) if x.text.startswith("Corporate"))
    # a title as a contents entry or an outline gives it (soft hyphen where the word may break)
    h = heading_from_block(doc, i, i, text="Corpo\u00adrate Gover\u00ad nance", source="contents")
    assert h.text == "Corporate Governance"


def test_wrapped_certification_title_is_one_heading(tmp_path):
    b = PDFBuilder()
    b.heading("Exhibit 31.1", size=12)
    b.para("Filed with the annual report.")
    for line in ("CERTIFICATION OF CHIEF EXECUTIVE OFFICER PURSUANT TO",
                 "SECURITIES EXCHANGE ACT OF 1934 RULES 13a-14(a) AND 15d-14(a),",
                 "AS ADOPTED PURSUANT TO",
                 "SECTION 302 OF THE SARBANES-OXLEY ACT OF 2002"):
        b.text(line, size=12, bold=True, gap_after=2)
    b.para(gap_before=8)
    b.para()
    titles = _titles(b.save(tmp_path / "cert.pdf"))
    assert "SECTION 302 OF THE SARBANES-OXLEY ACT OF 2002" not in titles
    assert "AS ADOPTED PURSUANT TO" not in titles
    whole = [t for t in titles if t.startswith("CERTIFICATION")]
    assert whole and whole[0].endswith("SECTION 302 OF THE SARBANES-OXLEY ACT OF 2002"), titles


def test_title_cut_at_its_line_end_takes_its_lower_case_rest(tmp_path):
    b = PDFBuilder()
    # set in bold body type, the lower-case rest scores below the bar on its own
    b.heading("Impairment of intangible assets and property, plant and", size=10, gap_after=0)
    b.text("equipment", size=10, bold=True)
    b.para()
    b.heading("Income taxes", size=10)
    b.para()
    titles = _titles(b.save(tmp_path / "cut.pdf"))
    assert "Impairment of intangible assets and property, plant and equipment" in titles, titles
    assert "Income taxes" in titles


def test_contents_title_takes_its_wrapped_second_line(tmp_path):
    b = PDFBuilder()
    b.text("CERTIFICATION PURSUANT TO", size=12, bold=True, gap_after=2)
    b.text("SECTION 906 OF THE SARBANES-OXLEY ACT OF 2002", size=12, bold=True)
    b.para()
    doc = extract(b.save(tmp_path / "contents_wrap.pdf"))
    first = next(k for k, x in enumerate(doc.blocks) if x.text.startswith("CERTIFICATION"))
    second = next(k for k, x in enumerate(doc.blocks) if x.text.startswith("SECTION 906"))
    assert second == first + 1
    title = "Certification pursuant to Section 906 of the Sarbanes-Oxley Act of 2002"
    located = heading_from_block(doc, first, first, text=title, source="contents")
    rest = heading_from_block(doc, second, second)
    merged = merge_headings([located], [rest], doc)
    assert [h.text for h in merged] == [title]
    assert merged[0].block_end == second + 1
    # a sub-heading that repeats the end of a title printed whole above it stays a heading of its own
    full = heading_from_block(doc, first, second, text="Certification pursuant to Section 906 of the "
                              "Sarbanes-Oxley Act of 2002", source="contents")
    assert len(merge_headings([full], [], doc)) == 1


def test_signatures_and_closings_are_no_headings(tmp_path):
    b = PDFBuilder()
    b.heading("Letter to Shareholders")
    b.para()
    b.para()
    b.text("Sincerely,", size=12, bold=True, gap_before=10)
    b.text("Jane A. Whitfield", size=12, bold=True, gap_after=0)
    b.text("Chief Executive Officer", size=12, bold=True, gap_before=8)
    b.para(gap_before=12)
    b.heading("Board of Directors")
    b.para()
    b.text("/s/ Robert T. Chen", size=11, bold=True)
    b.para()
    titles = _titles(b.save(tmp_path / "letter.pdf"))
    assert "Letter to Shareholders" in titles and "Board of Directors" in titles
    for t in ("Sincerely,", "Jane A. Whitfield", "Chief Executive Officer", "/s/ Robert T. Chen"):
        assert t not in titles, titles


def test_table_labels_column_headers_and_units_are_no_headings(tmp_path):
    b = PDFBuilder()
    b.heading("Financial Review")
    b.para()
    b.heading("Consolidated Balance Sheets", size=12)
    b.text("(In millions)", size=10, bold=True, gap_after=2)
    b.row([(300, "2023"), (380, "2022")], bold=True)
    b.text("Current assets", bold=True, gap_after=2)
    b.row([(0, "Cash and cash equivalents"), (300, "$ 1,234"), (380, "$ 1,100")])
    b.row([(0, "Receivables, net"), (300, "567"), (380, "512")])
    b.text("Current liabilities", bold=True, gap_after=2)
    b.row([(0, "Accounts payable"), (300, "$ 890"), (380, "$ 845")])
    b.row([(0, "Accrued liabilities"), (300, "321"), (380, "298")], gap_after=10)
    b.text("Three Months Ended", bold=True)
    b.text("Total $ \u2014 $ \u2014", bold=True)
    b.para()
    b.heading("Outlook", size=12)
    b.para()
    titles = _titles(b.save(tmp_path / "table.pdf"))
    assert {"Financial Review", "Consolidated Balance Sheets", "Outlook"} <= set(titles), titles
    for t in ("(In millions)", "Current assets", "Current liabilities", "Three Months Ended", "Total $ \u2014 $ \u2014"):
        assert t not in titles, titles


def test_a_title_over_a_table_after_another_table_stays(tmp_path):
    b = PDFBuilder()
    b.heading("Debt", size=12)
    b.para()
    b.row([(0, "Notes due 2026"), (300, "$ 4,480"), (380, "$ 4,664")])
    b.row([(0, "Notes due 2030"), (300, "1,250"), (380, "1,300")], gap_after=14)
    b.heading("Repayments and Redemptions", size=10)
    b.row([(0, "Notes due 2022"), (300, "$ 713"), (380, "$ 730")])
    b.row([(0, "Notes due 2023"), (300, "794"), (380, "819")])
    b.para(gap_before=10)
    titles = _titles(b.save(tmp_path / "tables.pdf"))
    assert "Repayments and Redemptions" in titles, titles


def test_words_spread_across_a_line_and_cover_lines_are_no_headings(tmp_path):
    b = PDFBuilder()
    b.heading("UNITED STATES SECURITIES AND EXCHANGE COMMISSION", size=14)
    b.text("Washington, D.C. 20549", size=11, bold=True, gap_after=12)
    b.heading("FORM 10-K", size=16)
    b.heading("ACME INDUSTRIES, INC.", size=13)
    b.new_page()
    b.heading("Results of Operations", size=12)
    b.para()
    b.row([(0, "EBITDA"), (150, "TOTAL"), (300, "GROSS MARGIN")], bold=True)  # chart labels read as one line
    b.para()
    titles = _titles(b.save(tmp_path / "cover.pdf"))
    assert "Results of Operations" in titles, titles
    # the registrant's name is the SEC cover page's, not a section's: the document is the tree's root
    for t in ("UNITED STATES SECURITIES AND EXCHANGE COMMISSION", "Washington, D.C. 20549", "FORM 10-K",
              "ACME INDUSTRIES, INC."):
        assert t not in titles, titles
    assert not any(t.startswith("EBITDA") for t in titles), titles


def test_sec_cover_bound_inside_a_report_and_front_and_back_covers_hold_no_heading(tmp_path):
    b = PDFBuilder(footer=None)
    b.heading("Annual Report", size=36)  # a front cover: the title, a tagline, nothing to read
    b.text("Building what matters", size=18, bold=True)
    b.new_page()
    b.heading("Contents", size=18)
    b.para("Letter to Shareholders 3")
    b.new_page()
    b.heading("Letter to Shareholders", size=18)
    b.para(LOREM)
    b.new_page()  # the 10-K's cover, bound after the letter
    b.text("UNITED STATES", size=12, bold=True, gap_after=2)
    b.text("SECURITIES AND EXCHANGE COMMISSION", size=12, bold=True, gap_after=2)
    b.text("Washington, D.C. 20549", size=10, gap_after=10)
    b.heading("FORM 10-K", size=16)
    b.heading("ACME Industries", size=20)
    b.heading("OR", size=10)
    b.para("Commission file number 1-2345. Indicate by check mark whether the registrant is a well-known "
           "seasoned issuer.")
    topics = ("Business", "Risk Factors", "Properties", "Legal Proceedings", "Market for Equity", "Selected Data",
              "Liquidity", "Capital Resources", "Market Risk", "Financial Statements", "Controls", "Governance",
              "Compensation", "Ownership", "Relationships", "Accountant Fees", "Exhibits", "Form Summary")
    for k, topic in enumerate(topics, 1):
        b.new_page()
        if k % 2:  # not at one place on every page, or it reads as a running header
            b.para(LOREM)
        b.heading(f"Item {k}. {topic}", size=14)
        b.para(LOREM)
    b.new_page()  # a back cover: the imprint
    b.heading("CONTACT", size=14)
    b.text("ACME Industries, 1 Main Street", size=10)
    b.text("TSX: ACME", size=12, bold=True)
    titles = _titles(b.save(tmp_path / "covers.pdf"))
    assert "Letter to Shareholders" in titles and "Item 1. Business" in titles, titles
    assert "Item 18. Form Summary" in titles, titles
    for t in ("Annual Report", "Building what matters", "ACME Industries", "OR", "CONTACT", "TSX: ACME"):
        assert t not in titles, titles


def test_a_sparse_first_page_of_a_short_document_keeps_its_heading(tmp_path):
    b = PDFBuilder()
    b.heading("Service Bulletin", size=24)  # a five-page document: its first page is not a cover
    b.new_page()
    b.heading("Scope", size=14)
    b.para(LOREM)
    titles = _titles(b.save(tmp_path / "short.pdf"))
    assert "Service Bulletin" in titles and "Scope" in titles, titles


def test_real_short_headings_between_paragraphs_stay(tmp_path):
    b = PDFBuilder()
    for t in ("Marketing", "Strategy", "Market Risk", "Exchange Offers"):
        b.heading(t, size=10)
        b.para(LOREM)
    titles = _titles(b.save(tmp_path / "short.pdf"))
    assert titles == ["Marketing", "Strategy", "Market Risk", "Exchange Offers"]


def test_continued_repeat_of_a_title_is_no_new_heading(tmp_path):
    b = PDFBuilder()
    b.heading("Notes to the Financial Statements", size=12)
    b.para()
    b.new_page()
    b.heading("Notes to the Financial Statements (continued)", size=12)
    b.para()
    b.heading("Discontinued Operations", size=12)
    b.para()
    titles = _titles(b.save(tmp_path / "continued.pdf"))
    assert titles == ["Notes to the Financial Statements", "Discontinued Operations"], titles


def test_a_running_title_over_its_continuation_pages_is_one_heading(tmp_path):
    # each section's title, and its first sub-section's under it, printed again at the top of its next page
    b = PDFBuilder(margin=120)  # the titles below the band where running headers live
    for title, sub in (("Summary of findings", "Is the service safe?"), ("Detailed findings", "Our findings"),
                       ("Enforcement actions", "Regulated activity")):
        for page in range(2):
            b.new_page()  # every page alike: the titles sit at one place on each
            b.heading(title, size=14)
            b.heading(sub, size=12)
            b.para()
            if title == "Detailed findings":
                b.para()
                if page:
                    b.para()
                b.heading("Conclusion", size=12)  # on the next page too, but lower: a heading of its own
                b.para()
    titles = _titles(b.save(tmp_path / "running.pdf"))
    assert titles == ["Summary of findings", "Is the service safe?", "Detailed findings", "Our findings", "Conclusion",
                      "Conclusion", "Enforcement actions", "Regulated activity"], titles


def test_plan_clauses_with_a_hanging_indent_are_not_headings(tmp_path):
    # a plan document's clauses: "(a) Label: sentence ..." whose first line stands indented on its own and
    # whose sentence goes on, in lower case, on the lines below; a numbered run of real titles stays
    b = PDFBuilder()
    b.heading("Article IV Benefits", size=14)
    b.para()
    clauses = [("(a) Civil Union: If on the applicable date the Participant has entered", "into a civil union that is "
                "valid on that date, the union is treated as a marriage for every purpose of this Article."),
               ("(b) Lump Sums: To determine the lump sum value of a Pension, a Pre-Retirement", "spouse's pension is "
                "converted with the factors the Plan Administrator publishes for the year of payment."),
               ("(c) Other Cases: To determine the adjustment to be made in the Pension payable", "to or on behalf of "
                "a Participant in other cases, the factors are those applied to lump sums above."),
               ("(d) Exhaustion: The exhaustion requirement of this Section shall apply regardless", "of whether other "
                "claims are pending and whatever the court or tribunal that would hear the claim.")]
    for first, rest in clauses:  # double-spaced, as such plans are printed: the first line is a block alone
        b.text(first, indent=60, gap_after=12)
        b.text(rest, gap_after=14)
    b.heading("Article V Payments", size=14)
    for t in ("(1) Eligibility", "(2) Amount of the Payment", "(3) Timing"):
        b.text(t, gap_before=4, gap_after=4)
        b.para()
    titles = _titles(b.save(tmp_path / "plan.pdf"))
    assert not [t for t in titles if t.startswith(("(a)", "(b)", "(c)", "(d)"))], titles
    assert {"(1) Eligibility", "(2) Amount of the Payment", "(3) Timing"} <= set(titles), titles


def test_row_group_labels_on_their_rows_are_no_headings_but_a_larger_title_stays(tmp_path):
    # a label set right on top of its rows, in their type, names the rows (a pension table's row groups);
    # a statement title set larger than its table is the statement's heading even when the rows touch it
    b = PDFBuilder()
    b.heading("Pension Benefits", size=12)
    for _ in range(4):
        b.para()
    b.para("The following table presents the change in the benefit obligation and in the plan assets.")
    # a loose gap above each label (not the rows' spacing): the rule for labels stacked between rows
    # does not apply, only the rows touching the label below it say what it is
    for group, rows in (("Change in benefit obligation", ("Benefit obligation at beginning of year", "Service cost")),
                        ("Change in plan assets", ("Fair value of plan assets at beginning of year", "Employer"
                                                   " contributions"))):
        b.text(group, bold=True, gap_before=12, gap_after=0.5)
        b.row([(0, rows[0]), (300, "$ 4,075"), (380, "$ 4,203")])
        b.row([(0, rows[1]), (300, "61"), (380, "72")])
    b.para(gap_before=10)
    b.text("Income statement of the Group", size=14, bold=True, gap_before=14, gap_after=1)
    b.row([(0, "Sales"), (300, "$ 1,904"), (380, "$ 1,066")])
    b.row([(0, "Cost of sales"), (300, "(1,401)"), (380, "(823)")])
    b.para(gap_before=10)
    titles = _titles(b.save(tmp_path / "pension.pdf"))
    assert "Pension Benefits" in titles and "Income statement of the Group" in titles, titles
    assert "Change in benefit obligation" not in titles and "Change in plan assets" not in titles, titles


def test_row_groups_one_blank_row_inside_a_table_are_no_headings(tmp_path):
    # "Liabilities and Equity" between the assets' rows and the liabilities' rows of a balance sheet, one
    # blank row of the table's own pitch above and below it: a row group, not a section
    b = PDFBuilder()
    b.heading("Consolidated Balance Sheets", size=12)
    b.row([(300, "2023"), (380, "2022")], bold=True)
    rows = [("Cash and cash equivalents", "$ 2,148", "$ 2,672"), ("Trade accounts receivable", "1,208", "1,172"),
            ("Inventories", "2,481", "2,438"), ("Total assets", "$ 30,154", "$ 30,775")]
    for i, (label, a, c) in enumerate(rows):
        b.row([(0, label), (300, a), (380, c)], gap_after=2 if i < len(rows) - 1 else 0)
    b.text("Liabilities and Equity", bold=True, gap_before=16.5, gap_after=16.5)
    rows = [("Current portion of long-term debt", "$ 224", "$ 156"), ("Accounts payable", "1,804", "1,174"),
            ("Other accrued liabilities", "2,437", "2,138"), ("Total liabilities", "$ 17,071", "$ 17,142")]
    for label, a, c in rows:
        b.row([(0, label), (300, a), (380, c)])
    b.para(gap_before=10)
    b.heading("Outlook", size=12)
    b.para()
    titles = _titles(b.save(tmp_path / "balance.pdf"))
    assert "Consolidated Balance Sheets" in titles and "Outlook" in titles, titles
    assert "Liabilities and Equity" not in titles, titles


def test_a_label_on_a_table_blocks_rows_is_a_cell():
    # the geometry of a 10-K lease table: the bold total's label came out as its own block, lying on the
    # last row of the table block that holds its figures; the section title above the table does not
    from structrag.headings.not_headings import page_reasons
    from structrag.model import Block

    rows = "\n".join(f"Lease cost {i} $ {4000 + i:,} $ {4100 + i:,} $ {4200 + i:,}" for i in range(8))

    def block(i, bbox, text, lines, bold=False):
        return Block(index=i, page=73, bbox=bbox, text=text, font="Helvetica", size=9.0, bold=bold,
                     italic=False, color=0, line_count=lines)

    blocks = [block(0, (43, 150, 92, 160), "Lease Costs", 1, bold=True),
              block(1, (43, 177, 555, 268), rows, 8),
              block(2, (43, 260, 127, 270), "Total net lease cost", 1, bold=True),
              block(3, (40, 273, 556, 338), "(1) All operating lease costs are included.\n" * 5, 5)]
    reasons = page_reasons(blocks, {0, 2})
    assert reasons.get(2) == "on a table's rows", reasons
    assert 0 not in reasons, reasons


def _report_in_small_type(b: PDFBuilder, pages: int = 3) -> None:
    """A few pages of a report whose body is 9 pt with bold 12 pt section titles."""
    for k in range(pages):
        if k % 2:  # not at one place on every page, or it reads as a running header
            b.para(LOREM, size=9)
        b.heading(f"Section {k + 1} Review", size=12)
        for _ in range(6):
            b.para(LOREM, size=9)
        b.new_page()


def test_an_exhibit_letter_set_larger_than_the_report_holds_no_headings(tmp_path):
    b = PDFBuilder(body_size=9)
    b.new_page()
    _report_in_small_type(b)
    # an exhibit letter printed in 11 pt: larger than the report's body, but the body of its own page
    b.text("October 23, 2017", size=11)
    b.text("Mr. James Dinkins", size=11, gap_after=0)
    b.text("Atlanta, Georgia", size=11, gap_after=12)
    b.text("Name of Recipient: Francisco Crespo", size=11, gap_after=12)
    b.heading("TERMS AND CONDITIONS", size=11)  # bold on a page set in regular type: still a title
    for _ in range(4):
        b.para(LOREM, size=11)
    b.text("Sincerely,", size=11)
    titles = _titles(b.save(tmp_path / "exhibit.pdf"))
    assert "Section 2 Review" in titles and "TERMS AND CONDITIONS" in titles, titles
    for t in ("Dinkins", "Atlanta", "Recipient", "October"):
        assert not any(t in x for x in titles), titles


def test_a_numbered_list_is_no_run_of_headings_but_numbered_sections_stay(tmp_path):
    b = PDFBuilder(body_size=9)
    b.new_page()
    _report_in_small_type(b, pages=2)
    b.heading("CONSENT OF INDEPENDENT AUDITORS", size=12)
    b.para("We consent to the incorporation by reference in the following registration statements:", size=9)
    for k in range(1, 6):  # the items follow each other: a list
        b.text(f"{k}. Registration Statement Number 333-{7000 + k} on Form S-8", size=11, gap_after=4)
    b.para(LOREM, size=9)
    b.new_page()
    for k, t in enumerate(("Eligibility", "Contributions", "Distributions"), 1):  # sections between: headings
        b.text(f"{k}. {t}", size=11)
        b.para(LOREM, size=9)
    for c, t in (("E", "Distributions At Age 70"), ("F", "Specified Employees"), ("G", "Death Benefits")):
        b.text(f"({c}) {t}", size=11)  # a plan's sub-headings, each over one sentence
        b.text("See Section 6.1 of the Plan.", size=9)
    titles = _titles(b.save(tmp_path / "lists.pdf"))
    assert not any(t.startswith(tuple(f"{k}. Registration" for k in range(1, 6))) for t in titles), titles
    for t in ("1. Eligibility", "2. Contributions", "3. Distributions", "(E) Distributions At Age 70",
              "(F) Specified Employees", "(G) Death Benefits"):
        assert t in titles, titles


def test_a_caption_right_on_top_of_a_grid_is_no_heading_but_a_title_over_text_stays():
    from structrag.headings.detect import _row_neighbours
    from structrag.headings.not_headings import page_reasons

    # the geometry of an agency plan's indicator tables: the indicator's name sits on its table's header
    # row, no space between; the first column's cells read into the header's block, the others side by side
    kpi = _blocks([((108, 99, 209, 113), "Performance Indicators", 10.0, True),
                   ((120, 116, 272, 130), "KPI 4.1.1 Transportation Emissions", 10.0, True),
                   ((123, 133, 546, 203), "Description Type Status Start Date End Date Net Emissions\nReduce\n"
                    "transportation\nemissions to\nnet zero\nby\n2050.", 9.0, False),
                   ((225, 147, 251, 160), "Target", 10.0, False), ((224, 162, 251, 175), "Actual", 10.0, False),
                   ((290, 147, 470, 175), "Net Zero 2049-12-31\n2049-12-31", 10.0, False),
                   ((514, 147, 520, 160), "0", 10.0, False),
                   ((120, 212, 215, 226), "KPI 4.1.2 Bus Vehicles", 10.0, True),
                   ((139, 229, 533, 241), "Description Type Status Start Date End Date Number", 9.0, False),
                   ((123, 242, 197, 299), "Increase the\nnumber of\nzero-emission\nbuses", 9.0, False),
                   ((225, 243, 251, 256), "Target", 10.0, False), ((224, 258, 251, 271), "Actual", 10.0, False),
                   ((286, 243, 470, 256), "Target Met 2029-12-31", 10.0, False)])
    side = _row_neighbours(kpi)
    reasons = page_reasons(kpi, {0, 1, 7}, side)
    assert reasons.get(1) == reasons.get(7) == "captions the table right under it", reasons
    assert 0 not in reasons, reasons  # the title over the indicators has its own space under it
    # an auditor's critical matter: its title set as tightly over a grid whose cells are paragraphs
    cam = _blocks([((135, 53, 420, 64), "Goodwill Impairment Evaluation of the Reporting Unit", 10.0, True),
                   ((52, 66, 116, 89), "Description of\nthe Matter", 10.0, False),
                   ((135, 66, 557, 149), "The Company's goodwill balance was $1,061 million at December 31,\n" * 6
                    + "which was allocated to the reporting unit.", 10.0, False),
                   ((135, 162, 562, 233), "Auditing the Company's measurement of the fair value of the unit\n" * 6,
                    10.0, False)], page=120)
    assert page_reasons(cam, {0}, _row_neighbours(cam)) == {}
    # a glossary's title over its two columns, and a sentence beside a figure's labels, head text
    glossary = _blocks([((52, 45, 186, 59), "LINE OF BUSINESS METRICS", 12.0, False),
                        ((50, 64, 235, 76), "CONSUMER & COMMUNITY BANKING", 10.0, True),
                        ((320, 64, 494, 76), "CORPORATE & INVESTMENT BANK", 10.0, True),
                        ((50, 82, 289, 94), "Debit and credit card sales volume: Dollar amount of card", 10.0, True),
                        ((50, 94, 189, 106), "member purchases, net of returns.", 10.0, False)])
    assert page_reasons(glossary, {0}, _row_neighbours(glossary)) == {}
    figure = _blocks([((93, 538, 208, 551), "The dispenser light", 11.0, False),
                      ((93, 553, 262, 564), "To turn on night light, slide dispenser", 9.5, False),
                      ((362, 556, 405, 563), "ON OFF", 5.0, False),
                      ((94, 565, 277, 599), "LIGHT switch to the left. See page 20 for\ndirections for changing "
                       "the\ndispenser light bulb.", 9.5, False)])
    assert page_reasons(figure, {0}, _row_neighbours(figure)) == {}


def test_indicator_captions_of_a_shared_agency_plan_are_no_headings(shared_data):
    titles = _titles(shared_data / "headings" / "US_DOT_2022_agency_plan.pdf")
    # 50 indicator captions were headings; one stays, its header row wrapped into the first column's cells
    kpis = [t for t in titles if t.startswith("KPI ")]
    assert len(kpis) <= 1, kpis
    assert "Administrative Information" in titles
    assert not [t for t in titles if t.startswith(("Publication Date:", "Start Date:", "Given Name:"))]
    assert sum(t.startswith("Strategy ") for t in titles) >= 30  # the plan's own sections stay


def test_stacked_form_fields_are_no_headings_but_run_in_titles_between_text_stay(tmp_path):
    b = PDFBuilder()
    b.heading("Goal 1: Safety", size=12)
    b.para()
    b.heading("Goal 2: Economic Strength", size=12)
    b.para()
    b.heading("Administrative Information", size=14)
    # a plan's metadata as a form prints it: each field its own line, bold and plain by turns
    for k, field in enumerate(("Start Date: 2021-10-01", "End Date: 2026-09-30", "Publication Date: 2022-04-24",
                               "Source: www.example.gov/plan.pdf", "Given Name: Owen", "Surname: Smith")):
        b.text(field, size=10, bold=not k % 2, gap_after=0)
    b.para(gap_before=10)
    titles = _titles(b.save(tmp_path / "form.pdf"))
    assert {"Goal 1: Safety", "Goal 2: Economic Strength", "Administrative Information"} <= set(titles), titles
    assert not [t for t in titles if "Date:" in t or "Name:" in t], titles


def test_a_bold_sentence_subject_on_its_own_line_is_no_heading():
    from structrag.headings.not_headings import page_reasons

    # the geometry of a 10-Q's balance sheet analysis: each paragraph opens on its subject in bold, on a
    # line of its own, and goes on in lower case right under it
    blocks = _blocks([((320, 43, 538, 55), "Accrued interest and accounts receivable decreased", 10.0, True),
                      ((320, 55, 557, 130), "primarily due to lower client receivables related to client-\n"
                       "driven activities in Markets.\n" * 3, 10.0, False),
                      ((320, 133, 543, 145), "Goodwill, MSRs and other intangible assets increased", 10.0, True),
                      ((320, 145, 564, 232), "predominantly due to the other intangibles and goodwill\n" * 6,
                       10.0, False),
                      # a title in capitals run into its text stays
                      ((52, 300, 540, 312), "GOODWILL AND INTANGIBLE ASSETS — The Company evaluates goodwill and",
                       10.0, True),
                      ((52, 312, 540, 360), "indefinite-lived intangible assets for impairment each year\n" * 4,
                       10.0, False),
                      # a title over a bulleted list ("o" is the bullet), and one whose short rest wraps
                      ((42, 400, 112, 411), "Team Activity", 10.0, True),
                      ((96, 411, 304, 468), "o Assemble a team of three to five students.\n" * 5, 10.0, False),
                      ((42, 480, 150, 491), "Liquidity and capital", 10.0, True),
                      ((42, 491, 90, 502), "resources", 10.0, False),
                      ((42, 510, 540, 560), "The Company's liquidity comes from its operations and its credit lines.\n"
                       * 4, 10.0, False)], page=16)
    reasons = page_reasons(blocks, {0, 2, 4, 6, 8}, frozenset())
    assert reasons.get(0) == reasons.get(2) == "opens the sentence its paragraph goes on with", reasons
    assert not {4, 6, 8} & set(reasons), reasons


def test_stacked_titles_of_one_style_are_two_headings_but_a_full_line_wraps(tmp_path):
    b = PDFBuilder()
    # an item title over the first title of its content, one style, a few points apart: the first line
    # left room for the next one's first word, so it was not wrapped
    b.heading("Item 8. Financial Statements and Supplementary Data", size=10, gap_after=4)
    b.heading("Report of Independent Registered Public Accounting Firm", size=10, gap_before=0)
    b.para()
    # a title that fills its line and wraps onto the next one stays whole
    b.heading("Changes in and Disagreements with Accountants on Accounting and Financial Disclosure and "
              "Related Matters Reported", size=12)
    b.para()
    # a centred title broken where its designer balanced it stays whole
    import pymupdf

    x0, x1 = b._col_box()
    b.y += 10
    for line in ("THE COMPANY", "PEER GROUP INDEX AND STOCK PRICE PERFORMANCE"):
        w = pymupdf.get_text_length(line, fontname="hebo", fontsize=12)
        b.row([((x1 - x0 - w) / 2, line)], size=12, bold=True, gap_after=5)
    b.para(gap_before=8)
    titles = _titles(b.save(tmp_path / "stacked.pdf"))
    assert "THE COMPANY PEER GROUP INDEX AND STOCK PRICE PERFORMANCE" in titles, titles
    assert "Item 8. Financial Statements and Supplementary Data" in titles, titles
    assert "Report of Independent Registered Public Accounting Firm" in titles, titles
    assert ("Changes in and Disagreements with Accountants on Accounting and Financial Disclosure and Related "
            "Matters Reported") in titles, titles


@pytest.mark.parametrize("text, why", [
    ("Dec-17 Dec-18 Dec-19 Dec-20 Dec-21 Dec-22 $0", "chart axis labels"),
    ("Q1'22 Q2'22 Q3'22 Q4'22", "chart axis labels"),
    ("FY2021 FY2022 FY2023 25%", "chart axis labels"),
    ("* For credit institutions that do not meet the conditions of Article 94(1)", "footnote"),
    ("**Fees and commissions income from services other than lending", "footnote"),
    ("† Restated for the change in accounting policy", "footnote"),
    # titles that name periods stay
    ("Q1 2022 Highlights", None), ("Fiscal 2022 compared with Fiscal 2021", None), ("H1 2023 Report", None),
    ("Dec-22 Update", None),
])
def test_chart_axes_and_footnotes_are_no_headings_by_their_text(text, why):
    from structrag.headings.not_headings import text_reason

    assert text_reason(text, 40) == why


def test_the_name_typed_under_a_signature_is_no_heading(tmp_path):
    b = PDFBuilder(body_size=9)
    b.heading("Report of Independent Registered Public Accounting Firm", size=12)
    for _ in range(3):
        b.para(size=9)
    b.heading("Critical Audit Matters", size=10)
    b.para(size=9)
    b.text("/s/ Ernst & Young LLP", size=9, gap_before=8, gap_after=1)
    b.text("Ernst & Young LLP", size=9, bold=True, gap_after=1, indent=20)
    b.text("We have served as the Company's auditor since 2000.", size=9, gap_after=1, indent=20)
    b.text("New York, New York", size=9, indent=20)
    b.heading("Consolidated Statements of Income", size=12)
    b.para(size=9)
    titles = _titles(b.save(tmp_path / "auditor.pdf"))
    assert {"Report of Independent Registered Public Accounting Firm", "Critical Audit Matters",
            "Consolidated Statements of Income"} <= set(titles), titles
    assert "Ernst & Young LLP" not in titles, titles


def test_a_run_of_bold_sentence_titles_are_headings_but_a_few_bold_sentences_are_not(tmp_path):
    risks = ["We face significant competition that may reduce our profits.",
             "Adverse conditions in the economy could impact our results of operations.",
             "Cyber attacks impacting our networks could have an adverse effect on our business.",
             "We depend on key suppliers and vendors to provide equipment that we need.",
             "Changes in the regulatory framework could adversely affect our business prospects."]
    b = PDFBuilder()
    b.heading("Item 1A. Risk Factors", size=12)
    b.para()
    for r in risks:
        b.text(r, bold=True, gap_before=8, gap_after=2)
        b.para()
    pdf = b.save(tmp_path / "risks.pdf")
    assert set(risks) <= set(_titles(pdf))
    # four in a run are a paragraph's emphasis as often as titles
    b = PDFBuilder()
    b.heading("Item 1A. Risk Factors", size=12)
    for r in risks[:4]:
        b.text(r, bold=True, gap_before=8, gap_after=2)
        b.para()
    assert not set(risks) & set(_titles(b.save(tmp_path / "four.pdf")))
