"""Heading precision (issue 23, items 2 and 4): what a second, held-out labelled sample found.

Table header rows with their unit in brackets, rows with a per-cent sign or "N/A" set apart, numbered
list items that wrap under a hanging indent, a bullet item's next line, stacked list labels, bold
sentence subjects whose line boxes overlap the next line's, captions in the running text's type over a
smaller table, blank-page notices and a letter's notations.  Each test fails without its rule.
"""

from __future__ import annotations

from structrag.headings.not_headings import is_table_line, page_reasons, text_reason

from pdfgen import page_blocks as _blocks


def test_a_header_row_with_its_unit_in_brackets_is_a_table_line():
    for text in ("(in thousands) 2022 2021 2020", "($ in millions, except per share data) 2023 2022",
                 "June 30, ($ in millions) 2023 2022",
                 # the unit wraps onto the years' line in a header cell
                 "(in thousands, except per share\namounts) 2022 2021 2020 2019 2018"):
        b = _blocks([((46, 119, 501, 139), text, 9.5, True)])[0]
        assert is_table_line(b), text
    for text in ("(see Note 3) 2022 2021", "Results of operations 2022"):
        assert not is_table_line(_blocks([((46, 119, 501, 131), text, 9.5, True)])[0]), text
    assert text_reason("($ in millions) 2022 2021", 30) == "column header"
    assert text_reason("December 31, 2023", 30) is None  # a date alone may title a section


def test_a_row_group_label_under_a_header_row_with_a_unit_is_no_heading():
    # a segment table: header "(in thousands) 2022 2021 2020", a bold row group, then its rows
    blocks = _blocks([((44, 88, 547, 111), "The following tables show data by reportable segment, reconciled to\n"
                       "consolidated totals, for the years ended December 31:", 9.5, False),
                      ((46, 122, 460, 131), "(in thousands) 2022 2021 2020", 8.0, True),
                      ((46, 134, 90, 145), "Net Sales", 9.5, True),
                      ((57, 149, 481, 160), "Machine Clothing $ 609,461 $ 619,015 $ 572,955", 9.5, False),
                      ((46, 163, 481, 189), "Albany Engineered Composites 425,426 310,225 327,655\n"
                       "Consolidated total $ 1,034,887 $ 929,240 $ 900,610", 9.5, False)], page=73)
    assert page_reasons(blocks, {1, 2}) == {1: "table rows", 2: "between table rows"}


def test_rows_with_signs_or_fillers_set_apart_are_rows_but_a_part_number_is_not():
    from structrag.headings.not_headings import row_of_figures

    assert row_of_figures("Wireless retail(4) 1.63 % 1.10 %")
    assert row_of_figures("Total assets held for sale — 282")
    assert row_of_figures("Operating lease costs $ 75")
    assert not row_of_figures("MATERIAL TOPIC CLIMATE CHANGE – 1")
    assert not row_of_figures("- SAVE THESE INSTRUCTIONS -")
    assert text_reason("13 N/A 97 N/A", 110) == "figures row"
    assert text_reason("2.1 Overview", 110) is None


def test_wrapped_list_items_under_a_hanging_indent_are_a_list_but_items_over_paragraphs_stay():
    # a plan's clauses: each item's first line is a block, its next lines another, indented past the number
    items = _blocks([((18, 141, 437, 153), "The Plan provides four separate components:", 11.0, False),
                     ((51, 163, 576, 174), "(i) Extra Deferrals, the purpose of which is to provide a means by which",
                      11.0, False),
                     ((83, 173, 567, 196), "eligible employees may defer payment of their base salaries and awards\n"
                      "made under eligible incentive compensation plans;", 11.0, False),
                     ((51, 206, 553, 218), "(ii) the Restoration Benefit, the purpose of which is to restore the",
                      11.0, False),
                     ((83, 217, 584, 239), "benefits of eligible employees under the Company 401(k) Retirement Plan\n"
                      "that cannot be provided because of limits;", 11.0, False),
                     ((51, 249, 560, 261), "(iii) Executive Benefit, which includes Company Non-Elective", 11.0, False),
                     ((83, 260, 281, 272), "Contributions; and", 11.0, False)], page=141)
    reasons = page_reasons(items, {1, 3, 5})
    assert reasons == {1: "numbered list item", 3: "numbered list item", 5: "numbered list item"}, reasons
    # a guideline's numbered titles, each short and over its own indented paragraph: headings
    guide = _blocks([((72, 100, 200, 112), "1. Free Redistribution", 11.0, True),
                     ((90, 114, 540, 160), "The license of a Debian component may not restrict any party from\n"
                      "selling or giving away the software as a component of an aggregate\n"
                      "software distribution containing programs from several sources.", 10.0, False),
                     ((72, 170, 180, 182), "2. Source Code", 11.0, True),
                     ((90, 184, 540, 230), "The program must include source code, and must allow distribution in\n"
                      "source code as well as compiled form, by any means the author allows\n"
                      "for the program and its derived works.", 10.0, False),
                     ((72, 240, 190, 252), "3. Derived Works", 11.0, True),
                     ((90, 254, 540, 300), "The license must allow modifications and derived works, and must allow\n"
                      "them to be distributed under the same terms as the license of the\n"
                      "original software.", 10.0, False)], page=17)
    assert page_reasons(guide, {0, 2, 4}) == {}


