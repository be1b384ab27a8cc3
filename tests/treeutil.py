"""A reference implementation the level tests check structrag against."""

from __future__ import annotations

from typing import Sequence


def parents(levels: Sequence[int]) -> list[int | None]:
    """Index of each heading's parent under DESIGN.md §2.3 (the nearest earlier heading of a smaller level)."""
    stack: list[int] = []
    out: list[int | None] = []
    for i, lv in enumerate(levels):
        while stack and levels[stack[-1]] >= lv:
            stack.pop()
        out.append(stack[-1] if stack else None)
        stack.append(i)
    return out
