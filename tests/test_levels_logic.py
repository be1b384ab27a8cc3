"""Levels from the document's own logic (issue 23, item 6): note runs under the heading that names them,
end matter back at the top level, nothing under the contents page's title, the printed contents' levels
read relative to the listed headings present.  Real PDFs made with PyMuPDF, and the shared filings."""

from __future__ import annotations

import pytest

pytest.importorskip("pymupdf")

from pdfgen import PDFBuilder  # noqa: E402
from structrag.extraction import extract  # noqa: E402
from structrag.headings.contents import SECONDARY  # noqa: E402
from structrag.levels import assign_levels  # noqa: E402
from structrag.levels.walk.logic import DocumentLogic  # noqa: E402
from structrag.model import Heading  # noqa: E402
from structrag.numbering import parse_numbering  # noqa: E402
from structrag.pipeline import parse_document  # noqa: E402

NOTES = ["Note 1 - Summary of Significant Accounting Policies", "Note 2 - Revenue", "Note 3 - Leases",
         "Note 4 - Debt", "Note 5 - Income Taxes"]


def filing_pdf(path) -> str:
    """A small 10-K: parts and items, the statements' notes printed exactly like the heading that
    introduces them, and signatures and exhibits after the last item set like the items."""
    b = PDFBuilder(header=None)
    b.heading("PART I", size=14)
    b.heading("Item 1. Business", size=12)
    b.para()
    b.heading("Item 1A. Risk Factors", size=12)
    b.para()
    b.heading("PART II", size=14)
    b.heading("Item 7. Management's Discussion and Analysis", size=12)
    b.para()
    b.heading("Item 8. Financial Statements and Supplementary Data", size=12)
    b.para()
    b.heading("Consolidated Balance Sheets", size=11)
    b.para()
    b.heading("Notes to Consolidated Financial Statements", size=11)
    for t in NOTES:
        b.heading(t, size=11)  # the same look as the introducer: layout alone makes them siblings
        b.para()
        b.para()
    b.heading("Item 9. Changes in and Disagreements with Accountants", size=12)
    b.para()
    b.heading("PART IV", size=14)
    b.heading("Item 15. Exhibits and Financial Statement Schedules", size=12)
    b.para()
    b.new_page()
    b.heading("SIGNATURES", size=12)
    b.para("Pursuant to the requirements of the Securities Exchange Act of 1934, the registrant has duly "
           "caused this report to be signed on its behalf by the undersigned, thereunto duly authorized.")
    b.new_page()
    b.heading("Exhibit 31.1", size=12)
    b.heading("Certification", size=11)
    b.para()
    b.new_page()
    b.heading("Exhibit 32", size=12)
    b.para()
    return str(b.save(path))


def _parent(hs, i):
    for k in range(i - 1, -1, -1):
        if hs[k].level < hs[i].level:
            return hs[k].text
    return None


@pytest.fixture(scope="module")
def filing(tmp_path_factory):
    return extract(filing_pdf(tmp_path_factory.mktemp("logic") / "filing.pdf"), progress=False)


@pytest.mark.parametrize("predictor", ["rules", "font-size", "learned"])
def test_notes_nest_under_their_introducer_and_end_matter_returns_to_the_top(filing, predictor):
    parsed = parse_document(filing, outline="ignore", predictor=predictor)
    hs = list(parsed.headings)
    by = {h.text: i for i, h in enumerate(hs)}
    for t in ("PART I", "Item 1. Business", "Notes to Consolidated Financial Statements", "SIGNATURES"):
        assert t in by, (t, [h.text for h in hs])
    intro = by["Notes to Consolidated Financial Statements"]
    for t in NOTES:
        i = by[t]
        assert hs[i].level == hs[intro].level + 1 and _parent(hs, i) == hs[intro].text
        assert hs[i].level_source == "logic"
    top = hs[by["PART I"]].level
    for t in ("SIGNATURES", "Exhibit 31.1", "Exhibit 32"):
        assert hs[by[t]].level == top, (t, [(h.level, h.text) for h in hs])
    # the exhibit's own title stays under it
    assert hs[by["Certification"]].level > top
    # the notes' introducer is a statement: beside the balance sheets, not under them
    assert hs[intro].level == hs[by["Consolidated Balance Sheets"]].level
    assert hs[intro].level_source == "logic"
    assert parsed.stats["levels"]["logic"] == len(NOTES) + 3 + 1


