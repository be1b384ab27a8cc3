"""Lines that look like headings but are not: table furniture, signatures, closings, cover lines.

Layout scoring (:mod:`.detect`) judges a block by its look; a column header in bold, a board
member's name in a larger size or "Sincerely," on a line of its own look like titles too.  Each
false heading cuts a section, so chunks end at table rows and section paths carry column headers.
Three kinds of evidence, all cheap (no table finder, no second pass over the PDF):

* **the page** (:func:`cover_reason`): an SEC cover page, a front or back cover with hardly any words;
* **the text alone** (:func:`text_reason`): letter closings, acceptance lines ("ACCEPTED AND AGREED:") and
  notations ("Enclosures: ..."), "/s/" signatures, "(continued)" repeats of a title on the next page, SEC
  cover-page lines, a paper's byline of authors, blank-page notices, column headers ("Three Months Ended",
  "(In millions)"), rows of figures ("Total $ — $ —"), a safety notice's label ("WARNING !"), a web or mail
  address, captions by their words ("Table 2: ...", "... (SRM) Table:"); on a whole heading, wrapped lines
  joined, :mod:`.whole_text`;
* **the page around the block** (:func:`page_reasons`): a label stacked between table rows (rows of figures,
  rows of years, unit lines) is a row group or column header; names and job titles stacked together are a
  signature block or a board list, and a party's name over its "By:" line signs; a one-line block whose words
  are spread across the page is a table's header row or chart labels merged into one line; a line right on top
  of a grid of short cells is its caption; numbered items, "Name: value" lines and short labels stacked with
  nothing between them are a list (:mod:`.lists`), and so are an exhibit index's rows; a bold line whose
  paragraph goes on under it in lower case is the first words of a sentence (a bold term and its definition);
  a line right under a bullet item, indented to its text, is the item's next line; a candidate that is itself
  rows of figures is a table's; a line in capitals in the text's own type right under a paragraph is a tag
  line; an acronym alone on a line, bracketed or with its phrase going on below, is a cell's word; a line
  printed inside another block's box is a cell; at a table's edge, column headers and row groups
  (:mod:`.tables`); a divider page's contents listing (:func:`.lists.contents_listing`).

A real title over a table keeps its place: the table rule asks for table rows on *both* sides, or a label
right on top of the rows, at their own row spacing (a sub-label ending on a colon may come between).

Among the detected headings (:func:`running_repeats`): a section's title printed again at the same place at
the top of the next page, without "(continued)" (a running title, a table's caption or header row repeated
over its continuation) goes on with the section instead of opening a new one.
"""

from __future__ import annotations

import re
from typing import Sequence

from ..model import Block, Heading
from ..text import WIDE_CHAR, latin_capitals, normalize_title, starts_lower
from ._geometry import at_row_spacing, close_below, pitch, share_inside, tight, touching
from .lists import SENTENCE as _SENTENCE
from .lists import contents_listing, exhibit_index, figure_labels, form_fields, list_items, stacked_labels
from .lists import numbered as _numbered
from .signatures import SIGNED, author_line, signature_reasons
from .tables import edge_reasons, prose as _prose

__all__ = ["text_reason", "page_reasons", "cover_reason", "is_table_line", "row_of_figures", "running_repeats"]

_CLOSING = re.compile(
    r"^(?:sincerely(?: yours)?|yours (?:sincerely|faithfully|truly)|(?:with )?(?:best|kind|warm(?:est)?) regards"
    r"|respectfully(?: submitted| yours)?|cordially|(?:with )?best wishes|regards"
    r"|(?:accepted|acknowledged|agreed),? and (?:agreed|accepted|acknowledged)(?: to)?)\s*[,.!:]?$", re.I)
#: a letter's notations after its signature ("Enclosures: ...", "cc: ..."), a web or mail address (a domain in
#: lower case: "AMAZON.COM, INC." is a name), a safety notice's label, a blank page
_NOTATION = re.compile(r"^(?:enclosures?|encl\.?|cc|bcc|attachments?)\s*:\s*\S", re.I)
_ADDRESS = re.compile(r"https?://|\bwww\.|\b[\w.-]+@[\w-]+\.[a-z]"
                      r"|(?<![\w.])[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|gov|edu|net)\b")
