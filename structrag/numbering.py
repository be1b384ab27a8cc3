"""Heading numbers: ``1`` / ``1.2.3``, ``IV.``, ``A.``, ``(a)``, ``Item 7A``,
``Part II``, ``Note 12``, ``Schedule II``, ``Chapter 3``, and the Chinese
``第一节`` / ``第三章`` / ``一、`` / ``（一）`` / ``1、`` forms.

:func:`parse_numbering` reads the number at the start of a heading text;
:func:`continues` tells whether one number follows another in its scheme
(``2.3`` after ``2.2``, ``Item 7A`` after ``Item 7``, ``（三）`` after ``（二）``).
"""

from __future__ import annotations

import re

from .model import Numbering

__all__ = ["parse_numbering", "word_number", "continues", "opens_child", "is_bare_label", "cn_number", "roman_value"]

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_UNITS = {"十": 10, "百": 100}
_CN = "零〇一二两三四五六七八九十百"


def cn_number(s: str) -> int | None:
    """Value of a Chinese numeral up to 999 (``十二`` -> 12, ``二十`` -> 20), or of ASCII digits."""
    if s.isdigit():
        return int(s)
    total, cur = 0, 0
    for ch in s:
        if ch in _CN_DIGITS:
            cur = _CN_DIGITS[ch]
        elif ch in _CN_UNITS:
            total += (cur or 1) * _CN_UNITS[ch]
            cur = 0
        else:
            return None
    return total + cur


_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}
_ROMAN_RE = re.compile(r"^(m{0,3})(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})$", re.I)


def roman_value(s: str) -> int | None:
    """Value of a well-formed Roman numeral, or None."""
    if not s or not _ROMAN_RE.match(s):
        return None
    s = s.lower()
    total = 0
    for a, b in zip(s, s[1:] + " "):
        v = _ROMAN[a]
        total += -v if b != " " and _ROMAN[b] > v else v
    return total or None


def _roman_number(s: str) -> int | None:
    """A Roman numeral as a heading number: a lone ``L``, ``C``, ``D`` or ``M`` is the letter of a
    lettered run ("Appendix C" after "Appendix B"; 50, 100, 500 and 1000 never number a heading),
    where a lone ``I``, ``V`` or ``X`` stays Roman ("Part V")."""
    if len(s) == 1 and s.lower() in "lcdm":
        return None
    return roman_value(s)


def _word_value(s: str) -> int | None:
    if s.isdigit():
        return int(s)
    r = _roman_number(s)
    if r is not None:
        return r
    if len(s) == 1 and s.isalpha():
        return ord(s.lower()) - 96
    return None


# Order matters: the first pattern that matches wins.  Each entry: scheme,
# regex (anchored), and a function turning the match into integer values.
_WORD = r"(\d{1,3}|[ivxlc]{1,7}|[a-z])"
_PATTERNS: list[tuple[str, re.Pattern[str], object]] = [
    ("item", re.compile(r"^item\s*(\d{1,2})\s*([a-z])?\b\.?", re.I),
     lambda m: (int(m.group(1)), (ord(m.group(2).lower()) - 96) if m.group(2) else 0)),
    ("part", re.compile(r"^part\s+(\d{1,2}|[ivx]{1,5})\b\.?", re.I), lambda m: (_word_value(m.group(1)),)),
    ("note", re.compile(r"^note\s+(\d{1,3})\b\.?", re.I), lambda m: (int(m.group(1)),)),
    ("schedule", re.compile(r"^schedule\s+" + _WORD + r"\b\.?", re.I), lambda m: (_word_value(m.group(1)),)),
    ("chapter", re.compile(r"^chapter\s+" + _WORD + r"\b\.?", re.I), lambda m: (_word_value(m.group(1)),)),
    ("section", re.compile(r"^section\s+(\d{1,3}(?:\.\d{1,3})*)\b\.?", re.I),
     lambda m: tuple(int(x) for x in m.group(1).split("."))),
    ("article", re.compile(r"^article\s+" + _WORD + r"\b\.?", re.I), lambda m: (_word_value(m.group(1)),)),
    ("appendix", re.compile(r"^(?:appendix|annex|exhibit)\s+" + _WORD + r"\b\.?", re.I),
     lambda m: (_word_value(m.group(1)),)),
    ("cn-section", re.compile(r"^第\s*([" + _CN + r"\d]{1,4})\s*节"), lambda m: (cn_number(m.group(1)),)),
    ("cn-chapter", re.compile(r"^第\s*([" + _CN + r"\d]{1,4})\s*章"), lambda m: (cn_number(m.group(1)),)),
    ("cn-part", re.compile(r"^第\s*([" + _CN + r"\d]{1,4})\s*[部篇]分?"), lambda m: (cn_number(m.group(1)),)),
    ("cn-article", re.compile(r"^第\s*([" + _CN + r"\d]{1,4})\s*条"), lambda m: (cn_number(m.group(1)),)),
    ("cn-ordinal", re.compile(r"^([" + _CN + r"]{1,3})\s*[、，.．]"), lambda m: (cn_number(m.group(1)),)),
    ("cn-paren", re.compile(r"^[（(]\s*([" + _CN + r"]{1,3})\s*[）)]"), lambda m: (cn_number(m.group(1)),)),
    ("num-dun", re.compile(r"^(\d{1,2})\s*、"), lambda m: (int(m.group(1)),)),
    ("paren-num", re.compile(r"^[（(]\s*(\d{1,2})\s*[）)]"), lambda m: (int(m.group(1)),)),
    ("paren-roman", re.compile(r"^\(\s*([ivx]{1,5})\s*\)"), lambda m: (roman_value(m.group(1)),)),
    ("paren-alpha", re.compile(r"^\(\s*([a-z])\s*\)"), lambda m: (ord(m.group(1)) - 96,)),
    ("paren-ALPHA", re.compile(r"^\(\s*([A-Z])\s*\)"), lambda m: (ord(m.group(1)) - 64,)),
    # dotted decimals: "1", "1.", "1.2", "1.2.3." followed by space; the first
    # component is kept small so years and amounts ("2022 Highlights") are not numbers
    ("decimal", re.compile(r"^(\d{1,2}(?:\.\d{1,3}){0,5})(?:\.|\))?(?=\s|$)"),
     lambda m: tuple(int(x) for x in m.group(1).split("."))),
    # past 99 ("100. Title" after "99. Title") only with its full stop or bracket: "250 employees" stays text
    ("decimal", re.compile(r"^(\d{3})[.)](?=\s|$)"), lambda m: (int(m.group(1)),)),
    ("roman", re.compile(r"^([IVXLC]{1,6})[.)](?=\s|$)"), lambda m: (_roman_number(m.group(1)),)),
    ("roman-lower", re.compile(r"^([ivxlc]{1,6})[.)](?=\s|$)"), lambda m: (_roman_number(m.group(1)),)),
    ("alpha", re.compile(r"^([A-Z])[.)](?=\s|$)"), lambda m: (ord(m.group(1)) - 64,)),
    ("alpha-lower", re.compile(r"^([a-z])[.)](?=\s|$)"), lambda m: (ord(m.group(1)) - 96,)),
]


