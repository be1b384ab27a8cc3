"""Labels at a table's edge that open no section: column headers, row groups under a header, row groups.

:mod:`.rows` finds a table's rows by their text (rows of figures, rows of years, unit lines) and :mod:`.page`
rules out labels stacked between them.  This module looks at the table's edges, where the rows are on
one side only (:data:`EDGE_RULES`, asked in this order for each label, the first that holds naming the reason):

* **a column header over a column of figures**: a short line in the header band (the short lines right
  above the first rows), set off the rows' left edge and centred neither over them nor on the page
  ("Noncontrolling" over its column, "Total Expected Charges" over the figures' column); a header whose
  last line is a row of years ("Fiscal Year" / "2020 2019 2018"); the top line of a stacked header over a
  narrow table, near the page's middle ("Fiscal 2020 vs. 2019" over "Percentage Change");
* **a caption after the sentence that announces its table** ("The following table presents ...", then
  "Nonaccrual loan activity" over the rows);
* **a row group under the header**: a label right under a table's header cells or header row, its rows
  right below ("North America" under "2017 2018 2019");
* **row groups down a run of rows**: labels right over their rows in the rows' own type, one after
  another with no running text between, down to the page's end or to a title that opens a higher section
  ("COMMON STOCK", "CAPITAL SURPLUS" down a statement of equity).

A title that recurs word for word over tables on two or more pages, each time right over rows in smaller
type, is the tables' caption (:func:`recurring_captions`: "Selected income statement data" over each
segment's table); a section's title is not repeated.  A title in the text's size right over a table of
figures in smaller type, with nothing of its own after the table before the next heading, is the table's
caption too (:func:`lone_captions`: "Level 3 inputs(a)"), unless the next heading is a sub-heading: less
prominent, a generic one the document repeats ("Quarterly results"), or one of the table's row labels
discussed ("Interest Expense" after a row "Interest expense, net").

Any other title over a table with its own header band stays, even when nothing follows the table (a title
larger than the text, or over rows in nearly its own type): the annotators of
``eval/data/heading_precision_labels.md`` call such a title a caption, but authors' outlines list some
("Issuances" over "Principal Amount ..." in a 10-K's bookmarks), and removing them all cost the business
trees.  So do numbered titles and statement titles, which open a statement page.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Callable, NamedTuple, Sequence

from ...model import Block, Document, Heading
from ...text import is_contents_title, normalize_title
from .._geometry import pitch, prominence, prose
from .lists import SENTENCE, numbered
from .reasons import NotHeading, in_words

__all__ = ["EDGE_RULES", "EdgeRule", "edge_codes", "edge_reasons", "recurring_captions", "lone_captions"]

#: a note under a table: "(1) Represents ...", "(a) ...", "* Calculation is not meaningful"
_NOTE = re.compile(r"^(?:\(?\d{1,2}\)|\(?[a-z]\)|\*{1,3}|[†‡]|\d{1,2}\s+[A-Z])")
#: a statement's own title opens the statement page whatever follows it
_STATEMENT = re.compile(r"\b(?:statements?|balance\s+sheets?|schedule)\b", re.I)
_YEAR = re.compile(r"^(?:19|20)\d\d$")
#: how many short blocks a header band may hold between a title and the first rows
_BAND = 6


def _short(b: Block) -> bool:
    """A header cell or label: up to three short lines, no running text (not a sentence that leads into the
    table, "Content assets consisted of the following:")."""
    return b.line_count <= 3 and len(b.text) / max(b.line_count, 1) <= 60 and not prose(b) \
        and not (len(b.text.split()) >= 5 and SENTENCE.search(b.text.rstrip()))


def _rows_below(blocks: Sequence[Block], table: Sequence[bool], k: int, reach: float) -> int | None:
    """Index of the first table block after ``k`` when only short blocks lie between and it starts within
    ``reach`` below ``blocks[k]``'s end; else None."""
    b = blocks[k]
    last = b.bbox[3]
    for j in range(k + 1, min(len(blocks), k + 1 + _BAND)):
        c = blocks[j]
        # a band of header lines set tight one under another may run longer than ``reach``
        if c.bbox[1] - b.bbox[3] > reach and c.bbox[1] - last > 0.5 * pitch(b):
            return None
        last = max(last, c.bbox[3])
        if table[j]:
            return j
        if not _short(c):
            return None
    return None


