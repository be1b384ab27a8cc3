"""Layout heading detection: which blocks are headings, with a score and the reasons.

A heading is a short block whose style is rarer and stronger than the body
text (larger, bold, capitals, another colour or font), often numbered, with
no sentence-final punctuation, alone on its row.  Every candidate gets a
score that is a sum of named evidence (``Heading.reasons``) so a user can see
why a block was or was not taken.

The PDF's own outline (:mod:`.outline`) and the printed table of contents
(:mod:`.contents`) are stronger signals; :func:`structrag.pipeline.detect_headings`
chooses among the three and merges contents and layout headings
(:func:`merge_headings`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from typing import Sequence

from ..model import Block, Document, Heading
from ..numbering import parse_numbering, word_number
from ..text import HAN, all_capitals, is_contents_title, latin_capitals, letter_count, normalize_title
from .not_headings import is_table_line, lone_captions, recurring_captions, row_of_figures, rule_out, running_repeats
from .outline import heading_from_block
from .sentences import sentence_titles
from .whole_text import RUN_IN, cut_off, ends_sentence, leads_in, lone_qualifier, run_in_title
from .wrapped import continues_title, join_wrapped, union_bbox

__all__ = ["layout_headings", "merge_headings", "BodyStyle", "body_style", "score_block"]

# a question mark is no sentence end here: "What Gets Corrected?" and FAQ headings ask questions
_SENTENCE_END = re.compile(r"[.;,!。；，！]['\"”’)]?$")
_STRONG_SCHEMES = {"item", "part", "note", "schedule", "chapter", "article", "appendix", "section",
                   "cn-section", "cn-chapter", "cn-part"}
_CJK = re.compile(rf"[{HAN}]")
_AMOUNT = re.compile(r"^[(\-–$€£¥]*\d[\d,.]*[)%]?$")
_YEAR = re.compile(r"^(19|20)\d\d$|^\d{1,2}(\.\d{1,2})+\.?$")  # years and section numbers are no figures


def _style_key(b: Block) -> tuple:
    """(size to half a point, bold, italic, capitals): a line set in body type but in capitals is a look of its own."""
    return (round(b.size * 2) / 2, b.bold, b.italic, len(b.text) <= 200 and latin_capitals(b.text))


@dataclass(frozen=True, slots=True)
class BodyStyle:
    """The document's dominant text style and the share of characters per style."""

    size: float
    bold: bool
    font: str
    color: int
    share: dict  # (size rounded to 0.5, bold, italic, capitals) -> share of body characters

    def key_share(self, b: Block, caps: bool = False) -> float:
        return self.share.get((round(b.size * 2) / 2, b.bold, b.italic, caps), 0.0)


def body_style(document: Document) -> BodyStyle:
    sizes: Counter = Counter()
    bolds: Counter = Counter()
    fonts: Counter = Counter()
    colors: Counter = Counter()
    keys: Counter = Counter()
    for b in document.blocks:
        if b.rotated:
            continue
        w = len(b.text)
        sizes[round(b.size * 2) / 2] += w
        bolds[b.bold] += w
        fonts[b.font] += w
        colors[b.color] += w
        keys[_style_key(b)] += w
    total = sum(keys.values()) or 1
    return BodyStyle(
        size=sizes.most_common(1)[0][0] if sizes else 10.0,
        bold=bolds.most_common(1)[0][0] if bolds else False,
        font=fonts.most_common(1)[0][0] if fonts else "",
        color=colors.most_common(1)[0][0] if colors else 0,
        share={k: v / total for k, v in keys.items()},
    )


def _family(font: str) -> str:
    f = font.split("+", 1)[-1]
    return re.split(r"[-,]", f, maxsplit=1)[0].lower()


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")


def _garbled(text: str) -> bool:
    """Text from a font without a usable encoding: control characters in place of letters.

    Extraction keeps them as U+FFFD when a line has two or more (one alone is dropped there: a stray
    NUL after a title is not a broken font)."""
    bad = len(_CONTROL.findall(text)) + text.count("\ufffd")
    return bad >= 2 or bad > 0.05 * len(text)


def _mostly_figures(text: str) -> bool:
    """Too few letters to be a title; the heading number does not count ("22.2 Version 4.6.2")."""
    num, rest = parse_numbering(text)
    # judged whole when the number is all there is ("Item 7.", "Exhibit 31(a)")
    words = rest if num is not None and letter_count(rest) >= 2 else text
    letters = letter_count(words)
    return letters < 2 or letters < 0.45 * (len(words) - words.count(" "))


