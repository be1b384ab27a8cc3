"""Lines that look like headings but are not: table furniture, list entries, signatures, closings, cover lines.

Layout scoring (:mod:`..detect`) judges a block by its look; these rules rule a candidate out by what it is,
each verdict a :class:`NotHeading` code (its words: :data:`REASON_TEXT`).  Modules: :mod:`.by_text` (the text
alone, and cover pages), :mod:`.page` (the page around the block, and :func:`rule_out` over a document),
:mod:`.rows` (table lines by their text), :mod:`.lists` (lists set like headings), :mod:`.tables` (labels at a
table's edge, and tables' captions among the detected headings), :mod:`.signatures` (names and job titles),
:mod:`.repeats` (a title repeated at the top of the next page), :mod:`.reasons` (the codes and their words).
"""

from __future__ import annotations

from .by_text import cover_code, cover_reason, text_code, text_reason
from .page import page_codes, page_reasons, rule_out
from .reasons import REASON_TEXT, NotHeading
from .repeats import running_repeats
from .rows import is_table_line, row_of_figures
from .tables import lone_captions, recurring_captions

__all__ = [
    "NotHeading",
    "REASON_TEXT",
    "text_code",
    "text_reason",
    "cover_code",
    "cover_reason",
    "page_codes",
    "page_reasons",
    "rule_out",
    "is_table_line",
    "row_of_figures",
    "running_repeats",
    "recurring_captions",
    "lone_captions",
]