_CALLOUT = re.compile(r"^(?:danger|warning|caution|notice|note)\s*[!:]?$", re.I)
_BLANK_PAGE = re.compile(r"^[\[(]?\s*(?:this\s+page\s+(?:has\s+been\s+|is\s+)?(?:intentionally\s+)?left\s+blank"
                         r"|intentionally\s+(?:left\s+)?blank)\.?\s*[\])]?$", re.I)
# a title repeated at the top of the next page: its section goes on, no new one starts
_CONTINUED = re.compile(r"(?:\(\s*(?:continued|cont(?:'|’)?d|cont\.)\s*\)|[—–-]\s*continued)\s*[:.]?$", re.I)
#: a footnote opens on its mark ("* For credit institutions ...", "** Fees and commissions ...", "† Restated")
_FOOTNOTE = re.compile(r"^(?:\*{1,3}|[†‡])\s*\w")
# SEC cover-page lines: the form's furniture, never a section of the report
_SEC_COVER = re.compile(
    r"^(?:united states\s+)?securities and exchange commission$|^washington,?\s*d\.?\s*c\.?(?:\s+\d{5})?$"
    r"|^form\s+(?:10-?k|10-?q|20-?f|40-?f|8-?k)(?:/a)?$|^\W{0,4}\s*(?:annual|quarterly|transition) report pursuant to"
    r"|^commission file (?:number|no)|^\(?exact name of registrant|^securities registered pursuant to section", re.I)
# column headers and unit lines of financial tables
_COLUMN_HEAD = re.compile(
    r"^\(?\s*(?:(?:amounts?|dollars|figures|\$|€|£|usd|eur)\s+)?in\s+(?:\$|€|£|usd|eur\s+)?\s*(?:thousands|millions|billions)\b[^()]{0,60}\)?$"
    r"|^\(\s*[^()]{0,40}\bin\s+(?:thousands|millions|billions)\b[^()]{0,60}\)$"
    r"|^(?:for the\s+)?(?:(?:three|six|nine|twelve|\d{1,2})[\s-]+months?|(?:fiscal\s+)?years?|quarters?|(?:\d{1,2}|\w+)[\s-]+weeks?)"
    r"\s+ended\b.{0,40}$", re.I)
_SMALL = re.compile(r"^\d{1,2}$")  # a bare small number
_BULLET = re.compile(r"^\s*[•·▪◦‣●■–-]\s")  # a bullet item's mark
#: a bracketed part of a line (a unit, when :data:`_COLUMN_HEAD` says so)
_UNIT = re.compile(r"\([^()]{4,80}\)")
_YEARS_FIRST = re.compile(r"^(?:19|20)\d\d\s+(?:19|20)\d\d\b")
_FIGURE = re.compile(r"^[(\-–—$€£¥]*\d[\d,.]*(?:\)%?|%\)?)?$|^[$€£¥]$|^[—–-]+$|^(?:n/?a|nm|n\.m\.)$", re.I)
_YEAR = re.compile(r"^(?:19|20)\d\d[,;.]?$")
#: a period on a chart's axis: "Dec-17", "Mar-2022", "Q1'22", "1Q22", "FY21", "FY2021", "H1"
_PERIOD = re.compile(r"^(?:(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[-'’/]?(?:\d\d|\d{4})"
                     r"|q[1-4](?:[-'’/]?(?:\d\d|\d{4}))?|[1-4]q(?:\d\d|\d{4})|fy[-'’]?(?:\d\d|\d{4})|h[12])$", re.I)
_DATE_WORD = re.compile(r"^(?:january|february|march|april|may|june|july|august|september|october|november|december"
                        r"|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?$|^\d{1,2},?$", re.I)

