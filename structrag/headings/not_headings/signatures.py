"""Names and job titles: signature blocks and board lists (:mod:`.page` asks this module).

A board member's name in a larger size, a job title in bold or the name typed under a "/s/" signature
look like titles; stacked together, or under a signature, they are the people who sign or serve.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, NamedTuple, Sequence

from ...model import Block
from .._geometry import close_below
from .reasons import NotHeading

__all__ = ["SIGNED", "author_line", "SIGNATURE_RULES", "SignatureRule", "signature_codes"]

#: an electronic signature line ("/s/ Jane Doe", "By: /s/ ...")
SIGNED = re.compile(r"^(?:by:?\s*)?/\s*s\s*/", re.I)


# --- names and job titles (signature blocks, board lists) ----------------------------------------

_ROLE = re.compile(
    r"\b(?:director|chairman|chairwoman|chairperson|chair|president|vice[- ]president|secretary|treasurer|controller"
    r"|chief\s+\w+(?:\s+\w+)?\s+officer|officer|ceo|cfo|coo|managing partner|trustee|board member"
    r"|member of the (?:board|\w+ committee)|general counsel)\b", re.I)
_NAME_WORD = re.compile(r"^(?:[A-Z][a-zA-Z'’\-]+\.?|[A-Z]\.(?:[A-Z]\.)?|Jr\.?|Sr\.?|II|III|IV|Ph\.?D\.?|CPA),?$")
_NOT_NAME = {"the", "of", "and", "for", "to", "in", "on", "with", "our", "&", "a", "an", "at", "by"}


def _name_like(line: str) -> bool:
    """Two to five capitalised words, no digits or small words: "James J. Murren", "JOHN B. KILROY, JR."."""
    toks = line.replace("Mr.", "").replace("Ms.", "").replace("Dr.", "").split()
    if not 2 <= len(toks) <= 5 or len(line) > 40:
        return False
    return all(_NAME_WORD.match(x) and x.lower() not in _NOT_NAME for x in toks)


#: the words of job titles: a line of them (and a role word among them) is a title under a name, while
#: "Letter From Our CEO" or "2022 Executive Officer Compensation Elements" are headings
_ROLE_WORDS = set("""chief executive officer officers financial operating accounting technology information legal
people marketing risk president vice senior executive chairman chairwoman chairperson chair of the board and director
directors independent lead non-executive non executive ceo cfo coo cto secretary treasurer controller general counsel
corporate principal member committee audit compensation nominating governance managing partner trustee deputy
co-founder founder emeritus group company""".split())


#: an author's affiliation marks, set right after the name ("Pan1,2", "Sun*", "Ma†")
_MARKS = r"(?<=[A-Za-z.])(?:\d+(?:,\d+)*|[*∗†‡§¶♠♣♦♥])+"
_AUTHOR_SPLIT = re.compile(rf"{_MARKS},?\s*|,\s*|\s+and\s+|\s*&\s*")


def author_line(text: str) -> bool:
    """A paper's byline: two names or more, each with its affiliation marks ("Liangming Pan1,2 Xiaobao Wu3
    Xinyuan Lu4"), or three or more between commas ("Liangming Pan, Michael Saxon, Wenda Xu").  Two capitalised
    phrases with a comma ("Net Sales, Operating Income") are not enough without the marks."""
    marked = re.search(_MARKS + r"(?=[\s,]|$)", text) is not None
    parts = [p for p in (x.strip() for x in _AUTHOR_SPLIT.split(text)) if p]
    return len(parts) >= (2 if marked else 3) and all(_name_like(p) for p in parts)


def _role_like(line: str) -> bool:
    if len(line) > 80 or _ROLE.search(line) is None or line.rstrip().endswith((".", ";", ":")):
        return False
    words = re.findall(r"[a-z][a-z\-]*", re.sub(r"\([^)]*\)", " ", line.lower()))
    return bool(words) and sum(w in _ROLE_WORDS for w in words) >= 0.8 * len(words)


#: the signature line of a signing party ("By: /s/ Jane Doe", "By: ____", a blank "By:" on a form)
_BY = re.compile(r"^by\s*:", re.I)
_SIGNING = re.compile(r"/\s*s\s*/|^(?:name|title|its)\s*:|_{3,}", re.I | re.M)


def _signs_under(a: Block, b: Block) -> bool:
    """Whether ``b``, right under ``a`` and across its width, is the "By:" line of the party ``a`` names
    ("AMCOR FINANCE (USA), INC." over "By: /s/ ... / Name: ... / Title: ..."; an agent's capacity, "as
    Trustee", may come first).  A bare "By:" counts only on its own: a byline ("By: the editors") is no
    signature."""
    lines = [ln.strip() for ln in b.text.split("\n") if ln.strip()]
    first = next((j for j, ln in enumerate(lines[:3]) if _BY.match(ln) or SIGNED.match(ln)), None)
    if first is None or not close_below(a, b, 3.0) or b.bbox[0] >= a.bbox[2] or a.bbox[0] >= b.bbox[2]:
        return False
    rest = "\n".join(lines[first:])
    return _SIGNING.search(rest) is not None or rest.rstrip(": ").lower() == "by"


def _signature_kind(b: Block) -> str | None:
    """"name", "role", "signed" or None for a short block of a signature or board list."""
    lines = [ln.strip() for ln in b.text.split("\n") if ln.strip()]
    if not lines or len(lines) > 3 or len(b.text) > 120:
        return None
    if any(SIGNED.match(ln) for ln in lines):
        return "signed"
    # a job title in capitals ("Chief Executive Officer") is name-like too: the role words decide first
    kinds = {"role" if _role_like(ln) else "name" if _name_like(ln) else None for ln in lines}
    if None in kinds:
        return None
    return "role" if "role" in kinds else "name"


def _in_signature_blocks(blocks: Sequence[Block], candidates: set[int],
                         numbered: Callable[[Block], bool]) -> Iterable[int]:
    """Names and job titles stacked (or side by side) together."""
    n = len(blocks)
    kinds = [_signature_kind(b) for b in blocks]
    k = 0
    while k < n:
        if kinds[k] is None:
            k += 1
            continue
        m = k
        while m + 1 < n and kinds[m + 1] is not None and close_below(blocks[m], blocks[m + 1], 2.0):
            m += 1
        group = kinds[k : m + 1]
        # names alone are no evidence ("Exchange Offers" / "Principal Amount" look like names too)
        if "name" in group and ("role" in group or "signed" in group):
            for r in range(k, m + 1):
                if blocks[r].index in candidates and not numbered(blocks[r]):
                    yield blocks[r].index
        k = m + 1


def _signing_parties(blocks: Sequence[Block], candidates: set[int],
                     numbered: Callable[[Block], bool]) -> Iterable[int]:
    """A signing party's name over its "By:" line (a company, a lender, "ASSIGNOR [NAME OF ASSIGNOR]")."""
    for k in range(len(blocks) - 1):
        b = blocks[k]
        if b.index in candidates and b.line_count <= 2 and len(b.text) <= 90 and not numbered(b) \
                and _signs_under(b, blocks[k + 1]):
            yield b.index


def _names_under_signatures(blocks: Sequence[Block], candidates: set[int],
                            numbered: Callable[[Block], bool]) -> Iterable[int]:
    """The name typed under a "/s/" signature, whatever its form ("/s/ Ernst & Young LLP" over "Ernst & Young
    LLP")."""
    for k in range(1, len(blocks)):
        b = blocks[k]
        if b.index in candidates and b.line_count == 1 and len(b.text) <= 60 and not numbered(b) \
                and close_below(blocks[k - 1], b, 1.0) and _signature_kind(blocks[k - 1]) == "signed":
            yield b.index


class SignatureRule(NamedTuple):
    """One rule on names and job titles: its name, what it finds among a page's blocks, its reason."""

    name: str
    finds: Callable[[Sequence[Block], set[int], Callable[[Block], bool]], Iterable[int]]
    reason: NotHeading


#: the rules on names and job titles, asked in this order
SIGNATURE_RULES: tuple[SignatureRule, ...] = (
    SignatureRule("a signature block or a board list", _in_signature_blocks, NotHeading.SIGNATURE_NAME),
    SignatureRule("a signing party over its signature line", _signing_parties, NotHeading.SIGNING_PARTY),
    SignatureRule("a name under a signature", _names_under_signatures, NotHeading.NAME_UNDER_SIGNATURE),
)


def signature_codes(blocks: Sequence[Block], candidates: set[int],
                    numbered: Callable[[Block], bool]) -> dict[int, NotHeading]:
    """Why each of the ``candidates`` among one page's ``blocks`` belongs to a signature block or a board
    list: names and job titles stacked (or side by side) together, a signing party over its "By:" line, or the
    name typed under a "/s/" line.  ``numbered`` blocks ("Note 4") are titles whatever their neighbours."""
    out: dict[int, NotHeading] = {}
    for rule in SIGNATURE_RULES:
        for i in rule.finds(blocks, candidates, numbered):
            out.setdefault(i, rule.reason)
    return out
