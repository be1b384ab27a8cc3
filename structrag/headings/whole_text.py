"""Judgements on a heading's whole text, its wrapped lines joined (:func:`.wrapped.join_wrapped`).

A line alone may say nothing ("Asset management fees increased" wraps on): these read what the layout
detector is about to return and drop a sentence that leads into a list (:func:`leads_in`), a line stopping
mid-phrase (:func:`cut_off`), the end of a sentence (:func:`ends_sentence`) and a bracketed qualifier standing
alone (:func:`lone_qualifier`).
"""

from __future__ import annotations

import re

from ..text import letter_count, starts_lower

__all__ = ["leads_in", "cut_off", "ends_sentence", "lone_qualifier", "run_in_title", "QUALIFIER", "REGISTRANT",
           "RUN_IN"]

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


#: words a full stop follows without ending anything: initials ("U.S"), a company's form, a reference
_ABBREVIATION = re.compile(r"(?:\b[A-Za-z]|\b(?:inc|co|corp|ltd|llc|no|nos|vs|mr|mrs|ms|dr|st|sec|art|fig|jr|sr))$",
                           re.I)
#: a run-in title is short; what follows it on its line is its paragraph's first words
_RUN_IN_TITLE_WORDS = 8
_RUN_IN_TEXT_WORDS = 5
#: the first words of a sentence, and the verbs that make a clause's text one (not a title's)
_SENTENCE_OPENERS = frozenset("the a an it this these those each any all if unless when upon in on for no such we our "
                              "there as notwithstanding subject except with".split())
_SENTENCE_VERBS = frozenset("is are was were be been shall will may must has have had does do can should would "
                            "means includes".split())
#: a heading text this long that holds a run-in title is a title with its paragraph's first line
_RUN_IN_MIN_CHARS = 60


def run_in_title(text: str) -> str | None:
    """The run-in title of a heading whose text goes on into its paragraph, or None.

    A contract's clauses and a plan's sections set their titles in the paragraph's first line: "1.1.
    Objective. It is the intent of 3M Company to provide a compensation program that will attract and";
    the section is "1.1. Objective", the rest is the paragraph's first words, cut where the line ends.
    Only a numbered line whose title after the number is short and whose rest is a sentence's start
    counts ("Item 7. Management's Discussion and Analysis ..." has no lead-in after its number).
    """
    from ..numbering import parse_numbering

    t = " ".join(text.split())
    if len(t) < _RUN_IN_MIN_CHARS:
        return None
    num, rest = parse_numbering(t)
    if num is None or not rest:
        return None
    # the first stop that ends the title: not an abbreviation's ("U.S. Operations", "Inc. and ...")
    m = next((x for x in RUN_IN.finditer(rest)
              if not (rest[x.start()] == "." and _ABBREVIATION.search(rest[:x.start()]))), None)
    if m is None:
        return None
    lead, after = rest[:m.start()].strip(), rest[m.end():].strip()
    if letter_count(lead) < 2 or len(lead.split()) > _RUN_IN_TITLE_WORDS or len(after.split()) < _RUN_IN_TEXT_WORDS:
        return None
    words = after.lower().replace(",", " ").split()
    # a sentence starts there (not a title's next part: "Exhibit 300: Part II: Planning ..."): it opens on a
    # determiner or a conjunction, or it has a verb of the kind contracts and plans are written in
    if words[0].strip("(\"“‘'") not in _SENTENCE_OPENERS and not _SENTENCE_VERBS & set(words):
        return None
    return t[: len(t) - len(rest)] + lead
