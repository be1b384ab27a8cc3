"""structrag: structure-aware RAG over long documents.

Extract blocks from PDFs, reconstruct a heading tree that is consistent over
the whole document (level-wise memory), chunk by section, and rank with
hierarchy-aware features.
"""

from __future__ import annotations

from . import errors
from ._lazy import lazy_exports
from .errors import (
    BackendError,
    BackendResponseError,
    BackendUnreachable,
    ConfigError,
    CorruptPDFError,
    EncryptedPDFError,
    IndexFormatError,
    InputError,
    ModelError,
    NotAPDFError,
    ReferenceFormatError,
    SchemaVersionError,
    StructragError,
    StructragWarning,
    TreeError,
)
from .extraction import extract
from .model import SCHEMA_VERSION, Block, Chunk, Document, Heading, Numbering, OutlineEntry
from .headings.outline import locate_outline
from .tree import HeadingTree, TreeNode

__version__ = "0.1.0"

# The chunker (and its tokenizers) loads on first use: `structrag toc` and `--help` never need it.
_LAZY = {"Section": "chunking", "chunk_document": "chunking", "sections": "chunking",
         "ContentsEntry": "headings.contents_entries", "ContentsResult": "headings.contents",
         "read_contents": "pipeline", "parse_pdf": "pipeline", "parse_document": "pipeline",
         "ParsedDocument": "pipeline", "detect_headings": "pipeline"}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

__all__ = [
    "__version__",
    "SCHEMA_VERSION",
    "Block",
    "Chunk",
    "ContentsEntry",
    "ContentsResult",
    "Section",
    "chunk_document",
    "sections",
    "Document",
    "Heading",
    "HeadingTree",
    "Numbering",
    "OutlineEntry",
    "TreeNode",
    "extract",
    "locate_outline",
    "read_contents",
    "detect_headings",
    "parse_pdf",
    "parse_document",
    "ParsedDocument",
]
__all__ += errors.__all__  # the exception tree
