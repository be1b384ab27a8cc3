"""Memory strategies: which processed headings a predictor sees at each step.

The driver keeps a :class:`TreeState` (levels, parents, the rightmost branch,
per-level and per-page indexes), updated in O(1) amortised per heading.  A
:class:`MemoryStrategy` turns that state into a :class:`~.base.Memory` for the
next step; every strategy touches a bounded number of nodes (the depth, n, or
the window), so a whole document costs time linear in its length — history is
never rescanned.

Strategies:

``recent`` (default)
    the most recent heading of each level 1..depth; for levels up to the
    previous heading's level these are the rightmost branch (HELD's insertion
    slots), deeper ones are the last heading seen at that level.
``previous-n``
    the n headings just before the targets (n=3 in the paper).
``random``
    one processed heading per level 1..depth drawn uniformly (seeded; the draw
    depends on the seed and the step only, so a resumed run draws the same).
``branches``
    DOSA: the rightmost branch, then the second rightmost, and so on until a
    window of w headings (w=8) is full.

The memory's pages are the pages holding the anchors; ``known`` lists every
processed heading on them, as the paper's page images would show them.
"""

from __future__ import annotations

import random
from typing import Sequence

from ..errors import ConfigError
from ..model import Heading
from ..options import MEMORY_STRATEGIES
from .base import KnownHeading, Memory

__all__ = [
    "TreeState",
    "MemoryStrategy",
    "RecentMemory",
    "PreviousNMemory",
    "RandomMemory",
    "BranchesMemory",
    "make_memory",
    "MEMORY_STRATEGIES",
]



class TreeState:
    """The growing tree: what the driver knows after each processed heading.

    ``branch[k-1]`` is the index of the rightmost-branch heading at level k
    (the most recent heading of level k whose subtree is still open);
    ``last_at[k-1]`` the most recent heading of level k, open or not.
    """

    __slots__ = ("headings", "levels", "parents", "branch", "last_at", "by_level", "by_page", "_known")

    def __init__(self, headings: Sequence[Heading]) -> None:
        self.headings = tuple(headings)
        self.levels: list[int] = []
        self.parents: list[int | None] = []
        self.branch: list[int] = []
        self.last_at: list[int] = []
        self.by_level: list[list[int]] = []
        self.by_page: dict[int, list[int]] = {}
        self._known: list[KnownHeading] = []

    def __len__(self) -> int:
        return len(self.levels)

    @property
    def depth(self) -> int:
        return len(self.last_at)

    @property
    def previous_level(self) -> int:
        return self.levels[-1] if self.levels else 0

    def push(self, level: int) -> KnownHeading:
        """Record the next heading's (valid) level; returns it as a KnownHeading."""
        i = len(self.levels)
        prev = self.previous_level
        if not 1 <= level <= prev + 1:
            raise ValueError(f"heading {i}: level {level} is not in 1..{prev + 1}")
        del self.branch[level - 1 :]
        parent = self.branch[-1] if self.branch else None
        self.branch.append(i)
        if level > len(self.last_at):
            self.last_at.append(i)
            self.by_level.append([i])
        else:
            self.last_at[level - 1] = i
            self.by_level[level - 1].append(i)
        self.levels.append(level)
        self.parents.append(parent)
        h = self.headings[i]
        self.by_page.setdefault(h.page, []).append(i)
        k = KnownHeading(index=i, heading=h, level=level, parent=parent)
        self._known.append(k)
        return k

    def known(self, i: int) -> KnownHeading:
        return self._known[i]

    def memory(self, strategy: str, anchors: Sequence[int]) -> Memory:
        """A Memory over the given anchor indices (any order, duplicates allowed)."""
        idx = sorted(set(anchors))
        pages = sorted({self.headings[i].page for i in idx})
        known: list[KnownHeading] = []
        for p in pages:
            known.extend(self._known[j] for j in self.by_page.get(p, ()))
        known.sort(key=lambda k: k.index)
        return Memory(
            strategy=strategy,
            depth=self.depth,
            anchors=tuple(self._known[i] for i in idx),
            pages=tuple(pages),
            known=tuple(known),
            previous=self._known[-1] if self._known else None,
        )


