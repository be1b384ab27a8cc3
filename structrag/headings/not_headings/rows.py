"""Table lines by their text alone: rows of figures, header rows of years, dates or units.

Shared by the rules of this package: :func:`row_of_figures` and :func:`is_table_line` find a table's rows
without a table finder, :func:`header_row` its header row, and the patterns name the cells of a row.
"""

from __future__ import annotations

import re

from ...model import Block

__all__ = ["COLUMN_HEAD", "UNIT", "YEARS_FIRST", "FIGURE", "YEAR", "PERIOD", "row_of_figures", "is_table_line",
           "header_row", "has_amount"]

#: column headers and unit lines of financial tables
COLUMN_HEAD = re.compile(
    r"^\(?\s*(?:(?:amounts?|dollars|figures|\$|€|£|usd|eur)\s+)?in\s+(?:\$|€|£|usd|eur\s+)?\s*(?:thousands|millions|billions)\b[^()]{0,60}\)?$"
    r"|^\(\s*[^()]{0,40}\bin\s+(?:thousands|millions|billions)\b[^()]{0,60}\)$"
    r"|^(?:for the\s+)?(?:(?:three|six|nine|twelve|\d{1,2})[\s-]+months?|(?:fiscal\s+)?years?|quarters?|(?:\d{1,2}|\w+)[\s-]+weeks?)"
    r"\s+ended\b.{0,40}$", re.I)
_SMALL = re.compile(r"^\d{1,2}$")  # a bare small number
#: a bracketed part of a line (a unit, when :data:`COLUMN_HEAD` says so)
UNIT = re.compile(r"\([^()]{4,80}\)")
#: a header row that opens on two years
YEARS_FIRST = re.compile(r"^(?:19|20)\d\d\s+(?:19|20)\d\d\b")
#: a figure as a table's cell sets it: an amount, a per-cent, a dash, "n/a"
FIGURE = re.compile(r"^[(\-–—$€£¥]*\d[\d,.]*(?:\)%?|%\)?)?$|^[$€£¥]$|^[—–-]+$|^(?:n/?a|nm|n\.m\.)$", re.I)
#: a year as a column's header
YEAR = re.compile(r"^(?:19|20)\d\d[,;.]?$")
#: a period on a chart's axis: "Dec-17", "Mar-2022", "Q1'22", "1Q22", "FY21", "FY2021", "H1"
PERIOD = re.compile(r"^(?:(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[-'’/]?(?:\d\d|\d{4})"
                    r"|q[1-4](?:[-'’/]?(?:\d\d|\d{4}))?|[1-4]q(?:\d\d|\d{4})|fy[-'’]?(?:\d\d|\d{4})|h[12])$", re.I)
_DATE_WORD = re.compile(r"^(?:january|february|march|april|may|june|july|august|september|october|november|december"
                        r"|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?$|^\d{1,2},?$", re.I)

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
        elif toks and (t == "%" or (points and FIGURE.match(toks[-1]) and toks[-1][-1:] not in "%$€£¥-–—")):
            toks[-1] += "%"
        else:
            toks.append(t)
    return toks


def has_amount(line: str) -> bool:
    """A figure written as an amount: with a sign, a separator or brackets, or of three digits or more."""
    toks = _cells(line)
    return any(FIGURE.match(t) and not YEAR.match(t) and any(c.isdigit() for c in t)
               and (any(c in t for c in ",.%$€£¥()") or sum(c.isdigit() for c in t) >= 3)
               for t in toks) or any(t in ("$", "€", "£") for t in toks)


def row_of_figures(line: str) -> bool:
    """A table row: it ends on a figure and holds two (or one amount on a short line); prose that cites
    amounts ends on words."""
    toks = _cells(line)
    if not toks or not (FIGURE.match(toks[-1]) and not YEAR.match(toks[-1])):
        return False
    figs = [x for x in toks if FIGURE.match(x) and not YEAR.match(x)]
    # a part's number after a dash ("CLIMATE CHANGE – 1") is no amount: a row's dash stands beside one
    # with more than two digits, or beside two
    amounts = [x for x in figs if any(c.isdigit() for c in x)]
    if not amounts or (len(amounts) == 1 and _SMALL.match(amounts[0])
                       and all(x == amounts[0] or set(x) <= set("—–-") for x in figs)):
        return False
    # one figure: an amount ("$ 1,234", "(56)", "7%") on a short row; "Exhibit 12.1" is a label
    return len(figs) >= 2 or (len(toks) >= 2 and any(c in figs[0] for c in ",()%$€£") and len(toks) <= 8)


def header_row(line: str) -> bool:
    """A row of years or dates ("2018 2017 2016", "December 31, 2023 2022") or a unit line."""
    toks = line.split()
    if len(toks) < 2:
        return False  # a year alone is a sub-heading ("2020") as often as a column
    if COLUMN_HEAD.match(line.strip()):
        return True
    # the unit in brackets among the columns' dates ("(in thousands) 2022 2021", "June 30, ($ in millions) 2023")
    unit = UNIT.search(line)
    if unit and COLUMN_HEAD.match(unit.group(0)):
        toks = (line[: unit.start()] + " " + line[unit.end() :]).split()
    years = sum(1 for x in toks if YEAR.match(x))
    return years >= 1 and all(YEAR.match(x) or _DATE_WORD.match(x) or x in ("$", "%") for x in toks)


def is_table_line(b: Block) -> bool:
    """Whether a block is table rows: most of its lines rows of figures, or a header row of years, dates or units."""
    lines = [ln for ln in b.text.split("\n") if ln.strip()]
    if not lines:
        return False
    figs = sum(1 for ln in lines if row_of_figures(ln))
    if figs and figs * 2 >= len(lines):
        return True
    # a header cell's unit may wrap onto the years' line ("(in thousands, except per share" / "amounts) 2022")
    return all(header_row(ln) for ln in lines) or (1 < len(lines) <= 3 and header_row(" ".join(lines)))
