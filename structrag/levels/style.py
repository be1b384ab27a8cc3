"""What a predictor knows of a heading's look: its style, numbering and place.

:func:`describe` turns a :class:`~structrag.model.Heading` into a
:class:`HeadingInfo`, reading the printed block when a document is given (a
reference heading's text can be an outline title that drops the printed
number or the capitals).  :class:`DocStyles` holds document-wide statistics
over all headings to predict (never their levels): the distinct styles ranked
by size and strength, how common each is, and the body text size.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from ..model import Document, Heading, Numbering
from ..numbering import parse_numbering, word_number
from ..text import capitals_share

__all__ = ["HeadingInfo", "DocStyles", "describe", "font_family", "style_key", "strength", "luminance"]

_SUBSET = re.compile(r"^[A-Z]{6}\+")


#: serif and monospaced faces by name; weights ("-Roman", "-Book") are cut off first, so "Helvetica-Roman"
#: and "Gotham-Book" stay sans
_SERIF = re.compile(r"times|georgia|garamond|serif|minion|palatino|cambria|caslon|baskerville|bodoni|schoolbook|"
                    r"antiqua|tiro|charter|sabon|utopia|cmr\d|lmroman|nimbusrom|stix|mercury|publico|janson", re.I)
_MONO = re.compile(r"courier|mono|consol|menlo|cmtt|lmmono|^cour", re.I)
_WEIGHT = re.compile(r"[-,](?:roman|book|regular|bold|semibold|demibold|black|heavy|medium|light|italic|oblique)\b.*$", re.I)


def font_family(font: str) -> str:
    """The font's class, ``serif``, ``mono`` or ``sans``, not its name (``ABCDEF+Arial-BoldMT`` -> ``sans``):
    a report assembled from parts set in Calibri and in Arial has one look for its titles, not two."""
    f = _WEIGHT.sub("", _SUBSET.sub("", font or ""))
    if not f:
        return ""
    return "mono" if _MONO.search(f) else "serif" if _SERIF.search(f) else "sans"


def _caps(text: str) -> bool:
    return capitals_share(text, min_letters=2, share=0.8, ascii_only=False)


@dataclass(frozen=True, slots=True)
class HeadingInfo:
    """The predictor-side view of one heading (``size`` 0: style unknown)."""

    index: int
    text: str
    page: int
    size: float
    bold: bool
    italic: bool
    color: int
    font: str
    family: str
    caps: bool
    x0: float  # left edge, share of page width (-1: unknown)
    y0: float  # top edge, share of page height (-1: unknown)
    width: float  # share of page width
    centered: bool
    numbering: Numbering | None
    n_chars: int
    n_words: int
    first_on_page: bool  # no body block above it on its page
    has_style: bool

    @property
    def key(self) -> tuple:
        return style_key(self)


def style_key(h: HeadingInfo) -> tuple:
    """Identity of a look: rounded size, weight, slant, capitals, colour, family."""
    return (round(h.size * 2) / 2, h.bold, h.italic, h.caps, h.color, h.family)


def strength(h: HeadingInfo) -> tuple:
    """Visual prominence for ordering styles: size first, then bold, capitals.

    Slant and colour have no agreed direction (an italic heading may sit above
    or below a roman one), so they do not order styles here.
    """
    return (round(h.size * 2) / 2, h.bold, h.caps)


def luminance(color: int) -> float:
    """Relative brightness 0..1 of an sRGB integer colour (white text sits on a coloured band)."""
    r, g, b = (color >> 16) & 255, (color >> 8) & 255, color & 255
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255.0


def describe(document: Document | None, headings: Sequence[Heading]) -> list[HeadingInfo]:
    out: list[HeadingInfo] = []
    for i, h in enumerate(headings):
        printed = h.text
        first_on_page = False
        pw, ph = 0.0, 0.0
        if document is not None and 0 <= h.block < len(document.blocks) and h.bbox is not None:
            b = document.blocks[h.block]
            if b.page == h.page:
                printed = b.text.split("\n")[0] if b.text else h.text
                first_on_page = document.first_block_on_or_after(h.page) == h.block
            if 0 <= h.page < len(document.page_sizes):
                pw, ph = document.page_sizes[h.page]
        num = h.numbering
        if num is None:
            num, _ = parse_numbering(h.text)
        if num is None and printed is not h.text:
            num, _ = parse_numbering(printed)
        if num is None:
            num = word_number(h.text) or (word_number(printed) if printed is not h.text else None)
        has_style = h.bbox is not None and h.size > 0
        if h.bbox is not None and pw > 0 and ph > 0:
            x0 = h.bbox[0] / pw
            y0 = h.bbox[1] / ph
            width = (h.bbox[2] - h.bbox[0]) / pw
            centered = abs((h.bbox[0] + h.bbox[2]) / 2 - pw / 2) < 0.04 * pw and x0 > 0.15
        else:
            x0 = y0 = width = -1.0
            centered = False
        caps_text = printed if has_style else h.text
        out.append(
            HeadingInfo(
                index=i,
                text=h.text,
                page=h.page,
                size=float(h.size) if has_style else 0.0,
                bold=bool(h.bold),
                italic=bool(h.italic),
                color=int(h.color),
                font=h.font,
                family=font_family(h.font),
                caps=_caps(caps_text),
                x0=x0,
                y0=y0,
                width=width,
                centered=centered,
                numbering=num,
                n_chars=len(h.text),
                n_words=len(h.text.split()),
                first_on_page=first_on_page,
                has_style=has_style,
            )
        )
    return out


class DocStyles:
    """Document-wide style statistics over the headings to predict (no levels)."""

    def __init__(self, infos: Sequence[HeadingInfo], document: Document | None = None) -> None:
        keys = [h.key for h in infos if h.has_style]
        self.counts = Counter(keys)
        self.n = max(len(keys), 1)
        sizes = sorted({k[0] for k in keys}, reverse=True)
        self.size_rank = {s: r for r, s in enumerate(sizes)}
        self.n_sizes = len(sizes)
        # styles ordered by prominence: the pymupdf4llm-like ranking
        reps: dict[tuple, HeadingInfo] = {}
        for h in infos:
            if h.has_style:
                reps.setdefault(h.key, h)
        # equal prominence: the rarer look first (higher levels have fewer headings), then the earlier
        ordered = sorted(reps, key=lambda k: (strength(reps[k]), -self.counts[k], -reps[k].index), reverse=True)
        self.style_rank = {k: r for r, k in enumerate(ordered)}
        self.n_styles = len(ordered)
        self.first_index = {}
        for h in infos:
            if h.has_style:
                self.first_index.setdefault(h.key, h.index)
        self.body_size = _body_size(document) if document is not None else 0.0
        self.max_size = max((k[0] for k in keys), default=0.0)
        self.n_numbered = sum(1 for h in infos if h.numbering is not None)
        self.share_numbered = self.n_numbered / max(len(infos), 1)
        self.n_headings = len(infos)
        numbered: Counter = Counter(h.key for h in infos if h.has_style and h.numbering is not None)
        self.numbered_share = {k: numbered[k] / c for k, c in self.counts.items()}
        self.share_caps = sum(1 for h in infos if h.caps) / max(len(infos), 1)
        # how many earlier headings share each heading's look (a style seen before is an established level)
        seen: Counter = Counter()
        self.seen_before: list[int] = []
        for h in infos:
            self.seen_before.append(seen[h.key] if h.has_style else 0)
            if h.has_style:
                seen[h.key] += 1

    def frequency(self, h: HeadingInfo) -> float:
        return self.counts.get(h.key, 0) / self.n


def _body_size(document: Document) -> float:
    votes: Counter = Counter()
    for b in document.blocks:
        if not b.rotated:
            votes[round(b.size * 2) / 2] += len(b.text)
    return votes.most_common(1)[0][0] if votes else 0.0
