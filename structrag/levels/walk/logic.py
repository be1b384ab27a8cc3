"""Levels from the document's own logic: what its numbering and its titles say about nesting.

Layout and learned predictors see one heading against its neighbours; some placements follow
from evidence spread over the whole document instead, and these are fixed here before any
prediction (the driver treats them like levels the printed contents gives):

* **A run introduced by a heading that names it.** A numbered run of labelled headings ("Note 1",
  "Note 2", ...; "Schedule 1", "Appendix A", "Annex 1") preceded by an unnumbered heading that names
  the run in the plural ("Notes to Consolidated Financial Statements") nests under it: each member
  goes one level below the introducer.  Where the printed contents lists the members but not the
  introducer, the introducer takes the place the contents gives the run (beside the listed heading
  before it at that level) and the members still go under it: the contents left out a heading, it
  did not say the notes are not part of it.
* **End matter returns to the top level.** After the last heading of the document's top numbered
  scheme (``Part``, else ``Item``) — the body of a filing — signatures, exhibits, certifications,
  a power of attorney and financial statement schedules ("Schedule II"; Roman only: "Schedule 1" of
  an exhibit's agreement belongs to that agreement) are not part of the last item: they go to the
  level of that scheme's headings.  A certification or power of attorney right under an exhibit on
  the same page is that exhibit's title and is left to the predictor.  An exhibit heads the
  document filed under it; the other end matter heads nothing (the driver's floor).
* **A filing's financial statements are siblings.** Inside one item of a filing, the auditor's report
  and the statements it covers ("Report of Independent Registered Public Accounting Firm",
  "Consolidated Balance Sheets", "Consolidated Statements of Cash Flows", "Notes to Consolidated
  Financial Statements") sit side by side: each takes the level of the first of them, which is
  predicted (or listed).  A statement is not a sub-section of the report printed before it, nor of a
  critical audit matter's title.
* **Cover and front matter** (:mod:`.front`, once the body's first numbered section is found).  The
  cover's lines (the issuer, the title, the underwriter) head nothing: each is a leaf.  Front matter
  before the body (an issuer's statement, the important matters, the contents, the definitions, an
  important notice) goes to the top level, beside the body's sections; its own sub-sections still nest
  under it, and it floors nothing after it (the body's first section is no part of the definitions).
* **Leaves.** "Table of Contents" heads the list of sections, not the sections: the heading after
  it goes no deeper than it (:attr:`DocumentLogic.leaves`); nor does the heading after a cover line.  A financial statement of a filing
  ("Consolidated Statements of Equity") parts no listed section: a contents entry after it (a
  schedule the statements index lists, "Summary of Business Segment Data") goes no deeper than it
  (:attr:`DocumentLogic.statements`); a row group detected on its page ("Cash Flows from Investing
  Activities") may still nest under it.

Nothing here names a publisher or a template: the rules read numbering runs and words that
describe a document's parts.  :class:`DocumentLogic` decides statically which headings a rule
covers (:meth:`DocumentLogic.covers`) and, during the walk, their level from the levels already
given (:meth:`DocumentLogic.level`: the rules of :data:`LOGIC_RULES`, in order, each with its
:class:`~.reasons.LevelReason`).
"""

from __future__ import annotations

import re
from typing import Callable, NamedTuple, Sequence

from ...model import Document, Heading, Numbering
from ...numbering import parse_numbering
from ...text import is_contents_title
from .front import front_matter
from .reasons import LevelReason, Placed

__all__ = ["DocumentLogic", "END_MATTER_RE", "BODY_SCHEMES", "LOGIC_RULES"]

#: whole titles that are end matter of a filing (a trailing colon or full stop allowed)
END_MATTER_RE = re.compile(
    r"^(?:signatures?|signature page|exhibits?\s+\d{1,3}(?:\.\d{1,3})*\s*(?:\(?[a-z]\))?|exhibit index|"
    r"index to exhibits|certifications?|powers? of attorney|schedule\s+[ivx]{1,4})\s*[.:]?$",
    re.I,
)
#: end matter that, right under an exhibit on the same page, is that exhibit's title
_EXHIBIT_TITLE_RE = re.compile(r"^(?:certifications?|powers? of attorney)\s*[.:]?$", re.I)
_EXHIBIT_RE = re.compile(r"^exhibits?\s+\d", re.I)

