"""A document's cover and front matter: the headings before its body that head no section of it.

A prospectus (and many a report) prints its cover first -- the issuer's name and address, the document's
title, the underwriter's label, name and address -- then the title again over the offering's fields on the
next page, then front matter: the issuer's statement (发行人声明), the important matters (重大事项提示), the
contents (目录), the definitions (释义) or, in English, an important notice, the contents, the definitions.
Only then does the body start, at its first numbered section (第一节, Chapter 1, Part I, Item 1).

A layout predictor sees the cover's large type and nests what follows under it: the issuer's statement
under the underwriter's name.  Neither is so.  The cover names the document, it is not a section that
holds the front matter; the front matter is beside the body, not a part of a cover line.  So, once the
body's first numbered section is found (:func:`body_start`):

* the **cover** is every heading on the first :data:`COVER_PAGES` pages before the first front-matter
  title (none where there is no front matter): nothing nests under a cover line;
* the **front matter** is every heading before the body whose whole title is one of
  :data:`FRONT_MATTER_RE`'s: each goes to the top level (its own sub-sections still nest under it).

Without a numbered first section nothing is decided here: a title's words alone ("Definitions",
"Contents") do not say it is front matter in the middle of a document.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Sequence

from ...model import Heading, Numbering

__all__ = ["FRONT_MATTER_RE", "BODY_START_SCHEMES", "COVER_PAGES", "FrontMatter", "body_start", "front_matter"]

#: whole titles of front matter (Chinese compared without spaces or brackets: "【发行人声明】", "目 录")
FRONT_MATTER_RE = re.compile(
    r"^(?:发行人声明|(?:董事会|全体董事)?声明|重大事项提示|特别风险提示|重要提示|本次发行概况|目录|释义"
    r"|important notices?(?: to investors)?|notice to investors|(?:table of )?contents|definitions"
    r"|glossary(?: of (?:technical )?terms)?|definitions and glossary|expected timetable"
    r"|(?:(?:special|cautionary) note (?:regarding|on|about) )?forward[- ]looking statements)\s*[.:：]?$", re.I)
#: the brackets and spaces a front-matter title may be set in
_DRESS = re.compile(r"[\s【】\[\]〔〕]+")
#: the schemes of a body's sections: its first such heading numbered 1 is where the body starts
BODY_START_SCHEMES = frozenset({"part", "item", "chapter", "article", "cn-section", "cn-chapter", "cn-part"})
#: the scheme of exhibits, appendices and annexes (structrag/numbering.py)
_APPENDIX = "appendix"
#: the cover and the title repeated over the offering's fields on the next page
COVER_PAGES = 2


class FrontMatter(NamedTuple):
    """The headings (indices) of a document's cover and of its front matter."""

    cover: frozenset[int]
    front: frozenset[int]


def body_start(nums: Sequence[Numbering | None]) -> int | None:
    """Index of the body's first section: the first heading of a section scheme numbered 1, or None.

    An exhibit or an appendix before it (an 8-K's "Exhibit 99.1" over a credit agreement's contents and
    "Article I") starts a document of its own: its contents is that exhibit's, no front matter of the filing."""
    for i, n in enumerate(nums):
        if n is not None and n.scheme == _APPENDIX:
            return None
        if n is not None and n.scheme in BODY_START_SCHEMES and n.values[:1] == (1,):
            return i
    return None


def is_front_matter_title(text: str) -> bool:
    """Whether ``text`` is the whole title of front matter."""
    flat = " ".join(text.split()).strip("【】[]〔〕 ")
    return bool(FRONT_MATTER_RE.match(flat) or FRONT_MATTER_RE.match(_DRESS.sub("", text)))


def front_matter(headings: Sequence[Heading], nums: Sequence[Numbering | None]) -> FrontMatter:
    """The cover and the front matter of these headings (reading order; ``nums`` their numbering)."""
    start = body_start(nums)
    if start is None:
        return FrontMatter(frozenset(), frozenset())
    front = frozenset(i for i in range(start) if nums[i] is None and is_front_matter_title(headings[i].text))
    # no front matter: what the first pages hold before the body may be the body's own start (a course outline's
    # title over its overview), not a cover
    first = min(front, default=0)
    cover = frozenset(i for i in range(first) if headings[i].page < COVER_PAGES)
    return FrontMatter(cover, front)
