"""The page around a block: lines that look like headings but are table furniture, list entries, a cell's word.

Layout scoring (:mod:`..detect`) judges a block by its look; a column header in bold, a board member's name in
a larger size or "Sincerely," on a line of its own look like titles too.  Each false heading cuts a section, so
chunks end at table rows and section paths carry column headers.  :data:`PAGE_RULES` reads one page's blocks
(cheap: no table finder, no second pass over the PDF), in order, the first rule that rules a candidate out
naming the reason: a candidate that is itself rows of figures is a table's; a one-line block whose words are
spread across the page is a table's header row or chart labels merged into one line; a divider page's contents
listing, form fields, numbered items and short labels stacked with nothing between them are a list
(:mod:`.lists`), and so are a map's labels and an exhibit index's rows; a label set on top of table rows, or a
line right on top of a grid of short cells, names them; a bold line whose paragraph goes on under it in lower
case is the first words of a sentence; a line in capitals in the text's own type right under a paragraph is a
tag line; an acronym alone on a line is a cell's word; a line right under a bullet item, indented to its text,
is the item's next line; labels on or between table rows are row groups or column headers; a line printed
inside another block's box is a cell; at a table's edge, column headers and row groups (:mod:`.tables`); names
and job titles stacked together are a signature block or a board list (:mod:`.signatures`).

A real title over a table keeps its place: the table rules ask for table rows on *both* sides, or a label
right on top of the rows, at their own row spacing (a sub-label ending on a colon may come between).

:func:`rule_out` runs the package's rules over a document's candidates: a form's fields repeated on many
pages, then the text alone (:mod:`.by_text`), then the cover pages, then this page's rules.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Callable, Iterable, NamedTuple, Sequence

from ...model import Block, Document
from ...text import WIDE_CHAR, is_contents_title, latin_capitals, starts_lower
from .._geometry import at_row_spacing, close_below, pitch, prose, share_inside, tight, touching
from .by_text import cover_code, text_code
from .lists import SENTENCE, contents_listing, exhibit_index, figure_labels, form_fields, list_items, numbered
from .lists import repeated_fields, stacked_labels
from .reasons import NotHeading, in_words
from .rows import COLUMN_HEAD, has_amount, header_row, is_table_line, row_of_figures
from .signatures import signature_codes
from .tables import edge_codes

__all__ = ["PAGE_RULES", "PageRule", "PageView", "page_codes", "page_reasons", "rule_out"]

_BULLET = re.compile(r"^\s*[•·▪◦‣●■–-]\s")  # a bullet item's mark
#: an acronym or a bracketed one, nothing else ("IPMS", "(HTML)")
_ACRONYM = re.compile(r"^\(?[A-Z]{2,5}\)?\.?$")

#: boxes of lines set tight overlap: a gap down to this share of a line's pitch above is still "right under"
_OVERLAP = 0.2
#: a line wider than its characters at one em each: its words stand apart (a table's header row, chart labels)
_SPREAD = 1.0
#: "in the rows' own type": a label over table rows is at most this much larger than they are
_ROWS_TYPE = 1.1
#: no paragraph space between a caption and the grid under it: a gap of at most this share of its pitch
_CAPTION_GAP = 0.4
#: a tag line follows its paragraph with no space: a gap of at most this share of its pitch
_TAG_GAP = 0.35
#: a bullet item's next line starts this many points right of the bullet's mark
_INDENT = 3
#: a label on a table's rows lies within this many blocks of the rows' block
_ROWS_REACH = 3
#: a row group sits one blank row of the table's own pitch from the rows above and below at most
_ROW_GROUP_GAP = 1.2
#: at most this many labels stacked between two blocks of table rows (more: running text or a new table)
_BETWEEN_MAX = 3
#: a box holds a line printed in it when this share of the line's box lies inside
_INSIDE = 0.6
#: a box much larger in type than the line (a page number over a map, an ornament) says nothing of it
_BOX_TYPE = 1.5


def _covers(o: Block, b: Block) -> bool:
    """``o``'s box holds most of ``b``'s: ``b`` is printed on ``o``'s lines."""
    return share_inside(b.bbox, o.bbox) >= _INSIDE