#: an acronym or a bracketed one, nothing else ("IPMS", "(HTML)")
_ACRONYM = re.compile(r"^\(?[A-Z]{2,5}\)?\.?$")
#: a table's or a figure's caption by its words: "Table 2: Retail Broker-Dealer Lines of Business",
#: "Figure 3.1 ...", "4. Service Component Reference Model (SRM) Table:" (a title ending on "Table" without the
#: colon may be a section's: "2022 Summary Compensation Table" in a proxy statement)
_CAPTION = re.compile(r"^(?:table|figure|fig\.|chart|graph)\s+[\dA-Z][\d.\-–]*\s*[:.–—-]|\S\s+tables?\s*:$", re.I)


#: what the text alone says, in order
_BY_TEXT = ((_CLOSING.match, "letter closing"), (SIGNED.match, "signature"), (_NOTATION.match, "letter notation"),
            (_BLANK_PAGE.match, "blank page notice"), (_CALLOUT.match, "a safety notice's label"),
            (_FOOTNOTE.match, "footnote"), (_CAPTION.search, "a table's or a figure's caption"),
            (_ADDRESS.search, "a web or mail address"))


def text_reason(text: str, page: int) -> str | None:
    """Why ``text`` (a block's text, whitespace collapsed) is no heading whatever its look, or None."""
    t = text.strip()
    why = next((why for found, why in _BY_TEXT if found(t)), None)
    if why is not None:
        return why
    if _CONTINUED.search(t) and not t.lower().startswith(("contents", "table of contents")):
        return "continued repeat"
    if page <= 2 and _SEC_COVER.match(t):
        return "cover-page line"
    if page == 0 and author_line(t):
        return "a byline of authors"
    if len(t) <= 90 and (_COLUMN_HEAD.match(t) or _YEARS_FIRST.match(t) or (_UNIT.search(t) and _header_row(t))):
        return "column header"
    toks = t.split()
    if any(x in ("$", "€", "£") or x.startswith(("$", "€", "£")) for x in toks):
        if sum(1 for x in toks if _FIGURE.match(x)) >= 3:
            return "figures row"
    # nothing but figures and fillers ("13 N/A 97 N/A"): a row's cells, whatever number it starts with
    if len(toks) >= 2 and all(_FIGURE.match(x) for x in toks) and not all(_YEAR.match(x) for x in toks):
        return "figures row"
    # a chart's axis: periods and figures only ("Dec-17 Dec-18 Dec-19 Dec-20 $0", "Q1 22 Q2 22 Q3 22")
    periods = sum(1 for x in toks if _PERIOD.match(x))
    if periods >= 3 and all(_PERIOD.match(x) or _FIGURE.match(x) or _YEAR.match(x) for x in toks):
        return "chart axis labels"
    return None


#: a front or back cover: the first or last page of a document of some length, with hardly any words on it
_COVER_WORDS = 40
_COVER_MIN_PAGES = 10


def cover_reason(blocks: Sequence[Block], page: int, page_count: int) -> str | None:
    """Why no line of this page (its ``blocks``) opens a section, or None.

    An SEC cover page -- three or more of the form's own lines on it, the Commission's name among them
    ("SECURITIES AND EXCHANGE COMMISSION", "FORM 10-K", "Commission file number"), wherever an annual
    report binds it -- holds the registrant's
    name, check-box captions ("OR") and addresses, never a section.  The first or last page of a document
    of :data:`_COVER_MIN_PAGES` pages or more with at most :data:`_COVER_WORDS` words is a front or back
    cover: the report's title, a tagline, a ticker, an imprint's labels; the document is the root of its
    tree, not a section in it.  A contents title on such a page stays (the caller checks).
    """
    lines = {ln.strip().lower() for b in blocks for ln in b.text.split("\n")}
    form = [ln for ln in lines if _SEC_COVER.match(ln)]
    # three of the form's lines, the Commission's name among them: a letter addressed to the SEC (an
    # auditor's exhibit) has two, a risk section citing "Form 10-K" and "Form 10-Q" has no Commission
    if len(form) >= 3 and any("commission" in ln for ln in form):
        return "SEC cover page"
    if page_count >= _COVER_MIN_PAGES and page in (0, page_count - 1):
        # a Chinese word is about two characters; count them so, not as one whitespace-separated run
        words = sum(len([t for t in b.text.split() if not WIDE_CHAR.search(t)]) + len(WIDE_CHAR.findall(b.text)) / 2
                    for b in blocks)
        if words <= _COVER_WORDS:
            return "front cover" if page == 0 else "back cover"
    return None


