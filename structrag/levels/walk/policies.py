"""The level policies of the walk: named, ordered rules over one small state.

:class:`Walk` holds what the walk knows after each heading: the tree so far, the levels, sources and
confidences given, and the anchors the policies read (the floor under placed headings, the levels given
to each look, the branch of listed headings, the secondary contents run being placed).  Its rules:

* :data:`PLACEMENTS`: what places a heading before any prediction, the first that answers wins;
* :data:`PLACED_CORRECTIONS`: what a placed level then goes through, in order;
* :data:`PREDICTED_CORRECTIONS`: what a step's predicted levels go through, in order.

A placement carries a :class:`~.reasons.LevelReason`; what it means for the headings after it is read
from :data:`~.reasons.POLICIES`.  The driver (:mod:`.driver`) asks the predictor and runs the steps.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

from ...headings.contents import SECONDARY
from ...model import Document, Heading
from ..base import project_levels
from ..memory import TreeState
from .checkpoint import merge_usage
from .listed import relative_fixed
from .logic import BODY_SCHEMES, DocumentLogic
from .reasons import HELD_SOURCES, LOGIC_SOURCES, POLICIES, LevelReason, Placed

__all__ = ["Walk", "PLACEMENTS", "PLACED_CORRECTIONS", "PREDICTED_CORRECTIONS", "Rule"]

#: what answers a step's targets between placed headings: (first, end) -> levels, sources, confidences, usage
Ask = Callable[[int, int], tuple[list[int], list[str], list[float], dict]]


class Walk:
    """The state of one walk over a document's headings (reading order), and its policies."""

    def __init__(self, document: Document | None, headings: Sequence[Heading], fixed: Sequence[int | None],
                 logic: DocumentLogic | None, floor_after_fixed: bool, stats: dict[str, Any]) -> None:
        self.headings = tuple(headings)
        #: levels given before the walk (None: not given)
        self.fixed = list(fixed)
        # a secondary contents run's levels hold within the run: its first entry is predicted, the rest follow it
        self.in_run: list[int | None] = [
            int(h.level) if f is None and h.level is not None and h.level_source == SECONDARY else None
            for h, f in zip(self.headings, self.fixed)
        ]
        self.logic = logic
        self.floor_after_fixed = floor_after_fixed
        self.stats = stats
        self.tree = TreeState(self.headings)
        self.levels: list[int] = []
        self.sources: list[str] = []
        self.confidences: list[float] = []
        #: level of the last placed heading so far (0: none yet, or the body it floored is over)
        self.floor = 0
        #: whether the last floor came from the document's logic (it ends where the body goes on)
        self.floor_ends_at_body = False
        # the levels given to placed headings of each look: a predicted heading that looks like the placed
        # headings of the level it was given is an unlisted sibling of theirs (an entry the contents lost), not a
        # sub-section; one look may be given several levels (a contents that nests a title under its like)
        self.looks: list[tuple] = []
        self.look_levels: dict[tuple, set[int]] = {}
        if floor_after_fixed and (any(f is not None for f in self.fixed + self.in_run) or logic is not None):
            from ..style import describe, style_key

            # the look includes the numbering scheme: "（一）" set like "一、" is still one level down
            self.looks = [(style_key(x), x.numbering.scheme if x.numbering is not None else None)
                          for x in describe(document, self.headings)]
        # (contents level, level given) of the given headings on the current branch of the contents: a given
        # level is read relative to the listed headings present, so entries whose listed parent was not
        # located stay siblings of each other instead of stepping down one level each
        self.listed: list[tuple[int, int]] = []
        self.run: list[tuple[int, int]] = []  # the same for the secondary run being placed

    # -- resuming ------------------------------------------------------------------------------------

    def resume(self, levels: Sequence[int], sources: Sequence[str], confidences: Sequence[float]) -> None:
        """Take the levels of steps done before (a checkpoint) and recover the anchors they leave."""
        for lv in levels:
            self.tree.push(int(lv))
        self.levels.extend(int(x) for x in levels)
        self.sources.extend(sources)
        self.confidences.extend(float(c) for c in confidences)

    def recover_anchors(self) -> None:
        """The anchors of the levels taken so far (none on a fresh walk)."""
        done = range(len(self.levels))
        placed = [self.fixed[i] is not None or self.sources[i] in LOGIC_SOURCES for i in done]
        self.floor = next((self.levels[i] for i in reversed(done) if placed[i]), 0)
        if self.looks:
            for i in done:
                if placed[i]:
                    self.look_levels.setdefault(self.looks[i], set()).add(self.levels[i])
        for i in done:
            if self.fixed[i] is not None:
                relative_fixed(self.listed, int(self.fixed[i]), self.levels[i])  # type: ignore[arg-type]
        for i in done:
            if placed[i]:
                self.run.clear()
            elif self.in_run[i] is not None:
                relative_fixed(self.run, int(self.in_run[i]), self.levels[i])  # type: ignore[arg-type]

    def held(self) -> list[bool]:
        """Per heading so far: placed by a rule other than a given level (the document's logic, a secondary run)."""
        return [src in HELD_SOURCES for src in self.sources]

    # -- one step ------------------------------------------------------------------------------------

    def step(self, a: int, b: int, ask: Ask) -> dict:
        """Give levels to headings ``a`` to ``b - 1``: placed ones by the rules, the spans between them by
        ``ask``; returns the usage ``ask`` reported."""
        usage: dict = {}
        i = a
        while i < b:
            placed = self.placement(i)
            if placed is not None:
                self.place(i, placed)
                i += 1
                continue
            j = self._span_end(i, b)
            # the targets between placed headings: predicted with the memory that holds the placed ones
            lvs, srcs, cfs, use = ask(i, j)
            self.take_predicted(i, lvs, srcs, cfs)
            merge_usage(usage, use)
            i = j
        return usage

    def placement(self, i: int) -> Placed | None:
        """The first of :data:`PLACEMENTS` that places heading ``i``, or None (it is predicted)."""
        for rule in PLACEMENTS:
            placed = rule.apply(self, i)
            if placed is not None:
                return placed
        return None

    def place(self, i: int, placed: Placed) -> None:
        """Record heading ``i`` at the level a placement wants, corrected, with its policy's effects."""
        want, reason = placed
        policy = POLICIES[reason]
        levels = [want]
        for rule in PLACED_CORRECTIONS:
            levels = rule.apply(self, i, levels)
        lv = levels[0]
        if lv != want:
            self.stats["fixed_projected"] += 1
        if policy.continues_run:
            relative_fixed(self.run, int(self.in_run[i]), lv)  # type: ignore[arg-type]
        else:
            self.run.clear()  # the main contents or the document's logic speaks: a secondary run ends
        if policy.on_listed_branch:
            relative_fixed(self.listed, int(self.fixed[i]), lv)  # type: ignore[arg-type]
        self.tree.push(lv)
        self.floor = 0 if policy.ends_body else lv
        self.floor_ends_at_body = policy.from_logic
        if self.looks and policy.anchors_look:
            self.look_levels.setdefault(self.looks[i], set()).add(lv)
        self.levels.append(lv)
        if policy.counter is not None:
            self.stats[policy.counter] += 1
        h = self.headings[i]
        self.sources.append(policy.source or h.level_source or "fixed")
        self.confidences.append(1.0 if policy.source is not None or h.confidence is None else float(h.confidence))

    def take_predicted(self, i: int, levels: list[int], sources: list[str], confidences: list[float]) -> None:
        """Record predicted levels for headings ``i``, ``i + 1``, ... after :data:`PREDICTED_CORRECTIONS`."""
        for rule in PREDICTED_CORRECTIONS:
            levels = rule.apply(self, i, levels)
        for k, lv in enumerate(levels):
            self.tree.push(lv)
            c = self.in_run[i + k]
            if c is not None:
                # a secondary run's entry predicted (its first, or one shallower than the run so far)
                if not self.run or self.run[0][0] > c:
                    self.run.clear()
                relative_fixed(self.run, c, lv)
        self.levels.extend(levels)
        self.sources.extend(sources)
        self.confidences.extend(confidences)

    def _span_end(self, i: int, b: int) -> int:
        """End of the span of predicted headings from ``i``: the next heading a rule may place, or ``b``."""
        logic = self.logic
        j = i + 1
        while j < b and self.fixed[j] is None and self.in_run[j] is None and not (
                logic is not None and (logic.covers(j) or j - 1 in logic.leaves)):
            j += 1
        return j

    def after_leaf(self, i: int) -> bool:
        """Whether heading ``i`` comes right after a leaf: the contents page's title, a cover line, or for a
        listed heading (a contents entry) or the first note a financial statement; a statement's
        own row groups ("Cash Flows from Investing Activities") may nest under it."""
        logic = self.logic
        if logic is None:
            return False
        listed = self.fixed[i] is not None or self.in_run[i] is not None
        return i - 1 in logic.leaves or (i - 1 in logic.statements and (listed or logic.opens_notes(i)))


