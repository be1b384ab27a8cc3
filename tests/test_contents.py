"""The printed table of contents as a heading signal: generated PDFs, then the shared documents."""

from __future__ import annotations

import json
import warnings

import pytest

from structrag import extract
from structrag.cli import main
from structrag.extraction.contents_pages import Fragment, label_value, page_evidence, row_segments, rows_of
from structrag.headings.contents_entries import ContentsEntry
from structrag.levels.given import assign_contents_levels
from structrag.pipeline import detect_headings, read_contents
from structrag.errors import ConfigError
from structrag.levels import check_levels
from structrag.numbering import parse_numbering
from structrag.pipeline import parse_document, parse_pdf

from pdfgen import PDFBuilder, contents_report

LISTED = ["1 Company Overview", "1.1 History and Structure", "1.2 Markets We Serve", "2 Financial Review",
          "2.1 Revenue Development", "2.2 Cost of Operations", "2.3 Cash and Liquidity", "3 Risk Management",
          "3.1 Credit Risk", "3.2 Market Risk", "4 Outlook", "4.1 Guidance for Next Year"]


def _extract(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return extract(path, **kw)


def _by_source(heads):
    return [h.text for h in heads if h.source == "contents"], [h.text for h in heads if h.source == "layout"]


# --------------------------------------------------------------------------- rows and labels


def F(x0, y0, text, size=10.0, bold=False, width=None):
    w = width if width is not None else 5.0 * len(text)
    return Fragment(x0, y0, x0 + w, y0 + size * 1.2, text, size, bold)


def test_rows_join_a_title_and_a_number_set_half_a_line_low():
    rows = rows_of([F(46, 83, "Item 1. Business"), F(533, 90, "10"), F(46, 103, "Item 1A. Risk Factors"),
                    F(533, 110, "16")])
    assert [[f.text for f in r] for r in rows] == [["Item 1. Business", "10"], ["Item 1A. Risk Factors", "16"]]
    segs = row_segments(rows[0], 100)
    assert [(s.title, s.label) for s in segs] == [("Item 1. Business", "10")]


@pytest.mark.parametrize("text, title, label", [
    ("Revenue . . . . . . . . . 12", "Revenue", "12"),
    ("Foreword ........ iii", "Foreword", "iii"),
    ("Notes to the statements …… F-7", "Notes to the statements", "F-7"),
    ("第一节 释 义......................................................9", "第一节 释 义", "9"),
    ("二、董事、监事持股情况176", "二、董事、监事持股情况", "176"),
    ("一、发行人基本情况 1-1-20", "一、发行人基本情况", "1-1-20"),
    ("Strategic Goal 2 15", "Strategic Goal 2", "15"),
    ("PART II", "PART II", None),  # upper-case roman numbers belong to titles
    ("Item 7", "Item 7", None),  # so does the number after a label word
    ("Fiscal year 2023", "Fiscal year 2023", None),  # a year is no page of a 300-page file
])
def test_labels_are_read_off_the_row(text, title, label):
    (seg,) = row_segments([F(72, 100, text)], 300)
    assert (seg.title, seg.label) == (title, label)


def test_two_entries_on_one_row_are_split():
    row = [F(72, 100, "Strategy", width=60), F(200, 100, "12", width=10), F(320, 100, "Financials", width=60),
           F(500, 100, "80", width=10)]
    assert [(s.title, s.label) for s in row_segments(row, 100)] == [("Strategy", "12"), ("Financials", "80")]


def test_label_values():
    assert label_value("12") == ("", 12)
    assert label_value("iv") == ("roman", 4)
    assert label_value("F-3") == ("F-", 3)
    assert label_value("1-1-20") == ("1-1-", 20)


def test_back_of_book_index_is_not_contents():
    frags = [F(72, 60, "Index", size=16)]
    words = ["alpha", "beta", "delta", "gamma", "kappa", "lambda", "omega", "sigma", "theta", "zeta"]
    for i, w in enumerate(words):
        frags.append(F(72, 100 + 15 * i, f"{w} . . . . . . {(i * 37) % 90 + 3}, {(i * 11) % 50 + 60}"))
    ev = page_evidence(frags, 100)
    assert ev.index and not ev.is_contents()


def test_levels_from_numbering_indentation_and_type():
    def E(title, indent, size=10.0, bold=False):
        return ContentsEntry(title=title, label="1", indent=indent, numbering=parse_numbering(title)[0],
                             size=size, bold=bold)

    filing = [E("PART I", 50, bold=True), E("Item 1. Business", 50), E("Overview", 80), E("Segments", 80),
              E("Item 2. Properties", 50), E("PART II", 50, bold=True), E("Item 5. Market", 50)]
    assert [e.level for e in assign_contents_levels(filing)] == [1, 2, 3, 3, 2, 1, 2]
    # Chinese numbering nests 第X节 > 一、 > （一） whatever the indentation
    cn = [E("第一节 释义", 90), E("一、发行人简介", 90), E("（一）公司概况", 90), E("（二）股权", 90), E("二、股权结构", 90),
          E("第二节 概览", 90)]
    assert [e.level for e in assign_contents_levels(cn)] == [1, 2, 3, 3, 2, 1]
    # decimal depth, then indentation, then type size and weight
    manual = [E("1 Introduction", 72, size=11, bold=True), E("1.1 Scope", 84), E("1.1.1 Terms", 96),
              E("Appendix", 72, size=11, bold=True), E("Glossary", 84), E("2 Methods", 72, size=11, bold=True)]
    levels = [e.level for e in assign_contents_levels(manual)]
    assert levels == [1, 2, 3, 1, 2, 1]
    assert all(e.level_reason for e in assign_contents_levels(manual))


# --------------------------------------------------------------------------- generated reports


@pytest.mark.parametrize("style", ["leaders", "columns", "leading"])
def test_contents_entries_become_headings_beside_layout_ones(tmp_path, style):
    doc = _extract(contents_report(tmp_path / "r.pdf", style=style))
    assert doc.toc_pages == (1,)
    found = read_contents(doc)
    assert found.usable and found.stats["located"] == len(LISTED)
    assert [e.title for e in found.entries] == LISTED
    assert all(e.page >= 2 for e in found.entries)
    heads = detect_headings(doc)
    contents, layout = _by_source(heads)
    assert contents == LISTED
    # the unlisted sub-sections come from the layout, each once
    assert sum(1 for t in layout if t.count(".") == 2 and t[0].isdigit()) == 2 * 8
    for h in heads:
        if h.source == "contents":
            assert h.level == (1 if "." not in h.text.split()[0] else 2) and h.level_source == "contents"
            assert any(r.startswith("contents entry on p.2") for r in h.reasons)
        else:
            assert h.level is None and h.reasons
    assert [h.block for h in heads] == sorted(h.block for h in heads)
    assert len({h.block for h in heads}) == len(heads)
    only_layout = detect_headings(doc, contents="ignore")
    assert all(h.source == "layout" for h in only_layout)


def test_pages_found_by_titles_without_printed_page_numbers(tmp_path):
    doc = _extract(contents_report(tmp_path / "r.pdf", footers=False, front=2))
    found = read_contents(doc)
    assert found.usable
    # printed "1" is the first body page: physical page 3 (cover, preface, contents)
    first = found.entries[0]
    assert (first.label, first.page, first.mapped) == ("1", 3, "title")


def test_roman_front_matter_and_arabic_body(tmp_path):
    doc = _extract(contents_report(tmp_path / "r.pdf", roman_front=True, front=3))
    found = read_contents(doc)
    by_title = {e.title: e for e in found.entries}
    assert by_title["Preface"].label == "ii" and by_title["Preface"].page == 1
    assert by_title["1 Company Overview"].page == 4
    texts = [h.text for h in found.headings]
    assert "Preface" in texts and "1 Company Overview" in texts


def test_two_page_contents(tmp_path):
    doc = _extract(contents_report(tmp_path / "r.pdf", contents_pages=2))
    assert doc.toc_pages == (1, 2)
    found = read_contents(doc)
    assert found.runs == ((1, 2),)
    assert [e.title for e in found.entries] == LISTED
    assert {e.contents_page for e in found.entries} == {1, 2}
    assert found.stats["located"] == len(LISTED)


def test_chinese_contents(tmp_path):
    chapters = (("公司概况", ("发行人简介", "股权结构")), ("风险因素", ("市场风险", "财务风险")))
    doc = _extract(contents_report(tmp_path / "r.pdf", font="china-s", chapters=chapters))
    heads = detect_headings(doc)
    contents = [(h.text, h.level) for h in heads if h.source == "contents"]
    assert contents == [("第一节 公司概况", 1), ("一、发行人简介", 2), ("二、股权结构", 2), ("第二节 风险因素", 1),
                        ("一、市场风险", 2), ("二、财务风险", 2)]
    assert any(h.text.startswith("（一）") and h.source == "layout" for h in heads)


def test_wrapped_entry_and_divider_rows(tmp_path):
    b = PDFBuilder(footer=None)
    b.new_page()
    b.text("Annual Report", size=24, bold=True)
    titles = ["Item 1. Business", "Item 5. Market for the Registrant's Common Equity, Related Stockholder "
              "Matters and Issuer Purchases of Equity Securities", "Item 7. Management's Discussion"]
    body: list[int] = []
    for t in titles:
        b.new_page()
        b.heading(t, size=13)
        b.para()
        body.append(b.doc.page_count - 1)
    for p in range(1, b.doc.page_count):
        b.doc[p].insert_text((290, 800), str(p), fontsize=8)
    page = b.doc.new_page(pno=1)
    page.insert_text((72, 80), "TABLE OF CONTENTS", fontsize=14, fontname="hebo")
    page.insert_text((72, 120), "PART I", fontsize=10, fontname="hebo")
    page.insert_text((72, 140), "Item 1. Business", fontsize=10)
    page.insert_text((520, 140), "1", fontsize=10)
    page.insert_text((72, 160), "PART II", fontsize=10, fontname="hebo")
    # a title wrapped over two rows, the page number on the second, under a hanging indent
    page.insert_text((72, 180), "Item 5. Market for the Registrant's Common Equity, Related Stockholder Matters and",
                     fontsize=10)
    page.insert_text((110, 192), "Issuer Purchases of Equity Securities", fontsize=10)
    page.insert_text((520, 192), "2", fontsize=10)
    page.insert_text((72, 212), "Item 7. Management's Discussion", fontsize=10)
    page.insert_text((520, 212), "3", fontsize=10)
    path = b.save(tmp_path / "k.pdf")
    doc = _extract(path)
    found = read_contents(doc)
    assert [(e.title[:30], e.label, e.level) for e in found.entries] == [
        ("PART I", None, 1), ("Item 1. Business", "1", 2), ("PART II", None, 1),
        ("Item 5. Market for the Registr", "2", 2), ("Item 7. Management's Discussio", "3", 2)]
    assert found.entries[3].title.endswith("Issuer Purchases of Equity Securities")
    assert found.entries[2].page == found.entries[3].page == 3  # a divider points where the next entry does


def _filing_with_dividers(tmp_path):
    """A filing whose contents groups its items under "PART I" / "PART II", lines the body never prints."""
    b = PDFBuilder(footer=None)
    b.new_page()
    b.text("Annual Report", size=24, bold=True)
    for t in ("Item 1. Business", "Item 2. Properties", "Item 5. Market for Equity", "Item 7. Management's Discussion"):
        b.new_page()
        b.heading(t, size=13)
        b.para()
        b.heading("Overview", size=11)
        b.para()
    for p in range(1, b.doc.page_count):
        b.doc[p].insert_text((290, 800), str(p), fontsize=8)
    page = b.doc.new_page(pno=1)
    page.insert_text((72, 80), "TABLE OF CONTENTS", fontsize=14, fontname="hebo")
    rows = [("PART I", None, True), ("Item 1. Business", "1", False), ("Item 2. Properties", "2", False),
            ("PART II", None, True), ("Item 5. Market for Equity", "3", False),
            ("Item 7. Management's Discussion", "4", False), ("Item 8. Financial Statements", "4", False)]
    for k, (t, label, bold) in enumerate(rows):
        page.insert_text((72, 120 + 20 * k), t, fontsize=10, fontname="hebo" if bold else "helv")
        if label:
            page.insert_text((520, 120 + 20 * k), label, fontsize=10)
    return b.save(tmp_path / "dividers.pdf")


def test_contents_dividers_the_body_never_prints_head_their_items(tmp_path):
    path = _filing_with_dividers(tmp_path)
    heads = detect_headings(_extract(path), outline="ignore")
    titles = [h.text for h in heads]
    assert titles.index("PART I") < titles.index("Item 1. Business") < titles.index("PART II") \
        < titles.index("Item 5. Market for Equity"), titles
    for t, first in (("PART I", "Item 1. Business"), ("PART II", "Item 5. Market for Equity")):
        h = heads[titles.index(t)]
        # no box, no text of its own: it starts where its first item starts
        assert h.bbox is None and h.block == h.block_end == heads[titles.index(first)].block
        assert h.source == "contents" and h.level == 1
    # an entry with a page number that is not on its page is a missed title: nothing is made up for it
    assert "Item 8. Financial Statements" not in titles
    parsed = parse_pdf(path)
    levels = {h.text: h.level for h in parsed.headings}
    assert levels["PART I"] == levels["PART II"] == 1
    assert levels["Item 1. Business"] == levels["Item 7. Management's Discussion"] == 2
    assert levels["Overview"] == 3


def test_contents_in_two_columns_reads_down_each_column(tmp_path):
    b = PDFBuilder(footer=None)
    b.new_page()
    b.text("Owner's Guide", size=24, bold=True)
    left = [(0, "Safety First"), (1, "Electrical Needs"), (1, "Grounding"), (0, "Installation"), (1, "Unpacking"),
            (1, "Leveling")]
    right = [(0, "Daily Use"), (1, "Controls"), (1, "Cleaning"), (0, "Troubleshooting"), (1, "Noises"),
             (1, "Service")]
    pages = {}
    for _, t in left + right:
        b.new_page()
        b.heading(t, size=14 if t in ("Safety First", "Installation", "Daily Use", "Troubleshooting") else 11)
        b.para()
        pages[t] = b.doc.page_count - 1
    page = b.doc.new_page(pno=1)
    page.insert_text((72, 80), "Contents", fontsize=16, fontname="hebo")
    for col, items in ((72, left), (320, right)):
        for k, (lv, t) in enumerate(items):
            x = col + 12 * lv
            page.insert_text((x, 120 + 16 * k), t, fontsize=10)
            page.insert_text((col + 200, 120 + 16 * k), str(pages[t] + 1), fontsize=10)
    doc = _extract(b.save(tmp_path / "two.pdf"))
    found = read_contents(doc)
    assert [e.title for e in found.entries] == [t for _, t in left + right]
    assert [e.level for e in found.entries] == [lv + 1 for lv, _ in left + right]
    assert found.usable and found.stats["located"] == 12


# --------------------------------------------------------------------------- bad input


def test_contents_pointing_past_the_end(tmp_path):
    """A truncated file: entries whose pages are gone keep page -1 and give no heading; the tree is valid."""
    doc = _extract(contents_report(tmp_path / "r.pdf"), max_pages=4)
    found = read_contents(doc)
    assert found.usable
    gone = [e for e in found.entries if e.title.startswith(("3", "4"))]
    assert gone and all(e.page == -1 for e in gone)
    assert all(h.page < 4 for h in found.headings)
    parsed = parse_document(doc, predictor="rules")
    assert check_levels([h.level for h in parsed.headings], 0) is None


def test_labels_all_past_the_end_are_not_used(tmp_path):
    b = PDFBuilder(footer=None)
    b.heading("Contents", size=16)
    for i, t in enumerate(["Strategy", "Operations", "People", "Governance", "Financial Statements", "Notes"]):
        b.page.insert_text((72, 140 + 18 * i), f"{t} . . . . . . . . . . . . . . . .", fontsize=10)
        b.page.insert_text((500, 140 + 18 * i), str(300 + 40 * i), fontsize=10)
    b.new_page()
    b.heading("Strategy", size=14)
    b.para()
    doc = _extract(b.save(tmp_path / "x.pdf"))
    found = read_contents(doc)
    assert not found.usable and all(e.page == -1 for e in found.entries)
    heads = detect_headings(doc)
    assert heads and all(h.source == "layout" for h in heads)


def test_contents_page_without_numbers(tmp_path):
    b = PDFBuilder(footer=None)
    b.heading("Contents", size=16)
    for t in ["Strategy", "Operations", "People", "Governance"]:
        b.text(t)
    for t in ["Strategy", "Operations", "People", "Governance"]:
        b.new_page()
        b.heading(t, size=14)
        b.para()
    doc = _extract(b.save(tmp_path / "n.pdf"))
    assert doc.toc_pages == ()
    parsed = parse_document(doc, predictor="rules")
    assert check_levels([h.level for h in parsed.headings], 0) is None
    assert {"Strategy", "Governance"} <= {h.text for h in parsed.headings}


def test_document_that_is_all_contents_lines(tmp_path):
    b = PDFBuilder(footer=None)
    for p in range(3):
        b.new_page()
        b.heading("Table of Contents", size=16)
        for i in range(20):
            b.page.insert_text((72, 140 + 18 * i), f"Section {p * 20 + i} title . . . . . . . . .", fontsize=10)
            b.page.insert_text((500, 140 + 18 * i), str(1 + (p * 20 + i) // 10), fontsize=10)
    doc = _extract(b.save(tmp_path / "all.pdf"))
    assert doc.toc_pages == (0, 1, 2)
    found = read_contents(doc)
    assert not found.usable and found.headings == ()
    parsed = parse_document(doc, predictor="rules")
    assert check_levels([h.level for h in parsed.headings], 0) is None
    assert all(h.source == "layout" for h in parsed.headings)


def test_bad_contents_mode():
    with pytest.raises(ConfigError, match="contents must be"):
        detect_headings(None, outline="ignore", contents="maybe")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- pipeline, levels, CLI


@pytest.mark.parametrize("predictor", ["learned", "rules", "font-size", "size-rank", "numbering"])
def test_pipeline_keeps_contents_levels_and_predicts_the_rest(tmp_path, predictor):
    path = contents_report(tmp_path / "r.pdf")
    parsed = parse_pdf(path, predictor=predictor)
    heads = parsed.headings
    assert check_levels([h.level for h in heads], 0) is None
    for h in heads:
        if h.source == "contents":
            assert h.level_source == "contents" and h.level == (1 if "." not in h.text.split()[0] else 2)
    # the unlisted sub-sections sit below the listed sections they follow
    last = 0
    for h in heads:
        if h.source == "contents":
            last = h.level
        elif last:
            assert h.level > last
    st = parsed.stats["levels"]
    assert st["fixed"] == len(LISTED) and st["fixed_projected"] == 0
    assert parsed.stats["heading_sources"]["contents"] == len(LISTED)
    plain = parse_pdf(path, predictor=predictor, contents="ignore")
    assert "contents" not in plain.stats["heading_sources"]


def test_outline_still_wins(tmp_path):
    path = contents_report(tmp_path / "r.pdf")
    import pymupdf

    d = pymupdf.open(path)
    d.set_toc([[1, "1 Company Overview", 3], [1, "2 Financial Review", 4], [1, "3 Risk Management", 6]])
    d.save(tmp_path / "o.pdf")
    d.close()
    heads = detect_headings(_extract(tmp_path / "o.pdf"))
    assert {h.source for h in heads} == {"outline"}


def test_cli_reports_sources_and_ignores_contents(tmp_path, capsys):
    path = contents_report(tmp_path / "r.pdf")
    assert main(["toc", str(path), "--json", "--predictor", "rules"]) == 0
    hs = json.loads(capsys.readouterr().out)["headings"]
    assert {h["source"] for h in hs} == {"contents", "layout"}
    assert [h["text"] for h in hs if h["source"] == "contents"] == LISTED
    assert main(["toc", str(path), "--json", "--predictor", "rules", "--ignore-contents"]) == 0
    hs = json.loads(capsys.readouterr().out)["headings"]
    assert {h["source"] for h in hs} == {"layout"}
    assert main(["toc", str(path), "--predictor", "rules"]) == 0
    assert "12 contents" in capsys.readouterr().out.splitlines()[0]


# --------------------------------------------------------------------------- shared documents


def _shared(shared_data, rel, **kw):
    return _extract(shared_data / rel, **kw)


def test_filing_contents_with_numbers_in_their_own_column(shared_data):
    doc = _shared(shared_data, "headings/Albany_International_2022.pdf")
    found = read_contents(doc)
    assert found.usable
    items = [e for e in found.entries if e.title.startswith("Item") and e.contents_page == found.runs[0][0]]
    assert len(items) >= 18 and all(e.label is not None and e.page > 10 for e in items)
    parts = [e for e in found.entries if e.title.startswith("PART")]
    assert parts and all(e.level < items[0].level for e in parts)
    wrapped = next(e for e in items if e.title.startswith("Item 5."))
    assert wrapped.title.endswith("Equity Securities")


def test_annual_report_with_leading_page_numbers(shared_data):
    doc = _shared(shared_data, "headings/SMA_Solar_Annual_Report_2023.pdf")
    assert 6 in doc.toc_pages
    found = read_contents(doc)
    assert found.usable and found.stats["runs"][0]["located"] >= 15


def test_chinese_prospectus_contents_tree(shared_data):
    """目录 of a prospectus without an outline: 第X节 at level 1, 一、 at level 2, located on their pages."""
    doc = _shared(shared_data, "prospectus-zh/湖南南岭民用爆破器材股份有限公司.pdf")
    found = read_contents(doc)
    assert found.usable and found.stats["located"] >= 100
    levels = {h.text.split()[0][:2]: h.level for h in found.headings}
    assert levels["第一"] == 1
    assert all(h.level == 2 for h in found.headings if h.text.startswith(("一、", "二、")))
    assert check_levels([h.level for h in found.headings], 0) is None


def test_contents_raise_recall_against_the_outline(shared_data):
    """Outline ignored: the contents finds what layout detection missed on a filing and an annual report."""
    from eval.trees import heading_prf, load_outline

    for doc_id in ["TD_SYNNEX_FY2022", "TransUnion_Annual_Report_2022"]:
        doc = _shared(shared_data, f"headings/{doc_id}.pdf")
        ref = load_outline(shared_data / "headings" / f"{doc_id}.toc.json")
        layout = heading_prf([(h.text, 1, h.page) for h in detect_headings(doc, outline="ignore", contents="ignore")],
                             ref, page_window=1)
        both = heading_prf([(h.text, 1, h.page) for h in detect_headings(doc, outline="ignore")], ref, page_window=1)
        # the layout rules already find most of TD SYNNEX's headings (0.94 since wrapped titles are joined
        # whole, issue 23: one more entry than the 0.93 this margin of 0.02 was set at); the contents adds the rest
        assert both.recall >= layout.recall + 0.01 and both.recall >= 0.95, (doc_id, layout, both)
        assert both.precision >= layout.precision - 0.02


def test_a_contents_entry_takes_the_title_its_page_prints_unless_the_title_wraps_on(tmp_path):
    from structrag.headings.outline import locate_outline
    from structrag.model import OutlineEntry

    b = PDFBuilder()
    b.heading("Consolidated balance sheets (unaudited)", size=12)
    b.para()
    b.heading("Item 3. Quantitative and Qualitative Disclosures About", size=12, gap_after=3)
    b.heading("Market Risk.", size=12, gap_before=0)
    b.para()
    doc = _extract(b.save(tmp_path / "printed.pdf"))
    entries = [OutlineEntry(1, "Consolidated balance sheets (unaudited) at June 30, 2023 and December 31, 2022", 0),
               OutlineEntry(1, "Item 3. Quantitative and Qualitative Disclosures About Market Risk.", 0)]
    got = [le.heading.text for le in locate_outline(doc, entries, source="contents")]
    # the entry describes more than the page prints; the second title wraps onto the next line
    assert got == ["Consolidated balance sheets (unaudited)",
                   "Item 3. Quantitative and Qualitative Disclosures About Market Risk."], got
    # an outline's own titles stand as given
    got = [le.heading.text for le in locate_outline(doc, entries[:1], source="outline")]
    assert got == [entries[0].title]