def _covers(o: Block, b: Block) -> bool:
    """``o``'s box holds most of ``b``'s: ``b`` is printed on ``o``'s lines."""
    return share_inside(b.bbox, o.bbox) >= 0.6


#: a change in points after its figure, set apart or not ("1 pt", "(2)pts", "25 bps"): a cell like a per-cent
_POINTS = re.compile(r"^([(\-–—]*\d[\d,.]*\)?)?(?:pts?|ppts?|pp|bps?)\.?$", re.I)


def _cells(line: str) -> list[str]:
    """A row's tokens, a per-cent sign or a points unit set apart joined to its figure ("1.10 %", "2 pts" are
    one cell each)."""
    toks: list[str] = []
    for t in line.split():
        points = _POINTS.match(t)
        if points and points.group(1):
            toks.append(points.group(1) + "%")
        elif toks and (t == "%" or (points and _FIGURE.match(toks[-1]) and toks[-1][-1:] not in "%$€£¥-–—")):
            toks[-1] += "%"
        else:
            toks.append(t)
    return toks


def _has_amount(line: str) -> bool:
    """A figure written as an amount: with a sign, a separator or brackets, or of three digits or more."""
    toks = _cells(line)
    return any(_FIGURE.match(t) and not _YEAR.match(t) and any(c.isdigit() for c in t)
               and (any(c in t for c in ",.%$€£¥()") or sum(c.isdigit() for c in t) >= 3)
               for t in toks) or any(t in ("$", "€", "£") for t in toks)


def row_of_figures(line: str) -> bool:
    """A table row: it ends on a figure and holds two (or one amount on a short line); prose that cites
    amounts ends on words."""
    toks = _cells(line)
    if not toks or not (_FIGURE.match(toks[-1]) and not _YEAR.match(toks[-1])):
        return False
    figs = [x for x in toks if _FIGURE.match(x) and not _YEAR.match(x)]
    # a part's number after a dash ("CLIMATE CHANGE – 1") is no amount: a row's dash stands beside one
    # with more than two digits, or beside two
    amounts = [x for x in figs if any(c.isdigit() for c in x)]
    if not amounts or (len(amounts) == 1 and _SMALL.match(amounts[0])
                       and all(x == amounts[0] or set(x) <= set("—–-") for x in figs)):
        return False
    # one figure: an amount ("$ 1,234", "(56)", "7%") on a short row; "Exhibit 12.1" is a label
    return len(figs) >= 2 or (len(toks) >= 2 and any(c in figs[0] for c in ",()%$€£") and len(toks) <= 8)


def _header_row(line: str) -> bool:
    """A row of years or dates ("2018 2017 2016", "December 31, 2023 2022") or a unit line."""
    toks = line.split()
    if len(toks) < 2:
        return False  # a year alone is a sub-heading ("2020") as often as a column
    if _COLUMN_HEAD.match(line.strip()):
        return True
    # the unit in brackets among the columns' dates ("(in thousands) 2022 2021", "June 30, ($ in millions) 2023")
    unit = _UNIT.search(line)
    if unit and _COLUMN_HEAD.match(unit.group(0)):
        toks = (line[: unit.start()] + " " + line[unit.end() :]).split()
    years = sum(1 for x in toks if _YEAR.match(x))
    return years >= 1 and all(_YEAR.match(x) or _DATE_WORD.match(x) or x in ("$", "%") for x in toks)


