"""The rule tables of the core: every reason code has its words, the rules are asked in their order, and
nothing branches on the words (the level walk's placements, the not-heading rules)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from structrag.headings.contents import SECONDARY
from structrag.headings.not_headings import NotHeading, REASON_TEXT as NOT_HEADING_TEXT, page_codes, text_reason
from structrag.headings.not_headings import by_text, page, signatures, tables
from structrag.levels import assign_levels
from structrag.levels.walk import policies
from structrag.levels.walk.logic import LOGIC_RULES, DocumentLogic
from structrag.levels.walk.reasons import HELD_SOURCES, LOGIC, LOGIC_SOURCES, POLICIES, REASON_TEXT, LevelReason
from structrag.model import Block, Heading
from structrag.numbering import parse_numbering

ROOT = Path(__file__).resolve().parents[1]


# -- the words of each code ---------------------------------------------------------------------------------


@pytest.mark.parametrize("enum, words", [(LevelReason, REASON_TEXT), (NotHeading, NOT_HEADING_TEXT)])
def test_every_code_has_its_own_words(enum, words):
    assert set(words) == set(enum)
    texts = [words[c] for c in enum]
    assert all(t and t == t.strip() for t in texts)
    assert len(set(texts)) == len(texts)  # one code, one meaning
    assert all(c.text == words[c] for c in enum)


def test_not_heading_words_are_those_the_rules_have_always_returned():
    # the words reach page_reasons, text_reason and the like: a rewording is a change of output
    pinned = {NotHeading.LETTER_CLOSING: "letter closing", NotHeading.CONTINUED: "continued repeat",
              NotHeading.COVER_LINE: "cover-page line", NotHeading.FIGURES_ROW: "figures row",
              NotHeading.REPEATED_FIELD: "a form's field, repeated on many pages",
              NotHeading.TABLE_ROWS: "table rows", NotHeading.SPREAD_WORDS: "words spread across the line",
              NotHeading.BETWEEN_TABLE_ROWS: "between table rows",
              NotHeading.SIGNATURE_NAME: "name or title in a signature or board list",
              NotHeading.FRONT_COVER: "front cover", NotHeading.BACK_COVER: "back cover"}
    assert {c: NOT_HEADING_TEXT[c] for c in pinned} == pinned


def test_every_not_heading_code_is_given_by_some_rule():
    given = {r.reason for r in by_text.TEXT_RULES} | {r.reason for r in page.PAGE_RULES if r.reason is not None}
    given |= {r.reason for r in tables.EDGE_RULES} | {r.reason for r in signatures.SIGNATURE_RULES}
    # the cover pages and a form's fields repeated over the document are judged outside the tables
    given |= {NotHeading.SEC_COVER_PAGE, NotHeading.FRONT_COVER, NotHeading.BACK_COVER, NotHeading.REPEATED_FIELD}
    assert given == set(NotHeading)


def test_every_level_reason_has_a_policy_and_the_sources_follow_from_it():
    assert set(POLICIES) == set(LevelReason)
    assert HELD_SOURCES == {LOGIC, SECONDARY} and LOGIC_SOURCES == {LOGIC}
    assert POLICIES[LevelReason.END_MATTER].ends_body and not POLICIES[LevelReason.EXHIBIT].ends_body
    assert {r for r, p in POLICIES.items() if not p.anchors_look} == {LevelReason.END_MATTER, LevelReason.FRONT_MATTER,
                                                                        LevelReason.BESIDE_STATEMENTS}
    assert [r for r, p in POLICIES.items() if p.continues_run] == [LevelReason.SECONDARY_RUN]
    assert [r for r, p in POLICIES.items() if p.on_listed_branch] == [LevelReason.GIVEN]


# -- nothing branches on words ----------------------------------------------------------------------------


def _compared_strings(path: Path) -> list[tuple[int, str]]:
    """String literals a comparison (``==``, ``!=``, ``in``, ``not in``) reads in the module at ``path``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                items = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
                out += [(node.lineno, x.value) for x in items if isinstance(x, ast.Constant) and isinstance(x.value, str)]
    return out


