"""Write the self-contained HTML views: a document's heading tree, and search hits on their pages.

One HTML file holds the page script, style and data (no server, no network,
no build step; the assets are package data beside this module).  Page images
are rendered by PyMuPDF at a modest resolution and, by default, written to a
sidecar folder next to the HTML (``report_pages/``) that the page loads lazily
as pages scroll into view, so a 300-page report opens at once; ``inline=True``
embeds them as data URIs instead (one file to mail, several MB larger).

Boxes are kept in PDF points and drawn as percentages of the page size, so
they sit on the image at any resolution.
"""

from __future__ import annotations

import base64
import json
import logging
import math
import os
import re
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .._pymupdf import MuPDFMessages
from ..corrections import CORRECTIONS_FORMAT, CORRECTIONS_SCHEMA, VIEW_TEXT_CHARS
from ..errors import ConfigError
from ..files import check_output_file
from ..model import BBox, Document, Heading
from ..text import page_ranges

__all__ = [
    "DEFAULT_DPI",
    "DPI_RANGE",
    "check_dpi",
    "check_view_paths",
    "PageRef",
    "HitView",
    "QueryView",
    "ViewStats",
    "PageImages",
    "write_tree_view",
    "write_hits_view",
    "tree_payload",
]

log = logging.getLogger(__name__)

#: 96 dpi: an A4 page is ~794 px wide, sharp enough to read headings, ~100 KB as JPEG.
DEFAULT_DPI = 96
#: the resolutions ``--dpi`` takes
DPI_RANGE = (24, 300)
#: a page image has at most this many pixels, and this many on a side: MuPDF refuses a pixmap of a
#: gigabyte (PDF's largest page, 14,400 pt square, at 96 dpi) and browsers struggle long before; an A3
#: page at 300 dpi has 17 Mpx, so only outsized pages are drawn below the asked resolution
MAX_PAGE_PIXELS = 25_000_000
MAX_PAGE_SIDE = 16_384


def check_dpi(dpi: int) -> int:
    """``dpi`` if within :data:`DPI_RANGE`; else :class:`ConfigError`."""
    lo, hi = DPI_RANGE
    if isinstance(dpi, bool) or not isinstance(dpi, int) or not lo <= dpi <= hi:
        raise ConfigError(f"--dpi must be between {lo} and {hi}, got {dpi!r}", hint=f"the default is {DEFAULT_DPI}")
    return dpi


def check_view_paths(out: str | os.PathLike[str], *, inline: bool, flag: str | None = None) -> Path:
    """The HTML path of a view if it and its page-image folder (``NAME_pages/`` beside it, unless ``inline``)
    can be written; else :class:`ConfigError`, before any work and without touching either.  ``flag``: the
    option that named it, for the hint."""
    out = check_output_file(out, what="HTML file", flag=flag, example="view.html")
    folder = _image_folder(out)
    if not inline and folder.exists() and not folder.is_dir():
        raise ConfigError(f"{folder} is a file, and the page images go in a folder of that name", path=out,
                          hint="move that file away, pass --inline (images inside the HTML), or name another "
                          "HTML file")
    return out


def _image_folder(html: Path) -> Path:
    return html.with_name(html.stem + "_pages")


@dataclass(frozen=True, slots=True)
class PageRef:
    """A page of a PDF to show (``page`` 0-based)."""

    doc: str
    page: int


@dataclass(frozen=True, slots=True)
class HitView:
    """One retrieved chunk as the hits view shows it (pages 0-based, boxes in PDF points)."""

    doc: str
    score: float
    section_path: tuple[str, ...]
    text: str
    pages: tuple[int, ...]
    boxes: tuple[tuple[int, BBox], ...] = ()
    chunk_id: str = ""
    relevant: bool | None = None  # known only when the view shows an evaluation's judgement
    label: str = ""  # the document's identity in a line ("3M COMPANY · 10-K · 2018"), empty when unknown


@dataclass(frozen=True, slots=True)
class QueryView:
    """A query, its hits best first, and (from an evaluation) the pages that answer it."""

    query: str
    hits: tuple[HitView, ...]
    expected: tuple[PageRef, ...] = ()
    note: str = ""


