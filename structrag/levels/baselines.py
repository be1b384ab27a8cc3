"""Baseline predictors for comparison.

``font-size``
    the CMM construction: a heading's parent is the nearest preceding heading
    with a strictly larger font size, else the root.  In the growing tree that
    heading is always on the rightmost branch, so the predictor reads it off
    the memory's anchors at levels 1..l_{i-1}.
``size-rank``
    one level per distinct heading style, ranked by size then weight (what
    pymupdf4llm does with font sizes); the driver's projection turns a jump
    into the nearest valid level, which is how a Markdown reader nests it.
``numbering``
    levels from heading numbers alone: a number that continues an anchor's is
    its sibling, a first sub-number (``2.1`` under ``2``) its child, a dotted
    number of depth d sits under the nearest anchor of depth d-1; schemes
    nest in the order they first appear on the branch; an unnumbered heading
    is a sibling of the nearest unnumbered anchor, else a child of the
    previous heading.

All are deterministic (``max_retries = 0``) and read only the memory.
"""

from __future__ import annotations

from typing import Sequence

from ..model import Heading, Numbering
from ..numbering import continues, opens_child
from .base import LevelPrediction, Memory, PredictionContext
from .style import DocStyles, HeadingInfo, describe

__all__ = ["FontSizePredictor", "SizeRankPredictor", "NumberingPredictor", "LocalBranch", "latest_anchors",
           "numbered_level", "numbering_signature"]

#: sizes closer than this are the same size (extraction rounds to 0.5pt)
SIZE_TOL = 0.25


def latest_anchors(memory: Memory) -> tuple[dict[int, int], int, int | None, int]:
    """Where a walk over a step's targets starts: the memory's most recent anchor of each level
    (level -> heading index), the previous heading's level and index, and the depth."""
    by_level: dict[int, int] = {}
    for a in memory.anchors:
        cur = by_level.get(a.level)
        if cur is None or a.index > cur:
            by_level[a.level] = a.index
    prev_index = memory.previous.index if memory.previous is not None else None
    depth = max([memory.depth, *by_level]) if by_level else memory.depth
    return by_level, memory.previous_level, prev_index, depth


class LocalBranch:
    """The anchors of a memory, extended with a step's own predictions.

    A predictor answering a group of targets must place each one after the
    ones before it in the group; this keeps the most recent heading of each
    level (like the ``recent`` memory) as it goes.  ``at(k)`` is the anchor of
    level k; ``branch()`` the anchors of levels 1..previous level.
    """

    def __init__(self, memory: Memory, infos: Sequence[HeadingInfo]) -> None:
        self.infos = infos
        self.by_level: dict[int, int]  # level -> heading index
        self.by_level, self.prev, self.prev_index, self.depth = latest_anchors(memory)

    @classmethod
    def of(cls, infos: Sequence[HeadingInfo], by_level: dict[int, int], prev: int, prev_index: int | None,
           depth: int) -> "LocalBranch":
        """A branch from anchors already gathered elsewhere (the learned model's feature view)."""
        br = cls.__new__(cls)
        br.infos, br.by_level, br.prev, br.prev_index, br.depth = infos, dict(by_level), prev, prev_index, depth
        return br

    def at(self, level: int) -> HeadingInfo | None:
        i = self.by_level.get(level)
        return self.infos[i] if i is not None else None

    def branch(self) -> list[tuple[int, HeadingInfo]]:
        return [(k, self.infos[self.by_level[k]]) for k in range(1, self.prev + 1) if k in self.by_level]

    def push(self, index: int, level: int) -> None:
        self.by_level[level] = index
        self.prev = level
        self.prev_index = index
        self.depth = max(self.depth, level)


