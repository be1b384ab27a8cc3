"""The typed document model that the pipeline stages hand to each other.

All values are frozen dataclasses holding tuples, so a stage can never change
what an earlier stage produced.  Coordinates are PDF points in the page *as
displayed* (rotation applied, origin top-left); pages are 0-based in the model
and 1-based only at the user-facing edges (CLI output, error messages).

Serialisation is plain JSON-compatible dicts (``to_dict`` / ``from_dict``);
nothing here is pickled.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal, Mapping, Sequence

__all__ = [
    "SCHEMA_VERSION",
    "BBox",
    "BlockRole",
    "Block",
    "OutlineEntry",
    "Document",
    "Numbering",
    "Heading",
    "Chunk",
    "DocumentIdentity",
    "IDENTITY_FIELDS",
]

#: Version of every on-disk / JSON shape produced by structrag.  Bump the major
#: part when a reader of the old shape would misread the new one.
SCHEMA_VERSION = "1.0"

BBox = tuple[float, float, float, float]

#: ``body``: reading-order content.  ``toc``: a line of a printed table of
#: contents (content, never a heading).  ``header`` / ``footer`` /
#: ``page_number``: running page furniture, removed from the text but kept on
#: record in :attr:`Document.furniture`.
BlockRole = Literal["body", "toc", "header", "footer", "page_number"]


def _bbox(value: Sequence[float]) -> BBox:
    x0, y0, x1, y1 = (float(v) for v in value)
    return (x0, y0, x1, y1)


@dataclass(frozen=True, slots=True)
class Block:
    """A run of lines with one dominant style, in reading order.

    ``start``/``end`` are character offsets into :attr:`Document.text`
    (``-1`` for furniture, which is not part of the text).
    """

    index: int
    page: int
    bbox: BBox
    text: str
    font: str
    size: float
    bold: bool
    italic: bool
    color: int
    line_count: int
    column: int = 0  # 0: spans the text width; 1..n: column from the left
    role: BlockRole = "body"
    start: int = -1
    end: int = -1
    rotated: bool = False  # text not running left to right (sidebars, vertical labels)

    def to_dict(self) -> dict[str, Any]:
        # field by field: dataclasses.asdict deep-copies recursively and was 15% of indexing a report
        d = {f: getattr(self, f) for f in _BLOCK_FIELDS}
        d["bbox"] = list(self.bbox)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Block":
        kw = {f.name: d[f.name] for f in fields(cls) if f.name in d}
        kw["bbox"] = _bbox(d["bbox"])
        return cls(**kw)


_BLOCK_FIELDS = tuple(f.name for f in fields(Block))


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """One entry of the PDF's own outline (bookmarks), page 0-based (-1: none)."""

    level: int
    title: str
    page: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "OutlineEntry":
        return cls(level=int(d["level"]), title=str(d["title"]), page=int(d["page"]))


