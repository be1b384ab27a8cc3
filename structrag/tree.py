"""The heading tree: headings with levels, their parents, children and sections.

The tree follows from the levels by one deterministic rule: a
heading of level k > 1 becomes a child of the most recent preceding heading of
level k - 1; a level-1 heading hangs from the virtual root.  An invalid level
sequence (a jump of more than one level) is still turned into a tree: the
heading hangs from the most recent preceding heading of a smaller level, which
is what a reader of the Markdown would see.

Each node governs a *section*: the body blocks from its own heading block up to
the next heading of the same or a shallower level.  The root governs the whole
document; its own content is what comes before the first heading.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, replace
from typing import Any, Iterator, Mapping, Sequence

from .errors import TreeError
from .model import SCHEMA_VERSION, Heading

__all__ = ["TreeNode", "HeadingTree", "ROOT"]

#: Index of the virtual root in :attr:`HeadingTree.nodes` lookups.
ROOT = -1


@dataclass(frozen=True, slots=True)
class TreeNode:
    """One heading in the tree.

    ``index`` is the heading's position in reading order (``ROOT`` for the
    root).  ``span`` is the half-open range of body-block indices the section
    covers, sub-sections included; ``content`` is the part before the first
    sub-section (or the next heading), without the heading's own blocks.
    """

    index: int
    id: str
    heading: Heading | None
    level: int
    parent: int | None
    children: tuple[int, ...]
    span: tuple[int, int]
    content: tuple[int, int]

    @property
    def text(self) -> str:
        return self.heading.text if self.heading is not None else ""

    @property
    def page(self) -> int | None:
        """The heading's page, **0-based** (PyMuPDF's ``doc[page]``), as everywhere in the Python API;
        what is printed for people (:meth:`HeadingTree.to_text`, ``structrag toc``) is 1-based.
        None for the root."""
        return self.heading.page if self.heading is not None else None


def _node_id(index: int) -> str:
    return "root" if index == ROOT else f"h{index:05d}"


class HeadingTree:
    """An immutable heading tree over one document's body blocks.

    Build it with :meth:`from_headings` (levels read from each heading) or
    :meth:`from_levels` (levels given separately).
    """

    __slots__ = ("_headings", "_nodes", "_root", "_starts", "n_blocks", "document")

    def __init__(self, headings: Sequence[Heading], n_blocks: int, document: str = "") -> None:
        for i, h in enumerate(headings):
            if h.level is None or h.level < 1:
                raise TreeError(f"heading {i} ({h.text!r}) has no valid level: {h.level!r}")
        self._headings: tuple[Heading, ...] = tuple(headings)
        self.n_blocks = int(n_blocks)
        self.document = document
        self._nodes, self._root = self._build()
        self._starts = [h.block for h in self._headings]

    # --- construction ---------------------------------------------------
    @classmethod
    def from_headings(cls, headings: Sequence[Heading], n_blocks: int, document: str = "") -> "HeadingTree":
        return cls(headings, n_blocks, document)

    @classmethod
    def from_levels(
        cls,
        headings: Sequence[Heading],
        levels: Sequence[int],
        n_blocks: int,
        document: str = "",
    ) -> "HeadingTree":
        if len(headings) != len(levels):
            raise TreeError(f"{len(headings)} headings but {len(levels)} levels")
        hs = [h if h.level == lv else replace(h, level=int(lv)) for h, lv in zip(headings, levels)]
        return cls(hs, n_blocks, document)

    def _build(self) -> tuple[tuple[TreeNode, ...], TreeNode]:
        hs = self._headings
        n = len(hs)
        parents: list[int] = []
        # stack[k] = index of the most recent heading of level k+1 still open
        stack: list[int] = []
        for i, h in enumerate(hs):
            lv = int(h.level)  # type: ignore[arg-type]
            while stack and hs[stack[-1]].level >= lv:  # type: ignore[operator]
                stack.pop()
            parents.append(stack[-1] if stack else ROOT)
            stack.append(i)
        children: dict[int, list[int]] = {ROOT: []}
        for i in range(n):
            children.setdefault(i, [])
            children[parents[i]].append(i)
        # span end: the next heading whose level is <= own level
        ends = [self.n_blocks] * n
        stack = []
        for i, h in enumerate(hs):
            while stack and hs[stack[-1]].level >= h.level:  # type: ignore[operator]
                ends[stack.pop()] = h.block
            stack.append(i)
        nodes = []
        for i, h in enumerate(hs):
            nxt = hs[i + 1].block if i + 1 < n else self.n_blocks
            start = min(h.block, ends[i])
            c0 = min(max(h.block_end, start), ends[i])
            c1 = max(c0, min(nxt, ends[i]))
            nodes.append(
                TreeNode(
                    index=i,
                    id=_node_id(i),
                    heading=h,
                    level=int(h.level),  # type: ignore[arg-type]
                    parent=parents[i],
                    children=tuple(children[i]),
                    span=(start, ends[i]),
                    content=(c0, c1),
                )
            )
        first = hs[0].block if n else self.n_blocks
        root = TreeNode(
            index=ROOT,
            id=_node_id(ROOT),
            heading=None,
            level=0,
            parent=None,
            children=tuple(children[ROOT]),
            span=(0, self.n_blocks),
            content=(0, first),
        )
        return tuple(nodes), root

    # --- access -----------------------------------------------------------
    @property
    def headings(self) -> tuple[Heading, ...]:
        return self._headings

    @property
    def nodes(self) -> tuple[TreeNode, ...]:
        """The heading nodes in reading order (the root is :attr:`root`)."""
        return self._nodes

    @property
    def root(self) -> TreeNode:
        return self._root

    def __len__(self) -> int:
        return len(self._nodes)

    def __iter__(self) -> Iterator[TreeNode]:
        return iter(self._nodes)

    def node(self, index: int) -> TreeNode:
        return self._root if index == ROOT else self._nodes[index]

    @property
    def levels(self) -> tuple[int, ...]:
        return tuple(n.level for n in self._nodes)

    @property
    def depth(self) -> int:
        return max((n.level for n in self._nodes), default=0)

    def parent(self, index: int) -> TreeNode | None:
        p = self.node(index).parent
        return None if p is None else self.node(p)

    def children(self, index: int = ROOT) -> tuple[TreeNode, ...]:
        return tuple(self._nodes[c] for c in self.node(index).children)

    def ancestors(self, index: int) -> tuple[TreeNode, ...]:
        """Heading ancestors from the top level down, without the node itself."""
        out = []
        p = self.node(index).parent
        while p is not None and p != ROOT:
            out.append(self._nodes[p])
            p = self._nodes[p].parent
        return tuple(reversed(out))

    def path(self, index: int) -> tuple[str, ...]:
        """Heading texts from the top level down to the node itself (empty for the root)."""
        if index == ROOT:
            return ()
        return tuple(n.text for n in self.ancestors(index)) + (self._nodes[index].text,)

    def sibling_position(self, index: int) -> tuple[int, int]:
        """(position among its parent's children, number of those children)."""
        if index == ROOT:
            return (0, 1)
        sibs = self.node(self._nodes[index].parent).children  # type: ignore[arg-type]
        return sibs.index(index), len(sibs)

    def section_of_block(self, block: int) -> int:
        """The deepest node whose section holds ``block`` (``ROOT`` before the first heading)."""
        i = bisect.bisect_right(self._starts, block) - 1
        while i >= 0:
            s, e = self._nodes[i].span
            if s <= block < e:
                return i
            p = self._nodes[i].parent
            i = ROOT if p is None else p
            if i == ROOT:
                break
        return ROOT

    def walk(self) -> Iterator[tuple[TreeNode, int]]:
        """Pre-order walk of the heading nodes with their depth in the tree (1-based)."""
        def rec(idx: int, depth: int) -> Iterator[tuple[TreeNode, int]]:
            for c in self.node(idx).children:
                yield self._nodes[c], depth
                yield from rec(c, depth + 1)

        # iterative would avoid deep recursion; trees are at most ~10 deep
        yield from rec(ROOT, 1)

    # --- export -------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "document": self.document,
            "n_blocks": self.n_blocks,
            "headings": [h.to_dict() for h in self._headings],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "HeadingTree":
        return cls(
            [Heading.from_dict(h) for h in d["headings"]],
            int(d["n_blocks"]),
            d.get("document", ""),
        )

    def to_markdown(self) -> str:
        """One line per heading, ``#`` repeated by tree depth (may exceed six)."""
        return "".join(f"{'#' * depth} {node.text}\n" for node, depth in self.walk())

    def to_text(self, *, pages: bool = True, indent: str = "  ") -> str:
        """An indented outline; ``pages`` appends the page number, **1-based** as printed for people
        (:attr:`TreeNode.page` is 0-based)."""
        lines = []
        for node, depth in self.walk():
            suffix = f"  (p. {node.page + 1})" if pages and node.page is not None else ""
            lines.append(f"{indent * (depth - 1)}{node.text}{suffix}")
        return "\n".join(lines) + ("\n" if lines else "")

    def __repr__(self) -> str:
        return f"HeadingTree(document={self.document!r}, headings={len(self._nodes)}, depth={self.depth})"
