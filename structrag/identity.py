"""Document identity: issuer, title, type, fiscal period and language, read from the first pages.

>>> identify(document)                                        # doctest: +SKIP
DocumentIdentity(issuer='3M COMPANY', doc_type='10-K', year=2018, language='en', ...)

Pure rules over what extraction already produced (no network, no model): the cover's text and
type sizes, the first heading or outline entry, and the PDF's title/subject metadata.  Each
field keeps where it came from (``cover``, ``heading``, ``auditor``: the auditor's report's addressee,
``running``: a running header "X AND SUBSIDIARIES", ``metadata``), so a user's own value
(``user``) can be told from a guess.  The identity is the root of a document's tree: the index
stores it and filters on it (:mod:`retrievers.store.identities`).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Callable, Iterable, Sequence

from .model import Block, Document, DocumentIdentity
from .text import HAN, HANGUL, KANA, normalize_title

__all__ = ["identify", "DOC_TYPES", "normalize_issuer", "normalize_type", "COVER_PAGES", "PERIOD_PAGES", "fiscal_quarter"]

#: Pages read as the cover and first pages (a filing's cover sheet runs to its second page).
COVER_PAGES = 3
#: Pages whose words the fiscal-period rules read: a quarterly report's first statements, with their
#: "six months ended" columns, and the "fiscal 2023" its discussion names its year by, come early.
PERIOD_PAGES = 8
DOC_TYPES = ("10-K", "10-Q", "8-K", "20-F", "annual report", "interim report", "earnings release", "prospectus",
             "sustainability report", "manual", "other")

_MAX_CHARS = 30_000
_MONTHS = {m: i for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july", "august",
                                        "september", "october", "november", "december"), 1)}
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december)"
_DATE = rf"{_MONTH}\s+\d{{1,2}}\s*,?\s*((?:19|20)\d\d)"
_ORD = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}

# SEC forms as printed on a cover sheet ("FORM 10-K", "Form 8-K for Pepsico INC" in the metadata)
_FORM = re.compile(r"\bform\s*(10-?k|10-?q|8-?k|20-?f)\b", re.I)
_FISCAL_YEAR_ENDED = re.compile(rf"(?:fiscal\s+)?year\s+ended\s*:?\s*{_DATE}", re.I)
_QUARTER_ENDED = re.compile(rf"quarterly\s+period\s+ended\s*(?:commission\s+file\s*)?:?\s*{_DATE}", re.I)
_DATE_OF_REPORT = re.compile(rf"date\s+of\s+report[^:]{{0,60}}:\s*{_DATE}", re.I)
# earnings releases: "PepsiCo Reports First-Quarter 2023 Results", "REPORTS FOURTH QUARTER AND FULL YEAR 2022"
_REPORTS_RESULTS = re.compile(r"^(.{2,60}?)\s+reports?\s+(.{0,80}?)results", re.I | re.S)
_QUARTER_WORDS = re.compile(r"\b(first|second|third|fourth|1st|2nd|3rd|4th)[\s-]+quarter\b(?:[^0-9]{0,30}?((?:19|20)\d\d))?",
                            re.I)
_NQ = re.compile(r"\b(?:([1-4])Q|Q([1-4]))\s*(?:fy\s*)?'?((?:19|20)\d\d)\b", re.I)
_CN_PERIOD = re.compile(r"截[至止]\s*((?:19|20)\d\d)\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日")
_CN_YEAR_REPORT = re.compile(r"((?:19|20)\d\d)\s*年(?:年度报告|半年度报告|第([一二三四1-4])季度报告|度报告)")
_YEAR = re.compile(r"(?<![\d.])((?:19|20)\d\d)(?![\d])")
# a quarterly report's statements cover the year to date: "six months ended" (or 26 weeks) is its fiscal
# second quarter, whatever the calendar quarter of its end date
_SPAN_ENDED = re.compile(r"\b(three|six|nine|3|6|9|thirteen|twenty[\s-]?six|thirty[\s-]?nine|13|26|39)\s+"
                         r"(?:months|weeks)\s+ended", re.I)
_SPAN_QUARTER = {"three": 1, "3": 1, "thirteen": 1, "13": 1, "six": 2, "6": 2, "twentysix": 2, "26": 2,
                 "nine": 3, "9": 3, "thirtynine": 3, "39": 3}
# the auditor's report is addressed to the issuer ("To the Shareowners and Board of Directors / The Coca-Cola
# Company"), in documents whose cover names it only in a logo
_AUDITOR_TO = re.compile(r"\bto\s+the\s+(?:(?:board\s+of\s+directors|directors|stockholders|shareholders|shareowners|"
                         r"members|partners)(?:\s*,?\s*(?:and|&)\s+|\s+))+(?:of\s+)?(?:the\s+)?", re.I)
_LEGAL_NAME = re.compile(r"((?:[A-Z][\w.&'\u2019-]*,?\s+){0,5}?(?:Inc\.?|Incorporated|Corp\.?|Corporation|Company|"
                         r"Co\.|Ltd\.?|Limited|plc|PLC|AG|SE|S\.A\.|N\.V\.|LLC|L\.P\.)(?![\w]))")
# the cover's table of registered securities: "Common Stock ... | MMM | New York Stock Exchange", a note's
# series after its issuer's symbol ("MMM26", "VZ 24B", "JPM PR D", "AUKF/27")
_TRADING_SYMBOL = re.compile(r"trading\s+symbol", re.I)
_TABLE_END = re.compile(r"section\s+12\s*\(g\)|indicate\s+by\s+check\s+mark", re.I)
_SYMBOL = re.compile(r"(?<![\w$.,%])([A-Z]{1,5})(?:\d{1,2}[A-Z]?|/\d{2})?(?:\s+(?:PR\s+)?[A-Z0-9]{1,3})?\s+(?:The\s+)?"
                     r"(?:New\s+York|NYSE|Nasdaq|NASDAQ|Chicago|London|Toronto|Australian|Cboe|CBOE|Euronext|Boston)\b")
_NOT_SYMBOLS = frozenset({"NYSE", "LLC", "INC", "NONE", "THE", "OTC", "PLC", "USD", "ADR", "ADS"})
# a filing's running header over its statements and contents: "THE COCA-COLA COMPANY AND SUBSIDIARIES"
_AND_SUBSIDIARIES = re.compile(r"^[ \t]*((?:[A-Z][\w.&'\u2019,-]*[ \t]+){0,6}?[A-Z][\w.&'\u2019,-]*)[ \t]+(?:and|AND)[ \t]+"
                               r"(?:its[ \t]+)?(?:consolidated[ \t]+|CONSOLIDATED[ \t]+)?(?:subsidiaries|SUBSIDIARIES|"
                               r"Subsidiaries)[ \t]*$", re.M)
_FISCAL_LABEL = re.compile(r"\bfiscal\s+(?:year\s+)?((?:19|20)\d\d)\b|\bFY\s*'?((?:19|20)\d\d)\b", re.I)
# "(Exact name of registrant as specified in its charter)" follows the issuer's name on a filing
_EXACT_NAME = re.compile(r"exact\s+name\s+of\s+(?:the\s+)?registrant", re.I)
_CN_COMPANY = re.compile(rf"([{HAN}（）()]{{2,40}}?(?:股份有限公司|有限责任公司|有限公司|集团公司))")
_SPONSOR = re.compile(r"保荐|主承销|承销商|证券股份有限公司|证券有限责任公司")
_SUFFIX = re.compile(r"\b(?:inc|incorporated|corp|corporation|company|co|ltd|limited|plc|ag|se|sa|nv|n\.v|s\.a|llc|lp|"
                     r"group|holdings|international)\b\.?,?$|&\s*co\.?$", re.I)
_BOILERPLATE = re.compile(r"securities\s+and\s+exchange\s+commission|washington,?\s+d\.?\s*c|^\s*form\s+\S+\s*$|"
                          r"^\s*united\s+states\s*$|^\s*(?:x|o|☒|☐|checked|unchecked)\s*$|table\s+of\s+contents|"
                          r"^exhibit\s+[\d.]+$|pursuant\s+to\s+section|commission\s+file|transition\s+period|^\(?mark\s+one|"
                          r"for\s+the\s+(?:fiscal\s+year|quarterly\s+period)|exact\s+name\s+of", re.I)

_TYPE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("prospectus", re.compile(r"招股(?:说明|意向)书|\bprospectus\b", re.I)),
    ("sustainability report", re.compile(r"sustainability\s+report|\besg\s+report|corporate\s+(?:social\s+)?"
                                         r"responsibility\s+report|impact\s+report|可持续发展报告|社会责任报告", re.I)),
    ("interim report", re.compile(r"半年度报告|季度报告|interim\s+report|half[\s-]year(?:ly)?\s+report|"
                                  r"quarterly\s+report(?!\s+pursuant)", re.I)),
    ("annual report", re.compile(r"年度报告|annual\s+report(?!\s+pursuant)|report\s+to\s+(?:congress|shareholders)",
                                 re.I)),
    ("manual", re.compile(r"\bmanual\b|user'?s?\s+guide|reference\s+guide|\bhandbook\b|\bguidebook\b|"
                          r"documentation|使用说明书|用户手册", re.I)),
)

_ISSUER_STOP = {"inc", "incorporated", "corp", "corporation", "company", "co", "ltd", "limited", "plc", "the", "ag",
                "se", "sa", "nv", "llc", "lp", "and"}


def normalize_issuer(name: str) -> str:
    """An issuer name for matching: lower case, punctuation gone, legal suffixes ("Inc.", "Corporation",
    "股份有限公司") dropped, no spaces ("Coca-Cola Co." and "COCA COLA" both give ``cocacola``)."""
    t = re.sub(r"(?:股份有限公司|有限责任公司|有限公司|集团公司)$", "", name.strip())
    words = [w for w in normalize_title(t).split() if w not in _ISSUER_STOP]
    return "".join(words)


def normalize_type(name: str) -> str:
    """A document type as given by a user (``10k``, ``Form 10-K``, ``ESG``, ``招股说明书``) as one of
    :data:`DOC_TYPES` when it names one, else lower-cased."""
    t = normalize_title(name).replace("form ", "")
    flat = t.replace(" ", "")
    for d in DOC_TYPES:
        if flat == d.lower().replace("-", "").replace(" ", ""):
            return d
    aliases = {"esg": "sustainability report", "sustainability": "sustainability report", "annual": "annual report",
               "interim": "interim report", "quarterly": "interim report", "earnings": "earnings release",
               "招股说明书": "prospectus", "招股意向书": "prospectus", "年度报告": "annual report", "年报": "annual report",
               "user guide": "manual", "guide": "manual"}
    return aliases.get(t, t)


def _cover_blocks(document: Document, pages: int) -> list[Block]:
    return [b for b in document.blocks if b.page < pages and b.text.strip()]


def _flat(text: str) -> str:
    # small capitals extract as "MGM R ESORTS I NTERNATIONAL": a lone capital joins the capitals after it
    return re.sub(r"(?:^|(?<=[A-Z]{2} ))([A-Z]) (?=[A-Z]{2,}\b)", r"\1", " ".join(text.split()))


def _language(text: str) -> str | None:
    han = len(re.findall(rf"[{HAN}]", text))
    kana = len(re.findall(rf"[{KANA}]", text))
    hangul = len(re.findall(rf"[{HANGUL}]", text))
    latin = len(re.findall(r"[A-Za-zÀ-ÿ]", text))
    if kana > 20 and kana * 5 > han:
        return "ja"
    if hangul > 20 and hangul * 2 > latin:
        return "ko"
    # a Chinese prospectus carries the issuer's English name and stock terms: Han dominance, not Han only
    if han > 20 and han * 3 > latin:
        return "zh"
    if latin < 20:
        return None
    words = Counter(re.findall(r"[a-zäöüßéèàç]+", text.lower()))
    stops = {"en": ("the", "and", "of", "to", "in", "for", "is", "with"),
             "de": ("der", "die", "und", "das", "für", "mit", "von", "ist"),
             "fr": ("le", "la", "les", "et", "des", "pour", "une", "est"),
             "es": ("el", "la", "los", "y", "las", "para", "una", "por")}
    score = {lang: sum(words[w] for w in ws) for lang, ws in stops.items()}
    best = max(score, key=lambda k: (score[k], k == "en"))
    return best if score[best] > 0 else "en"


def _metadata_text(document: Document) -> str:
    """The PDF's title and subject, when they are words (not a hex dump, a word-processor file name or a
    Workiva accession number)."""
    meta = dict(document.metadata)
    out = []
    for key in ("title", "subject"):
        v = _flat(meta.get(key, ""))
        v = re.sub(r"^microsoft\s+\w+\s*-\s*", "", v, flags=re.I)
        if not v or v.startswith("<") or re.fullmatch(r"[\d\-_. /]+", v) or re.search(r"\.(?:docx?|pdf|indd)$", v, re.I):
            continue
        out.append(v)
    return " | ".join(out)


def _display(blocks: Sequence[Block]) -> str:
    """The first page's text set larger than its body text (titles, not running text)."""
    weight: Counter[float] = Counter()
    for b in blocks:
        weight[round(b.size, 1)] += len(b.text)
    if not weight:
        return ""
    body = weight.most_common(1)[0][0]
    return _flat(" ".join(b.text for b in blocks if b.size > body + 0.5))


