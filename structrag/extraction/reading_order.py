"""Reading order of one page's blocks: a recursive XY-cut that only accepts a vertical cut between
real text columns (so tables read row by row), then bare heading numbers joined to their titles
and paragraphs that one producer wrote line by line joined again.
"""

from __future__ import annotations

from typing import Sequence

from ..numbering import is_bare_label
from .blocks import _Line, _RawBlock, _page_lines, _same_row, _segment


def _is_column_part(blocks: Sequence[_RawBlock], region_width: float) -> bool:
    """Whether a side of a vertical cut looks like running text, not table cells."""
    if not blocks:
        return False
    width = max(b.x1 for b in blocks) - min(b.x0 for b in blocks)
    multi = sum(len(b.lines) for b in blocks if len(b.lines) >= 3)
    lines = sum(len(b.lines) for b in blocks)
    return width >= 0.22 * region_width and (multi >= 0.4 * lines or width >= 0.4 * region_width)


def _cuts(intervals: list[tuple[float, float, int]], min_gap: float) -> list[list[int]]:
    """Group items whose projections overlap; groups are separated by gaps >= min_gap."""
    intervals.sort()
    groups: list[list[int]] = []
    end = None
    for a, b, i in intervals:
        if end is None or a > end + min_gap:
            groups.append([i])
            end = b
        else:
            groups[-1].append(i)
            end = max(end, b)
    return groups


def _xycut(blocks: list[_RawBlock], idx: list[int], depth: int, column: int, out: list[int]) -> None:
    if len(idx) <= 1 or depth > 40:
        for i in sorted(idx, key=lambda i: (blocks[i].y0, blocks[i].x0)):
            if column and not blocks[i].column:
                blocks[i].column = column
            out.append(i)
        return
    x0 = min(blocks[i].x0 for i in idx)
    x1 = max(blocks[i].x1 for i in idx)
    # vertical cut: columns separated by a gutter of at least ~8pt
    cols = _cuts([(blocks[i].x0, blocks[i].x1, i) for i in idx], 8.0)
    if len(cols) > 1 and all(_is_column_part([blocks[i] for i in g], x1 - x0) for g in cols):
        for k, g in enumerate(cols, 1):
            _xycut(blocks, g, depth + 1, column or k, out)
        return
    rows = _cuts([(blocks[i].y0, blocks[i].y1, i) for i in idx], 0.5)
    if len(rows) > 1:
        for g in rows:
            _xycut(blocks, g, depth + 1, column, out)
        return
    if len(cols) > 1:
        # side by side but not text columns (a table, a form): read row by row
        for i in sorted(idx, key=lambda i: (round(blocks[i].y0 / 3), blocks[i].x0)):
            if column and not blocks[i].column:
                blocks[i].column = column
            out.append(i)
        return
    for i in sorted(idx, key=lambda i: (blocks[i].y0, blocks[i].x0)):
        if column and not blocks[i].column:
            blocks[i].column = column
        out.append(i)


def _merge_labels(blocks: list[_RawBlock]) -> list[_RawBlock]:
    """Join a bare heading number with the title beside it on the same row."""
    out: list[_RawBlock] = []
    for b in blocks:
        prev = out[-1] if out else None
        if (
            prev is not None
            and len(prev.lines) == 1
            and prev.lines[0].horizontal
            and b.lines[0].horizontal
            and _same_row(prev.lines[0], b.lines[0])
            and b.x0 >= prev.x1 - 1
            and b.x0 - prev.x1 < 200
            and is_bare_label(prev.lines[0].text)
        ):
            first = b.lines[0]
            lab = prev.lines[0]
            merged = _Line(lab.x0, min(lab.y0, first.y0), first.x1, max(lab.y1, first.y1),
                           lab.text + " " + first.text, first.font, max(lab.size, first.size),
                           first.bold, first.italic, first.color, True, lab.weight + first.weight)
            nb = _RawBlock(min(prev.x0, b.x0), min(prev.y0, b.y0), max(prev.x1, b.x1), max(prev.y1, b.y1),
                           [merged] + b.lines[1:], b.column or prev.column)
            out[-1] = nb
        else:
            out.append(b)
    return out


def _page_blocks(page, flags: int) -> list[_RawBlock]:
    blocks: list[_RawBlock] = []
    for lines in _page_lines(page, flags):
        blocks.extend(_segment(lines))
    if not blocks:
        return blocks
    order: list[int] = []
    # text that does not run left to right (an arXiv stamp or a "Downloaded from" strip up the
    # margin) is out of the flow: left in, it bars the vertical cut between two text columns
    flow = [i for i, b in enumerate(blocks) if all(ln.horizontal for ln in b.lines)]
    _xycut(blocks, flow, 0, 0, order)
    if len(flow) < len(blocks):
        side = set(flow)
        order.extend(i for i in range(len(blocks)) if i not in side)
    return _merge_paragraph_lines(_merge_labels([blocks[i] for i in order]))


def _merge_paragraph_lines(blocks: list[_RawBlock]) -> list[_RawBlock]:
    """Join consecutive blocks that continue one paragraph.

    Some producers (many Chinese filings) write every line as a block of its
    own.  A block continues the previous one when it has the same style, sits
    right below it in the same column, and the previous line ran to the full
    width (a line that stops short ends a paragraph — or is a heading).
    """
    col_right: dict[int, float] = {}
    for b in blocks:
        col_right[b.column] = max(col_right.get(b.column, 0.0), b.x1)
    out: list[_RawBlock] = []
    for b in blocks:
        a = out[-1] if out else None
        if a is not None and b.lines[0].horizontal and a.lines[-1].horizontal and a.column == b.column:
            la, lb = a.lines[-1], b.lines[0]
            height = max(la.y1 - la.y0, 1.0)
            right = col_right[a.column]
            width = right - min(a.x0, b.x0)
            if (
                abs(la.size - lb.size) < 0.6 and la.bold == lb.bold and la.italic == lb.italic
                and -1.0 <= lb.y0 - la.y1 <= 1.25 * height
                and abs(lb.x0 - a.x0) <= max(2.5 * la.size, 0.08 * width)
                and la.x1 >= right - max(1.5 * la.size, 0.06 * width)
                and width > 0
            ):
                a.lines.extend(b.lines)
                a.x0, a.y0, a.x1, a.y1 = min(a.x0, b.x0), min(a.y0, b.y0), max(a.x1, b.x1), max(a.y1, b.y1)
                continue
        out.append(b)
    return out

