"""Document identity (issue 22, item 1): read from generated covers, stored in the index, set by the user
(``Index.set_identity``, ``structrag index --meta``) and filtered on (``search(where=...)``, ``query --where``)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pdfgen import LOREM, PDFBuilder
from structrag.cli import main
from structrag.errors import ConfigError, InputError, StructragWarning
from structrag.extraction.pdf import extract
from structrag.identity import identify, normalize_issuer, normalize_type
from structrag.model import DocumentIdentity

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
if not SHARED.is_dir():
    SHARED = Path("/work/shared/data")


def filing(path: Path, company: str, form: str, period: str, *, body: str = LOREM, title: str | None = None) -> Path:
    """A filing's cover sheet as the SEC prints it, then a page of text."""
    b = PDFBuilder(footer=None)
    b.new_page()
    b.text("UNITED STATES SECURITIES AND EXCHANGE COMMISSION", size=12, bold=True)
    b.text("Washington, D.C. 20549", size=8)
    b.text(f"FORM {form}", size=14, bold=True)
    kind = "ANNUAL" if form == "10-K" else "QUARTERLY"
    b.text(f"{kind} REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934", size=8)
    b.text(period, size=8)
    b.text(company, size=16, bold=True)
    b.text("(Exact name of registrant as specified in its charter)", size=8)
    b.text("Indicate by check mark whether the registrant is a well-known seasoned issuer.", size=8)
    b.new_page()
    b.heading("Item 1. Business")
    b.para(body)
    if title:
        b.doc.set_metadata({"title": title})
    return b.save(path)


def prospectus_zh(path: Path) -> Path:
    b = PDFBuilder(footer=None)
    b.new_page()
    b.text("湖南星辰电子股份有限公司", size=24, font="china-s")
    b.text("首次公开发行股票招股说明书", size=22, font="china-s")
    b.text("保荐人（主承销商）", size=14, font="china-s")
    b.text("长江证券股份有限公司", size=16, font="china-s")
    b.new_page()
    b.text("本公司的主营业务为电子元器件的研发、生产和销售。公司控股股东为星辰集团，" * 4, font="china-s")
    return b.save(path)


def ident_of(path: Path) -> DocumentIdentity:
    return identify(extract(path, progress=False))


# --- reading the cover --------------------------------------------------------------------------
def test_annual_filing_cover(tmp_path):
    i = ident_of(filing(tmp_path / "a.pdf", "ACME CORPORATION", "10-K", "For the fiscal year ended December 31, 2018"))
    assert (i.issuer, i.doc_type, i.year, i.quarter, i.language) == ("ACME CORPORATION", "10-K", 2018, None, "en")
    assert i.source("issuer") == "cover" and i.source("year") == "cover"
    assert i.title == "ACME CORPORATION Form 10-K 2018"


def test_quarterly_filing_cover_gives_the_quarter(tmp_path):
    i = ident_of(filing(tmp_path / "q.pdf", "Globex Inc.", "10-Q", "For the quarterly period ended June 30, 2023"))
    assert (i.issuer, i.doc_type, i.year, i.quarter) == ("Globex Inc.", "10-Q", 2023, 2)


def test_fiscal_quarter_from_the_statements_year_to_date_columns(tmp_path):
    """A June year end: the quarter to 31 December is the fiscal second quarter of the next year's fiscal
    year, read from the statements' "six months ended" columns, not the calendar's fourth quarter."""
    body = ("Condensed Consolidated Statements of Income. Three Months Ended December 31, 2022 and Six Months "
            "Ended December 31, 2022, in millions of dollars, unaudited. ") * 3
    i = ident_of(filing(tmp_path / "q.pdf", "Globex plc", "10-Q", "For the quarterly period ended December 31, 2022",
                        body=body))
    assert (i.doc_type, i.year, i.quarter) == ("10-Q", 2023, 2)
    # a calendar-year filer's second quarter stays as the cover dates it
    body = "Three Months Ended June 30, 2023. Six Months Ended June 30, 2023. " * 3
    i = ident_of(filing(tmp_path / "c.pdf", "Initech Inc.", "10-Q", "For the quarterly period ended June 30, 2023",
                        body=body))
    assert (i.year, i.quarter) == (2023, 2)


