"""Heading precision (issue 23): what rounds 5 and 6 of the labelled set still found false.

A form's field repeated on many pages ("Stakeholder(s):" over its value), a part's divider page listing its
contents page number first, the last lines of a pull quote, a label printed inside a table row's box, labels
stacked flush right and a bold subject whose paragraph goes on with the article "a".  Each test fails
without its rule and checks that the heading it could be mistaken for stays.
"""

from __future__ import annotations

from structrag.headings.not_headings.lists import contents_listing, repeated_fields, stacked_labels
from structrag.headings.not_headings import page_reasons
from structrag.headings.whole_text import ends_sentence

from pdfgen import page_blocks as _blocks


def _strategy_page(page: int, first: int, value: str, joined: bool) -> list:
    """A performance plan's strategy: its title, a sentence, the stakeholders field, a table's caption."""
    field = [((108, 538, 436, 565), f"Stakeholder(s):\n{value}", 10.0, True)] if joined else [
        ((108, 245, 174, 259), "Stakeholder(s):", 10.0, True), ((108, 257, 251, 272), value, 10.0, True)]
    return _blocks([((96, 197, 283, 214), f"Strategy 1.{page}.1. Operators", 12.0, True),
                    ((108, 218, 552, 241), "Research and support initiatives to improve occupant protection.",
                     10.0, False)] + field + [((108, 575, 209, 589), "Performance Indicators", 10.0, True)],
                   page=page, first=first)


def test_a_field_repeated_on_many_pages_and_its_value_are_no_headings():
    pages = [_strategy_page(9, 0, "Vehicle Operators Vehicle Occupants", True),
             _strategy_page(12, 10, "Transportation Workers", False),
             _strategy_page(22, 20, "Congress", False)]
    blocks = [b for p in pages for b in p]
    got = repeated_fields(blocks, 10.0)
    assert got == {2, 12, 13, 22, 23}, got
    # on two pages only it may be a run-in title; with a paragraph under it, never a field
    assert repeated_fields([b for p in pages[:2] for b in p], 10.0) == set()
    para = _blocks([((108, 245, 174, 259), "Overview:", 10.0, True),
                    ((108, 257, 552, 290), "The segment designs and sells engines. It grew in 2023\n"
                     "and again in 2024, as orders came in.", 10.0, False)], page=30, first=40)
    assert repeated_fields(blocks + para, 10.0) == got
    # a report's section titles printed as a name and its subject, set larger than the text, are titles
    titles = [b for k, subject in enumerate(["governance & ethical business", "environment & energy", "employees"])
              for b in _blocks([((37, 329, 178, 370), f"Area of action:\n{subject}", 15.0, True),
                                ((37, 443, 277, 537), "The technologies developed and produced by the group for\n"
                                 "the efficient use of energy, and what they are made of.", 10.0, False)],
                               page=40 + k, first=50 + 2 * k)]
    assert repeated_fields(blocks + titles, 10.0) == got


def test_a_divider_pages_contents_listing_is_no_heading_but_numbered_sections_stay():
    # two columns of "page title" lines under the part's title, read column by column
    divider = _blocks([((110, 119, 485, 198), "CONSOLIDATED FINANCIAL\nSTATEMENTS", 30.0, True),
                       ((110, 223, 237, 241), "122 INCOME STATEMENT", 11.0, True),
                       ((110, 256, 295, 287), "122 STATEMENT OF COMPREHENSIVE\nINCOME", 11.0, True),
                       ((110, 302, 214, 320), "123 BALANCE SHEET", 11.0, True),
                       ((110, 463, 286, 512), "126 1. Basics\n128 2. Accounting principles", 9.0, False),
                       ((313, 223, 488, 254), "144 NOTES TO THE BALANCE SHEET\nSMA GROUP", 11.0, True),
                       ((313, 510, 442, 528), "156 OTHER DISCLOSURES", 11.0, True)])
    for b in divider:
        object.__setattr__(b, "column", 1 if b.bbox[0] < 300 else 2)
    assert contents_listing(divider) == {1, 2, 3, 4, 5, 6}
    assert page_reasons(divider, {0, 1, 5}) == {1: "a contents listing's entry", 5: "a contents listing's entry"}
    # a paper's numbered sections go up by one: a list of sections, not of pages
    paper = _blocks([((72, 100 + 40 * i, 300, 112 + 40 * i), f"{i + 2} {t}", 12.0, True)
                     for i, t in enumerate(["Related work", "Method", "Results", "Discussion"])])
    assert contents_listing(paper) == set()


def test_the_end_of_a_sentence_is_no_heading_but_a_lower_case_title_is():
    assert ends_sentence("of technology leadership and operational excellence.")
    assert ends_sentence("have devoted themselves to this task.")
    for title in ("gnuplot", "set terminal", "Our strategy.", "iPhone and services", "e.g."):
        assert not ends_sentence(title), title