@dataclass(frozen=True, slots=True)
class Document:
    """A PDF turned into reading-order blocks.

    ``text`` is the body blocks' texts joined by a blank line; each block's
    ``start``/``end`` points into it, and ``page_offsets[p]`` is where page
    ``p`` starts (``page_offsets[page_count] == len(text)``) and
    ``page_block_starts[p]`` is the index of its first body block.
    """

    path: str
    name: str
    sha1: str
    page_count: int
    page_sizes: tuple[tuple[float, float], ...]
    blocks: tuple[Block, ...]
    furniture: tuple[Block, ...]
    text: str
    page_offsets: tuple[int, ...]
    page_block_starts: tuple[int, ...]
    toc_pages: tuple[int, ...] = ()
    textless_pages: tuple[int, ...] = ()
    outline: tuple[OutlineEntry, ...] = ()
    metadata: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    schema_version: str = SCHEMA_VERSION

    # --- navigation -----------------------------------------------------
    def page_blocks(self, page: int) -> tuple[Block, ...]:
        """Body blocks of one page, in reading order."""
        lo, hi = self._page_block_range(page)
        return self.blocks[lo:hi]

    def _page_block_range(self, page: int) -> tuple[int, int]:
        if not 0 <= page < self.page_count:
            return (len(self.blocks), len(self.blocks)) if page >= 0 else (0, 0)
        return self.page_block_starts[page], self.page_block_starts[page + 1]

    def block_at(self, page: int, bbox: Sequence[float]) -> int | None:
        """Index of the body block on ``page`` overlapping ``bbox`` most (None if none)."""
        x0, y0, x1, y1 = bbox
        best, best_area = None, 0.0
        for b in self.page_blocks(page):
            w = min(x1, b.bbox[2]) - max(x0, b.bbox[0])
            h = min(y1, b.bbox[3]) - max(y0, b.bbox[1])
            if w > 0 and h > 0 and w * h > best_area:
                best, best_area = b.index, w * h
        return best

    def first_block_on_or_after(self, page: int) -> int:
        """Index of the first body block on ``page`` or later (``len(blocks)`` if none)."""
        lo, _ = self._page_block_range(page)
        return lo

    # --- serialisation ----------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "path": self.path,
            "name": self.name,
            "sha1": self.sha1,
            "page_count": self.page_count,
            "page_sizes": [list(s) for s in self.page_sizes],
            "blocks": [b.to_dict() for b in self.blocks],
            "furniture": [b.to_dict() for b in self.furniture],
            "text": self.text,
            "page_offsets": list(self.page_offsets),
            "page_block_starts": list(self.page_block_starts),
            "toc_pages": list(self.toc_pages),
            "textless_pages": list(self.textless_pages),
            "outline": [o.to_dict() for o in self.outline],
            "metadata": dict(self.metadata),
            "warnings": list(self.warnings),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Document":
        return cls(
            path=d["path"],
            name=d["name"],
            sha1=d["sha1"],
            page_count=int(d["page_count"]),
            page_sizes=tuple((float(w), float(h)) for w, h in d["page_sizes"]),
            blocks=tuple(Block.from_dict(b) for b in d["blocks"]),
            furniture=tuple(Block.from_dict(b) for b in d["furniture"]),
            text=d["text"],
            page_offsets=tuple(int(x) for x in d["page_offsets"]),
            page_block_starts=tuple(int(x) for x in d["page_block_starts"]),
            toc_pages=tuple(d.get("toc_pages", ())),
            textless_pages=tuple(d.get("textless_pages", ())),
            outline=tuple(OutlineEntry.from_dict(o) for o in d.get("outline", ())),
            metadata=tuple(sorted((str(k), str(v)) for k, v in dict(d.get("metadata", {})).items())),
            warnings=tuple(d.get("warnings", ())),
            schema_version=d.get("schema_version", SCHEMA_VERSION),
        )