def score_block(
    b: Block,
    text: str,
    body: BodyStyle,
    *,
    side_by_side: bool,
    repeats: int,
    page_share: float = 0.0,
) -> tuple[float, tuple[str, ...]]:
    """Heading evidence for one block: (score, reasons).  Positive reasons add, negative subtract.

    ``page_share`` is the share of its page's characters set in the block's own style (size, bold,
    italic, capitals), counted only on pages with :data:`_PAGE_BODY_CHARS` characters or more
    (:func:`page_style_shares`); the page's own body type opens no section even when the document's
    body is set otherwise (an exhibit, a letter or an appendix in another size).  Numbered lines are left
    to their numbering, bold ones to the page: a page whose text is mostly bold (a consent printed in
    bold) stresses it, and its bold sub-headings ("Notifications") are still set apart by their place.
    """
    score = 0.0
    reasons: list[str] = []

    def add(v: float, why: str) -> None:
        nonlocal score
        score += v
        reasons.append(f"{why} {v:+.1f}")

    num, rest = parse_numbering(text)
    # set in its page's own body type (an exhibit's plan in larger type than the filing): its size, font
    # and rarity against the document's body say nothing about this page.  A numbered line keeps them
    # unless it is a whole clause, a long line with no lead-in ("(A) The Participant is convicted of a
    # felony ... against the"): short numbered titles and run-in ones ("(ii) Transfers. A transfer ...")
    # are underlined or otherwise marked in ways the blocks do not carry.
    in_page_body = page_share >= _PAGE_BODY_SHARE and not b.bold and (
        num is None or (len(text) > 90 and not RUN_IN.search(rest[:80])))
    r = b.size / body.size if body.size else 1.0
    if in_page_body:
        r = min(r, 1.0)
    if r >= 1.12:
        add(min(3.0, 1.2 + 4.0 * (r - 1.12)), f"size x{r:.2f}")
    elif r >= 1.04:
        add(0.7, f"size x{r:.2f}")
    elif r <= 0.9:
        add(-1.5, f"smaller than body x{r:.2f}")
    if b.bold and not body.bold:
        add(1.3, "bold")
    if b.italic and r < 1.04 and not b.bold:
        add(0.3, "italic")
    caps = latin_capitals(text)
    if caps:
        add(0.8, "capitals")
    if b.color != body.color and b.color not in (0,):
        add(0.5, "colour")
    if _family(b.font) != _family(body.font) and not in_page_body:
        add(0.3, "font")
    # filing section labels, Chinese ordinals and dotted sub-numbers on a short line of
    # their own are headings whatever their type face
    filing_label = num is not None and (
        (num.scheme in ("item", "part") and len(text) <= 110)
        or (num.scheme.startswith("cn-") and len(text) <= 40 and b.line_count == 1
            and not _SENTENCE_END.search(text.rstrip()))
        or (num.scheme == "decimal" and len(num.values) >= 2 and len(text) <= 80 and b.line_count == 1
            and not _SENTENCE_END.search(text.rstrip()))
    )
    if num is not None:
        add(2.0 if filing_label else 1.5 if num.scheme in _STRONG_SCHEMES else 0.9, f"numbered {num.scheme}")
    share = body.key_share(b, caps)
    if share >= 0.25 and not filing_label:
        add(-2.0, f"body style ({share:.0%} of text)")
    elif in_page_body and num is None:
        add(-2.0, f"the page's body style ({page_share:.0%} of its text)")
    elif share <= 0.02 and not in_page_body:
        add(0.5, "rare style")
    stripped = text.rstrip()
    if _SENTENCE_END.search(stripped) and not (num is not None and not rest.strip()) and not filing_label:
        add(-1.6, "sentence punctuation")
    elif stripped.endswith((":", "：")):
        add(-0.4, "ends with a colon")
    n = len(text)
    if n > 150:
        add(-1.5, "long")
    elif n > 90 and not _CJK.search(text):
        add(-0.5, "longish")
    if b.line_count > 3:
        add(-1.5, f"{b.line_count} lines")
    figures = [t for t in (rest if num is not None else text).split() if _AMOUNT.match(t) and not _YEAR.match(t)]
    if len(figures) >= 2 or (figures and ("," in figures[-1] or "." in figures[-1] or "(" in figures[-1])):
        add(-2.0, "figures")
    if side_by_side:
        add(-2.0, "not alone on its row")
    elif b.line_count <= 2 and n <= 90:
        add(0.7, "alone on its row")
    first = text.lstrip("\"'“‘(•·-–— ")[:1]
    if first.isalpha() and first.islower() and first.isascii() and num is None:
        add(-1.2, "starts in lower case")
    if repeats > 8:
        add(-1.5, f"repeated on {repeats} pages")
    return round(score, 3), tuple(reasons)


