"""Where a section's text may be cut, and what each cut costs: the chunker's dynamic programme.

Cut points, by preference: between blocks (paragraphs), then at line breaks that end a list item
or table row, then between sentences, then between words, then (only for a single token longer
than the budget) between characters.
"""

from __future__ import annotations

import bisect
import re
from typing import NamedTuple, Sequence

from ..model import Block, Document
from ..text import WIDE_CHAR
from ..tokenizers import RegexTokenizer, Tokenizer


# Cost of cutting at each kind of boundary.  A chunk costs 1, so a cut costing
# more than 1 is taken only when it saves more than one extra chunk's worth:
# sentence cuts are made only where a paragraph cannot stay whole.
_CUT_BLOCK = 0.0
_CUT_ITEM = 1.2  # line break before a list item
_CUT_ROW = 1.5  # line break after a sentence end, a colon, or a table row
_CUT_SENTENCE = 2.0
_CUT_WORD = 5.0
_CUT_IN_ROW = 5.0  # between cells of one table row
_CUT_TOKEN = 8.0  # between tokens not separated by a space ("1,234")
_CUT_AFTER_HEADING = 10.0
_CUT_AFTER_LABEL = 3.0  # after a one-line heading-like block (an undetected sub-heading, a table sub-header)
_CUT_CHAR = 20.0
_BALANCE = 0.5  # weight of the size-evenness term, < any real cut


# ---------------------------------------------------------------------------
# boundaries inside a block

_LIST_MARKER = re.compile(
    r"\s*(?:[•●○◦▪▫■□‣⁃∙·►▶➢✓✔\-–—*]\s"
    r"|\(?(?:\d{1,3}|[a-zA-Z]|[ivxlcIVXLC]{1,5})[.)]\s"
    r"|\((?:\d{1,3}|[a-zA-Z]{1,4})\)\s?"
    r"|[一二三四五六七八九十百]+[、.．]"
    r"|[（(][一二三四五六七八九十百\d]+[）)]"
    r"|\d{1,3}[、．])"
)
_LINE_END_SENTENCE = re.compile(r"[.!?:;。！？；：][\"”’)\]」』）]*\s*$")
_LINE_END_ROW = re.compile(r"(?:\d|%|\)|—|–|-|\$)\s*$")
_SENTENCE_END = re.compile(r"(?<![.…])[.!?][\"”’)\]]*(\s+)(?=[\"“‘(\[]?[A-Z0-9•$€£])")
_CJK_SENTENCE_END = re.compile(r"[。！？；][”’」』）)]*")
_ABBREV = frozenset(
    "mr mrs ms dr prof inc co corp ltd llc plc no nos vs etc e.g i.e u.s u.k st jr sr fig figs approx dept "
    "est jan feb mar apr jun jul aug sep sept oct nov dec vol p pp sec art ref cf al ex govt".split()
)
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
# "Note 1. Revenue ...", "Item 7. Management's ...": a numbered label, not a sentence end
_LABEL_BEFORE = re.compile(
    r"(?:^|\s)(?:note|item|section|part|chapter|article|figure|fig|table|schedule|exhibit|page|step|rule|no)"
    r"\s+[0-9ivxlc]{1,4}[a-z]?$",
    re.I,
)


def _is_abbreviation(text: str, dot: int) -> bool:
    """Whether the '.' at ``dot`` ends an abbreviation or an initial, not a sentence."""
    if _LABEL_BEFORE.search(text, 0, dot):
        return True
    m = _WORD_BEFORE.search(text, 0, dot)
    if m is None:
        return False
    word = m.group(1).lower()
    return len(word) == 1 or word in _ABBREV or word.rstrip(".") in _ABBREV


def _block_cuts(text: str) -> list[tuple[int, int, float]]:
    """Cut candidates inside one block's text: ``(end of left part, start of right part, cost)``."""
    cuts: list[tuple[int, int, float]] = []
    line_start = 0
    lines = text.split("\n")
    for li, line in enumerate(lines):
        # sentence ends within the line
        for m in _SENTENCE_END.finditer(line):
            if line[m.start()] == "." and _is_abbreviation(line, m.start()):
                continue
            ws0, ws1 = m.span(1)
            cuts.append((line_start + ws0, line_start + ws1, _CUT_SENTENCE))
        for m in _CJK_SENTENCE_END.finditer(line):
            e = m.end()
            if e < len(line):
                k = e
                while k < len(line) and line[k].isspace():
                    k += 1
                cuts.append((line_start + e, line_start + k, _CUT_SENTENCE))
        line_end = line_start + len(line)
        if li + 1 < len(lines):
            nxt = lines[li + 1]
            if _LIST_MARKER.match(nxt):
                cuts.append((line_end, line_end + 1, _CUT_ITEM))
            elif _LINE_END_SENTENCE.search(line) or (_LINE_END_ROW.search(line) and not nxt[:1].islower()):
                cuts.append((line_end, line_end + 1, _CUT_ROW))
        line_start = line_end + 1
    cuts.sort()
    return cuts


class _Piece(NamedTuple):
    start: int  # absolute character offsets into document.text, whitespace trimmed
    end: int
    tokens: int
    cut: float  # cost of a chunk boundary just before this piece


def _trim(text: str, s: int, e: int) -> tuple[int, int]:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e


_REGEX_TOK = RegexTokenizer()