def is_table_line(b: Block) -> bool:
    """Whether a block is table rows: most of its lines rows of figures, or a header row of years, dates or units."""
    lines = [ln for ln in b.text.split("\n") if ln.strip()]
    if not lines:
        return False
    figs = sum(1 for ln in lines if row_of_figures(ln))
    if figs and figs * 2 >= len(lines):
        return True
    # a header cell's unit may wrap onto the years' line ("(in thousands, except per share" / "amounts) 2022")
    return all(_header_row(ln) for ln in lines) or (1 < len(lines) <= 3 and _header_row(" ".join(lines)))


def _rows(b: Block) -> bool:
    """Table rows of some extent: two lines or more, or one row of figures."""
    return b.line_count >= 2 or row_of_figures(b.text)


def _in_rows(b: Block, t: Block) -> bool:
    """``b`` (one line) lies on the rows of table block ``t``: most of its height inside ``t``'s, a label
    cell whose figures are in ``t`` (a bold "Total net lease cost" set apart from its own row)."""
    if b.line_count != 1 or t.line_count < 2:
        return False
    h = b.bbox[3] - b.bbox[1]
    overlap = min(b.bbox[3], t.bbox[3]) - max(b.bbox[1], t.bbox[1])
    return h > 0 and overlap >= 0.5 * h and b.bbox[0] < t.bbox[2] and t.bbox[0] < b.bbox[2] + 3 * pitch(t)


#: where a run-in title ends and its text begins
_RUN_IN = re.compile(r"\s[—–]\s|:\s|\.\s")


def _continues_in_lower(b: Block, nxt: Block) -> bool:
    """``nxt`` goes on with ``b``'s sentence: a paragraph right under it (no paragraph space, the same size,
    not bold; one short line after a bold term and its definition's first words, "... volume: Dollar amount
    of") opening on a lower-case word -- not a bullet letter ("o Visit ..."), but the article "a"."""
    first = nxt.text.split(maxsplit=1)[0] if nxt.text.split() else ""
    return (not _SENTENCE.search(b.text.rstrip()) and starts_lower(nxt.text) and (len(first) >= 2 or first == "a")
            and not nxt.bold
            and (nxt.line_count >= 2 or len(nxt.text) >= 60 or (b.bold and ": " in b.text.rstrip()))
            and abs(b.size - nxt.size) <= 0.05 * nxt.size
            and b.column == nxt.column and -0.5 * pitch(b) <= nxt.bbox[1] - b.bbox[3] <= 0.3 * pitch(b))


def _cell(b: Block) -> bool:
    """Short lines: a table cell, not a column of running text beside a sidebar."""
    return len(b.text) / max(b.line_count, 1) <= 40


#: "nearly the same type": a table's caption and cells, and the cells of one row, differ in size by less
_NEAR_SIZE = 1.15


#: a caption in the running text's type over a table set smaller ("Selected metrics" in 10 pt over 8 pt rows),
#: below running text on its page: a title at a page's top (a statement's) opens what follows
_CAPTION_SIZE = 1.3


def _one_row(a: Block, b: Block) -> bool:
    """Two cells of one table row: side by side on the same line, in nearly the same size."""
    h = min(a.bbox[3] - a.bbox[1], b.bbox[3] - b.bbox[1])
    overlap = min(a.bbox[3], b.bbox[3]) - max(a.bbox[1], b.bbox[1])
    return overlap > 0.5 * h and max(a.size, b.size) <= _NEAR_SIZE * min(a.size, b.size)


