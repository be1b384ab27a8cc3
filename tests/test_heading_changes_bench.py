"""The heading-change list (``eval/bench/heading_changes.py``): what a change adds and removes, per document,
on real PDFs written with PyMuPDF."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pymupdf")

from eval.bench.heading_changes import changes, main, to_markdown  # noqa: E402
from pdfgen import PDFBuilder  # noqa: E402


def test_changes_lists_removed_and_added_pairs_per_document():
    before = {"a.pdf": [(0, "Overview", "layout"), (1, "Principal", "layout"), (2, "Outlook", "layout")],
              "b.pdf": [(0, "Same", "layout")], "c.pdf": "c.pdf: not a PDF file", "only-before.pdf": []}
    after = {"a.pdf": [(0, "Overview", "layout"), (2, "Outlook", "contents"), (3, "Risks", "layout")],
             "b.pdf": [(0, "Same", "layout")], "c.pdf": [(0, "X", "layout")]}
    res = changes(before, after)
    assert set(res["documents"]) == {"a.pdf", "c.pdf"}  # b is unchanged; a source change alone is no change
    a = res["documents"]["a.pdf"]
    assert a["removed"] == [(1, "Principal")] and a["added"] == [(3, "Risks")]
    assert "error" in res["documents"]["c.pdf"]
    assert res["totals"] == {"before": 4, "after": 4, "removed": 1, "added": 1}
    md = to_markdown(res)
    assert "- p.2 'Principal'" in md and "+ p.4 'Risks'" in md


def test_write_and_diff_on_real_pdfs(tmp_path, capsys):
    data = tmp_path / "data"
    (data / "headings").mkdir(parents=True)
    b = PDFBuilder()
    b.heading("Annual Review")
    b.para()
    b.heading("Outlook", size=12)
    b.para()
    b.save(data / "headings" / "r.pdf")
    (data / "retrieval" / "pdfs").mkdir(parents=True)
    (data / "retrieval" / "pdfs" / "broken.pdf").write_bytes(b"not a pdf")
    assert main(["write", str(tmp_path / "a.json"), "--data", str(data)]) == 0
    written = json.loads((tmp_path / "a.json").read_text())
    assert [t for _, t, _ in written["headings/r.pdf"]] == ["Annual Review", "Outlook"]
    assert "not a PDF" in written["retrieval/pdfs/broken.pdf"]
    after = dict(written, **{"headings/r.pdf": [[0, "Annual Review", "layout"]]})
    (tmp_path / "b.json").write_text(json.dumps(after))
    capsys.readouterr()
    assert main(["diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--md", str(tmp_path / "d.md")]) == 0
    assert "- p.1 'Outlook'" in (tmp_path / "d.md").read_text()
    assert main(["write", str(tmp_path / "c.json"), "--data", str(tmp_path / "empty")]) == 2
