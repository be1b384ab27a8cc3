"""What the text alone says, and which pages are covers: lines that are no heading whatever their look.

:data:`TEXT_RULES` is asked in order on a block's text (whitespace collapsed): letter closings, acceptance
lines and notations, "/s/" signatures, blank-page notices, a safety notice's label, footnotes, captions by
their words, web and mail addresses, "(continued)" repeats of a title, SEC cover-page lines, a prospectus's
cover lines (a postal address, the underwriter's label, the stock code), a paper's byline, column headers, rows of
figures and a chart's axis labels.  :func:`cover_code` rules out every line of an SEC
cover page and of a front or back cover with hardly any words.
"""

from __future__ import annotations

import re
from typing import Callable, NamedTuple, Sequence

from ...model import Block
from ...text import WIDE_CHAR
from .reasons import NotHeading
from .rows import COLUMN_HEAD, FIGURE, PERIOD, UNIT, YEAR, YEARS_FIRST, header_row
from .signatures import SIGNED, author_line

__all__ = ["TEXT_RULES", "TextRule", "text_code", "text_reason", "cover_code", "cover_reason"]

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
#: a postal address: in Chinese, a place (province, city, district, county) then a street number ("湖南省永州市
#: 双牌县泷泊镇双北路6号", "（兰州市城关区张苏滩593 号）", "(深圳市红岭中路1012 号国信证券大厦16～26 层)"); in
#: English a street number, a street and its town ("1200 Harbour Road, Wan Chai, Hong Kong")
_POSTAL = re.compile(
    r"^[（(]?[^，。；：:,!?！？]{0,30}?(?:省|市|区|县|自治区|特别行政区)[^，。；：:!?！？]{0,40}?\d+\s*(?:号|號|层|層|楼|室)"
    r"[^，。；：:!?！？]{0,30}?[)）]?$"
    r"|^\(?\d{1,5}[a-z]?(?:-\d{1,5})?,?\s+(?:[a-z][\w'’.-]*\s+){0,4}(?:street|st|road|rd|avenue|ave|boulevard|blvd"
    r"|drive|dr|lane|ln|way|place|plaza|square|parkway|pkwy|court|ct|highway|hwy)\b\.?,\s*[^,]{2,40}(?:,[^,]{2,40}){0,3}\)?$",
    re.I)
#: a prospectus's cover labels: the underwriter's ("保荐人（主承销商）", "Sole Sponsor and Underwriter"), the stock
#: code ("(Stock code: 1234)", "股票代码：000001")
_ROLE = r"(?:(?:sole|joint|lead|global)\s+)*(?:sponsors?|underwriters?|book-?runners?|coordinators?|lead\s+managers?)"
_COVER_LABEL = re.compile(
    r"^(?:联席|联合)?(?:保荐人|保荐机构|主承销商)\s*(?:[（(]\s*(?:联席)?主承销商\s*[)）])?\s*[:：]?$"
    r"|^" + _ROLE + r"(?:\s*(?:,|and|&|/)\s*" + _ROLE + r")*\s*:?$"
    r"|^[(（]?\s*(?:(?:stock|share)\s+code|股票代码|证券代码)\s*[:：]?\s*[\w.]{1,10}\s*[)）]?$", re.I)
#: a table's or a figure's caption by its words: "Table 2: Retail Broker-Dealer Lines of Business",
#: "Figure 3.1 ...", "4. Service Component Reference Model (SRM) Table:" (a title ending on "Table" without the
#: colon may be a section's: "2022 Summary Compensation Table" in a proxy statement)
#: (and their names in the languages of the corpus: "Figura 2:", "Illustration 14:", "Abbildung 3.")
_CAPTION = re.compile(r"^(?:table|figure|fig\.|chart|graph|illustration|figura|tabla|ilustraci[oó]n|"
                      r"gr[aá]fico|abbildung|tabelle|tableau|graphique|tabella)\s+[\dA-Z][\d.\-–]*\s*[:.–—-]"
                      r"|\S\s+tables?\s*:$", re.I)


class TextRule(NamedTuple):
    """One rule on a block's text: its name, whether it holds (text stripped, its words, 0-based page), its
    reason."""

    name: str
    holds: Callable[[str, list[str], int], object]
    reason: NotHeading


#: a column header is a short line: a longer one is a sentence about the columns
_HEADER_MAX_CHARS = 90
#: a row of figures with a currency sign holds this many figures (fewer: a sentence citing an amount)
_ROW_MIN_FIGURES = 3
#: a chart's axis holds this many periods ("Dec-17 Dec-18 Dec-19")
_AXIS_MIN_PERIODS = 3
#: SEC cover-page lines are looked for on the first pages only (a filing may bind an exhibit's cover later)
_COVER_LINE_PAGES = 2


def _continued(t: str, toks: list[str], page: int) -> bool:
    return bool(_CONTINUED.search(t)) and not t.lower().startswith(("contents", "table of contents"))


