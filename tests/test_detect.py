"""Heading detection on generated PDFs, numbering parsing, outline use."""

from __future__ import annotations

import json

import pytest

from structrag import extract
from structrag.pipeline import detect_headings
from structrag.numbering import continues, is_bare_label, opens_child, parse_numbering

from pdfgen import LOREM, PDFBuilder, numbered_report


@pytest.mark.parametrize(
    "text, scheme, values, rest",
    [
        ("1 Introduction", "decimal", (1,), "Introduction"),
        ("2.3 Results of operations", "decimal", (2, 3), "Results of operations"),
        ("1.2.3. Detail", "decimal", (1, 2, 3), "Detail"),
        ("IV. Governance", "roman", (4,), "Governance"),
        ("A. Overview", "alpha", (1,), "Overview"),
        ("(a) Basis of presentation", "paren-alpha", (1,), "Basis of presentation"),
        ("(iv) Leases", "paren-roman", (4,), "Leases"),
        ("Item 1A. Risk Factors", "item", (1, 1), "Risk Factors"),
        ("ITEM 7. MANAGEMENT'S DISCUSSION", "item", (7, 0), "MANAGEMENT'S DISCUSSION"),
        ("Part II", "part", (2,), ""),
        ("Note 12 Income taxes", "note", (12,), "Income taxes"),
        ("Schedule II Valuation", "schedule", (2,), "Valuation"),
        ("第一节 释义", "cn-section", (1,), "释义"),
        ("第十二章 附则", "cn-chapter", (12,), "附则"),
        ("一、公司基本情况", "cn-ordinal", (1,), "公司基本情况"),
        ("（三）主要产品", "cn-paren", (3,), "主要产品"),
    ],
)
def test_parse_numbering(text, scheme, values, rest):
    num, r = parse_numbering(text)
    assert num is not None and num.scheme == scheme and num.values == values
    assert r == rest


@pytest.mark.parametrize("text", ["2022 Highlights", "3 months ended June 30", "Revenue", "10 % of sales", ""])
def test_not_numbering(text):
    num, _ = parse_numbering(text)
    assert num is None or (num.scheme == "decimal" and text.startswith("2022") is False)


def test_continuity():
    n = lambda t: parse_numbering(t)[0]  # noqa: E731
    assert continues(n("2.2 A"), n("2.3 B"))
    assert not continues(n("2.2 A"), n("2.4 B"))
    assert continues(n("Item 7. A"), n("Item 7A. B"))
    assert continues(n("Item 7A. A"), n("Item 8. B"))
    assert continues(n("（二）甲"), n("（三）乙"))
    assert not continues(n("1 A"), n("(b) B"))
    assert opens_child(n("2 A"), n("2.1 B"))
    assert not opens_child(n("2 A"), n("3.1 B"))
    assert is_bare_label("Item 7.") and is_bare_label("1.2") and not is_bare_label("Item 7. Business")


def test_lone_c_d_l_m_are_letters_of_a_lettered_run():
    """A lone C, D, L or M numbers the third, fourth, twelfth, thirteenth entry of a lettered run, never
    Roman 100, 500, 50, 1000; lone I, V and X stay Roman ("Part V")."""
    n = lambda t: parse_numbering(t)[0]  # noqa: E731
    assert (n("C. Risk factors").scheme, n("C. Risk factors").values) == ("alpha", (3,))
    assert n("c) Other matters").values == (3,) and n("L. Leases").values == (12,)
    assert continues(n("B. Business"), n("C. Competition")) and continues(n("C. Competition"), n("D. Debt"))
    assert continues(n("Appendix B Methods"), n("Appendix C Glossary"))
    assert n("Schedule C").values == (3,) and n("Exhibit D").values == (4,)
    assert n("V. Summary").values == (5,) and n("XL. Forty").values == (40,) and n("Part V").values == (5,)


def test_detects_numbered_headings_and_not_body(tmp_path):
    path = numbered_report(tmp_path / "r.pdf", chapters=2, sections=2, subsections=1)
    doc = extract(path)
    heads = detect_headings(doc, outline="ignore")
    texts = [h.text for h in heads]
    want = ["1 Chapter One", "1.1 Section 1.1 results", "1.1.1 Detail 1.1.1 discussion",
            "1.2 Section 1.2 results", "1.2.1 Detail 1.2.1 discussion", "2 Chapter Two",
            "2.1 Section 2.1 results", "2.1.1 Detail 2.1.1 discussion", "2.2 Section 2.2 results",
            "2.2.1 Detail 2.2.1 discussion"]
    assert texts == want
    for h in heads:
        assert h.source == "layout" and h.level is None
        assert h.score >= 2.0 and h.reasons
        assert h.numbering is not None and h.numbering.scheme == "decimal"
        assert doc.blocks[h.block].text.startswith(h.text.split()[0])
    big = heads[0]
    assert any(r.startswith("size") for r in big.reasons) and any(r.startswith("bold") for r in big.reasons)


def test_multi_line_heading_is_joined(tmp_path):
    b = PDFBuilder(footer=None, width=300)
    b.heading("Management's Discussion and Analysis of Financial Condition and Results of Operations", size=14)
    b.para()
    path = b.save(tmp_path / "ml.pdf")
    doc = extract(path)
    heads = detect_headings(doc, outline="ignore")
    assert [h.text for h in heads] == [
        "Management's Discussion and Analysis of Financial Condition and Results of Operations"]
    assert doc.blocks[heads[0].block].line_count >= 2 or heads[0].block_end - heads[0].block >= 2


