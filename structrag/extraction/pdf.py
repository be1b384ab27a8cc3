"""PDF -> :class:`~structrag.model.Document` with PyMuPDF: the extraction stage's entry point.

Per page (:mod:`.blocks`, :mod:`.reading_order`): style blocks in reading order.  Across pages:
running headers, footers and page numbers (:mod:`.furniture`) are taken out of the text but kept
in :attr:`Document.furniture`; printed table-of-contents pages (:mod:`.contents_pages`) are
marked so their lines are never taken for headings.

Memory stays bounded by the size of the extracted text: pages are loaded one at a time and
dropped, and the file hash is computed in pieces.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import warnings as _warnings
from dataclasses import replace
from pathlib import Path
from typing import Iterable

from .._progress import Progress
from .._pymupdf import route_mupdf_messages
from ..errors import CorruptPDFError, EncryptedPDFError, NotAPDFError, StructragWarning
from ..files import file_sha1, require_regular_file
from ..model import Block, Document, OutlineEntry
from ..text import is_blank, page_ranges, path_text, strip_control
from .blocks import _block_style, _PageBlock
from .contents_pages import _may_be_toc, mark_contents_pages
from .furniture import _RUNNING_ZONE, _mark_furniture, _split_running_lines
from .reading_order import _page_blocks

__all__ = ["extract", "open_pdf"]

log = logging.getLogger("structrag.extract")  # the logger's name before the stage was a package

_WS_RE = re.compile(r"\s+")


def open_pdf(path: str | os.PathLike[str], password: str | None = None):
    """Open ``path`` with PyMuPDF, turning its failures into structrag errors."""
    from .._pymupdf import import_pymupdf

    pymupdf = import_pymupdf()

    p = require_regular_file(path, what="PDF file")  # a FIFO or a device would block or never end
    try:
        with open(p, "rb") as f:
            head = f.read(1024)
    except OSError as exc:
        raise NotAPDFError(f"cannot be read: {exc.strerror or exc}", path=p) from None
    if b"%PDF" not in head:
        raise NotAPDFError(
            "not a PDF file (no %PDF header)", path=p, hint="structrag reads PDF files only"
        )
    try:
        str(p).encode("utf-8")
        source = {"filename": str(p)}
    except UnicodeEncodeError:  # MuPDF takes UTF-8 file names only: a name in another encoding is read as bytes
        source = {"stream": p.read_bytes()}
    try:
        doc = pymupdf.open(filetype="pdf", **source)
    except Exception as exc:  # PyMuPDF raises FileDataError, RuntimeError, ValueError ...
        raise CorruptPDFError(f"cannot be opened as a PDF: {exc}", path=p,
                              hint="the file is damaged or truncated; re-download or re-export it") from None
    if doc.needs_pass:
        if password is None or not doc.authenticate(password):
            doc.close()
            raise EncryptedPDFError(
                "is encrypted and needs a password" if password is None else "password is wrong",
                path=p,
                hint="pass password=... (CLI: --password), or decrypt it first, e.g. "
                "`qpdf --decrypt --password=SECRET in.pdf out.pdf`",
            )
    try:
        pages = doc.page_count
    except Exception as exc:  # a page tree whose count MuPDF rejects: no page of it can be loaded
        doc.close()
        raise CorruptPDFError(f"its page tree cannot be read ({exc}): no page can be loaded", path=p,
                              hint="the file is damaged; re-download it, or re-export it from its source") from None
    if pages == 0:
        doc.close()
        raise CorruptPDFError("has no readable pages", path=p, hint="the file is damaged or truncated")
    return doc


def clean_outline(entries: Iterable[OutlineEntry]) -> tuple[OutlineEntry, ...]:
    """Outline entries without blank titles (nothing but white space, zero-width and other invisible
    characters: no heading a reader could see); the children of a dropped entry move up one level."""
    out: list[OutlineEntry] = []
    dropped: list[int] = []  # levels of the blank entries whose subtrees are still open
    for e in entries:
        while dropped and e.level <= dropped[-1]:
            dropped.pop()
        if is_blank(e.title):
            dropped.append(e.level)
            continue
        out.append(replace(e, level=max(1, e.level - len(dropped))) if dropped else e)
    return tuple(out)


def _progress(total: int, desc: str, enabled: Progress):
    if enabled is None:
        enabled = sys.stderr.isatty() and total >= 50
    from .._progress import progress_bar  # no tqdm import for a bar nobody sees

    return progress_bar(total, desc=desc, unit="page", enabled=enabled)


@route_mupdf_messages  # MuPDF's own messages: the structrag log and a counted warning, not stdout
def extract(
    path: str | os.PathLike[str],
    *,
    password: str | None = None,
    max_pages: int | None = None,
    progress: Progress = None,
) -> Document:
    """Read a PDF into a :class:`Document`.

    ``max_pages`` keeps only the first pages (for previews and benchmarks).
    ``progress`` shows a bar on stderr (default: only on a terminal, for
    documents of 50 pages or more); a function is called with each page read.  Raises :class:`NotAPDFError`,
    :class:`EncryptedPDFError` or :class:`CorruptPDFError` with the file named.
    """
    from .._pymupdf import import_pymupdf

    pymupdf = import_pymupdf()

    path = Path(path)
    doc = open_pdf(path, password)
    flags = pymupdf.TEXTFLAGS_DICT & ~pymupdf.TEXT_PRESERVE_IMAGES
    warnings: list[str] = []
    try:
        if doc.is_repaired:
            warnings.append(f"{path}: the PDF was damaged and has been repaired; some content may be missing")
        page_count = doc.page_count if max_pages is None else min(doc.page_count, max_pages)
        outline = _read_outline(doc, path, warnings)
        metadata = tuple(sorted((k, str(v)) for k, v in (doc.metadata or {}).items() if v))
        pages, sizes, textless, failed = _read_pages(doc, page_count, flags, path, progress)
    finally:
        doc.close()

    _split_running_lines(pages, [h for _, h in sizes])
    _mark_furniture(pages, [h for _, h in sizes])
    toc_pages = mark_contents_pages(pages, sizes, page_count)
    if textless:
        warnings.append(
            f"{path}: {len(textless)} page(s) without a text layer (scanned?), "
            f"pages {page_ranges(textless)}: no text taken from them"
        )
    if failed:
        warnings.append(f"{path}: text extraction failed on pages {page_ranges(failed)}")
    for w in warnings:
        _warnings.warn(w, StructragWarning, stacklevel=3)  # past route_mupdf_messages, to the caller

    body, furniture, text, page_offsets, page_block_starts = _assemble(pages, page_count)
    return Document(
        path=path_text(str(path)),
        name=path_text(path.name),
        sha1=file_sha1(path),
        page_count=page_count,
        page_sizes=tuple(sizes),
        blocks=tuple(body),
        furniture=tuple(furniture),
        text=text,
        page_offsets=tuple(page_offsets),
        page_block_starts=tuple(page_block_starts),
        toc_pages=tuple(toc_pages),
        textless_pages=tuple(textless),
        outline=outline,
        metadata=metadata,
        warnings=tuple(warnings),
    )


def _read_outline(doc, path: Path, warnings: list[str]) -> tuple[OutlineEntry, ...]:
    """The PDF's outline, blank titles dropped; a broken one is noted in ``warnings`` and ignored."""
    try:
        return clean_outline(
            OutlineEntry(level=int(lv), title=_WS_RE.sub(" ", strip_control(str(t))).strip(), page=int(pg) - 1)
            for lv, t, pg, *_ in doc.get_toc(simple=True)
        )
    except Exception as exc:  # a broken outline must not cost the document
        warnings.append(f"{path}: the PDF outline could not be read ({exc}); ignoring it")
        return ()


