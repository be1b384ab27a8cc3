"""OpenSearch: mapping and bulk bodies checked offline; sync and search against a real server when
``STRUCTRAG_OPENSEARCH_URL`` is set (skipped otherwise)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

opensearchpy = pytest.importorskip("opensearchpy")

from retrievers.engines import EngineRetriever, OpenSearchEngine  # noqa: E402
from retrievers.engines.records import iter_engine_chunks  # noqa: E402
from retrievers.index import Index  # noqa: E402
from structrag.errors import ConfigError  # noqa: E402
from indexutil import make_reports  # noqa: E402

URL = os.environ.get("STRUCTRAG_OPENSEARCH_URL")


@pytest.fixture(scope="module")
def lexical_index(tmp_path_factory):
    d = tmp_path_factory.mktemp("pdfs")
    make_reports(d)
    index = Index.build([d], tmp_path_factory.mktemp("ix") / "ix", dense=False)
    yield index
    index.close()


def _engine(**kw):
    return OpenSearchEngine(opensearchpy.OpenSearch("http://127.0.0.1:9"), "structrag-test", **kw)


def test_mapping():
    body = _engine(knn_engine="faiss").mapping(384, k1=1.2, b=0.6)
    props = body["mappings"]["properties"]
    assert body["mappings"]["dynamic"] == "strict"
    assert props["section_path"] == {"type": "keyword"} and props["doc"] == {"type": "keyword"}
    assert props["vector"]["type"] == "knn_vector" and props["vector"]["dimension"] == 384
    assert props["vector"]["method"]["space_type"] == "innerproduct" and props["vector"]["method"]["engine"] == "faiss"
    assert props["tokens"] == {"type": "text", "analyzer": "structrag_tokens", "similarity": "structrag_bm25"}
    idx = body["settings"]["index"]
    assert idx["knn"] is True and idx["similarity"]["structrag_bm25"] == {"type": "BM25", "k1": 1.2, "b": 0.6}
    assert body["settings"]["analysis"]["analyzer"]["structrag_tokens"]["tokenizer"] == "whitespace"
    lexical = _engine().mapping(None)
    assert "vector" not in lexical["mappings"]["properties"] and lexical["settings"]["index"]["knn"] is False
    with pytest.raises(ConfigError, match="lower case"):
        OpenSearchEngine(None, "Filings")
    with pytest.raises(ConfigError, match="knn engine"):
        _engine(knn_engine="nmslib2")


def test_bulk_body(lexical_index):
    """The NDJSON opensearch-py sends for the bulk actions: one action line and one source line per chunk."""
    from opensearchpy.helpers.actions import expand_action

    engine = _engine()
    [(name, chunks)] = list(iter_engine_chunks(lexical_index, ["acme.pdf"]))
    actions = list(engine.bulk_actions(chunks))
    assert len(actions) == len(lexical_index.chunks("acme.pdf"))
    serializer = engine.client.transport.serializer
    lines = []
    for a in actions:
        head, src = expand_action(dict(a))
        lines += [serializer.dumps(head), serializer.dumps(src)]
    body = "\n".join(lines) + "\n"
    parsed = [json.loads(x) for x in body.splitlines()]
    heads, sources = parsed[0::2], parsed[1::2]
    assert all(h == {"index": {"_index": "structrag-test", "_id": f"acme.pdf:{c.chunk_id}"}} for h, c in zip(heads, chunks))
    fields = set(engine.mapping(None)["mappings"]["properties"])
    stored = lexical_index.chunks("acme.pdf")
    for s, c, ch in zip(sources, chunks, stored):
        assert set(s) <= fields  # the strict mapping accepts every field sent
        assert s["tokens"].split() == c.tokens and s["text"] == ch.text and s["section_path"] == list(ch.section_path)
        assert s["pages"] == sorted(set(ch.pages)) and s["doc"] == "acme.pdf" and "vector" not in s


def test_query_bodies():
    lex = OpenSearchEngine.lexical_query(["capit", "expenditur", "2024", "capit"], 100, "acme.pdf")
    assert lex["size"] == 100 and lex["query"]["bool"]["must"][0]["match"]["tokens"]["query"] == "capit expenditur 2024 capit"
    assert lex["query"]["bool"]["filter"] == [{"term": {"doc": "acme.pdf"}}]
    assert "filter" not in OpenSearchEngine.lexical_query(["x"], 5)["query"]["bool"]
    knn = OpenSearchEngine.knn_query(np.ones(3, np.float32), 50, "acme.pdf")["query"]["knn"]["vector"]
    assert knn == {"vector": [1.0, 1.0, 1.0], "k": 50, "filter": {"term": {"doc": "acme.pdf"}}}


@pytest.mark.skipif(not URL, reason="set STRUCTRAG_OPENSEARCH_URL to run against a real OpenSearch")
def test_real_server_round_trip(lexical_index):
    engine = OpenSearchEngine.from_env("structrag-pytest")
    engine.drop()
    try:
        report = engine.sync(lexical_index)
        assert report.added == ["acme.pdf", "globex.pdf"] and engine.count() == len(lexical_index)
        assert engine.sync(lexical_index).unchanged == ["acme.pdf", "globex.pdf"]
        retriever = EngineRetriever(lexical_index, engine)
        for q in ["How much were capital expenditures in 2024?", "dividends per share declared by the board"]:
            for doc in (None, "acme.pdf"):
                want = [h.chunk_id for h in lexical_index.search(q, k=3, doc=doc, mode="ranker")]
                assert [h.chunk_id for h in retriever.search(q, k=3, doc=doc)] == want
            top = engine.lexical(lexical_index.tokenizer.tokenize(q), 1)[0]
            assert top.chunk_id == lexical_index.search(q, k=1, mode="bm25")[0].chunk_id
            assert isinstance(top.payload["section_path"], list)
        lexical_index_docs = [d.name for d in lexical_index.documents()]
        assert sorted(engine.synced_documents()) == lexical_index_docs
    finally:
        engine.drop()