def _rows(b: Block) -> bool:
    """Table rows of some extent: two lines or more, or one row of figures."""
    return b.line_count >= 2 or row_of_figures(b.text)


def _in_rows(b: Block, t: Block) -> bool:
    """``b`` (one line) lies on the rows of table block ``t``: most of its height inside ``t``'s, a label
    cell whose figures are in ``t`` (a bold "Total net lease cost" set apart from its own row)."""
    if b.line_count != 1 or t.line_count < 2:
        return False
    h = b.bbox[3] - b.bbox[1]
    overlap = min(b.bbox[3], t.bbox[3]) - max(b.bbox[1], t.bbox[1])
    return h > 0 and overlap >= 0.5 * h and b.bbox[0] < t.bbox[2] and t.bbox[0] < b.bbox[2] + 3 * pitch(t)


#: where a run-in title ends and its text begins
_RUN_IN = re.compile(r"\s[—–]\s|:\s|\.\s")


def _continues_in_lower(b: Block, nxt: Block) -> bool:
    """``nxt`` goes on with ``b``'s sentence: a paragraph right under it (no paragraph space, the same size,
    not bold; one short line after a bold term and its definition's first words, "... volume: Dollar amount
    of") opening on a lower-case word -- not a bullet letter ("o Visit ..."), but the article "a"."""
    first = nxt.text.split(maxsplit=1)[0] if nxt.text.split() else ""
    return (not SENTENCE.search(b.text.rstrip()) and starts_lower(nxt.text) and (len(first) >= 2 or first == "a")
            and not nxt.bold
            and (nxt.line_count >= 2 or len(nxt.text) >= 60 or (b.bold and ": " in b.text.rstrip()))
            and abs(b.size - nxt.size) <= 0.05 * nxt.size
            and b.column == nxt.column and -0.5 * pitch(b) <= nxt.bbox[1] - b.bbox[3] <= 0.3 * pitch(b))


def _cell(b: Block) -> bool:
    """Short lines: a table cell, not a column of running text beside a sidebar."""
    return len(b.text) / max(b.line_count, 1) <= 40


#: "nearly the same type": a table's caption and cells, and the cells of one row, differ in size by less
_NEAR_SIZE = 1.15


#: a caption in the running text's type over a table set smaller ("Selected metrics" in 10 pt over 8 pt rows),
#: below running text on its page: a title at a page's top (a statement's) opens what follows
_CAPTION_SIZE = 1.3


def _one_row(a: Block, b: Block) -> bool:
    """Two cells of one table row: side by side on the same line, in nearly the same size."""
    h = min(a.bbox[3] - a.bbox[1], b.bbox[3] - b.bbox[1])
    overlap = min(a.bbox[3], b.bbox[3]) - max(a.bbox[1], b.bbox[1])
    return overlap > 0.5 * h and max(a.size, b.size) <= _NEAR_SIZE * min(a.size, b.size)


def _grid_under(blocks: Sequence[Block], side: set[int] | frozenset[int], k: int, title: Block) -> bool:
    """A table or form grid starts at ``blocks[k]``, under ``title``: short cells side by side in its first
    rows (``blocks[k]`` one of them, or one header line with the cells right under it or beside its later
    lines, where the first column's cells read into the header's block), spanning the title's middle.
    Running text among them (paragraphs in an auditor's critical-matters grid, a sentence beside a
    figure's labels, two columns of a glossary) follows the title: it heads that text."""
    b = blocks[k]
    lh = pitch(b)
    # the grid's first rows: what starts beside blocks[k], or within a line under it when it is one line (a
    # header whose last words wrap); the next caption is further down
    bound = b.bbox[3] + (1.2 if b.line_count == 1 else 0.3) * lh
    window = [c for c in blocks[k : k + 4] if c.bbox[1] <= bound]
    # (rows of figures set as one block under a header row are the grid's, not running text)
    if any(prose(c) or (j and c.index not in side and not _cell(c) and not is_table_line(c))
           for j, c in enumerate(window)):
        return False
    top = b.bbox[1] if b.index in side else b.bbox[1] + 0.5 * lh
    cells = [c for c in window if c.index in side and _cell(c) and top <= c.bbox[1] <= bound]
    if b.index in side:
        if not any(_one_row(x, y) for i, x in enumerate(cells) for y in cells[i + 1 :]):
            return False
        span = cells
    else:
        # a header's cells lie under it, not in another column of the page
        cells = [c for c in cells if c.bbox[0] < b.bbox[2] and b.bbox[0] < c.bbox[2]]
        first = b.text.split("\n")[0].strip()
        # a unit line ("(dollars in millions)") sits under a statement's or a section's title as well
        if not cells or SENTENCE.search(first) or len(first.split()) < 3 or COLUMN_HEAD.match(first):
            return False
        span = cells + [b]  # the header line
    middle = (title.bbox[0] + title.bbox[2]) / 2
    return min(c.bbox[0] for c in span) <= middle <= max(c.bbox[2] for c in span)