#: a page's body type: half of its characters or more, on a page with some text on it (a section's
#: opening page with a title and two short paragraphs is no evidence of what its body type is)
_PAGE_BODY_SHARE = 0.5
_PAGE_BODY_CHARS = 1200


def page_style_shares(blocks: Sequence[Block]) -> dict[tuple, float]:
    """Share of one page's characters per style key; empty for a page of under :data:`_PAGE_BODY_CHARS`."""
    keys: Counter = Counter()
    for b in blocks:
        if not b.rotated:
            keys[_style_key(b)] += len(b.text)
    total = sum(keys.values())
    if total < _PAGE_BODY_CHARS:
        return {}
    return {k: v / total for k, v in keys.items()}


def _row_neighbours(blocks: Sequence[Block]) -> set[int]:
    """Indices of blocks sharing a row with another block of the same column (table cells, forms)."""
    out: set[int] = set()
    by_col: dict[int, list[Block]] = defaultdict(list)
    for b in blocks:
        by_col[b.column].append(b)
    for col in by_col.values():
        col.sort(key=lambda b: b.bbox[1])
        for i, a in enumerate(col):
            for c in col[i + 1 :]:
                if c.bbox[1] >= a.bbox[3]:
                    break
                h = min(a.bbox[3] - a.bbox[1], c.bbox[3] - c.bbox[1])
                ov = min(a.bbox[3], c.bbox[3]) - max(a.bbox[1], c.bbox[1])
                apart = c.bbox[0] >= a.bbox[2] - 1 or a.bbox[0] >= c.bbox[2] - 1
                if apart and ov > 0.5 * h:
                    out.add(a.index)
                    out.add(c.index)
    return out


def _candidate_text(b: Block) -> str:
    return " ".join(b.text.split())


def merge_headings(primary: Sequence[Heading], secondary: Sequence[Heading],
                   document: Document | None = None) -> tuple[Heading, ...]:
    """``primary`` headings plus the ``secondary`` ones that duplicate none of them, in reading order.

    A secondary heading duplicates a primary one when their blocks overlap, or
    when it prints the same title (normalised) on the same page.  With the ``document``, one that
    is the wrapped rest of the primary heading just above it (:func:`.wrapped.continues_title`) is
    taken into that heading's blocks instead.
    """
    held: set[int] = set()
    titles: set[tuple[int, str]] = set()
    ends: dict[int, int] = {}  # block after a primary heading -> its index in out
    for k, h in enumerate(primary):
        held.update(range(h.block, max(h.block_end, h.block + 1)))
        titles.add((h.page, normalize_title(h.text)))
        ends[h.block_end] = k
    out = list(primary)
    for h in secondary:
        if any(i in held for i in range(h.block, max(h.block_end, h.block + 1))):
            continue
        if (h.page, normalize_title(h.text)) in titles:
            continue
        k = ends.get(h.block)
        if document is not None and k is not None and continues_title(document, out[k], h):
            out[k] = replace(out[k], block_end=h.block_end, bbox=union_bbox(out[k].bbox, h.bbox))
            continue  # the wrapped second line of a located contents title is part of it, not a heading
        out.append(h)
    out.sort(key=lambda h: (h.block, h.source != "contents"))
    return tuple(out)


