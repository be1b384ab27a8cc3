"""Lists set like headings: numbered items that follow each other, stacked form fields, stacked labels.

A heading has its section under it; the entries of a list follow one another with nothing of their own
between them.  :func:`list_items`, :func:`form_fields` and :func:`stacked_labels` find such runs among one
page's blocks (reading order) for :func:`.not_headings.page_reasons`.
"""

from __future__ import annotations

import re
from typing import Sequence

from ..model import Block
from ..numbering import parse_numbering
from ..text import WIDE_CHAR
from ._geometry import close_below

__all__ = ["list_items", "form_fields", "stacked_labels", "numbered", "SENTENCE"]


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
        return (abs(a.size - b.size) <= 0.05 * a.size and a.bold == b.bold and a.italic == b.italic
                and abs(a.bbox[0] - b.bbox[0]) <= 2 and close_below(a, b, 0.6))

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