class MemoryStrategy:
    """Base class: ``select(state, step)`` returns the anchor indices."""

    name = "base"

    def select(self, state: TreeState, step: int) -> list[int]:  # pragma: no cover - interface
        raise NotImplementedError

    def build(self, state: TreeState, step: int) -> Memory:
        return state.memory(self.name, self.select(state, step))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class RecentMemory(MemoryStrategy):
    """The most recent heading of each level 1..depth (the paper's default)."""

    name = "recent"

    def select(self, state: TreeState, step: int) -> list[int]:
        # the rightmost branch *is* last_at[0:prev]; deeper levels keep their last heading
        return list(state.last_at)


class PreviousNMemory(MemoryStrategy):
    """The ``n`` headings just before the targets."""

    name = "previous-n"

    def __init__(self, n: int = 3) -> None:
        if int(n) < 1:
            raise ConfigError(f"previous-n memory needs n >= 1, got {n}")
        self.n = int(n)

    def select(self, state: TreeState, step: int) -> list[int]:
        m = len(state)
        return list(range(max(0, m - self.n), m))

    def __repr__(self) -> str:
        return f"PreviousNMemory(n={self.n})"


class RandomMemory(MemoryStrategy):
    """One processed heading per level, drawn uniformly with a per-step seed."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = int(seed)

    def select(self, state: TreeState, step: int) -> list[int]:
        rng = random.Random(self.seed * 1_000_003 + step)
        return [rng.choice(lst) for lst in state.by_level]

    def __repr__(self) -> str:
        return f"RandomMemory(seed={self.seed})"


class BranchesMemory(MemoryStrategy):
    """DOSA: the rightmost branch, then earlier branches, up to ``window`` headings.

    Walking the processed headings backwards from the newest, each heading not
    yet taken opens the next branch: it and its ancestors not yet taken join
    the window.  The rightmost branch is always kept whole (the insertion
    slots), so the window is ``max(window, depth of the branch)``.
    """

    name = "branches"

    def __init__(self, window: int = 8) -> None:
        if int(window) < 1:
            raise ConfigError(f"branches memory needs window >= 1, got {window}")
        self.window = int(window)

    def select(self, state: TreeState, step: int) -> list[int]:
        taken: list[int] = list(state.branch)
        seen = set(taken)
        i = len(state) - 1
        # each backward step either adds a node or skips one already taken; the
        # skips are bounded by the window plus the depth, so the cost is bounded too
        skipped = 0
        while i >= 0 and len(taken) < self.window and skipped <= self.window + len(state.last_at) + 8:
            if i in seen:
                i -= 1
                skipped += 1
                continue
            chain = []
            j: int | None = i
            while j is not None and j not in seen:
                chain.append(j)
                j = state.parents[j]
            # the branch's deepest part (nearest the leaf, the most recent) goes in first
            for c in chain:
                if len(taken) >= self.window:
                    break
                taken.append(c)
                seen.add(c)
            i -= 1
        return taken

    def __repr__(self) -> str:
        return f"BranchesMemory(window={self.window})"


def make_memory(memory: str | MemoryStrategy, *, seed: int = 0, n: int = 3, window: int = 8) -> MemoryStrategy:
    """A strategy from its name (``recent``, ``previous-n``, ``random``, ``branches``) or as given.

    ``previous-N`` with a number (``previous-5``) sets n.
    """
    if isinstance(memory, MemoryStrategy):
        return memory
    if not isinstance(memory, str):
        raise ConfigError(f"memory must be a strategy name or a MemoryStrategy, got {type(memory).__name__}")
    name = memory.strip().lower()
    if name == "recent":
        return RecentMemory()
    if name == "previous-n":
        return PreviousNMemory(n)
    if name.startswith("previous-") and name[9:].isdigit():
        return PreviousNMemory(int(name[9:]))
    if name == "random":
        return RandomMemory(seed)
    if name == "branches":
        return BranchesMemory(window)
    raise ConfigError(
        f"unknown memory strategy {memory!r}",
        hint="choose one of " + ", ".join(MEMORY_STRATEGIES),
    )