def _doc_type(first_page: str, cover: str, title: str, meta: str, display: str = "") -> tuple[str, str] | None:
    # a release titled "X Reports First-Quarter 2023 Results" may name the Form 10-Q it precedes
    if _REPORTS_RESULTS.search(title):
        return "earnings release", "cover"
    m = _FORM.search(first_page)
    if m:
        return _form(m.group(1)), "cover"
    if _REPORTS_RESULTS.search(title) or re.search(r"\bexhibit\s+99", meta, re.I) and re.search(r"result|\bQ[1-4]|[1-4]Q",
                                                                                                  meta + title, re.I):
        return "earnings release", "cover"
    # the type's words count in display text only: a paper's "manual annotation" or a court file's
    # "annual report" in running text says nothing of what the document is
    for text, source in ((title, "cover"), (display, "cover"), (meta, "metadata")):
        for name, rx in _TYPE_RULES:
            if rx.search(text):
                return name, source
    if _TYPE_RULES[0][1].search(cover):  # 招股说明书 is printed on a prospectus's cover whatever its size
        return "prospectus", "cover"
    m = _FORM.search(meta)
    if m:
        return _form(m.group(1)), "metadata"
    return None


def _form(raw: str) -> str:
    r = raw.upper().replace("-", "")
    return f"{r[:-1]}-{r[-1]}"