def test_a_label_inside_a_table_rows_box_is_a_cell_but_a_title_over_its_paragraph_stays():
    # a KPI table: the sub-table's caption lies inside the wide row box printed across it
    table = _blocks([((51, 157, 1606, 175), "1 D35.12 Transmission and distribution of electricity 0,2 0,2", 7.0, False),
                     ((230, 251, 284, 260), "B) basis: CAPEX KPI", 7.0, True),
                     ((39, 251, 1728, 261), "2. GAR sector information Addiko Group, 31.12.2023", 7.0, False),
                     ((252, 269, 1705, 279), "a b c d e f g h i j k l m n", 7.0, False)])
    assert page_reasons(table, {1}) == {1: "printed inside another block's box"}
    # two titles of a two-column page read as one line: the right one has its paragraph under it
    merged = _blocks([((43, 54, 825, 90), "FOOD AND RETAIL SERVICES LEADERSHIP DEVELOPMENT\nPROGRAMME", 14.0, True),
                      ((305, 54, 446, 72), "CLUB & COMMUNITIES", 14.0, True),
                      ((305, 75, 532, 139), "Play hard at NTU! With about 230 main and sub-student organisations\n"
                       "to choose from, you will find a club for what you enjoy and new friends\n"
                       "to share it with, and more besides that.", 10.0, False)])
    assert page_reasons(merged, {1}) == {}


def test_labels_stacked_flush_right_are_a_list():
    text = ((40, 100, 560, 140), "Our plants and sites around the world, with what each makes.", 10.0, False)
    labels = _blocks([text, ((103, 566, 158, 581), "Rochester, NH", 9.0, False),
                      ((116, 580, 158, 595), "Albany, NY", 9.0, False),
                      ((97, 594, 159, 609), "Boerne, TX AEC", 9.0, False)])
    assert stacked_labels(labels) == {1, 2, 3}
    ragged = _blocks([text, ((103, 566, 158, 581), "Rochester, NH", 9.0, False),
                      ((116, 580, 190, 595), "Albany, NY", 9.0, False),
                      ((97, 594, 130, 609), "Boerne, TX AEC", 9.0, False)])
    assert stacked_labels(ragged) == set()


def test_a_bold_subject_going_on_with_the_article_a_opens_its_sentence():
    blocks = _blocks([((125, 84, 539, 100), "No new business in the area of mortgage financing this business area has been",
                       12.0, True),
                      ((126, 99, 541, 201), 'a "non-focus area" for years and the portfolio is being reduced due to\n'
                       "business decisions taken in earlier years and now carried on.", 12.0, False)])
    assert page_reasons(blocks, {0}) == {0: "opens the sentence its paragraph goes on with"}
    bullet = _blocks([((125, 84, 300, 100), "Customer Programs", 12.0, True),
                      ((126, 99, 541, 201), "o Visit the branch to open an account, or call us on the number\n"
                       "given below, any working day of the week.", 12.0, False)])
    assert page_reasons(bullet, {0}) == {}


def test_a_bracketed_acronym_line_ends_its_title_and_header_lines_are_no_headings(tmp_path):
    from structrag import extract
    from structrag.pipeline import detect_headings

    from pdfgen import PDFBuilder

    b = PDFBuilder()
    b.heading("National Remote Sensing Centre (NRSC)", size=12)
    b.para()
    # the acronym broke onto a line of its own although the first line left room for it
    b.heading("Indian Institute of Remote Sensing", size=12, gap_after=1)
    b.heading("(IIRS)", size=12, gap_before=0)
    b.para()
    # a qualifier in brackets set as a line of its own under a statement's title
    b.heading("CONSOLIDATED BALANCE SHEETS", size=12)
    b.para()
    b.heading("(Unaudited)", size=12)
    b.para()
    titles = [h.text for h in detect_headings(extract(b.save(tmp_path / "acronym.pdf")), outline="ignore")]
    assert "Indian Institute of Remote Sensing (IIRS)" in titles, titles
    assert "National Remote Sensing Centre (NRSC)" in titles, titles
    assert "CONSOLIDATED BALANCE SHEETS" in titles, titles
    assert "(IIRS)" not in titles and "(Unaudited)" not in titles, titles


def test_a_lone_qualifier_titles_nothing():
    from structrag.headings.whole_text import lone_qualifier

    for text in ("(Unaudited)", "(PEP)", "(IIRS)"):
        assert lone_qualifier(text), text
    for text in ("(1) Basis of presentation", "Note 3 (continued)", "Consolidated Balance Sheets (Unaudited)"):
        assert not lone_qualifier(text), text


def test_a_registrant_line_takes_in_its_statements_title(tmp_path):
    from structrag import extract
    from structrag.pipeline import detect_headings

    from pdfgen import PDFBuilder

    b = PDFBuilder()
    b.heading("Critical Audit Matters", size=12)
    b.para()
    # a statement's header band: registrant, title and unit line in one small bold face, then the rows; the
    # title alone reads as the label of the rows under it
    b.heading("EXAMPLE HOLDINGS, INC. AND SUBSIDIARIES", size=10, gap_after=1, indent=120)
    b.heading("CONSOLIDATED BALANCE SHEETS", size=10, gap_before=0, gap_after=1, indent=140)
    b.heading("(Amounts in millions, except share data)", size=10, gap_before=0, gap_after=2, indent=130)
    for label, a, c in [("Cash and cash equivalents", "$ 5,794", "$ 4,225"), ("Accounts receivable, net", "1,522", "1,035"),
                        ("Software development", "322", "264"), ("Other current assets", "296", "539"),
                        ("Total current assets", "7,934", "6,063")]:
        b.row([(0, label), (300, a), (380, c)], size=10)
    titles = [h.text for h in detect_headings(extract(b.save(tmp_path / "statement.pdf")), outline="ignore")]
    assert "EXAMPLE HOLDINGS, INC. AND SUBSIDIARIES CONSOLIDATED BALANCE SHEETS" in titles, titles
