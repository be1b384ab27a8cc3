"""Trees a user sees in every hit's section path: the patterns of errors seen on real filings, reproduced on
generated PDFs (each test fails without the rule it names)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest  # noqa: E402
from pdfgen import _PROSPECTUS, contents_report, prospectus_pdf  # noqa: E402

from structrag import parse_pdf  # noqa: E402
from structrag.headings.contents import SECONDARY  # noqa: E402
from structrag.model import Heading  # noqa: E402
from structrag.levels import assign_levels  # noqa: E402


def test_the_contents_pages_title_block_heads_no_tree(tmp_path):
    # a 10-K prints "FORM 10-K / For the Year Ended ..." over its contents and again over Part I: the
    # contents reads the period line as a divider entry, found on the first body page; it is no section
    pdf = contents_report(tmp_path / "k.pdf", title_block=("ACME HOLDINGS", "For the Year Ended December 31, 2024"))
    tree = parse_pdf(pdf, outline="ignore").tree
    texts = [h.text for h in tree.headings]
    assert "For the Year Ended December 31, 2024" not in texts
    assert [h.level for h in tree.headings if h.text == "1 Company Overview"] == [1]


def _heading(text: str, page: int, k: int, *, level=None, source="layout", level_source=None) -> Heading:
    return Heading(text=text, page=page, bbox=(72.0, 100.0 + 20 * k, 400.0, 114.0 + 20 * k), block=k, block_end=k + 1,
                   size=11.0, bold=True, source=source, level=level, level_source=level_source)


def test_nothing_nests_under_a_financial_statement():
    # a filing's item 8: the statements are siblings, and what the statements' index lists after them (a
    # schedule of segment data) is not a part of the last statement, nor are the notes
    spec = [("Item 7. Management's Discussion and Analysis", 10, 1), ("Item 8. Financial Statements", 20, 1),
            ("Report of Independent Registered Public Accounting Firm", 21, None),
            ("Consolidated Statements of Operations", 22, None), ("Consolidated Statements of Cash Flows", 23, None),
            ("Consolidated Statements of Equity", 24, None), ("Summary of Business Segment Data", 25, "run"),
            ("Acme Holdings and Subsidiaries Notes to the Consolidated Financial Statements", 26, None),
            ("Note 1 - Summary of Significant Accounting Policies", 26, None), ("Note 2 - Revenue", 28, None),
            ("Item 9. Changes in and Disagreements with Accountants", 40, 1)]
    # "run": an entry of the secondary contents (the statements' own index), its level within that run
    heads = [_heading(t, p, k, level=1 if lv == "run" else lv, source="contents" if lv else "layout",
                      level_source=SECONDARY if lv == "run" else "contents" if lv else None)
             for k, (t, p, lv) in enumerate(spec)]
    got = {h.text: h.level for h in assign_levels(None, heads, predictor="rules").headings}
    equity = got["Consolidated Statements of Equity"]
    assert got["Consolidated Statements of Operations"] == equity == got["Consolidated Statements of Cash Flows"]
    assert got["Summary of Business Segment Data"] <= equity
    notes = got["Acme Holdings and Subsidiaries Notes to the Consolidated Financial Statements"]
    assert notes == equity  # the notes' title, the registrant's name before it, is one of the statements
    assert got["Note 1 - Summary of Significant Accounting Policies"] == notes + 1


@pytest.mark.parametrize("predictor", ["rules", "learned"])
def test_a_note_never_nests_under_the_statement_before_it(predictor):
    # a filing that prints no "Notes to ..." title: the first note follows the cash-flow statement on the next
    # page; its number says it opens a note, not a part of the statement (the statement's own row groups,
    # unnumbered, on its page, may still nest under it)
    spec = [("Item 7. Management's Discussion and Analysis", 10, 1), ("Item 8. Financial Statements", 20, 1),
            ("Report of Independent Registered Public Accounting Firm", 21, None),
            ("CONSOLIDATED STATEMENTS OF INCOME", 22, None), ("CONSOLIDATED BALANCE SHEETS", 23, None),
            ("CONSOLIDATED STATEMENTS OF CASH FLOWS", 24, None), ("1. Accounting Policies", 25, None),
            ("Basis of Consolidation", 25, None), ("2. Revenue", 27, None),
            ("Item 9. Changes in and Disagreements with Accountants", 40, 1)]
    heads = [_heading(t, p, k, level=lv, source="contents" if lv else "layout",
                      level_source="contents" if lv else None) for k, (t, p, lv) in enumerate(spec)]
    out = assign_levels(None, heads, predictor=predictor).headings
    got = {h.text: h.level for h in out}
    cash = got["CONSOLIDATED STATEMENTS OF CASH FLOWS"]
    assert got["CONSOLIDATED STATEMENTS OF INCOME"] == cash
    assert got["1. Accounting Policies"] <= cash, [(h.text, h.level) for h in out]


def test_a_clause_title_set_in_its_paragraphs_first_line_is_the_section():
    # an exhibit's plan: "1.1. Objective. It is the intent ..." is the section "1.1. Objective", not the
    # line cut where the page ends it
    from structrag.headings.whole_text import run_in_title

    assert run_in_title("1.1. Objective. It is the intent of Acme Company to provide a compensation program that "
                        "will attract and") == "1.1. Objective"
    assert run_in_title("(b) Transfers. A transfer of employment among members of the Controlled Group, without "
                        "interruption, is") == "(b) Transfers"
    assert run_in_title("(i) 100 Percent Survivor Option: The Participant shall receive a reduced pension") \
        == "(i) 100 Percent Survivor Option"
    # titles that only look like it
    assert run_in_title("Item 7. Management's Discussion and Analysis of Financial Condition and Results") is None
    assert run_in_title("2.3 U.S. Operations and International Operations of the Company in 2023") is None
    assert run_in_title("Exhibit 300: Part II: Planning, Acquisition and Performance Information") is None
    assert run_in_title("1.1. Objective") is None  # a title alone



def test_a_printed_list_of_figures_gives_no_headings(tmp_path):
    # a list of figures is set like the contents ("Figure 3: ... . . . 5"): its rows are captions, found on
    # their pages like contents entries, and they would head the sub-sections printed under them
    pdf = contents_report(tmp_path / "lof.pdf", figures=True)
    tree = parse_pdf(pdf, outline="ignore").tree
    assert not [h.text for h in tree.headings if h.text.startswith("Figure ")]
    levels = {h.text: h.level for h in tree.headings}
    assert levels["1.2 Markets We Serve"] == 2 and levels["1.2.1 Detail 1 of markets we serve"] == 3


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_prospectus_cover_heads_neither_its_front_matter_nor_its_sections(tmp_path, lang):
    # an IPO prospectus: the issuer, its address, the title, the underwriter's label, name and address on the
    # cover, the title again on page 2; the issuer's statement, the important matters, the contents and the
    # definitions are no part of the underwriter's name, nor is any numbered section: every hit of them showed
    # the path "首次公开发行股票招股意向书 > 财富证券有限责任公司 > ..."
    spec = _PROSPECTUS[lang]
    tree = parse_pdf(prospectus_pdf(tmp_path / "p.pdf", lang), outline="ignore").tree
    cover = {" ".join(t.split()) for t, _ in spec["cover"]} | set(spec["repeat"])
    front = set(spec["front"]) | {spec["contents"], spec["glossary"]}
    texts = [" ".join(n.text.split()) for n in tree.nodes if n.heading is not None]
    for name in front | set(spec["sections"]):
        assert name in texts, name
    by_text = {" ".join(n.text.split()): n for n in tree.nodes if n.heading is not None}
    for name in front | set(spec["sections"]):
        node = by_text[name]
        assert not cover & {" ".join(a.text.split()) for a in tree.ancestors(node.index)}, (name, tree.to_text())
        # the front matter sits at the top level, beside the first numbered section
        assert node.level == by_text[spec["sections"][0]].level == 1, (name, tree.to_text())
    # an address is never a heading; the important matters still head their own sub-sections
    assert not [t for t in texts if t in (spec["cover"][1][0], spec["cover"][-1][0])], tree.to_text()
    for sub in spec["front_subs"]:
        assert by_text[sub].parent == by_text[spec["front"][1]].index, tree.to_text()
    for sub in spec["subs"]:
        assert tree.parent(by_text[sub].index).text == spec["sections"][-1], tree.to_text()


@pytest.mark.parametrize("title, heads", [
    ("Figure 4.1. Test Point VDDTP for AVDD33 Noise Tolerance", False), ("Table 4.2. Normal Operating Conditions", False),
    ("Figura 16: Librería gdi32.dll cargada en memoria", False), ("Illustration 2: Obfuscated dropper code", False),
    ("TABLE A - CALCULATION OF PENSIONS", True), ("2022 Summary Compensation Table", True), ("1.2 Markets We Serve", True),
])
def test_which_contents_rows_are_captions(title, heads):
    # a list of figures or tables numbers its rows; a lettered table in a plan's contents opens a schedule
    from structrag.headings.contents import _heads_no_section

    assert _heads_no_section(title, 5) is not heads
