"""Sections: a heading plus the body blocks it governs.

:func:`sections` partitions a document's body blocks among the sections of its heading tree:
each section owns its heading blocks and its own content (the blocks before its first
sub-section); the root owns the preamble before the first heading.  Every body block is owned by
exactly one section, even for trees built from headings that overlap or run out of reading order
(a block no section claims goes to the section before it, so no text is ever dropped).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError
from ..model import Block, Document
from ..tree import ROOT, HeadingTree, TreeNode

__all__ = ["Section", "sections"]


@dataclass(frozen=True, slots=True)
class Section:
    """A heading and the blocks it owns.

    ``id`` is the tree node's id (``"root"`` for the preamble).  Block ranges
    are half-open index ranges into ``document.blocks``: ``heading_blocks``
    print the heading (empty for an outline heading not found on its page),
    ``content_blocks`` follow it up to the first sub-section, and
    ``span_blocks`` covers the section with all its sub-sections.
    ``start``/``end`` are the character offsets of the own text (heading and
    content), ``span_start``/``span_end`` those of the whole span, into
    ``document.text``.  ``page_start``/``page_end`` are the 0-based pages of
    the span (the heading's page when the span is empty; -1 for an empty
    root).
    """

    id: str
    index: int
    parent_id: str | None
    children_ids: tuple[str, ...]
    path: tuple[str, ...]
    levels: tuple[int, ...]
    heading_blocks: tuple[int, int]
    content_blocks: tuple[int, int]
    span_blocks: tuple[int, int]
    start: int
    end: int
    span_start: int
    span_end: int
    page_start: int
    page_end: int

    @property
    def title(self) -> str:
        return self.path[-1] if self.path else ""

    @property
    def level(self) -> int:
        return self.levels[-1] if self.levels else 0

    @property
    def own_blocks(self) -> tuple[int, int]:
        return (self.heading_blocks[0], self.content_blocks[1])

    @property
    def has_content(self) -> bool:
        return self.content_blocks[1] > self.content_blocks[0]


def _char_range(document: Document, a: int, b: int) -> tuple[int, int]:
    blocks = document.blocks
    if a < b:
        return blocks[a].start, blocks[b - 1].end
    pos = blocks[a].start if a < len(blocks) else len(document.text)
    return pos, pos


def _check_inputs(document: Document, tree: HeadingTree) -> None:
    if not isinstance(document, Document):
        raise ConfigError(f"document must be a structrag Document, not {type(document).__name__}")
    if not isinstance(tree, HeadingTree):
        raise ConfigError(f"tree must be a structrag HeadingTree, not {type(tree).__name__}")
    if tree.n_blocks != len(document.blocks):
        raise ConfigError(
            f"the heading tree covers {tree.n_blocks} blocks but the document has {len(document.blocks)}",
            path=document.path,
            hint="build the tree with HeadingTree.from_headings(headings, len(document.blocks)) "
            "from headings of this very document",
        )


def sections(document: Document, tree: HeadingTree) -> tuple[Section, ...]:
    """The sections of ``document`` under ``tree``, root first, then in reading order.

    The own block ranges (``heading_blocks`` + ``content_blocks``) of all
    sections partition ``range(len(document.blocks))``.
    """
    _check_inputs(document, tree)
    n = len(document.blocks)
    nodes: list[TreeNode] = [tree.root, *tree.nodes]
    own: list[list[int]] = []  # [h0, c0, c1] per node, in the order of `nodes`
    cursor = 0
    for node in nodes:
        if node.index == ROOT:
            h0, c0, c1 = 0, 0, min(node.content[1], n)
        else:
            h0 = max(node.span[0], cursor)
            c0 = max(node.content[0], h0)
            c1 = max(node.content[1], c0)
        if h0 > cursor and own:
            # blocks that no section claims (headings out of reading order) stay
            # with the section they follow in the text
            own[-1][2] = h0
        own.append([h0, c0, c1])
        cursor = max(cursor, c1)
    if cursor < n:
        own[-1][2] = n

    # spans from the partition, bottom-up, so they agree with the own ranges
    span_end = [o[2] for o in own]
    pos = {node.index: k for k, node in enumerate(nodes)}
    for k in range(len(nodes) - 1, 0, -1):
        parent = nodes[k].parent
        pk = pos[ROOT if parent is None else parent]
        span_end[pk] = max(span_end[pk], span_end[k])
    span_end[0] = n

    out: list[Section] = []
    blocks = document.blocks
    for k, node in enumerate(nodes):
        h0, c0, c1 = own[k]
        s0, s1 = h0, span_end[k]
        start, end = _char_range(document, h0, c1)
        span_start, span_end_c = _char_range(document, s0, s1)
        if s0 < s1:
            page_start, page_end = blocks[s0].page, blocks[s1 - 1].page
        elif node.heading is not None:
            page_start = page_end = node.heading.page
        else:
            page_start = page_end = -1
        if node.index == ROOT:
            path: tuple[str, ...] = ()
            levels: tuple[int, ...] = ()
            parent_id = None
        else:
            path = tree.path(node.index)
            levels = tuple(a.level for a in tree.ancestors(node.index)) + (node.level,)
            parent_id = tree.node(node.parent if node.parent is not None else ROOT).id
        out.append(
            Section(
                id=node.id,
                index=node.index,
                parent_id=parent_id,
                children_ids=tuple(tree.node(c).id for c in node.children),
                path=path,
                levels=levels,
                heading_blocks=(h0, c0),
                content_blocks=(c0, c1),
                span_blocks=(s0, s1),
                start=start,
                end=end,
                span_start=span_start,
                span_end=span_end_c,
                page_start=page_start,
                page_end=page_end,
            )
        )
    return tuple(out)