def test_fiscal_year_named_as_the_text_names_it(tmp_path):
    """Retailers' years end in January or February: the year is the one the filing calls "fiscal 2022",
    for a year ended 28 January 2023, and the quarter of a 26-week report ending in July is the second."""
    body = "Net sales in fiscal 2022 rose 3 percent over fiscal 2021. In fiscal 2022 we opened 40 stores. " * 3
    i = ident_of(filing(tmp_path / "k.pdf", "Bargain Mart Inc.", "10-K", "For the fiscal year ended January 28, 2023",
                        body=body))
    assert (i.year, i.quarter) == (2022, None)
    body = "Thirteen Weeks Ended July 29, 2023. Twenty-Six Weeks Ended July 29, 2023. Fiscal 2024 outlook. " * 3
    i = ident_of(filing(tmp_path / "q.pdf", "Bargain Mart Inc.", "10-Q",
                        "For the quarterly period ended July 29, 2023", body=body))
    assert (i.year, i.quarter) == (2024, 2)
    # a December year end keeps its year whatever the text says of other years
    body = "Compared with fiscal 2017, revenue grew. " * 3
    i = ident_of(filing(tmp_path / "d.pdf", "Initech Inc.", "10-K", "For the fiscal year ended December 31, 2018",
                        body=body))
    assert i.year == 2018


def test_issuer_from_the_auditors_report_when_the_cover_names_none(tmp_path):
    """A cover whose name is a logo (no text): the auditor's report names the company it is addressed to."""
    b = PDFBuilder(footer=None)
    b.new_page()
    b.text("FORM 10-K", size=14, bold=True)
    b.text("For the fiscal year ended December 31, 2017", size=8)
    b.new_page()
    b.heading("Report of Independent Registered Public Accounting Firm")
    b.para("To the Shareowners and Board of Directors of The Fizzy Drinks Company: Opinion on the Financial "
           "Statements. We have audited the accompanying consolidated balance sheets.")
    i = ident_of(b.save(tmp_path / "logo.pdf"))
    assert (i.issuer, i.source("issuer"), i.year) == ("Fizzy Drinks Company", "auditor", 2017)


def test_issuer_from_the_running_header_of_its_statements(tmp_path):
    b = PDFBuilder(footer=None)
    b.new_page()
    b.text("FORM 10-K", size=14, bold=True)
    b.text("For the fiscal year ended December 31, 2017", size=8)
    for title in ("Consolidated Balance Sheets", "Consolidated Statements of Cash Flows"):
        b.new_page()
        b.text("THE FIZZY DRINKS COMPANY AND SUBSIDIARIES", size=9, bold=True)
        b.heading(title)
        b.para(LOREM)
    i = ident_of(b.save(tmp_path / "running.pdf"))
    assert (i.issuer, i.source("issuer")) == ("THE FIZZY DRINKS COMPANY", "running")
    # "The Company and its subsidiaries" in the text names no one
    b = PDFBuilder(footer=None)
    b.new_page()
    b.text("FORM 10-K", size=14, bold=True)
    for _ in range(2):
        b.new_page()
        b.text("The Company and its subsidiaries", size=9)
        b.para(LOREM)
    assert ident_of(b.save(tmp_path / "generic.pdf")).issuer is None


def test_chinese_prospectus_cover(tmp_path):
    i = ident_of(prospectus_zh(tmp_path / "p.pdf"))
    # the sponsor (保荐人, a 证券股份有限公司) is not the issuer
    assert (i.issuer, i.doc_type, i.language) == ("湖南星辰电子股份有限公司", "prospectus", "zh")


def test_annual_report_and_metadata(tmp_path):
    b = PDFBuilder(footer=None)
    b.new_page()
    b.text("Annual Report 2021", size=30, bold=True)
    b.text("Globex Holdings Ltd", size=12)
    b.new_page()
    b.para()
    i = ident_of(b.save(tmp_path / "r.pdf"))
    assert (i.issuer, i.doc_type, i.year) == ("Globex Holdings Ltd", "annual report", 2021)
    # nothing on the cover but a picture-like word: the PDF's title names who and when
    b = PDFBuilder(footer=None)
    b.new_page()
    b.text("Annual", size=30)
    b.new_page()
    b.para()
    b.doc.set_metadata({"title": "Initech 2020 Annual Report"})
    i = ident_of(b.save(tmp_path / "m.pdf"))
    assert (i.issuer, i.source("issuer"), i.doc_type) == ("Initech", "metadata", "annual report")


