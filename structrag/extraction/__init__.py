"""Extraction, the first stage: a PDF's text blocks with their style, in reading order, page
furniture apart and contents pages marked.

Modules in pipeline order: :mod:`.blocks` (lines and style blocks of one page),
:mod:`.reading_order` (XY-cut), :mod:`.furniture` (running headers, footers, page numbers),
:mod:`.contents_pages` (which pages print a table of contents), :mod:`.pdf` (the whole document).
"""

from __future__ import annotations

from .._pymupdf import import_pymupdf
from .pdf import extract, open_pdf

__all__ = ["extract", "open_pdf", "import_pymupdf"]