class _Base:
    name = "base"
    source = "base"
    max_retries = 0

    def __init__(self) -> None:
        self._infos: list[HeadingInfo] = []

    def begin(self, context: PredictionContext) -> None:
        self._infos = describe(context.document, context.headings)
        self._styles = DocStyles(self._infos, context.document)

    def _target_index(self, memory: Memory, targets: Sequence[Heading], j: int) -> int:
        # the memory's previous heading is the one just before the first target
        base = memory.previous.index + 1 if memory.previous is not None else 0
        i = base + j
        if i >= len(self._infos):
            raise IndexError(f"target {j} is heading {i}, but begin() was given {len(self._infos)} headings")
        return i

    def predict(self, memory: Memory, targets: Sequence[Heading], *, attempt: int = 0,
                feedback: str | None = None) -> LevelPrediction:
        br = LocalBranch(memory, self._infos)
        levels, confs = [], []
        for j in range(len(targets)):
            i = self._target_index(memory, targets, j)
            lv, c = self.level(br, self._infos[i])
            levels.append(lv)
            confs.append(c)
            br.push(i, min(max(lv, 1), br.prev + 1))
        return LevelPrediction(tuple(levels), tuple(confs))

    def level(self, br: LocalBranch, t: HeadingInfo) -> tuple[int, float]:
        """Level and confidence of ``t`` after ``br``: 1 for a document's first heading, else :meth:`_one`'s."""
        if br.prev == 0:
            return 1, 1.0
        return self._one(br, t)

    def _one(self, br: LocalBranch, t: HeadingInfo) -> tuple[int, float]:  # pragma: no cover
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class FontSizePredictor(_Base):
    """CMM font-size tree: parent = nearest preceding heading with a strictly larger size."""

    name = "font-size"
    source = "font-size"

    def _one(self, br: LocalBranch, t: HeadingInfo) -> tuple[int, float]:
        if not t.has_style:
            return br.prev, 0.0
        for k, a in reversed(br.branch()):
            if a.has_style and a.size > t.size + SIZE_TOL:
                return k + 1, 1.0
        return 1, 1.0


class SizeRankPredictor(_Base):
    """One level per distinct heading style ranked by size (pymupdf4llm-like)."""

    name = "size-rank"
    source = "size-rank"

    def __init__(self, max_level: int = 6) -> None:
        super().__init__()
        self.max_level = int(max_level)

    def _one(self, br: LocalBranch, t: HeadingInfo) -> tuple[int, float]:
        if not t.has_style:
            return br.prev, 0.0
        rank = self._styles.size_rank.get(round(t.size * 2) / 2, 0)
        return min(rank + 1, self.max_level), 1.0


def numbered_level(branch: Sequence[tuple[int, HeadingInfo]], num: Numbering | None,
                   confidences: tuple[float, float, float], *, same_prefix: bool) -> tuple[int, float] | None:
    """The level heading numbers alone give a heading numbered ``num`` after ``branch`` (the
    anchors of levels 1..previous), with the confidence of the rule that gave it; None if
    the heading has no number or no rule applies.

    The rules, in order: ``num`` continues an anchor's number (that anchor's sibling); it
    opens an anchor's first sub-number (its child); a dotted number one deeper than an
    anchor's (its child; with ``same_prefix`` only when it extends that anchor's number).
    The deepest anchor wins within a rule.
    """
    if num is None:
        return None
    for k, a in reversed(branch):
        if continues(a.numbering, num):
            return k, confidences[0]
    for k, a in reversed(branch):
        if opens_child(a.numbering, num):
            return k + 1, confidences[1]
    if num.scheme in ("decimal", "section") and len(num.values) > 1:
        for k, a in reversed(branch):
            an = a.numbering
            if (an is not None and an.scheme == num.scheme and len(an.values) == len(num.values) - 1
                    and (not same_prefix or an.values == num.values[:-1])):
                return k + 1, confidences[2]
    return None


def numbering_signature(n: Numbering | None) -> tuple:
    """What makes two numbers the same kind: scheme, plus depth for dotted decimals."""
    if n is None:
        return ("none",)
    if n.scheme in ("decimal", "section"):
        return (n.scheme, len(n.values))
    return (n.scheme,)


class NumberingPredictor(_Base):
    """Levels from heading numbers alone."""

    name = "numbering"
    source = "numbering"

    def _one(self, br: LocalBranch, t: HeadingInfo) -> tuple[int, float]:
        branch = br.branch()
        num = t.numbering
        found = numbered_level(branch, num, (1.0, 1.0, 0.8), same_prefix=False)
        if found is not None:
            return found
        sig = numbering_signature(num)
        for k, a in reversed(branch):
            if numbering_signature(a.numbering) == sig:
                return k, 0.6
        if num is None:
            # an unnumbered heading after numbered ones: below them
            return br.prev + 1, 0.3
        return br.prev + 1, 0.5
