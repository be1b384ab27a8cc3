"""structrag: structure-aware RAG over long documents.

Extract blocks from PDFs, reconstruct a heading tree that is consistent over
the whole document (level-wise memory), chunk by section, and rank with
hierarchy-aware features.
"""

from __future__ import annotations

from . import _pymupdf
from ._lazy import lazy_exports

_pymupdf.prepare()  # a hook for the first import of pymupdf; imports nothing now (see the module)

from .errors import (  # noqa: E402
    BackendError,
    BackendResponseError,
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
)
from .extract import extract
from .model import SCHEMA_VERSION, Block, Chunk, Document, Heading, Numbering, OutlineEntry
from .outline import locate_outline
from .tree import HeadingTree, TreeNode

__version__ = "0.1.0"

# The chunker (and its tokenizers) loads on first use: `structrag toc` and `--help` never need it.
_LAZY = {"Section": "chunking", "chunk_document": "chunking", "sections": "chunking",
         "ContentsEntry": "contents", "ContentsResult": "contents", "read_contents": "contents"}


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
    "StructragError",
    "InputError",
    "NotAPDFError",
    "EncryptedPDFError",
    "CorruptPDFError",
    "ReferenceFormatError",
    "ConfigError",
    "ModelError",
    "BackendError",
    "BackendResponseError",
    "IndexFormatError",
    "SchemaVersionError",
    "StructragWarning",
]