class PageView:
    """One page's blocks (reading order) as the page rules read them: the candidates (block indices), the blocks
    that share a row with another (``side``), and which blocks are table rows."""

    def __init__(self, blocks: Sequence[Block], candidates: set[int], side: set[int] | frozenset[int]) -> None:
        self.blocks = blocks
        self.candidates = candidates
        self.side = side
        self.n = len(blocks)
        self.table = [is_table_line(b) for b in blocks]

    def open(self, b: Block) -> bool:
        """``b`` is a candidate and not numbered (a numbered title between two tables is still a heading)."""
        return b.index in self.candidates and not numbered(b)


# -- the page rules: each finds the candidates it rules out (block indices) --------------------------------------


def _table_rows(p: PageView) -> Iterable[int]:
    # its own lines are a table's rows or its header row; one line needs an amount written as one
    # ("$ 1,034", "8 %", "(56)", "2,500"): "Differences between versions 4 and 5" is a title
    return [b.index for k, b in enumerate(p.blocks) if p.open(b) and p.table[k]
            and (b.line_count > 1 or header_row(b.text) or has_amount(b.text))]


def _spread_words(p: PageView) -> Iterable[int]:
    # one line whose width is several times its text's (table header rows, chart labels); Latin text only:
    # Chinese characters are full-width and Chinese titles are letter-spaced ("释 义")
    return [b.index for b in p.blocks if p.open(b) and b.line_count == 1 and len(b.text.split()) >= 2
            and b.size > 0 and not WIDE_CHAR.search(b.text)
            and (b.bbox[2] - b.bbox[0]) > _SPREAD * b.size * len(" ".join(b.text.split()))]


def _listed_by(find: Callable[[Sequence[Block]], Iterable[int]]) -> Callable[[PageView], Iterable[int]]:
    """A rule from a list finder of :mod:`.lists` (block indices of one page's list entries)."""
    return lambda p: [i for i in find(p.blocks) if i in p.candidates]


def _labels_rows_under(p: PageView) -> Iterable[int]:
    # a label set on top of table rows, with no space between and in the rows' own type: it names the rows
    # under it (a row group, "Change in benefit obligation"), it does not open a section; a title set
    # larger than its table ("Income statement SMA Group" over the statement) is the statement's heading
    # (a sub-label ending on a colon may come between: "Costs and expenses" / "Cost of revenues:" / rows)
    blocks, table, n = p.blocks, p.table, p.n
    for k in range(n - 1):
        b, m = blocks[k], k + 1
        while m + 1 < n and not table[m] and blocks[m].line_count == 1 and blocks[m].text.rstrip().endswith(":") \
                and table[m + 1] and at_row_spacing(blocks[m - 1], blocks[m], blocks[m + 1]):
            m += 1
        if b.index in p.candidates and not table[k] and table[m] and not numbered(b) \
                and b.size <= _ROWS_TYPE * blocks[m].size and at_row_spacing(blocks[m - 1], blocks[m]):
            yield b.index


