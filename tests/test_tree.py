"""HeadingTree: the parent rule, sections, exports."""

from __future__ import annotations

import json

import pytest

from structrag import Heading, HeadingTree
from structrag.tree import ROOT


def H(text: str, block: int, level: int | None = None, page: int = 0) -> Heading:
    return Heading(text=text, page=page, bbox=(0, 0, 1, 1), block=block, block_end=block + 1, level=level)


def test_parent_rule_and_sections():
    hs = [H("A", 0, 1), H("A.1", 2, 2), H("A.1.a", 4, 3), H("A.2", 6, 2), H("B", 8, 1)]
    t = HeadingTree.from_headings(hs, n_blocks=10, document="d.pdf")
    assert [n.parent for n in t] == [ROOT, 0, 1, 0, ROOT]
    assert [c.text for c in t.children()] == ["A", "B"]
    assert [c.text for c in t.children(0)] == ["A.1", "A.2"]
    assert t.path(2) == ("A", "A.1", "A.1.a")
    assert [n.text for n in t.ancestors(2)] == ["A", "A.1"]
    assert t.node(0).span == (0, 8) and t.node(1).span == (2, 6) and t.node(2).span == (4, 6)
    assert t.node(4).span == (8, 10)
    # own content: after the heading block, up to the next heading
    assert t.node(0).content == (1, 2) and t.node(2).content == (5, 6)
    assert t.root.content == (0, 0) and t.root.span == (0, 10)
    assert t.sibling_position(3) == (1, 2) and t.sibling_position(4) == (1, 2)
    assert t.depth == 3 and t.levels == (1, 2, 3, 2, 1)
    assert t.section_of_block(5) == 2 and t.section_of_block(7) == 3 and t.section_of_block(9) == 4


def test_preamble_belongs_to_root():
    t = HeadingTree.from_headings([H("A", 3, 1)], n_blocks=6)
    assert t.root.content == (0, 3)
    assert t.section_of_block(1) == ROOT and t.section_of_block(4) == 0


def test_no_headings_is_one_section():
    t = HeadingTree.from_headings([], n_blocks=7)
    assert len(t) == 0 and t.root.span == (0, 7) and t.root.content == (0, 7)
    assert t.to_markdown() == "" and t.to_text() == ""
    assert t.section_of_block(3) == ROOT


def test_level_jump_hangs_from_nearest_shallower():
    # an invalid sequence (1 -> 3) still makes a tree: the reader's view
    t = HeadingTree.from_headings([H("A", 0, 1), H("deep", 1, 3), H("B", 2, 2)], n_blocks=3)
    assert [n.parent for n in t] == [ROOT, 0, 0]
    assert t.to_markdown() == "# A\n## deep\n## B\n"


def test_from_levels_and_validation():
    hs = [H("A", 0), H("B", 1)]
    t = HeadingTree.from_levels(hs, [1, 2], n_blocks=2)
    assert t.levels == (1, 2)
    with pytest.raises(ValueError, match="levels"):
        HeadingTree.from_levels(hs, [1], n_blocks=2)
    with pytest.raises(ValueError, match="no valid level"):
        HeadingTree.from_headings(hs, n_blocks=2)


def test_exports_round_trip():
    hs = [H("Part I", 0, 1, page=3), H("Item 1. Business", 1, 2, page=3), H("Part II", 5, 1, page=40)]
    t = HeadingTree.from_headings(hs, n_blocks=9, document="r.pdf")
    assert t.to_markdown() == "# Part I\n## Item 1. Business\n# Part II\n"
    assert t.to_text() == "Part I  (p. 4)\n  Item 1. Business  (p. 4)\nPart II  (p. 41)\n"
    again = HeadingTree.from_dict(json.loads(json.dumps(t.to_dict())))
    assert again.headings == t.headings and again.n_blocks == 9 and again.document == "r.pdf"
    assert [n.span for n in again] == [n.span for n in t]