class Rule(NamedTuple):
    """A named policy of the walk."""

    name: str
    apply: Callable


# -- placements: what places a heading before any prediction -----------------------------------------


def _by_logic(w: Walk, i: int) -> Placed | None:
    # the document's logic places a heading from the levels given before it, so it is asked here
    if w.logic is not None and w.logic.covers(i):
        return w.logic.level(i, w.levels, w.fixed)
    return None


def _in_secondary_run(w: Walk, i: int) -> Placed | None:
    c = w.in_run[i]
    if c is not None and w.run and w.run[0][0] <= c:
        return Placed(relative_fixed(w.run, c), LevelReason.SECONDARY_RUN)
    return None


def _given(w: Walk, i: int) -> Placed | None:
    f = w.fixed[i]
    return None if f is None else Placed(relative_fixed(w.listed, int(f)), LevelReason.GIVEN)


#: what places a heading, asked in this order (the document's logic overrides even a contents level)
PLACEMENTS: tuple[Rule, ...] = (
    Rule("the document's logic", _by_logic),
    Rule("a secondary contents run after its first entry", _in_secondary_run),
    Rule("a level given before the walk, read against the listed headings present", _given),
)


# -- corrections of a step's levels -----------------------------------------------------------------


def _level_rule(w: Walk, i: int, levels: list[int]) -> list[int]:
    # 1 <= l_i <= l_{i-1} + 1: a placed level that would break it is projected
    return [min(max(levels[0], 1), w.tree.previous_level + 1)]