def test_without_the_logic_the_layout_alone_gets_it_wrong(filing):
    """The document above is built so that layout cannot tell: this is what the rules are for."""
    from structrag.pipeline import detect_headings

    hs = detect_headings(filing, outline="ignore")
    res = assign_levels(filing, hs, predictor="rules", document_logic=False)
    lv = {h.text: h.level for h in res.headings}
    assert lv[NOTES[0]] == lv["Notes to Consolidated Financial Statements"]
    assert lv["SIGNATURES"] > lv["PART I"]


def H(text, page=0, level=None, source=None):
    return Heading(text=text, page=page, bbox=(72, 72, 300, 90), block=page, block_end=page + 1,
                   numbering=parse_numbering(text)[0], level=level, level_source=source)


def test_runs_and_end_matter_read_from_the_headings_alone():
    hs = [H("PART II", 0), H("Item 8. Financial Statements", 0), H("Notes to Financial Statements", 1),
          H("Note 1. Basis", 1), H("Note 2. Revenue", 2), H("Note 4. Debt", 3),  # note 3 not detected
          H("Item 9. Controls", 4), H("Signatures", 5), H("Exhibit 31.1", 6), H("Certification", 6),
          H("Exhibit 32", 7), H("Power of Attorney", 8)]
    lg = DocumentLogic(hs)
    assert lg.members == {2: [3, 4, 5]}
    assert set(lg.end_matter) == {7, 8, 10, 11}  # the certification titles its exhibit
    # a financial statement schedule is end matter; an exhibit's "Schedule 1" belongs to the exhibit
    hs4 = [H("Part II"), H("Item 8. Statements"), H("Item 9. Controls", 1), H("Signatures", 2),
           H("Schedule II", 3), H("Exhibit 10.1", 4), H("Schedule 1", 5)]
    assert set(DocumentLogic(hs4).end_matter) == {3, 4, 5}
    # "Item 15. Exhibits" names exhibits but is numbered itself: not an introducer
    hs2 = [H("Item 15. Exhibits and Schedules"), H("Note 1. Basis"), H("Note 2. Other")]
    assert DocumentLogic(hs2).members == {}
    # any labelled run named in the plural: appendices, schedules
    hs3 = [H("Appendices"), H("Appendix A Tables"), H("Appendix B Figures"), H("Appendix C Data")]
    assert DocumentLogic(hs3).members == {0: [1, 2, 3]}


def test_an_exhibit_heads_its_document_the_signatures_head_nothing():
    # style-less headings: the rules predictor keeps each at the previous level, so only the floor moves them
    hs = [H("Part II", 0, 1, "contents"), H("Item 9. Controls", 0, 2, "contents"), H("Signatures", 1),
          H("The Registrant", 1), H("Exhibit 10.1", 2), H("Amendment Letter", 2), H("Introduction", 2)]
    lv = [h.level for h in assign_levels(None, hs, predictor="rules").headings]
    assert lv[2] == 1 and lv[3] == 1  # after the signatures the body is over: nothing is floored
    assert lv[4] == 1 and lv[5] == 2 and lv[6] == 2  # the agreement filed as the exhibit sits under it


def test_no_end_matter_outside_a_filing():
    # a manual's chapter on signatures is a chapter: without parts or items nothing is end matter
    hs = [H("1 Introduction"), H("2 Keys"), H("Signatures", 1), H("Exhibit 1", 2)]
    assert DocumentLogic(hs).end_matter == {}


def test_contents_levels_are_read_relative_to_the_listed_headings_present():
    # the contents lists "Part A" (1), then "Overview" and "Results" (3) whose listed parent (2) was
    # not located: they stay siblings, one level under "Part A", instead of stepping down a level each
    hs = [H("Part A", 0, 1, "contents"), H("Overview", 1, 3, "contents"), H("Results", 2, 3, "contents"),
          H("Outlook", 3, 3, "contents"), H("Part B", 4, 1, "contents")]
    res = assign_levels(None, hs, predictor="rules")
    assert [h.level for h in res.headings] == [1, 2, 2, 2, 1]


def test_a_secondary_contents_run_keeps_how_its_entries_nest():
    # the main contents places "Item 8"; a financial statements index lists its entries flat and one
    # sub-entry: the run's first entry is predicted, the others follow it as the index nests them
    hs = [H("Part II", 0, 1, "contents"), H("Item 8. Financial Statements", 0, 2, "contents"),
          H("Balance Sheets", 1, 1, SECONDARY), H("Statements of Income", 2, 1, SECONDARY),
          H("Notes to the Statements", 3, 1, SECONDARY), H("Accounting Policies", 3, 2, SECONDARY),
          H("Statements of Cash Flows", 4, 1, SECONDARY)]
    res = assign_levels(None, hs, predictor="rules")
    lv = [h.level for h in res.headings]
    first = lv[2]
    assert lv[2:] == [first, first, first, first + 1, first]
    assert [h.level_source for h in res.headings][3:] == [SECONDARY] * 4