def layout_headings(document: Document, min_score: float = 2.0) -> tuple[Heading, ...]:
    """Blocks whose layout evidence scores at least ``min_score``, levels unset (``source="layout"``)."""
    body = body_style(document)
    blocks = document.blocks
    pages_of_text: dict[str, set[int]] = defaultdict(set)
    for b in blocks:
        if b.line_count <= 3 and len(b.text) <= 150 and not b.rotated:
            pages_of_text[normalize_title(b.text)].add(b.page)
    side: set[int] = set()
    shares: list[dict[tuple, float]] = []
    for p in range(document.page_count):
        page = document.page_blocks(p)
        side |= _row_neighbours(page)
        shares.append(page_style_shares(page))

    scored: list[tuple[Block, float, tuple[str, ...]]] = []
    numbered: list[tuple[Block, float, tuple[str, ...], tuple, int]] = []  # below the bar, numbered
    for b in blocks:
        if b.rotated or b.line_count > 6 or len(b.text) > 320:
            continue  # paragraphs: cheap rejection before any per-character work
        text = _candidate_text(b)
        if b.role == "toc" and not is_contents_title(text, plain=True):
            continue
        if _mostly_figures(text) or _garbled(text):
            continue  # figures, amounts, dates, unreadable text
        repeats = len(pages_of_text.get(normalize_title(b.text), ()))
        s, why = score_block(b, text, body, side_by_side=b.index in side, repeats=repeats,
                             page_share=shares[b.page].get(_style_key(b), 0.0))
        if s >= min_score:
            scored.append((b, s, why))
        elif s >= min_score - _SEQ_MARGIN and b.index not in side and repeats <= 8 \
                and not _runs_on(blocks, b, text):
            key = _sequence_key(b, text, body)
            if key is not None:
                numbered.append((b, s, why, key[0], key[1]))
    # lines that look like titles but are table furniture, signatures, closings or cover lines
    rejected = rule_out(document, [x[0] for x in scored] + [x[0] for x in numbered], side, body.size)
    if rejected:
        scored = [x for x in scored if x[0].index not in rejected]
        numbered = [x for x in numbered if x[0].index not in rejected]
    if numbered:
        scored = _continue_sequences(document, body, scored, numbered)
    # a run of sentences in bold, each over its own paragraphs: a filing's risk factors
    runs = sentence_titles(blocks, {x[0].index for x in scored} | set(rejected))
    if runs:
        scored = sorted(scored + [(blocks[i], min_score, ("a sentence title, one of a run",)) for i in runs],
                        key=lambda x: x[0].index)

    heads = join_wrapped(document, scored, rejected)
    again = running_repeats(heads)  # a title over its continuation pages starts no new section
    # a table's title with nothing of its own after the table names the table; it opens no section
    again |= recurring_captions(document, heads, is_table_line)
    again |= lone_captions(document, heads, is_table_line, row_of_figures, body.size)
    # judged whole: a sentence leading into a list may wrap, and its first line alone says nothing
    kept = [h for i, h in enumerate(heads)
            if i not in again and not leads_in(h.text) and not cut_off(h.text) and not ends_sentence(h.text)
            and not lone_qualifier(h.text)]
    # a clause's title set in its paragraph's first line: the section is the title, not the line
    return tuple(replace(h, text=t) if (t := run_in_title(h.text)) is not None else h for h in kept)


# ---------------------------------------------------------------------------
# numbering sequences: "1. Key financial data" ... "2. Dividend policy" set in body type

#: How far below ``min_score`` a numbered block may score and still be taken when its number
#: continues a sequence (the numbering, not the type face, makes it a heading).
_SEQ_MARGIN = 4.0
#: Schemes that also number list items, footnotes and table rows; they need the sequence to be
#: spread over the text (paragraphs between the numbers) when no styled heading anchors them.
_CAPTIONS = re.compile(r"^(?:fig(?:ure)?|table|chart|graph|exhibit|source|note\s+to)\b", re.I)


def _sequence_key(b: Block, text: str, body: BodyStyle) -> tuple[tuple, int] | None:
    """(sequence key, value) of a short numbered line that could be a heading, else None.

    The key holds the scheme (and the label word of "Goal 2", and the depth and parent number of
    "2.3") and the look, so that only numbers of one kind, set alike, continue each other.
    """
    if b.line_count > 2 or b.size < 0.75 * body.size:
        return None
    if b.size < 0.95 * body.size and not all_capitals(text):
        return None  # smaller than the body: only small capitals ("II. RELATED WORK") can be a title
    cjk = _CJK.search(text) is not None
    if len(text) > (48 if cjk else 100):
        return None
    stripped = text.rstrip()
    if _SENTENCE_END.search(stripped) or stripped.endswith((":", "：")) or _CAPTIONS.match(text):
        return None
    if "：" in stripped[:-2]:
        return None  # "2、保荐机构：某某证券" is a labelled value in a list, not a title
    num, rest = parse_numbering(text)
    if num is None:
        num = word_number(text)
        if num is None:
            return None
        rest = text[len(num.label):]
    if letter_count(rest) < 2:
        return None
    first = rest.lstrip("\"'“‘(")[:1]
    if first.isalpha() and first.isascii() and first.islower():
        return None  # "1. the Company shall ..." is a list item
    label = num.label.rstrip(".:)").rsplit(" ", 1)[0].lower() if num.scheme == "word-decimal" else ""
    look = (round(b.size * 2) / 2, b.bold, b.italic)
    return (num.scheme, label, len(num.values), num.values[:-1], look), num.values[-1]


