"""Checks on the project's own development query sets (eval/data/*_queries.jsonl).

The unit part runs everywhere: the files parse, the fields are there and well
formed, qids are unique across the sets, pages are sorted, unique and 0-based,
every relevant page carries an evidence snippet and every snippet sits on a
relevant page.  The ``shared_data`` part opens the PDFs the questions were
written on (they stay outside the repository, in ../shared/data) and checks
that each snippet really is on its page, so a wrong page index or an edited
PDF fails loudly.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from structrag.extraction import import_pymupdf

pymupdf = import_pymupdf()  # without its add-ons

DATA = Path(__file__).resolve().parents[1] / "eval" / "data"
SETS = {
    "prospectus_zh_queries.jsonl": "zh",
    "prospectus_style_en_queries.jsonl": "en",
    "narrative_en_train_queries.jsonl": "en",
}
REQUIRED = {
    "qid": str,
    "source": str,
    "query": str,
    "answer": str,
    "doc": str,
    "collection": str,
    "relevant_pages": list,
    "evidence": list,
    "question_type": str,
    "lang": str,
    "written_for": str,
}
# Where each collection's PDFs live under ../shared/data, and the manifest that
# records their sha1 (the page indices are only valid for that exact file).
COLLECTIONS = {
    "prospectus-zh": ("prospectus-zh", "prospectus-zh/manifest.jsonl", "file"),
    "retrieval": ("retrieval/pdfs", "retrieval/docs.jsonl", "file"),
    "headings": ("headings", "headings/manifest.jsonl", "doc_id"),
}
MAX_SNIPPET = 120


def _rows(name: str) -> list[dict]:
    path = DATA / name
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:  # name the line so the fix is quick
            raise AssertionError(f"{path.name}:{n}: not JSON ({exc})") from exc
    return rows


def _flat(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.fixture(scope="module")
def all_rows() -> dict[str, list[dict]]:
    return {name: _rows(name) for name in SETS}


@pytest.mark.parametrize("name", sorted(SETS))
def test_rows_are_well_formed(all_rows, name):
    rows = all_rows[name]
    assert rows, f"{name} is empty"
    for r in rows:
        where = f"{name}:{r.get('qid')}"
        for key, typ in REQUIRED.items():
            assert key in r, f"{where}: missing {key!r}"
            assert isinstance(r[key], typ), f"{where}: {key!r} is {type(r[key]).__name__}, not {typ.__name__}"
        for key in ("qid", "query", "answer", "doc", "question_type"):
            assert r[key].strip(), f"{where}: empty {key!r}"
        assert r["lang"] == SETS[name], f"{where}: lang {r['lang']!r} in a {SETS[name]} set"
        assert r["source"] == "structrag-dev", where
        assert "this project" in r["written_for"], where
        assert r["collection"] in COLLECTIONS, f"{where}: unknown collection {r['collection']!r}"
        assert r["doc"].endswith(".pdf"), where

        pages = r["relevant_pages"]
        assert pages, f"{where}: no relevant pages"
        assert all(isinstance(p, int) and not isinstance(p, bool) for p in pages), f"{where}: non-integer page"
        assert all(p >= 0 for p in pages), f"{where}: negative page (pages are 0-based)"
        assert pages == sorted(set(pages)), f"{where}: relevant_pages not sorted and unique: {pages}"

        ev_pages = []
        for e in r["evidence"]:
            assert set(e) == {"page", "text"}, f"{where}: evidence keys {sorted(e)}"
            assert isinstance(e["page"], int) and e["page"] in pages, f"{where}: evidence page {e['page']} not relevant"
            assert e["text"].strip(), f"{where}: empty evidence text"
            assert len(e["text"]) <= MAX_SNIPPET, f"{where}: snippet of {len(e['text'])} chars (licence: short quotes only)"
            ev_pages.append(e["page"])
        assert sorted(set(ev_pages)) == pages, f"{where}: pages without evidence: {sorted(set(pages) - set(ev_pages))}"


def test_qids_unique_across_sets(all_rows):
    counts = Counter(r["qid"] for rows in all_rows.values() for r in rows)
    dupes = sorted(q for q, c in counts.items() if c > 1)
    assert not dupes, f"duplicate qids: {dupes}"


def test_set_sizes_and_spread(all_rows):
    zh, en = all_rows["prospectus_zh_queries.jsonl"], all_rows["prospectus_style_en_queries.jsonl"]
    assert len(zh) >= 60 and len(en) >= 30
    per_doc = Counter(r["doc"] for r in zh)
    assert len(per_doc) == 3 and min(per_doc.values()) >= 20, per_doc
    # a mix of kinds, not one template repeated
    assert len({r["question_type"] for r in zh}) >= 10
    assert len({r["question_type"] for r in en}) >= 8
    assert len({r["query"] for r in zh + en}) == len(zh) + len(en), "repeated question text"
    # the narrative training questions: several companies (leave one company out needs them) and kinds
    nen = all_rows["narrative_en_train_queries.jsonl"]
    assert len(nen) >= 60 and len({r["company"] for r in nen}) >= 5 and len({r["question_type"] for r in nen}) >= 8
    assert not {r["doc"] for r in nen} & {r["doc"] for r in en}, "training questions on a prospectus-style document"


def _manifest(shared: Path, collection: str) -> dict[str, dict]:
    _, manifest, key = COLLECTIONS[collection]
    out = {}
    for line in (shared / manifest).read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            name = rec[key] if key == "file" else rec[key] + ".pdf"
            out[name] = rec
    return out


@pytest.mark.parametrize("name", sorted(SETS))
def test_evidence_is_on_its_page(all_rows, name, shared_data):
    rows = all_rows[name]
    by_doc: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        by_doc.setdefault((r["collection"], r["doc"]), []).append(r)
    problems = []
    for (collection, doc), doc_rows in sorted(by_doc.items()):
        folder = COLLECTIONS[collection][0]
        path = shared_data / folder / doc
        assert path.exists(), f"{doc}: not in {shared_data / folder}"
        rec = _manifest(shared_data, collection).get(doc)
        assert rec is not None, f"{doc}: not listed in the {collection} manifest"
        sha1 = hashlib.sha1(path.read_bytes()).hexdigest()
        assert sha1 == rec["sha1"], f"{doc}: sha1 {sha1} differs from the manifest; page labels are for another file"
        with pymupdf.open(path) as pdf:
            cache: dict[int, str] = {}
            for r in doc_rows:
                for e in r["evidence"]:
                    p = e["page"]
                    if p >= pdf.page_count:
                        problems.append(f"{r['qid']}: page {p} beyond {doc} ({pdf.page_count} pages)")
                        continue
                    if p not in cache:
                        cache[p] = _flat(pdf[p].get_text())
                    if _flat(e["text"]) not in cache[p]:
                        problems.append(f"{r['qid']}: snippet not on {doc} page {p}: {e['text'][:40]!r}")
    assert not problems, "\n".join(problems)