def _grid_under(blocks: Sequence[Block], side: set[int] | frozenset[int], k: int, title: Block) -> bool:
    """A table or form grid starts at ``blocks[k]``, under ``title``: short cells side by side in its first
    rows (``blocks[k]`` one of them, or one header line with the cells right under it or beside its later
    lines, where the first column's cells read into the header's block), spanning the title's middle.
    Running text among them (paragraphs in an auditor's critical-matters grid, a sentence beside a
    figure's labels, two columns of a glossary) follows the title: it heads that text."""
    b = blocks[k]
    lh = pitch(b)
    # the grid's first rows: what starts beside blocks[k], or within a line under it when it is one line (a
    # header whose last words wrap); the next caption is further down
    bound = b.bbox[3] + (1.2 if b.line_count == 1 else 0.3) * lh
    window = [c for c in blocks[k : k + 4] if c.bbox[1] <= bound]
    # (rows of figures set as one block under a header row are the grid's, not running text)
    if any(_prose(c) or (j and c.index not in side and not _cell(c) and not is_table_line(c))
           for j, c in enumerate(window)):
        return False
    top = b.bbox[1] if b.index in side else b.bbox[1] + 0.5 * lh
    cells = [c for c in window if c.index in side and _cell(c) and top <= c.bbox[1] <= bound]
    if b.index in side:
        if not any(_one_row(x, y) for i, x in enumerate(cells) for y in cells[i + 1 :]):
            return False
        span = cells
    else:
        # a header's cells lie under it, not in another column of the page
        cells = [c for c in cells if c.bbox[0] < b.bbox[2] and b.bbox[0] < c.bbox[2]]
        first = b.text.split("\n")[0].strip()
        # a unit line ("(dollars in millions)") sits under a statement's or a section's title as well
        if not cells or _SENTENCE.search(first) or len(first.split()) < 3 or _COLUMN_HEAD.match(first):
            return False
        span = cells + [b]  # the header line
    middle = (title.bbox[0] + title.bbox[2]) / 2
    return min(c.bbox[0] for c in span) <= middle <= max(c.bbox[2] for c in span)