def _words_outside_rule_names(path: Path, words) -> list[str]:
    """String literals of ``words`` in the module at ``path``, other than a rule's name (the first argument of a
    ``...Rule(...)`` call)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {id(node.args[0]) for node in ast.walk(tree) if isinstance(node, ast.Call) and node.args
             and isinstance(node.func, ast.Name) and node.func.id.endswith("Rule")}
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and node.value in set(words)
            and id(node) not in names]


@pytest.mark.parametrize("module", ["driver", "policies", "listed", "logic", "looks"])
def test_the_level_walk_compares_no_reason_and_no_source(module):
    path = ROOT / "structrag" / "levels" / "walk" / f"{module}.py"
    compared = {s for _, s in _compared_strings(path)}
    assert not compared & (set(REASON_TEXT.values()) | {LOGIC, SECONDARY, "contents", "fixed"})
    if module in ("driver", "policies", "listed"):
        # the walk itself compares only the granularity option's names, never a reason, a source or a scheme
        assert compared <= {"heading", "page"}
    assert _words_outside_rule_names(path, REASON_TEXT.values()) == []  # the words live in reasons.py only


@pytest.mark.parametrize("module", ["page", "by_text", "tables", "signatures", "lists", "rows", "repeats"])
def test_the_not_heading_rules_keep_their_words_apart(module):
    path = ROOT / "structrag" / "headings" / "not_headings" / f"{module}.py"
    assert _words_outside_rule_names(path, NOT_HEADING_TEXT.values()) == []


@pytest.mark.parametrize("module", ["detect", "wrapped", "contents"])
def test_detection_reads_codes_not_words(module):
    path = ROOT / "structrag" / "headings" / f"{module}.py"
    assert _words_outside_rule_names(path, NOT_HEADING_TEXT.values()) == []


# -- the rules' order -------------------------------------------------------------------------------------


def test_the_rule_tables_keep_their_order():
    # a reordered table changes which reason, or which level, wins: any change here is a change of behaviour
    assert [r.reason for r in LOGIC_RULES] == [LevelReason.FRONT_MATTER, LevelReason.EXHIBIT, LevelReason.END_MATTER,
                                                LevelReason.BESIDE_STATEMENTS, LevelReason.INTRODUCES_LISTED_RUN,
                                                LevelReason.UNDER_INTRODUCER]
    assert [r.apply for r in policies.PLACEMENTS] == [policies._by_logic, policies._in_secondary_run, policies._given]
    assert [r.apply for r in policies.PREDICTED_CORRECTIONS] == [policies._floor_under_placed,
                                                                 policies._under_leaf]
    assert [r.reason for r in page.PAGE_RULES[:8]] == [
        NotHeading.TABLE_ROWS, NotHeading.SPREAD_WORDS, NotHeading.CONTENTS_LISTING, NotHeading.FORM_FIELD,
        NotHeading.LIST_ITEM, NotHeading.STACKED_LABEL, NotHeading.FIGURE_LABEL, NotHeading.EXHIBIT_INDEX_ROW]
    assert [r.reason for r in page.PAGE_RULES[-2:]] == [None, None]  # the table-edge and signature tables
    assert [r.reason for r in tables.EDGE_RULES] == [
        NotHeading.COLUMN_HEADER_OVER_FIGURES, NotHeading.ANNOUNCED_CAPTION, NotHeading.ROW_GROUP_UNDER_HEADER,
        NotHeading.ROW_GROUP_OF_RUN]


def test_the_first_text_rule_that_holds_names_the_reason():
    # both a caption by its words and a "(continued)" repeat: the caption rule comes first
    assert text_reason("Table 3: Revenue (continued)", 5) == "a table's or a figure's caption"
    assert text_reason("Revenue (continued)", 5) == "continued repeat"
    # a unit line on a cover page is a cover-page line there, a column header further on
    assert text_reason("Form 10-K", 0) == "cover-page line" and text_reason("Form 10-K", 3) is None


def _block(i, text, y, *, size=10.0, x0=72.0, x1=300.0):
    lines = text.count("\n") + 1
    return Block(index=i, page=0, bbox=(x0, y, x1, y + 12.0 * lines), text=text, font="Helvetica", size=size,
                 bold=False, italic=False, color=0, line_count=lines, column=0, start=0, end=len(text))


def test_the_first_page_rule_that_rules_a_candidate_out_names_it(monkeypatch):
    blocks = [_block(0, "Revenue", 100), _block(1, "Costs", 130)]
    first = page.PageRule("first", NotHeading.STACKED_LABEL, lambda p: [1])
    second = page.PageRule("second", NotHeading.TABLE_ROWS, lambda p: [0, 1])
    monkeypatch.setattr(page, "PAGE_RULES", (first, second))
    assert page_codes(blocks, {0, 1}) == {0: NotHeading.TABLE_ROWS, 1: NotHeading.STACKED_LABEL}
    monkeypatch.setattr(page, "PAGE_RULES", (second, first))
    assert page_codes(blocks, {0, 1}) == {0: NotHeading.TABLE_ROWS, 1: NotHeading.TABLE_ROWS}


def H(text, page=0, level=None, source=None):
    return Heading(text=text, page=page, bbox=(72, 72, 300, 90), block=page, block_end=page + 1,
                   numbering=parse_numbering(text)[0], level=level, level_source=source)


def test_the_first_logic_rule_that_places_a_heading_names_the_reason():
    hs = [H("Part I"), H("Item 1. Business"), H("Item 8. Statements", 1), H("Consolidated Balance Sheets", 1),
          H("Notes to Consolidated Financial Statements", 2), H("Note 1. Basis", 2), H("Note 2. Revenue", 3),
          H("Item 9. Controls", 4), H("Signatures", 5), H("Exhibit 31.1", 6)]
    lg = DocumentLogic(hs)
    levels = [1, 2, 2, 3, 3, 4, 4, 2, 1]
    fixed = [None] * 5 + [3, 3] + [None] * 3  # the contents list the notes, not their introducer
    # an exhibit is end matter too: the exhibit rule comes first, and an exhibit heads what is filed under it
    assert lg.level(9, levels, fixed).reason is LevelReason.EXHIBIT
    assert lg.level(8, levels, fixed).reason is LevelReason.END_MATTER
    # the notes' introducer is both a statement and a listed run's introducer: the statements rule comes first
    assert 4 in lg.statement_of and 4 in lg.members
    assert lg.level(4, levels[:4], fixed) == (levels[3], LevelReason.BESIDE_STATEMENTS)


def test_the_documents_logic_places_before_the_contents_level():
    # "Signatures" listed by the contents at level 2 goes back to the top level (the end matter rule)
    hs = [H("Part I", 0, 1, "contents"), H("Item 1. Business", 0, 2, "contents"), H("Part II", 1, 1, "contents"),
          H("Item 7. Results", 1, 2, "contents"), H("Signatures", 2, 2, "contents")]
    res = assign_levels(None, hs, predictor="rules")
    assert [h.level for h in res.headings] == [1, 2, 1, 2, 1]
    assert [h.level_source for h in res.headings][-1] == LOGIC and res.stats["logic"] == 1


def test_the_cover_and_the_front_matter_are_found_only_before_a_numbered_body():
    hs = [H("Acme Holdings Limited", 0), H("Global Offering", 0), H("Acme Holdings Limited", 1),
          H("Important Notice", 2), H("1. Lock-up", 2), H("Contents", 3), H("【释 义】", 4), H("Chapter 1 Summary", 5),
          H("Definitions", 6), H("Chapter 2 Offering", 7)]
    lg = DocumentLogic(hs)
    assert (lg.cover, lg.front) == ({0, 1, 2}, {3, 5, 6})  # "Definitions" inside the body is a section of it
    assert lg.cover <= lg.leaves and lg.level(3, [1, 1, 1], [None] * 10) == (1, LevelReason.FRONT_MATTER)
    # a level the printed contents gives stands
    assert lg.level(6, [1] * 6, [None] * 6 + [2] + [None] * 3) is None
    # no numbered first section: a title's words alone decide nothing
    plain = DocumentLogic([h for h in hs if h.numbering is None])
    assert not plain.cover and not plain.front
    # an exhibit before the first article: its contents is the exhibit's own (an 8-K's credit agreement)
    exhibit = DocumentLogic([H("Exhibit 99.1", 0), H("Table of Contents", 1), H("Article I Definitions", 2)])
    assert not exhibit.cover and not exhibit.front
