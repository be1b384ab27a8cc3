"""Heading precision (issue 23, items 2 and 4): lines at a table's edge, and tag lines under a paragraph.

The layouts are those of real filings (General Mills, Albany, Activision, Coca-Cola, Verizon, AMCOR) and of
the US DOT agency plan, coordinates as PyMuPDF reads them.  Each test fails without its rule, and each
has a real title beside it that must stay.
"""

from __future__ import annotations

from structrag.headings.not_headings import is_table_line, page_reasons
from structrag.headings.not_headings.tables import edge_reasons

from pdfgen import page_blocks


def _blocks(specs, page=30):
    return page_blocks(specs, page=page)


def _edges(blocks, candidates, side=frozenset()):
    return edge_reasons(blocks, candidates, [is_table_line(b) for b in blocks], side)


def test_a_column_header_over_the_figures_is_no_heading_but_a_centred_title_stays():
    blocks = _blocks([((44, 88, 540, 111), "As of December 31, 2022, the Company's net operating loss, capital\n"
                       "loss and tax credit carryforwards were as follows:", 9.5, False),
                      ((399, 143, 466, 154), "Net Operating", 9.5, True),
                      ((405, 153, 460, 164), "and Capital", 9.5, True),
                      ((68, 161, 121, 170), "(in thousands)", 8.0, True),
                      ((398, 163, 464, 183), "Loss\nCarryforwards", 9.5, True),
                      ((46, 186, 540, 230), "U.S. federal $ 12,336\nState 40,229\nNon-U.S. 118,007\n"
                       "Total $ 170,572", 9.5, False)])
    assert page_reasons(blocks, {1}) == {1: "a column header over a table's figures"}
    # the same line centred on the page over a statement: a title
    title = _blocks([((36, 40, 578, 60), "The following schedule presents the parent company's condensed balance\n"
                      "sheets as of the end of each year:", 10.0, False),
                     ((246, 82, 366, 93), "CONDENSED FINANCIAL DATA", 10.0, True),
                     ((36, 106, 578, 150), "Cash and cash equivalents $ 1,234 $ 1,111\nOther assets 5,678 5,432\n"
                      "Total assets $ 6,912 $ 6,543", 10.0, False)])
    assert _edges(title, {1}) == {}


def test_a_stacked_header_ending_on_the_years_is_a_column_header():
    blocks = _blocks([((36, 385, 489, 396), "Non-vested as of May 31, 2020 4,925.5 $ 53.26 103.3 $ 54.75", 10.0, True),
                      ((218, 412, 368, 437), "Fiscal Year\n2020 2019 2018", 10.0, True),
                      ((36, 444, 578, 475), "Number of units granted (thousands) 1,947.6 1,848.2 1,551.3\n"
                       "Weighted-average price per unit $ 53.74 $ 53.24 $ 55.66", 10.0, False)])
    assert page_reasons(blocks, {1}) == {1: "a column header over a table's figures"}


def _segment_table(drop: float):
    """Amazon's segment table: the years' header row, the segment's name in bold ``drop`` points lower than
    it sits in the filing, its rows."""
    return _blocks([((39, 207, 443, 217), "Information on reportable segments and reconciliation to consolidated "
                     "net income (loss) is as follows:", 9.0, False),
                    ((435, 228, 518, 236), "Year Ended December 31,", 7.5, True),
                    ((388, 242, 564, 250), "2017 2018 2019", 7.5, True),
                    ((19, 253 + drop, 76, 263 + drop), "North America", 9.0, True),
                    ((36, 267 + drop, 588, 305 + drop), "Net sales $ 106,110 $ 141,366 $ 170,773\n"
                     "Operating expenses 103,273 134,099 163,740\nOperating income $ 2,837 $ 7,267 $ 7,033", 9.0,
                     False)], page=66)


def test_a_row_group_right_under_a_tables_header_row_is_no_heading():
    blocks = _segment_table(0)
    assert _edges(blocks, {3}) == {3: "a row group under a table's header"}
    assert 3 in page_reasons(blocks, {3})
    # the same name with a paragraph's space under the header opens a section of its own
    assert _edges(_segment_table(7), {3}) == {}


