"""LlamaIndex node parser: section nodes and section-aware chunk nodes from structrag-parsed PDFs."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

try:
    from llama_index.core.bridge.pydantic import Field, PrivateAttr
    from llama_index.core.node_parser.interface import NodeParser
    from llama_index.core.schema import (
        BaseNode,
        MetadataMode,
        NodeRelationship,
        ObjectType,
        RelatedNodeInfo,
        TextNode,
    )
    from llama_index.core.utils import get_tqdm_iterable
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        f"structrag.llama_index needs llama-index-core ({exc}); install it with "
        "`pip install structrag[llama-index]`"
    ) from exc

from ..chunking import chunk_document, sections
from ..errors import ConfigError, InputError
from ..model import Document
from ..tokenizers import Tokenizer, get_tokenizer
from ..tree import HeadingTree

from .reader import (
    _N_KEYS,
    _NOT_ON_NODES,
    _R_FILE_NAME,
    _R_FILE_PATH,
    _R_OPTIONS,
    _R_SCHEMA,
    _R_SHA1,
    _READER_HIDDEN,
    _cached,
    _parse,
    _remember,
    _text_key,
    join_header_path,
    to_llama_document,
)

__all__ = ["StructragNodeParser"]


def _page_label(a: int, b: int) -> str:
    if a < 0:
        return ""
    return str(a + 1) if a == b else f"{a + 1}-{b + 1}"


def _node_id(doc_sha1: str, kind: str, key: str) -> str:
    return hashlib.sha1(f"{doc_sha1}\x1f{kind}\x1f{key}".encode("utf-8")).hexdigest()[:32]


class StructragNodeParser(NodeParser):
    """Section nodes and section-aware chunk nodes from structrag-parsed PDFs.

    ``chunk_size`` counts tokens of text plus visible metadata, as LlamaIndex
    splitters do; ``chunk_overlap`` repeats tokens within a section only.
    ``tokenizer``: anything :func:`structrag.tokenizers.get_tokenizer`
    accepts; by default LlamaIndex's global tokenizer (tiktoken
    ``cl100k_base``, offline through llama-index-core's bundled cache).
    ``section_nodes=False`` gives the leaf chunks only.  ``parse_options``
    go to :func:`structrag.pipeline.parse_pdf` when a PDF must be parsed.
    Node ids are deterministic (``id_func`` is not used).
    """

    chunk_size: int = Field(default=256, gt=0, description="Tokens per chunk, visible metadata included.")
    chunk_overlap: int = Field(default=0, ge=0, description="Tokens repeated from the previous chunk of a section.")
    include_heading: bool = Field(default=True, description="Start each section's first chunk with its heading.")
    section_nodes: bool = Field(default=True, description="Emit section nodes linked PARENT/CHILD.")
    max_header_tokens: int = Field(default=64, gt=0, description="Cap on the visible heading path.")
    embed_metadata_keys: List[str] = Field(
        default_factory=lambda: ["file_name", "header_path", "header"],
        description="Metadata keys (of those structrag sets) shown to the embedding model.",
    )
    llm_metadata_keys: List[str] = Field(
        default_factory=lambda: ["file_name", "header_path", "header", "page_label"],
        description="Metadata keys (of those structrag sets) shown to the LLM.",
    )
    parse_options: Dict[str, Any] = Field(default_factory=dict, description="Options for parse_pdf.")
    tokenizer: Optional[Any] = Field(default=None, exclude=True, description="Token counter (see docstring).")

    _tok: Any = PrivateAttr(default=None)

    @classmethod
    def class_name(cls) -> str:
        return "StructragNodeParser"

    @classmethod
    def from_defaults(cls, **kwargs: Any) -> "StructragNodeParser":
        return cls(**kwargs)

    def model_post_init(self, __context: Any) -> None:
        super().model_post_init(__context)
        if self.chunk_overlap >= self.chunk_size:
            raise ConfigError(f"chunk_overlap ({self.chunk_overlap}) must be smaller than chunk_size ({self.chunk_size})")

    # --- tokens -----------------------------------------------------------
    def _tokenizer(self) -> Tokenizer:
        if self._tok is None:
            if self.tokenizer is None:
                from llama_index.core.utils import get_tokenizer as li_tokenizer

                self._tok = get_tokenizer(li_tokenizer())
            else:
                self._tok = get_tokenizer(self.tokenizer)
        return self._tok

    # --- entry points -----------------------------------------------------
    def get_nodes_from_pdfs(
        self, paths: Iterable[str | os.PathLike[str]], show_progress: bool = False
    ) -> List[BaseNode]:
        """Parse PDFs and return their nodes (see :meth:`build_nodes`)."""
        out: List[BaseNode] = []
        for p in get_tqdm_iterable(list(paths), show_progress, "Parsing PDFs"):
            document, tree = _parse(p, self.parse_options)
            li_doc = to_llama_document(document, tree, parse_options=self.parse_options)
            out.extend(self.build_nodes(document, tree, li_doc))
        return out

    def _parse_nodes(
        self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any
    ) -> List[BaseNode]:
        out: List[BaseNode] = []
        for node in get_tqdm_iterable(nodes, show_progress, "Parsing documents into nodes"):
            document, tree = self._structure_of(node)
            out.extend(self.build_nodes(document, tree, node))
        return out

    def _postprocess_parsed_nodes(self, nodes: List[BaseNode], parent_doc_map: Dict[str, Any]) -> List[BaseNode]:
        # build_nodes sets exact offsets, metadata and relationships; the base class
        # would re-find offsets by text search, copy bulky document metadata onto
        # every node and chain section nodes into PREVIOUS/NEXT.
        return nodes

    def _structure_of(self, node: BaseNode) -> tuple[Document, HeadingTree]:
        md = node.metadata
        text = node.get_content(metadata_mode=MetadataMode.NONE)
        sha = md.get(_R_SHA1)
        if sha is None or _R_SCHEMA not in md:
            raise ConfigError(
                f"document {node.node_id!r} was not read by StructPDFReader, so its section structure is unknown",
                path=md.get(_R_FILE_PATH) or md.get(_R_FILE_NAME),
                hint="load PDFs with structrag.llama_index.StructPDFReader, or call "
                "StructragNodeParser.get_nodes_from_pdfs(paths)",
            )
        hit = _cached((sha, _text_key(text)))
        if hit is not None:
            return hit
        path = md.get(_R_FILE_PATH)
        if not path or not Path(path).is_file():
            raise InputError(
                "the parse of this document is not in memory and its PDF is not at file_path",
                path=path or md.get(_R_FILE_NAME),
                hint="read it again with StructPDFReader in this process, or call get_nodes_from_pdfs",
            )
        if _R_OPTIONS in md:
            options = json.loads(md[_R_OPTIONS])
        elif self.parse_options:
            options = dict(self.parse_options)
        else:
            raise InputError(
                "the parse of this document is not in memory and its parse options could not be stored",
                path=path,
                hint="read it with StructPDFReader in the same process as the node parser",
            )
        document, tree = _parse(path, options)
        if document.sha1 != sha:
            raise InputError("the PDF changed since it was read (sha1 differs)", path=path,
                             hint="read it again with StructPDFReader")
        if document.text != text:
            raise InputError(
                "the Document's text is not the PDF's reading-order text (edited after reading?)",
                path=path,
                hint="chunk the unmodified Document, or apply text changes to the nodes afterwards",
            )
        _remember((sha, _text_key(text)), (document, tree))
        return document, tree

    # --- metadata -----------------------------------------------------------
    def _visible_header(self, path: tuple[str, ...], tok: Tokenizer) -> tuple[str, str | None]:
        """(full header_path, elided form to show instead, or None when the full one fits)."""
        full = join_header_path(path)
        limit = max(4, min(self.max_header_tokens, self.chunk_size // 4))
        if tok.count(full) <= limit:
            return full, None
        own = path[-1]
        # keep the top-level heading and the own heading, drop the middle; then the top too
        cands = ([[path[0], "…", own]] if len(path) > 2 else []) + ([["…", own]] if len(path) > 1 else [])
        for cand in cands:
            short = join_header_path(cand)
            if tok.count(short) <= limit:
                return full, short
        # the own heading alone is too long: keep as many of its first words as fit
        prefix = ["…"] if len(path) > 1 else []
        words = own.split()
        lo, hi = 0, len(words)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if tok.count(join_header_path(prefix + [" ".join(words[:mid]) + " …"])) <= limit:
                lo = mid
            else:
                hi = mid - 1
        short = join_header_path(prefix + [" ".join(words[:lo]) + " …"])
        while tok.count(short) > limit and len(short) > 1:  # one enormous word
            short = short[: len(short) // 2] + "…"
        return full, short

    def _exclusions(self, base_embed: Sequence[str], base_llm: Sequence[str], keys: Iterable[str]):
        keys = list(keys)
        ours = set(_N_KEYS) | set(_READER_HIDDEN) | {_R_FILE_NAME}
        embed = [k for k in keys if k in ours and k not in self.embed_metadata_keys]
        llm = [k for k in keys if k in ours and k not in self.llm_metadata_keys]
        embed += [k for k in base_embed if k not in embed]
        llm += [k for k in base_llm if k not in llm]
        return embed, llm

    # --- the nodes ------------------------------------------------------------
    def build_nodes(self, document: Document, tree: HeadingTree, li_document: BaseNode | None = None) -> List[BaseNode]:
        """Section and chunk nodes of one parsed document (sections first within each section).

        ``li_document`` is the LlamaIndex Document the nodes point to with
        ``SOURCE`` (made by :func:`to_llama_document` when None).
        """
        if li_document is None:
            li_document = to_llama_document(document, tree, parse_options=self.parse_options)
        tok = self._tokenizer()
        secs = sections(document, tree)
        base = self._base_metadata(document, li_document)
        sec_md, sec_budget = self._section_metadata(document, secs, base, tok)
        chunks = chunk_document(
            document,
            tree,
            max_tokens=lambda s: sec_budget[s.id],
            overlap=self.chunk_overlap,
            tokenizer=tok,
            include_heading=self.include_heading,
        )
        make = self._node_maker(document, li_document, base)
        chunk_nodes: list[TextNode] = []
        chunks_of: dict[str, list[TextNode]] = {}
        for c in chunks:
            md = dict(sec_md[c.section_id])
            p0, p1 = (c.pages[0], c.pages[-1]) if c.pages else (-1, -1)
            md.update(
                page_start=p0,
                page_end=p1,
                page_label=_page_label(p0, p1),
                structrag_node="chunk",
                sibling_index=c.sibling_index,
                sibling_count=c.sibling_count,
                bboxes=[[p, *(round(v, 1) for v in bb)] for p, bb in c.bboxes],
                block_ids=list(c.block_ids),
            )
            n = make(c.id, c.start, c.end, md)
            chunk_nodes.append(n)
            chunks_of.setdefault(c.section_id, []).append(n)

        if self.include_prev_next_rel:
            for a, b in zip(chunk_nodes, chunk_nodes[1:]):
                a.relationships[NodeRelationship.NEXT] = RelatedNodeInfo(
                    node_id=b.node_id, node_type=ObjectType.TEXT, hash=b.hash)
                b.relationships[NodeRelationship.PREVIOUS] = RelatedNodeInfo(
                    node_id=a.node_id, node_type=ObjectType.TEXT, hash=a.hash)

        if not self.section_nodes:
            return list(chunk_nodes)
        sec_nodes = _section_nodes(document, secs, sec_md, chunks_of, make)
        # reading order: each section node just before its own chunks
        out: list[BaseNode] = []
        for s in secs:
            if s.id in sec_nodes:
                out.append(sec_nodes[s.id])
            out.extend(chunks_of.get(s.id, ()))
        return out

    def _base_metadata(self, document: Document, li_document: BaseNode) -> tuple[dict[str, Any], list[str], list[str]]:
        """The metadata every node starts from, and the keys hidden from the embedding and from the LLM."""
        if not self.include_metadata:
            return {_R_FILE_NAME: document.name, _R_SHA1: document.sha1}, [], []
        return ({k: v for k, v in li_document.metadata.items() if k not in _NOT_ON_NODES},
                [k for k in li_document.excluded_embed_metadata_keys if k not in _NOT_ON_NODES],
                [k for k in li_document.excluded_llm_metadata_keys if k not in _NOT_ON_NODES])

    def _section_metadata(self, document: Document, secs: Sequence[Any], base: tuple[dict[str, Any], list[str], list[str]],
                          tok: Tokenizer) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
        """Per section, its metadata and the chunk budget left after the visible part of it."""
        base_md, base_embed, base_llm = base
        sec_md: dict[str, dict[str, Any]] = {}
        sec_budget: dict[str, int] = {}
        for s in secs:
            full, short = self._visible_header(s.path, tok)
            md = dict(base_md)
            md.update(
                section_path=list(s.path),
                header_path=full,
                heading_level=s.level,
                section_id=s.id,
            )
            if short is not None:
                md["header"] = short
            sec_md[s.id] = md
            probe = dict(md, page_start=s.page_start, page_end=s.page_end,
                         page_label=_page_label(s.page_start, s.page_end) + "-0000")
            embed_x, llm_x = self._exclusions(base_embed, base_llm, probe)
            if short is not None:
                embed_x.append("header_path")
                llm_x.append("header_path")
            reserve = 0
            for excl in (embed_x, llm_x):
                shown = "\n".join(f"{k}: {v}" for k, v in probe.items() if k not in excl)
                reserve = max(reserve, tok.count(shown) + 2 if shown else 0)
            budget = self.chunk_size - reserve
            if budget < max(8, self.chunk_size // 3, self.chunk_overlap + 1):
                raise ConfigError(
                    f"chunk_size {self.chunk_size} leaves only {budget} tokens of text after the "
                    f"{reserve} tokens of visible metadata of section {s.title!r}",
                    path=document.path,
                    hint="raise chunk_size, or drop keys from embed_metadata_keys / llm_metadata_keys",
                )
            sec_budget[s.id] = budget
        return sec_md, sec_budget

    def _node_maker(self, document: Document, li_document: BaseNode,
                    base: tuple[dict[str, Any], list[str], list[str]]) -> Callable[..., TextNode]:
        """``make(node_id, start, end, metadata)``: a node over ``document.text[start:end]``, its SOURCE set."""
        _, base_embed, base_llm = base
        source = RelatedNodeInfo(
            node_id=li_document.node_id,
            node_type=ObjectType.DOCUMENT,
            metadata={_R_FILE_NAME: document.name},
            hash=li_document.hash,
        )
        text = document.text

        def make(node_id: str, s: int, e: int, md: dict[str, Any]) -> TextNode:
            embed_x, llm_x = self._exclusions(base_embed, base_llm, md)
            if "header" in md:
                embed_x.append("header_path")
                llm_x.append("header_path")
            node = TextNode(
                id_=node_id,
                text=text[s:e],
                metadata=md,
                excluded_embed_metadata_keys=embed_x,
                excluded_llm_metadata_keys=llm_x,
                start_char_idx=s,
                end_char_idx=e,
            )
            node.relationships[NodeRelationship.SOURCE] = source
            return node

        return make


def _section_nodes(document: Document, secs: Sequence[Any], sec_md: dict[str, dict[str, Any]],
                   chunks_of: dict[str, list[TextNode]], make: Callable[..., TextNode]) -> dict[str, TextNode]:
    """Section nodes, linked to their chunks and sub-sections: bottom-up, a section exists if it or a descendant
    has chunks (the root is the document itself)."""
    sec_nodes: dict[str, TextNode] = {}
    for s in reversed(secs):
        if s.parent_id is None:
            continue
        kids: list[TextNode] = list(chunks_of.get(s.id, ()))
        kids += [sec_nodes[c] for c in s.children_ids if c in sec_nodes]
        if not kids:
            continue
        md = dict(sec_md[s.id])
        md.update(page_start=s.page_start, page_end=s.page_end,
                  page_label=_page_label(s.page_start, s.page_end), structrag_node="section")
        sn = make(_node_id(document.sha1, "section", f"{s.id}\x1f" + "\x1e".join(s.path)),
                  s.span_start, s.span_end, md)
        sn.relationships[NodeRelationship.CHILD] = [
            RelatedNodeInfo(node_id=k.node_id, node_type=ObjectType.TEXT, hash=k.hash) for k in kids
        ]
        sec_nodes[s.id] = sn
    for s in secs:
        sn = sec_nodes.get(s.id)
        if sn is None:
            continue
        info = RelatedNodeInfo(node_id=sn.node_id, node_type=ObjectType.TEXT, hash=sn.hash)
        for k in chunks_of.get(s.id, ()):
            k.relationships[NodeRelationship.PARENT] = info
        for c in s.children_ids:
            if c in sec_nodes:
                sec_nodes[c].relationships[NodeRelationship.PARENT] = info
    return sec_nodes
