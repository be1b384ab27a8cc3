"""Text helpers shared by every stage: control characters, and the character classes of CJK scripts.

Each class is a string of ``a-b`` ranges to put inside a regular-expression character class
(``rf"[{CJK_SCRIPT}]"``).  They differ on purpose: a tokeniser counts full-width punctuation as
CJK, a heading rule asks only whether a line is Chinese.
"""

from __future__ import annotations

import re

__all__ = ["printable", "strip_control", "clean_extracted", "KANA", "HAN_EXT_A", "HAN", "HANGUL", "HAN_COMPAT", "CJK_SYMBOLS", "FULLWIDTH",
           "CJK_SCRIPT", "CJK_WIDE", "HAN_ANY"]

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
#: Han from extension A to the end of the unified block (Chinese contents lines)
HAN_ANY = "\u3400-\u9fff"


# C0 controls but tab and newline, DEL, C1 controls: never text a reader meant to see
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_control(text: str) -> str:
    """``text`` without control characters (tab and newline kept)."""
    return _CONTROL.sub("", text)


def printable(text: str) -> str:
    """``text`` safe for a terminal: each control character shown as ``\\xNN`` instead of acted on.

    A PDF may carry escape sequences (``ESC ]0;...BEL`` retitles a terminal, ``ESC[31m`` recolours it).
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


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
