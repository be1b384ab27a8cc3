"""A LlamaIndex ``BaseRetriever`` over a structrag :class:`~retrievers.index.Index`.

The only retrievers module that imports LlamaIndex (``pip install
structrag[llama-index]``).

>>> from retrievers.llama_index import StructragRetriever          # doctest: +SKIP
>>> retriever = StructragRetriever.from_index_dir("my-index", similarity_top_k=5)
>>> nodes = retriever.retrieve("capital expenditure 2018")
>>> RetrieverQueryEngine.from_args(retriever, llm=...)            # any LlamaIndex pipeline

Each result is a ``NodeWithScore`` whose ``TextNode`` has the chunk id as
``id_``, the chunk text, and metadata in the keys the structrag node parser
uses: ``section_path`` (list), ``header_path``, ``page_start`` / ``page_end``
(0-based), ``page_label`` (1-based), plus ``doc`` and ``pages``.  Only
``header_path`` and ``page_label`` reach the LLM; nothing reaches an embedder.
"""

from __future__ import annotations

import os
from typing import Any, List

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from structrag.errors import ConfigError
from structrag.llama_index import join_header_path

from .engines.records import identity_payload
from .index import MODES, Hit, Index
from .rank.search import page_fields

__all__ = ["StructragRetriever", "hit_to_node"]

_HIDDEN_FROM_LLM = ["section_path", "page_start", "page_end", "doc", "pages", "chunk_id"]


def hit_to_node(hit: Hit, identity: Any = None) -> NodeWithScore:
    """A hit as a LlamaIndex node; ``identity`` (the document's DocumentIdentity) adds its known fields
    (``issuer``, ``doc_type``, ``year``, ``quarter``, ``language``, ``doc_title``) to the metadata."""
    pages = list(hit.pages)
    meta = {
        "doc": hit.doc,
        "chunk_id": hit.chunk_id,
        "section_path": list(hit.section_path),
        "header_path": join_header_path(hit.section_path),
        **page_fields(pages),
        "page_label": ", ".join(str(p + 1) for p in pages),
        **{k: v for k, v in identity_payload(identity).items() if v is not None},
    }
    node = TextNode(
        id_=hit.chunk_id,
        text=hit.text,
        metadata=meta,
        excluded_embed_metadata_keys=list(meta),
        excluded_llm_metadata_keys=_HIDDEN_FROM_LLM,
    )
    return NodeWithScore(node=node, score=float(hit.score))


class StructragRetriever(BaseRetriever):
    """Retrieves chunks from a structrag index.

    Parameters
    ----------
    index:
        An open :class:`~retrievers.index.Index`.
    similarity_top_k:
        Hits per query.
    mode:
        ``ranker`` (default), ``bm25``, ``dense`` or ``hybrid``.
    doc:
        Restrict to one indexed file (its name, e.g. ``3M_2018_10K.pdf``).
    where:
        Restrict to documents whose identity matches (``{"company": "3M", "year": 2018}``, as
        :meth:`~retrievers.index.Index.search`).
    """

    def __init__(
        self,
        index: Index,
        *,
        similarity_top_k: int = 10,
        mode: str = "ranker",
        doc: str | None = None,
        candidates: int = 100,
        where: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if mode not in MODES:
            raise ConfigError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
        if similarity_top_k < 1:
            raise ConfigError(f"similarity_top_k must be at least 1, got {similarity_top_k}")
        self._index = index
        self.similarity_top_k = int(similarity_top_k)
        self.mode = mode
        self.doc = doc
        self.candidates = int(candidates)
        self.where = dict(where) if where else None
        super().__init__(**kwargs)

    @classmethod
    def from_index_dir(cls, path: str | os.PathLike, **kwargs: Any) -> "StructragRetriever":
        return cls(Index.open(path), **kwargs)

    @property
    def index(self) -> Index:
        return self._index

    def _retrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        hits = self._index.search(
            query_bundle.query_str,
            k=self.similarity_top_k,
            doc=self.doc,
            mode=self.mode,  # type: ignore[arg-type]
            candidates=self.candidates,
            where=self.where,
        )
        ids = self._index.identities() if hits else {}
        return [hit_to_node(h, ids.get(h.doc)) for h in hits]
