"""A second opinion from PyMuPDF's layout model: a heading inside a table or a picture is a cell or a label.

PyMuPDF 2 ships a layout analyser (``pymupdf.layout``, an ONNX model trained on many kinds of document) that
sorts a page's regions into classes: ``section-header``, ``text``, ``table``, ``picture``, ``caption`` and
more.  It reads a page in about 0.2 s here, some 30 times the cost of the rules, so it is an option
(``detect_headings(..., layout_model=True)``, ``structrag toc --layout-model``), not the default.  Only two
of its classes are taken as evidence, those the development sets of other families and other kinds of
document showed to hold no true heading: a layout-detected heading lying
mostly inside a ``table`` or a ``picture`` region opens no section.  Headings from the outline or the printed
contents are never vetoed.

A table or a picture region that holds running text is the model's misreading (a filing's notes page taken for a
table, a page drawn in a way it takes for an image) and is ignored.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Sequence

from .._progress import Progress, progress_bar
from .._pymupdf import MuPDFMessages, import_pymupdf
from ..files import require_regular_file
from ..errors import ConfigError, InputError
from ..model import Block, Document, Heading
from ._geometry import prose, share_inside

__all__ = ["VETO_CLASSES", "layout_regions", "layout_vetoes"]

#: the model's classes that hold no section's title
VETO_CLASSES = ("table", "picture")
#: a heading counts as inside a region when this share of its box is
_INSIDE = 0.5

Region = tuple[tuple[float, float, float, float], str]


def _analyser():
    pymupdf = import_pymupdf()
    try:
        import pymupdf.layout as layout
    except ImportError as e:  # pragma: no cover - PyMuPDF 2 installs it; an older or trimmed install may not
        raise ConfigError("the layout model needs PyMuPDF's layout package: pip install pymupdf-layout") from e
    layout.activate()
    return pymupdf


def layout_regions(document: Document, pages: Iterable[int], password: str | None = None,
                   progress: Progress = None) -> dict[int, list[Region]]:
    """Page -> the layout model's regions ``((x0, y0, x1, y1), class)`` for each of ``pages`` of ``document``
    (``progress``: a bar over the pages, about 0.2 s each; default on a terminal).

    The PDF is read again from ``document.path``; a file that is no longer the one extracted (another SHA-1)
    raises :class:`~structrag.errors.InputError` rather than lend its regions to the wrong document."""
    path = require_regular_file(document.path)  # a FIFO or a device put in its place would block the read
    try:
        data = path.read_bytes()  # read once: the bytes hashed are the bytes the model reads
    except OSError as e:
        raise InputError(f"cannot be read again for the layout model: {e}", path=path) from e
    if document.sha1 and hashlib.sha1(data).hexdigest() != document.sha1:
        raise InputError("has changed since it was extracted (its SHA-1 differs)", path=path,
                         hint="extract it again")
    pymupdf = _analyser()
    out: dict[int, list[Region]] = {}
    with MuPDFMessages(str(path)), pymupdf.open(stream=data, filetype="pdf") as pdf:
        if pdf.needs_pass and not pdf.authenticate(password or ""):
            raise InputError("is encrypted: the layout model needs its password", path=path,
                             hint="pass password=... (structrag toc --password)")
        todo = sorted(set(pages))
        with progress_bar(len(todo), desc=f"{path.name}: layout model", unit="page", enabled=progress) as bar:
            for p in todo:
                page = pdf[p]
                try:
                    page.get_layout()
                except Exception as e:  # the model's own failure, named with its file and page
                    raise InputError(f"the layout model failed: {e}", path=path, page=p + 1) from e
                out[p] = [((float(x0), float(y0), float(x1), float(y1)), str(c))
                          for x0, y0, x1, y1, c in (page.layout_information or [])]
                bar.update(1)
    return out


def _holds_prose(blocks: Sequence[Block], region: Sequence[float]) -> bool:
    """Whether running text lies in ``region``: no table or picture holds paragraphs, so the model misread it
    (a filing's notes page taken for a table, a page drawn in a way it takes for an image)."""
    return any(prose(b) and share_inside(b.bbox, region) >= _INSIDE for b in blocks)


def layout_vetoes(document: Document, headings: Sequence[Heading],
                  regions: dict[int, list[Region]] | None = None, password: str | None = None,
                  progress: Progress = None) -> dict[int, str]:
    """Position in ``headings`` -> why the layout model rules that layout-detected heading out.

    ``regions`` (from :func:`layout_regions`) is read for the headings' pages when not given; ``progress``
    counts every page of the document (those without a layout-detected heading at once)."""
    pages = {h.page for h in headings if h.source == "layout" and h.bbox is not None}
    if not pages:
        return {}
    if regions is None:
        name = Path(document.path).name
        with progress_bar(document.page_count, desc=f"{name}: layout model", unit="page", enabled=progress) as bar:
            bar.update(document.page_count - len(pages))  # pages the model need not read
            regions = layout_regions(document, pages, password, bar.update)
    usable: dict[int, list[Region]] = defaultdict(list)
    for p in pages:
        blocks = document.page_blocks(p)
        usable[p] = [(r, c) for r, c in regions.get(p, []) if c in VETO_CLASSES and not _holds_prose(blocks, r)]
    out: dict[int, str] = {}
    for k, h in enumerate(headings):
        if h.source != "layout" or h.bbox is None:
            continue
        for r, c in usable.get(h.page, ()):
            if share_inside(h.bbox, r) >= _INSIDE:
                out[k] = f"inside a {c} (layout model)"
                break
    return out