def _years_last(b: Block) -> bool:
    """A stacked column header whose last line is the columns' years ("Fiscal Year" / "2020 2019 2018")."""
    lines = [ln.split() for ln in b.text.split("\n") if ln.strip()]
    return len(lines) >= 2 and len(lines[-1]) >= 2 and all(_YEAR.match(t) for t in lines[-1]) \
        and all(len(ln) <= 4 for ln in lines[:-1])


def _over_figures(b: Block, rows: Block, text: tuple[float, float]) -> bool:
    """``b`` sits over the rows' figure columns: well right of their left edge and centred neither over them
    nor on the page's text (``text``: its left and right edges)."""
    width = rows.bbox[2] - rows.bbox[0]
    if width <= 0 or b.bbox[0] < rows.bbox[0] + 0.25 * width:
        return False
    return not any(_centred(b, span) for span in ((rows.bbox[0], rows.bbox[2]), text))


def _centred(b: Block, span: tuple[float, float]) -> bool:
    """``b``'s middle lies near the middle of ``span`` (left and right edges)."""
    lo, hi = span
    return abs((b.bbox[0] + b.bbox[2]) / 2 - (lo + hi) / 2) <= 0.08 * (hi - lo)


def _spans_cells(blocks: Sequence[Block], table: Sequence[bool], k: int, j: int) -> bool:
    """``blocks[k]`` is the top line of a stacked column header over the rows ``blocks[j]``: it follows
    running text, lies well right of the rows' left edge, and a header line in its own type is set tight
    under it, under its span and also inside the figure columns ("Fiscal 2020 vs. 2019" over "Percentage
    Change").  A title at the top of a page stands over its page, however it is stacked."""
    b, rows = blocks[k], blocks[j]
    width = rows.bbox[2] - rows.bbox[0]
    inside = rows.bbox[0] + 0.25 * width
    if k == 0 or width <= 0 or b.bbox[0] < inside or table[k - 1] or _short(blocks[k - 1]):
        return False
    return any(_short(c) and c.bold == b.bold and abs(c.size - b.size) <= 0.05 * b.size and c.bbox[0] >= inside
               and -0.2 * pitch(b) <= c.bbox[1] - b.bbox[3] <= 0.3 * pitch(b)
               and min(b.bbox[2], c.bbox[2]) - max(b.bbox[0], c.bbox[0]) > 0.5 * (b.bbox[2] - b.bbox[0])
               for c in blocks[k + 1:j])


#: a sentence that announces the table after it ("The following table presents ...", "... as follows:")
#: ("The following tables ..." announces several, whose titles may head sub-sections of their own)
_ANNOUNCES = re.compile(r"(?:\b(?:following|below)\s+(?:table|schedule|chart)\b|\btable\s+below\b"
                        r"|\b(?:as\s+follows|were|was|are|is|the\s+following|include[sd]?|consist(?:s|ed)?\s+of)\s*:$)",
                        re.I)


#: a sentence that only points elsewhere
_REFERS = re.compile(r"^(?:refer\s+to|see|for\s+(?:additional|further|more)\s+(?:information|detail))\b", re.I)


def _announced(blocks: Sequence[Block], table: Sequence[bool], k: int) -> bool:
    """``blocks[k]`` comes right after running text whose last sentence (a reference aside) announces a table:
    the title between that sentence and the table's rows names the table (a caption), the section is the
    sentence's.  (The caller keeps a title centred on the page: a statement's or a schedule's.)"""
    if k == 0 or table[k - 1] or _short(blocks[k - 1]):
        return False
    said = re.split(r"(?<=[.!?])\s+", " ".join(blocks[k - 1].text.split()))
    while len(said) > 1 and _REFERS.match(said[-1]):
        said.pop()  # "Refer to Note 11 for additional information." after the sentence that announces
    return _ANNOUNCES.search(said[-1]) is not None \
        and blocks[k].bbox[1] - blocks[k - 1].bbox[3] <= 2.0 * pitch(blocks[k])


def _prominence(b: Block) -> tuple[float, int, int]:
    return prominence(b.size, b.bold, b.text)


def _in_rows(blocks: Sequence[Block], table: Sequence[bool], m: int, rows: Block) -> bool:
    """``blocks[m]`` is a row label inside the table: in the rows' type, right under the block before it and
    right over table rows."""
    c = blocks[m]
    return m + 1 < len(blocks) and table[m + 1] and c.size <= 1.05 * rows.size \
        and blocks[m + 1].bbox[1] - c.bbox[3] <= 1.0 * pitch(c) and c.bbox[1] - blocks[m - 1].bbox[3] <= 1.2 * pitch(c)