def _captions_grid_under(p: PageView) -> Iterable[int]:
    # a title right on top of a grid (cells side by side, or a header line over them), in nearly the grid's
    # type and with no paragraph space: the grid's caption ("KPI 1.2.2 Fatalities & Injuries" over its data
    # table); nothing follows it but the table, so it opens no section
    blocks = p.blocks
    for k in range(p.n - 1):
        b, nxt = blocks[k], blocks[k + 1]
        if b.index in p.candidates and b.index not in p.side and not p.table[k] and not numbered(b) \
                and b.line_count <= 2 and -_OVERLAP * pitch(b) <= nxt.bbox[1] - b.bbox[3] <= _CAPTION_GAP * pitch(b) \
                and (b.size <= _NEAR_SIZE * nxt.size
                     or (b.size <= _CAPTION_SIZE * nxt.size and any(map(prose, blocks[:k])))) \
                and _grid_under(blocks, p.side, k + 1, b):
            yield b.index


def _opens_sentence(p: PageView) -> Iterable[int]:
    # a sentence's subject set in bold on a line of its own ("Accrued interest and accounts receivable
    # decreased"), its paragraph going on right under it in lower case: the paragraph's first words.  A
    # title in capitals before its run-in text ("ACCOUNTS PAYABLE — Accounts payable consists of") stays.
    blocks = p.blocks
    for k in range(p.n - 1):
        b, nxt = blocks[k], blocks[k + 1]
        if p.open(b) and _continues_in_lower(b, nxt) and not latin_capitals(_RUN_IN.split(b.text, maxsplit=1)[0]):
            yield b.index


def _capitals_tag_line(p: PageView) -> Iterable[int]:
    # a line in capitals, in the text's own weight and size, right under a paragraph with no space between:
    # a tag line ("SAFE DESIGN" under a strategic objective) or a reference ("[ESRS S1 - 2]") that ends
    # the paragraph; a title is set apart by space above it or by its weight
    blocks = p.blocks
    for k in range(1, p.n):
        b, up = blocks[k], blocks[k - 1]
        if b.index in p.candidates and b.line_count == 1 and not b.bold and b.size <= 1.05 * up.size \
                and up.column == b.column and (up.line_count >= 2 or len(up.text) >= 60) and latin_capitals(b.text) \
                and up.index not in p.candidates and not latin_capitals(up.text) \
                and -_OVERLAP * pitch(b) <= b.bbox[1] - up.bbox[3] <= _TAG_GAP * pitch(b):
            yield b.index


def _lone_acronym(p: PageView) -> Iterable[int]:
    # an acronym alone on a line, bracketed or with the next line going on in lower case right under it ("(HTML)",
    # "IPMS" / "accomplishes these capabilities" in a table's cell): a wrapped phrase's word, not a title
    blocks, n = p.blocks, p.n
    for k, b in enumerate(blocks):
        word = b.text.strip()
        if b.index in p.candidates and not b.bold and _ACRONYM.match(word) and (
                word.startswith("(") or (k + 1 < n and starts_lower(blocks[k + 1].text) and touching(b, blocks[k + 1])
                                         and blocks[k + 1].bbox[0] <= b.bbox[0] + pitch(b))):
            yield b.index


def _bullet_continuation(p: PageView) -> Iterable[int]:
    # a line set right under a bullet item, indented to the item's text, the item's sentence not ended:
    # the item's next line ("• By accepting the Award, you are bound by the terms of the" / "Award Terms.")
    blocks = p.blocks
    for k in range(1, p.n):
        b, up = blocks[k], blocks[k - 1]
        last = up.text.rstrip().rsplit("\n", 1)[-1]
        if b.index in p.candidates and _BULLET.match(up.text) and not SENTENCE.search(last) \
                and up.bbox[0] + _INDENT < b.bbox[0] < up.bbox[2] and touching(up, b):
            yield b.index


def _on_table_rows(p: PageView) -> Iterable[int]:
    # a label on a row of a table block: a cell of the table
    blocks, table, n = p.blocks, p.table, p.n
    for k, b in enumerate(blocks):
        if b.index in p.candidates and not table[k] and not numbered(b):
            if any(table[j] and _in_rows(b, blocks[j])
                   for j in range(max(0, k - _ROWS_REACH), min(n, k + _ROWS_REACH + 1)) if j != k):
                yield b.index