def _read_pages(doc, n: int, flags: int, path: Path, progress: Progress):
    """The first ``n`` pages' style blocks in reading order, one page loaded at a time; with the page sizes,
    the pages without a text layer and those whose extraction failed."""
    pages: list[list[_PageBlock]] = []
    sizes: list[tuple[float, float]] = []
    textless: list[int] = []
    failed: list[int] = []
    with _progress(n, path.name, progress) as bar:
        for pno in range(n):
            try:
                page = doc.load_page(pno)
                rect = page.rect
                sizes.append((float(rect.width), float(rect.height)))
                raws = _page_blocks(page, flags)
            except Exception as exc:
                failed.append(pno)
                log.debug("%s, page %d: text extraction failed: %s", path, pno + 1, exc)
                if len(sizes) <= pno:
                    sizes.append((0.0, 0.0))
                raws = []
            page_blocks: list[_PageBlock] = []
            keep_lines = _may_be_toc(raws)
            for rb in raws:
                font, size, bold, italic, color = _block_style(rb)
                page_blocks.append(
                    _PageBlock(pno, (rb.x0, rb.y0, rb.x1, rb.y1), rb.text, font, size, bold, italic, color,
                               len(rb.lines), rb.column, not all(ln.horizontal for ln in rb.lines),
                               lines=rb.lines if keep_lines else None,
                               head_lines=rb.lines if len(rb.lines) > 1 and rb.y0 <= _RUNNING_ZONE * rect.height
                               else None)
                )
            if not page_blocks and pno not in failed:
                textless.append(pno)
            pages.append(page_blocks)
            bar.update(1)
    return pages, sizes, textless, failed


def _assemble(pages: list[list[_PageBlock]], page_count: int):
    """Body blocks (furniture apart), the reading-order text joined from them, where each page starts in the
    text and in the blocks."""
    body: list[Block] = []
    furniture: list[Block] = []
    parts: list[str] = []
    page_block_starts: list[int] = []
    pos = 0
    sep = "\n\n"
    for p, blocks in enumerate(pages):
        page_block_starts.append(len(body))
        for b in blocks:
            if b.role in ("header", "footer", "page_number"):
                furniture.append(b.freeze(len(furniture), -1, -1))
                continue
            if parts:
                pos += len(sep)
            start = pos
            pos += len(b.text)
            parts.append(b.text)
            body.append(b.freeze(len(body), start, pos))
    page_block_starts.append(len(body))
    text = sep.join(parts)
    # a page starts where its first body block starts; an empty page where the next one does
    page_offsets = [len(text)] * (page_count + 1)
    for p in range(page_count - 1, -1, -1):
        lo, hi = page_block_starts[p], page_block_starts[p + 1]
        page_offsets[p] = body[lo].start if hi > lo else page_offsets[p + 1]
    return body, furniture, text, page_offsets, page_block_starts
