"""Reference headings for the learned level model, from PDFs with an author-made outline.

A folder of ``<doc_id>.pdf``, ``<doc_id>.toc.json`` and
``manifest.jsonl``.  Each outline entry is located on its page with
:func:`structrag.headings.outline.locate_outline` and takes the style of the printed
block; an entry that cannot be found keeps its title and page but no bbox or
style (the level-only protocol still has to place it).  Extracted documents are cached on disk
(:func:`cached_extract`), keyed by the code they depend on.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Sequence

from ..errors import ConfigError, ReferenceFormatError
from ..extraction import extract
from ..files import file_sha1, read_json, read_json_lines
from ..model import SCHEMA_VERSION, Document, Heading, OutlineEntry
from ..numbering import parse_numbering
from ..headings.outline import heading_from_block, locate_outline

__all__ = ["ReferenceDoc", "reference_headings", "load_reference_docs", "cached_extract", "printed_share",
           "outline_reference_docs", "headings_for_reference"]


@dataclass(frozen=True, slots=True)
class ReferenceDoc:
    """One document with its reference headings (levels = outline levels)."""

    doc_id: str
    group: str
    document: Document
    headings: tuple[Heading, ...]
    pdf_sha1: str
    toc_sha1: str
    located: int


def _imported_sources(package: str) -> list[Path]:
    """The source files of ``package`` and of every structrag module they import, transitively.

    Static (the import statements, module level and inside functions), so the list follows the
    code: a helper moved into another module is still in it.
    """
    import ast

    root = Path(__file__).resolve().parents[1]  # the structrag folder

    def source(name: str) -> Path | None:
        base = root.parent.joinpath(*name.split("."))
        for path in (base.with_suffix(".py"), base / "__init__.py"):
            if path.is_file():
                return path
        return None  # a name inside a module, not a module

    todo = [package]
    seen: dict[str, Path] = {}
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = source(name)
        if path is None:
            continue
        seen[name] = path
        is_pkg = path.name == "__init__.py"
        if is_pkg and name == package:  # the whole package, not only what its __init__ imports
            todo.extend(f"{name}.{p.stem}" for p in path.parent.glob("*.py") if p.stem != "__init__")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                todo.extend(a.name for a in node.names if a.name.split(".")[0] == "structrag")
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_pkg else name.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                if mod.split(".")[0] != "structrag":
                    continue
                todo.append(mod)
                todo.extend(f"{mod}.{a.name}" for a in node.names)  # "from . import x": x may be a module
    return sorted(seen.values(), key=str)


def _extractor_fingerprint() -> str:
    """Changes whenever code the cached document depends on does: the extraction stage and every
    module it imports (text helpers, numbering, the model), so cached documents go stale with it."""
    h = hashlib.sha1()
    for path in _imported_sources("structrag.extraction"):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:10]


def cached_extract(pdf: Path, *, sha1: str | None = None, cache_dir: Path | None = None,
                   cache_key: str | None = None) -> Document:
    """:func:`structrag.extraction.extract` with an on-disk JSON cache keyed by file, schema and extractor.

    ``cache_key`` replaces the extractor fingerprint (a hash of its source) to
    pin a snapshot during development while the extractor changes.
    """
    if cache_dir is None:
        return extract(pdf, progress=False)
    sha1 = sha1 or file_sha1(pdf)
    key = cache_key or _extractor_fingerprint()
    path = Path(cache_dir) / f"doc_{sha1}_{SCHEMA_VERSION}_{key}.json"
    if path.is_file():
        try:
            return Document.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, KeyError):
            pass  # a damaged cache entry is rebuilt
    doc = extract(pdf, progress=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc.to_dict()), encoding="utf-8")
    os.replace(tmp, path)
    return doc


def reference_headings(document: Document, entries: Sequence[OutlineEntry]) -> tuple[Heading, ...]:
    """Outline entries as reference headings in outline order, levels from the outline.

    Located entries carry the printed block's bbox and style; the others only
    their title and page (``bbox=None``, no style).
    """
    out: list[Heading] = []
    for le in locate_outline(document, entries, source="reference"):
        if le.heading is not None:
            out.append(replace(le.heading, level=le.entry.level, level_source="reference", confidence=1.0))
            continue
        e = le.entry
        page = min(max(e.page, 0), document.page_count - 1)
        b = document.first_block_on_or_after(page)
        num, _ = parse_numbering(e.title)
        out.append(Heading(text=e.title, page=page, bbox=None, block=b, block_end=b, numbering=num,
                           source="reference", level=e.level, level_source="reference", confidence=1.0))
    return tuple(out)


_TOC_HINT = 'expected {"toc": [[level, title, page], ...]}'


def _read_toc(path: Path) -> list[OutlineEntry]:
    d = read_json(path, what="outline file", hint=_TOC_HINT)
    try:
        return [OutlineEntry(level=int(lv), title=str(t), page=int(p) - 1) for lv, t, p in d["toc"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise ReferenceFormatError(f"not an outline file ({exc})", path=path, hint=_TOC_HINT) from None


def _read_manifest(path: Path) -> list[dict]:
    """The rows of a headings folder's ``manifest.jsonl``: objects with a ``doc_id`` (the file names' stem)."""
    hint = 'one JSON object a line: {"doc_id": "NAME", "group": ..., "sha1": ...} for NAME.pdf and NAME.toc.json'
    rows = []
    for n, row in read_json_lines(path, what="manifest", hint=hint):
        if not isinstance(row, dict):
            raise ReferenceFormatError(f"line {n} is not a JSON object", path=path, hint=hint)
        doc_id = row.get("doc_id")
        if not isinstance(doc_id, str) or not doc_id or doc_id != Path(doc_id).name:
            raise ReferenceFormatError(f"line {n}: \"doc_id\" must be a file name stem, got {doc_id!r}",
                                       path=path, hint=hint)
        for key in ("group", "sha1"):
            if row.get(key) is not None and not isinstance(row[key], str):
                raise ReferenceFormatError(f"line {n}: \"{key}\" must be a string, got {row[key]!r}",
                                           path=path, hint=hint)
        rows.append(row)
    return rows


def load_reference_docs(
    data_dir: str | os.PathLike[str],
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    doc_ids: Iterable[str] | None = None,
    progress: bool | None = None,
    cache_key: str | None = None,
) -> list[ReferenceDoc]:
    """Every document of a headings folder (``manifest.jsonl`` order), with reference headings."""
    d = Path(data_dir)
    manifest = d / "manifest.jsonl"
    if not os.path.exists(manifest):  # one that is there but no file (a FIFO, a folder) is read, and says so
        raise ConfigError("no manifest.jsonl in the headings folder", path=d,
                          hint="point at shared/data/headings (or a folder laid out like it)")
    rows = _read_manifest(manifest)
    wanted = set(doc_ids) if doc_ids is not None else None
    if wanted is not None:
        missing = wanted - {r["doc_id"] for r in rows}
        if missing:
            raise ConfigError("unknown doc_id(s): " + ", ".join(sorted(missing)), path=manifest)
        rows = [r for r in rows if r["doc_id"] in wanted]
    from tqdm.auto import tqdm

    enabled = sys.stderr.isatty() if progress is None else progress
    out = []
    for r in tqdm(rows, desc="reference docs", disable=not enabled, leave=False, file=sys.stderr):
        pdf = d / f"{r['doc_id']}.pdf"
        toc = d / f"{r['doc_id']}.toc.json"
        sha1 = file_sha1(pdf)
        if r.get("sha1") and r["sha1"] != sha1:
            raise ReferenceFormatError(f"sha1 {sha1} does not match the manifest's {r['sha1']}", path=pdf,
                                       hint="this is not the file the outline was made for")
        doc = cached_extract(pdf, sha1=sha1, cache_dir=Path(cache_dir) if cache_dir is not None else None,
                             cache_key=cache_key)
        hs = reference_headings(doc, _read_toc(toc))
        out.append(ReferenceDoc(doc_id=r["doc_id"], group=r.get("group", ""), document=doc, headings=hs,
                                pdf_sha1=sha1, toc_sha1=file_sha1(toc),
                                located=sum(1 for h in hs if h.bbox is not None)))
    return out


def printed_share(document: Document, entries: Sequence[OutlineEntry]) -> float:
    """Share of outline titles printed on their page (or the page before or after).

    Low for editorial outlines — an earnings release whose bookmarks name exhibits that nobody
    printed — which teach nothing about printed headings.
    """
    from ..text import normalize_title

    if not entries:
        return 0.0
    offs = document.page_offsets
    pages = [normalize_title(document.text[offs[p]: offs[p + 1]]) for p in range(document.page_count)]
    hit = 0
    for e in entries:
        t = normalize_title(e.title)
        if t and any(0 <= q < len(pages) and t in pages[q] for q in (e.page, e.page - 1, e.page + 1)):
            hit += 1
    return hit / len(entries)


def outline_reference_docs(
    pdfs: Iterable[str | os.PathLike[str]],
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    min_entries: int = 8,
    min_printed: float = 0.5,
    skip_sha1: Iterable[str] = (),
    group: str = "",
) -> tuple[list[ReferenceDoc], list[tuple[str, str]]]:
    """Reference documents from PDFs' own bookmarks, and the PDFs skipped with the reason.

    A PDF is used when its outline has at least ``min_entries`` entries on pages of the file and
    at least ``min_printed`` of their titles are printed on their pages; a PDF whose sha1 is in
    ``skip_sha1`` (already a reference, under another name) is skipped.
    """
    seen = set(skip_sha1)
    out: list[ReferenceDoc] = []
    skipped: list[tuple[str, str]] = []
    from .._pymupdf import import_pymupdf

    pymupdf = import_pymupdf()

    for pdf in map(Path, pdfs):
        try:
            with pymupdf.open(pdf) as d:  # counting bookmarks is cheap; extracting is not
                n = len(d.get_toc())
        except Exception as exc:
            skipped.append((pdf.stem, f"cannot be opened ({exc})"))
            continue
        if n < min_entries:
            continue
        sha1 = file_sha1(pdf)
        if sha1 in seen:
            skipped.append((pdf.stem, "same file as another reference document"))
            continue
        doc = cached_extract(pdf, sha1=sha1, cache_dir=Path(cache_dir) if cache_dir is not None else None)
        entries = [e for e in doc.outline if e.title.strip() and 0 <= e.page < doc.page_count]
        if len(entries) < min_entries:
            skipped.append((pdf.stem, f"outline of {len(entries)} entries"))
            continue
        share = printed_share(doc, entries)
        if share < min_printed:
            skipped.append((pdf.stem, f"editorial outline: {share:.0%} of {len(entries)} titles printed"))
            continue
        seen.add(sha1)
        hs = reference_headings(doc, entries)
        toc_sha1 = hashlib.sha1(json.dumps([e.to_dict() for e in entries]).encode()).hexdigest()
        out.append(ReferenceDoc(doc_id=pdf.stem, group=group, document=doc, headings=hs, pdf_sha1=sha1,
                                toc_sha1=toc_sha1, located=sum(1 for h in hs if h.bbox is not None)))
    return out, skipped


def headings_for_reference(records: Sequence[dict], document: Document | None) -> tuple[Heading, ...]:
    """Level-only input: headings for reference records (``structrag levels``); with a document, each takes
    the style of the block under its bbox."""
    out: list[Heading] = []
    for i, rec in enumerate(records):
        page = int(rec["page"]) - 1
        text = " ".join(rec["text"].split())
        bbox = tuple(float(v) for v in rec["bbox"]) if rec.get("bbox") is not None else None
        if document is not None:
            if page >= document.page_count:
                raise ReferenceFormatError(
                    f"heading {i + 1} is on page {page + 1}, but the PDF has {document.page_count} pages",
                    path=document.path, page=page + 1)
            blk = document.block_at(page, bbox) if bbox is not None else None
            if blk is not None:
                h = heading_from_block(document, blk, blk, text=text, source="reference")
                out.append(Heading(**{**_fields(h), "bbox": bbox}))
                continue
            b = document.first_block_on_or_after(page)
        else:
            b = len(out)
        num, _ = parse_numbering(text)
        out.append(Heading(
            text=text, page=page, bbox=bbox, block=b, block_end=b,
            font=str(rec.get("font", "")), size=float(rec.get("size", 0.0)) if bbox is not None else 0.0,
            bold=bool(rec.get("bold", False)), italic=bool(rec.get("italic", False)),
            color=int(rec.get("color", 0)), numbering=num, source="reference",
        ))
    return tuple(out)


def _fields(h: Heading) -> dict:
    return {f: getattr(h, f) for f in Heading.__dataclass_fields__}


def _fields(h: Heading) -> dict:
    return {f: getattr(h, f) for f in Heading.__dataclass_fields__}
