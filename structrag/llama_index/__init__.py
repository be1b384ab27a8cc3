"""LlamaIndex adapters: a PDF reader and a section-aware node parser.

The only structrag package that imports LlamaIndex (``pip install
structrag[llama-index]``): :mod:`.reader` (PDF -> LlamaIndex ``Document``, header paths, the
parse cache) and :mod:`.node_parser` (section and chunk nodes).

* :class:`StructPDFReader` (a ``BaseReader``) parses a PDF with
  :func:`structrag.pipeline.parse_pdf` into one LlamaIndex ``Document`` whose
  text is the reading-order text (``structrag.Document.text``), with
  ``page_offsets`` in its metadata (``page_offsets[p]`` is where 0-based page
  ``p`` starts; the last entry is the text length).  The parse stays in a
  small in-process cache so the node parser does not parse again.
* :class:`StructragNodeParser` (a ``NodeParser``) turns those Documents, or
  PDF paths (:meth:`StructragNodeParser.get_nodes_from_pdfs`), into a
  hierarchy: one node per section, linked ``PARENT``/``CHILD`` (a section's
  children are its own chunks, then its sub-sections, in reading order), and
  leaf chunk nodes from :func:`structrag.chunking.chunk_document`, linked
  ``PREVIOUS``/``NEXT`` among themselves in reading order and ``SOURCE`` to
  the Document.  Put all nodes in a docstore and the leaves in a vector
  index, and ``AutoMergingRetriever`` merges retrieved chunks into their
  section (see ``examples/llamaindex_pipeline.py``).

Node metadata: ``section_path`` (list of heading texts, root to own
heading), ``header_path`` (the same joined by :data:`HEADER_PATH_SEPARATOR`,
see :func:`join_header_path`), ``heading_level`` (the section's level, 0 for
the preamble), ``page_start``/``page_end`` (0-based PDF pages),
``page_label`` (1-based, for people and LLMs), ``section_id``,
``structrag_node`` (``"section"`` or ``"chunk"``) and, on chunks,
``sibling_index``/``sibling_count``, ``bboxes`` and ``block_ids``.  Only the
keys named in ``embed_metadata_keys`` / ``llm_metadata_keys`` reach the
embedding / LLM text; the bulky ones never do.

Metadata length: LlamaIndex splitters count the visible metadata in the chunk
size and fail when it alone exceeds it.  Here the visible heading path is
capped at ``max_header_tokens`` (a longer one is shown elided as ``header``,
with the full ``header_path`` kept but hidden), and each section's chunk
budget is ``chunk_size`` minus its visible metadata, so a node's text plus
metadata fits ``chunk_size`` and a downstream ``SentenceSplitter`` with the
same chunk size never fails on it.

Section nodes hold the whole section text (sub-sections included) so that a
merged result reads like the section; embed only the leaves.
"""

from __future__ import annotations

from .node_parser import StructragNodeParser
from .reader import HEADER_PATH_SEPARATOR, StructPDFReader, join_header_path, split_header_path, to_llama_document

__all__ = [
    "StructPDFReader",
    "StructragNodeParser",
    "HEADER_PATH_SEPARATOR",
    "join_header_path",
    "split_header_path",
    "to_llama_document",
]
