"""Features of detected headings for a learned filter over the layout rules.

The rules give each heading a score and named reasons; most false headings on unseen publishers are
table row labels, column headers, table titles and chart labels that the rules took from boldness or
capitals alone.  The features here add what the rules do not look at: where the line sits among the
page's other blocks (a column of short labels with a regular pitch, numbers on its row, aligned number
columns on the page), the page's ruling lines near it (from PyMuPDF's cheap ``get_cdrawings``), its size
against the body, and its text's shape.  :func:`heading_features` turns one document's headings into
rows of :data:`FEATURES`, in the same order.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from statistics import mean, pstdev
from typing import Any, Mapping, Sequence

from ..model import Block, Document, Heading
from ..text import latin_capitals, normalize_title
from .detect import body_style

_REASON = re.compile(r"^(.*?)\s+([+-]\d+(?:\.\d+)?)$")
# the variable part of a reason's name: "size x1.22", "body style (25% of text)", "4 lines", "on 9 pages"
_VARIABLE = re.compile(r"\s*(?:x\d[\d.]*|\([^)]*\)|\b\d+\b|%)")
_FIGURE = re.compile(r"^[\s\d.,%$€£¥()+\-–—/:x]*$")
#: reason names that become features (the others are summed into one)
REASONS = ("size", "bold", "italic", "capitals", "colour", "font", "numbered", "rare style", "body style",
           "the page's body style", "sentence punctuation", "ends with a colon", "long", "longish", "lines",
           "figures", "not alone on its row", "alone on its row", "starts in lower case", "repeated on pages",
           "smaller than body", "continues a numbered heading sequence", "numbered sequence of with text between")
TEXT = ("score", "contents", "chars", "words", "capitals", "digits", "colon", "page_rel", "on_page",
        "rank_on_page", "other_reasons")
LAYOUT = ("size_rel", "bold", "italic", "lines", "blocks", "width_rel", "x0_rel", "off_centre", "y_rel",
          "gap_above", "gap_below", "next_size_rel", "next_bold", "next_figures", "next_words",
          "page_blocks", "page_bold", "page_short", "page_figures", "row_blocks", "row_figures",
          "column_labels", "column_pitch_cv", "number_columns", "repeats", "prev_rows", "next_rows", "page_rows")
DRAWN = ("rules_near", "rules_below", "rules_page", "vrules_cross", "in_box", "boxes_page")
FEATURES = TEXT + LAYOUT + DRAWN + tuple(f"r:{r}" for r in REASONS)


def reason_values(reasons: Sequence[str]) -> dict[str, float]:
    """A heading's reasons as ``{name: value}``, the variable part of each name dropped."""
    out: dict[str, float] = defaultdict(float)
    for r in reasons:
        m = _REASON.match(r)
        if m is None:
            continue
        name = " ".join(_VARIABLE.sub(" ", m.group(1)).split())
        if name.startswith("numbered sequence"):
            name = "numbered sequence of with text between"
        elif name.startswith("numbered"):
            name = "numbered"
        elif name.startswith("repeated"):
            name = "repeated on pages"
        out[name if name in REASONS else "other"] += float(m.group(2))
    return out


def _figures(text: str) -> bool:
    return bool(text.strip()) and bool(_FIGURE.match(text)) and any(c.isdigit() for c in text)


def _figure_row(line: str) -> bool:
    """A table row's line: it ends with a figure and holds two figures or more ("Deposits 1,204 1,118 7.7%")."""
    toks = line.split()
    return len(toks) >= 2 and _figures(toks[-1]) and sum(_figures(t) for t in toks) >= 2


def _rows_share(b: Block | None) -> float:
    """Share of a block's lines that are table rows (-1 for no block): extraction joins a table's rows into
    one block, so the rows are told apart line by line."""
    if b is None:
        return -1.0
    lines = [x for x in b.text.splitlines() if x.strip()]
    return sum(_figure_row(x) for x in lines) / len(lines) if lines else 0.0


def _short(b: Block) -> bool:
    return len(b.text.split()) <= 5