def _labelled_year(early: str, years: tuple[int, ...]) -> int | None:
    """Of ``years``, the one the document's first pages name most as "fiscal 2023" / "FY2023" (None: none named)."""
    counts = Counter(int(a or b) for a, b in _FISCAL_LABEL.findall(early))
    named = [y for y in years if counts.get(y)]
    return max(named, key=lambda y: (counts[y], -years.index(y))) if named else None


def fiscal_quarter(end_year: int, end_month: int, early: str) -> tuple[int, int]:
    """(fiscal year, fiscal quarter) of a quarterly report whose period ends in ``end_month`` of ``end_year``.

    The longest year-to-date span of its statements (``early``: its first pages' text) gives the
    quarter: three months (or 13 weeks) the first, six the second, nine the third; none found, the
    calendar quarter.  Where that differs from the calendar quarter the fiscal year does not end in
    December: it ends ``4 - quarter`` quarters later, and is named by that end's year (Amcor's
    quarter to 31 December 2022 is its fiscal 2023 Q2) unless the text names the year before more
    often (a retailer whose "fiscal 2023" ends in January 2024)."""
    calendar = (end_month + 2) // 3
    spans = [_SPAN_QUARTER.get(re.sub(r"[\s-]", "", m.group(1).lower())) for m in _SPAN_ENDED.finditer(early)]
    spans = [q for q in spans if q]
    quarter = max(spans) if spans else calendar
    if quarter == calendar:
        return end_year, quarter
    year = end_year + (end_month + 3 * (4 - quarter) - 1) // 12
    return _labelled_year(early, (year, year - 1)) or year, quarter