def _continue_sequences(
    document: Document,
    body: BodyStyle,
    scored: list[tuple[Block, float, tuple[str, ...]]],
    numbered: list[tuple[Block, float, tuple[str, ...], tuple, int]],
) -> list[tuple[Block, float, tuple[str, ...]]]:
    """Add the numbered blocks whose number continues a sequence of headings.

    A sequence is the run of blocks with one key (scheme, depth, parent number, look) in reading
    order.  A numbered block below the bar is taken when the number just before or after it in
    its run is a heading already and is one less / one more (chains propagate: "(1)" and "(3)"
    styled, "(2)" in body type between them).  A run that no styled heading anchors is taken
    when at least three consecutive numbers follow each other with running text between them —
    list items sit next to each other, headings have sections between them.
    """
    taken = {b.index for b, _, _ in scored}
    key_of: dict[int, tuple] = {}
    runs: dict[tuple, list[tuple[int, int]]] = defaultdict(list)  # key -> [(block index, value)]
    for b, _, _, key, value in numbered:
        key_of[b.index] = key
        runs[key].append((b.index, value))
    # styled headings join the runs of their key, as anchors
    for b, _, _ in scored:
        if b.index in key_of:
            continue
        k = _sequence_key(b, _candidate_text(b), body)
        if k is not None and k[0] in runs:
            runs[k[0]].append((b.index, k[1]))
    accepted: dict[int, str] = {}
    blocks = document.blocks
    for key, run in runs.items():
        run.sort()
        ok = [i in taken for i, _ in run]
        follows = [run[k + 1][1] == run[k][1] + 1 for k in range(len(run) - 1)]
        changed = True
        while changed:  # propagate from anchors along consecutive numbers
            changed = False
            for k, f in enumerate(follows):
                if f and ok[k] != ok[k + 1]:
                    ok[k] = ok[k + 1] = True
                    changed = True
        for k, (i, v) in enumerate(run):
            if ok[k] and i not in taken:
                accepted[i] = "continues a numbered heading sequence"
        # unanchored runs: three or more consecutive numbers, each pair with running text between
        k = 0
        while k < len(run):
            m = k
            while m < len(follows) and follows[m] and _text_between(blocks, run[m][0], run[m + 1][0]):
                m += 1
            if m - k + 1 >= 3:
                for i, _ in run[k : m + 1]:
                    if i not in taken:
                        accepted.setdefault(i, f"numbered sequence of {m - k + 1} with text between")
            k = m + 1
    if not accepted:
        return scored
    extra = [(b, s, why + (f"{accepted[b.index]} +{_SEQ_MARGIN:.1f}",))
             for b, s, why, _, _ in numbered if b.index in accepted]
    return sorted(scored + extra, key=lambda x: x[0].index)


def _runs_on(blocks: Sequence[Block], b: Block, text: str) -> bool:
    """Whether a plain numbered line is the first line of a paragraph: its sentence goes on, in
    lower case, in the next block ("(b) In any action or consideration of a Claim in court or" /
    "of the Plan's claims procedure ...", the clauses of a plan document set with a hanging indent).
    A bold run-in heading ("(a) Time and Form of Payment. The ...") is left to the score."""
    if b.bold or b.index + 1 >= len(blocks) or text.rstrip().endswith((".", ":", ";", "?", "!", "：", "。")):
        return False
    nxt = blocks[b.index + 1]
    first = nxt.text.lstrip("\"'“‘")[:2]
    return nxt.page == b.page and len(first) == 2 and first.isalpha() and first.isascii() and first.islower()


def _text_between(blocks: Sequence[Block], i: int, j: int) -> bool:
    """Whether running text (a paragraph, or a page turn) separates blocks ``i`` and ``j``."""
    if blocks[j].page != blocks[i].page:
        return True
    return any(b.line_count >= 2 or len(b.text) >= 120 for b in blocks[i + 1 : j])