def page_drawings(page: Any) -> dict[str, list]:
    """One page's ruling lines and filled boxes, as bounding boxes (``page``: a PyMuPDF page).

    ``get_cdrawings`` without the path details is cheap (several hundred pages a second); only the
    bounding box of each path is used: thin wide ones are horizontal rules, thin tall ones vertical
    rules, filled ones below half the page boxes (table shading, banners).
    """
    w, h = page.rect.width, page.rect.height
    hrules, vrules, boxes = [], [], []
    for d in page.get_cdrawings():
        x0, y0, x1, y1 = d["rect"]
        dw, dh = x1 - x0, y1 - y0
        if dh <= 2.5 and dw >= 15:
            hrules.append((x0, y0, x1, y1))
        elif dw <= 2.5 and dh >= 8:
            vrules.append((x0, y0, x1, y1))
        elif d.get("fill") is not None and dw >= 15 and dh >= 5 and dw * dh < 0.5 * w * h:
            boxes.append((x0, y0, x1, y1))
        # a cell's box drawn as a stroked rectangle also gives its top and bottom rules
        if d.get("color") is not None and dw >= 15 and dh >= 5 and dw * dh < 0.5 * w * h:
            hrules += [(x0, y0, x1, y0), (x0, y1, x1, y1)]
    return {"h": hrules, "v": vrules, "boxes": boxes}


def document_drawings(pdf: Any, pages: Sequence[int]) -> dict[int, dict[str, list]]:
    """:func:`page_drawings` of the given pages of an open PyMuPDF document."""
    return {p: page_drawings(pdf[p]) for p in sorted(set(pages))}


def _drawn(bbox: Sequence[float], line_h: float, d: Mapping[str, list] | None) -> list[float]:
    if d is None:
        return [0.0] * len(DRAWN)
    x0, y0, x1, y1 = bbox
    near = below = cross = inside = 0
    for rx0, ry0, rx1, ry1 in d["h"]:
        if rx1 < x0 or rx0 > x1:
            continue  # not over or under the line
        if y0 - 1.5 * line_h <= ry0 <= y1 + 1.5 * line_h:
            near += 1
        elif y1 < ry0 <= y1 + 200:
            below += 1
    yc = (y0 + y1) / 2
    for rx0, ry0, rx1, ry1 in d["v"]:
        if ry0 <= yc <= ry1:
            cross += 1
    for bx0, by0, bx1, by1 in d["boxes"]:
        if bx0 - 1 <= x0 and by0 - 1 <= y0 and x1 <= bx1 + 1 and y1 <= by1 + 1:
            inside += 1
    return [float(min(near, 20)), float(min(below, 50)), float(min(len(d["h"]), 200)), float(min(cross, 20)),
            float(min(inside, 5)), float(min(len(d["boxes"]), 100))]


def _page_stats(blocks: Sequence[Block]) -> dict[str, float]:
    n = len(blocks) or 1
    rights: Counter = Counter(round(b.bbox[2] / 3) for b in blocks if _figures(b.text))
    lines = [x for b in blocks for x in b.text.splitlines() if x.strip()]
    return {"page_rows": sum(_figure_row(x) for x in lines) / max(len(lines), 1),"page_blocks": float(len(blocks)), "page_bold": sum(b.bold for b in blocks) / n,
            "page_short": sum(_short(b) for b in blocks) / n,
            "page_figures": sum(_figures(b.text) for b in blocks) / n,
            "number_columns": float(sum(1 for c in rights.values() if c >= 3))}


def _column(blocks: Sequence[Block], b: Block) -> tuple[float, float]:
    """Short blocks in ``b``'s column (same left edge) within 150 pt, and the spread of their pitch."""
    ys = sorted(o.bbox[1] for o in blocks if abs(o.bbox[0] - b.bbox[0]) < 2.5 and _short(o)
                and abs(o.bbox[1] - b.bbox[1]) <= 150)
    gaps = [b2 - a for a, b2 in zip(ys, ys[1:]) if b2 - a > 0.5]
    cv = pstdev(gaps) / mean(gaps) if len(gaps) >= 2 else 1.0
    return float(len(ys)), cv


