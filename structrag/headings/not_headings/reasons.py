"""Why a line that looks like a heading is none: the reason codes and their words.

Every rule of this package names its verdict with a :class:`NotHeading` code; the words of
:data:`REASON_TEXT` are what the public functions return (``text_reason``, ``page_reasons``, ...) and
what a reader sees.  Nothing branches on the words.
"""

from __future__ import annotations

from enum import Enum
from typing import Mapping

__all__ = ["NotHeading", "REASON_TEXT", "in_words"]


class NotHeading(Enum):
    """Why a line is no heading (see :data:`REASON_TEXT` for the words)."""

    # the text alone
    LETTER_CLOSING = "letter-closing"
    SIGNATURE = "signature"
    LETTER_NOTATION = "letter-notation"
    BLANK_PAGE = "blank-page"
    SAFETY_LABEL = "safety-label"
    FOOTNOTE = "footnote"
    CAPTION = "caption"
    ADDRESS = "address"
    POSTAL_ADDRESS = "postal-address"
    CONTINUED = "continued"
    COVER_LINE = "cover-line"
    BYLINE = "byline"
    COLUMN_HEADER = "column-header"
    FIGURES_ROW = "figures-row"
    CHART_AXIS = "chart-axis"
    # the whole page or the whole document
    SEC_COVER_PAGE = "sec-cover-page"
    FRONT_COVER = "front-cover"
    BACK_COVER = "back-cover"
    REPEATED_FIELD = "repeated-field"
    # the page around the block
    TABLE_ROWS = "table-rows"
    SPREAD_WORDS = "spread-words"
    CONTENTS_LISTING = "contents-listing"
    FORM_FIELD = "form-field"
    LIST_ITEM = "list-item"
    STACKED_LABEL = "stacked-label"
    FIGURE_LABEL = "figure-label"
    EXHIBIT_INDEX_ROW = "exhibit-index-row"
    LABELS_ROWS_UNDER = "labels-rows-under"
    CAPTIONS_GRID_UNDER = "captions-grid-under"
    OPENS_SENTENCE = "opens-sentence"
    CAPITALS_TAG_LINE = "capitals-tag-line"
    LONE_ACRONYM = "lone-acronym"
    BULLET_CONTINUATION = "bullet-continuation"
    ON_TABLE_ROWS = "on-table-rows"
    ROW_GROUP_BETWEEN = "row-group-between"
    BETWEEN_TABLE_ROWS = "between-table-rows"
    INSIDE_ANOTHER_BOX = "inside-another-box"
    # at a table's edge
    COLUMN_HEADER_OVER_FIGURES = "column-header-over-figures"
    ANNOUNCED_CAPTION = "announced-caption"
    ROW_GROUP_UNDER_HEADER = "row-group-under-header"
    ROW_GROUP_OF_RUN = "row-group-of-run"
    # names and job titles
    SIGNATURE_NAME = "signature-name"
    SIGNING_PARTY = "signing-party"
    NAME_UNDER_SIGNATURE = "name-under-signature"

    @property
    def text(self) -> str:
        """The reason in words."""
        return REASON_TEXT[self]


#: each reason in words
REASON_TEXT: dict[NotHeading, str] = {
    NotHeading.LETTER_CLOSING: "letter closing",
    NotHeading.SIGNATURE: "signature",
    NotHeading.LETTER_NOTATION: "letter notation",
    NotHeading.BLANK_PAGE: "blank page notice",
    NotHeading.SAFETY_LABEL: "a safety notice's label",
    NotHeading.FOOTNOTE: "footnote",
    NotHeading.CAPTION: "a table's or a figure's caption",
    NotHeading.ADDRESS: "a web or mail address",
    NotHeading.POSTAL_ADDRESS: "a postal address on a cover page",
    NotHeading.CONTINUED: "continued repeat",
    NotHeading.COVER_LINE: "cover-page line",
    NotHeading.BYLINE: "a byline of authors",
    NotHeading.COLUMN_HEADER: "column header",
    NotHeading.FIGURES_ROW: "figures row",
    NotHeading.CHART_AXIS: "chart axis labels",
    NotHeading.SEC_COVER_PAGE: "SEC cover page",
    NotHeading.FRONT_COVER: "front cover",
    NotHeading.BACK_COVER: "back cover",
    NotHeading.REPEATED_FIELD: "a form's field, repeated on many pages",
    NotHeading.TABLE_ROWS: "table rows",
    NotHeading.SPREAD_WORDS: "words spread across the line",
    NotHeading.CONTENTS_LISTING: "a contents listing's entry",
    NotHeading.FORM_FIELD: "a form field",
    NotHeading.LIST_ITEM: "numbered list item",
    NotHeading.STACKED_LABEL: "one of a list of labels",
    NotHeading.FIGURE_LABEL: "a label of a map or a diagram",
    NotHeading.EXHIBIT_INDEX_ROW: "a row of an exhibit index",
    NotHeading.LABELS_ROWS_UNDER: "labels the table rows right under it",
    NotHeading.CAPTIONS_GRID_UNDER: "captions the table right under it",
    NotHeading.OPENS_SENTENCE: "opens the sentence its paragraph goes on with",
    NotHeading.CAPITALS_TAG_LINE: "a capitals line right under a paragraph",
    NotHeading.LONE_ACRONYM: "an acronym alone on a line",
    NotHeading.BULLET_CONTINUATION: "goes on with the bullet item above",
    NotHeading.ON_TABLE_ROWS: "on a table's rows",
    NotHeading.ROW_GROUP_BETWEEN: "a row group between table rows",
    NotHeading.BETWEEN_TABLE_ROWS: "between table rows",
    NotHeading.INSIDE_ANOTHER_BOX: "printed inside another block's box",
    NotHeading.COLUMN_HEADER_OVER_FIGURES: "a column header over a table's figures",
    NotHeading.ANNOUNCED_CAPTION: "a caption: the sentence above announces the table under it",
    NotHeading.ROW_GROUP_UNDER_HEADER: "a row group under a table's header",
    NotHeading.ROW_GROUP_OF_RUN: "a row group of a run of table rows",
    NotHeading.SIGNATURE_NAME: "name or title in a signature or board list",
    NotHeading.SIGNING_PARTY: "a signing party over its signature line",
    NotHeading.NAME_UNDER_SIGNATURE: "name under a signature",
}


def in_words(codes: Mapping[int, NotHeading]) -> dict[int, str]:
    """``codes`` (block index -> code) with each code in words."""
    return {i: code.text for i, code in codes.items()}
