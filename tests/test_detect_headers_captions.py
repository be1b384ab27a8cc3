"""Heading precision (issue 23): what rounds 10 and 11 of the labelled set still found false.

A bold term with its definition's first words, a caption whose announcing sentence ends on a reference, row
labels at a statement's wide row spacing or over a sub-label, an exhibit index's rows, an acceptance line, a
sentence that leads into its explanation, a header cell sharing its row, a caption recurring over each
segment's table, a table's title with nothing of its own after the table; and whole titles: a company's name
over its plan's name, large lines whose boxes overlap.
Each test fails without its rule and checks that the heading it could be mistaken for stays.
"""

from __future__ import annotations

from structrag import extract
from structrag.headings.not_headings.lists import exhibit_index
from structrag.headings.not_headings import page_reasons, text_reason
from structrag.headings.whole_text import leads_in
from structrag.pipeline import detect_headings

from pdfgen import LOREM, PDFBuilder
from pdfgen import page_blocks as _blocks


def _titles(path) -> list[str]:
    return [h.text for h in detect_headings(extract(path), outline="ignore")]


def test_a_bold_term_with_its_definitions_first_words_is_no_heading():
    page = _blocks([((50, 580, 281, 616), "Net revenue rate: Represents Card Services net revenue\n(annualized) "
                     "expressed as a percentage of average loans\nfor the period.", 10.0, False),
                    ((50, 622, 288, 634), "Auto loan and lease origination volume: Dollar amount of", 10.0, True),
                    ((50, 634, 182, 646), "auto loans and leases originated.", 10.0, False)])
    assert page_reasons(page, {1}) == {1: "opens the sentence its paragraph goes on with"}
    # a bold title over a short line in lower case, no term and definition in it: a title and its subtitle
    titled = _blocks([((50, 622, 288, 634), "Auto loan and lease origination volume", 10.0, True),
                      ((50, 634, 182, 646), "excluding leases sold.", 10.0, False)])
    assert page_reasons(titled, {0}) == {}


_ROWS = ((50, 99, 557, 160), "(in millions) 2023 2022\nCommercial paper $ 11,686 $ 12,557\nOther borrowed "
         "funds 21,804 23,052\nFHLB advances 36,094 11,093", 8.0, False)


def test_a_caption_after_the_announcing_sentence_and_a_reference_is_no_heading():
    said = ((50, 43, 564, 79), "The following table summarizes short-term and long-term funding, excluding "
            "deposits, as of\nJune 30, 2023, and December 31, 2022. Refer to the Consolidated Balance Sheets "
            "Analysis on\npages 16-19 and Note 11 for additional information.", 10.0, False)
    page = _blocks([said, ((50, 84, 200, 96), "Sources of funds (excluding deposits)", 9.5, True), _ROWS])
    assert page_reasons(page, {1}) == {1: "a caption: the sentence above announces the table under it"}
    # a paragraph that only refers elsewhere announces nothing: the title over the table stays
    refers = ((50, 43, 564, 79), "Funding is discussed by source in the pages that follow, with the amounts "
              "as of\nJune 30, 2023. Refer to the Consolidated Balance Sheets Analysis on pages 16-19 and\nNote 11 "
              "for additional information.", 10.0, False)
    page = _blocks([refers, ((50, 84, 200, 96), "Sources of funds (excluding deposits)", 9.5, True), _ROWS])
    assert page_reasons(page, {1}) == {}