@dataclass(frozen=True, slots=True)
class Numbering:
    """A parsed heading number such as ``2.3``, ``Item 7A``, ``(a)`` or ``第一节``.

    ``scheme`` names the family (``decimal``, ``roman``, ``alpha``, ``paren-alpha``,
    ``item``, ``part``, ``note``, ``cn-section``, ``cn-chapter``, ``cn-ordinal``,
    ``cn-paren``, ...); ``values`` are the integer values of each component
    (``2.3`` -> ``(2, 3)``, ``Item 7A`` -> ``(7, 1)``); ``depth`` is
    ``len(values)`` for dotted schemes and 1 otherwise; ``label`` is the
    matched text.
    """

    scheme: str
    values: tuple[int, ...]
    label: str

    @property
    def depth(self) -> int:
        return len(self.values) if self.scheme == "decimal" else 1

    def to_dict(self) -> dict[str, Any]:
        return {"scheme": self.scheme, "values": list(self.values), "label": self.label}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Numbering":
        return cls(scheme=d["scheme"], values=tuple(int(v) for v in d["values"]), label=d["label"])


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading in reading order, before or after its level is known.

    ``block`` is the index (into :attr:`Document.blocks`) of the body block
    where the heading starts; its section begins there.  ``block_end`` is one
    past its last block (multi-block headings are joined).  ``bbox`` is None
    only for an outline entry that could not be located on its page.
    ``source`` says where the heading came from (``layout``: detected from
    the page layout, ``contents``: an entry of the printed table of contents,
    ``outline``: the PDF's bookmarks, ``reference``); ``level_source`` says
    where its level came from (``outline``, ``contents``, ``contents-secondary``
    (a secondary contents run: before the levels stage, ``level`` is the level
    within the run only), ``logic`` (the document's own logic:
    :mod:`structrag.levels.walk.logic`), ``numbering``, ``model``, ``vlm``, ``llm``,
    ``font-size``, ``projected``, ``fallback``, ...).  JSON written before the ``layout`` name said ``detected``; it is
    read as ``layout``.
    """

    text: str
    page: int
    bbox: BBox | None
    block: int
    block_end: int
    font: str = ""
    size: float = 0.0
    bold: bool = False
    italic: bool = False
    color: int = 0
    numbering: Numbering | None = None
    score: float = 1.0
    reasons: tuple[str, ...] = ()
    source: str = "layout"
    level: int | None = None
    level_source: str | None = None
    confidence: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "page": self.page,
            "bbox": list(self.bbox) if self.bbox is not None else None,
            "block": self.block,
            "block_end": self.block_end,
            "font": self.font,
            "size": self.size,
            "bold": self.bold,
            "italic": self.italic,
            "color": self.color,
            "numbering": self.numbering.to_dict() if self.numbering else None,
            "score": self.score,
            "reasons": list(self.reasons),
            "source": self.source,
            "level": self.level,
            "level_source": self.level_source,
            "confidence": self.confidence,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Heading":
        return cls(
            text=d["text"],
            page=int(d["page"]),
            bbox=_bbox(d["bbox"]) if d.get("bbox") is not None else None,
            block=int(d["block"]),
            block_end=int(d["block_end"]),
            font=d.get("font", ""),
            size=float(d.get("size", 0.0)),
            bold=bool(d.get("bold", False)),
            italic=bool(d.get("italic", False)),
            color=int(d.get("color", 0)),
            numbering=Numbering.from_dict(d["numbering"]) if d.get("numbering") else None,
            score=float(d.get("score", 1.0)),
            reasons=tuple(d.get("reasons", ())),
            source=d.get("source", "layout"),
            level=d.get("level"),
            level_source=d.get("level_source"),
            confidence=d.get("confidence"),
        )


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of one section's text, with its place in the document.

    ``text == document.text[start:end]`` always.  ``section_path`` runs from the
    top-level heading down to the chunk's own section heading (empty for text
    before the first heading); ``heading_levels`` gives each path entry's
    level.  ``sibling_index`` / ``sibling_count`` place the chunk among the
    chunks of its own section.  ``pages`` are 0-based; ``bboxes`` pair a page
    with a block's box.
    """

    id: str
    doc_name: str
    doc_sha1: str
    text: str
    start: int
    end: int
    section_id: str
    section_path: tuple[str, ...]
    heading_levels: tuple[int, ...]
    sibling_index: int
    sibling_count: int
    pages: tuple[int, ...]
    bboxes: tuple[tuple[int, BBox], ...]
    block_ids: tuple[int, ...]
    schema_version: str = SCHEMA_VERSION
    extra: tuple[tuple[str, Any], ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "doc_name": self.doc_name,
            "doc_sha1": self.doc_sha1,
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "section_id": self.section_id,
            "section_path": list(self.section_path),
            "heading_levels": list(self.heading_levels),
            "sibling_index": self.sibling_index,
            "sibling_count": self.sibling_count,
            "pages": list(self.pages),
            "bboxes": [[p, list(b)] for p, b in self.bboxes],
            "block_ids": list(self.block_ids),
            "schema_version": self.schema_version,
            "extra": dict(self.extra),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Chunk":
        return cls(
            id=d["id"],
            doc_name=d["doc_name"],
            doc_sha1=d["doc_sha1"],
            text=d["text"],
            start=int(d["start"]),
            end=int(d["end"]),
            section_id=d["section_id"],
            section_path=tuple(d["section_path"]),
            heading_levels=tuple(int(x) for x in d["heading_levels"]),
            sibling_index=int(d["sibling_index"]),
            sibling_count=int(d["sibling_count"]),
            pages=tuple(int(p) for p in d["pages"]),
            bboxes=tuple((int(p), _bbox(b)) for p, b in d["bboxes"]),
            block_ids=tuple(int(x) for x in d["block_ids"]),
            schema_version=d.get("schema_version", SCHEMA_VERSION),
            extra=tuple(sorted(dict(d.get("extra", {})).items())),
        )


#: The fields of a :class:`DocumentIdentity` a user may set (``structrag index --meta``) and filter on.
IDENTITY_FIELDS = ("issuer", "title", "doc_type", "year", "quarter", "language", "tickers")


@dataclass(frozen=True, slots=True)
class DocumentIdentity:
    """What a document is: issuer, title, type, fiscal period and language (the root of its tree).

    ``doc_type`` is one of ``10-K``, ``10-Q``, ``8-K``, ``20-F``, ``annual report``, ``interim report``,
    ``earnings release``, ``prospectus``, ``sustainability report``, ``manual``, ``other``; ``year`` and
    ``quarter`` are the fiscal period the document covers, as its filer names it (quarter 1-4 or None);
    ``language`` an ISO 639-1 code (``en``, ``zh`` ...); ``tickers`` the trading symbols a filing's
    cover lists (``("MMM",)``; a note's series suffix dropped), empty when none is printed.  ``sources``
    says where each known field came from: ``cover`` (the first pages' text), ``auditor`` (the company
    the auditor's report is addressed to), ``running`` (a running header "X and Subsidiaries"),
    ``metadata`` (the PDF's title/subject), ``heading`` (the
    first heading or outline entry) or ``user``.  None: not known.
    """

    issuer: str | None = None
    title: str | None = None
    doc_type: str | None = None
    year: int | None = None
    quarter: int | None = None
    language: str | None = None
    tickers: tuple[str, ...] = ()
    sources: tuple[tuple[str, str], ...] = ()

    def source(self, name: str) -> str | None:
        return dict(self.sources).get(name)

    def with_fields(self, source: str, **values: Any) -> "DocumentIdentity":
        """A copy with ``values`` set (None clears a field), each marked as coming from ``source``."""
        unknown = sorted(set(values) - set(IDENTITY_FIELDS))
        if unknown:
            raise ValueError(f"unknown identity fields {unknown}; known: {', '.join(IDENTITY_FIELDS)}")
        src = dict(self.sources)
        for k, v in values.items():
            if v is None:
                src.pop(k, None)
            else:
                src[k] = source
        kw = {f: values.get(f, getattr(self, f)) for f in IDENTITY_FIELDS}
        kw["tickers"] = tuple(kw["tickers"] or ())
        if not kw["tickers"]:
            src.pop("tickers", None)
        return DocumentIdentity(**kw, sources=tuple(sorted(src.items())))

    def fields(self) -> dict[str, Any]:
        """The known fields (None and no tickers left out)."""
        return {f: getattr(self, f) for f in IDENTITY_FIELDS if getattr(self, f) not in (None, ())}

    def label(self) -> str:
        """A short line for hits: ``3M COMPANY · 10-K · 2018``."""
        period = f"{self.year}" + (f" Q{self.quarter}" if self.quarter else "") if self.year else None
        parts = [self.issuer or self.title, self.doc_type if self.doc_type != "other" else None, period]
        return " · ".join(str(p) for p in parts if p)

    def to_dict(self) -> dict[str, Any]:
        return {**{f: getattr(self, f) for f in IDENTITY_FIELDS}, "tickers": list(self.tickers),
                "sources": dict(self.sources)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "DocumentIdentity":
        def opt_int(v: Any) -> int | None:
            return int(v) if v is not None else None

        def opt_str(v: Any) -> str | None:
            return str(v) if v is not None else None

        return cls(issuer=opt_str(d.get("issuer")), title=opt_str(d.get("title")), doc_type=opt_str(d.get("doc_type")),
                   year=opt_int(d.get("year")), quarter=opt_int(d.get("quarter")),
                   language=opt_str(d.get("language")), tickers=tuple(str(t) for t in d.get("tickers") or ()),
                   sources=tuple(sorted((str(k), str(v)) for k, v in dict(d.get("sources") or {}).items())))
