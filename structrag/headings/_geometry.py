"""Where blocks sit relative to one another (line pitch, closeness), how a line stands out and what running text
looks like, shared by the heading rules."""

from __future__ import annotations

from ..model import Block
from ..text import latin_capitals

__all__ = ["pitch", "close_below", "tight", "touching", "at_row_spacing", "prominence", "share_inside", "prose"]


def pitch(b: Block) -> float:
    """Distance from one line to the next in ``b`` (its height for one line)."""
    return (b.bbox[3] - b.bbox[1]) / max(b.line_count, 1)


def share_inside(box, region) -> float:
    """Share of ``box``'s area (x0, y0, x1, y1) that lies inside ``region``; 0 for an empty box."""
    w = min(box[2], region[2]) - max(box[0], region[0])
    h = min(box[3], region[3]) - max(box[1], region[1])
    area = (box[2] - box[0]) * (box[3] - box[1])
    return max(w, 0.0) * max(h, 0.0) / area if area > 0 else 0.0


def close_below(a: Block, b: Block, factor: float) -> bool:
    """``b`` starts within ``factor`` line heights below ``a``'s end (or on ``a``'s row)."""
    lh = pitch(a)
    return -lh <= b.bbox[1] - a.bbox[3] <= factor * lh


def tight(a: Block, b: Block) -> bool:
    """``b`` follows ``a`` at a table's row spacing: the gap under ``a`` under ``b``'s line height."""
    return b.bbox[1] - a.bbox[3] <= 1.0 * pitch(b)


def touching(a: Block, b: Block) -> bool:
    """``b`` starts right under ``a``, within a third of a line of ``b``'s type: rows' spacing, no paragraph space."""
    lh = pitch(b)
    return -0.2 * lh <= b.bbox[1] - a.bbox[3] <= 0.3 * lh and b.bbox[0] < a.bbox[2]


def at_row_spacing(a: Block, b: Block, rows: Block | None = None) -> bool:
    """``b`` starts right under ``a`` (one line), the gap no wider than the one between the lines of ``rows``
    (``b`` by default) when all are set in one type (a statement's rows spaced out: 9 pt lines every 12.75 pt)."""
    rows = rows or b
    if touching(a, b):
        return True
    if a.line_count != 1 or rows.line_count < 2 or abs(a.size - rows.size) > 0.05 * rows.size or b.bbox[0] >= a.bbox[2]:
        return False
    lh = a.bbox[3] - a.bbox[1]
    inner = (rows.bbox[3] - rows.bbox[1] - rows.line_count * lh) / (rows.line_count - 1)
    return 0 <= b.bbox[1] - a.bbox[3] <= inner + 0.1 * lh


def prominence(size: float | None, bold: bool | None, text: str) -> tuple[float, int, int]:
    """How a title stands out, for comparing two: size (to half a point), then weight, then capitals."""
    return round((size or 0.0) * 2) / 2, int(bool(bold)), int(latin_capitals(text))


def prose(b: Block) -> bool:
    """Running text: three or more lines of sentence length."""
    return b.line_count >= 3 and len(b.text) / b.line_count >= 45