def test_row_labels_at_a_statements_row_spacing_or_over_a_sub_label_are_no_headings():
    # 8.5 pt lines every 12.75 pt: the gap between a label and its rows is the rows' own
    page = _blocks([((13, 339, 577, 414), "Operating income 1,607 1,988 1,309\nInterest and other expense (26) 90 "
                     "146\nIncome before income tax 1,633 1,898 1,163\nIncome tax expense 130 85 890\nNet income "
                     "$ 1,503 $ 1,813 $ 273\nOther 1 2 3", 8.5, False),
                    ((13, 434, 116, 443.4), "Earnings per common share", 8.5, True),
                    ((20, 446.75, 577, 468.9), "Basic $ 1.96 $ 2.43 $ 0.36\nDiluted $ 1.95 $ 2.40 $ 0.36", 8.5, False),
                    ((13, 483, 83, 492.4), "Costs and expenses", 8.5, True),
                    ((20, 495.75, 132, 505.15), "Cost of revenues—product sales:", 8.5, False),
                    ((20, 508.5, 574, 530.65), "Product costs 656 719 733\nSoftware royalties 240 371 300", 8.5,
                     False)])
    assert page_reasons(page, {1, 3}) == {1: "labels the table rows right under it",
                                          3: "labels the table rows right under it"}
    # a title a paragraph's space over the rows opens its section
    apart = _blocks([((13, 420, 116, 429.4), "Earnings per common share", 8.5, True),
                     ((20, 446.75, 577, 468.9), "Basic $ 1.96 $ 2.43 $ 0.36\nDiluted $ 1.95 $ 2.40 $ 0.36", 8.5,
                      False)])
    assert page_reasons(apart, {0}) == {}


def test_an_exhibit_indexs_rows_are_no_headings():
    rows = [((52, 94, 302, 106), "15 Letter re: Unaudited Interim Financial Information.(a)", 9.0, False),
            ((52, 134, 164, 146), "31.1 Certification.(a)", 9.0, False),
            ((52, 154, 164, 167), "31.2 Certification.(a)", 9.0, False),
            ((52, 175, 382, 187), "32 Certification Pursuant to Section 906 of the Sarbanes-Oxley Act.(b)", 9.0, False),
            ((52, 196, 400, 207), "101.INS The instance document does not appear in the data file.", 9.0, False)]
    page = _blocks([((52, 76, 192, 87), "Exhibit No. Description of Exhibit", 9.0, True)] + rows)
    assert exhibit_index(page) == {1, 2, 3, 4, 5}
    assert page_reasons(page, {2, 3}) == {2: "a row of an exhibit index", 3: "a row of an exhibit index"}
    # without the index's header row, "31.1 Certification" reads as a numbered sub-section
    assert exhibit_index(_blocks(rows)) == set()


def test_an_acceptance_line_and_a_sentence_leading_into_its_explanation_are_no_headings():
    assert text_reason("ACCEPTED AND AGREED:", 130) == "letter closing"
    assert text_reason("Acknowledged and agreed to", 130) == "letter closing"
    assert text_reason("Agreements with Customers", 130) is None
    assert leads_in("Mortgage fees and related income decreased driven by")
    assert leads_in("Net interest income increased, reflecting")
    assert not leads_in("Growth Driven by Innovation")
    assert not leads_in("Changes due to Adoption of New Standards")


def test_a_header_cell_sharing_its_row_over_the_rows_is_no_heading():
    cells = [((494, 140, 817, 191), "Total environmentally sustainable assets\nin Mn EUR", 19.0, True),
             ((869, 140, 1032, 191), "KPI\nturnover KPI Capex", 19.0, True),
             ((1040, 140, 1209, 191), "% coverage\n(over total assets)", 19.0, True)]
    rows = ((47, 200, 1659, 320), "Main KPI Green asset ratio 0.00 0.000% 0.000% 12.5%\nTotal GAR stock 1.25 "
            "0.013% 0.010% 14.0%\nAdditional KPIs GAR flow 0.00 0.000% 0.000% 10.0%", 19.0, False)
    page = _blocks(cells + [rows])
    assert page_reasons(page, {1}, side={0, 1, 2})[1] == "a column header over a table's figures"
    # a line alone on its row, centred over the rows a little above them, is the table's title
    title = ((753, 140, 953, 163), "Summary of KPIs", 19.0, True)
    apart = ((47, 180, 1659, 253),) + rows[1:]
    assert page_reasons(_blocks([title, apart]), {0}, side=set()) == {}
    assert page_reasons(_blocks([title, apart]), {0}, side={0})[0] == "a column header over a table's figures"


