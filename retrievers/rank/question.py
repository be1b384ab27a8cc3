"""What a question says besides its terms: the years it names, whether it asks for an amount, the
sections it names ("in the risk factors", "Item 7", "募集资金运用").

:func:`question_years` and :func:`asks_for_amount` are cheap cues read once per query.

A question that names a section of its document should reach that section.
:func:`heading_keys` reads a heading the way a reader names it: the heading's
words without its number (``"Item 1A. Risk Factors"`` -> ``"risk factors"``,
``"第十一节 募集资金运用"`` -> ``"募集资金运用"``) and, for the numbering schemes
people cite by number, the label (``"item 1a"``, ``"note 12"``, ``"第十一节"``).
:func:`mentioned` tells whether a normalised query contains one of them as a
whole phrase.

Short names are left out: a one-word English heading ("Revenue", "Overview")
or a Chinese one under four characters is a topic word, not the name of a
section, and would fire on most questions.  The rule is the same for every
collection; nothing here is fitted to a template.
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

from structrag.numbering import parse_numbering
from structrag.text import CJK_SCRIPT

__all__ = ["question_years", "asks_for_amount", "HeadingKeys", "normalise", "heading_keys", "mentioned"]

_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")


def question_years(text: str) -> tuple[str, ...]:
    """The years a question names ("in 2018", "FY2018", "2018年"), as the tokens tables print them."""
    return tuple(dict.fromkeys(_YEAR.findall(text)))


_AMOUNT = re.compile(
    r"\b(how much|how many|amount|total|sum|ratio|margin|rate|percent(age)?|value|cost|price|revenue|"
    r"income|expenses?|earnings|eps|cash|debt|usd|eur|dollars?|millions?|billions?|thousands?)\b|[$€£%¥％]|\d"
    # the same cues in Chinese: how much / how many, amount, share, ratio, revenue, profit, yuan
    r"|多少|几[个家名项年]|金额|数额|总额|合计|比例|比重|占比|增长率|毛利率|收入|利润|营业额|净额|万元|亿元|[万亿]股|元",
    re.IGNORECASE,
)


def asks_for_amount(query: str) -> bool:
    """Whether a question asks for a quantity (a cheap cue, see the ``q_amount`` feature)."""
    return bool(_AMOUNT.search(query))


#: numbering schemes whose label alone names a section ("see Item 7", "Note 12", "第三节")
CITED_SCHEMES = frozenset({"item", "part", "note", "schedule", "chapter", "section", "article", "appendix",
                           "cn-section", "cn-chapter", "cn-part"})
_CJK = re.compile(f"[{CJK_SCRIPT}]")
_NOT_WORD = re.compile(rf"[^\w{CJK_SCRIPT}]+")
_LEADING_ARTICLE = re.compile(r"^(the|a|an|our)\s+")
#: a phrase counts when it has this many words (Latin) or characters (CJK)
MIN_WORDS = 2
MIN_CJK_CHARS = 4


def normalise(text: str) -> str:
    """NFKC, case-folded, punctuation to single spaces (``&`` kept as ``and``)."""
    t = unicodedata.normalize("NFKC", text).lower().replace("&", " and ").replace("’", "'").replace("'s ", " ")
    return " ".join(_NOT_WORD.sub(" ", t).split())


class HeadingKeys(NamedTuple):
    """The phrases that name one heading (empty strings where there is none)."""

    name: str  # the heading's words, numbering removed, normalised
    label: str  # the cited number ("item 7", "第十一节"), normalised


def _long_enough(phrase: str) -> bool:
    if not phrase:
        return False
    if _CJK.search(phrase):
        return len(_CJK.findall(phrase)) >= MIN_CJK_CHARS
    return len(phrase.split()) >= MIN_WORDS


def heading_keys(title: str) -> HeadingKeys:
    """What a query may call the section headed ``title`` (see the module docstring)."""
    num, rest = parse_numbering(title)
    name = _LEADING_ARTICLE.sub("", normalise(rest))
    label = normalise(num.label) if num is not None and num.scheme in CITED_SCHEMES else ""
    return HeadingKeys(name if _long_enough(name) else "", label)


def _contains(query: str, phrase: str) -> bool:
    """``phrase`` in ``query`` as whole words (CJK: as a substring, there are no spaces)."""
    if not phrase:
        return False
    i = query.find(phrase)
    while i >= 0:
        j = i + len(phrase)
        before = query[i - 1] if i > 0 else " "
        after = query[j] if j < len(query) else " "
        cjk_edge = bool(_CJK.match(phrase[0])) or bool(_CJK.match(phrase[-1]))
        if cjk_edge or (not before.isalnum() and not after.isalnum()):
            return True
        i = query.find(phrase, i + 1)
    return False


def mentioned(query_norm: str, keys: HeadingKeys) -> bool:
    """Whether a normalised query (:func:`normalise`) names the heading of ``keys``."""
    return _contains(query_norm, keys.name) or _contains(query_norm, keys.label)