@dataclass(frozen=True, slots=True)
class ViewStats:
    """What writing a view cost: for the README's figures and the CLI's one-line summary."""

    html: str
    html_bytes: int
    images: int
    image_bytes: int
    image_dir: str | None
    render_s: float
    total_s: float
    extra: tuple[tuple[str, Any], ...] = field(default=())
    notes: tuple[str, ...] = ()  # pages drawn smaller than asked, pages that could not be drawn

    def summary(self) -> str:
        where = f" + {self.images} page images ({self.image_bytes / 1e6:.1f} MB) in {self.image_dir}" \
            if self.image_dir else f" ({self.images} page images inline)"
        notes = "".join(f"; {n}" for n in self.notes)
        return f"wrote {self.html} ({self.html_bytes / 1e6:.2f} MB){where} in {self.total_s:.1f} s{notes}"


_PLACEHOLDER = re.compile(r"__TITLE__|/\*__STYLE__\*/|__DATA__|/\*__SCRIPT__\*/")


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


class PageImages:
    """Renders pages once each, to a sidecar folder (default) or as data URIs.

    ``sources`` maps a document name to its PDF path; the image of a page is
    addressed as the folder-relative URL written into the HTML.
    """

    def __init__(self, html: Path, sources: Mapping[str, str | os.PathLike[str]], *, inline: bool = False,
                 dpi: int = DEFAULT_DPI, quality: int = 60, password: str | None = None) -> None:
        self.dpi = check_dpi(dpi)
        self.html = html
        self.inline = inline
        self.zoom = dpi / 72.0
        self.quality = quality
        self.password = password
        self.sources = dict(sources)
        self.folder = _image_folder(html)
        self.reduced: list[tuple[str, int]] = []  # (document, page) drawn below the asked resolution
        self.unrendered: list[tuple[str, int]] = []  # (document, page) MuPDF could not load or draw
        self.count = 0
        self.bytes = 0
        self.seconds = 0.0
        self._open: dict[str, Any] = {}
        self._keys: dict[str, str] = {}

    def _pdf(self, doc: str):
        if doc not in self._open:
            from ..extraction import open_pdf

            if doc not in self.sources:
                raise ConfigError(f"no PDF known for document {doc!r}")
            self._open[doc] = open_pdf(self.sources[doc], password=self.password)
            # file names stay short and distinct when one view shows pages of several documents
            self._keys[doc] = f"d{len(self._keys) + 1}" if len(self.sources) > 1 else "p"
        return self._open[doc]

    def render(self, doc: str, page: int) -> str:
        """The image URL (relative to the HTML) or data URI of one page; ``""`` (the page shown without an
        image, and counted in :meth:`notes`) for a page MuPDF cannot load or draw."""
        import pymupdf

        pdf = self._pdf(doc)
        t0 = time.perf_counter()
        try:
            with MuPDFMessages(self.sources[doc]):  # its messages to the log, not the terminal
                pg = pdf.load_page(page)
                w, h = max(pg.rect.width, 1.0), max(pg.rect.height, 1.0)
                zoom = min(self.zoom, math.sqrt(MAX_PAGE_PIXELS / (w * h)), MAX_PAGE_SIDE / max(w, h))
                if zoom < self.zoom:
                    self.reduced.append((doc, page))
                pix = pg.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
        except Exception as exc:  # a page tree that claims more pages than it holds, a damaged page
            log.debug("%s, page %d: cannot be drawn: %s", doc, page + 1, exc)
            self.unrendered.append((doc, page))
            return ""
        data = _jpeg(pix, self.quality)
        self.seconds += time.perf_counter() - t0
        self.count += 1
        self.bytes += len(data)
        if self.inline:
            return "data:image/jpeg;base64," + base64.b64encode(data).decode("ascii")
        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"{self._keys[doc]}{page + 1:04d}.jpg"
        (self.folder / name).write_bytes(data)
        return f"{self.folder.name}/{name}"

    def notes(self) -> tuple[str, ...]:
        """What the images lack, one line each: pages drawn smaller than asked, pages without an image."""
        def where(refs: list[tuple[str, int]]) -> str:
            docs = sorted({d for d, _ in refs})
            return "; ".join((f"{d} " if len(self.sources) > 1 else "") + "page " +
                             page_ranges(p for e, p in refs if e == d) for d in docs)

        out = []
        if self.reduced:
            out.append(f"{len(self.reduced)} page(s) drawn below {self.dpi} dpi, at most "
                       f"{MAX_PAGE_PIXELS // 1_000_000} Mpx an image ({where(self.reduced)})")
        if self.unrendered:
            out.append(f"{len(self.unrendered)} page(s) could not be drawn and have no image "
                       f"({where(self.unrendered)})")
        return tuple(out)

    def close(self) -> None:
        for d in self._open.values():
            d.close()
        self._open.clear()


