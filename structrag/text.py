"""Text helpers shared by every stage, one definition each.

* **CJK character classes**: strings of ``a-b`` ranges to put inside a regular-expression
  character class (``rf"[{CJK_SCRIPT}]"``).  They differ on purpose: a tokeniser counts
  full-width punctuation as CJK, a heading rule asks only whether a line is Chinese.
* **Capitals**: four tests, because four questions are asked (a line set in capitals, Latin
  capitals that are the text and not an acronym in Chinese, small capitals, a share of capital
  letters); each stage names the one it asks.
* **Normalisation** of titles for matching, and the **leading heading number** taken off one.
* **Contents titles** ("Table of Contents", "目录").
* **Control characters**: dropped from extracted text, shown (never acted on) in terminal output.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable

from .numbering import parse_numbering

__all__ = ["KANA", "HAN_EXT_A", "HAN", "HANGUL", "HAN_COMPAT", "CJK_SYMBOLS", "FULLWIDTH",
           "CJK_SCRIPT", "CJK_WIDE", "WIDE_CHAR", "HAN_ANY",
           "letter_count", "starts_lower", "upper_line", "latin_capitals", "all_capitals", "capitals_share",
           "normalize_title", "strip_number", "strip_number_pattern", "squeeze", "is_contents_title",
           "strip_control", "clean_extracted", "clean_heading", "printable", "path_text", "page_ranges",
           "is_blank"]

KANA = "\u3040-\u30ff"  # hiragana, katakana
HAN_EXT_A = "\u3400-\u4dbf"  # CJK unified ideographs extension A
HAN = "\u4e00-\u9fff"  # CJK unified ideographs
HANGUL = "\uac00-\ud7af"  # Hangul syllables
HAN_COMPAT = "\uf900-\ufaff"  # CJK compatibility ideographs
CJK_SYMBOLS = "\u3000-\u303f"  # CJK symbols and punctuation
FULLWIDTH = "\uff00-\uffef"  # half-width and full-width forms

#: letters of the CJK scripts: what a tokeniser cuts into characters or bigrams
CJK_SCRIPT = KANA + HAN_EXT_A + HAN + HANGUL + HAN_COMPAT
#: the scripts plus their punctuation and full-width forms: one token per character
CJK_WIDE = CJK_SYMBOLS + CJK_SCRIPT + FULLWIDTH
#: one character of :data:`CJK_WIDE` (full-width: a Chinese word is about two of them)
WIDE_CHAR = re.compile(rf"[{CJK_WIDE}]")
#: Han from extension A to the end of the unified block (Chinese contents lines)
HAN_ANY = "\u3400-\u9fff"


# --- capitals ----------------------------------------------------------------------------------

def upper_line(text: str) -> bool:
    """A line in capitals (at least a short word of them): str.isupper ignores digits and marks.

    Extraction: a line in capitals is a look of its own, so it starts a block of its own.
    """
    return len(text) >= 4 and text.isupper()


_UPPER = re.compile(r"[A-Z]")
_LOWER = re.compile(r"[a-z]")
_LETTER = re.compile(r"[^\W\d_]")


def letter_count(text: str) -> int:
    """Letters of any script (no digits, no underscore)."""
    return len(_LETTER.findall(text))


def starts_lower(text: str) -> bool:
    """The text opens on a lower-case letter: the rest of a sentence or a title, not a line of its own.

    Opening quotes are skipped; a line in brackets is a qualifier ("(currency in thousands)"), not a rest.
    """
    first = text.lstrip("\"'“‘")[:1]
    return first.isalpha() and first.islower()


def latin_capitals(text: str) -> bool:
    """At least four Latin capitals that are the text, not an acronym inside Chinese text.

    Heading scoring: lower case at most 15% of the Latin letters, Latin letters at least 60% of
    all letters.
    """
    up = len(_UPPER.findall(text))
    if up < 4:
        return False
    low = len(_LOWER.findall(text))
    return low <= 0.15 * (up + low) and up + low >= 0.6 * letter_count(text)


def all_capitals(text: str) -> bool:
    """At least four cased letters, none of them lower case (capitals or small capitals).

    Scripts without case (Chinese, Japanese) never qualify: their small numbered lines are notes.
    """
    cased = [c for c in text if c.isupper() or c.islower()]
    return len(cased) >= 4 and not any(c.islower() for c in cased)


def capitals_share(text: str, *, min_letters: int, share: float, ascii_only: bool) -> bool:
    """At least ``min_letters`` letters (ASCII ones only if ``ascii_only``), ``share`` of them capitals.

    The contents layout asks 3 ASCII letters at 90%, the style key 2 letters of any script at 80%.
    """
    cs = [c for c in text if c.isalpha() and (c.isascii() or not ascii_only)]
    return len(cs) >= min_letters and sum(c.isupper() for c in cs) >= share * len(cs)


# --- normalisation and heading numbers -----------------------------------------------------------

_NON_WORD = re.compile(rf"[^\w{HAN}]+", re.UNICODE)


def normalize_title(text: str) -> str:
    """Lower-case, accents folded, punctuation and spacing collapsed to single spaces."""
    t = unicodedata.normalize("NFKC", text).lower()
    t = t.replace("’", "'").replace("&", " and ")
    return _NON_WORD.sub(" ", t).strip()


def strip_number(norm: str, raw: str) -> str:
    """``norm`` (the normalised ``raw``) without the heading number :func:`parse_numbering` reads in ``raw``."""
    num, rest = parse_numbering(raw)
    return normalize_title(rest) if num is not None else norm


# a heading number at the start of a normalised title ("2 3 ", "item 7a ", "note 12 ", "第一节 ", "一 ")
_NORM_NUMBER = re.compile(r"^(?:(?:item|part|note|section|chapter|article|schedule|appendix|exhibit)\s+\w{1,5}\s+"
                          r"|(?:\d{1,3}\s+)+|[ivx]{1,5}\s+|[a-z]\s+(?=\w{3})|第[\w]{1,4}[节章部篇条]\s*"
                          r"|[一二三四五六七八九十]{1,3}\s+)")


def strip_number_pattern(norm: str) -> str:
    """A normalised title without a leading number by a cheap pattern (no parse of the raw text).

    Wider than :func:`strip_number` ("a " before a word counts): the contents reader uses it only to
    widen the candidate blocks for an entry, and :func:`strip_number` decides the outline's matches.
    """
    return _NORM_NUMBER.sub("", norm, count=1) or norm


# --- contents titles ------------------------------------------------------------------------------

_SPACED = re.compile(r"^(?:\w ){2,}\w$")


def squeeze(text: str) -> str:
    """Whitespace collapsed; letter-spaced titles ("I N D E X", "C O N T E N T S") closed up."""
    t = " ".join(text.split())
    return t.replace(" ", "") if _SPACED.match(t) else t


#: "Contents", "Table of Contents", "目录" / "目 录", "Contents (continued)"
CONTENTS_TITLE = re.compile(
    r"^\s*(?:table\s+of\s+contents?|contents?|目\s*录|目\s*次)\s*(?:\(\s*continued\s*\)|（\s*续\s*）)?\s*[:：]?\s*$",
    re.I,
)
#: "Index", "General Index", "Index to the Financial Statements", "索引"
INDEX_TITLE = re.compile(r"^\s*(?:general\s+|subject\s+|alphabetical\s+)?index(?:\s+to\s+(?:the\s+)?[a-z][\w ,&]{2,60})?"
                         r"\s*$|^\s*索\s*引\s*$", re.I)
# the first page's own title only: no continuation, no 目次, no colon, not letter-spaced
_FIRST_CONTENTS_TITLE = re.compile(r"^\s*(?:table\s+of\s+)?contents?\s*$|^\s*目\s*录\s*$", re.I)


def is_contents_title(text: str, *, index: bool = False, plain: bool = False) -> bool:
    """Whether ``text`` is the title of a contents page ("Table of Contents", "目 录", ...).

    ``index=True`` accepts "Index" too (a filing's contents is often called so).  ``plain=True``
    asks the narrower question heading detection asks of a block on a contents page: is it the
    plain title ("Contents", "Table of Contents", "目录", whitespace collapsed by the caller)?
    Only that title stays a heading candidate; a "Contents (continued)", "目次" or "CONTENTS:"
    line on a later contents page is part of the contents, so the two answers must differ.
    """
    if plain:
        return _FIRST_CONTENTS_TITLE.match(text) is not None
    t = squeeze(text)
    return CONTENTS_TITLE.match(t) is not None or (index and INDEX_TITLE.match(t) is not None)


# --- control characters --------------------------------------------------------------------------

# C0 controls but tab and newline, DEL, C1 controls: never text a reader meant to see
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_control(text: str) -> str:
    """``text`` without control characters (tab and newline kept)."""
    return _CONTROL.sub("", text)


# a soft hyphen (U+00AD) marks where a word may break: at a line end it joins the word's halves
_SOFT_BREAK = re.compile(r"\u00ad\s*")
_ANY_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def clean_heading(text: str) -> str:
    """A heading's text as a reader sees it: soft hyphens dropped (the word closed up where one ended a
    line), control characters (tab and newline too) turned into spaces, spacing collapsed."""
    if "\u00ad" in text:
        text = _SOFT_BREAK.sub("", text)
    return " ".join(_ANY_CONTROL.sub(" ", text).split())


def clean_extracted(text: str) -> str:
    """A line of extracted PDF text without control characters.

    One stray control character (an emoji or a ligature the font cannot map, a stray NUL) is
    dropped.  Two or more mark a font without a usable encoding: each becomes U+FFFD, so the text
    still reads as unreadable to the stages after extraction instead of passing for real words.
    """
    n = len(_CONTROL.findall(text))
    if n == 0:
        return text
    return _CONTROL.sub("\ufffd" if n >= 2 else "", text)


# characters that draw nothing and are not white space to str.split: zero-width space and joiners, the
# byte-order mark, the word joiner and the other format characters (category Cf), and the blank letters
# (Hangul fillers, braille blank) some producers pad titles with
_BLANK_LETTERS = frozenset("\u115f\u1160\u2800\u3164\uffa0")


def is_blank(text: str) -> bool:
    """True when ``text`` shows nothing: white space, control and format characters only (two zero-width
    spaces, say)."""
    return all(c.isspace() or c in _BLANK_LETTERS or unicodedata.category(c) in ("Cc", "Cf", "Zs", "Zl", "Zp")
               for c in text)


def printable(text: str) -> str:
    """``text`` safe for a terminal: each control character shown as ``\\xNN`` instead of acted on.

    A PDF may carry escape sequences (``ESC ]0;...BEL`` retitles a terminal, ``ESC[31m`` recolours it).
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def path_text(path: str) -> str:
    """A file path as text that can be stored and printed: bytes of a file name in another encoding than
    UTF-8 (which Python keeps as lone surrogates) become U+FFFD."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def page_ranges(pages: Iterable[int]) -> str:
    """0-based page numbers as 1-based ranges for a message: ``3, 7-9``."""
    ps = sorted(set(pages))
    parts: list[str] = []
    i = 0
    while i < len(ps):
        j = i
        while j + 1 < len(ps) and ps[j + 1] == ps[j] + 1:
            j += 1
        parts.append(str(ps[i] + 1) if i == j else f"{ps[i] + 1}-{ps[j] + 1}")
        i = j + 1
    return ", ".join(parts)