#: a row that ends on an amount ("... notes due 2032 $ 1,094"): prose that cites one goes on after it
_AMOUNT = re.compile(r"(?:[$€£¥]\s?\(?[\d,.]*\d|\d{1,3}(?:,\d{3})+)\)?\s*%?$")


def _running_text(c: Block, rows: Block) -> bool:
    """A paragraph after a table (not a note under it, nor rows whose labels are long): a sentence of some
    length in the text's type."""
    lines = [ln for ln in c.text.split("\n") if ln.strip()]
    if 2 * sum(1 for ln in lines if _AMOUNT.search(ln.rstrip())) >= len(lines):
        return False
    return not _NOTE.match(c.text) and c.size >= 0.95 * rows.size \
        and (prose(c) or (len(c.text) >= 80 and SENTENCE.search(c.text.rstrip()) is not None))


def _labels_rows(blocks: Sequence[Block], table: Sequence[bool], k: int, left: float) -> bool:
    """``blocks[k]`` is set right over table rows in their type, at the text's left edge (``left``); a title
    centred on the page opens a statement or an exhibit."""
    if k + 1 >= len(blocks) or not table[k + 1]:
        return False
    b, rows = blocks[k], blocks[k + 1]
    return b.bbox[0] <= min(rows.bbox[0], left) + 2 * pitch(rows) and b.size <= 1.05 * rows.size \
        and rows.bbox[1] - b.bbox[3] <= 1.0 * pitch(b)


def _group(blocks: Sequence[Block], table: Sequence[bool], candidates: set[int], side: set[int] | frozenset[int],
           k: int, left: float, chained: dict[int, bool]) -> bool:
    """``blocks[k]`` names the table rows right under it, in their type, and opens nothing: after the rows
    comes no running text, then a title that opens a higher section (more prominent, or numbered) or
    names the next rows the same way, and so on down the page.  Labels over a run of row blocks with
    nothing between are a table's row groups ("COMMON STOCK", "CAPITAL SURPLUS" down a statement of
    equity).  A title as prominent after the rows that has text of its own may be this one's sub-section
    ("Review of Operations", its table, "Net Sales" and its discussion), and rows running to the page's
    end may go on with text on the next page: both stay.  So does a title over a table with a header of its
    own ("Issuances" over "Principal Amount ..."): authors' outlines list such titles.

    ``chained`` keeps the verdict for labels reached as the next one of a run (one walk per page, however
    many labels it holds)."""
    path: list[int] = []
    verdict: bool | None = None
    while verdict is None:
        if path and k in chained:
            verdict = chained[k]
            break
        if not _labels_rows(blocks, table, k, left):
            verdict = False
            break
        b, rows = blocks[k], blocks[k + 1]
        nxt = None
        for m in range(k + 2, len(blocks)):
            c = blocks[m]
            # (header cells set after the rows' first line in reading order share a row with it)
            if c.index in candidates and c.index not in side and not _in_rows(blocks, table, m, rows):
                nxt = m
                break
            if not table[m] and _running_text(c, rows):
                verdict = False
                break
        if verdict is not None:
            break
        if nxt is None:
            verdict = bool(path)  # the page ends: one label alone may go on overleaf, a run's do not
            break
        c = blocks[nxt]
        if _prominence(c) != _prominence(b):
            verdict = _prominence(c) > _prominence(b)
        elif numbered(c):
            verdict = True
        else:
            path.append(nxt)
            k = nxt
    for m in path:
        chained[m] = verdict
    return verdict


def _reach(b: Block) -> float:
    """How far under a title its table's first rows may start: a header band of a few lines."""
    return 3.5 * pitch(b) if b.line_count == 1 else 1.5 * pitch(b)


#: a financial statement's title ("Condensed Consolidating Statement of Operations"), not a caption naming
#: some of its lines ("Selected income statement data")
_STATEMENT_TITLE = re.compile(r"\bstatements?\s+of\b|\bbalance\s+sheets?(?:\s*\([^)]*\))?\s*$", re.I)


