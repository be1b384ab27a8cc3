"""The many-publisher corpus tools: labels from outlines and printed contents, families, the rebuild from git."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pymupdf
import pytest

from eval.bench import corpus_build, corpus_labels, corpus_manifest
from structrag.extraction import extract
from structrag.levels.references import load_reference_docs
from structrag.model import OutlineEntry
from tests.pdfgen import contents_report, numbered_report


def _entries(*rows):
    return [OutlineEntry(level=lv, title=t, page=p) for lv, t, p in rows]


def test_levels_close_up_skips_and_start_at_one():
    out = corpus_labels._normalise_levels(_entries((2, "a", 0), (4, "b", 1), (4, "c", 2), (3, "d", 3), (2, "e", 4)))
    assert [e.level for e in out] == [1, 2, 2, 2, 1]


def test_dropping_a_wrapper_promotes_its_subtree():
    rows = _entries((1, "x.pdf", 0), (2, "a", 0), (3, "a1", 1), (1, "b", 2))
    out = corpus_labels._drop(rows, [True, False, False, False])
    assert [(e.level, e.title) for e in out] == [(1, "a"), (2, "a1"), (1, "b")]


def test_outline_label_drops_a_file_name_root(tmp_path):
    pdf = numbered_report(tmp_path / "r.pdf", with_toc=True)
    with pymupdf.open(pdf) as d:  # wrap the outline in a file-name root, as some authoring tools do
        toc = d.get_toc()
        d.set_toc([[1, "annual-report-final.pdf", 1]] + [[lv + 1, t, p] for lv, t, p in toc])
        d.save(tmp_path / "wrapped.pdf")
    label = corpus_labels.outline_label(extract(tmp_path / "wrapped.pdf"))
    assert label.kind == "outline"
    assert label.entries[0].title == "1 Chapter One" and label.entries[0].level == 1
    assert len(label.entries) == len(toc) and label.printed_share == 1.0


def test_label_document_falls_back_to_the_printed_contents(tmp_path):
    doc = extract(contents_report(tmp_path / "c.pdf"))
    label = corpus_labels.label_document(doc)
    assert label.kind == "contents"
    assert {e.level for e in label.entries} == {1, 2}
    assert label.entries[0].title.startswith("1 Company Overview")


def test_short_outline_and_no_contents_say_why(tmp_path):
    doc = extract(numbered_report(tmp_path / "s.pdf", chapters=1, sections=1, subsections=1, with_toc=True))
    label = corpus_labels.label_document(doc)
    assert label.kind == "" and label.reason.startswith("outline too short")


@pytest.mark.parametrize("text, lang", [("the report of the company and its results is in the annual review " * 5, "en"),
                                        ("der Bericht und die Ergebnisse des Konzerns ist mit den Zahlen " * 5, "de"),
                                        ("本公司年度报告的主要财务数据和经营情况" * 5, "zh")])
def test_guess_language(text, lang):
    assert corpus_labels.guess_language(text) == lang


def test_family_rules():
    row = {"repository": "o/r", "path": "Chain-Link/white paper.pdf"}
    src = {"group": "other", "family": "dir:0"}
    assert corpus_manifest.family_of(row, src, {}) == {"group": "other", "family": "chain-link"}
    assert corpus_manifest.family_of(row, {**src, "family": "stem"}, {})["family"] == "white"
    assert corpus_manifest.family_of(row, {**src, "family": "each:paper"}, {})["family"] == "paper-white-paper"
    docs = {"o/r:Chain-Link/white paper.pdf": {"family": "x", "group": "standard"}}
    assert corpus_manifest.family_of(row, src, docs) == {"group": "standard", "family": "x"}
    assert corpus_manifest.family_of(row, src, {"o/r:Chain-Link/white paper.pdf": {"drop": "why"}}) is None


def test_select_caps_each_family():
    rows = [{"doc_id": f"{f}-{i}", "family": f, "group": "other", "label": "outline"} for f in "ab" for i in range(3)]
    out = corpus_build.select(rows, max_per_family=2)
    assert [r["doc_id"] for r in out] == ["a-0", "a-1", "b-0", "b-1"]
    assert corpus_build.select(rows, labels={"contents"}) == []


def _git(*args, cwd):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True)


def test_build_reads_git_checks_sha1_and_writes_reference_layout(tmp_path):
    work = tmp_path / "src"
    work.mkdir()
    pdf = numbered_report(work / "report.pdf", with_toc=True)
    _git("init", "-q", cwd=work)
    _git("add", "report.pdf", cwd=work)
    _git("commit", "-q", "-m", "x", cwd=work)
    mirror = tmp_path / "mirror"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(mirror / "o+r" / "repo")], check=True)
    commit = corpus_labels.git_head(mirror / "o+r" / "repo")
    label = corpus_labels.outline_label(extract(pdf))
    toc = corpus_labels.toc_rows(label.entries)
    sha1 = hashlib.sha1(pdf.read_bytes()).hexdigest()
    row = {"doc_id": "acme--report", "repository": "o/r", "commit": commit, "path": "report.pdf", "sha1": sha1,
           "licence": "test", "family": "acme", "group": "business", "language": "en", "pages": 3,
           "label": "outline", "entries": len(toc), "depth": 3, "printed_share": 1.0,
           "toc_sha1": corpus_build.toc_sha1(toc)}
    out = tmp_path / "corpus"
    report = corpus_build.build([row, {**row, "doc_id": "bad", "sha1": "0" * 40}], out, mirror, tmp_path / "cache", 1)
    assert report["documents"] == 1 and report["sha1_mismatch"] == ["bad"] and report["labels_changed"] == []
    written = json.loads((out / "acme--report.toc.json").read_text(encoding="utf-8"))
    assert written["toc"] == toc and written["family"] == "acme"
    refs = load_reference_docs(out)
    assert [r.doc_id for r in refs] == ["acme--report"] and refs[0].group == "business"
    assert refs[0].located == len(toc)
    missing = corpus_build.build([{**row, "repository": "o/none"}], tmp_path / "c2", mirror, tmp_path / "cache", 1)
    assert missing["missing"] == ["acme--report"]


def test_publisher_folds_never_train_on_the_scored_publisher(tmp_path):
    from types import SimpleNamespace

    from eval.bench import corpus_levels

    src = corpus_levels.Sources()
    docs = [SimpleNamespace(doc_id=f"{fam}-{k}", headings=(object(),), pdf_sha1=f"{fam}{k}")
            for fam in ("owasp", "qualcomm", "au-dta", "nvidia", "3m-filings", "us-crs") for k in range(3)]
    src.add(docs[:15], lambda r: r.doc_id.rsplit("-", 1)[0], "corpus", "outline")
    src.add(docs[15:], lambda r: r.doc_id.rsplit("-", 1)[0], "synthetic", "outline")
    models = corpus_levels.fold_models(src, ["corpus", "synthetic"], 3, tmp_path)
    for r in docs:
        held = corpus_levels.fold_of(src.family[r.doc_id], 3)
        assert held == corpus_levels.fold_of(src.family[r.doc_id], 3)  # the split is fixed by the name alone
        for variant, m in models.items():
            trained = m.training_docs(held)
            assert all(src.family[t.doc_id] != src.family[r.doc_id] for t in trained)
            if variant != "synthetic":  # the rendered documents train the synthetic variant only
                assert all(src.origin[t.doc_id] != "synthetic" for t in trained)
    assert [r.doc_id for r in src.scored("outline")] == [r.doc_id for r in docs[:15]]  # synthetic never scores