def _period(doc_type: str | None, first_page: str, cover: str, title: str, meta: str, early: str = ""
            ) -> tuple[int | None, int | None, str | None]:
    """(year, quarter, source) of the period the document covers; ``early``: the first
    :data:`PERIOD_PAGES` pages' text, for the fiscal-period rules."""
    low = cover.lower()
    m = _QUARTER_ENDED.search(cover)
    if m and doc_type in (None, "10-Q", "interim report"):
        year, quarter = fiscal_quarter(int(m.group(2)), _MONTHS[m.group(1).lower()], early or cover)
        return year, quarter, "cover"
    m = _FISCAL_YEAR_ENDED.search(cover)
    if m and doc_type in (None, "10-K", "20-F", "annual report"):
        year = int(m.group(2))
        if _MONTHS[m.group(1).lower()] <= 2:
            # a year ending in January or February: retailers name it by the year it began ("fiscal 2022"
            # ends on 28 January 2023) or by its end; the text says which
            year = _labelled_year(early or cover, (year, year - 1)) or year
        return year, None, "cover"
    m = _DATE_OF_REPORT.search(cover)
    if m and doc_type == "8-K":
        return int(m.group(2)), None, "cover"
    for text, source in ((title, "cover"), (meta, "metadata")):
        m = _NQ.search(text)
        if m:
            return int(m.group(3)), int(m.group(1) or m.group(2)), source
        m = _QUARTER_WORDS.search(text)
        if m and m.group(2):
            return int(m.group(2)), _ORD[m.group(1).lower()], source
    m = _CN_YEAR_REPORT.search(first_page)
    if m:
        q = m.group(2)
        quarter = ("一二三四".index(q) + 1 if q in "一二三四" else int(q)) if q else None
        return int(m.group(1)), quarter, "cover"
    if "招股" not in first_page:  # a prospectus's 截至 dates are its track record, not its period
        m = _CN_PERIOD.search(first_page)
        if m:
            return int(m.group(1)), None, "cover"
    for text, source in ((title, "cover"), (meta, "metadata")):
        m = re.search(r"fiscal\s+(?:year\s+)?((?:19|20)\d\d)\b|\bFY\s*'?((?:19|20)\d\d)\b", text, re.I)
        if m:
            return int(m.group(1) or m.group(2)), None, source
        years = _YEAR.findall(text)
        if years:
            return int(years[0]), None, source
    if doc_type in ("annual report", "sustainability report", "earnings release"):
        # the year next to the type's own words on the cover ("2022 ANNUAL REPORT", "Annual Report 2023")
        m = re.search(r"((?:19|20)\d\d)\W{0,3}(?:annual|sustainability|integrated)|(?:report|results)\W{0,3}((?:19|20)\d\d)",
                      low)
        if m:
            return int(m.group(1) or m.group(2)), None, "cover"
    return None, None, None