def test_manual_and_other(tmp_path):
    b = PDFBuilder(footer=None)
    b.new_page()
    b.text("Widget 3000 User Guide", size=24)
    b.para()
    assert ident_of(b.save(tmp_path / "m.pdf")).doc_type == "manual"
    b = PDFBuilder(footer=None)
    b.new_page()
    b.text("Notes on the river", size=18)
    b.para()
    i = ident_of(b.save(tmp_path / "o.pdf"))
    assert (i.doc_type, i.issuer, i.year) == ("other", None, None)


def test_identity_is_deterministic_and_round_trips(tmp_path):
    p = filing(tmp_path / "a.pdf", "ACME CORPORATION", "10-K", "For the fiscal year ended December 31, 2018")
    a, b = ident_of(p), ident_of(p)
    assert a == b and DocumentIdentity.from_dict(json.loads(json.dumps(a.to_dict()))) == a
    c = a.with_fields("user", issuer="Acme", year=2019)
    assert (c.issuer, c.year, c.source("issuer"), c.source("doc_type")) == ("Acme", 2019, "user", "cover")
    with pytest.raises(ValueError):
        a.with_fields("user", colour="red")


def test_normalisation():
    assert normalize_issuer("The Coca-Cola Company") == normalize_issuer("COCA COLA") == "cocacola"
    assert normalize_issuer("湖南星辰电子股份有限公司") == "湖南星辰电子"
    assert normalize_type("Form 10k") == "10-K" and normalize_type("ESG") == "sustainability report"
    assert normalize_type("招股说明书") == "prospectus"


# --- in the index -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    root = tmp_path_factory.mktemp("ids")
    pdfs = root / "pdfs"
    pdfs.mkdir()
    capex = "Capital expenditures were {} million, mostly new manufacturing lines."
    filing(pdfs / "acme_2018.pdf", "ACME CORPORATION", "10-K", "For the fiscal year ended December 31, 2018",
           body=capex.format(1577))
    filing(pdfs / "acme_2019.pdf", "ACME CORPORATION", "10-K", "For the fiscal year ended December 31, 2019",
           body=capex.format(1699))
    filing(pdfs / "globex_q2.pdf", "Globex Inc.", "10-Q", "For the quarterly period ended June 30, 2019",
           body=capex.format(88))
    out = root / "index"
    assert main(["index", str(pdfs), "--out", str(out), "--no-dense", "--quiet"]) == 0
    return root, out


def test_stored_and_filtered(collection):
    from retrievers.index import Index

    _, out = collection
    with Index.open(out) as ix:
        assert ix.identity("acme_2018.pdf").year == 2018
        docs = {d.name: d.identity for d in ix.documents()}
        assert docs["globex_q2.pdf"].doc_type == "10-Q" and docs["globex_q2.pdf"].quarter == 2
        hits = ix.search("capital expenditures", k=10, mode="bm25", where={"company": "acme", "year": 2019})
        assert hits and {h.doc for h in hits} == {"acme_2019.pdf"}
        assert {h.doc for h in ix.search("capital expenditures", k=10, mode="ranker", where={"type": "10q"})} \
            == {"globex_q2.pdf"}
        assert {h.doc for h in ix.search("capital", k=10, mode="bm25", where={"quarter": "Q2"})} == {"globex_q2.pdf"}
        with pytest.raises(ConfigError, match="known values.*company: ACME CORPORATION, Globex Inc."):
            ix.search("capital", where={"company": "Initech"})
        with pytest.raises(ConfigError, match="unknown filter 'colour'"):
            ix.search("capital", where={"colour": "red"})
        with pytest.raises(ConfigError, match="year"):
            ix.search("capital", where={"year": "last year"})


def test_set_identity_wins_and_is_marked_user(tmp_path):
    from retrievers.index import Index

    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    filing(pdfs / "a.pdf", "ACME CORPORATION", "10-K", "For the fiscal year ended December 31, 2018")
    with Index.build([pdfs], tmp_path / "ix", dense=False, progress=False) as ix:
        gen = ix.store.generation()
        new = ix.set_identity("a.pdf", company="Acme Widgets", year="2017")
        assert (new.issuer, new.year, new.source("issuer"), new.doc_type) == ("Acme Widgets", 2017, "user", "10-K")
        assert ix.store.generation() == gen  # the search arrays do not hold identities
        with pytest.raises(ConfigError, match="unknown field 'colour'"):
            ix.set_identity("a.pdf", colour="red")
        with pytest.raises(ConfigError, match="no document"):
            ix.set_identity("nothing.pdf", year=2000)
    with Index.open(tmp_path / "ix") as ix:
        assert ix.identity("a.pdf").issuer == "Acme Widgets"
        assert ix.search("registrant", mode="bm25", where={"company": "widgets", "year": 2017})