def _under_leaf(w: Walk, i: int, levels: list[int]) -> list[int]:
    prev = w.tree.previous_level
    if w.after_leaf(i) and levels and levels[0] > prev:
        # nothing nests under a leaf: the heading (and its step) moves up beside it
        return list(project_levels([min(levels[0], prev)] + list(levels[1:]), prev))
    return levels


def _floor_under_placed(w: Walk, i: int, levels: list[int]) -> list[int]:
    """A predicted heading after a placed one of level k goes below it, unless it was predicted at the level of
    placed headings that look the same (an unlisted sibling of theirs, which anchors what follows)."""
    if not (w.floor_after_fixed and w.floor):
        return levels
    raised, prev = [], w.tree.previous_level
    for k, lv in enumerate(levels):
        if w.floor_ends_at_body and w.looks[i + k][1] in BODY_SCHEMES:
            w.floor = 0  # the run is over: the body goes on
        if not w.floor:
            pass  # no floor any more
        elif lv in w.look_levels.get(w.looks[i + k], ()):
            w.floor = lv  # an unlisted sibling of listed sections: it anchors what follows
        else:
            lv = max(lv, min(w.floor + 1, prev + 1))
        raised.append(lv)
        prev = lv
    w.stats["raised_below_fixed"] += sum(1 for x, y in zip(levels, raised) if x != y)
    return raised


#: what a placed level goes through, in order
PLACED_CORRECTIONS: tuple[Rule, ...] = (
    Rule("the level rule", _level_rule),
    Rule("nothing nests under a leaf (the contents page's title, a cover line, a financial statement)", _under_leaf),
)

#: what a step's predicted levels go through, in order
PREDICTED_CORRECTIONS: tuple[Rule, ...] = (
    Rule("the floor under placed headings", _floor_under_placed),
    Rule("nothing nests under a leaf (the contents page's title, a cover line, a financial statement)", _under_leaf),
)