def _title(blocks: Sequence[Block]) -> str | None:
    """The first page's largest words that are not a filing's boilerplate (one title may take two blocks)."""
    texts = [(b.size, _flat(" ".join(ln for ln in b.text.splitlines() if not _BOILERPLATE.search(ln))))
             for b in blocks if not b.rotated]
    cands = [(size, t) for size, t in texts if len(t) >= 3 and re.search(r"[^\W\d_]{2}", t)]
    if not cands:
        return None
    top = max(size for size, _ in cands)
    parts = [t for size, t in cands if size >= top - 0.5][:2]
    t = " ".join(parts)
    return t[:200] if t else None


def _tickers(blocks: Sequence[Block]) -> tuple[str, ...]:
    """The trading symbols of the cover's table of registered securities (the word before each row's
    exchange), each once, in order, at most four."""
    text = "\n".join(b.text for b in blocks)
    start = _TRADING_SYMBOL.search(text)
    if start is None:
        return ()
    table = text[start.end(): start.end() + 4000]
    end = _TABLE_END.search(table)
    out: list[str] = []
    for m in _SYMBOL.finditer(" ".join(table[: end.start() if end else None].split())):
        if m.group(1) not in _NOT_SYMBOLS and m.group(1) not in out:
            out.append(m.group(1))
    return tuple(out[:4])


