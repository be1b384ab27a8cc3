"""Titles written as sentences: a filing's risk factors.

A 10-K's risk factors are each headed by a sentence in bold ("We face significant competition that may
reduce our profits."), set apart above and followed by the paragraphs that discuss it.  Layout scoring
(:mod:`.detect`) marks sentence punctuation down, rightly for a bold sentence inside a paragraph; a run of
such sentences, each on its own above its own paragraphs and all in one style, is a run of sub-section
titles.  Authors' outlines list them.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from ..model import Block
from ..text import starts_lower
from ._geometry import pitch, prose

__all__ = ["sentence_titles"]

#: a run: at least this many sentence titles in one style in the document
_RUN = 5
_MIN_WORDS = 6


def _sentence_title(blocks: Sequence[Block], i: int) -> bool:
    """``blocks[i]`` is a bold sentence of one to three lines, set apart above, a paragraph in lighter type
    right under it."""
    b = blocks[i]
    text = b.text.rstrip()
    if not b.bold or b.rotated or b.line_count > 3 or len(text.split()) < _MIN_WORDS or not text.endswith(".") \
            or starts_lower(text) or i + 1 >= len(blocks):
        return False
    nxt = blocks[i + 1]
    if nxt.page != b.page or nxt.bold or not (prose(nxt) or (nxt.line_count >= 2 and len(nxt.text) >= 120)) \
            or nxt.size > b.size or not -0.2 * pitch(b) <= nxt.bbox[1] - b.bbox[3] <= 1.2 * pitch(b):
        return False
    up = blocks[i - 1] if i else None
    # set apart: a paragraph's space above it, or the top of its page (a run's titles are not a paragraph's
    # lines in bold)
    return up is None or up.page != b.page or b.bbox[1] - up.bbox[3] >= 0.4 * pitch(b)


def sentence_titles(blocks: Sequence[Block], taken: set[int]) -> list[int]:
    """Indices (``Block.index``) of the document's ``blocks`` that are sentence titles of a run, leaving out
    those in ``taken`` (already headings or ruled out)."""
    runs: dict[tuple, list[int]] = defaultdict(list)
    for i, b in enumerate(blocks):
        if b.index not in taken and _sentence_title(blocks, i):
            runs[(round(b.size * 2) / 2, b.italic, b.font)].append(b.index)
    return sorted(k for run in runs.values() if len(run) >= _RUN for k in run)