def test_labels_down_a_run_of_table_rows_are_row_groups():
    # Verizon's statement of changes in equity: each label right over its rows
    blocks = _blocks([((43, 24, 268, 35), "Consolidated Statements of Changes in Equity", 10.0, True),
                      ((44, 58, 553, 92), "(dollars in millions, except per share amounts, and shares in thousands)\n"
                       "Years Ended December 31, 2022 2021 2020\nShares Amount Shares Amount Shares Amount", 9.0, False),
                      ((44, 154, 155, 164), "Additional Paid In Capital", 9.0, True),
                      ((44, 166, 555, 202), "Balance at beginning of year 13,861 13,404 13,419\n"
                       "Other (Note 14) (441) 457 (15)\nBalance at end of year 13,420 13,861 13,404", 9.0, False),
                      ((44, 216, 125, 226), "Retained Earnings", 9.0, True),
                      ((44, 226, 555, 310), "Balance at beginning of year 71,993 60,464 53,147\n"
                       "Net income attributable to Verizon 21,256 22,065 17,801\n"
                       "Dividends declared ($2.587, $2.535, $2.475 per share) (10,918) (10,536) (10,284)\n"
                       "Balance at end of year 82,380 71,993 60,464", 9.0, False),
                      ((44, 444, 111, 454), "Treasury Stock", 9.0, True),
                      ((44, 454, 555, 466), "Balance at beginning of year (93,635) (4,104) (153,304) (6,719)", 9.0,
                       False)], page=57)
    reasons = _edges(blocks, {0, 2, 4, 6})
    assert reasons[2] == reasons[4] == "a row group of a run of table rows"
    # the statement's title stays; the last label's rows run to the page's end and may go on with text
    assert 0 not in reasons and 6 not in reasons


def test_a_title_over_its_table_with_its_discussion_after_stays():
    # AMCOR's MD&A: each title over a two-row table, then a paragraph on it, then the next title
    blocks = _blocks([((14, 139, 121, 151), "Consolidated Gross Profit", 10.0, True),
                      ((15, 158, 567, 169), "($ in millions) 2023 2022", 10.0, True),
                      ((15, 172, 597, 196), "Gross profit $ 2,725 $ 2,820\n"
                       "Gross profit as a percentage of net sales 18.5 % 19.4 %", 10.0, False),
                      ((14, 215, 591, 274), "Gross profit decreased by $95 million, or 3%, in fiscal year 2023,\n"
                       "compared to fiscal year 2022. The decrease was driven by lower volumes and\n"
                       "unfavorable currency impacts of $83 million, partly offset by price and mix\n"
                       "benefits and cost savings from restructuring programs.", 10.0, False),
                      ((14, 289, 136, 300), "Consolidated Interest Income", 10.0, True),
                      ((15, 308, 567, 319), "($ in millions) 2023 2022", 10.0, True),
                      ((15, 322, 597, 346), "Interest income $ 31 $ 24\n"
                       "Interest income as a percentage of net sales 0.2 % 0.2 %", 10.0, False),
                      ((14, 365, 581, 388), "Interest income increased by $7 million, or 29%, in fiscal year 2023,\n"
                       "compared to fiscal year 2022, on higher interest rates.", 10.0, False)])
    assert page_reasons(blocks, {0, 4}) == {}


