"""Page images for the VLM prompt: rendered once per document, boxes drawn per step.

A page is rasterised by PyMuPDF at ``zoom`` × its size in points (zoom 1 =
72 dpi: one pixel per point, the paper's "original size") and kept in a
byte-bounded LRU cache, so a page that stays in the memory for many steps is
rendered once.  Each step draws the heading boxes on a copy: known headings
in blue with their level label (``H2``), targets in red with their id
(``T1``), so the model can tell what is asked from what is known.  Heading
boxes are in displayed-page points (rotation applied), the same space as the
rendered pixmap, so a box maps to pixels by ``zoom`` alone.
"""

from __future__ import annotations

import base64
import io
import threading
from collections import OrderedDict
from typing import Literal, Sequence

from ...errors import ConfigError, CorruptPDFError
from ._client import require_pillow

__all__ = ["PageRenderer", "KNOWN_COLOR", "TARGET_COLOR", "Box"]

#: Outline colours (RGB).  Saturated primaries are rare in document text, and
#: the test server looks for exactly these to check that boxes were drawn.
KNOWN_COLOR = (0, 90, 255)
TARGET_COLOR = (255, 0, 0)

# (bbox in points, label, kind)  kind: "known" | "target"
Box = tuple[tuple[float, float, float, float], str, str]


class PageRenderer:
    """Renders pages of one PDF, caches the rasters, draws boxes, encodes data URLs.

    ``max_cache_bytes`` bounds the raw rasters kept (RGB, 3 bytes a pixel),
    ``max_encoded`` the drawn, encoded images kept (keyed by page and boxes);
    ``image_format`` is ``png`` (lossless, sharp text, default) or ``jpeg``
    (smaller requests).  Counters: ``renders`` (rasterisations), ``hits``
    (pages served from the cache).  Use as a context manager or call
    :meth:`close`.
    """

    def __init__(
        self,
        path: str,
        *,
        zoom: float = 1.0,
        max_cache_bytes: int = 512 << 20,
        image_format: Literal["png", "jpeg"] = "png",
        jpeg_quality: int = 85,
        line_width: int | None = None,
        max_encoded: int = 64,
    ) -> None:
        if not zoom or zoom <= 0 or zoom > 8:
            raise ConfigError(f"zoom must be in (0, 8], got {zoom!r}")
        if image_format not in ("png", "jpeg"):
            raise ConfigError(f"image_format must be 'png' or 'jpeg', got {image_format!r}")
        require_pillow()
        self.path = str(path)
        self.zoom = float(zoom)
        self.max_cache_bytes = int(max_cache_bytes)
        self.max_encoded = int(max_encoded)
        self.image_format = image_format
        self.jpeg_quality = int(jpeg_quality)
        self.line_width = line_width if line_width is not None else max(2, round(2 * self.zoom))
        self.renders = 0
        self.hits = 0
        self._cache: OrderedDict[int, object] = OrderedDict()
        # drawn + encoded images: an anchor page stays the same for many steps
        self._encoded: OrderedDict[tuple, tuple[str, int, int, int]] = OrderedDict()
        self.encoded_hits = 0
        self._cache_bytes = 0
        self._doc = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------
    def _open(self):
        if self._doc is None:
            from ...extraction import open_pdf

            self._doc = open_pdf(self.path)
        return self._doc

    def close(self) -> None:
        with self._lock:
            if self._doc is not None:
                self._doc.close()
                self._doc = None
            self._cache.clear()
            self._encoded.clear()
            self._cache_bytes = 0

    def __enter__(self) -> "PageRenderer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def page_image(self, page: int):
        """The plain raster of ``page`` (0-based) as a PIL image; do not draw on it."""
        from PIL import Image

        with self._lock:
            img = self._cache.get(page)
            if img is not None:
                self._cache.move_to_end(page)
                self.hits += 1
                return img
            doc = self._open()
            if not 0 <= page < doc.page_count:
                raise CorruptPDFError(f"page {page + 1} does not exist (the PDF has {doc.page_count})",
                                      path=self.path)
            try:
                from ..._pymupdf import import_pymupdf

                pymupdf = import_pymupdf()

                from ..._pymupdf import MuPDFMessages

                with MuPDFMessages(f"{self.path}, page {page + 1}"):  # to the log, not stdout
                    pix = doc.load_page(page).get_pixmap(matrix=pymupdf.Matrix(self.zoom, self.zoom), alpha=False)
            except Exception as exc:
                raise CorruptPDFError(f"cannot render the page: {exc}", path=self.path, page=page + 1) from None
            img = Image.frombytes("RGB", (pix.width, pix.height), pix.samples)
            self.renders += 1
            size = pix.width * pix.height * 3
            self._cache[page] = img
            self._cache_bytes += size
            while self._cache_bytes > self.max_cache_bytes and len(self._cache) > 1:
                _, old = self._cache.popitem(last=False)
                self._cache_bytes -= old.width * old.height * 3  # type: ignore[attr-defined]
            return img

    def draw(self, page: int, boxes: Sequence[Box]):
        """A copy of the page with ``boxes`` outlined and labelled."""
        from PIL import ImageDraw

        img = self.page_image(page).copy()
        d = ImageDraw.Draw(img)
        w = self.line_width
        z = self.zoom
        for bbox, label, kind in boxes:
            color = TARGET_COLOR if kind == "target" else KNOWN_COLOR
            x0, y0, x1, y1 = (v * z for v in bbox)
            # pad so the outline does not cover the glyphs it marks
            x0, y0, x1, y1 = x0 - w - 1, y0 - w - 1, x1 + w + 1, y1 + w + 1
            x0, y0 = max(0, x0), max(0, y0)
            x1, y1 = min(img.width - 1, x1), min(img.height - 1, y1)
            if x1 <= x0 or y1 <= y0:
                continue
            d.rectangle((x0, y0, x1, y1), outline=color, width=w)
            if label:
                tw = d.textlength(label)
                th = 11
                lx = max(0, x0 - tw - 6) if x0 > tw + 6 else x0
                ly = y0 if x0 > tw + 6 else max(0, y0 - th - 3)
                d.rectangle((lx, ly, lx + tw + 4, ly + th + 2), fill=color)
                d.text((lx + 2, ly + 1), label, fill=(255, 255, 255))
        return img

    def data_url(self, page: int, boxes: Sequence[Box]) -> tuple[str, int, int, int]:
        """``(data URL, encoded bytes, width, height)`` of ``page`` with ``boxes``, cached by content."""
        key = (page, tuple(boxes))
        with self._lock:
            got = self._encoded.get(key)
            if got is not None:
                self._encoded.move_to_end(key)
                self.encoded_hits += 1
                # the page raster was not needed, but it counts as served from the cache
                self.hits += 1
                return got
        img = self.draw(page, boxes)
        url, n = self.encode(img)
        out = (url, n, img.width, img.height)
        with self._lock:
            self._encoded[key] = out
            while len(self._encoded) > self.max_encoded:
                self._encoded.popitem(last=False)
        return out

    def encode(self, img) -> tuple[str, int]:
        """``(data URL, bytes of the encoded image)``."""
        buf = io.BytesIO()
        if self.image_format == "png":
            img.save(buf, format="PNG", optimize=False, compress_level=6)
            mime = "image/png"
        else:
            img.save(buf, format="JPEG", quality=self.jpeg_quality)
            mime = "image/jpeg"
        raw = buf.getvalue()
        return f"data:{mime};base64," + base64.b64encode(raw).decode("ascii"), len(raw)
