"""Judgements on a heading's whole text, its wrapped lines joined (:func:`.wrapped.join_wrapped`).

A line alone may say nothing ("Asset management fees increased" wraps on): these read what the layout
detector is about to return and drop a sentence that leads into a list (:func:`leads_in`), a line stopping
mid-phrase (:func:`cut_off`), the end of a sentence (:func:`ends_sentence`) and a bracketed qualifier standing
alone (:func:`lone_qualifier`).
"""

from __future__ import annotations

import re

from ..text import starts_lower

__all__ = ["leads_in", "cut_off", "ends_sentence", "lone_qualifier", "QUALIFIER", "REGISTRANT", "RUN_IN"]

#: a sentence that introduces what follows it ("Asset management fees increased driven by:", "... consist of:"):
#: a title never ends on a function word
_LEAD_IN = re.compile(r"\s(?:by|to|of|for|with|from|in|on|at|as|that|which|the|a|an|and|or|reflecting|including|"
                      r"include|includes|following|follows|namely|are|is|were|was)\s*:$"
                      # words that lead into an explanation end no title, colon or not ("... decreased driven by")
                      r"|\s(?:driven\s+by|(?:partially\s+)?offset\s+by|reflecting|due\s+to|primarily"
                      r"|as\s+follows)\s*:?$",
                      re.I)


def leads_in(text: str) -> bool:
    """Whether a heading's whole text (its wrapped lines joined) is a sentence that introduces what follows
    ("Asset management fees increased driven by:", "Amounts recognized ... consist of:"): it ends on a
    function word and a colon, or on words that lead into an explanation ("... decreased driven by"), where a
    title ends on its subject ("Year 2017 results:")."""
    return _LEAD_IN.search(" ".join(text.split())) is not None


def cut_off(text: str) -> bool:
    """Whether a heading's whole text stops mid-phrase, on an article, "of", "and", "or" or a comma ("In the"
    over the court's name in a larger size, "SCHOOL OF" over its name set apart, "NET INCOME ATTRIBUTABLE TO
    SHAREOWNERS OF"): the rest of the title went elsewhere, or the line is a table's or a sentence's.  A run-in
    heading with its paragraph's first line ("Purpose. The purpose of the Plan is to ... and") is left alone."""
    t = " ".join(text.split())
    return _CUT_END.search(t) is not None and RUN_IN.search(t) is None


def ends_sentence(text: str) -> bool:
    """Whether a heading's whole text is the end of a sentence: it opens in lower case and ends on a full stop
    ("of technology leadership and operational excellence." under a pull quote's first lines).  A title in
    lower case ("gnuplot", "set terminal") has no full stop."""
    t = " ".join(text.split())
    return starts_lower(t) and _STOP_END.search(t) is not None


def lone_qualifier(text: str) -> bool:
    """Whether a heading's whole text is a qualifier in brackets standing alone ("(Unaudited)", "(PEP)"): a
    line of the title above it (:mod:`.wrapped` joins it there when it can), never a title itself; or a tag
    or placeholder in square brackets ("[ESRS S1 – 2]" under a section's title, "[To be determined]")."""
    t = " ".join(text.split())
    return QUALIFIER.match(t) is not None or _TAG.match(t) is not None


#: a registrant with its subsidiaries, the first line of a financial statement's or schedule's header: the
#: statement's title under it goes with it (:mod:`.wrapped`)
REGISTRANT = re.compile(r"^\S.{0,80}\band\s+(?:its\s+)?(?:consolidated\s+)?subsidiaries$", re.I)
#: a bracketed qualifier alone: "(Unaudited)", "(IIRS)"
QUALIFIER = re.compile(r"^\([^()\d]{2,30}\)$")
_TAG = re.compile(r"^\[[^\[\]]{2,60}\]$")
_CUT_END = re.compile(r"(?:\s(?:the|an|of|and|or|&)|,)$", re.I)
#: the end of a run-in heading's lead-in, its paragraph going on after it ("Transfers. A transfer ...")
RUN_IN = re.compile(r"[.:;—–]\s")
#: a sentence's full stop (not an abbreviation's: "etc." and "Inc." end titles too)
_STOP_END = re.compile(r"[a-z]{3,}[.!?]['\"”’)]?$")