def _addressee(body: str) -> str | None:
    """The company an auditor's report in ``body`` is addressed to (the first such report's)."""
    for m in _AUDITOR_TO.finditer(body):
        name = _LEGAL_NAME.match(body, m.end())
        if name and len(name.group(1).split()) >= 2:
            return name.group(1).strip(" ,")
    return None


def _issuer(blocks: Sequence[Block], first_page: str, title: str, meta: str, doc_type: str | None,
            body: Callable[[], str] = str) -> tuple[str, str] | None:
    """(issuer, source); ``body`` gives the whole document's text with its running headers, read only
    when the cover names no one."""
    page0 = [b for b in blocks if b.page == blocks[0].page] if blocks else []
    # a filing: the line above "(Exact name of registrant as specified in its charter)"
    for i, b in enumerate(blocks):
        if _EXACT_NAME.search(b.text):
            lines = [ln for ln in b.text.splitlines() if ln.strip()]
            k = next((j for j, ln in enumerate(lines) if _EXACT_NAME.search(ln) or "exact" in ln.lower()), 0)
            if k > 0 and not _BOILERPLATE.search(lines[k - 1]):
                return _flat(lines[k - 1]).strip(" ("), "cover"
            prev = [p for p in blocks[max(0, i - 3):i] if not _BOILERPLATE.search(_flat(p.text))]
            if prev and k == 0:
                return _flat(max(reversed(prev), key=lambda p: p.size).text.splitlines()[-1]), "cover"
    # a Chinese cover: the largest company name that is not the sponsor's (保荐人 / 主承销商)
    cn = [(b.size, -b.index, m.group(1)) for b in page0 for m in [_CN_COMPANY.search(_flat(b.text).replace(" ", ""))]
          if m and not _SPONSOR.search(m.group(1)) and len(_flat(b.text)) <= 40]
    if cn:
        return max(cn)[2], "cover"
    # an earnings release: "PepsiCo Reports First-Quarter 2023 Results"
    m = _REPORTS_RESULTS.search(title)
    if m:
        return _flat(m.group(1)), "cover"
    # a short line on the cover ending in a legal form ("3M COMPANY", "SMA Solar Technology AG")
    named = [b for b in page0 if _SUFFIX.search(_flat(b.text)) and len(_flat(b.text)) <= 70 and b.line_count <= 2
             and not _BOILERPLATE.search(_flat(b.text))]
    if named:
        return _flat(max(named, key=lambda b: (b.size, -b.index)).text), "cover"
    text = body()
    addressed = _addressee(text)
    if addressed:
        return addressed, "auditor"
    # "The Company and its subsidiaries" in running text names no one: a name must keep a word of its own
    group = Counter(n for m in _AND_SUBSIDIARIES.finditer(text)
                    for n in [m.group(1).strip(" ,")] if normalize_issuer(n)).most_common(1)
    if group and group[0][1] >= 2:
        return group[0][0], "running"
    m = re.search(r"\bfor\s+(.{2,60}?)\s+filed\b", meta, re.I)
    if m:
        return m.group(1), "metadata"
    if meta:
        # "TransUnion 2022 Annual Report": the metadata title without its period and type words
        first = meta.split(" | ")[0]
        rest = _YEAR.sub(" ", first)
        for _, rx in _TYPE_RULES:
            rest = rx.sub(" ", rest)
        rest = _flat(re.sub(r"\b(?:form|10-?[kq]|8-?k|q[1-4]|[1-4]q|exhibit\s+[\d.]+)\b", " ", rest, flags=re.I)).strip(" -|,")
        if 2 <= len(rest) <= 60 and len(rest.split()) <= 5 and rest != first:
            return rest, "metadata"
    return None