class _Cutter:
    """Cuts one section's own text into pieces and packs pieces into chunks."""

    def __init__(self, document: Document, tok: Tokenizer) -> None:
        self.doc = document
        self.text = document.text
        self.tok = tok
        self._regex = type(tok) is RegexTokenizer

    def count(self, s: int, e: int) -> int:
        return self.tok.count(self.text[s:e]) if e > s else 0

    # --- pieces ---------------------------------------------------------
    def block_pieces(self, block: Block, first_cut: float) -> list[_Piece]:
        base = block.start
        out: list[_Piece] = []
        prev = 0
        cut = first_cut
        for left_end, right_start, cost in _block_cuts(block.text):
            if left_end <= prev:
                continue
            s, e = _trim(self.text, base + prev, base + left_end)
            if e > s:
                out.append(_Piece(s, e, self.count(s, e), cut))
                cut = cost
            else:
                cut = max(cut, cost) if out else cut
            prev = right_start
        s, e = _trim(self.text, base + prev, block.end)
        if e > s:
            out.append(_Piece(s, e, self.count(s, e), cut))
        return out

    def refine(self, piece: _Piece, limit: int) -> list[_Piece]:
        """Split a piece over ``limit`` tokens at word, then token, then character boundaries."""
        if piece.tokens <= limit:
            return [piece]
        spans = _REGEX_TOK.pieces(self.text[piece.start : piece.end])
        if len(spans) <= 1:
            return self._char_split(piece, limit)
        out: list[_Piece] = []
        base = piece.start
        prev_end = None
        starts = None
        offsets = getattr(self.tok, "offsets", None)
        if not self._regex and callable(offsets):
            try:
                starts = offsets(self.text[piece.start : piece.end])
            except ValueError:
                starts = None
        for n_span, (s, e) in enumerate(spans):
            s, e = base + s, base + e
            if prev_end is None:
                cost = piece.cut
            elif s > prev_end or WIDE_CHAR.match(self.text, s) or WIDE_CHAR.match(self.text, prev_end - 1):
                cost = _CUT_WORD
            else:
                cost = _CUT_TOKEN
            if self._regex:
                n = 1  # a regex-tokenizer piece is one token by construction
            elif starts is not None:
                # tokens starting between the previous piece's end and this piece's end
                lo = 0 if prev_end is None else prev_end - base
                hi = e - base if n_span + 1 < len(spans) else piece.end - base + 1
                n = bisect.bisect_left(starts, hi) - bisect.bisect_left(starts, lo)
            else:
                n = self.count(s, e)
            out.append(_Piece(s, e, n, cost))
            prev_end = e
        final: list[_Piece] = []
        for p in out:  # one regex token can still be several sub-word tokens
            final.extend(self._char_split(p, limit) if p.tokens > limit else (p,))
        # runs of words of about 1/16 of the limit: cuts inside an over-long sentence land
        # within a few words of the best place, and the packer has 16x fewer pieces to try
        group = max(1, limit // 16)
        if group == 1:
            return final
        grouped: list[_Piece] = []
        for p in final:
            last = grouped[-1] if grouped else None
            if last is not None and last.tokens + p.tokens <= group and p.cut < _CUT_CHAR:
                grouped[-1] = _Piece(last.start, p.end, last.tokens + p.tokens, last.cut)
            else:
                grouped.append(p)
        return grouped

    def _char_split(self, piece: _Piece, limit: int) -> list[_Piece]:
        out: list[_Piece] = []
        s = piece.start
        cost = piece.cut
        while s < piece.end:
            lo, hi = s + 1, piece.end
            # largest e with count(s, e) <= limit (at least one character)
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if self.count(s, mid) <= limit:
                    lo = mid
                else:
                    hi = mid - 1
            e = lo
            out.append(_Piece(s, e, self.count(s, e), cost))
            cost = _CUT_CHAR
            s = e
        return out

    # --- packing ----------------------------------------------------------
    def pack(self, pieces: Sequence[_Piece], budget: int) -> list[tuple[int, int]]:
        """Best cutting of ``pieces`` into runs of at most ``budget`` tokens: ``[(i, j), ...]``.

        best[j] = min over i of best[i] + 1 + cut cost before piece i + balance
        term of run i..j-1; the candidate i form a window (run sizes grow as i
        falls), evaluated with numpy because word-level pieces of long legal
        sentences make windows hundreds of pieces wide.  Ties go to the
        largest i (the shortest last run).
        """
        import numpy as np

        n = len(pieces)
        tok = np.fromiter((p.tokens for p in pieces), dtype=np.int64, count=n)
        # Run sizes are sums of piece counts.  Exact for the regex tokenizer; a sub-word
        # tokenizer may count joined text a token or so higher per boundary, which the
        # caller checks on the joined text and retries with a smaller budget.
        gap = np.zeros(n, dtype=np.int64)
        cut = np.fromiter((p.cut for p in pieces), dtype=np.float64, count=n)
        cut[0] = 0.0
        tp = np.concatenate(([0], np.cumsum(tok)))  # tokens of pieces < k
        gp = np.concatenate(([0], np.cumsum(gap)))  # gaps before pieces < k
        # size of run i..j-1 = tp[j] - tp[i] + gp[j] - gp[i+1]; key[i] = tp[i] + gp[i+1] rises with i
        key = tp[:n] + gp[1 : n + 1]
        best = np.empty(n + 1, dtype=np.float64)
        best[0] = 0.0
        back = np.zeros(n + 1, dtype=np.int64)
        inv = 1.0 / budget
        for j in range(1, n + 1):
            top = tp[j] + gp[j]
            lo = min(int(np.searchsorted(key[:j], top - budget, side="left")), j - 1)
            size = top - key[lo:j]
            fill = np.minimum(size, budget) * inv
            c = best[lo:j] + 1.0 + cut[lo:j] + _BALANCE * (1.0 - fill) ** 2
            k = len(c) - 1 - int(np.argmin(c[::-1]))
            best[j] = c[k]
            back[j] = lo + k
        runs: list[tuple[int, int]] = []
        j = n
        while j > 0:
            i = int(back[j])
            runs.append((i, j))
            j = i
        runs.reverse()
        return runs

