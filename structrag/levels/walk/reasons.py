"""Why a heading's level is placed rather than predicted: the reason codes, their words, their policies.

A rule of :mod:`.policies` places a heading before any prediction: the document's logic
(:mod:`.logic`), a secondary contents run, or a level given before the walk (by default the printed
contents').  Each placement carries a :class:`LevelReason`.  What a placement means for the headings
after it is read from :data:`POLICIES`; the words of :data:`REASON_TEXT` only explain a code to a
reader, nothing branches on them.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

from ...headings.contents import SECONDARY

__all__ = ["LevelReason", "REASON_TEXT", "Placed", "Policy", "POLICIES", "LOGIC", "HELD_SOURCES", "LOGIC_SOURCES"]

#: the ``level_source`` of a level the document's logic placed
LOGIC = "logic"


class LevelReason(Enum):
    """Why a heading's level was placed (see :data:`REASON_TEXT` for the words)."""

    GIVEN = "given"
    FRONT_MATTER = "front-matter"
    SECONDARY_RUN = "secondary-run"
    EXHIBIT = "exhibit"
    END_MATTER = "end-matter"
    BESIDE_STATEMENTS = "beside-statements"
    INTRODUCES_LISTED_RUN = "introduces-listed-run"
    UNDER_INTRODUCER = "under-introducer"

    @property
    def text(self) -> str:
        """The reason in words."""
        return REASON_TEXT[self]


#: each reason in words, for a reader
REASON_TEXT: dict[LevelReason, str] = {
    LevelReason.GIVEN: "a level given before the walk",
    LevelReason.FRONT_MATTER: "front matter before the body",
    LevelReason.SECONDARY_RUN: "within a secondary contents run",
    LevelReason.EXHIBIT: "exhibit",
    LevelReason.END_MATTER: "end matter",
    LevelReason.BESIDE_STATEMENTS: "beside the other statements",
    LevelReason.INTRODUCES_LISTED_RUN: "introduces a listed run",
    LevelReason.UNDER_INTRODUCER: "run under its introducer",
}


class Placed(NamedTuple):
    """A placement: the level a rule wants for a heading, and why."""

    level: int
    reason: LevelReason


class Policy(NamedTuple):
    """What a placement of one reason means for the walk."""

    #: the ``level_source`` written (None: the heading's own, ``"fixed"`` when it has none)
    source: str | None
    #: the stats counter it adds to, if any
    counter: str | None
    #: placed by the document's logic: it floors what follows only inside its run (a part or an item after
    #: the last note is the body going on, not a note's sub-section)
    from_logic: bool
    #: outside the body (its end matter, its front matter): nothing placed before it floors what follows
    ends_body: bool
    #: its look tells the level of predicted headings that look the same (signatures head nothing, and a
    #: statement's title is set like the notes' sub-headings in many filings: their look says nothing)
    anchors_look: bool
    #: a secondary contents run goes on through it (any other placement ends the run)
    continues_run: bool
    #: it is recorded on the branch of listed headings that later given levels are read against
    on_listed_branch: bool


_BY_LOGIC = dict(source=LOGIC, counter="logic", from_logic=True, continues_run=False, on_listed_branch=False)

#: the policy of each reason
POLICIES: dict[LevelReason, Policy] = {
    LevelReason.GIVEN: Policy(source=None, counter=None, from_logic=False, ends_body=False, anchors_look=True,
                              continues_run=False, on_listed_branch=True),
    LevelReason.SECONDARY_RUN: Policy(source=SECONDARY, counter="secondary_placed", from_logic=False,
                                      ends_body=False, anchors_look=True, continues_run=True,
                                      on_listed_branch=False),
    # front matter heads its own sub-sections (the predictor nests them), never the body's first section; its
    # look says nothing of the body's ("Table of Contents" set like a filing's exhibits' titles)
    LevelReason.FRONT_MATTER: Policy(ends_body=True, anchors_look=False, **_BY_LOGIC),
    # an exhibit heads the document filed under it, its own contents included: it floors what follows
    LevelReason.EXHIBIT: Policy(ends_body=False, anchors_look=True, **_BY_LOGIC),
    LevelReason.END_MATTER: Policy(ends_body=True, anchors_look=False, **_BY_LOGIC),
    LevelReason.BESIDE_STATEMENTS: Policy(ends_body=False, anchors_look=False, **_BY_LOGIC),
    LevelReason.INTRODUCES_LISTED_RUN: Policy(ends_body=False, anchors_look=True, **_BY_LOGIC),
    LevelReason.UNDER_INTRODUCER: Policy(ends_body=False, anchors_look=True, **_BY_LOGIC),
}

#: ``level_source`` values a placement writes: a checkpoint records sources, not reasons, so a resumed
#: walk reads its placements back from these
HELD_SOURCES = frozenset(p.source for p in POLICIES.values() if p.source is not None)
#: ``level_source`` values of the document's logic's placements
LOGIC_SOURCES = frozenset(p.source for p in POLICIES.values() if p.from_logic)
