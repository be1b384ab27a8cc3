"""The persisted index on real (generated) PDFs: build, add, no-op, replace, remove, formats, errors."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3

import numpy as np
import pytest

from retrievers.index import Index
from retrievers.ingest.documents import expand_paths
from retrievers.rank.ranker import LambdaRanker
from retrievers.rank.training import load_queries, make_training_set, train_ranker
from retrievers.store.corpus import LAYOUT
from retrievers.store.database import DB_NAME
from structrag.errors import ConfigError, IndexFormatError, ModelError, ReferenceFormatError, SchemaVersionError
from indexutil import ACME, GLOBEX, make_report, make_reports, write_queries


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory):
    d = tmp_path_factory.mktemp("pdfs")
    make_reports(d)
    return d


@pytest.fixture(scope="module")
def built(pdfs, tmp_path_factory):
    out = tmp_path_factory.mktemp("ix") / "index"
    index = Index.build([pdfs], out, dense=False)
    yield index
    index.close()


def _state(index):
    return {d.name: (d.sha1, d.generation) for d in index.store.documents()}


def test_build_stores_documents_chunks_and_trees(built):
    assert built.last_report.added == ["acme.pdf", "globex.pdf"]
    docs = {d.name: d for d in built.documents()}
    assert docs["acme.pdf"].page_count == 3 and docs["globex.pdf"].page_count == 2
    chunks = built.chunks("acme.pdf")
    assert [c.section_path[-1] for c in chunks] == [t for _, t, _ in ACME]
    assert all(c.doc_name == "acme.pdf" for c in chunks)
    tree = built.tree("acme.pdf")
    assert [n.text for n in tree.children()] == ["Item 1. Business", "Item 7. Management's Discussion and Analysis",
                                                "Item 8. Financial Statements"]
    doc = built.document("acme.pdf")
    assert doc.page_count == 3 and doc.text[chunks[3].start : chunks[3].end] == chunks[3].text


def test_bm25_search_finds_the_section(built):
    hits = built.search("How much were capital expenditures for property and plant in 2024?", k=3, mode="bm25")
    assert len(hits) == 2  # only chunks sharing a term score above 0
    top = hits[0]
    assert top.doc == "acme.pdf" and top.pages == (1,)
    assert top.section_path == ("Item 7. Management's Discussion and Analysis", "Liquidity and Capital Resources")
    assert "1,577" in top.text and top.score > hits[1].score
    d = top.to_dict()
    assert set(d) == {"doc", "chunk_id", "pages", "section_path", "score", "text"} and d["pages"] == [2]


def test_doc_filter_and_unknown_doc(built):
    hits = built.search("dividends", k=10, mode="bm25", doc="globex.pdf")
    assert hits and {h.doc for h in hits} == {"globex.pdf"}
    with pytest.raises(ConfigError, match="no document named 'nope.pdf'") as e:
        built.search("dividends", doc="nope.pdf")
    assert "indexed: " in str(e.value) and "globex.pdf" in str(e.value)  # the fix: the names it holds
    with pytest.raises(ConfigError, match="unknown mode"):
        built.search("x", mode="magic")
    with pytest.raises(ConfigError, match="--mode dense needs embeddings"):
        built.search("x", mode="dense")
    with pytest.raises(ConfigError, match="--mode hybrid needs embeddings"):  # not BM25 in disguise
        built.search("x", mode="hybrid")


def test_reindexing_unchanged_files_is_a_noop(built, pdfs):
    before = _state(built)
    gen = built.store.generation()
    derived = sorted(p.name for p in built.store.derived_root.iterdir())
    report = built.add([pdfs / "acme.pdf", pdfs])
    assert report.unchanged == ["acme.pdf", "globex.pdf"] and not report.added and not report.replaced
    assert _state(built) == before and built.store.generation() == gen
    assert sorted(p.name for p in built.store.derived_root.iterdir()) == derived


def test_adding_a_pdf_keeps_the_others(pdfs, tmp_path):
    out = tmp_path / "ix"
    with Index.build([pdfs / "acme.pdf"], out, dense=False) as index:
        first = _state(index)
        new = make_report(tmp_path / "new.pdf", GLOBEX)
        report = index.add([new, pdfs / "acme.pdf"])
        assert report.added == ["new.pdf"] and report.unchanged == ["acme.pdf"]
        after = _state(index)
        assert after["acme.pdf"] == first["acme.pdf"]  # same row, same generation: not re-parsed
        assert index.search("risks Globex", k=1, mode="bm25")[0].doc == "new.pdf"
    with Index.open(out) as again:
        assert [d.name for d in again.documents()] == ["acme.pdf", "new.pdf"]


def test_changed_file_replaces_its_old_version_and_remove(pdfs, tmp_path):
    out = tmp_path / "ix"
    src = tmp_path / "acme.pdf"
    shutil.copy(pdfs / "acme.pdf", src)
    with Index.build([src], out, dense=False) as index:
        assert not index.search("tornado damage", k=1, mode="bm25")
        make_report(src, extra="A tornado damaged the Ohio plant in January.")
        report = index.add([src])
        assert report.replaced == ["acme.pdf"]
        hits = index.search("tornado damage", k=1, mode="bm25")
        assert hits[0].section_path == ("Subsequent Events",) and hits[0].pages == (3,)
        assert len(index.documents()) == 1
        assert index.remove("acme.pdf") and not index.remove("acme.pdf")
        assert len(index) == 0 and index.search("tornado", mode="bm25") == []
    # vectors / derived files of removed documents are gone, the empty index still opens
    with Index.open(out) as again:
        assert again.documents() == []


def test_bad_files_are_reported_and_the_rest_indexed(pdfs, tmp_path):
    bad = tmp_path / "broken.pdf"
    bad.write_text("this is not a PDF at all")
    with Index.build([bad, pdfs / "globex.pdf", tmp_path / "missing.pdf"], tmp_path / "ix", dense=False) as index:
        r = index.last_report
        assert r.added == ["globex.pdf"]
        failed = dict(r.failed)
        assert set(failed) == {str(bad), str(tmp_path / "missing.pdf")}
        assert "broken.pdf" in failed[str(bad)]
        assert [d.name for d in index.documents()] == ["globex.pdf"]


def test_same_name_twice_in_one_batch_keeps_both(pdfs, tmp_path):
    """Two different files of one base name are two documents, named by the tails of their paths."""
    (tmp_path / "a").mkdir()
    shutil.copy(pdfs / "globex.pdf", tmp_path / "a" / "acme.pdf")
    with Index.build([pdfs / "acme.pdf", tmp_path / "a" / "acme.pdf"], tmp_path / "ix", dense=False) as index:
        r = index.last_report
        assert not r.failed and len(r.added) == 2
        names = sorted(d.name for d in index.documents())
        assert names == sorted([f"{pdfs.name}/acme.pdf", "a/acme.pdf"])
        assert index.search("dividends", doc="a/acme.pdf", mode="bm25")[0].doc == "a/acme.pdf"


def test_expand_paths(pdfs, tmp_path):
    sub = tmp_path / "x" / "y"
    sub.mkdir(parents=True)
    shutil.copy(pdfs / "acme.pdf", sub / "A.PDF")
    (sub / "notes.txt").write_text("x")
    got = expand_paths([tmp_path, sub / "A.PDF"])
    assert got == [sub / "A.PDF"]


def test_safe_formats_only(built):
    files = [p for p in built.path.rglob("*") if p.is_file()]
    assert not [p for p in files if p.suffix in (".pkl", ".pickle", ".joblib")]
    for p in files:
        if p.suffix == ".npy":
            np.load(p, allow_pickle=False)
        elif p.suffix == ".npz":
            with np.load(p, allow_pickle=False) as z:
                [z[k] for k in z.files]
        elif p.suffix == ".json":
            json.loads(p.read_text())


def test_missing_search_arrays_are_rebuilt_from_the_database(pdfs, tmp_path):
    out = tmp_path / "ix"
    with Index.build([pdfs], out, dense=False) as index:
        expected = [h.chunk_id for h in index.search("dividends per share", k=5, mode="bm25")]
    shutil.rmtree(out / "derived")
    with Index.open(out) as again:
        assert [h.chunk_id for h in again.search("dividends per share", k=5, mode="bm25")] == expected
        again.add([pdfs])  # a writer publishes them again
    assert any((out / "derived").glob("g*/COMPLETE"))


def test_open_errors(tmp_path, built):
    with pytest.raises(IndexFormatError, match="no such index directory"):
        Index.open(tmp_path / "nothing")
    with pytest.raises(IndexFormatError, match="not a structrag index"):
        Index.open(tmp_path)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / DB_NAME).write_bytes(b"garbage" * 100)
    with pytest.raises(IndexFormatError, match="cannot read"):
        Index.open(tmp_path / "bad")
    other = tmp_path / "other"
    shutil.copytree(built.path, other)
    conn = sqlite3.connect(other / DB_NAME)
    conn.execute("UPDATE meta SET value = '2.0' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaVersionError, match="schema version 2.0") as e:
        Index.open(other)
    assert "re-create the index" in str(e.value) and str(other) in str(e.value)


def test_create_refuses_an_existing_index_and_conflicting_settings(built, pdfs):
    with pytest.raises(ConfigError, match="already exists"):
        Index.create(built.path, dense=False)
    with pytest.raises(ConfigError, match="without dense"):
        Index.build([pdfs], built.path, dense=True)


def test_writer_lock(built):
    other = Index.open(built.path)
    try:
        other.store.lock()
        with pytest.raises(ConfigError, match="another process is writing"):
            built.add([])
    finally:
        other.close()
    built.add([])  # free again


def test_parallel_workers_give_the_same_chunks(pdfs, tmp_path):
    with Index.build([pdfs], tmp_path / "one", dense=False) as a, \
            Index.build([pdfs], tmp_path / "two", dense=False, workers=2) as b:
        for name in ("acme.pdf", "globex.pdf"):
            assert [c.to_dict() for c in a.chunks(name)] == [c.to_dict() for c in b.chunks(name)]


def test_train_a_ranker_and_search_with_it(built, tmp_path):
    queries = load_queries(write_queries(tmp_path / "q.jsonl"))
    ts = make_training_set(built, queries, candidates=20)
    assert len(ts.queries) == 5 and ts.X.shape[1] == len(ts.features) and set(ts.y.tolist()) <= {0, 1}
    assert (ts.y > 0).sum() >= 5
    model = train_ranker(ts, n_estimators=20, min_child_samples=1)
    built.set_ranker(model)
    try:
        assert (built.path / "ranker.txt").exists()
        hits = built.search("capital expenditures 2024", k=3)
        assert hits[0].section_path[-1] == "Liquidity and Capital Resources"
        with Index.open(built.path) as again:
            assert again.ranker.features == model.features
    finally:
        (built.path / "ranker.txt").unlink()
        (built.path / "ranker.json").unlink()
        built.set_ranker(None)


def test_ranker_needing_missing_features_is_refused(built):
    model = LambdaRanker(("bm25", "dense"))
    with pytest.raises(ModelError, match="lacks"):
        built.set_ranker(model)


def test_load_queries_errors(tmp_path):
    p = tmp_path / "q.jsonl"
    p.write_text('{"query": "x", "doc": "a.pdf", "relevant_pages": [1]}\n{"query": "y"}\n')
    with pytest.raises(ReferenceFormatError, match="line 2 lacks doc, relevant_pages"):
        load_queries(p)
    p.write_text('{"query": "x", "doc": "a.pdf", "relevant_pages": ["1"]}\n')
    with pytest.raises(ReferenceFormatError, match="0-based page numbers"):
        load_queries(p)
    p.write_text("not json\n")
    with pytest.raises(ReferenceFormatError, match="line 1 is not JSON"):
        load_queries(p)
    p.write_text("\n")
    with pytest.raises(ReferenceFormatError, match="no queries"):
        load_queries(p)


def test_add_chunks_for_custom_chunkers(tmp_path, built):
    chunks = built.chunks("globex.pdf")
    with Index.create(tmp_path / "ix", dense=False) as index:
        assert index.add_chunks("custom.pdf", chunks, page_count=2)
        assert not index.add_chunks("custom.pdf", chunks, page_count=2)  # same content: no-op
        hits = index.search("dividends per share", k=1, mode="bm25")
        assert hits[0].doc == "custom.pdf" and hits[0].pages == (1,)
        assert os.path.exists(tmp_path / "ix" / DB_NAME)


def test_search_arrays_of_an_older_layout_are_rebuilt_and_replaced(pdfs, tmp_path):
    out = tmp_path / "ix"
    with Index.build([pdfs], out, dense=False) as index:
        expected = [h.chunk_id for h in index.search("capital expenditures", k=3, mode="bm25")]
    done = next((out / "derived").glob("g*/COMPLETE"))
    done.write_text(json.dumps({**json.loads(done.read_text()), "layout": "corpus/0"}))
    (done.parent / "arrays.npz").write_bytes(b"old")  # unreadable for this version
    with Index.open(out) as again:
        assert [h.chunk_id for h in again.search("capital expenditures", k=3, mode="bm25")] == expected
        again.add([pdfs])  # nothing to parse, but the arrays are stored again in this layout
    assert json.loads(next((out / "derived").glob("g*/COMPLETE")).read_text())["layout"] != "corpus/0"
    with Index.open(out) as third:
        assert third.store.derived_ok(third.store.generation(), LAYOUT)


def test_works_without_the_dense_extra(pdfs, tmp_path):
    """BM25 and the lexical ranker need neither sentence-transformers nor faiss."""
    import subprocess
    import sys

    code = f"""
import sys
sys.modules["sentence_transformers"] = None  # as if not installed
sys.modules["faiss"] = None
from retrievers.index import Index
from structrag.errors import ConfigError
ix = Index.build([{str(pdfs)!r}], {str(tmp_path / 'ix')!r})
assert ix.dense_model is None, ix.dense_model
hits = ix.search("capital expenditures in 2024", k=2)          # the shipped lexical ranker
assert hits[0].section_path[-1] == "Liquidity and Capital Resources", hits
assert "dense" not in ix.ranker.features
try:
    Index.create({str(tmp_path / 'ix2')!r}, dense=True)
except ConfigError as e:
    assert "pip install structrag[dense]" in str(e), e
else:
    raise AssertionError("dense=True without the extra must fail")
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