def page_reasons(blocks: Sequence[Block], candidates: set[int],
                 side: set[int] | frozenset[int] = frozenset()) -> dict[int, str]:
    """Why each of the ``candidates`` (block indices) among one page's ``blocks`` (reading order) is no heading.

    ``side``: indices of the blocks that share a row with another block of their column (table cells,
    form grids; :mod:`.detect` finds them).
    """
    out: dict[int, str] = {}
    if not candidates:
        return out
    n = len(blocks)
    out.update((i, "numbered list item") for i in list_items(blocks) if i in candidates)
    out.update((i, "a form field") for i in form_fields(blocks) if i in candidates)
    out.update((i, "a contents listing's entry") for i in contents_listing(blocks) if i in candidates)
    out.update((i, "one of a list of labels") for i in stacked_labels(blocks) if i in candidates and i not in out)
    out.update((i, "a label of a map or a diagram") for i in figure_labels(blocks) if i in candidates and i not in out)
    out.update((i, "a row of an exhibit index") for i in exhibit_index(blocks) if i in candidates and i not in out)
    table = [is_table_line(b) for b in blocks]
    for k, b in enumerate(blocks):
        if b.index not in candidates or _numbered(b):
            continue
        # its own lines are a table's rows or its header row; one line needs an amount written as one
        # ("$ 1,034", "8 %", "(56)", "2,500"): "Differences between versions 4 and 5" is a title
        if table[k] and (b.line_count > 1 or _header_row(b.text) or _has_amount(b.text)):
            out[b.index] = "table rows"
            continue
        # spread out: one line whose width is several times its text's (table header rows, chart labels)
        words = b.text.split()
        # Latin text only: Chinese characters are full-width and Chinese titles are letter-spaced ("释 义")
        if b.line_count == 1 and len(words) >= 2 and b.size > 0 and not WIDE_CHAR.search(b.text):
            if (b.bbox[2] - b.bbox[0]) > 1.0 * b.size * len(" ".join(words)):
                out[b.index] = "words spread across the line"
                continue
    # a label set on top of table rows, with no space between and in the rows' own type: it names the rows
    # under it (a row group, "Change in benefit obligation"), it does not open a section; a title set
    # larger than its table ("Income statement SMA Group" over the statement) is the statement's heading
    # (a sub-label ending on a colon may come between: "Costs and expenses" / "Cost of revenues:" / rows)
    for k in range(n - 1):
        b, m = blocks[k], k + 1
        while m + 1 < n and not table[m] and blocks[m].line_count == 1 and blocks[m].text.rstrip().endswith(":") \
                and table[m + 1] and at_row_spacing(blocks[m - 1], blocks[m], blocks[m + 1]):
            m += 1
        if b.index in candidates and not table[k] and table[m] and not _numbered(b) and b.size <= 1.1 * blocks[m].size \
                and at_row_spacing(blocks[m - 1], blocks[m]):
            out.setdefault(b.index, "labels the table rows right under it")
    # a title right on top of a grid (cells side by side, or a header line over them), in nearly the grid's
    # type and with no paragraph space: the grid's caption ("KPI 1.2.2 Fatalities & Injuries" over its data
    # table); nothing follows it but the table, so it opens no section
    for k in range(n - 1):
        b, nxt = blocks[k], blocks[k + 1]
        if b.index in candidates and b.index not in side and not table[k] and not _numbered(b) \
                and b.line_count <= 2 and -0.2 * pitch(b) <= nxt.bbox[1] - b.bbox[3] <= 0.4 * pitch(b) \
                and (b.size <= _NEAR_SIZE * nxt.size
                     or (b.size <= _CAPTION_SIZE * nxt.size and any(map(_prose, blocks[:k])))) \
                and _grid_under(blocks, side, k + 1, b):
            out.setdefault(b.index, "captions the table right under it")
    # a sentence's subject set in bold on a line of its own ("Accrued interest and accounts receivable
    # decreased"), its paragraph going on right under it in lower case: the paragraph's first words.  A
    # title in capitals before its run-in text ("ACCOUNTS PAYABLE — Accounts payable consists of") stays.
    for k in range(n - 1):
        b, nxt = blocks[k], blocks[k + 1]
        if b.index in candidates and not _numbered(b) and _continues_in_lower(b, nxt) \
                and not latin_capitals(_RUN_IN.split(b.text, maxsplit=1)[0]):
            out.setdefault(b.index, "opens the sentence its paragraph goes on with")
    # a line in capitals, in the text's own weight and size, right under a paragraph with no space between:
    # a tag line ("SAFE DESIGN" under a strategic objective) or a reference ("[ESRS S1 - 2]") that ends
    # the paragraph; a title is set apart by space above it or by its weight
    for k in range(1, n):
        b, up = blocks[k], blocks[k - 1]
        if b.index in candidates and b.line_count == 1 and not b.bold and b.size <= 1.05 * up.size \
                and up.column == b.column and (up.line_count >= 2 or len(up.text) >= 60) and latin_capitals(b.text) \
                and up.index not in candidates and not latin_capitals(up.text) \
                and -0.2 * pitch(b) <= b.bbox[1] - up.bbox[3] <= 0.35 * pitch(b):
            out.setdefault(b.index, "a capitals line right under a paragraph")
    # an acronym alone on a line, bracketed or with the next line going on in lower case right under it ("(HTML)",
    # "IPMS" / "accomplishes these capabilities" in a table's cell): a wrapped phrase's word, not a title
    for k, b in enumerate(blocks):
        word = b.text.strip()
        if b.index in candidates and not b.bold and _ACRONYM.match(word) and (
                word.startswith("(") or (k + 1 < n and starts_lower(blocks[k + 1].text) and touching(b, blocks[k + 1])
                                         and blocks[k + 1].bbox[0] <= b.bbox[0] + pitch(b))):
            out.setdefault(b.index, "an acronym alone on a line")
    # a line set right under a bullet item, indented to the item's text, the item's sentence not ended:
    # the item's next line ("• By accepting the Award, you are bound by the terms of the" / "Award Terms.")
    for k in range(1, n):
        b, up = blocks[k], blocks[k - 1]
        last = up.text.rstrip().rsplit("\n", 1)[-1]
        if b.index in candidates and _BULLET.match(up.text) and not _SENTENCE.search(last) \
                and up.bbox[0] + 3 < b.bbox[0] < up.bbox[2] and touching(up, b):
            out.setdefault(b.index, "goes on with the bullet item above")
    # a label on a row of a table block: a cell of the table
    for k, b in enumerate(blocks):
        if b.index in candidates and not table[k] and not _numbered(b):
            if any(table[j] and _in_rows(b, blocks[j]) for j in range(max(0, k - 3), min(n, k + 4)) if j != k):
                out.setdefault(b.index, "on a table's rows")
    # a one-line label in the rows' own type, one blank row of the tables' own pitch above and below it:
    # a row group inside the table ("Liabilities and Equity" between the assets and the liabilities)
    for k in range(1, n - 1):
        b, up, down = blocks[k], blocks[k - 1], blocks[k + 1]
        if b.index in candidates and table[k - 1] and table[k + 1] and not table[k] and not _numbered(b) \
                and b.line_count == 1 and _rows(up) and _rows(down) \
                and abs(b.size - down.size) <= 0.05 * down.size:
            row = min(pitch(up), pitch(down))
            gaps = (b.bbox[1] - up.bbox[3], down.bbox[1] - b.bbox[3])
            if all(-0.2 * row <= g <= 1.2 * row for g in gaps):
                out.setdefault(b.index, "a row group between table rows")
    # labels stacked between table rows: a row group or a column header inside the table
    k = 0
    while k < n:
        if table[k]:
            m = k + 1
            run: list[int] = []
            # the first label sits at the rows' spacing: a title with space above it opens a new table
            while m < n and not table[m] and len(run) < 3 and blocks[m].line_count <= 2 and len(blocks[m].text) <= 90 \
                    and close_below(blocks[m - 1], blocks[m], 1.2) and (run or tight(blocks[m - 1], blocks[m])):
                run.append(m)
                m += 1
            if run and m < n and table[m] and close_below(blocks[m - 1], blocks[m], 1.2):
                for r in run:
                    if blocks[r].index in candidates and not _numbered(blocks[r]):
                        out.setdefault(blocks[r].index, "between table rows")
                k = m
                continue
        k += 1
    # a line printed inside another block's box (a label within a table's header or row, the other block's
    # cells on either side of it), with no running text under it: a cell, not a title.  A paragraph's or a
    # huge ornament's box (an extraction that merged two columns, a page number over a map) says nothing, nor
    # does a box in Chinese text, whose lines are shorter than :func:`.tables.prose` asks.
    for k, b in enumerate(blocks):
        if b.index in candidates and not (k + 1 < n and _prose(blocks[k + 1]) and close_below(b, blocks[k + 1], 1.0)) \
                and not WIDE_CHAR.search(b.text) \
                and any(o is not b and not _prose(o) and not _BULLET.match(o.text) and o.size <= 1.5 * b.size
                        and _covers(o, b) for o in blocks):
            out.setdefault(b.index, "printed inside another block's box")
    # at a table's edge: column headers over its figures, row groups under its header or down a run of rows
    for i, why in edge_reasons(blocks, candidates, table, side).items():
        out.setdefault(i, why)
    # signature blocks and board lists
    for i, why in signature_reasons(blocks, candidates, _numbered).items():
        out.setdefault(i, why)
    return out


