"""Headings, the second stage: which blocks are headings, from three signals.

Modules: :mod:`.detect` (layout scoring), :mod:`.not_headings` (lines that only look like headings:
table labels and captions, list entries, form fields, signature blocks and board lists, closings, cover
lines; each ruled out with a reason code), :mod:`.wrapped` (wrapped titles joined whole), :mod:`.outline` (the
PDF's bookmarks located on their pages), :mod:`.contents_entries` / :mod:`.page_labels` / :mod:`.contents` (the printed table of
contents: entries, their pages, located as headings).  Levels are the next stage
(:mod:`structrag.levels`); :func:`structrag.pipeline.detect_headings` joins the two.
"""

from __future__ import annotations

from .contents import ContentsResult, contents_entries, locate_contents
from .contents_entries import ContentsEntry
from .detect import BodyStyle, body_style, layout_headings, merge_headings, score_block
from .outline import LocatedEntry, heading_from_block, locate_outline

__all__ = ["ContentsEntry", "ContentsResult", "contents_entries", "locate_contents", "BodyStyle", "body_style",
           "layout_headings", "merge_headings", "score_block", "LocatedEntry", "heading_from_block",
           "locate_outline"]