def _segment_page(b: PDFBuilder, name: str) -> None:
    b.new_page()
    b.y = b.margin
    b.heading(f"{name} Banking", size=12)
    b.para()
    b.text("Selected income statement data", bold=True, gap_after=2)
    b.row([(300, "2023"), (380, "2022")], size=8, bold=True)
    b.row([(0, "Net revenue"), (300, "$ 4,321"), (380, "$ 4,110")], size=8)
    b.row([(0, "Noninterest expense"), (300, "2,120"), (380, "2,004")], size=8)
    b.row([(0, "Net income"), (300, "$ 1,406"), (380, "$ 1,372")], size=8, gap_after=10)
    b.text("Quarterly results", bold=True, gap_before=6)
    b.para()


def test_a_caption_recurring_over_each_segments_table_is_no_heading(tmp_path):
    b = PDFBuilder()
    for name in ("Consumer", "Commercial", "Corporate"):
        _segment_page(b, name)
    titles = _titles(b.save(tmp_path / "segments.pdf"))
    assert "Selected income statement data" not in titles, titles
    assert titles.count("Quarterly results") == 3 and "Commercial Banking" in titles, titles
    # on one page only, the title over its table and the segment's generic sub-heading stays (an outline may
    # list it)
    b = PDFBuilder()
    _segment_page(b, "Consumer")
    for name in ("Commercial", "Corporate"):
        b.heading(f"{name} Banking", size=12)
        b.text("Quarterly results", bold=True, gap_before=6)
        b.para()
    assert "Selected income statement data" in _titles(b.save(tmp_path / "one.pdf"))


def test_a_companys_name_over_its_plans_name_and_tight_large_lines_are_one_title(tmp_path):
    import pymupdf

    b = PDFBuilder()
    b.new_page()
    b.y = b.margin
    x0, x1 = b._col_box()

    def centred(line: str, size: float, gap: float) -> None:
        w = pymupdf.get_text_length(line, fontname="hebo", fontsize=size)
        b.row([((x1 - x0 - w) / 2, line)], size=size, bold=True, gap_after=gap)

    # the name scores as a title of its own in 12 pt, not in the text's 10 pt ("INC." reads as a full stop)
    for size, plan in ((12, "2014 INCENTIVE PLAN"), (10, "2019 EMPLOYEE STOCK PURCHASE PLAN")):
        b.text("Exhibit 10.23", size=9, bold=True, gap_before=10, gap_after=8)
        centred("ACTIVISION BLIZZARD, INC.", size, 0 if size > 10 else 3)
        centred(plan, size, 8)
        b.para()
    # 14 pt lines set so tight that their boxes overlap
    b.text("COMMISSION DELEGATED REGULATION (EU) 2022/1214", size=14, bold=True, gap_before=12, gap_after=-1)
    b.text("of 9 March 2022 - ANNEX III", size=14, bold=True, gap_after=8)
    b.para()
    # a label set as tight over its title, centred with it, stays a line of its own
    b.y += 10
    centred("APPENDIX B", 14, -1)
    centred("Deferred Compensation Plan", 14, 8)
    b.para(LOREM)
    titles = _titles(b.save(tmp_path / "whole.pdf"))
    assert "ACTIVISION BLIZZARD, INC. 2014 INCENTIVE PLAN" in titles, titles
    assert "ACTIVISION BLIZZARD, INC. 2019 EMPLOYEE STOCK PURCHASE PLAN" in titles, titles
    assert "COMMISSION DELEGATED REGULATION (EU) 2022/1214 of 9 March 2022 - ANNEX III" in titles, titles
    assert "APPENDIX B" in titles and "Deferred Compensation Plan" in titles, titles


def _table(b: PDFBuilder, rows: list[tuple[str, str, str]]) -> None:
    b.row([(300, "2023"), (380, "2022")], size=8, bold=True)
    for label, a, c in rows:
        b.row([(0, label), (300, a), (380, c)], size=8)
    b.y += 8