def test_nothing_nests_under_the_contents_title():
    # the first listed entries sit at contents level 2 (their listed parent was not located): after
    # the contents page's title they would step under it; they go beside it instead
    hs = [H("Table of Contents", 0), H("Overview", 1, 2, "contents"), H("Results", 2, 2, "contents"),
          H("Outlook", 3, 2, "contents")]
    res = assign_levels(None, hs, predictor="rules")
    assert [h.level for h in res.headings] == [1, 1, 1, 1]
    # without a document the title's text decides; with one it must sit on a contents page
    assert DocumentLogic(hs).leaves == {0}


def test_shared_filing_end_matter_and_notes(shared_data):
    """A real 10-Q: the signature and exhibits at the parts' level, the notes under their introducer."""
    pdf = shared_data / "headings" / "JPMorgan_Chase_2023_Q2_10_Q.pdf"
    if not pdf.is_file():
        pytest.skip("JPMorgan 10-Q not in the shared data")
    parsed = parse_document(extract(pdf, progress=False), outline="ignore")
    hs = list(parsed.headings)
    part2 = next(h for h in hs if h.text.startswith("Part II"))
    ends = [h for h in hs if h.text in ("SIGNATURE", "Exhibit 15", "Exhibit 31.1", "Exhibit 32")]
    assert len(ends) == 4 and all(h.level == part2.level for h in ends)
    i = next(i for i, h in enumerate(hs) if h.text.startswith("Note 12"))
    assert _parent(hs, i).startswith("Notes to Consolidated Financial Statements")
    # the MD&A sections listed after the contents page do not hang under its title
    k = next(i for i, h in enumerate(hs) if h.text.upper() == "TABLE OF CONTENTS")
    assert hs[k + 1].level <= hs[k].level


def test_an_unlisted_heading_of_a_look_given_two_levels_stays_a_sibling_at_either():
    # the contents lists "Risk Management" and, under it, two sections set in the same look; an
    # unlisted heading of that look after them is an entry the contents lost: a sibling of the last
    # listed one, not a sub-section floored under it
    def S(text, page, level=None, source=None):
        return Heading(text=text, page=page, bbox=(72, 72, 300, 90), block=page, block_end=page + 1,
                       font="Arial-Bold", size=12.0, bold=True, numbering=None, level=level, level_source=source)

    hs = [S("Risk Management", 0, 1, "contents"), S("Capital Risk Management", 1, 2, "contents"),
          S("Liquidity Risk Management", 2, 2, "contents"), S("Credit Risk Management", 3),
          S("Market Risk Management", 4, 1, "contents")]
    lv = [h.level for h in assign_levels(None, hs, predictor="rules").headings]
    assert lv == [1, 2, 2, 2, 1]
    # a heading of another look after the listed ones still goes below them
    hs[3] = Heading(text="Credit exposure", page=3, bbox=(72, 72, 300, 90), block=3, block_end=4,
                    font="Arial", size=10.0, bold=False, numbering=None)
    lv = [h.level for h in assign_levels(None, hs, predictor="rules").headings]
    assert lv[3] == 3


def test_a_filings_statements_are_siblings_inside_their_item():
    # the auditor's report, then a critical audit matter's title, then the statements: without the rule the
    # statements would go under the matter's title (style-less here, so the rules predictor nests nothing:
    # the levels are set as a layout model drifting deeper would set them)
    hs = [H("PART II", 0), H("Item 8. Financial Statements", 0),
          H("Report of Independent Registered Public Accounting Firm", 1), H("Critical Audit Matters", 1),
          H("Consolidated Statements of Income", 2), H("Consolidated Balance Sheets", 3),
          H("Notes to Consolidated Financial Statements", 4), H("Note 1. Basis", 4), H("Note 2. Revenue", 5),
          H("Item 9. Controls", 6), H("Consolidated Balance Sheets Analysis", 6)]
    lg = DocumentLogic(hs)
    assert lg.statement_of == {4: 2, 5: 2, 6: 2}  # the analysis after Item 9 is no statement
    drift = dict(zip((h.text for h in hs), [1, 2, 3, 4, 5, 6, 6, 7, 7, 2, 3]))

    class Drifting:
        """Each heading one level deeper than the one before, as a layout model drifting would."""
        name, source, max_retries = "drifting", "drifting", 0

        def begin(self, context):
            pass

        def predict(self, memory, targets, *, attempt=0, feedback=None):
            from structrag.levels.base import LevelPrediction

            return LevelPrediction(tuple(drift[t.text] for t in targets), tuple(1.0 for _ in targets))

    res = assign_levels(None, hs, predictor=Drifting(), floor_after_fixed=False)
    lv = [h.level for h in res.headings]
    assert lv[4] == lv[5] == lv[6] == lv[2] == 3, lv
    assert lv[7] == lv[8] == 4  # the notes go under their introducer
    assert assign_levels(None, hs, predictor=Drifting(), document_logic=False).headings[4].level == 5


