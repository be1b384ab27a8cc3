"""Search hits on their pages: `structrag query --html`, `structrag view INDEX --query/--queries`, in Chromium."""

from __future__ import annotations

import json
import re

import pytest

from browser import browser_or_skip, js_errors, wait_for
from structrag.cli import main
from indexutil import lexical_index, make_report, write_queries


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    d = tmp_path_factory.mktemp("hits")
    return d, lexical_index(d)


def payload(path) -> dict:
    m = re.search(r'<script type="application/json" id="structrag-data">(.*?)</script>',
                  path.read_text(encoding="utf-8"), re.S)
    return json.loads(m.group(1))


def test_query_html(index, capsys):
    d, out = index
    html = d / "q.html"
    assert main(["query", str(out), "capital expenditures in 2024", "--mode", "bm25", "-k", "3",
                 "--html", str(html)]) == 0
    assert "q.html" in capsys.readouterr().err
    q = payload(html)["queries"][0]
    top = q["hits"][0]
    assert top["doc"] == "acme.pdf" and top["section_path"][-1] == "Liquidity and Capital Resources"
    assert top["boxes"] and all(p == 1 for p, _ in top["boxes"])  # the chunk's blocks, on its page (0-based)
    assert (d / "q_pages").is_dir() and top["relevant"] is None


def test_view_index_query_and_failures(index, capsys, tmp_path):
    d, out = index
    html = tmp_path / "h.html"
    assert main(["view", str(out), "--query", "dividends", "--query", "risks", "--mode", "bm25", "-o", str(html)]) == 0
    assert [q["query"] for q in payload(html)["queries"]] == ["dividends", "risks"]
    queries = write_queries(tmp_path / "queries.jsonl")
    everything = tmp_path / "all.html"
    assert main(["view", str(out), "--queries", str(queries), "--all-queries", "--mode", "bm25",
                 "-o", str(everything)]) == 0
    qs = payload(everything)["queries"]
    assert len(qs) == sum(1 for _ in queries.open()) and all(q["expected"] and q["note"] for q in qs)
    assert all(h["relevant"] in (True, False) for q in qs for h in q["hits"])
    capsys.readouterr()
    misses = tmp_path / "miss.html"
    assert main(["view", str(out), "--queries", str(queries), "--mode", "bm25", "-o", str(misses)]) == 0
    shown = sum(1 for q in qs if not q["hits"][0]["relevant"])
    assert f"{shown} of {len(qs)} queries shown" in capsys.readouterr().err
    assert main(["view", str(out), "-o", str(tmp_path / "x.html")]) == 2  # an index needs a query


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    d = browser_or_skip(tmp_path_factory.mktemp("dl"))
    yield d
    d.quit()


def test_hits_in_the_browser(index, browser, tmp_path):
    from selenium.webdriver.common.by import By

    d, out = index
    html = tmp_path / "b.html"
    assert main(["view", str(out), "--query", "capital expenditures in 2024", "--query", "dividends",
                 "--mode", "bm25", "-k", "3", "-o", str(html)]) == 0
    browser.get(html.resolve().as_uri())
    wait_for(lambda: browser.execute_script("return document.documentElement.dataset.ready === '1'"), what="ready")
    items = browser.find_elements(By.CSS_SELECTOR, "li.hit")
    assert len(items) == len(payload(html)["queries"][0]["hits"]) + len(payload(html)["queries"][1]["hits"])
    assert "Liquidity and Capital Resources" in items[0].find_element(By.CSS_SELECTOR, ".crumb").text
    assert "score" in items[0].text
    last = items[-1]
    last.click()
    hid = last.get_attribute("data-hit")
    boxes = browser.find_elements(By.CSS_SELECTOR, f".box[data-hit='{hid}']")
    assert boxes and all("hl" in b.get_attribute("class").split() for b in boxes)
    assert "sel" in last.get_attribute("class").split()
    wait_for(lambda: browser.execute_script(
        "const r = arguments[0].getBoundingClientRect(), p = document.getElementById('pages').getBoundingClientRect();"
        "return r.top >= p.top && r.bottom <= p.bottom;", boxes[0]), what="the hit's box in view")
    assert js_errors(browser) == []


def test_eval_retrieval_writes_the_misses(index, tmp_path, capsys):
    d, out = index
    queries = write_queries(tmp_path / "queries.jsonl")
    with queries.open("a", encoding="utf-8") as f:  # labelled with the wrong page: its first hit "misses"
        f.write(json.dumps({"qid": "miss", "query": "capital expenditures in 2024", "doc": "acme.pdf",
                            "relevant_pages": [0]}) + "\n")
    html = tmp_path / "misses.html"
    assert main(["eval", "retrieval", str(queries), "--index", str(out), "--mode", "bm25", "--out",
                 str(tmp_path / "rep"), "--no-plots", "--no-progress", "--misses-html", str(html)]) == 0
    capsys.readouterr()
    every = tmp_path / "all.html"
    assert main(["view", str(out), "--queries", str(queries), "--all-queries", "--mode", "bm25", "-o", str(every)]) == 0
    missed = [q["query"] for q in payload(every)["queries"] if not q["hits"][0]["relevant"]]
    assert "capital expenditures in 2024" in missed
    assert [q["query"] for q in payload(html)["queries"]] == missed


def test_a_moved_pdf_is_named(tmp_path, capsys):
    (tmp_path / "pdfs").mkdir()
    pdf = make_report(tmp_path / "pdfs" / "gone.pdf")
    assert main(["index", str(tmp_path / "pdfs"), "--out", str(tmp_path / "ix"), "--no-dense", "--quiet"]) == 0
    pdf.unlink()
    capsys.readouterr()
    assert main(["view", str(tmp_path / "ix"), "--query", "capital expenditures", "--mode", "bm25",
                 "-o", str(tmp_path / "h.html")]) == 2
    err = capsys.readouterr().err
    assert "the PDF of gone.pdf is no longer at" in err and str(tmp_path / "ix") in err