#: a registrant may head its statements with its name: "The Boeing Company and Subsidiaries Notes to ..."
_REGISTRANT = r"(?:[a-z0-9.,&'’ -]{2,60}?\s(?:and|&)\s+(?:its\s+)?(?:consolidated\s+)?subsidiaries\s+)?"
#: whole titles of a filing's financial statements and of the auditor's report on them (an MD&A's
#: "Consolidated Balance Sheets Analysis" is a section about them, not one of them)
_STATEMENT_RE = re.compile(
    "^" + _REGISTRANT +
    r"(?:reports? of independent registered public accounting firms?"
    r"|(?:condensed\s+)?consolidated\s+(?:balance\s+sheets?|statements?\s+of\s+(?!.*\b(?:analysis|review|discussion|"
    r"data|highlights|overview)\b)[a-z ,'’()&-]{3,80}?)"
    r"|notes\s+to\s+(?:the\s+)?(?:condensed\s+)?consolidated\s+financial\s+statements)"
    r"(?:\s*\((?:unaudited|continued)\))?\s*[.:]?$", re.I)

#: a statement itself (a balance sheet, a statement of ...), as opposed to the report on it or its notes
_STATEMENT_PROPER_RE = re.compile(
    "^" + _REGISTRANT + r"(?:condensed\s+)?consolidated\s+(?:balance\s+sheets?|statements?\s+of)\b", re.I)

#: schemes whose headings make the body of a filing, highest first
BODY_SCHEMES = ("part", "item")

#: a run's label word and the plural an introducer names it by ("Notes to ...", "Appendices")
_PLURALS = {"note": "notes", "schedule": "schedules", "appendix": "appendices|appendixes", "annex": "annexes"}
#: the schemes whose runs can be introduced
_RUN_SCHEMES = {"note", "schedule", "appendix"}

#: how many headings and pages an introducer may precede a run's first member by
_INTRO_MAX_HEADINGS = 3
_INTRO_MAX_PAGES = 2
#: how many numbers a run may skip from one member to the next (members the detector missed)
_MAX_GAP = 3


def _value(num: Numbering) -> int:
    """A run member's number; a single letter counts as a letter ("Appendix C" is 3, not Roman 100)."""
    tok = num.label.split()[-1].rstrip(".:)") if num.label.split() else ""
    if len(tok) == 1 and tok.isascii() and tok.isalpha():
        return ord(tok.lower()) - 96
    return num.values[0]


def _number(h: Heading):
    # headings given from elsewhere (a reference, a user's list) may come without their number parsed
    return h.numbering if h.numbering is not None else parse_numbering(h.text)[0]


