"""A user's corrections to a heading tree: read, check, apply, and use as training labels.

The HTML view (``structrag view``) exports a corrections file; ``structrag toc
--corrections FILE`` applies it after levels are predicted and before the tree
is built, so a tree fixed by hand is reproducible from the PDF.  The file also
carries the corrected heading list, which ``structrag train-levels --also
FILE`` takes as level labels.

Schema (``schema_version`` 1.x; pages 1-based, boxes in PDF points as
displayed, like ``structrag toc --json``)::

    {"format": "structrag-corrections", "schema_version": "1.0",
     "document": {"name": "report.pdf", "sha1": "...", "pages": 212},
     "corrections": [
        {"op": "delete", "page": 3, "text": "Revenue 2023 2022", "bbox": [x0, y0, x1, y1]},
        {"op": "level",  "page": 5, "text": "Risk factors", "bbox": [...], "level": 2},
        {"op": "add",    "page": 9, "text": "Outlook", "bbox": [...], "level": 1}],
     "headings": [{"text": "...", "page": 1, "bbox": [...], "level": 1}, ...]}

Operations apply in file order.  ``delete`` and ``level`` name an existing
heading by page and text (the box breaks ties); ``add`` names a body block
by page and box.  ``headings`` (optional) is the whole corrected tree as the
view showed it when exported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Literal, Mapping, Sequence

from .errors import ReferenceFormatError
from .files import read_json
from .model import BBox, Document, Heading

if TYPE_CHECKING:  # pragma: no cover
    from .levels.references import ReferenceDoc
    from .pipeline import ParsedDocument

__all__ = [
    "CORRECTIONS_FORMAT",
    "CORRECTIONS_SCHEMA",
    "Correction",
    "CorrectedHeading",
    "Corrections",
    "load_corrections",
    "corrections_from_dict",
    "apply_corrections",
    "apply_to_parsed",
    "reference_doc_from_corrections",
]

CORRECTIONS_FORMAT = "structrag-corrections"
#: Major part must match to read a file; a minor bump only adds optional keys.
CORRECTIONS_SCHEMA = "1.0"

Op = Literal["delete", "level", "add"]
_OPS = ("delete", "level", "add")
#: Level and source recorded for what a person decided.
MANUAL = "manual"
#: The view carries this many characters of each text block (the payload of a long report stays
#: small); a longer line marked as a heading is exported cut there and read back whole from the PDF.
VIEW_TEXT_CHARS = 80


@dataclass(frozen=True, slots=True)
class Correction:
    """One edit; ``page`` is 0-based here (1-based in the file)."""

    op: Op
    page: int
    text: str
    bbox: BBox | None = None
    level: int | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"op": self.op, "page": self.page + 1, "text": self.text,
                             "bbox": None if self.bbox is None else [round(v, 2) for v in self.bbox]}
        if self.level is not None:
            d["level"] = self.level
        return d

    def describe(self) -> str:
        return f"{self.op} {self.text[:60]!r} on page {self.page + 1}"


@dataclass(frozen=True, slots=True)
class CorrectedHeading:
    """A heading of the corrected tree (``page`` 0-based)."""

    text: str
    page: int
    bbox: BBox | None
    level: int

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "page": self.page + 1, "level": self.level,
                "bbox": None if self.bbox is None else [round(v, 2) for v in self.bbox]}


@dataclass(frozen=True, slots=True)
class Corrections:
    """A checked corrections file."""

    document: str
    sha1: str | None
    pages: int | None
    corrections: tuple[Correction, ...]
    headings: tuple[CorrectedHeading, ...] = ()
    path: str | None = None
    schema_version: str = CORRECTIONS_SCHEMA
    settings: tuple[tuple[str, str], ...] = ()  # the options the view's tree was made with (outline, ...)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": CORRECTIONS_FORMAT,
            "schema_version": self.schema_version,
            "document": {"name": self.document, "sha1": self.sha1, "pages": self.pages},
            "settings": dict(self.settings),
            "corrections": [c.to_dict() for c in self.corrections],
            "headings": [h.to_dict() for h in self.headings],
        }


# --- reading ------------------------------------------------------------------------------


def load_corrections(path: str | os.PathLike[str]) -> Corrections:
    """Read and check a corrections file; errors name the file and the entry."""
    p = Path(path)
    data = read_json(p, what="corrections file", hint="export the file again from 'structrag view'")
    return corrections_from_dict(data, path=p)


def _fail(msg: str, path: str | os.PathLike[str] | None, page: int | None = None) -> ReferenceFormatError:
    return ReferenceFormatError(msg, path=path, page=page,
                                hint="export the file again from 'structrag view', or see structrag/corrections.py")


def _records(recs: Any, key: str, item: str, path: Any) -> Iterator[tuple[str, dict]]:
    """The objects of the list ``recs`` (the file's ``key``), one at a time with their name in
    messages (``item`` and a 1-based number): a bad one is reported when the walk reaches it."""
    if not isinstance(recs, list):
        raise _fail(f"\"{key}\" must be a list", path)
    for i, rec in enumerate(recs):
        where = f"{item} {i + 1}"
        if not isinstance(rec, dict):
            raise _fail(f"{where}: must be an object", path)
        yield where, rec


def _page(rec: Mapping[str, Any], where: str, path: Any, pages: int | None) -> int:
    page = rec.get("page")
    if not isinstance(page, int) or isinstance(page, bool) or page < 1:
        raise _fail(f"{where}: \"page\" must be a 1-based integer, got {page!r}", path)
    if pages is not None and page > pages:
        raise _fail(f"{where}: page {page} is past the document's {pages} pages", path, page)
    return page - 1


def _box(rec: Mapping[str, Any], where: str, path: Any, page: int) -> BBox | None:
    bbox = rec.get("bbox")
    if bbox is None:
        return None
    if (not isinstance(bbox, list) or len(bbox) != 4 or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in bbox)):
        raise _fail(f"{where}: \"bbox\" must be [x0, y0, x1, y1] or null", path, page + 1)
    x0, y0, x1, y1 = (float(v) for v in bbox)
    return (x0, y0, x1, y1)


def _level(rec: Mapping[str, Any], where: str, path: Any, page: int) -> int:
    lv = rec.get("level")
    if not isinstance(lv, int) or isinstance(lv, bool) or not 1 <= lv <= 20:
        raise _fail(f"{where}: \"level\" must be an integer from 1 to 20, got {lv!r}", path, page + 1)
    return lv


def _text(rec: Mapping[str, Any], where: str, path: Any, page: int) -> str:
    t = rec.get("text")
    if not isinstance(t, str) or not t.strip():
        raise _fail(f"{where}: needs a non-empty \"text\" string", path, page + 1)
    return " ".join(t.split())


def corrections_from_dict(data: Any, *, path: str | os.PathLike[str] | None = None) -> Corrections:
    """Check the JSON shape of a corrections file (see the module docstring)."""
    if not isinstance(data, dict) or data.get("format") != CORRECTIONS_FORMAT:
        raise _fail(f"not a corrections file (expected \"format\": \"{CORRECTIONS_FORMAT}\")", path)
    version = data.get("schema_version")
    if not isinstance(version, str) or version.split(".")[0] != CORRECTIONS_SCHEMA.split(".")[0]:
        raise _fail(f"schema_version {version!r} cannot be read by this structrag "
                    f"(reads {CORRECTIONS_SCHEMA.split('.')[0]}.x)", path)
    doc = data.get("document")
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
        raise _fail("\"document\" must be {\"name\", \"sha1\", \"pages\"}", path)
    sha1 = doc.get("sha1")
    pages = doc.get("pages")
    if sha1 is not None and not isinstance(sha1, str):
        raise _fail("\"document.sha1\" must be a string", path)
    if pages is not None and (not isinstance(pages, int) or isinstance(pages, bool) or pages < 1):
        raise _fail("\"document.pages\" must be a positive integer", path)
    out: list[Correction] = []
    for where, rec in _records(data.get("corrections"), "corrections", "correction", path):
        op = rec.get("op")
        if op not in _OPS:
            raise _fail(f"{where}: \"op\" must be one of {', '.join(_OPS)}, got {op!r}", path)
        page = _page(rec, where, path, pages)
        text = _text(rec, where, path, page)
        bbox = _box(rec, where, path, page)
        if op == "add" and bbox is None:
            raise _fail(f"{where}: an added heading needs its \"bbox\"", path, page + 1)
        level = _level(rec, where, path, page) if op in ("level", "add") else None
        out.append(Correction(op=op, page=page, text=text, bbox=bbox, level=level))
    tree: list[CorrectedHeading] = []
    for where, rec in _records(data.get("headings", []), "headings", "heading", path):
        page = _page(rec, where, path, pages)
        tree.append(CorrectedHeading(text=_text(rec, where, path, page), page=page,
                                     bbox=_box(rec, where, path, page), level=_level(rec, where, path, page)))
    settings = data.get("settings") or {}
    if not isinstance(settings, dict):
        raise _fail("\"settings\" must be an object", path)
    return Corrections(document=doc["name"], sha1=sha1, pages=pages, corrections=tuple(out),
                       headings=tuple(tree), path=None if path is None else str(path), schema_version=version,
                       settings=tuple(sorted((str(k), str(v)) for k, v in settings.items())))


# --- applying -------------------------------------------------------------------------------


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _overlap(a: BBox, b: BBox) -> float:
    """Intersection over the smaller box: robust to a box that grew by a joined line."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    small = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return w * h / small if small > 0 else 0.0


def _find(headings: Sequence[Heading], c: Correction) -> int | None:
    """Index of the heading a correction names: same page and text, the box breaking ties.

    Without a text match the box alone decides (the text may have been re-joined differently),
    but only when it clearly overlaps one heading.
    """
    same = [i for i, h in enumerate(headings) if h.page == c.page and _norm(h.text) == _norm(c.text)]
    if len(same) == 1 or (same and c.bbox is None):
        return same[0]
    if same and c.bbox is not None:
        return max(same, key=lambda i: _overlap(headings[i].bbox, c.bbox) if headings[i].bbox else -1.0)
    if c.bbox is None:
        return None
    boxed = [(i, _overlap(h.bbox, c.bbox)) for i, h in enumerate(headings) if h.page == c.page and h.bbox]
    boxed = [(i, o) for i, o in boxed if o >= 0.6]
    return max(boxed, key=lambda t: t[1])[0] if boxed else None


def _check_document(document: Document, corrections: Corrections) -> None:
    if corrections.sha1 and document.sha1 and corrections.sha1 != document.sha1:
        raise ReferenceFormatError(
            f"written for {corrections.document} (sha1 {corrections.sha1[:12]}), not {document.name} "
            f"(sha1 {document.sha1[:12]})", path=corrections.path,
            hint="corrections apply to the exact file they were made on")


def apply_corrections(document: Document, headings: Sequence[Heading],
                      corrections: Corrections) -> tuple[Heading, ...]:
    """The headings (levels set) with the corrections applied in order, in reading order.

    Raises :class:`~structrag.errors.ReferenceFormatError` naming the corrections file when the
    file was made on another PDF or an entry names no heading / no block of this document.
    """
    _check_document(document, corrections)
    hs = list(headings)
    for n, c in enumerate(corrections.corrections, 1):
        if c.op == "add":
            hs = _add(document, hs, c, n, corrections.path)
            continue
        i = _find(hs, c)
        if i is None:
            made = ", ".join(f"{k}={v}" for k, v in corrections.settings)
            raise ReferenceFormatError(
                f"correction {n} ({c.describe()}): no such heading in this tree", path=corrections.path,
                page=c.page + 1, hint="the view's tree was made with " + made + "; use the same options here"
                if made else "was the tree made with other options (--ignore-outline, --predictor)?")
        if c.op == "delete":
            del hs[i]
        else:
            hs[i] = replace(hs[i], level=c.level, level_source=MANUAL, confidence=1.0)
    return tuple(hs)


def _add(document: Document, hs: list[Heading], c: Correction, n: int, path: str | None) -> list[Heading]:
    from .headings.outline import heading_from_block

    assert c.bbox is not None and c.level is not None  # checked when read
    if c.page >= document.page_count:
        raise ReferenceFormatError(f"correction {n} ({c.describe()}): the PDF has {document.page_count} pages",
                                   path=path, page=c.page + 1)
    b = document.block_at(c.page, c.bbox)
    if b is None:
        raise ReferenceFormatError(f"correction {n} ({c.describe()}): no text block at that box",
                                   path=path, page=c.page + 1)
    existing = [i for i, h in enumerate(hs) if h.block == b]
    if existing:  # marking an existing heading again only sets its level
        i = existing[0]
        hs[i] = replace(hs[i], level=c.level, level_source=MANUAL, confidence=1.0)
        return hs
    h = heading_from_block(document, b, b, text=" ".join(document.blocks[b].text.split()), source=MANUAL,
                           level=c.level, level_source=MANUAL, reasons=("marked by hand",))
    # after the last heading that starts at or before the block: reading order kept
    at = 0
    for i, other in enumerate(hs):
        if other.block <= b:
            at = i + 1
    hs.insert(at, h)
    return hs


def apply_to_parsed(parsed: "ParsedDocument", corrections: Corrections | str | os.PathLike[str]) -> "ParsedDocument":
    """A parsed document whose headings and tree have the corrections applied."""
    from .pipeline import ParsedDocument
    from .tree import HeadingTree

    if not isinstance(corrections, Corrections):
        corrections = load_corrections(corrections)
    doc = parsed.document
    hs = apply_corrections(doc, parsed.headings, corrections)
    stats = dict(parsed.stats)
    stats["corrections"] = {"file": corrections.path, "applied": len(corrections.corrections)}
    stats["headings"] = len(hs)
    sources: dict[str, int] = {}
    for h in hs:
        sources[h.source] = sources.get(h.source, 0) + 1
    stats["heading_sources"] = sources
    return ParsedDocument(doc, hs, HeadingTree.from_headings(hs, len(doc.blocks), doc.name), stats)


# --- training labels ----------------------------------------------------------------------


def find_pdf(corrections: Corrections) -> Path:
    """The PDF a corrections file was made on: beside the file, under the recorded name."""
    base = Path(corrections.path).parent if corrections.path else Path.cwd()
    pdf = base / corrections.document
    if not pdf.is_file():
        raise ReferenceFormatError(f"the PDF {corrections.document} is not beside the corrections file",
                                   path=corrections.path, hint="put the file next to the PDF it was made on")
    return pdf


def tree_depths(levels: Sequence[int]) -> list[int]:
    """Each heading's depth in the tree its levels make (the tree's rule: the parent is the most
    recent heading of a smaller level).  A hand-made tree may jump levels (L1 then L3); training
    needs the sequence a reader sees, where no level exceeds the previous one by more than one."""
    stack: list[tuple[int, int]] = []  # (level, depth) of the open headings
    out: list[int] = []
    for lv in levels:
        while stack and stack[-1][0] >= lv:
            stack.pop()
        depth = stack[-1][1] + 1 if stack else 1
        stack.append((lv, depth))
        out.append(depth)
    return out


def _whole_text(document: Document, h: CorrectedHeading) -> str:
    """The heading's text, or its block's whole text where the view exported it cut short."""
    if len(h.text) < VIEW_TEXT_CHARS or h.bbox is None or h.page >= document.page_count:
        return h.text
    b = document.block_at(h.page, h.bbox)
    whole = " ".join(document.blocks[b].text.split()) if b is not None else ""
    return whole if whole.startswith(h.text) else h.text


def reference_doc_from_corrections(
    path: str | os.PathLike[str],
    *,
    pdf: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> "ReferenceDoc":
    """A training document whose labels are the corrected tree of a corrections file.

    The file's ``headings`` are the labels; each takes the style of the block under its box
    (as in the level-only protocol), so the predictor learns from the page as printed.
    """
    from .files import file_sha1
    from .levels.references import ReferenceDoc, cached_extract, headings_for_reference

    corr = load_corrections(path)
    if not corr.headings:
        raise ReferenceFormatError("no \"headings\" (the corrected tree) to train on", path=path,
                                   hint="export it again from 'structrag view'")
    src = Path(pdf) if pdf is not None else find_pdf(corr)
    sha1 = file_sha1(src)
    if corr.sha1 and corr.sha1 != sha1:
        raise ReferenceFormatError(f"written for sha1 {corr.sha1[:12]}, but {src.name} has sha1 {sha1[:12]}",
                                   path=path)
    doc = cached_extract(src, sha1=sha1, cache_dir=Path(cache_dir) if cache_dir is not None else None)
    records = [{"text": _whole_text(doc, h), "page": h.page + 1, "bbox": None if h.bbox is None else list(h.bbox)}
               for h in corr.headings]
    hs = headings_for_reference(records, doc)
    hs = tuple(replace(h, level=lv, level_source="reference", confidence=1.0)
               for h, lv in zip(hs, tree_depths([c.level for c in corr.headings])))
    return ReferenceDoc(doc_id=Path(path).name.split(".")[0], group="corrections", document=doc, headings=hs,
                        pdf_sha1=sha1, toc_sha1=file_sha1(Path(path)),
                        located=sum(1 for h in hs if h.bbox is not None))