def _jpeg(pix: Any, quality: int) -> bytes:
    """JPEG bytes of a pixmap: through Pillow when installed (libjpeg-turbo, ~10x faster than
    PyMuPDF's encoder: 5 vs 55 ms an A4 page at 96 dpi), else through PyMuPDF."""
    try:
        from PIL import Image
    except ImportError:
        return pix.tobytes("jpeg", jpg_quality=quality)
    import io

    mode = {1: "L", 3: "RGB"}.get(pix.n)
    if mode is None:
        return pix.tobytes("jpeg", jpg_quality=quality)
    buf = io.BytesIO()
    Image.frombytes(mode, (pix.width, pix.height), pix.samples).save(buf, "JPEG", quality=quality, optimize=True)
    return buf.getvalue()


def _round_box(b: Sequence[float] | None) -> list[float] | None:
    return None if b is None else [round(float(v), 1) for v in b]


def _heading_record(i: int, h: Heading) -> dict[str, Any]:
    return {
        "id": f"h{i}",
        "text": h.text,
        "block": h.block,
        "level": int(h.level or 1),
        "page": h.page,
        "bbox": _round_box(h.bbox),
        "source": h.source,
        "score": None if h.score is None else round(float(h.score), 3),
        "reasons": list(h.reasons),
        "level_source": h.level_source,
        "confidence": None if h.confidence is None else round(float(h.confidence), 3),
    }