class DocumentLogic:
    """Which headings the document's logic places, and where, for one document's headings."""

    def __init__(self, headings: Sequence[Heading], document: Document | None = None) -> None:
        self.headings = tuple(headings)
        n = len(self.headings)
        self._nums = [_number(h) for h in self.headings]
        #: member index -> introducer index (a numbered run named by a heading before it)
        self.member_of: dict[int, int] = {}
        #: introducer index -> its members' indices
        self.members: dict[int, list[int]] = {}
        #: end-matter indices -> indices of the body headings (the top scheme's) whose shallowest level they take
        self.end_matter: dict[int, tuple[int, ...]] = {}
        front = front_matter(self.headings, self._nums)
        #: indices of the cover's headings (the issuer, the title, the underwriter): they head nothing
        self.cover: frozenset[int] = front.cover
        #: indices of the front matter before the body: each goes to the top level
        self.front: frozenset[int] = front.front
        #: indices of headings nothing nests under (the contents page's title, the cover's lines)
        self.leaves: frozenset[int] = frozenset(
            i for i, h in enumerate(self.headings)
            if is_contents_title(h.text) and (document is None or h.page in document.toc_pages)) | self.cover
        #: statement index -> the first statement of its item (the one the others go beside)
        self.statement_of: dict[int, int] = {}
        #: indices of the statements proper: no listed heading nests under one
        self.statements: frozenset[int] = frozenset()
        self._find_runs()
        self._find_end_matter(n)
        self._find_statements()

    # -- rules --------------------------------------------------------------------------------

    def _find_runs(self) -> None:
        hs, nums = self.headings, self._nums
        for i, num in enumerate(nums):
            if num is None or num.scheme not in _RUN_SCHEMES or _value(num) != 1:
                continue
            word = _PLURALS.get(num.label.split()[0].lower())
            if word is None:
                continue  # "Exhibit 1": filings number exhibits by form item, not as a run
            if i in self.member_of:
                continue
            intro = self._introducer(i, word)
            if intro is None:
                continue
            # the run: members that continue each other's numbers; other headings may sit between
            # (a note's own sub-headings), a heading of another body scheme ends it
            run, last = [i], _value(num)
            for k in range(i + 1, len(hs)):
                nk = nums[k]
                if nk is None:
                    continue
                if nk.scheme in BODY_SCHEMES:
                    break
                if nk.scheme == num.scheme:
                    v = _value(nk)
                    # a member the detector missed leaves a gap: a small step forward still continues
                    if 0 < v - last <= _MAX_GAP:
                        run.append(k)
                        last = v
                    elif v == 1:
                        break  # a new run starts: it needs its own introducer
            if len(run) < 2:
                continue
            self.members[intro] = run
            for k in run:
                self.member_of[k] = intro

    def _introducer(self, first: int, word: str) -> int | None:
        """The unnumbered heading just before ``first`` that names its run (``word`` in its text)."""
        hs = self.headings
        rx = re.compile(r"\b(?:" + word + r")\b", re.I)
        for k in range(first - 1, max(-1, first - 1 - _INTRO_MAX_HEADINGS), -1):
            h = hs[k]
            if hs[first].page - h.page > _INTRO_MAX_PAGES:
                return None
            if self._nums[k] is None and rx.search(h.text) and len(h.text) <= 120:
                return k
        return None

    def _find_end_matter(self, n: int) -> None:
        hs = self.headings
        of = {sc: [i for i, x in enumerate(self._nums) if x is not None and x.scheme == sc] for sc in BODY_SCHEMES}
        parts, items = of["part"], of["item"]
        # parts over items; one part is enough beside items (the other parts' titles may be lost)
        body = parts if parts and (items or len(parts) >= 2) else items if len(items) >= 2 else []
        if not body:
            return
        last = max(parts + items)
        for i in range(last + 1, n):
            t = hs[i].text.strip()
            if not END_MATTER_RE.match(t):
                continue
            if _EXHIBIT_TITLE_RE.match(t) and i > 0 and hs[i - 1].page == hs[i].page \
                    and _EXHIBIT_RE.match(hs[i - 1].text.strip()):
                continue  # the title of the exhibit above it
            self.end_matter[i] = tuple(body)

    def _find_statements(self) -> None:
        items = [i for i, x in enumerate(self._nums) if x is not None and x.scheme == "item"]
        if len(items) < 2:
            return  # a filing's body: the statements of a report without items are left to the predictor
        group: list[int] = []
        for i, h in enumerate(self.headings):
            if i in items:
                self._close_group(group)
                group = []
            elif _STATEMENT_RE.match(" ".join(h.text.split())):
                group.append(i)
        self._close_group(group)

    def _close_group(self, group: list[int]) -> None:
        if len(group) >= 2:
            for k in group[1:]:
                self.statement_of[k] = group[0]
            # the statements proper are tables: no listed section nests under one (the auditor's report heads
            # its critical audit matters, the notes' title heads the notes)
            self.statements |= frozenset(k for k in group
                                         if _STATEMENT_PROPER_RE.match(" ".join(self.headings[k].text.split())))

    # -- queries during the walk ------------------------------------------------------------------

    @property
    def active(self) -> bool:
        """Whether any rule applies to this document at all."""
        return bool(self.member_of or self.end_matter or self.leaves or self.statement_of or self.statements
                    or self.front)

    def opens_notes(self, i: int) -> bool:
        """Whether heading ``i`` is numbered 1, not as an item ("1. Accounting Policies", "Note 1 - ..."): the
        notes' first, which a filing prints right after its statements.  A later note after a heading that
        reads like a statement ("Consolidated Balance Sheets" of a guarantor, inside a note) is left alone."""
        x = self._nums[i]
        return x is not None and x.scheme != "item" and len(x.values) == 1 and _value(x) == 1

    def covers(self, i: int) -> bool:
        """Whether a rule may place heading ``i`` (known before any level is)."""
        return (i in self.member_of or i in self.members or i in self.end_matter or i in self.statement_of
                or i in self.front)

    def level(self, i: int, levels: Sequence[int], fixed: Sequence[int | None]) -> Placed | None:
        """The level heading ``i`` takes, given the ``levels`` of the headings before it; None: no rule applies.

        ``fixed`` holds the levels the printed contents gave (None elsewhere): they win over the
        statement and run rules.  The rules of :data:`LOGIC_RULES` are asked in order; the first
        that places the heading gives the level and its reason.
        """
        for rule in LOGIC_RULES:
            lv = rule.level(self, i, levels, fixed)
            if lv is not None:
                return Placed(lv, rule.reason)
        return None

    # -- the placements, one per rule -----------------------------------------------------------

    def _front_matter(self, i: int, levels: Sequence[int], fixed: Sequence[int | None]) -> int | None:
        # the top level: the level of the document's first heading (a cover line, a leaf, or this one); a level
        # the printed contents gives stands
        if i in self.front and fixed[i] is None:
            return levels[0] if levels else 1
        return None

    def _exhibit(self, i: int, levels: Sequence[int], fixed: Sequence[int | None]) -> int | None:
        # an exhibit heads the document filed under it; signatures and the like head nothing
        if i in self.end_matter and _EXHIBIT_RE.match(self.headings[i].text.strip()):
            return self._top(i, levels)
        return None

    def _end_matter(self, i: int, levels: Sequence[int], fixed: Sequence[int | None]) -> int | None:
        return self._top(i, levels) if i in self.end_matter else None

    def _top(self, i: int, levels: Sequence[int]) -> int:
        # the shallowest: one body heading misplaced (a "Part I" cut off its title) must not pull it down
        return min(levels[k] for k in self.end_matter[i])

    def _beside_statements(self, i: int, levels: Sequence[int], fixed: Sequence[int | None]) -> int | None:
        if i in self.statement_of and fixed[i] is None:
            first = self.statement_of[i]
            if first < len(levels):
                return levels[first]
        return None

    def _introduces_listed_run(self, i: int, levels: Sequence[int], fixed: Sequence[int | None]) -> int | None:
        if i not in self.members or fixed[i] is not None:
            return None
        listed = [fixed[k] for k in self.members[i] if fixed[k] is not None]
        if not listed:
            return None
        # the contents listed the run but not its introducer: the introducer takes the place the
        # contents gave the run, beside the listed heading before it at that contents level
        c = int(min(listed))  # type: ignore[type-var]
        for k in range(i - 1, -1, -1):
            if fixed[k] is not None and fixed[k] <= c and k < len(levels):  # type: ignore[operator]
                return levels[k] if fixed[k] == c else levels[k] + 1
        return c

    def _under_introducer(self, i: int, levels: Sequence[int], fixed: Sequence[int | None]) -> int | None:
        if i in self.member_of:
            intro = self.member_of[i]
            if intro < len(levels):
                return levels[intro] + 1
        return None


class LogicRule(NamedTuple):
    """One placement of the document's logic: its name, the level it gives (None: it does not apply), its reason."""

    name: str
    level: Callable[[DocumentLogic, int, Sequence[int], Sequence[int | None]], int | None]
    reason: LevelReason


#: the document's logic's rules, asked in this order (an introducer is never a run's member: it has no number)
LOGIC_RULES: tuple[LogicRule, ...] = (
    LogicRule("front matter at the top level", DocumentLogic._front_matter, LevelReason.FRONT_MATTER),
    LogicRule("an exhibit back at the top level", DocumentLogic._exhibit, LevelReason.EXHIBIT),
    LogicRule("end matter back at the top level", DocumentLogic._end_matter, LevelReason.END_MATTER),
    LogicRule("a statement beside the first of its item", DocumentLogic._beside_statements,
              LevelReason.BESIDE_STATEMENTS),
    LogicRule("an introducer where the contents put its run", DocumentLogic._introduces_listed_run,
              LevelReason.INTRODUCES_LISTED_RUN),
    LogicRule("a run's member under its introducer", DocumentLogic._under_introducer, LevelReason.UNDER_INTRODUCER),
)
