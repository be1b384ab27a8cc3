"""Benchmark builder on PDFs generated with PyMuPDF (outline via set_toc)."""

from __future__ import annotations

import json

import pytest
from pdfgen import PDFBuilder

from eval import references as R
from eval import trees as T
from structrag.errors import ReferenceFormatError

BODY = ("This paragraph is ordinary body text that runs across the whole line so the page has a clear "
        "body style against which the headings stand out.")


def make_pdf(path, sections, toc):
    """sections: per page a list of (text, fontsize), 12 pt and up bold; toc: [[level, title, page1], ...] or None."""
    b = PDFBuilder(footer=None)
    for items in sections:
        b.new_page()
        for text, size in items:
            b.text(text, size=size, bold=size >= 12, gap_after=24)
    b.save(path, toc=toc)


def outline_pdf(path):
    sections = [
        [("1 Introduction", 18), (BODY, 10), ("1.1 Scope", 14), (BODY, 10)],
        [("1.2 Terms", 14), (BODY, 10), (BODY, 10)],
        [("2 Methods", 18), (BODY, 10), ("2.1 Data", 14), (BODY, 10)],
    ]
    toc = [[1, "1 Introduction", 1], [2, "1.1 Scope", 1], [2, "1.2 Terms", 2], [1, "2 Methods", 3],
           [2, "2.1 Data", 3], [2, "Appendix that is not printed", 3]]
    make_pdf(path, sections, toc)
    return toc


def test_builder_locates_entries_and_reports_the_rest(tmp_path):
    folder = tmp_path / "pdfs"
    folder.mkdir()
    toc = outline_pdf(folder / "report.pdf")
    make_pdf(folder / "plain.pdf", [[("Just text", 10)]], None)
    refs = R.build_reference_set(folder, cache_dir=None, progress=False)
    assert [d.doc_id for d in refs] == ["report"]
    assert refs.skipped and refs.skipped[0][0] == "plain.pdf" and "no outline" in refs.skipped[0][1]
    d = refs.documents[0]
    assert d.outline_source == "pdf"
    assert [h.text for h in d.headings] == [t for _, t, _ in toc]
    assert [h.level for h in d.headings] == [lv for lv, _, _ in toc]
    assert [h.page for h in d.headings] == [p - 1 for _, _, p in toc]
    assert d.located == 5
    assert [e.title for _, e in d.unlocated] == ["Appendix that is not printed"]
    scope = d.headings[1]
    assert scope.bbox is not None and scope.size == pytest.approx(14, abs=0.5)
    assert d.document.blocks[scope.block].text.startswith("1.1 Scope")
    # the level-only input keeps everything but the levels
    assert all(h.level is None for h in d.unlabelled())
    assert d.outline().parents == (-1, 0, 0, -1, 3, 3)

    out = R.write_reference_set(refs, tmp_path / "refs")
    rep = json.loads((out / "report.json").read_text())
    assert rep["entries"] == 6 and rep["located"] == 5
    assert rep["documents"][0]["unlocated"][0]["title"] == "Appendix that is not printed"
    assert "Appendix that is not printed" in (out / "report.md").read_text()
    # the per-document file reads back as the same tree
    back = T.load_outline(out / "report.ref.json")
    assert back.items() == d.outline().items()
    assert (out / "manifest.jsonl").read_text().count("\n") == 1


def test_sidecar_outline_wins_and_manifest_sha1_is_checked(tmp_path):
    outline_pdf(tmp_path / "doc.pdf")
    (tmp_path / "doc.toc.json").write_text(json.dumps({"toc": [[1, "1 Introduction", 1], [1, "2 Methods", 3]]}))
    refs = R.build_reference_set(tmp_path, cache_dir=None, progress=False)
    d = refs.documents[0]
    assert d.outline_source == "sidecar" and len(d.entries) == 2 and d.located == 2
    pdf_only = R.build_reference(tmp_path / "doc.pdf", outline="pdf", cache_dir=None)
    assert len(pdf_only.entries) == 6

    (tmp_path / "manifest.jsonl").write_text(json.dumps({"doc_id": "doc", "group": "g", "sha1": "0" * 40}) + "\n")
    with pytest.raises(ReferenceFormatError, match="does not match"):
        R.build_reference_set(tmp_path, cache_dir=None, progress=False)
    (tmp_path / "manifest.jsonl").write_text(json.dumps({"doc_id": "doc", "group": "g"}) + "\n")
    assert R.build_reference_set(tmp_path, cache_dir=None, progress=False).documents[0].group == "g"


def test_bad_sidecar_names_the_file(tmp_path):
    outline_pdf(tmp_path / "doc.pdf")
    (tmp_path / "doc.toc.json").write_text("{}")
    with pytest.raises(ReferenceFormatError, match="doc.toc.json"):
        R.build_reference(tmp_path / "doc.pdf", cache_dir=None)


def test_shared_headings_reference_set(shared_data):
    refs = R.build_reference_set(shared_data / "headings", doc_ids=["US_DOT_2022_agency_plan"], progress=False)
    d = refs.documents[0]
    assert len(d.entries) == 214 and d.group == "business"
    assert d.located / len(d.entries) > 0.9