def tree_payload(document: Document, headings: Sequence[Heading], *,
                 settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The data the tree view's script reads (images added by :func:`write_tree_view`)."""
    blocks: list[list[list[Any]]] = [[] for _ in range(document.page_count)]
    for b in document.blocks:
        if 0 <= b.page < document.page_count:
            t = " ".join(b.text.split())
            blocks[b.page].append([*_round_box(b.bbox), t[:VIEW_TEXT_CHARS], b.index])  # type: ignore[misc]
    return {
        "mode": "tree",
        "format": CORRECTIONS_FORMAT,
        "schema_version": CORRECTIONS_SCHEMA,
        "document": {"name": document.name, "sha1": document.sha1, "pages": document.page_count},
        "settings": dict(settings or {}),
        "docs": {document.name: {"sizes": [[round(w, 1), round(h, 1)] for w, h in document.page_sizes]}},
        "headings": [_heading_record(i, h) for i, h in enumerate(headings)],
        "blocks": blocks,
        "text_chars": VIEW_TEXT_CHARS,
    }


def _write_html(out: Path, payload: Mapping[str, Any], title: str) -> int:
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    # the JSON sits in a <script> element: no "</script" or "<!--" may appear in it, so no "<" at all
    data = data.replace("<", "\\u003c")
    parts = {"__TITLE__": _escape(title), "/*__STYLE__*/": _asset("view.css"), "__DATA__": data,
             "/*__SCRIPT__*/": _asset("view.js")}
    # one pass: a heading that happens to contain a placeholder's name is not replaced
    html = _PLACEHOLDER.sub(lambda m: parts[m.group(0)], _asset("view.html"))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(html, encoding="utf-8")
    os.replace(tmp, out)
    return out.stat().st_size


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


#: the names :meth:`PageImages.render` gives its images (``p0001.jpg``, ``d20001.jpg``: document 2, page 1)
_IMAGE_NAME = re.compile(r"^(?:p|d\d+)\d{4,}\.jpg$")


def _clear_sidecar(images: PageImages) -> None:
    """Old images of an earlier run would be shown for pages not rendered this time; other files in the
    folder (someone's photos in a folder that happens to have its name) are left alone."""
    if images.inline or not images.folder.is_dir():
        return
    for f in images.folder.glob("*.jpg"):
        if _IMAGE_NAME.match(f.name):
            f.unlink()


def write_tree_view(
    out: str | os.PathLike[str],
    document: Document,
    headings: Sequence[Heading],
    *,
    pdf: str | os.PathLike[str] | None = None,
    inline: bool = False,
    dpi: int = DEFAULT_DPI,
    password: str | None = None,
    settings: Mapping[str, Any] | None = None,
) -> ViewStats:
    """Write the heading-tree view of ``document`` (its ``headings`` with levels) to ``out``."""
    t0 = time.perf_counter()
    out = check_view_paths(out, inline=inline)
    payload = tree_payload(document, headings, settings=settings)
    images = PageImages(out, {document.name: pdf or document.path}, inline=inline, dpi=dpi, password=password)
    _clear_sidecar(images)
    try:
        payload["images"] = {document.name: [images.render(document.name, p) for p in range(document.page_count)]}
    finally:
        images.close()
    size = _write_html(out, payload, f"{document.name}: headings")
    return ViewStats(html=str(out), html_bytes=size, images=images.count, image_bytes=images.bytes,
                     image_dir=None if inline else str(images.folder), render_s=images.seconds,
                     total_s=time.perf_counter() - t0, notes=images.notes())


def write_hits_view(
    out: str | os.PathLike[str],
    queries: Sequence[QueryView],
    sources: Mapping[str, str | os.PathLike[str]],
    *,
    page_sizes: Mapping[str, Sequence[tuple[float, float]]] | None = None,
    inline: bool = False,
    dpi: int = DEFAULT_DPI,
    title: str = "search hits",
) -> ViewStats:
    """Write the hits view: each query's hits with breadcrumb and score, their pages with the chunks' boxes.

    ``sources`` maps each document name to its PDF; only pages that hold a hit or an expected
    page are rendered.  ``page_sizes`` (points, as displayed) saves opening a PDF just to measure.
    """
    t0 = time.perf_counter()
    out = check_view_paths(out, inline=inline)
    wanted: list[PageRef] = []
    for q in queries:
        for h in q.hits:
            wanted.extend(PageRef(h.doc, p) for p in (h.pages or tuple(p for p, _ in h.boxes)))
        wanted.extend(q.expected)
    missing = sorted({r.doc for r in wanted} - set(sources))
    if missing:
        raise ConfigError("no PDF for document(s): " + ", ".join(missing))
    images = PageImages(out, sources, inline=inline, dpi=dpi)
    _clear_sidecar(images)
    docs: dict[str, Any] = {}
    imgs: dict[str, dict[str, str]] = {}
    try:
        for r in _unique(wanted):
            if r.doc not in docs:
                sizes = page_sizes.get(r.doc) if page_sizes else None
                if sizes is None:
                    pdf = images._pdf(r.doc)
                    sizes = [(p.rect.width, p.rect.height) for p in pdf]
                docs[r.doc] = {"sizes": [[round(w, 1), round(h, 1)] for w, h in sizes]}
                imgs[r.doc] = {}
            if not 0 <= r.page < len(docs[r.doc]["sizes"]):
                continue  # an expected page past the end (a stale label) is not drawn
            imgs[r.doc][str(r.page)] = images.render(r.doc, r.page)
    finally:
        images.close()
    payload = {
        "mode": "hits",
        "docs": docs,
        "images": imgs,
        "queries": [
            {
                "query": q.query,
                "note": q.note,
                "expected": [{"doc": e.doc, "page": e.page} for e in q.expected],
                "hits": [
                    {"doc": h.doc, "score": round(float(h.score), 4), "section_path": list(h.section_path),
                     "text": h.text, "pages": list(h.pages), "chunk_id": h.chunk_id, "relevant": h.relevant, "label": h.label,
                     "boxes": [[p, _round_box(b)] for p, b in h.boxes]}
                    for h in q.hits
                ],
            }
            for q in queries
        ],
    }
    size = _write_html(out, payload, title)
    return ViewStats(html=str(out), html_bytes=size, images=images.count, image_bytes=images.bytes,
                     image_dir=None if inline else str(images.folder), render_s=images.seconds,
                     total_s=time.perf_counter() - t0, notes=images.notes())


def _unique(refs: Iterable[PageRef]) -> list[PageRef]:
    seen: set[PageRef] = set()
    return [r for r in refs if not (r in seen or seen.add(r))]  # type: ignore[func-returns-value]
