"""The corrections file: its schema, the errors that name it, applying it, and its use as training labels."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pdfgen import numbered_report
from structrag.corrections import (CORRECTIONS_FORMAT, Correction, Corrections, apply_corrections,
                                   apply_to_parsed, corrections_from_dict, load_corrections,
                                   reference_doc_from_corrections)
from structrag.errors import ReferenceFormatError
from structrag.pipeline import parse_pdf


@pytest.fixture(scope="module")
def parsed(tmp_path_factory):
    d = tmp_path_factory.mktemp("corr")
    pdf = numbered_report(d / "report.pdf", chapters=2, sections=2, subsections=1, with_toc=True)
    return parse_pdf(pdf)


def base(parsed, ops, **doc):
    return {"format": CORRECTIONS_FORMAT, "schema_version": "1.0",
            "document": {"name": "report.pdf", "sha1": parsed.document.sha1, "pages": parsed.document.page_count,
                         **doc},
            "corrections": ops}


def heading(parsed, text):
    return next(h for h in parsed.headings if h.text == text)


def op(parsed, kind, text, **kw):
    h = heading(parsed, text)
    return {"op": kind, "page": h.page + 1, "text": h.text, "bbox": [round(v, 2) for v in h.bbox], **kw}


def write(tmp_path, data, name="report.corrections.json"):
    p = tmp_path / name
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def test_roundtrip_of_the_schema(parsed, tmp_path):
    data = base(parsed, [op(parsed, "delete", "1.1.1 Detail 1.1.1 discussion"),
                         op(parsed, "level", "2 Chapter Two", level=2)])
    data["headings"] = [{"text": "1 Chapter One", "page": 1, "bbox": [1, 2, 3, 4], "level": 1}]
    c = load_corrections(write(tmp_path, data))
    assert c.document == "report.pdf" and c.pages == parsed.document.page_count
    assert [x.op for x in c.corrections] == ["delete", "level"]
    assert c.corrections[0].page == 0 and c.corrections[1].level == 2   # 0-based inside
    again = corrections_from_dict(json.loads(json.dumps(c.to_dict())))
    assert again.corrections == c.corrections and again.headings == c.headings


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(format="other"), "not a corrections file"),
    (lambda d: d.update(schema_version="2.0"), "schema_version '2.0'"),
    (lambda d: d.update(document=[]), "\"document\""),
    (lambda d: d.update(corrections={}), "\"corrections\" must be a list"),
    (lambda d: d["corrections"].append({"op": "rename", "page": 1, "text": "x"}), "correction 2: \"op\""),
    (lambda d: d["corrections"].append({"op": "delete", "page": 0, "text": "x"}), "1-based"),
    (lambda d: d["corrections"].append({"op": "delete", "page": 99, "text": "x"}), "past the document's"),
    (lambda d: d["corrections"].append({"op": "delete", "page": 1, "text": " "}), "non-empty \"text\""),
    (lambda d: d["corrections"].append({"op": "level", "page": 1, "text": "x", "level": 0}), "\"level\""),
    (lambda d: d["corrections"].append({"op": "add", "page": 1, "text": "x", "level": 2}), "needs its \"bbox\""),
    (lambda d: d["corrections"].append({"op": "delete", "page": 1, "text": "x", "bbox": [1, 2]}), "\"bbox\""),
])
def test_bad_files_fail_naming_the_file(parsed, tmp_path, mutate, message):
    data = base(parsed, [op(parsed, "delete", "2 Chapter Two")])
    mutate(data)
    p = write(tmp_path, data, "bad.json")
    with pytest.raises(ReferenceFormatError) as e:
        load_corrections(p)
    assert message in str(e.value) and "bad.json" in str(e.value)


def test_not_json_and_missing(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{", encoding="utf-8")
    with pytest.raises(ReferenceFormatError, match="x.json: not a JSON file"):
        load_corrections(p)
    with pytest.raises(ReferenceFormatError, match="nope.json: corrections file not found"):
        load_corrections(tmp_path / "nope.json")


def test_apply_delete_level_add(parsed):
    doc = parsed.document
    chapter2 = heading(parsed, "2 Chapter Two")
    para = next(b for b in doc.blocks if b.page == chapter2.page and b.index > chapter2.block)  # first paragraph
    ops = [op(parsed, "delete", "1.1.1 Detail 1.1.1 discussion"),
           op(parsed, "level", "1.2 Section 1.2 results", level=3),
           {"op": "add", "page": para.page + 1, "text": para.text[:50], "bbox": list(para.bbox), "level": 2}]
    c = corrections_from_dict(base(parsed, ops), path="fix.json")
    hs = apply_corrections(doc, parsed.headings, c)
    texts = [h.text for h in hs]
    assert "1.1.1 Detail 1.1.1 discussion" not in texts and len(hs) == len(parsed.headings)
    added = hs[texts.index("2 Chapter Two") + 1]
    assert added.block == para.index and added.level == 2 and added.source == "manual"
    assert added.text == " ".join(para.text.split())  # the whole block, not the cut text of the file
    relevel = hs[texts.index("1.2 Section 1.2 results")]
    assert relevel.level == 3 and relevel.level_source == "manual"
    fixed = apply_to_parsed(parsed, c)
    assert fixed.tree.to_text(pages=False).splitlines()[:4] == [
        "1 Chapter One", "  1.1 Section 1.1 results", "    1.2 Section 1.2 results",
        "    1.2.1 Detail 1.2.1 discussion"]
    assert fixed.stats["corrections"]["applied"] == 3 and fixed.stats["heading_sources"]["manual"] == 1
    # the originals are untouched (frozen values)
    assert heading(parsed, "1.2 Section 1.2 results").level == 2


def test_matching_by_box_when_the_text_differs(parsed):
    h = heading(parsed, "2.1 Section 2.1 results")
    c = Corrections("report.pdf", None, None, (Correction("delete", h.page, "2.1 Section 2.1 resu1ts", h.bbox),),
                    path="fix.json")
    assert "2.1 Section 2.1 results" not in [x.text for x in apply_corrections(parsed.document, parsed.headings, c)]


def test_unknown_heading_and_other_file_are_errors(parsed):
    c = corrections_from_dict(base(parsed, [{"op": "delete", "page": 2, "text": "No such heading"}]), path="fix.json")
    with pytest.raises(ReferenceFormatError) as e:
        apply_corrections(parsed.document, parsed.headings, c)
    assert str(e.value).startswith("fix.json, page 2: correction 1 (delete 'No such heading' on page 2)")
    made = corrections_from_dict({**base(parsed, [{"op": "delete", "page": 2, "text": "No such heading"}]),
                                  "settings": {"outline": "ignore", "predictor": "learned"}}, path="fix.json")
    with pytest.raises(ReferenceFormatError, match="made with outline=ignore, predictor=learned"):
        apply_corrections(parsed.document, parsed.headings, made)
    other = corrections_from_dict(base(parsed, [], sha1="0" * 40), path="fix.json")
    with pytest.raises(ReferenceFormatError, match="fix.json: written for report.pdf"):
        apply_corrections(parsed.document, parsed.headings, other)
    nowhere = corrections_from_dict(base(parsed, [{"op": "add", "page": 1, "text": "x", "bbox": [0, 0, 1, 1],
                                                   "level": 1}]), path="fix.json")
    with pytest.raises(ReferenceFormatError, match="no text block at that box"):
        apply_corrections(parsed.document, parsed.headings, nowhere)


def test_toc_cli_applies_and_fails_fast(parsed, tmp_path):
    pdf = parsed.document.path
    f = write(tmp_path, base(parsed, [op(parsed, "level", "2 Chapter Two", level=2)]))
    r = subprocess.run([sys.executable, "-m", "structrag.cli", "toc", pdf, "--corrections", f, "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    levels = {h["text"]: (h["level"], h["level_source"]) for h in json.loads(r.stdout)["headings"]}
    assert levels["2 Chapter Two"] == (2, "manual") and levels["1 Chapter One"][0] == 1
    bad = tmp_path / "broken.json"
    bad.write_text("[]", encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "structrag.cli", "toc", pdf, "--corrections", bad],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "broken.json: not a corrections file" in r.stderr and "Traceback" not in r.stderr


def test_corrected_tree_as_training_labels(parsed, tmp_path):
    from structrag.levels.training import training_rows

    pdf = parsed.document.path
    corrected = [{"text": h.text, "page": h.page + 1, "bbox": list(h.bbox), "level": 1 if h.level == 1 else 2}
                 for h in parsed.headings]
    data = base(parsed, [])
    data["headings"] = corrected
    f = write(tmp_path, data)
    with pytest.raises(ReferenceFormatError, match="report.pdf is not beside"):
        reference_doc_from_corrections(f)
    ref = reference_doc_from_corrections(f, pdf=pdf)
    assert ref.doc_id == "report" and ref.group == "corrections" and ref.located == len(corrected)
    assert [h.level for h in ref.headings] == [c["level"] for c in corrected]
    assert ref.headings[0].size > 0  # style from the printed block
    X, y, _ = training_rows(ref)
    assert len(X) == len(y) > 0


def test_tree_depths_make_a_valid_sequence():
    from structrag.corrections import tree_depths

    assert tree_depths([1, 3, 3, 2, 4, 1, 2]) == [1, 2, 2, 2, 3, 1, 2]
    assert tree_depths([2, 2, 1]) == [1, 1, 1]


def test_train_levels_also_takes_corrections(tmp_path):
    """`structrag train-levels --also X.corrections.json`: the corrected tree joins the training documents."""
    import pymupdf

    from structrag.cli import main

    data = tmp_path / "headings"
    data.mkdir()
    ref = numbered_report(data / "ref.pdf", chapters=2, sections=2, subsections=1, with_toc=True)
    toc = pymupdf.open(ref).get_toc()
    (data / "ref.toc.json").write_text(json.dumps({"toc": toc}), encoding="utf-8")
    (data / "manifest.jsonl").write_text(json.dumps({"doc_id": "ref", "group": "business"}) + "\n", encoding="utf-8")
    fixed = tmp_path / "fixed"
    fixed.mkdir()
    pdf = numbered_report(fixed / "mine.pdf", chapters=3, sections=1, subsections=1)  # no bookmarks
    p = parse_pdf(pdf, outline="ignore")
    corr = {"format": CORRECTIONS_FORMAT, "schema_version": "1.0",
            "document": {"name": "mine.pdf", "sha1": p.document.sha1, "pages": p.document.page_count},
            "corrections": [],
            "headings": [{"text": h.text, "page": h.page + 1, "bbox": list(h.bbox),
                          "level": h.text.split()[0].count(".") + 1}
                         for h in p.headings]}
    del corr["headings"][1]  # "1.1 ..." deleted by hand: its "1.1.1" child now jumps from level 1 to 3
    (fixed / "mine.corrections.json").write_text(json.dumps(corr), encoding="utf-8")
    out = tmp_path / "levels.txt"
    assert main(["train-levels", "--data", str(data), "--also", str(fixed), "--out", str(out),
                 "--rounds", "3", "--dagger-rounds", "0"]) == 0
    meta = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    docs = {d["doc_id"]: d for d in meta["documents"]}
    assert set(docs) == {"ref", "mine"} and docs["mine"]["group"] == "corrections"
    assert docs["mine"]["headings"] == len(corr["headings"])
    # --also alone: the corrections are the training documents, no reference folder needed
    alone = tmp_path / "alone.txt"
    assert main(["train-levels", "--also", str(fixed), "--out", str(alone), "--rounds", "3", "--dagger-rounds",
                 "0"]) == 0
    assert {d["doc_id"] for d in json.loads(alone.with_suffix(".json").read_text())["documents"]} == {"mine"}


def test_train_levels_without_documents_says_what_to_give(tmp_path, capsys, monkeypatch):
    from structrag.cli import main

    monkeypatch.delenv("STRUCTRAG_SHARED_DATA", raising=False)
    assert main(["train-levels", "--out", str(tmp_path / "m.txt")]) == 2
    assert "--also" in capsys.readouterr().err
