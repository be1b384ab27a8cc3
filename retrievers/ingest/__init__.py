"""Ingestion, the third stage: PDF files to processed documents (parsed, chunked, tokenised, embedded).

Modules: :mod:`.sections` (the section nodes of a document's chunks), :mod:`.documents` (files to
processed documents, in worker processes; their embeddings).  The parse and chunk options stored with
an index are declared once, in :mod:`structrag.options`.
"""