def _column_header(t: str, toks: list[str], page: int) -> bool:
    return len(t) <= _HEADER_MAX_CHARS and bool(
        COLUMN_HEAD.match(t) or YEARS_FIRST.match(t) or (UNIT.search(t) and header_row(t)))


def _currency_row(t: str, toks: list[str], page: int) -> bool:
    return any(x in ("$", "€", "£") or x.startswith(("$", "€", "£")) for x in toks) \
        and sum(1 for x in toks if FIGURE.match(x)) >= _ROW_MIN_FIGURES


def _figures_only(t: str, toks: list[str], page: int) -> bool:
    # nothing but figures and fillers ("13 N/A 97 N/A"): a row's cells, whatever number it starts with
    return len(toks) >= 2 and all(FIGURE.match(x) for x in toks) and not all(YEAR.match(x) for x in toks)


def _chart_axis(t: str, toks: list[str], page: int) -> bool:
    # periods and figures only ("Dec-17 Dec-18 Dec-19 Dec-20 $0", "Q1 22 Q2 22 Q3 22")
    periods = sum(1 for x in toks if PERIOD.match(x))
    return periods >= _AXIS_MIN_PERIODS and all(PERIOD.match(x) or FIGURE.match(x) or YEAR.match(x) for x in toks)


#: what the text alone says, asked in this order (the first that holds names the reason)
TEXT_RULES: tuple[TextRule, ...] = (
    TextRule("letter closing", lambda t, toks, page: _CLOSING.match(t), NotHeading.LETTER_CLOSING),
    TextRule("signature", lambda t, toks, page: SIGNED.match(t), NotHeading.SIGNATURE),
    TextRule("letter notation", lambda t, toks, page: _NOTATION.match(t), NotHeading.LETTER_NOTATION),
    TextRule("blank page notice", lambda t, toks, page: _BLANK_PAGE.match(t), NotHeading.BLANK_PAGE),
    TextRule("safety notice label", lambda t, toks, page: _CALLOUT.match(t), NotHeading.SAFETY_LABEL),
    TextRule("footnote", lambda t, toks, page: _FOOTNOTE.match(t), NotHeading.FOOTNOTE),
    TextRule("caption by its words", lambda t, toks, page: _CAPTION.search(t), NotHeading.CAPTION),
    TextRule("web or mail address", lambda t, toks, page: _ADDRESS.search(t), NotHeading.ADDRESS),
    TextRule("continued repeat", _continued, NotHeading.CONTINUED),
    TextRule("SEC cover-page line", lambda t, toks, page: page <= _COVER_LINE_PAGES and _SEC_COVER.match(t),
             NotHeading.COVER_LINE),
    TextRule("postal address on a cover page", lambda t, toks, page: page <= _COVER_LINE_PAGES and _POSTAL.match(t),
             NotHeading.POSTAL_ADDRESS),
    TextRule("prospectus cover label", lambda t, toks, page: page <= _COVER_LINE_PAGES and _COVER_LABEL.match(t),
             NotHeading.COVER_LINE),
    TextRule("byline of authors", lambda t, toks, page: page == 0 and author_line(t), NotHeading.BYLINE),
    TextRule("column header", _column_header, NotHeading.COLUMN_HEADER),
    TextRule("row of figures with a currency", _currency_row, NotHeading.FIGURES_ROW),
    TextRule("figures and fillers only", _figures_only, NotHeading.FIGURES_ROW),
    TextRule("chart axis labels", _chart_axis, NotHeading.CHART_AXIS),
)


def text_code(text: str, page: int) -> NotHeading | None:
    """Why ``text`` (a block's text, whitespace collapsed) is no heading whatever its look, or None."""
    t = text.strip()
    toks = t.split()
    for rule in TEXT_RULES:
        if rule.holds(t, toks, page):
            return rule.reason
    return None


def text_reason(text: str, page: int) -> str | None:
    """:func:`text_code` in words."""
    code = text_code(text, page)
    return None if code is None else code.text


#: a front or back cover: the first or last page of a document of some length, with hardly any words on it
_COVER_WORDS = 40
_COVER_MIN_PAGES = 10


def cover_code(blocks: Sequence[Block], page: int, page_count: int) -> NotHeading | None:
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
        return NotHeading.SEC_COVER_PAGE
    if page_count >= _COVER_MIN_PAGES and page in (0, page_count - 1):
        # a Chinese word is about two characters; count them so, not as one whitespace-separated run
        words = sum(len([t for t in b.text.split() if not WIDE_CHAR.search(t)]) + len(WIDE_CHAR.findall(b.text)) / 2
                    for b in blocks)
        if words <= _COVER_WORDS:
            return NotHeading.FRONT_COVER if page == 0 else NotHeading.BACK_COVER
    return None


def cover_reason(blocks: Sequence[Block], page: int, page_count: int) -> str | None:
    """:func:`cover_code` in words."""
    code = cover_code(blocks, page, page_count)
    return None if code is None else code.text
