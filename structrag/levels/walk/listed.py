"""The levels of listed headings (entries of the printed contents) and of the headings between them.

:func:`relative_fixed` reads a contents level relative to the listed headings present (entries whose
listed parent was not located stay siblings); :func:`under_listed` keeps the contents' nesting when a
predicted heading between two listed ones came out too shallow.  Both serve
:func:`.driver.assign_levels`.
"""

from __future__ import annotations

from typing import Sequence

from ...headings.contents import follows_lost_entry
from ...model import Heading
from ..base import project_levels

__all__ = ["relative_fixed", "under_listed"]


def under_listed(levels: list[int], held: Sequence[bool], fixed: Sequence[int | None],
                 headings: Sequence[Heading]) -> tuple[list[int], int]:
    """Predicted headings between two listed (contents) headings moved down, shape kept, when one of them came
    out shallower than the second listed heading: that would make the listed heading a sub-section of an
    unlisted one, not of its listed parent.  The run then sits under the first listed heading, its
    shallowest heading one level below it (clamped where its first heading was not its shallowest, so the
    levels stay a valid sequence).  Runs holding a placement (``held``: placed by the document's logic or
    within a secondary contents run) stay."""
    out = list(levels)
    listed = [i for i, f in enumerate(fixed) if f is not None and not held[i]]
    moved = 0
    for a, b in zip(listed, listed[1:]):
        run = range(a + 1, b)
        if not run or any(fixed[k] is not None or held[k] for k in run):
            continue
        if follows_lost_entry(headings[b]):
            continue  # the contents list an entry on these pages that was not found: the run may be under it
        low = min(out[k] for k in run)
        if low < out[b]:
            # every heading down by the same step; one that then stands more than a level under the one
            # before it (its first heading was not its shallowest) is clamped, which keeps all of them at or
            # below the first listed heading's children
            shifted = project_levels([out[k] + out[a] + 1 - low for k in run], out[a])
            for k, lv in zip(run, shifted):
                out[k] = lv
            moved += len(run)
    return out, moved


def relative_fixed(listed: list[tuple[int, int]], contents_level: int, given: int | None = None) -> int:
    """The level for a heading at ``contents_level`` from the listed headings before it, or record ``given``.

    ``listed`` is the branch of (contents level, level given) pairs.  The nearest listed heading at the same
    contents level makes it a sibling (same level); one at a shallower contents level makes it a descendant,
    as many levels down as the contents says; with none, the contents level stands.  With ``given``, the
    heading's final level is recorded on the branch instead.
    """
    while listed and listed[-1][0] > contents_level:
        listed.pop()
    if given is not None:
        if listed and listed[-1][0] == contents_level:
            listed.pop()
        listed.append((contents_level, given))
        return given
    if not listed:
        return contents_level
    c, a = listed[-1]
    return a if c == contents_level else a + (contents_level - c)
