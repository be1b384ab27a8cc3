"""The HTML view files as written (no browser): payload, page images beside or inline, escaping, the CLI."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace

import pytest

from pdfgen import numbered_report
from structrag.pipeline import parse_pdf
from structrag.view import HitView, PageRef, QueryView, write_hits_view, write_tree_view


@pytest.fixture(scope="module")
def parsed(tmp_path_factory):
    d = tmp_path_factory.mktemp("viewfiles")
    return parse_pdf(numbered_report(d / "report.pdf", chapters=2, sections=1, subsections=1, with_toc=True))


def payload(html_text: str) -> dict:
    m = re.search(r'<script type="application/json" id="structrag-data">(.*?)</script>', html_text, re.S)
    assert m, "no data element"
    return json.loads(m.group(1))


def test_sidecar_images_and_payload(parsed, tmp_path):
    out = tmp_path / "v" / "report.html"
    stats = write_tree_view(out, parsed.document, parsed.headings)
    n = parsed.document.page_count
    assert stats.images == n and sorted(p.name for p in (tmp_path / "v" / "report_pages").iterdir()) == \
        [f"p{i:04d}.jpg" for i in range(1, n + 1)]
    text = out.read_text(encoding="utf-8")
    assert "data:image" not in text and "http://" not in text and "https://" not in text  # nothing to fetch
    d = payload(text)
    assert d["mode"] == "tree" and d["document"]["sha1"] == parsed.document.sha1
    assert d["images"]["report.pdf"][0] == "report_pages/p0001.jpg"
    assert [h["text"] for h in d["headings"]] == [h.text for h in parsed.headings]
    h0 = d["headings"][0]
    assert {"level", "page", "bbox", "source", "score", "reasons", "block"} <= set(h0)
    assert len(d["blocks"]) == n and all(len(b) == 6 for b in d["blocks"][0])
    # a rewrite drops images of pages no longer there
    (tmp_path / "v" / "report_pages" / "p0099.jpg").write_bytes(b"x")
    write_tree_view(out, parsed.document, parsed.headings)
    assert not (tmp_path / "v" / "report_pages" / "p0099.jpg").exists()


def test_inline_and_escaping(parsed, tmp_path):
    hs = list(parsed.headings)
    hs[0] = replace(hs[0], text="</script><script>alert(1)</script> <!-- __DATA__")
    out = tmp_path / "inline.html"
    stats = write_tree_view(out, parsed.document, hs, inline=True, dpi=48)
    assert stats.image_dir is None and not (tmp_path / "inline_pages").exists()
    text = out.read_text(encoding="utf-8")
    assert text.count("</script>") == 2 and "<!--" not in text  # nothing in the data can end its element
    d = payload(text)
    assert d["headings"][0]["text"] == hs[0].text
    assert all(u.startswith("data:image/jpeg;base64,") for u in d["images"]["report.pdf"])


def test_hits_view(parsed, tmp_path):
    h = parsed.headings[1]
    q = QueryView("what grew?", (HitView(doc="report.pdf", score=2.5, section_path=("1 Chapter One", h.text),
                                         text="Revenue grew", pages=(h.page,), boxes=((h.page, h.bbox),)),),
                  expected=(PageRef("report.pdf", 1),), note="first relevant page: 2")
    out = tmp_path / "hits.html"
    stats = write_hits_view(out, [q], {"report.pdf": parsed.document.path})
    assert stats.images == 2  # the hit's page and the expected one
    d = payload(out.read_text(encoding="utf-8"))
    assert d["mode"] == "hits" and d["queries"][0]["hits"][0]["section_path"] == ["1 Chapter One", h.text]
    assert set(d["images"]["report.pdf"]) == {str(h.page), "1"}


def test_cli(parsed, tmp_path):
    r = subprocess.run([sys.executable, "-m", "structrag.cli", "view", parsed.document.path, "-o", tmp_path / "x.html",
                        "--dpi", "50"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "x.html" in r.stderr and (tmp_path / "x_pages" / "p0001.jpg").is_file()
    r = subprocess.run([sys.executable, "-m", "structrag.cli", "view", tmp_path / "missing.pdf"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "missing.pdf" in r.stderr and "Traceback" not in r.stderr
