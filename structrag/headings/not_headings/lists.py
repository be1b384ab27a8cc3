"""Lists set like headings: numbered items that follow each other, stacked form fields, stacked labels.

A heading has its section under it; the entries of a list follow one another with nothing of their own
between them.  :func:`list_items`, :func:`form_fields`, :func:`stacked_labels` and :func:`contents_listing`
find such runs among one page's blocks (reading order) for :mod:`.page`'s rules, and
:func:`figure_labels` a map's or a diagram's labels spread over a page with no text, :func:`exhibit_index` the rows
of a filing's index of exhibits;
:func:`repeated_fields` finds a form's fields over the whole document (:func:`.page.rule_out`).
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from ...model import Block
from ...numbering import parse_numbering
from ...text import WIDE_CHAR
from .._geometry import close_below, pitch

__all__ = ["list_items", "form_fields", "repeated_fields", "contents_listing", "stacked_labels", "figure_labels",
           "exhibit_index", "numbered", "SENTENCE"]


def numbered(b: Block) -> bool:
    """A numbered title ("9. PROPERTY, PLANT AND EQUIPMENT", "Note 4") between two tables is still a heading."""
    return parse_numbering(b.text)[0] is not None


#: the numberings of list items as well as of headings; "Item 7", "Note 4", "Article II" and Chinese
#: ordinals (a prospectus sets "一、" titles one under another) number headings only
_LIST_SCHEMES = {"decimal", "paren-num", "paren-roman", "paren-alpha", "paren-ALPHA", "roman", "roman-lower",
                 "alpha", "alpha-lower"}
_LIST_RUN = 3
#: the end of a sentence or of a label (a colon)
SENTENCE = re.compile(r"[.;:!?]['\"”’)]?$")
#: a full stop of a sentence (a colon ends a label as often)
_STOP = re.compile(r"[.;!?]['\"”’)]?$")


def list_items(blocks: Sequence[Block]) -> set[int]:
    """Block indices of numbered list items: three or more consecutive numbers of one kind and look
    ("1.", "2.", "3." or "(a)", "(b)", "(c)") with no running text between them.  Headings have their
    sections between them; the items of a list (registration statements an auditor consents to, the
    terms of a letter) follow each other."""
    out: set[int] = set()
    open_runs: dict[tuple, list[tuple[int, int]]] = {}  # key -> [(position on the page, value)]
    done: list[list[tuple[int, int]]] = []
    item_x: float | None = None  # where the item above starts, while its own lines go on under it
    for k, b in enumerate(blocks):
        text = " ".join(b.text.split())
        num, rest = parse_numbering(text)
        item = (num is not None and num.scheme in _LIST_SCHEMES and len(num.values) == 1 and b.line_count <= 2
                and bool(rest.strip()) and len(text) < 200 and not WIDE_CHAR.search(text))
        if not item:
            # the item's own next lines, set right under it and indented past its number, go on with it
            if item_x is not None and b.bbox[0] > item_x + 2 and close_below(blocks[k - 1], b, 0.5) \
                    and blocks[k - 1].bbox[2] >= b.bbox[2] - 0.15 * (b.bbox[2] - b.bbox[0]):
                continue
            # or, set out to the margin, the rest of the item's sentence ("(i) By cash, ... provided that" /
            # "the Company may limit ...")
            if item_x is not None and b.bbox[0] < item_x - 2 and close_below(blocks[k - 1], b, 0.5) \
                    and not _STOP.search(blocks[k - 1].text.rstrip()) and b.line_count <= 3:
                continue
            item_x = None
            # running text ends every run open above it: a paragraph, or one sentence ("See Section 6.1(G)
            # of the Plan." under a plan's sub-heading); a wrapped item's last word ("8") does not
            if b.line_count >= 2 or len(text) >= 120 or (SENTENCE.search(text) and len(text.split()) >= 3):
                done.extend(open_runs.values())
                open_runs.clear()
            continue
        item_x = b.bbox[0]
        key = (num.scheme, round(b.size * 2) / 2, b.bold, b.italic)
        run = open_runs.get(key)
        if run is not None and num.values[-1] == run[-1][1] + 1:
            run.append((k, num.values[-1]))
        else:
            if run is not None:
                done.append(run)
            open_runs[key] = [(k, num.values[-1])]
    done.extend(open_runs.values())
    for run in done:
        if len(run) >= _LIST_RUN:
            out.update(blocks[k].index for k, _ in run)
    return out


#: "Publication Date: 2022-04-24", "Given Name: Owen": a field's name (one to three words) and its value
_FIELD = re.compile(r"^[A-Z][\w()/&'’-]*(?:\s+[\w()/&'’-]+){0,2}\s*:\s*\S")
_FIELD_RUN = 3


def form_fields(blocks: Sequence[Block]) -> set[int]:
    """Block indices of form fields: three or more one-line "Name: value" lines stacked with no running text
    between them (a document's metadata, a submitter's details).  Run-in headings ("Goal 1: Safety") have
    their sections between them."""
    out: set[int] = set()
    run: list[Block] = []
    for b in list(blocks) + [None]:  # type: ignore[list-item]
        if b is not None and b.line_count == 1 and len(b.text) <= 120 and _FIELD.match(b.text.strip()) \
                and (not run or close_below(run[-1], b, 1.5)):
            run.append(b)
            continue
        if len(run) >= _FIELD_RUN:
            out.update(x.index for x in run)
        run = [b] if b is not None and b.line_count == 1 and _FIELD.match(b.text.strip()) else []
    return out


#: a field's name alone on its line, ending on a colon ("Stakeholder(s):", "Lead agencies:")
_NAME = re.compile(r"^[A-Z][\w()/&'’.-]*(?:\s+[\w()/&'’.-]+){0,3}\s*:$")
#: on this many pages or more, the same name over a value is a form's field, not a run-in title
_FIELD_PAGES = 3
#: a field is set at most this much larger than the running text
_FIELD_SIZE = 1.2


def repeated_fields(blocks: Sequence[Block], text_size: float) -> set[int]:
    """Block indices of a form's repeated fields: a name ending on a colon, alone on its first line, that
    the document prints on :data:`_FIELD_PAGES` or more pages over a short value (the rest of its block,
    or the block right under it: "Stakeholder(s):" / "Transportation Workers"), in about the running text's
    size.  Both the name and the value are taken.  A run-in title with a colon ("Overview:") has a
    paragraph under it, not a value; a title set large ("Area of action:" / "environment & energy") opens
    its section.

    ``blocks``: the whole document's blocks, in reading order; ``text_size``: the running text's size
    (:func:`.detect.body_style`).
    """
    def value(lines: Sequence[str]) -> bool:
        # one or two short lines, no sentence: names of things, not text about them
        return 0 < len(lines) <= 2 and all(len(x) <= 80 for x in lines) and not _STOP.search(lines[-1].rstrip())

    fields: list[tuple[str, int, int | None]] = []  # (name, block index, value block index)
    for k, b in enumerate(blocks):
        if b.size > _FIELD_SIZE * text_size:
            continue  # a title printed as "Area of action:" over its subject, set large, opens a section
        lines = b.text.strip().split("\n")
        name = " ".join(lines[0].split())
        if len(name) > 50 or not _NAME.match(name):
            continue
        if len(lines) > 1:
            if value(lines[1:]):
                fields.append((name, b.index, None))
        elif k + 1 < len(blocks):
            nxt = blocks[k + 1]
            if nxt.page == b.page and close_below(b, nxt, 0.6) and abs(nxt.bbox[0] - b.bbox[0]) <= pitch(b) \
                    and value(nxt.text.strip().split("\n")):
                fields.append((name, b.index, nxt.index))
    pages: dict[str, set[int]] = {}
    page_of = {b.index: b.page for b in blocks}
    for name, i, _ in fields:
        pages.setdefault(name.casefold(), set()).add(page_of[i])
    out: set[int] = set()
    at = {b.index: k for k, b in enumerate(blocks)}
    for name, i, j in fields:
        if len(pages[name.casefold()]) >= _FIELD_PAGES:
            out.add(i)
            if j is not None:
                out.add(j)
            out.update(_more_values(blocks, at[j if j is not None else i], value))
    return out


def _more_values(blocks: Sequence[Block], k: int, value: Callable[[Sequence[str]], bool]) -> list[int]:
    """Indices of the blocks that go on with the value in ``blocks[k]``: a list of names set as a grid
    ("Women", "Individuals with Disabilities" beside it, "People of Color" under them; agencies with
    their roles under each), each on the same row as one before it or right under them with no space
    between.  A title after the list stands apart by a gap."""
    run = [blocks[k]]
    out: list[int] = []
    for c in blocks[k + 1:]:
        lines = c.text.strip().split("\n")
        # (a long name wraps: "MARITIME ADMINISTRATION (MARAD)" / "NATIONAL HIGHWAY TRAFFIC SAFETY" / ...)
        if c.page != run[0].page or len(lines) > 3 or not value(lines[:2]) or not value(lines[-1:]):
            break
        line = pitch(c)
        below = -0.5 * line <= c.bbox[1] - max(r.bbox[3] for r in run) <= 0.3 * line
        beside = any(r.bbox[1] - 0.5 * line <= c.bbox[1] <= r.bbox[3] and c.bbox[0] > r.bbox[2] for r in run)
        if not (below or beside):
            break
        run.append(c)
        out.append(c.index)
    return out


#: a page number before a title ("122 INCOME STATEMENT", "126 1. Basics")
_LEADING_PAGE = re.compile(r"^(\d{1,4})\s+(?:\d{1,2}\.\s+)?[^\W\d_]")
_LISTING = 4


#: an exhibit index's header ("Exhibit No. Description of Exhibit", "Exhibit Number")
_EXHIBIT_HEADER = re.compile(r"^exhibits?\s+(?:no\.?|number|#)(?:\s|$)", re.I)
#: an exhibit's number opening its row: "31.1", "32", "101.INS", "10.2*", "4(a)"
_EXHIBIT_NO = re.compile(r"^\d{1,3}(?:\.\d{1,3})*(?:\.[A-Z]{2,4}|\([a-z]\))?[*†#]*\s+\S")


def exhibit_index(blocks: Sequence[Block]) -> set[int]:
    """Block indices of an exhibit index's rows: under its header row ("Exhibit No."), the lines that open
    on an exhibit's number at the header's left edge ("31.1 Certification.(a)"), whose decimal numbers read
    as numbered sub-sections."""
    out: set[int] = set()
    left: float | None = None
    for b in blocks:
        text = " ".join(b.text.split())
        if left is None:
            if b.line_count == 1 and _EXHIBIT_HEADER.match(text):
                left = b.bbox[0]
            continue
        if _EXHIBIT_NO.match(text) and abs(b.bbox[0] - left) <= 2 * pitch(b):
            out.add(b.index)
    return out


def contents_listing(blocks: Sequence[Block]) -> set[int]:
    """Block indices of a contents listing that leads with its page numbers ("122 INCOME STATEMENT",
    "123 BALANCE SHEET" on a part's divider page): :data:`_LISTING` or more blocks opening on a number, the
    numbers never going down when read column by column, and not a numbered list (which goes up by exactly
    one at nearly every step).  Extraction marks whole contents pages; this finds the ones set as a few
    titles on a page of their own."""
    entries = [(b.column, b.bbox[1], int(m.group(1)), b.index) for b in blocks
               if (m := _LEADING_PAGE.match(b.text.strip())) and b.line_count <= 30]
    if len(entries) < _LISTING:
        return set()
    values = [v for _, _, v, _ in sorted(entries)]
    steps = [b - a for a, b in zip(values, values[1:])]
    if sum(1 for d in steps if d < 0) > 0.1 * len(steps) or sum(1 for d in steps if d == 1) > 0.5 * len(steps):
        return set()
    return {i for *_, i in entries}


#: short labels stacked one under another, none with text of its own: a list ("Pedestrians", "Bicycle Riders",
#: "Scooter Riders"), not sections
_LABEL_RUN = 3


def stacked_labels(blocks: Sequence[Block]) -> set[int]:
    """Block indices of :data:`_LABEL_RUN` or more short one-line labels in one look, set flush one under
    another at line spacing with nothing between them: the entries of a list.  Each heading has its text
    under it; a title broken over lines is joined before (:mod:`.wrapped`) or fills its lines."""
    widest = max((b.bbox[2] - b.bbox[0] for b in blocks), default=0.0)

    def label(b: Block) -> bool:
        # (a field's name ends on a colon: "Participant:", "Grant Date:")
        return (b.line_count == 1 and len(b.text) <= 60 and not numbered(b) and not _STOP.search(b.text.rstrip())
                and b.bbox[2] - b.bbox[0] < 0.5 * widest)

    def same(a: Block, b: Block) -> bool:
        # flush left, or flush right (a map's or a chart's labels set against its left edge)
        return (abs(a.size - b.size) <= 0.05 * a.size and a.bold == b.bold and a.italic == b.italic
                and (abs(a.bbox[0] - b.bbox[0]) <= 2 or abs(a.bbox[2] - b.bbox[2]) <= 2) and close_below(a, b, 0.6))

    out: set[int] = set()
    run: list[Block] = []
    for b in list(blocks) + [None]:  # type: ignore[list-item]
        if b is not None and label(b) and (not run or same(run[-1], b)):
            run.append(b)
            continue
        if len(run) >= _LABEL_RUN:
            out.update(x.index for x in run)
        run = [b] if b is not None and label(b) else []
    return out


#: a page of labels: this many blocks or more, none of them running text
_FIGURE_BLOCKS = 12
#: a look set at this many places across the page labels a figure
_FIGURE_LOOK = 5
_ENDS_NUMBER = re.compile(r"\d\W{0,2}$")


def _places(xs: Sequence[float], apart: float = 10.0) -> int:
    """How many left edges, more than ``apart`` from each other, ``xs`` stand at."""
    edges: list[float] = []
    for x in sorted(xs):
        if not edges or x - edges[-1] > apart:
            edges.append(x)
    return len(edges)


def figure_labels(blocks: Sequence[Block]) -> set[int]:
    """Block indices of the labels on a page that holds nothing else: a map's places, a diagram's boxes.

    The page has :data:`_FIGURE_BLOCKS` blocks or more, none with a sentence or a line of eight words or
    more and few ending on a number (a contents page's entries do); Chinese text, without spaces between
    words, is left alone.  A look (size, weight, slant) given to :data:`_FIGURE_LOOK` blocks or more whose
    left edges stand at four places or more is a figure's labels (a list or a column of titles stands at
    one or two); the page's title, in a look of its own, stays."""
    upright = [b for b in blocks if not b.rotated and b.text.strip()]
    if len(upright) < _FIGURE_BLOCKS or any(WIDE_CHAR.search(b.text) for b in upright):
        return set()
    for b in upright:
        if any(len(ln.split()) >= 8 for ln in b.text.split("\n")) \
                or (_STOP.search(b.text.rstrip()) and len(b.text.split()) >= 4):
            return set()
    if 5 * sum(1 for b in upright if _ENDS_NUMBER.search(b.text.rstrip())) > len(upright):
        return set()
    looks: dict[tuple, list[Block]] = {}
    for b in upright:
        looks.setdefault((round(b.size * 2), b.bold, b.italic), []).append(b)
    return {b.index for look in looks.values()
            if len(look) >= _FIGURE_LOOK and _places([b.bbox[0] for b in look]) >= 4 for b in look}