def parse_numbering(text: str) -> tuple[Numbering | None, str]:
    """The number at the start of ``text`` and the rest of the text.

    >>> parse_numbering("2.3 Results")
    (Numbering(scheme='decimal', values=(2, 3), label='2.3'), 'Results')
    >>> parse_numbering("Revenue")
    (None, 'Revenue')
    """
    s = text.lstrip()
    for scheme, rx, conv in _PATTERNS:
        m = rx.match(s)
        if not m:
            continue
        values = conv(m)  # type: ignore[operator]
        if any(v is None for v in values):
            continue
        rest = s[m.end():].lstrip(" \t.:-–—)、，,")
        if scheme == "decimal" and rest and not (rest[0].isalpha() or "\u4e00" <= rest[0] <= "\u9fff"):
            # "3 months ended", "10 %": numbers followed by non-words are not heading numbers
            if rest[0] not in "\"'“‘(":
                continue
        label = m.group(0).strip()
        return Numbering(scheme=scheme, values=tuple(int(v) for v in values), label=label), rest
    return None, s

# one to three capitalised words, then the number: "Goal 2", "Strategic Goal 2", "Strategy 1.1.1"
_WORD_NUM = re.compile(r"^((?:[A-Z][A-Za-z]{1,14}\s+){0,2}([A-Z][A-Za-z]{2,14}))\s+(\d{1,2}(?:\.\d{1,3}){0,4})(?:[.:)]|\s|$)")
_NOT_LABELS = {"The", "In", "On", "At", "For", "Our", "From", "To", "By", "Of", "And", "With", "Since", "Over",
               "Fiscal", "Year", "Years", "Fy", "Q", "Quarter", "Page", "Table", "Figure", "Exhibit", "Form",
               "Fig", "Tables", "Figures", "Chart", "Graph", "Map", "Photo", "Image", "Source", "Equation",
               "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
               "November", "December", "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct",
               "Nov", "Dec", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}


def word_number(text: str) -> Numbering | None:
    """A number after a label word ("Strategy 1.1.1", "Goal 2", "Objective 3.2"), the scheme ``word-decimal``.

    Not part of :func:`parse_numbering`: "Goal 2" is a heading number only when a document
    uses it as one, which callers decide from the sequence (detection) or the style (levels).
    Captions ("Table 3", "Figure 2") and dates ("Fiscal 2022", "Year 1") are never labels.
    """
    m = _WORD_NUM.match(text.strip())
    if not m or m.group(2) in _NOT_LABELS or m.group(1).split()[0] in _NOT_LABELS:
        return None
    vals = tuple(int(x) for x in m.group(3).split("."))
    if vals[0] > 99:
        return None
    return Numbering(scheme="word-decimal", values=vals, label=m.group(0).strip().rstrip(".:)"))


def is_bare_label(text: str) -> bool:
    """True when ``text`` is only a heading number ("Item 7.", "1.2", "(a)", "第一节")."""
    num, rest = parse_numbering(text)
    return num is not None and not rest.strip()


def continues(prev: Numbering | None, cur: Numbering | None) -> bool:
    """Whether ``cur`` is the next number after ``prev`` at the same depth.

    ``1.3`` continues ``1.2``; ``2`` continues ``1``; ``Item 7A`` continues
    ``Item 7``; ``Item 8`` continues ``Item 7A``.  Different schemes never
    continue each other.
    """
    if prev is None or cur is None or prev.scheme != cur.scheme:
        return False
    a, b = prev.values, cur.values
    if cur.scheme == "item":
        # Item 7 -> 7A -> 7B -> 8
        return (b[0] == a[0] and b[1] == a[1] + 1) or (b[0] == a[0] + 1 and b[1] == 0)
    if len(a) != len(b):
        return False
    return a[:-1] == b[:-1] and b[-1] == a[-1] + 1


def opens_child(parent: Numbering | None, cur: Numbering | None) -> bool:
    """Whether ``cur`` is a first sub-number of ``parent`` (``2.1`` under ``2``)."""
    if parent is None or cur is None or parent.scheme != cur.scheme or cur.scheme != "decimal":
        return False
    return len(cur.values) == len(parent.values) + 1 and cur.values[:-1] == parent.values and cur.values[-1] in (0, 1)