def _row_group_between(p: PageView) -> Iterable[int]:
    # a one-line label in the rows' own type, one blank row of the tables' own pitch above and below it:
    # a row group inside the table ("Liabilities and Equity" between the assets and the liabilities)
    blocks, table = p.blocks, p.table
    for k in range(1, p.n - 1):
        b, up, down = blocks[k], blocks[k - 1], blocks[k + 1]
        if b.index in p.candidates and table[k - 1] and table[k + 1] and not table[k] and not numbered(b) \
                and b.line_count == 1 and _rows(up) and _rows(down) \
                and abs(b.size - down.size) <= 0.05 * down.size:
            row = min(pitch(up), pitch(down))
            gaps = (b.bbox[1] - up.bbox[3], down.bbox[1] - b.bbox[3])
            if all(-_OVERLAP * row <= g <= _ROW_GROUP_GAP * row for g in gaps):
                yield b.index


def _between_table_rows(p: PageView) -> Iterable[int]:
    # labels stacked between table rows: a row group or a column header inside the table
    blocks, table, n = p.blocks, p.table, p.n
    k = 0
    while k < n:
        if table[k]:
            m = k + 1
            run: list[int] = []
            # the first label sits at the rows' spacing: a title with space above it opens a new table
            while m < n and not table[m] and len(run) < _BETWEEN_MAX and blocks[m].line_count <= 2 \
                    and len(blocks[m].text) <= 90 and close_below(blocks[m - 1], blocks[m], 1.2) \
                    and (run or tight(blocks[m - 1], blocks[m])):
                run.append(m)
                m += 1
            if run and m < n and table[m] and close_below(blocks[m - 1], blocks[m], 1.2):
                for r in run:
                    if p.open(blocks[r]):
                        yield blocks[r].index
                k = m
                continue
        k += 1


def _inside_another_box(p: PageView) -> Iterable[int]:
    # a line printed inside another block's box (a label within a table's header or row, the other block's
    # cells on either side of it), with no running text under it: a cell, not a title.  A paragraph's or a
    # huge ornament's box (an extraction that merged two columns, a page number over a map) says nothing, nor
    # does a box in Chinese text, whose lines are shorter than :func:`.._geometry.prose` asks.
    blocks, n = p.blocks, p.n
    for k, b in enumerate(blocks):
        if b.index in p.candidates and not (k + 1 < n and prose(blocks[k + 1]) and close_below(b, blocks[k + 1], 1.0)) \
                and not WIDE_CHAR.search(b.text) \
                and any(o is not b and not prose(o) and not _BULLET.match(o.text) and o.size <= _BOX_TYPE * b.size
                        and _covers(o, b) for o in blocks):
            yield b.index


def _at_table_edge(p: PageView) -> Iterable[tuple[int, NotHeading]]:
    # column headers over its figures, row groups under its header or down a run of rows
    return edge_codes(p.blocks, p.candidates, p.table, p.side).items()


def _signatures(p: PageView) -> Iterable[tuple[int, NotHeading]]:
    return signature_codes(p.blocks, p.candidates, numbered).items()


class PageRule(NamedTuple):
    """One page rule: its name, its reason (None: a table of its own names the reasons), what it finds (block
    indices; ``(index, reason)`` pairs when ``reason`` is None)."""

    name: str
    reason: NotHeading | None
    finds: Callable[[PageView], Iterable]

    def verdicts(self, page: PageView) -> Iterable[tuple[int, NotHeading]]:
        found = self.finds(page)
        return found if self.reason is None else ((i, self.reason) for i in found)