def test_an_orphan_number_between_list_items_does_not_break_the_list():
    # an auditor's consent: each statement's form number ("8") wrapped onto a line of its own
    specs = []
    y = 100
    for k in range(12, 16):
        specs.append(((41, y, 266, y + 10), f"{k}. Registration Statement Number 333-19{k} on Form S-", 9.0, False))
        specs.append(((63, y + 11, 68, y + 21), "8", 9.0, False))
        y += 31
    blocks = _blocks(specs, page=176)
    reasons = page_reasons(blocks, {0, 2, 4, 6})
    assert set(reasons) == {0, 2, 4, 6}, reasons


def test_a_bullet_items_next_line_and_stacked_list_labels_are_no_headings():
    notice = _blocks([((12, 150, 540, 161), "• Any capitalized term used but not otherwise defined herein shall have "
                       "the meaning", 10.0, False),
                      ((12, 172, 580, 183), "• By accepting the Award, you are deemed to be bound by the terms and "
                       "conditions of the", 10.0, False),
                      ((27, 184, 206, 195), "Stock Option Award and the Award Terms.", 10.0, True),
                      ((12, 206, 426, 218), "You should retain the enclosed duplicate copy of this Notice.", 10.0, False)],
                     page=131)
    assert page_reasons(notice, {2}) == {2: "goes on with the bullet item above"}
    stakeholders = _blocks([((84, 139, 146, 153), "Stakeholder(s)", 10.0, True),
                            ((87, 163, 285, 201), "Many of those affected by motor vehicle crashes are not\n"
                             "traveling in motor vehicles but are pedestrians or riders.\n"
                             "They are the most vulnerable users of the road.", 9.0, False),
                            ((84, 205, 133, 219), "Pedestrians", 10.0, True),
                            ((84, 222, 145, 236), "Bicycle Riders", 10.0, True),
                            ((84, 239, 147, 253), "Scooter Riders", 10.0, True),
                            ((84, 256, 183, 270), "People in Wheel Chairs", 10.0, True),
                            ((84, 300, 560, 340), "Performance indicators for the objective are listed below with "
                             "their\ntargets and the results of the year.", 9.0, False)], page=7)
    reasons = page_reasons(stakeholders, {0, 2, 3, 4, 5})
    assert {k: v for k, v in reasons.items()} == {k: "one of a list of labels" for k in (2, 3, 4, 5)}, reasons
    # an award notice's field names, their values set in a column of their own
    award = _blocks([((82, 96, 520, 128), "Pursuant to the Long-Term Incentive Plan, the Company hereby grants to\n"
                      "the Participant the award set out below, on the terms of the Plan.\n" * 2, 8.0, False),
                     ((114, 142, 155, 151), "Participant:", 8.0, True), ((114, 155, 155, 164), "Grant Date:", 8.0, True),
                     ((114, 169, 174, 177), "Number of DSUs:", 8.0, True)], page=145)
    assert page_reasons(award, {1, 2, 3}) == {k: "one of a list of labels" for k in (1, 2, 3)}


def test_a_bold_subject_whose_box_overlaps_the_next_line_opens_its_sentence():
    # line boxes taller than the line pitch: the next line's box starts above the bold line's bottom
    blocks = _blocks([((37, 455, 278, 492), "Company acquisitions in previous years resulted in low goodwill,\n"
                       "see also section 9. There were no other intangible assets with an\n"
                       "indefinite useful life in the periods under review.", 9.0, False),
                      ((37, 500, 280, 515), "Self created and other Intangible assets with finite useful lives",
                       9.0, True),
                      ((37, 510.5, 279, 628), "are usually amortized on a straight-line basis over a period of\n" * 10,
                       9.0, False)], page=131)
    assert page_reasons(blocks, {1}) == {1: "opens the sentence its paragraph goes on with"}