def test_a_capitals_tag_line_right_under_a_paragraph_is_no_heading():
    # the US DOT plan: objective number and title, its statement, a theme tag in plain capitals, the fields
    blocks = _blocks([((96, 437, 243, 454), "2.5. Reliability & Connectivity", 12.0, False),
                      ((108, 458, 549, 470), "Improve system operations to increase travel time reliability, "
                       "manage travel demand, and improve connectivity.", 10.0, False),
                      ((108, 474, 312, 487), "SYSTEM RELIABILITY AND CONNECTIVITY", 10.0, False),
                      ((108, 491, 174, 505), "Stakeholder(s):", 10.0, True)], page=33)
    assert page_reasons(blocks, {0, 2}) == {2: "a capitals line right under a paragraph"}
    # with a paragraph's space above it, or in bold, a title in capitals stays
    spaced = _blocks([((108, 458, 549, 470), "Improve system operations to increase travel time reliability, "
                       "manage travel demand, and improve connectivity.", 10.0, False),
                      ((108, 484, 312, 497), "SYSTEM RELIABILITY AND CONNECTIVITY", 10.0, False)], page=33)
    assert page_reasons(spaced, {1}) == {}
    bold = _blocks([((108, 458, 549, 470), "Improve system operations to increase travel time reliability, "
                     "manage travel demand, and improve connectivity.", 10.0, False),
                    ((108, 474, 312, 487), "SYSTEM RELIABILITY AND CONNECTIVITY", 10.0, True)], page=33)
    assert page_reasons(bold, {1}) == {}


def test_a_caption_by_its_words_is_no_heading_but_a_section_named_after_a_table_stays():
    from structrag.headings.not_headings import text_reason

    for text in ("Table 2: Retail Broker-Dealer Lines of Business", "Figure 3.1 - Revenue by segment",
                 "4. Service Component Reference Model (SRM) Table:"):
        assert text_reason(text, 40) == "a table's or a figure's caption", text
    # a proxy statement's sections are named after their tables; contents and lists of tables are titles
    for text in ("2022 Summary Compensation Table", "Narrative to Directors' Compensation Table", "Table of Contents",
                 "List of Tables", "Table 1"):
        assert text_reason(text, 40) is None, text


def test_a_bracketed_acronym_or_one_whose_phrase_goes_on_below_is_no_heading():
    # a form's table cells: an acronym alone on a line, its phrase going on right under it in lower case
    blocks = _blocks([((109, 244, 128, 252), "IPMS", 6.5, False),
                      ((109, 252, 155, 260), "accomplishes", 6.5, False),
                      ((109, 260, 165, 292), "these\ncapabilities using\nMercury\nInteractive.", 6.5, False),
                      ((471, 682, 497, 693), "(HTML)", 6.5, False)], page=6)
    assert page_reasons(blocks, {0, 3}) == {0: "an acronym alone on a line", 3: "an acronym alone on a line"}
    # a region's name over its paragraph, a paragraph's space between: a sub-heading
    region = _blocks([((12, 462, 35, 472), "EMEA", 8.5, False),
                      ((31, 483, 383, 492), "The decrease in net revenues in the EMEA region for 2019, as compared to "
                       "2018, was primarily due to lower revenues.", 8.5, False)], page=43)
    assert page_reasons(region, {0}) == {}


def test_a_glossarys_terms_are_no_headings_but_the_next_section_is():
    from structrag.headings.glossary import glossary_terms
    from structrag.model import Heading

    def h(text, size, bold=False, source="layout"):
        return Heading(text=text, page=199, bbox=None, block=0, block_end=1, font="Helvetica", size=size, bold=bold,
                       italic=False, color=0, numbering=None, score=1.0, reasons=(), source=source)

    heads = [h("Critical Accounting Estimates", 12.0, source="contents"),
             h("Allowance for credit losses", 10.0, bold=True),
             h("GLOSSARY OF TERMS AND ACRONYMS", 12.0, source="contents"),
             h("Combined LTV ratio", 10.0, bold=True), h("Current estimated LTV ratio", 10.0, bold=True),
             h("LINE OF BUSINESS METRICS", 12.0),
             h("COMMERCIAL BANKING", 10.0, bold=True)]
    # the terms under the glossary's title go; the section after it, as prominent as the title, stays, and so
    # do the headings under it and those before the glossary
    assert glossary_terms(heads) == {3, 4}
    # a section discussing definitions is no glossary
    assert glossary_terms([h("Definitions of Non-GAAP Measures", 12.0), h("Adjusted EBITDA", 10.0, True)]) == set()