#: the page rules, asked in this order: a candidate takes the reason of the first rule that rules it out
PAGE_RULES: tuple[PageRule, ...] = (
    PageRule("its own lines are table rows", NotHeading.TABLE_ROWS, _table_rows),
    PageRule("its words spread across the line", NotHeading.SPREAD_WORDS, _spread_words),
    PageRule("an entry of a divider page's contents listing", NotHeading.CONTENTS_LISTING, _listed_by(contents_listing)),
    PageRule("a form field", NotHeading.FORM_FIELD, _listed_by(form_fields)),
    PageRule("a numbered list item", NotHeading.LIST_ITEM, _listed_by(list_items)),
    PageRule("one of stacked labels", NotHeading.STACKED_LABEL, _listed_by(stacked_labels)),
    PageRule("a label of a map or a diagram", NotHeading.FIGURE_LABEL, _listed_by(figure_labels)),
    PageRule("a row of an exhibit index", NotHeading.EXHIBIT_INDEX_ROW, _listed_by(exhibit_index)),
    PageRule("a label over the table rows right under it", NotHeading.LABELS_ROWS_UNDER, _labels_rows_under),
    PageRule("a caption over the grid right under it", NotHeading.CAPTIONS_GRID_UNDER, _captions_grid_under),
    PageRule("the first words of its paragraph's sentence", NotHeading.OPENS_SENTENCE, _opens_sentence),
    PageRule("a tag line in capitals under a paragraph", NotHeading.CAPITALS_TAG_LINE, _capitals_tag_line),
    PageRule("an acronym alone on a line", NotHeading.LONE_ACRONYM, _lone_acronym),
    PageRule("the next line of a bullet item", NotHeading.BULLET_CONTINUATION, _bullet_continuation),
    PageRule("a label on a table's rows", NotHeading.ON_TABLE_ROWS, _on_table_rows),
    PageRule("a row group between table rows", NotHeading.ROW_GROUP_BETWEEN, _row_group_between),
    PageRule("labels stacked between table rows", NotHeading.BETWEEN_TABLE_ROWS, _between_table_rows),
    PageRule("a line inside another block's box", NotHeading.INSIDE_ANOTHER_BOX, _inside_another_box),
    PageRule("at a table's edge (tables.EDGE_RULES)", None, _at_table_edge),
    PageRule("a signature block or a board list (signatures.SIGNATURE_RULES)", None, _signatures),
)


def page_codes(blocks: Sequence[Block], candidates: set[int],
               side: set[int] | frozenset[int] = frozenset()) -> dict[int, NotHeading]:
    """Why each of the ``candidates`` (block indices) among one page's ``blocks`` (reading order) is no heading.

    ``side``: indices of the blocks that share a row with another block of their column (table cells,
    form grids; :mod:`..detect` finds them).
    """
    out: dict[int, NotHeading] = {}
    if not candidates:
        return out
    page = PageView(blocks, candidates, side)
    for rule in PAGE_RULES:
        for i, reason in rule.verdicts(page):
            out.setdefault(i, reason)
    return out


def page_reasons(blocks: Sequence[Block], candidates: set[int],
                 side: set[int] | frozenset[int] = frozenset()) -> dict[int, str]:
    """:func:`page_codes` in words."""
    return in_words(page_codes(blocks, candidates, side))


def rule_out(document: Document, candidates: Sequence[Block], side: set[int], text_size: float) -> dict[int, NotHeading]:
    """Block index -> why it is no heading, for the ``candidates`` the rules of this package rule out (``side``:
    the blocks that share a row with another; ``text_size``: the running text's size)."""
    out: dict[int, NotHeading] = {}
    by_page: dict[int, set[int]] = defaultdict(set)
    fields = repeated_fields(document.blocks, text_size) if candidates else set()
    for b in candidates:
        if b.index in fields:
            out[b.index] = NotHeading.REPEATED_FIELD
            continue
        why = text_code(" ".join(b.text.split()), b.page)
        if why is not None:
            out[b.index] = why
        else:
            by_page[b.page].add(b.index)
    for p, idx in by_page.items():
        blocks = document.page_blocks(p)
        cover = cover_code(blocks, p, document.page_count)
        if cover is not None:
            out.update((b.index, cover) for b in blocks
                       if b.index in idx and not is_contents_title(" ".join(b.text.split()), plain=True))
            continue
        out.update(page_codes(blocks, idx, side))
    return out