def test_old_index_without_identities_still_answers(tmp_path):
    from retrievers.index import Index

    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    filing(pdfs / "a.pdf", "ACME CORPORATION", "10-K", "For the fiscal year ended December 31, 2018")
    Index.build([pdfs], tmp_path / "ix", dense=False, progress=False).close()
    db = sqlite3.connect(tmp_path / "ix" / "index.sqlite")
    db.execute("ALTER TABLE documents DROP COLUMN identity")  # as an index written before identities
    db.commit()
    db.close()
    with Index.open(tmp_path / "ix") as ix:
        assert ix.documents()[0].identity is None  # nothing stored ...
        assert ix.search("registrant", mode="bm25")
        assert ix.identity("a.pdf").issuer == "ACME CORPORATION"  # ... read from the stored pages
        assert ix.search("registrant", mode="bm25", where={"company": "acme"})
        ix.set_identity("a.pdf", quarter=4)  # the first write adds the column
        assert ix.identity("a.pdf").quarter == 4


# --- the command line ---------------------------------------------------------------------------
def test_cli_meta_and_where(collection, tmp_path, capsys):
    root, out = collection
    meta = tmp_path / "meta.jsonl"
    meta.write_text('{"doc": "globex_q2.pdf", "issuer": "Globex Logistics", "language": "English"}\n\n',
                    encoding="utf-8")
    assert main(["index", str(root / "pdfs"), "--out", str(out), "--no-dense", "--quiet", "--meta", str(meta)]) == 0
    capsys.readouterr()
    assert main(["query", str(out), "capital expenditures", "--mode", "bm25", "--where", "company=logistics",
                 "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits and {h["doc"] for h in hits} == {"globex_q2.pdf"}
    ident = hits[0]["identity"]
    assert ident["issuer"] == "Globex Logistics" and ident["sources"]["issuer"] == "user" and ident["quarter"] == 2
    assert main(["query", str(out), "capital expenditures", "--mode", "bm25", "--where", "company=ACME Corp.",
                 "--where", "year=2018"]) == 0
    text = capsys.readouterr().out
    assert "acme_2018.pdf" in text and "acme_2019.pdf" not in text and "[ACME CORPORATION · 10-K · 2018]" in text


def test_cli_errors_name_the_file_and_line(collection, tmp_path, capsys):
    root, out = collection
    meta = tmp_path / "bad.jsonl"
    meta.write_text('{"doc": "acme_2018.pdf", "year": 2018}\n{"doc": "nothing.pdf", "year": 2018}\n', encoding="utf-8")
    args = ["index", str(root / "pdfs"), "--out", str(out), "--no-dense", "--quiet", "--meta", str(meta)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{meta}: line 2" in err and "nothing.pdf" in err
    meta.write_text('{"doc": "acme_2018.pdf", "colour": "red"}\n', encoding="utf-8")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{meta}: line 1: unknown field 'colour'" in err
    meta.write_text('{"doc": "acme_2018.pdf", "quarter": 7}\n', encoding="utf-8")
    assert main(args) == 2
    assert "line 1: quarter must be 1 to 4" in capsys.readouterr().err
    assert main(["query", str(out), "capital", "--where", "company"]) == 2
    assert "--where takes KEY=VALUE" in capsys.readouterr().err
    assert main(["query", str(out), "capital", "--where", "year=1990"]) == 2
    err = capsys.readouterr().err
    assert "no indexed document matches year=1990" in err and "2018, 2019" in err


def test_read_meta_file_checks_every_line_first(tmp_path):
    from retrievers.store.identities import read_meta_file

    def resolve(doc):
        if doc != "a.pdf":
            raise ConfigError(f"no document named {doc!r} in the index")
        return doc

    p = tmp_path / "m.jsonl"
    p.write_text('{"doc": "a.pdf", "type": "ESG"}\nnot json\n', encoding="utf-8")
    with pytest.raises(InputError, match="line 2 is not JSON"):
        read_meta_file(p, resolve)
    p.write_text('{"doc": "a.pdf", "type": "ESG", "quarter": "Q3"}\n', encoding="utf-8")
    assert read_meta_file(p, resolve) == [("a.pdf", {"doc_type": "sustainability report", "quarter": 3})]


# --- on the shared reports (skipped without them) -----------------------------------------------------------
@pytest.mark.skipif(not (SHARED / "retrieval" / "pdfs").is_dir(), reason="shared data not present")
@pytest.mark.parametrize("rel,want", [
    ("retrieval/pdfs/3M_2018_10K.pdf", ("3m", "10-K", 2018, None, "en")),
    ("retrieval/pdfs/JPMORGAN_2022Q2_10Q.pdf", ("jpmorganchase", "10-Q", 2022, 2, "en")),
    ("retrieval/pdfs/PEPSICO_2023_8K_dated-2023-05-05.pdf", ("pepsico", "8-K", 2023, None, "en")),
    ("prospectus-zh/武汉力源信息技术股份有限公司.pdf", ("武汉力源信息技术", "prospectus", None, None, "zh")),
])
def test_shared_reports(rel, want):
    path = SHARED / rel
    if not path.is_file():
        pytest.skip(f"{rel} not present")
    i = identify(extract(path, max_pages=3, progress=False))
    assert (normalize_issuer(i.issuer or ""), i.doc_type, i.year, i.quarter, i.language) == want


# --- engines and LlamaIndex ---------------------------------------------------------------------------
def test_engine_records_carry_the_identity(collection):
    from retrievers.engines.records import iter_engine_chunks
    from retrievers.index import Index

    _, out = collection
    with Index.open(out) as ix:
        [(_, chunks)] = list(iter_engine_chunks(ix, ["acme_2019.pdf"]))
        p = chunks[0].payload()
        assert (p["issuer"], p["doc_type"], p["year"], p["quarter"]) == ("ACME CORPORATION", "10-K", 2019, None)


def test_qdrant_filters_on_identity(collection):
    pytest.importorskip("qdrant_client")
    from qdrant_client import models

    from retrievers.engines import EngineRetriever, QdrantEngine
    from retrievers.index import Index

    _, out = collection
    with Index.open(out) as ix:
        engine = QdrantEngine.local()
        engine.sync(ix)
        r = EngineRetriever(ix, engine)
        want = {h.doc for h in ix.search("capital expenditures", k=10, mode="bm25", where={"year": 2019})}
        got = {h.doc for h in r.search("capital expenditures", k=10, mode="bm25", where={"year": 2019})}
        assert got == want == {"acme_2019.pdf", "globex_q2.pdf"}
        assert {h.doc for h in r.search("capital", k=10, mode="ranker", where={"company": "globex"})} == {"globex_q2.pdf"}
        # users filter on the payload themselves
        flt = models.Filter(must=[models.FieldCondition(key="year", match=models.MatchValue(value=2018))])
        points, _ = engine.client.scroll(engine.collection, scroll_filter=flt, limit=100, with_payload=True)
        assert points and {p.payload["doc"] for p in points} == {"acme_2018.pdf"}
        # a user's correction reaches the engine at the next sync (that document only)
        ix.set_identity("acme_2018.pdf", year=2017)
        rep = engine.sync(ix)
        assert rep.added == ["acme_2018.pdf"] and rep.removed == ["acme_2018.pdf"]
        points, _ = engine.client.scroll(engine.collection, scroll_filter=flt, limit=100, with_payload=True)
        assert points == []
        ix.set_identity("acme_2018.pdf", year=2018)
        engine.close()


def test_opensearch_mapping_and_filter_bodies():
    pytest.importorskip("opensearchpy")
    from retrievers.engines import OpenSearchEngine

    engine = OpenSearchEngine(None, "ids")
    props = engine.mapping(None)["mappings"]["properties"]
    assert props["issuer"] == {"type": "keyword"} and props["year"] == {"type": "integer"}
    body = engine.lexical_query(["capital"], 5, ["a.pdf", "b.pdf"])
    assert body["query"]["bool"]["filter"] == [{"terms": {"doc": ["a.pdf", "b.pdf"]}}]


def test_llama_index_nodes_carry_the_identity(collection):
    pytest.importorskip("llama_index.core")
    from retrievers.index import Index
    from retrievers.llama_index import StructragRetriever

    _, out = collection
    r = StructragRetriever(Index.open(out), similarity_top_k=5, mode="bm25", where={"type": "10-Q"})
    nodes = r.retrieve("capital expenditures")
    assert nodes and {n.node.metadata["doc"] for n in nodes} == {"globex_q2.pdf"}
    assert nodes[0].node.metadata["doc_type"] == "10-Q" and nodes[0].node.metadata["quarter"] == 2


def test_user_fields_survive_a_new_version_of_the_file(tmp_path):
    from retrievers.index import Index

    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    filing(pdfs / "a.pdf", "ACME CORPORATION", "10-K", "For the fiscal year ended December 31, 2018")
    with Index.build([pdfs], tmp_path / "ix", dense=False, progress=False) as ix:
        ix.set_identity("a.pdf", issuer="Acme")
        filing(pdfs / "a.pdf", "ACME CORPORATION", "10-K", "For the fiscal year ended December 31, 2019")
        assert ix.add([pdfs]).replaced == ["a.pdf"]
        i = ix.identity("a.pdf")
        assert (i.issuer, i.source("issuer"), i.year, i.source("year")) == ("Acme", "user", 2019, "cover")


def test_pages_without_text_give_an_empty_identity(tmp_path):
    b = PDFBuilder(footer=None)
    b.new_page()
    b.new_page()
    with pytest.warns(StructragWarning, match="without a text layer"):
        i = ident_of(b.save(tmp_path / "blank.pdf"))
    assert i.fields() == {} and i.label() == ""


def test_the_hits_view_labels_each_hit(collection, tmp_path):
    import re

    from retrievers.index import Index
    from retrievers.view_hits import write_query_view

    _, out = collection
    with Index.open(out) as ix:
        hits = ix.search("capital expenditures", k=3, mode="bm25", where={"year": 2018})
        write_query_view(ix, [("capital expenditures", hits)], tmp_path / "v.html")
    m = re.search(r'<script type="application/json" id="structrag-data">(.*?)</script>',
                  (tmp_path / "v.html").read_text(encoding="utf-8"), re.S)
    shown = json.loads(m.group(1))["queries"][0]["hits"]
    assert shown and all(h["label"] == "ACME CORPORATION · 10-K · 2018" for h in shown)


def test_trading_symbols_from_the_covers_table(tmp_path):
    b = PDFBuilder(footer=None)
    b.new_page()
    b.text("FORM 10-K", size=14, bold=True)
    b.text("For the fiscal year ended December 31, 2022", size=8)
    b.text("ACME CORPORATION", size=16, bold=True)
    b.text("(Exact name of registrant as specified in its charter)", size=8)
    b.text("Title of each class Trading Symbol(s) Name of each exchange on which registered", size=8)
    b.text("Common Stock, Par Value $.01 Per Share ACME New York Stock Exchange", size=8)
    b.text("1.500% Notes due 2026 ACME26 New York Stock Exchange", size=8)
    b.text("Depositary Shares, Series B ACM PR B The Nasdaq Stock Market", size=8)
    b.text("Securities registered pursuant to Section 12(g) of the Act: None", size=8)
    b.text("Indicate by check mark if the registrant is a well-known seasoned issuer. NYSE Yes", size=8)
    i = ident_of(b.save(tmp_path / "t.pdf"))
    assert i.tickers == ("ACME", "ACM") and i.source("tickers") == "cover"
    assert DocumentIdentity.from_dict(json.loads(json.dumps(i.to_dict()))) == i
    # a cover with no such table has none, and a user's symbols are checked
    assert ident_of(filing(tmp_path / "a.pdf", "Initech Inc.", "10-K", "For the fiscal year ended June 30, 2020")).tickers == ()
    from retrievers.store.identities import user_fields

    assert user_fields({"tickers": "brk.b, BRK.A"}) == {"tickers": ("BRK.B", "BRK.A")}
    with pytest.raises(ValueError):
        user_fields({"tickers": "not a symbol!"})


def test_where_filters_on_a_ticker():
    from retrievers.store.identities import Where

    ids = {"a.pdf": DocumentIdentity(issuer="ACME", tickers=("ACME", "ACM")), "b.pdf": DocumentIdentity(issuer="Initech"),
           "c.pdf": None}
    assert Where({"ticker": "acm"}).select(ids) == ["a.pdf"]
    with pytest.raises(ConfigError, match="ACME"):
        Where({"ticker": "ZZZ"}).select(ids)