def identify(document: Document, *, headings: Iterable[str] = (), pages: int = COVER_PAGES) -> DocumentIdentity:
    """The identity of ``document`` read from its first ``pages`` pages, its first ``headings`` (outline or
    detected, in reading order) and its PDF metadata.  Fields the rules cannot read stay None."""
    blocks = _cover_blocks(document, pages)[:400]
    first = [b for b in blocks if b.page == blocks[0].page] if blocks else []
    # bounded: a cover is a few thousand characters; a hostile page of megabytes must not slow ingestion
    first_page = _flat(" ".join(b.text for b in first)[:_MAX_CHARS])
    cover = _flat(" ".join(b.text for b in blocks)[:_MAX_CHARS])
    meta = _metadata_text(document)
    heads = [_flat(h) for h in headings][:3]
    title = _title(first) or (heads[0] if heads else None) or (meta.split(" | ")[0] if meta else None)
    title_src = "cover" if first and _title(first) else "heading" if heads else "metadata" if meta else None
    ident = DocumentIdentity()
    found: dict[str, tuple[object, str]] = {}
    if title:
        found["title"] = (title, title_src or "cover")
    t = _doc_type(first_page, cover, title or "", meta, _display(first))
    if t is None and heads:
        t = _doc_type("", "", " ".join(heads), "")
        t = (t[0], "heading") if t else None
    doc_type = t[0] if t else ("other" if blocks else None)
    if doc_type:
        found["doc_type"] = (doc_type, t[1] if t else "cover")
    early = document.text[: document.page_offsets[min(PERIOD_PAGES, document.page_count)]][: 4 * _MAX_CHARS] \
        if document.page_offsets else ""
    year, quarter, psrc = _period(doc_type, first_page, cover, title or "", meta, _flat(early))
    if year is not None:
        found["year"] = (year, psrc or "cover")
    if quarter is not None:
        found["quarter"] = (quarter, psrc or "cover")
    # running headers are furniture, kept out of the text: the issuer's "X AND SUBSIDIARIES" is among them
    who = _issuer(blocks, first_page, title or "", meta, doc_type,
                  lambda: "\n".join([document.text, *(b.text for b in document.furniture[:2000])]))
    if who and who[0]:
        found["issuer"] = who
        if doc_type in ("10-K", "10-Q", "8-K", "20-F"):
            # a filing's largest words are the form's boilerplate: its title is who filed what for when
            period = f" {year}" + (f" Q{quarter}" if quarter else "") if year else ""
            found["title"] = (f"{who[0]} Form {doc_type}{period}", who[1])
    tickers = _tickers(blocks)
    if tickers:
        found["tickers"] = (tickers, "cover")
    sample = document.text[: document.page_offsets[min(pages, document.page_count)]] if document.page_offsets else ""
    lang = _language(sample[:20000] or cover)
    if lang:
        found["language"] = (lang, "cover")
    for name, (value, source) in found.items():
        ident = ident.with_fields(source, **{name: value})
    return ident
