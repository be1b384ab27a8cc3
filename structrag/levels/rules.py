"""A rules-only predictor: heading numbers first, then style clusters.

Usable without the shipped model.  For each target, in order:

1. a number that continues an anchor's number (``2.3`` after ``2.2``,
   ``Item 7A`` after ``Item 7``) makes it that anchor's sibling; a first
   sub-number (``2.1`` under ``2``) or a dotted number one deeper than an
   anchor's makes it a child;
2. the same look (size, weight, slant, capitals, colour, font family) as an
   anchor makes it that anchor's sibling — the deepest such anchor on the
   rightmost branch, or the last heading of the next level down;
3. otherwise it goes under the deepest branch anchor that is visibly stronger
   (larger, or as large and bolder / in capitals), else to level 1.
"""

from __future__ import annotations

from .baselines import SIZE_TOL, LocalBranch, _Base, numbered_level
from .style import HeadingInfo

__all__ = ["RulesPredictor", "compare_strength"]


def compare_strength(a: HeadingInfo, b: HeadingInfo) -> int:
    """+1 if ``a`` looks stronger than ``b``, -1 if weaker, 0 if alike."""
    if a.size > b.size + SIZE_TOL:
        return 1
    if b.size > a.size + SIZE_TOL:
        return -1
    sa = (a.bold, a.caps)
    sb = (b.bold, b.caps)
    if sa == sb:
        return 0
    if a.bold != b.bold:
        return 1 if a.bold else -1
    return 1 if a.caps else -1


class RulesPredictor(_Base):
    """Numbering + style clustering, deterministic."""

    name = "rules"
    source = "rules"

    def _one(self, br: LocalBranch, t: HeadingInfo) -> tuple[int, float]:
        branch = br.branch()
        found = numbered_level(branch, t.numbering, (0.95, 0.95, 0.9), same_prefix=True)
        if found is not None:
            return found
        if not t.has_style:
            return br.prev, 0.2
        key = t.key
        for k, a in reversed(branch):
            if a.has_style and a.key == key:
                return k, 0.8
        nxt = br.at(br.prev + 1)
        if nxt is not None and nxt.has_style and nxt.key == key:
            return br.prev + 1, 0.7
        for k, a in reversed(branch):
            if a.has_style and compare_strength(a, t) > 0:
                return k + 1, 0.5
        return 1, 0.4