def recurring_captions(document: Document, headings: Sequence[Heading],
                       table_line: Callable[[Block], bool]) -> set[int]:
    """Positions in ``headings`` (layout headings in reading order) of a table caption that recurs: one text,
    on two or more pages, every time one un-numbered block right over table rows (``table_line``) set
    smaller than it.  One occurrence that opens text instead keeps them all."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, h in enumerate(headings):
        if h.source == "layout" and h.block_end - h.block == 1:
            groups[normalize_title(h.text)].append(i)
    out: set[int] = set()
    for found in groups.values():
        if len({headings[i].page for i in found}) >= 2 \
                and all(_over_rows(document, headings[i], table_line) for i in found):
            out.update(found)
    return out


def _over_rows(document: Document, h: Heading, table_line: Callable[[Block], bool]) -> bool:
    b = document.blocks[h.block]
    if numbered(b) or _STATEMENT_TITLE.search(h.text):
        return False  # a statement's title heads each of its pages
    page = document.page_blocks(h.page)
    k = next(n for n, c in enumerate(page) if c.index == b.index)
    j = _rows_below(page, [table_line(c) for c in page], k, _reach(b))
    return j is not None and page[j].size < 0.95 * b.size


#: a date in a list of officers ("(through May 1, 2023)") is no row of figures
_DATE = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2},\s+\d{4}\)?", re.I)


def lone_captions(document: Document, headings: Sequence[Heading], table_line: Callable[[Block], bool],
                  figures: Callable[[str], bool], text_size: float) -> set[int]:
    """Positions in ``headings`` of a table's caption: a layout heading of one block and up to two lines, in
    the text's size (``text_size``), not numbered, centred or a statement's title, right over a table
    (``table_line``) whose rows (``figures``: a line is a row of figures) are set smaller, with no running
    text from it to the next heading, which stands out as much, is no generic sub-heading (its words head
    three or more sections) and discusses none of the table's rows."""
    count = Counter(normalize_title(h.text) for h in headings)
    flags: dict[int, list[bool]] = {}  # page -> its blocks' table_line, worked out once
    out: set[int] = set()
    for i, h in enumerate(headings[:-1]):
        b, nxt = document.blocks[h.block], headings[i + 1]
        if h.source != "layout" or h.block_end - h.block != 1 or b.line_count > 2 or b.size > 1.1 * text_size \
                or numbered(b) or _STATEMENT_TITLE.search(h.text) or is_contents_title(h.text, plain=True) \
                or _prominence(document.blocks[nxt.block]) < _prominence(b) or count[normalize_title(nxt.text)] >= 3:
            continue
        page = document.page_blocks(h.page)
        k = next(n for n, c in enumerate(page) if c.index == b.index)
        # no smaller type or no table right under it (the page's other blocks are looked at only when there is)
        if k + 1 == len(page) or page[k + 1].size > 0.95 * b.size \
                or (h.page not in flags and not any(table_line(c) for c in page[k + 1:k + 1 + _BAND])):
            continue
        upright = [c for c in page if not c.rotated] or list(page)
        span = (min(c.bbox[0] for c in upright), max(c.bbox[2] for c in upright))
        if h.page not in flags:
            flags[h.page] = [table_line(c) for c in page]
        table = flags[h.page]
        j = _rows_below(page, table, k, _reach(b))
        # (a sub-heading in the header band is the title's: "Liquidity and Capital Resources" over "Cash
        # Conversion Cycle" over its table)
        if j is None or page[j].size > 0.85 * b.size or nxt.block <= page[j].index \
                or (_centred(b, span) and b.bbox[2] - b.bbox[0] < 0.6 * (span[1] - span[0])):
            continue
        rows = [normalize_title(ln) for c, t in zip(page[j:], table[j:]) if t for ln in c.text.split("\n")]
        if sum(figures(_DATE.sub("", ln)) for c, t in zip(page[j:j + 8], table[j:j + 8]) if t
               for ln in c.text.split("\n")) < 2 or any(r.startswith(normalize_title(nxt.text)) for r in rows):
            continue
        if not _own_text(document, h, nxt, table_line, text_size):
            out.add(i)
    return out


def _own_text(document: Document, h: Heading, nxt: Heading, table_line: Callable[[Block], bool],
              text_size: float) -> bool:
    """Running text of ``h``'s own between it and the next heading (or a page past the next: a section)."""
    for c in document.blocks[h.block + 1:nxt.block]:
        if c.page > h.page + 1:
            return True
        if not table_line(c) and c.size >= 0.95 * text_size and not _NOTE.match(c.text) \
                and (prose(c) or (len(c.text) >= 80 and c.text.rstrip().endswith("."))):
            return True
    return False


