"""Qdrant (qdrant-client's embedded local mode): sync, BM25 and dense first stages, the engine retriever.

The engine's BM25 is the index's (same weights, exact scores), so the
engine-backed retriever must return the index's own results in every mode.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

pytest.importorskip("qdrant_client")

from retrievers.engines import EngineRetriever, QdrantEngine, query_sparse, term_index  # noqa: E402
from retrievers.index import Index  # noqa: E402
from structrag.errors import ConfigError  # noqa: E402
from indexutil import GLOBEX, make_report, make_reports  # noqa: E402

QUERIES = ["How much were capital expenditures in 2024?", "dividends per share declared by the board",
           "What risks does Globex face?", "cash flow statement purchases of property", "business segments"]


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory):
    d = tmp_path_factory.mktemp("pdfs")
    make_reports(d)
    return d


@pytest.fixture(scope="module")
def dense_index(pdfs, tmp_path_factory):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("faiss")
    index = Index.build([pdfs], tmp_path_factory.mktemp("ix") / "dense", dense=True)
    yield index
    index.close()


def test_term_index_and_query_sparse():
    assert term_index("capit") == term_index("capit") and 0 <= term_index("x") < 2**32
    idx, val = query_sparse(["a", "b", "a"])
    assert dict(zip(idx, val)) == {term_index("a"): 2.0, term_index("b"): 1.0} and idx == sorted(idx)


def test_sync_round_trip_and_payload(dense_index, tmp_path):
    engine = QdrantEngine.local(tmp_path / "q")
    report = engine.sync(dense_index)
    assert report.added == ["acme.pdf", "globex.pdf"] and report.chunks_written == len(dense_index)
    assert engine.count() == len(dense_index)
    assert engine.sync(dense_index).unchanged == ["acme.pdf", "globex.pdf"]  # nothing to send
    hit = engine.lexical(dense_index.tokenizer.tokenize("capital expenditures 2024"), 1, doc="acme.pdf")[0]
    chunk = next(c for c in dense_index.chunks("acme.pdf") if c.id == hit.chunk_id)
    p = hit.payload
    assert p["section_path"] == ["Item 7. Management's Discussion and Analysis", "Liquidity and Capital Resources"]
    assert p["pages"] == [1] and p["page_count"] == 3 and p["text"] == chunk.text and p["doc_sha1"] == chunk.doc_sha1
    assert p["start"] == chunk.start and p["block_ids"] == list(chunk.block_ids) and len(p["bboxes"]) == len(chunk.bboxes)
    engine.close()
    # persisted: a new client on the same folder answers the same
    again = QdrantEngine.local(tmp_path / "q")
    assert again.count() == len(dense_index) and again.synced_documents().keys() == {"acme.pdf", "globex.pdf"}
    assert again.lexical(dense_index.tokenizer.tokenize("capital expenditures 2024"), 1, doc="acme.pdf")[0] == hit
    again.close()


def test_engine_bm25_scores_are_the_index_scores(dense_index):
    engine = QdrantEngine.local()
    engine.sync(dense_index)
    for q in QUERIES:
        toks = dense_index.tokenizer.tokenize(q)
        got = {h.chunk_id: h.score for h in engine.lexical(toks, 50)}
        want = {h.chunk_id: h.score for h in dense_index.search(q, k=50, mode="bm25")}
        assert got.keys() == want.keys()
        assert all(abs(got[c] - want[c]) < 1e-4 for c in want)
        assert {h.doc for h in engine.lexical(toks, 50, doc="globex.pdf")} <= {"globex.pdf"}


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid", "ranker"])
def test_engine_retriever_gives_the_index_results(dense_index, mode):
    engine = QdrantEngine.local()
    engine.sync(dense_index)
    retriever = EngineRetriever(dense_index, engine)
    for q in QUERIES:
        for doc in (None, "acme.pdf", "globex.pdf"):
            a = dense_index.search(q, k=5, doc=doc, mode=mode)
            b = retriever.search(q, k=5, doc=doc, mode=mode)
            assert [h.chunk_id for h in b] == [h.chunk_id for h in a]
            assert [h.section_path for h in b] == [h.section_path for h in a] and [h.pages for h in b] == [h.pages for h in a]
            np.testing.assert_allclose([h.score for h in b], [h.score for h in a], rtol=1e-4, atol=1e-5)
    with pytest.raises(ConfigError, match="no document named"):
        retriever.search("x", doc="nope.pdf")


def test_sync_follows_additions_and_removals(pdfs, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(pdfs / "acme.pdf", src / "acme.pdf")
    with Index.build([src], tmp_path / "ix", dense=False) as index:
        engine = QdrantEngine.local()
        engine.sync(index)
        make_report(src / "globex.pdf", GLOBEX)
        index.add([src])
        report = engine.sync(index)
        assert report.added == ["globex.pdf"] and report.bm25_refreshed == len(index.chunks("acme.pdf"))
        retriever = EngineRetriever(index, engine)
        for q in QUERIES:  # the refreshed weights carry the new idf
            assert [h.chunk_id for h in retriever.search(q, k=5, mode="bm25")] == \
                   [h.chunk_id for h in index.search(q, k=5, mode="bm25")]
            assert [h.chunk_id for h in retriever.search(q, k=5)] == [h.chunk_id for h in index.search(q, k=5)]
        index.remove("acme.pdf")
        report = engine.sync(index)
        assert report.removed == ["acme.pdf"] and engine.count() == len(index)
        assert {h.doc for h in retriever.search("capital expenditures dividends", k=10, mode="bm25")} == {"globex.pdf"}


def test_llama_index_vector_store_reads_the_collection(dense_index):
    pytest.importorskip("llama_index.vector_stores.qdrant")
    from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters, VectorStoreQuery

    from retrievers.engines import qdrant_vector_store

    engine = QdrantEngine.local()
    engine.sync(dense_index)
    store = qdrant_vector_store(engine)
    qv = dense_index.query_vector("dividends per share declared by the board").tolist()
    res = store.query(VectorStoreQuery(query_embedding=qv, similarity_top_k=3))
    want = [h.chunk_id for h in dense_index.search("dividends per share declared by the board", k=3, mode="dense")]
    assert [n.metadata["chunk_id"] for n in res.nodes] == want
    assert res.nodes[0].metadata["section_path"] == ["Shareholder Returns"] and "dividends" in res.nodes[0].text
    only = store.query(VectorStoreQuery(query_embedding=qv, similarity_top_k=3,
                                        filters=MetadataFilters(filters=[MetadataFilter(key="doc", value="acme.pdf")])))
    assert {n.metadata["doc"] for n in only.nodes} == {"acme.pdf"}
