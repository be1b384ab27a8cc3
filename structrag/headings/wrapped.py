"""Whole headings: a title wrapped over several blocks is one heading, on every path.

Layout detection (:func:`join_wrapped`) joins the blocks of a wrapped title; the printed contents'
headings (:func:`continues_title`, used by :func:`.detect.merge_headings`) take in the wrapped rest of
their title so that it does not become a layout heading of its own.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from ..model import Block, Document, Heading
from ..numbering import is_bare_label, parse_numbering
from ..text import latin_capitals, letter_count, normalize_title, starts_lower
from .not_headings import NotHeading, text_code
from .outline import heading_from_block
from .whole_text import QUALIFIER, REGISTRANT

__all__ = ["join_wrapped", "continues_title", "union_bbox"]


def _text(b: Block) -> str:
    return " ".join(b.text.split())


def join_wrapped(document: Document, scored: Sequence[tuple[Block, float, tuple[str, ...]]],
                 rejected: Mapping[int, NotHeading]) -> list[Heading]:
    """Headings from the scored blocks, each wrapped title whole.

    A title wraps onto blocks of the same style stacked closely in one column, or, in an exhibit's title block,
    onto lines of capitals a line's height apart, centred on one axis (:func:`_spaced_capitals`). The next block
    joins when the title so far does not end a sentence (a comma does not) and the next block does not open a
    number of its own ("Part 1" + "I. Overview"), unless the line before ends cut ("... PURSUANT TO" + "SECTION
    302 OF ..."); a block that did not score joins only after a line that ends cut or when it starts in lower
    case ("... property, plant and" + "equipment") or is a bracketed acronym ("(IIRS)"), and a company's name
    over a title in its style is the title's first line ("ACTIVISION BLIZZARD, INC." + "2014 INCENTIVE PLAN"); a
    registrant's line ("... AND SUBSIDIARIES") takes in its statement's title. A scored block whose line above
    is the cut first line of the same title takes that line in; one whose line above was ruled out
    (``rejected``: a signature, a table label) goes with it.
    """
    blocks = document.blocks
    score_of = {b.index: (s, why) for b, s, why in scored}
    heads: list[Heading] = []
    taken_to = -1  # last block index held by a heading
    for b, s, why in scored:
        if b.index <= taken_to:
            continue
        first = b.index
        prev = blocks[first - 1] if first > 0 else None
        if prev is not None and prev.index in rejected and _wraps_into(prev, b) and not _opens_number(prev, b):
            continue
        if (prev is not None and first - 1 > taken_to and prev.index not in score_of and prev.role == "body"
                and not prev.rotated and _wraps_into(prev, b)
                and _short(prev)
                and (_looks_cut(prev.text) or starts_lower(b.text) or _COMPANY.search(prev.text.rstrip()))
                and letter_count(prev.text) >= 2 and text_code(_text(prev), prev.page) is None):
            first = prev.index
        last = b.index
        size = sum(len(x.text) for x in blocks[first:last + 1])
        while last + 1 < len(blocks):
            cur, nxt = blocks[last], blocks[last + 1]
            if not (_wraps_into(cur, nxt) or _spaced_capitals(document, cur, nxt)) or size + len(nxt.text) > 250:
                break
            # a registrant's line ("ACTIVISION BLIZZARD, INC. AND SUBSIDIARIES") heads its statement's title,
            # which may have been ruled out on its own as the label of the rows under it
            registrant = REGISTRANT.search(_text(cur)) is not None
            if (nxt.index in rejected and not registrant) or (
                    (registrant or nxt.index not in score_of) and text_code(_text(nxt), nxt.page) is not None):
                break  # "Ratio of Earnings to Fixed Charges" + "(in millions)": the unit line stays out
            cut = _looks_cut(cur.text)
            # a cut line runs on into a number in the same capitals ("... PURSUANT TO" + "SECTION 302 OF ..."),
            # not into a list ("WHAT WE WILL NOT PAY FOR" + "A. Service calls")
            if _opens_number(cur, nxt) and not (cut and latin_capitals(cur.text) == latin_capitals(nxt.text)):
                break
            # the title's acronym or qualifier in brackets on a line of its own ("Indian Institute of Remote
            # Sensing" + "(IIRS)") ends it, wherever the line broke; units and "(continued)" stopped above
            goes_on = starts_lower(nxt.text) or QUALIFIER.match(_text(nxt)) is not None or registrant
            if nxt.index not in score_of and not ((cut or goes_on) and _short(nxt)):
                break
            # a line that left room for the next one's first word was not wrapped: two titles stacked
            # ("Item 8. Financial Statements and Supplementary Data" over "Report of Independent ...")
            if not cut and not goes_on and _room_left(document, cur, nxt):
                break
            last += 1
            size += len(nxt.text)
        found = [score_of[i] for i in range(first, last + 1) if i in score_of]
        best = max(x[0] for x in found)
        n = last - first + 1
        reasons = why + ((f"joined {n} blocks",) if n > 1 else ())
        heads.append(heading_from_block(document, first, last, score=best, reasons=reasons))
        taken_to = last
    return heads


#: a line that ends a sentence (a comma does not: a wrapped title goes on after one; nor does a company's
#: name, "ACTIVISION BLIZZARD, INC." over "2014 INCENTIVE PLAN")
_LINE_END = re.compile(r"[.;!。；！]['\"”’)]?$")
_COMPANY = re.compile(r"\b(?:inc|ltd|corp|co|plc|n\.a|s\.a|l\.p)\.$", re.I)
#: a line cut inside a title: it ends on a small word or a joining mark
_CUT = re.compile(r"(?:\b(?:and|or|of|the|for|to|in|on|with|by|from|at|as|a|an|under|pursuant|between|into|its|their|our)"
                  r"|[,&/\-–—])$", re.I)


def _ends_line(text: str) -> bool:
    """The line ends a sentence, a company's name ("... INC.") aside."""
    t = text.rstrip()
    return _LINE_END.search(t) is not None and _COMPANY.search(t) is None


def _looks_cut(text: str) -> bool:
    return _CUT.search(text.rstrip()) is not None


def _short(b: Block) -> bool:
    return b.line_count <= 2 and len(b.text) <= 120


def _wraps_into(a: Block, b: Block) -> bool:
    """Whether ``b`` can be the next line of a title ending with ``a``: same style, close, sentence not ended."""
    return (b.index == a.index + 1 and not b.rotated and b.role == "body" and _joinable(a, b)
            and not _ends_line(a.text))


def _joinable(a: Block, b: Block) -> bool:
    if a.page != b.page or a.column != b.column:
        return False
    # a title's colon hands over to its subtitle, which may be set in italics ("... Language Models:" over
    # "Surveying the Landscape of ...")
    if abs(a.size - b.size) > 0.6 or a.bold != b.bold or (a.italic != b.italic and not a.text.rstrip().endswith(":")):
        return False
    gap = b.bbox[1] - a.bbox[3]
    line_h = (a.bbox[3] - a.bbox[1]) / max(a.line_count, 1)
    # line boxes of large type set tight may overlap (14 pt lines 15 pt apart in 18 pt boxes); a label
    # ("APPENDIX B") set that close over its title stays a line of its own, as it always did
    if gap < -(1.0 if is_bare_label(a.text) else max(1.0, 0.2 * line_h)) or gap > 0.9 * line_h:
        return False
    return b.bbox[0] < a.bbox[2] and a.bbox[0] < b.bbox[2]  # horizontally overlapping


def _spaced_capitals(document: Document, a: Block, b: Block) -> bool:
    """``b`` is the next line of a title block set in capitals a line apart, every line centred on one axis
    away from the column's left edge: an exhibit's title ("APPENDIX" / "TO" / "ACTIVISION BLIZZARD, INC." /
    "2014 INCENTIVE PLAN" / "... AWARD TERMS").  A title and the first title under it stand further apart
    ("DESCRIPTION OF SECURITIES" over "DESCRIPTION OF COMMON STOCK", the gap 1.08 times the line's height)."""
    if b.index != a.index + 1 or b.rotated or b.role != "body" or a.page != b.page or a.column != b.column:
        return False
    if a.line_count != 1 or b.line_count != 1 or abs(a.size - b.size) > 0.6 or a.bold != b.bold \
            or not a.text.strip().isupper() or not b.text.strip().isupper():
        return False
    t = a.text.rstrip()
    if _ends_line(t) or is_bare_label(t):
        return False  # a label ("SCHEDULE II") over its title stands on its own
    h = a.bbox[3] - a.bbox[1]
    if not 0.9 * h < b.bbox[1] - a.bbox[3] <= 1.05 * h:  # double-spaced: the gap is the line's own height
        return False
    left = _column_span(document, a)[0]
    char = (a.bbox[2] - a.bbox[0]) / max(len(t), 1)
    return min(a.bbox[0], b.bbox[0]) > left + 4 * char \
        and abs((a.bbox[0] + a.bbox[2]) - (b.bbox[0] + b.bbox[2])) / 2 <= 2 * char


def _column_span(document: Document, a: Block) -> tuple[float, float]:
    """Left and right edges of ``a``'s column on its page."""
    col = [x for x in document.page_blocks(a.page) if x.column == a.column and not x.rotated]
    return min((x.bbox[0] for x in col), default=a.bbox[0]), max((x.bbox[2] for x in col), default=a.bbox[2])


def _room_left(document: Document, a: Block, b: Block) -> bool:
    """One-line ``a`` ends short of its column's right edge by more than ``b``'s first word (at ``a``'s own
    average character width, with a space and one character to spare): a line broken by hand or a title of
    its own."""
    words = b.text.split()
    if a.line_count != 1 or not words or not a.text.strip():
        return False
    left, right = _column_span(document, a)
    char = (a.bbox[2] - a.bbox[0]) / len(a.text.strip())
    # lines centred on one axis away from the left edge: a centred title broken where its designer balanced it
    if a.bbox[0] > left + 2 * char and abs((a.bbox[0] + a.bbox[2]) - (b.bbox[0] + b.bbox[2])) / 2 <= 2 * char:
        return False
    return a.bbox[2] + char * (len(words[0]) + 2) < right


def _opens_number(a: Block, b: Block) -> bool:
    """Whether ``b`` starts a number of its own after ``a`` (which is not a bare number label)."""
    return parse_numbering(b.text)[0] is not None and not is_bare_label(a.text)


def continues_title(document: Document, p: Heading, h: Heading) -> bool:
    """Whether ``h``, right after ``p``, is the rest of ``p``'s title: the blocks ``p`` holds print only
    the start of its title and, with ``h``'s text after them, print it ("CERTIFICATION ... PURSUANT TO" +
    "SECTION 302 OF THE SARBANES-OXLEY ACT OF 2002").  A sub-heading that repeats the title's last words
    ("Item 7A. ... About Market Risk" + "Market Risk") is no continuation: the title is printed whole above it."""
    if h.page != p.page or p.bbox is None or h.bbox is None:
        return False
    if not -0.25 * (h.bbox[3] - h.bbox[1]) <= h.bbox[1] - p.bbox[3] <= 2 * (h.bbox[3] - h.bbox[1]):
        return False
    whole = normalize_title(p.text)
    printed = normalize_title(" ".join(b.text for b in document.blocks[p.block:p.block_end]))
    if not printed or printed == whole or whole in printed:
        return False
    t = normalize_title(h.text)
    return bool(t) and normalize_title(printed + " " + h.text) in whole


def union_bbox(a, b):
    if a is None or b is None:
        return a or b
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