class Edge(NamedTuple):
    """A label over a table's first rows, as the edge rules read it: the page's ``blocks``, which are table rows
    (``table``), the candidates, the blocks sharing a row with another (``side``), the page's text span
    (left and right edges), the verdicts of labels reached down a run (``chained``), the label's position ``k``
    and the rows' ``j``."""

    blocks: Sequence[Block]
    table: Sequence[bool]
    candidates: set[int]
    side: set[int] | frozenset[int]
    text: tuple[float, float]
    chained: dict[int, bool]
    k: int
    j: int


def _column_header(e: Edge) -> bool:
    # (a cell sharing its row with other cells is a header cell wherever it stands over the rows)
    b, rows = e.blocks[e.k], e.blocks[e.j]
    return _years_last(b) or (b.size <= 1.2 * rows.size and (b.index in e.side or _over_figures(b, rows, e.text)
                                                              or _spans_cells(e.blocks, e.table, e.k, e.j)))


def _announced_caption(e: Edge) -> bool:
    return _announced(e.blocks, e.table, e.k) and not _centred(e.blocks[e.k], e.text)


def _row_group_under_header(e: Edge) -> bool:
    b, rows = e.blocks[e.k], e.blocks[e.j]
    up = e.blocks[e.k - 1] if e.k else None
    return up is not None and (up.index in e.side or e.table[e.k - 1]) and _short(up) \
        and -0.2 * pitch(b) <= b.bbox[1] - up.bbox[3] <= 0.6 * pitch(b) and b.size <= 1.1 * rows.size


def _row_group_of_run(e: Edge) -> bool:
    # asked last: the run's verdicts are kept in ``chained`` as the labels are reached
    return e.blocks[e.k].line_count <= 2 and _group(e.blocks, e.table, e.candidates, e.side, e.k, e.text[0], e.chained)


class EdgeRule(NamedTuple):
    """One rule at a table's edge: its name, whether it holds for a label, its reason."""

    name: str
    holds: Callable[[Edge], bool]
    reason: NotHeading


#: the rules at a table's edge, asked in this order for each label over a table's first rows
EDGE_RULES: tuple[EdgeRule, ...] = (
    EdgeRule("a column header over the figures", _column_header, NotHeading.COLUMN_HEADER_OVER_FIGURES),
    EdgeRule("a caption the sentence above announces", _announced_caption, NotHeading.ANNOUNCED_CAPTION),
    EdgeRule("a row group under the header", _row_group_under_header, NotHeading.ROW_GROUP_UNDER_HEADER),
    EdgeRule("a row group down a run of rows", _row_group_of_run, NotHeading.ROW_GROUP_OF_RUN),
)


def edge_codes(blocks: Sequence[Block], candidates: set[int], table: Sequence[bool],
               side: set[int] | frozenset[int]) -> dict[int, NotHeading]:
    """Why candidates at a table's edge (over its first rows) open no section; ``table[k]``: whether
    ``blocks[k]`` is table rows, ``side``: blocks sharing a row with another (header cells)."""
    out: dict[int, NotHeading] = {}
    upright = [c for c in blocks if not c.rotated] or list(blocks)
    text = (min(c.bbox[0] for c in upright), max(c.bbox[2] for c in upright))
    chained: dict[int, bool] = {}
    for k, b in enumerate(blocks):
        if b.index not in candidates or table[k] or numbered(b) or b.line_count > 3 or len(b.text) > 120 \
                or (SENTENCE.search(b.text.rstrip()) and not b.text.rstrip().endswith(":")) \
                or _STATEMENT.search(b.text):
            continue
        j = _rows_below(blocks, table, k, _reach(b))
        if j is None:
            continue
        edge = Edge(blocks, table, candidates, side, text, chained, k, j)
        reason = next((rule.reason for rule in EDGE_RULES if rule.holds(edge)), None)
        if reason is not None:
            out[b.index] = reason
    return out


def edge_reasons(blocks: Sequence[Block], candidates: set[int], table: Sequence[bool],
                 side: set[int] | frozenset[int]) -> dict[int, str]:
    """:func:`edge_codes` in words."""
    return in_words(edge_codes(blocks, candidates, table, side))
