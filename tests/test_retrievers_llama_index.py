"""The LlamaIndex retriever over a real structrag index."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode  # noqa: E402

from retrievers.index import Index  # noqa: E402
from retrievers.llama_index import StructragRetriever  # noqa: E402
from structrag.errors import ConfigError  # noqa: E402
from structrag.llama_index import HEADER_PATH_SEPARATOR  # noqa: E402
from indexutil import make_reports  # noqa: E402


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("li")
    make_reports(d)
    Index.build([d / "acme.pdf", d / "globex.pdf"], d / "ix", dense=False).close()
    return d / "ix"


def test_retrieve_returns_scored_text_nodes(index_dir):
    r = StructragRetriever.from_index_dir(index_dir, similarity_top_k=2, mode="bm25")
    nodes = r.retrieve("capital expenditures in 2024")
    assert 1 <= len(nodes) <= 2 and all(isinstance(n, NodeWithScore) for n in nodes)
    top = nodes[0]
    assert isinstance(top.node, TextNode) and "1,577" in top.node.get_content()
    m = top.node.metadata
    assert m["doc"] == "acme.pdf" and m["section_path"][-1] == "Liquidity and Capital Resources"
    assert m["page_start"] == m["page_end"] == 1 and m["page_label"] == "2"
    assert m["header_path"].endswith(HEADER_PATH_SEPARATOR + "Liquidity and Capital Resources")
    assert top.score == pytest.approx(r.index.search("capital expenditures in 2024", k=1, mode="bm25")[0].score)
    # the LLM sees the heading path and page, not the bookkeeping keys; embedders see nothing extra
    llm_text = top.node.get_content(metadata_mode="llm")
    assert "Liquidity and Capital Resources" in llm_text and "chunk_id" not in llm_text
    assert top.node.get_content(metadata_mode="embed") == top.node.get_content()
    assert top.node.node_id == m["chunk_id"]


def test_doc_filter_and_query_bundle(index_dir):
    r = StructragRetriever(Index.open(index_dir), similarity_top_k=5, mode="bm25", doc="globex.pdf")
    nodes = r.retrieve(QueryBundle("dividends per share"))
    assert nodes and {n.node.metadata["doc"] for n in nodes} == {"globex.pdf"}


def test_bad_arguments(index_dir):
    with pytest.raises(ConfigError):
        StructragRetriever.from_index_dir(index_dir, mode="sparse")
    with pytest.raises(ConfigError):
        StructragRetriever.from_index_dir(index_dir, similarity_top_k=0)