def heading_features(document: Document, heads: Sequence[Heading],
                     drawings: Mapping[int, Mapping[str, list]] | None = None) -> list[list[float]]:
    """One row of :data:`FEATURES` per heading (``drawings``: :func:`document_drawings`, or None: zeros)."""
    body = body_style(document)
    bsize = body.size or 10.0
    per_page = Counter(h.page for h in heads)
    seen: Counter = Counter()
    texts: dict[str, set[int]] = defaultdict(set)
    for b in document.blocks:
        if len(b.text) <= 150:
            texts[normalize_title(b.text)].add(b.page)
    stats: dict[int, dict[str, float]] = {}
    rows = []
    for h in heads:
        t = h.text
        rv = reason_values(h.reasons)
        rank = seen[h.page]
        seen[h.page] += 1
        row = [float(h.score), float(h.source == "contents"), float(len(t)), float(len(t.split())),
               float(latin_capitals(t)), sum(c.isdigit() for c in t) / max(len(t), 1),
               float(t.rstrip().endswith((":", "："))), h.page / max(document.page_count - 1, 1),
               float(per_page[h.page]), float(rank), rv.get("other", 0.0)]
        row += _layout(document, h, bsize, stats, texts)
        b = document.blocks[h.block] if 0 <= h.block < len(document.blocks) else None
        bbox = h.bbox or (b.bbox if b is not None else None)
        if bbox is None or drawings is None:
            row += [0.0] * len(DRAWN)
        else:
            line_h = max((bbox[3] - bbox[1]) / max(b.line_count if b else 1, 1), 4.0)
            row += _drawn(bbox, line_h, drawings.get(h.page))
        row += [rv.get(r, 0.0) for r in REASONS]
        rows.append(row)
    return rows


def _layout(document: Document, h: Heading, bsize: float, stats: dict, texts: Mapping[str, set]) -> list[float]:
    """The :data:`LAYOUT` part of one heading's row."""
    if not 0 <= h.block < len(document.blocks) or h.page >= document.page_count:
        return [-1.0] * len(LAYOUT)
    b = document.blocks[h.block]
    page = document.page_blocks(h.page)
    if h.page not in stats:
        stats[h.page] = _page_stats(page)
    st = stats[h.page]
    pw, ph = document.page_sizes[h.page]
    x0, y0, x1, y1 = h.bbox or b.bbox
    first = document.page_block_starts[h.page]
    k = h.block - first
    prev = page[k - 1] if 0 < k <= len(page) else None
    end = max(h.block_end - first, k + 1)
    nxt = page[end] if 0 <= end < len(page) else None
    gap_above = (y0 - prev.bbox[3]) / bsize if prev is not None else -1.0
    gap_below = (nxt.bbox[1] - y1) / bsize if nxt is not None else -1.0
    yc = (y0 + y1) / 2
    row_blocks = [o for o in page if o.index != b.index and o.bbox[1] <= yc <= o.bbox[3]]
    col_n, col_cv = _column(page, b)
    return [b.size / bsize, float(b.bold), float(b.italic), float(b.line_count), float(max(h.block_end - h.block, 1)),
            (x1 - x0) / pw, x0 / pw, abs((x0 + x1) / 2 - pw / 2) / pw, y0 / ph, gap_above, gap_below,
            nxt.size / bsize if nxt is not None else -1.0, float(nxt.bold) if nxt is not None else -1.0,
            float(_figures(nxt.text)) if nxt is not None else -1.0,
            float(len(nxt.text.split())) if nxt is not None else -1.0,
            st["page_blocks"], st["page_bold"], st["page_short"], st["page_figures"], float(len(row_blocks)),
            float(sum(_figures(o.text) for o in row_blocks)), col_n, col_cv, st["number_columns"],
            float(len(texts.get(normalize_title(b.text), ()))), _rows_share(prev), _rows_share(nxt), st["page_rows"]]
