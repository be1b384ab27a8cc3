"""Where blocks sit relative to one another (line pitch, closeness) and how a line stands out, shared by the
heading rules."""

from __future__ import annotations

from ..model import Block
from ..text import latin_capitals

__all__ = ["pitch", "close_below", "prominence"]


def pitch(b: Block) -> float:
    """Distance from one line to the next in ``b`` (its height for one line)."""
    return (b.bbox[3] - b.bbox[1]) / max(b.line_count, 1)


def close_below(a: Block, b: Block, factor: float) -> bool:
    """``b`` starts within ``factor`` line heights below ``a``'s end (or on ``a``'s row)."""
    lh = pitch(a)
    return -lh <= b.bbox[1] - a.bbox[3] <= factor * lh


def prominence(size: float | None, bold: bool | None, text: str) -> tuple[float, int, int]:
    """How a title stands out, for comparing two: size (to half a point), then weight, then capitals."""
    return round((size or 0.0) * 2) / 2, int(bool(bold)), int(latin_capitals(text))