def running_repeats(headings: Sequence[Heading]) -> set[int]:
    """Indices (into ``headings``, reading order) of the headings that repeat a title of the page before.

    A repeat opens its page (only repeats above it), with the text (normalised) and size of a heading on
    the previous page and its top within half a line of that one's: the place a running title (or a
    section's and its sub-section's, stacked) or a table's repeated header takes on every page it
    covers.  The same title elsewhere on the next page (a second "Conclusion" under another analysis)
    is a heading of its own.
    """
    by_page: dict[int, list[int]] = {}
    for i, h in enumerate(headings):
        by_page.setdefault(h.page, []).append(i)
    out: set[int] = set()
    for page, idx in by_page.items():
        before = [headings[j] for j in by_page.get(page - 1, ()) if headings[j].bbox is not None]
        for i in idx:
            h = headings[i]
            if h.bbox is None or not _repeats(h, before):
                break
            out.add(i)
    return out


def _repeats(h: Heading, before: Sequence[Heading]) -> bool:
    key, tol = normalize_title(h.text), 0.5 * max(h.size, 1.0)
    return any(abs(g.bbox[1] - h.bbox[1]) < tol and abs(g.size - h.size) <= 0.05 * max(h.size, 1.0)
               and normalize_title(g.text) == key for g in before)
