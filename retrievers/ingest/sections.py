"""The sections of a document, from its chunks alone: the nodes a chunk sits under, and how a path reads.

A *node* is a section path prefix within a document:
``("Item 8", "Notes", "Note 5")`` has the nodes ``("Item 8",)``,
``("Item 8", "Notes")`` and the full path.  Nodes come from the chunks alone,
in order of first appearance, so the same chunks always give the same nodes
(dense node vectors stored per document line up with them).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

__all__ = ["DocNodes", "doc_nodes", "section_path_text", "PATH_SEPARATOR"]

#: How a section path is written for embedding (the separator reads as a path).
PATH_SEPARATOR = " > "


def section_path_text(path: Sequence[str]) -> str:
    """A section path as one text (what a dense index embeds for it): ``Item 8 > Notes > Note 5``."""
    return PATH_SEPARATOR.join(path)


class DocNodes(NamedTuple):
    paths: list[tuple[str, ...]]
    chunk_leaf: list[int]  # -1: the chunk is before any heading
    chunk_anc: list[list[int]]  # node rows from the top level down to the leaf
    node_parent: list[int]
    node_sib_index: list[int]
    node_sib_count: list[int]


def doc_nodes(section_paths: Sequence[Sequence[str]]) -> DocNodes:
    """Section nodes of one document from its chunks' section paths (see module doc)."""
    index: dict[tuple[str, ...], int] = {}
    paths: list[tuple[str, ...]] = []
    parent: list[int] = []
    leaf: list[int] = []
    anc: list[list[int]] = []
    for sp in section_paths:
        sp = tuple(sp)
        chain = []
        for i in range(1, len(sp) + 1):
            key = sp[:i]
            j = index.get(key)
            if j is None:
                j = index[key] = len(paths)
                paths.append(key)
                parent.append(chain[-1] if chain else -1)
            chain.append(j)
        anc.append(chain)
        leaf.append(chain[-1] if chain else -1)
    children: dict[int, list[int]] = {}
    for j, p in enumerate(parent):
        children.setdefault(p, []).append(j)
    sib_i = [0] * len(paths)
    sib_n = [1] * len(paths)
    for kids in children.values():
        for r, j in enumerate(kids):
            sib_i[j], sib_n[j] = r, len(kids)
    return DocNodes(paths, leaf, anc, parent, sib_i, sib_n)