class _Fixed:
    """Levels read from a table by text, as a layout model that takes a big look for a top-level title would."""
    name, source, max_retries = "table", "table", 0

    def __init__(self, table):
        self.table = table

    def begin(self, context):
        pass

    def predict(self, memory, targets, *, attempt=0, feedback=None):
        from structrag.levels.base import LevelPrediction

        return LevelPrediction(tuple(self.table[t.text] for t in targets), tuple(1.0 for _ in targets))


def test_unlisted_headings_shallower_than_the_next_listed_one_move_under_the_listed_one_before():
    # the contents list Part I > Item 1, Item 1A; the sub-headings of Item 1 are set large, like the
    # glossary's title the contents put at level 1, and a layout model gives them level 1 and 2: kept so,
    # Item 1A would become a sub-section of "Environmental Regulation".  Moved under Item 1, shape kept.
    hs = [H("Glossary of Terms", 0, 1, "contents"), H("PART I", 1, 1, "contents"),
          H("Item 1. Business", 1, 2, "contents"), H("Executive Summary", 2), H("Overview", 3),
          H("US and Utilities SBU", 4), H("Environmental Regulation", 5), H("Item 1A. Risk Factors", 6, 2, "contents")]
    table = {"Executive Summary": 1, "Overview": 1, "US and Utilities SBU": 2, "Environmental Regulation": 1}
    res = assign_levels(None, hs, predictor=_Fixed(table), document_logic=False)
    assert [h.level for h in res.headings] == [1, 1, 2, 3, 3, 4, 3, 2]
    assert res.stats["moved_under_listed"] == 4
    # the contents list an entry on those pages the locator did not find: the run may belong to it
    from dataclasses import replace

    from structrag.headings.contents import LOST_BEFORE

    hs[-1] = replace(hs[-1], reasons=(LOST_BEFORE + "'Food Storage Guide'",))
    res = assign_levels(None, hs, predictor=_Fixed(table), document_logic=False)
    assert res.stats["moved_under_listed"] == 0


def test_a_located_entry_after_an_unlocated_one_on_its_pages_says_so():
    from structrag.headings.contents import LOST_BEFORE, _mark_lost_before
    from structrag.headings.contents_entries import ContentsEntry

    def E(title, page, label):
        return ContentsEntry(title=title, label=label, page=page, level=2, indent=0.0, numbering=None,
                             contents_page=1, size=9.5, bold=False, mapped="title", level_reason="")

    entries = [E("Power interruptions", 23, "23"), E("Food Storage Guide", 24, "24"), E("Storing fresh food", 24, "24"),
               E("Section Without Page", 24, None), E("Removing the Doors", 26, "26")]
    found = {0: H("Power interruptions", 23), 2: H("Storing fresh food", 24), 4: H("Removing the Doors", 26)}
    _mark_lost_before(entries, found)
    assert found[2].reasons == (LOST_BEFORE + "'Food Storage Guide'",)
    # the lost entry's page is shared with the entry before: either run may hold it; none before page 24 does
    assert found[4].reasons == found[2].reasons and found[0].reasons == ()
    # a divider (no page label) is placed by the contents reader, not lost
    found = {0: H("Power interruptions", 23), 2: H("Storing fresh food", 24)}
    _mark_lost_before([entries[0], entries[3], entries[2]], found)
    assert found[2].reasons == ()
    _mark_lost_before([entries[0], entries[1], entries[2]], found)  # the same with the page-numbered entry
    assert found[2].reasons == (LOST_BEFORE + "'Food Storage Guide'",)
