"""LlamaIndex reader: a PDF parsed by structrag as one LlamaIndex ``Document`` of reading-order text.

Also the metadata keys both adapters use, the escaped ``header_path`` and the in-process parse
cache the node parser reads (so it does not parse a PDF the reader just parsed).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict
from typing import Any, Iterator, List, Sequence

try:
    from llama_index.core.readers.base import BaseReader
    from llama_index.core.schema import Document as LIDocument
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        f"structrag.llama_index needs llama-index-core ({exc}); install it with "
        "`pip install structrag[llama-index]`"
    ) from exc

from ..errors import ConfigError
from ..model import SCHEMA_VERSION, Document
from ..tree import HeadingTree


__all__ = ["StructPDFReader", "HEADER_PATH_SEPARATOR", "join_header_path", "split_header_path", "to_llama_document"]

#: Joins heading texts in ``header_path``.  Heading texts that contain it (or a
#: backslash) are escaped by :func:`join_header_path`, so it never collides.
HEADER_PATH_SEPARATOR = " › "
_SEP_CHAR = "›"

# metadata keys the reader sets on a Document
_R_FILE_NAME = "file_name"
_R_FILE_PATH = "file_path"
_R_SHA1 = "doc_sha1"
_R_PAGES = "page_count"
_R_OFFSETS = "page_offsets"
_R_SCHEMA = "structrag_schema_version"
_R_OPTIONS = "structrag_parse_options"
_READER_HIDDEN = (_R_FILE_PATH, _R_SHA1, _R_PAGES, _R_OFFSETS, _R_SCHEMA, _R_OPTIONS)
# reader keys not copied onto nodes (bulky, or about the whole file)
_NOT_ON_NODES = (_R_PAGES, _R_OFFSETS, _R_SCHEMA, _R_OPTIONS)

# metadata keys the node parser sets
_N_KEYS = (
    "section_path", "header_path", "header", "heading_level", "page_start", "page_end", "page_label",
    "section_id", "structrag_node", "sibling_index", "sibling_count", "bboxes", "block_ids",
)


def join_header_path(path: Sequence[str]) -> str:
    """Heading texts joined by :data:`HEADER_PATH_SEPARATOR`, escaped so it splits back.

    Whitespace in each heading is collapsed to single spaces; a backslash or a
    ``›`` inside a heading is prefixed with a backslash.
    """
    parts = []
    for h in path:
        t = " ".join(str(h).split())
        parts.append(t.replace("\\", "\\\\").replace(_SEP_CHAR, "\\" + _SEP_CHAR))
    return HEADER_PATH_SEPARATOR.join(parts)


def split_header_path(header_path: str) -> list[str]:
    """Inverse of :func:`join_header_path`."""
    if not header_path:
        return []
    out: list[str] = []
    cur: list[str] = []
    i, n, sep = 0, len(header_path), HEADER_PATH_SEPARATOR
    while i < n:
        c = header_path[i]
        if c == "\\" and i + 1 < n:
            cur.append(header_path[i + 1])
            i += 2
        elif header_path.startswith(sep, i):
            out.append("".join(cur))
            cur = []
            i += len(sep)
        else:
            cur.append(c)
            i += 1
    out.append("".join(cur))
    return out


# ---------------------------------------------------------------------------
# parsing and the in-process cache of parses


class _ParseCache:
    """The last few parses, keyed by (PDF sha1, text sha1), so the parser need not re-parse."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._d: OrderedDict[tuple[str, str], tuple[Document, HeadingTree]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> tuple[Document, HeadingTree] | None:
        with self._lock:
            v = self._d.get(key)
            if v is not None:
                self._d.move_to_end(key)
            return v

    def put(self, key: tuple[str, str], value: tuple[Document, HeadingTree]) -> None:
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.size:
                self._d.popitem(last=False)


_CACHE = _ParseCache()


def _cached(key: tuple[str, str]) -> tuple[Document, HeadingTree] | None:
    return _CACHE.get(key)  # the module's cache at call time (tests replace it)


def _remember(key: tuple[str, str], value: tuple[Document, HeadingTree]) -> None:
    _CACHE.put(key, value)


def _text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def _parse(path: str | os.PathLike[str], options: dict[str, Any]) -> tuple[Document, HeadingTree]:
    from ..pipeline import parse_pdf

    parsed = parse_pdf(path, **options)
    return parsed.document, parsed.tree


def _options_json(options: dict[str, Any]) -> str | None:
    try:
        return json.dumps(options, sort_keys=True)
    except (TypeError, ValueError):
        return None  # e.g. a predictor object: re-parsing needs the same process


def to_llama_document(
    document: Document,
    tree: HeadingTree,
    *,
    extra_info: dict[str, Any] | None = None,
    parse_options: dict[str, Any] | None = None,
) -> LIDocument:
    """A LlamaIndex Document for an already parsed PDF (what :class:`StructPDFReader` returns).

    The parse is remembered in-process, so :class:`StructragNodeParser` uses it
    instead of parsing the file again.
    """
    _CACHE.put((document.sha1, _text_key(document.text)), (document, tree))
    metadata: dict[str, Any] = dict(extra_info or {})
    metadata.update(
        {
            _R_FILE_NAME: document.name,
            _R_FILE_PATH: str(document.path),
            _R_SHA1: document.sha1,
            _R_PAGES: document.page_count,
            _R_OFFSETS: list(document.page_offsets),
            _R_SCHEMA: SCHEMA_VERSION,
        }
    )
    opts = _options_json(dict(parse_options or {}))
    if opts is not None:
        metadata[_R_OPTIONS] = opts
    hidden = [k for k in _READER_HIDDEN if k in metadata]
    return LIDocument(
        id_=document.sha1,
        text=document.text,
        metadata=metadata,
        excluded_embed_metadata_keys=list(hidden),
        excluded_llm_metadata_keys=list(hidden),
    )


class StructPDFReader(BaseReader):
    """Read a PDF into one LlamaIndex ``Document`` of reading-order text.

    Keyword arguments are passed to :func:`structrag.pipeline.parse_pdf`
    (``outline="auto"``, ``predictor=...``, ...).  Usable on its own
    (``StructPDFReader().load_data("report.pdf")``) or as
    ``SimpleDirectoryReader(..., file_extractor={".pdf": StructPDFReader()})``.
    """

    def __init__(self, **parse_options: Any) -> None:
        self.parse_options = dict(parse_options)

    def lazy_load_data(  # type: ignore[override]
        self,
        file: str | os.PathLike[str],
        extra_info: dict[str, Any] | None = None,
        fs: Any = None,
    ) -> Iterator[LIDocument]:
        if fs is not None and getattr(fs, "protocol", "file") not in ("file", ("file", "local"), "local"):
            raise ConfigError(
                f"StructPDFReader reads local files only, not through {type(fs).__name__}",
                path=file,
                hint="download the PDF first",
            )
        document, tree = _parse(file, self.parse_options)
        yield to_llama_document(document, tree, extra_info=extra_info, parse_options=self.parse_options)

    def load_data(  # type: ignore[override]
        self,
        file: str | os.PathLike[str],
        extra_info: dict[str, Any] | None = None,
        fs: Any = None,
    ) -> List[LIDocument]:
        return list(self.lazy_load_data(file, extra_info=extra_info, fs=fs))

