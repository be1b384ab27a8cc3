"""Heading precision (issue 23): what rounds 8 and 9 of the labelled set still found false.

A column header stacked over another header line and centred over a half-width table, rows whose changes
are written in points ("(2)pts"), the labels of a map, a caption between the sentence that announces a
table and its rows, the rest of a form field's list of names, and a tag in square brackets.  Each test fails
without its rule and checks that the heading it could be mistaken for stays.
"""

from __future__ import annotations

from structrag.headings.not_headings.lists import figure_labels, repeated_fields
from structrag.headings.not_headings import is_table_line, page_reasons
from structrag.headings.whole_text import lone_qualifier

from pdfgen import page_blocks as _blocks

_PROSE = ((36, 48, 578, 82), "Organic net sales of the segment fell in the year, driven by lower volume in\n"
          "the region, partly offset by price realization and mix, as the year before.", 10.0, False)
_ROWS = ((36, 95, 334, 183), "Contributions from organic volume growth (a) (2)pts\nOrganic net price realization "
         "and mix 1 pt\nForeign currency exchange (3)pts\n53rd week 2 pts\nNet sales growth (3)pts", 10.0, False)


def test_rows_of_changes_in_points_are_table_rows():
    assert is_table_line(_blocks([_ROWS])[0])
    apart = ((36, 95, 334, 120), "Organic net price realization and mix 1 pt\n53rd week 2 pts", 10.0, False)
    assert is_table_line(_blocks([apart])[0])
    prose = _blocks([((36, 95, 578, 130), "Margins rose in the year as prices went up faster than the costs of\n"
                      "the goods we buy, by about 25 bps over the whole of the year.", 10.0, False)])[0]
    assert not is_table_line(prose)


def test_a_stacked_column_header_centred_over_a_half_width_table_is_no_heading():
    page = _blocks([_PROSE, ((245, 96, 332, 107), "Fiscal 2020 vs. 2019", 10.0, True),
                    ((246, 107, 331, 118), "Percentage Change", 10.0, True),
                    ((36, 120, 334, 208), _ROWS[1], 10.0, False)])
    assert page_reasons(page, {1}) == {1: "a column header over a table's figures"}
    # a title centred at the top of its page, over a table's header band, stands over its page
    top = _blocks([((267, 53, 345, 62), "Selected Financial Data", 10.0, True),
                   ((270, 63, 342, 72), "Five-Year Summary", 10.0, True),
                   ((36, 80, 334, 168), _ROWS[1], 10.0, False),
                   ((36, 190, 578, 224), _PROSE[1], 10.0, False)])
    assert page_reasons(top, {0}) == {}


def test_a_caption_between_a_table_announced_and_its_rows_is_no_heading():
    rows = ((322, 112, 554, 167), "(in millions) 2023 2022\nBeginning balance $ 4,325 $ 5,350\n"
            "Additions 1,290 1,149\nEnding balance $ 4,114 $ 4,325", 8.0, False)
    announced = _blocks([((320, 55, 555, 93), "The following table presents changes in consumer, excluding\n"
                          "credit card, nonaccrual loans for the six months ended June 30,\n2023 and 2022.",
                          10.0, False),
                         ((322, 97, 419, 108), "Nonaccrual loan activity", 9.5, True), rows])
    assert page_reasons(announced, {1}) == {1: "a caption: the sentence above announces the table under it"}
    # "the following tables" announce several: the title after the sentence may head a sub-section
    several = _blocks([((40, 55, 556, 93), "The following tables summarize benefit costs, as well as the benefit\n"
                        "obligations, plan assets, funded status and rate assumptions of\nthe plans.", 9.0, False),
                       ((40, 97, 176, 108), "Obligations and Funded Status", 9.0, True), rows])
    assert page_reasons(several, {1}) == {}


def test_a_maps_labels_are_no_headings_but_its_title_stays():
    countries = ["FRANCE", "GERMANY", "CANADA", "SWEDEN", "CHINA", "MEXICO", "ITALY", "BRAZIL"]
    specs = [((200, 30, 420, 60), "Global Locations", 24.0, True)]
    for k, name in enumerate(countries):
        x, y = 60 + 60 * (k % 6), 100 + 80 * k
        specs += [((x, y, x + 50, y + 18), name, 14.0, False),
                  ((x, y + 19, x + 80, y + 35), f"Plant {k + 1} MC", 9.5, False)]
    page = _blocks(specs)
    labels = figure_labels(page)
    assert 0 not in labels and {1, 3, 5, 7} <= labels, labels
    assert page_reasons(page, {0, 1, 3}) == {1: "a label of a map or a diagram",
                                             3: "a label of a map or a diagram"}
    # the same look spread over the page beside running text: a page of sub-headings, not a map
    text = ((40, 700, 560, 740), "Each of our plants serves the customers of its region, and we plan to add one.",
            10.0, False)
    assert figure_labels(_blocks(specs + [text])) == set()


def test_a_fields_list_of_names_set_as_a_grid_goes_with_the_field():
    def strategy(page: int, first: int) -> list:
        return _blocks([((96, 215, 216, 232), f"Strategy 6.2.{page}. Diversity", 12.0, True),
                        ((108, 236, 552, 270), "Enhance efforts to recruit, develop, hire, and retain a diverse\n"
                         "workforce in every mode of transportation.", 10.0, False),
                        ((108, 274, 174, 288), "Stakeholder(s):", 10.0, True),
                        ((108, 287, 141, 301), "Women", 10.0, True),
                        ((357, 287, 475, 301), "Individuals with Disabilities", 10.0, True),
                        ((108, 304, 173, 318), "People of Color", 10.0, True),
                        ((108, 328, 209, 342), "Performance Indicators", 10.0, True)], page=page, first=first)

    blocks = [b for k in range(3) for b in strategy(k, 10 * k)]
    got = repeated_fields(blocks, 10.0)
    assert got == {2, 3, 4, 5, 12, 13, 14, 15, 22, 23, 24, 25}, got


def test_a_tag_in_square_brackets_is_no_heading():
    assert lone_qualifier("[ESRS S1 – 2]") and lone_qualifier("[To be determined]")
    assert not lone_qualifier("Item 6. [Reserved]") and not lone_qualifier("Own workforce [ESRS S1]")