def test_a_tables_title_with_nothing_of_its_own_after_the_table_is_a_caption(tmp_path):
    b = PDFBuilder()
    b.heading("Credit Portfolio", size=12)
    b.para()
    b.text("Wholesale nonaccrual loan activity", bold=True, gap_after=2)
    _table(b, [("Beginning balance", "$ 2,395", "$ 2,445"), ("Additions", "1,649", "1,239"),
               ("Ending balance", "$ 2,722", "$ 2,395")])
    # its title opens a section whose discussion comes under generic sub-headings ...
    for title in ("Revenue", "Noninterest expense", "Income tax expense"):
        b.heading(title, size=10, gap_before=8)
        _table(b, [("Investment banking fees", "$ 1,513", "$ 1,586"), ("Lending fees", "1,834", "1,742")])
        b.heading("Quarterly results", size=10)
        b.para()
    # ... or under one of its table's rows
    b.heading("Other Earnings Items", size=10, gap_before=8)
    _table(b, [("Interest expense, net", "$ 14,000", "$ 14,891"), ("Pension settlement expense", "49,128", "1,020"),
               ("Other expense, net", "(3,174)", "2,630")])
    b.heading("Interest Expense", size=10)
    b.para()
    # ... or under sub-headings that stand out less (in bold capitals, then in bold)
    b.heading("ALLOWANCE FOR CREDIT LOSSES", size=10, gap_before=8)
    _table(b, [("Consumer", "$ 12,060", "$ 10,590"), ("Wholesale", "8,210", "7,940")])
    b.heading("Consumer credit", size=10)
    b.para()
    # or over its own text after the table
    b.heading("Provision for credit losses", size=10, gap_before=8)
    _table(b, [("Consumer", "$ 1,540", "$ 1,010"), ("Wholesale", "1,360", "90")])
    b.para()
    b.heading("Country Risk Management", size=12)
    b.para()
    titles = _titles(b.save(tmp_path / "captions.pdf"))
    assert "Wholesale nonaccrual loan activity" not in titles, titles
    for kept in ("Revenue", "Noninterest expense", "Income tax expense", "Other Earnings Items", "Interest Expense",
                 "ALLOWANCE FOR CREDIT LOSSES", "Consumer credit", "Provision for credit losses",
                 "Country Risk Management", "Credit Portfolio"):
        assert kept in titles, (kept, titles)


def test_an_exhibits_double_spaced_title_block_is_one_title_but_a_title_over_its_first_section_is_two(tmp_path):
    import pymupdf

    b = PDFBuilder()
    b.new_page()
    b.y = b.margin
    x0, x1 = b._col_box()

    def centred(line: str, gap: float) -> None:
        w = pymupdf.get_text_length(line, fontname="hebo", fontsize=10)
        b.row([((x1 - x0 - w) / 2, line)], size=10, bold=True, gap_after=gap)

    # lines a line's height apart (boxes 13.8 pt high in 10 pt type, 13.4 pt apart)
    b.text("EXHIBIT B", size=10, bold=True, gap_after=24)
    for line in ("APPENDIX", "TO", "ACME HOLDINGS, INC.", "2014 INCENTIVE PLAN"):
        centred(line, 14.7)
    centred("RESTRICTED SHARE UNIT AWARD TERMS", 16)
    b.para()
    # a title over its first section's title, set further apart (14.9 pt), stays two titles
    b.y += 20
    centred("DESCRIPTION OF SECURITIES", 16.2)
    centred("DESCRIPTION OF COMMON STOCK", 10)
    b.para()
    titles = _titles(b.save(tmp_path / "exhibit.pdf"))
    assert "APPENDIX TO ACME HOLDINGS, INC. 2014 INCENTIVE PLAN RESTRICTED SHARE UNIT AWARD TERMS" in titles, titles
    assert "DESCRIPTION OF SECURITIES" in titles and "DESCRIPTION OF COMMON STOCK" in titles, titles

