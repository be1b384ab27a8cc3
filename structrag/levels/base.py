"""Contracts of the level-reconstruction stage.

A *driver* walks a document's headings in reading order.  At each step it
builds a :class:`Memory` from the levels predicted so far, hands it and the
step's *targets* (one heading, or the headings of the next k pages) to a
:class:`LevelPredictor`, checks the answer with :func:`check_levels`, asks
again (up to the predictor's ``max_retries``) when it is invalid, and finally
projects it onto the valid range with :func:`project_levels`.

Every predictor — the learned offline model, rules, baselines, the VLM/LLM
clients — implements the same protocol, so they are interchangeable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol, Sequence, runtime_checkable

from ..model import Document, Heading

__all__ = [
    "KnownHeading",
    "Memory",
    "PredictionContext",
    "LevelPrediction",
    "LevelPredictor",
    "check_levels",
    "project_levels",
    "parents_of",
]


@dataclass(frozen=True, slots=True)
class KnownHeading:
    """A heading already processed, with its predicted level.

    ``index`` is its position in the document's heading sequence; ``parent``
    the index of its parent heading (None: the virtual root).
    """

    index: int
    heading: Heading
    level: int
    parent: int | None


@dataclass(frozen=True, slots=True)
class Memory:
    """What a predictor may see of the processed part of the document.

    ``anchors`` are the nodes the memory strategy selected, in reading order:
    for ``recent`` the most recent heading of each level 1..depth (the
    rightmost branch); for ``previous-n`` the n headings just before the
    targets; for ``random`` one processed heading per level; for
    ``branches`` the rightmost branch then earlier branches up to a window.
    ``pages`` are the (0-based, sorted, unique) pages holding the anchors, and
    ``known`` every processed heading on those pages, in reading order.
    ``previous`` is the heading just before the first target whatever the
    strategy (it bounds the next level); ``depth`` the deepest level so far.
    """

    strategy: str
    depth: int
    anchors: tuple[KnownHeading, ...]
    pages: tuple[int, ...]
    known: tuple[KnownHeading, ...]
    previous: KnownHeading | None

    @property
    def previous_level(self) -> int:
        """Level of the heading before the targets (0 at the start of a document)."""
        return self.previous.level if self.previous is not None else 0

    def anchor_at(self, level: int) -> KnownHeading | None:
        """The most recent anchor of ``level`` (None if the memory holds none)."""
        for k in reversed(self.anchors):
            if k.level == level:
                return k
        return None


@dataclass(frozen=True, slots=True)
class PredictionContext:
    """Given to a predictor once per document, before the first step.

    ``headings`` are all headings that will be predicted, in reading order
    (predictors may compute document-wide statistics from their styles, never
    from their reference levels).  ``document`` is None only when levels are
    predicted for bare reference headings without a PDF.
    """

    document: Document | None
    headings: tuple[Heading, ...]


class LevelPrediction(NamedTuple):
    """A predictor's answer for one step: one level and confidence per target.

    ``source`` overrides the predictor's default ``level_source`` per target
    (None: use the predictor's ``source``); ``usage`` carries request
    accounting for model-backed predictors (tokens, images, ...).
    """

    levels: tuple[int, ...]
    confidences: tuple[float, ...]
    sources: tuple[str, ...] | None = None
    usage: dict | None = None


@runtime_checkable
class LevelPredictor(Protocol):
    """Predicts heading levels from the memory and the step's targets.

    ``name`` identifies the predictor (``learned``, ``rules``, ``font-size``,
    ``vlm``, ...); ``source`` is written to :attr:`Heading.level_source`;
    ``max_retries`` is how often the driver may ask again after an invalid
    answer (0 for deterministic predictors: asking again gives the same).
    """

    name: str
    source: str
    max_retries: int

    def begin(self, context: PredictionContext) -> None:
        """Called once per document before the first :meth:`predict`."""

    def predict(
        self,
        memory: Memory,
        targets: Sequence[Heading],
        *,
        attempt: int = 0,
        feedback: str | None = None,
    ) -> LevelPrediction:
        """Levels for ``targets``; ``attempt`` > 0 and ``feedback`` on a retry."""


def check_levels(levels: Sequence[int], previous_level: int, n_targets: int | None = None) -> str | None:
    """Why ``levels`` are invalid after a heading of ``previous_level``; None if valid.

    Valid means: one level per target, each ``1 <= l_i <= l_{i-1} + 1``, and
    the first heading of a document (``previous_level == 0``) at level 1.
    """
    if n_targets is not None and len(levels) != n_targets:
        return f"expected {n_targets} levels, got {len(levels)}"
    prev = previous_level
    for i, lv in enumerate(levels):
        if not isinstance(lv, int) or isinstance(lv, bool):
            return f"level {i} is not an integer: {lv!r}"
        if lv < 1:
            return f"level {i} is {lv}, below 1"
        if lv > prev + 1:
            return f"level {i} is {lv}, more than one below the previous level {prev}"
        prev = lv
    return None


def project_levels(levels: Sequence[int], previous_level: int) -> tuple[int, ...]:
    """Clamp each level into ``[1, l_{i-1} + 1]``, left to right."""
    out = []
    prev = previous_level
    for lv in levels:
        try:
            v = int(lv)
        except (TypeError, ValueError):
            v = prev + 1 if prev == 0 else prev  # unusable answer: stay at the previous level
        v = min(max(v, 1), prev + 1)
        out.append(v)
        prev = v
    return tuple(out)


def parents_of(levels: Sequence[int]) -> list[int | None]:
    """Index of each heading's parent in a tree given by levels in reading order (None: a root)."""
    stack: list[int] = []
    out: list[int | None] = []
    for i, lv in enumerate(levels):
        while stack and levels[stack[-1]] >= lv:
            stack.pop()
        out.append(stack[-1] if stack else None)
        stack.append(i)
    return out