def test_a_caption_in_the_text_type_over_a_smaller_table_is_no_heading_but_a_page_title_stays():
    from structrag.headings.detect import _row_neighbours

    # a 10-Q's geometry: running text in 10 pt, then a 9.5 pt caption right on top of an 8 pt table's grid
    body = [((50, 43, 294, 237), "Auto and other: The auto and other loan portfolio, including loans at fair\n"
             "value, consists of prime-quality loans and leases.\n" * 8, 10.0, False),
            ((50, 241, 144, 253), "Nonperforming assets", 10.0, True),
            ((50, 253, 290, 289), "The following table presents information as of June 30,\n2023 and December 31, "
             "2022, about consumer,\nexcluding credit card, nonperforming assets.", 10.0, False)]
    table = [((52, 292, 146, 305), "Nonperforming assets(a)", 9.5, True),
             ((196, 309, 225, 318), "June 30,", 8.0, True), ((240, 309, 286, 318), "December 31,", 8.0, False),
             ((52, 318, 91, 328), "(in millions)", 8.0, False), ((207, 318, 225, 328), "2023", 8.0, True),
             ((268, 318, 286, 328), "2022", 8.0, False), ((52, 330, 110, 340), "Nonaccrual loans", 8.0, True)]
    blocks = _blocks(body + table, page=67)
    assert page_reasons(blocks, {1, 3}, _row_neighbours(blocks)) == {3: "captions the table right under it"}
    # the same title opening its page (a statement's): it heads what follows
    top = _blocks(table, page=96)
    assert page_reasons(top, {0}, _row_neighbours(top)) == {}


def test_blank_page_notices_and_letter_notations_are_no_headings():
    for text in ("(THIS PAGE INTENTIONALLY LEFT BLANK)", "[This page intentionally left blank]", "Intentionally Blank"):
        assert text_reason(text, 40) == "blank page notice", text
    for text in ("Enclosures: Agreement on Confidentiality, Non-Competition, and Non-Solicitation", "cc: Jennifer Mann"):
        assert text_reason(text, 170) == "letter notation", text
    assert text_reason("Attachments", 170) is None  # an appendix may be titled so


def test_a_bold_sentence_leading_into_a_list_is_no_heading_but_a_title_with_a_colon_stays(tmp_path):
    from pdfgen import PDFBuilder
    from structrag import extract
    from structrag.headings.whole_text import leads_in
    from structrag.pipeline import detect_headings

    assert leads_in("Asset management fees increased driven by:")
    assert leads_in("Amounts recognized in the consolidated\nbalance sheets consist of:")
    assert not leads_in("Year 2017 results:") and not leads_in("Assets acquired:")
    b = PDFBuilder()
    b.heading("Consolidated Results of Operations", size=12)
    b.para()
    for lead in ("Asset management fees increased driven by:", "Year 2017 results:"):
        b.text(lead, size=10, bold=True, gap_after=2, color=(0.1, 0.3, 0.6))  # blue bold, as a 10-Q sets them
        b.text("• higher management fees on strong net inflows in the wealth management business, and", size=10)
        b.text("• the impact of higher average market levels over the period.", size=10)
        b.para(gap_before=8)
    titles = [h.text for h in detect_headings(extract(b.save(tmp_path / "lead.pdf")), outline="ignore")]
    assert "Year 2017 results:" in titles and "Consolidated Results of Operations" in titles, titles
    assert not [t for t in titles if t.startswith("Asset management")], titles


def test_a_candidate_that_is_a_row_of_amounts_is_no_heading_but_a_title_ending_on_small_numbers_is():
    blocks = _blocks([((72, 100, 300, 112), "Differences between versions 4 and 5", 12.0, True),
                      ((72, 116, 540, 160), "Version 5 changes the syntax of several commands and adds new ones;\n"
                       "scripts written for version 4 mostly run unchanged.\n" * 2, 10.0, False),
                      ((72, 170, 400, 182), "Slots win % 9.4 % 9.2 %", 12.0, True)], page=28)
    assert page_reasons(blocks, {0, 2}) == {2: "table rows"}