def test_label_and_title_on_one_row_are_one_heading(tmp_path):
    b = PDFBuilder(footer=None)
    p = b.page
    p.insert_text((72, 100), "Item 7.", fontsize=11, fontname="hebo")
    p.insert_text((140, 100), "Management's Discussion and Analysis", fontsize=11, fontname="hebo")
    p.insert_text((72, 130), LOREM[:90], fontsize=10)
    path = b.save(tmp_path / "item.pdf")
    doc = extract(path)
    heads = detect_headings(doc, outline="ignore")
    assert heads[0].text == "Item 7. Management's Discussion and Analysis"
    assert heads[0].numbering.scheme == "item"


def test_table_cells_and_sentences_are_not_headings(tmp_path):
    b = PDFBuilder(footer=None)
    b.heading("Results", size=16)
    p = b.page
    for i, (label, v) in enumerate([("Total revenue", "1,577"), ("Net income", "402")]):
        p.insert_text((72, 150 + 14 * i), label, fontsize=10, fontname="hebo")
        p.insert_text((400, 150 + 14 * i), v, fontsize=10, fontname="hebo")
    b.y = 200
    b.text("This whole sentence is set in bold type but it is a sentence.", bold=True)
    b.para()
    path = b.save(tmp_path / "t.pdf")
    heads = detect_headings(extract(path), outline="ignore")
    assert [h.text for h in heads] == ["Results"]


def test_cjk_headings(tmp_path):
    b = PDFBuilder(font="china-s", footer=None)
    b.heading("第一节 释义", size=16, bold=False)
    b.para("本公司主要从事电子元器件的分销业务，报告期内营业收入持续增长，毛利率保持稳定。" * 3)
    b.heading("一、公司基本情况", size=13, bold=False)
    b.para("公司成立于二零零一年，注册资本为人民币一亿元。" * 4)
    path = b.save(tmp_path / "cjk.pdf")
    heads = detect_headings(extract(path), outline="ignore")
    assert [h.text for h in heads] == ["第一节 释义", "一、公司基本情况"]
    assert [h.numbering.scheme for h in heads] == ["cn-section", "cn-ordinal"]


def test_no_headings_gives_empty_list(tmp_path):
    b = PDFBuilder(footer=None)
    for _ in range(5):
        b.para()
    heads = detect_headings(extract(b.save(tmp_path / "plain.pdf")), outline="ignore")
    assert heads == ()


def test_outline_is_used_unless_ignored(tmp_path):
    path = numbered_report(tmp_path / "r.pdf", chapters=2, sections=1, subsections=1, with_toc=True)
    doc = extract(path)
    assert len(doc.outline) == 6
    heads = detect_headings(doc)  # outline="auto"
    assert [h.source for h in heads] == ["outline"] * 6
    assert [h.level for h in heads] == [1, 2, 3, 1, 2, 3]
    assert all(h.bbox is not None and h.level_source == "outline" for h in heads)
    ignored = detect_headings(doc, outline="ignore")
    assert all(h.source == "layout" and h.level is None for h in ignored)
    assert [h.text for h in ignored] == [h.text for h in heads]


def test_outline_entry_not_printed_is_kept(tmp_path):
    path = numbered_report(tmp_path / "r.pdf", chapters=1, sections=1, subsections=0)
    import pymupdf

    d = pymupdf.open(path)
    d.set_toc([[1, "Cover", 1], [1, "1 Chapter One", 1], [2, "1.1 Section 1.1 results", 1]])
    p2 = tmp_path / "r2.pdf"
    d.save(p2)
    heads = detect_headings(extract(p2))
    assert [h.text for h in heads] == ["Cover", "1 Chapter One", "1.1 Section 1.1 results"]
    assert heads[0].bbox is None and heads[1].bbox is not None


def test_bad_outline_mode():
    from structrag.errors import ConfigError

    with pytest.raises(ConfigError):
        detect_headings(None, outline="maybe")  # type: ignore[arg-type]


def test_business_reports_recall(shared_data):
    """Outline headings found by detection (outline ignored), same page +-1: >= 0.85 on average."""
    import warnings

    from structrag.text import normalize_title
    import difflib

    def sim(a, b):
        if a == b:
            return 1.0
        if a and b and (a in b or b in a) and min(len(a), len(b)) >= 4:
            return 0.9
        return difflib.SequenceMatcher(None, a, b).ratio()

    recalls = []
    for doc_id in ["Verizon_2022_10_K", "SMA_Solar_Annual_Report_2023", "US_DOT_2022_agency_plan"]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            doc = extract(shared_data / "headings" / f"{doc_id}.pdf")
        toc = json.loads((shared_data / "headings" / f"{doc_id}.toc.json").read_text())["toc"]
        by_page: dict[int, list[str]] = {}
        for h in detect_headings(doc, outline="ignore"):
            by_page.setdefault(h.page, []).append(normalize_title(h.text))
        hit = 0
        for _, title, page in toc:
            t = normalize_title(title)
            hit += any(sim(t, c) >= 0.8 for q in (page - 2, page - 1, page) for c in by_page.get(q, []))
        recalls.append(hit / len(toc))
    assert sum(recalls) / len(recalls) >= 0.85, recalls


def test_chinese_prospectus_sections(shared_data):
    """A prospectus without an outline: 第X节 chapters and 一、/（一）sub-headings set in body type."""
    import warnings

    path = shared_data / "prospectus-zh" / "武汉力源信息技术股份有限公司.pdf"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = extract(path, max_pages=40)
    assert doc.toc_pages and min(doc.toc_pages) <= 9  # the printed 目录
    heads = detect_headings(doc, outline="ignore")
    texts = [h.text for h in heads]
    assert "第二节 概 览" in texts and "一、发行人简介" in texts and "(一)公司概况" in texts
    # body paragraphs written line by line are joined back into paragraphs
    assert any(b.line_count >= 3 and "本公司是国内著名的IC" in b.text for b in doc.blocks)
