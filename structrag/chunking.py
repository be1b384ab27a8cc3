"""Sections and section-aware chunks.

A *section* is a heading plus the body blocks it governs.  :func:`sections`
partitions a document's body blocks among the sections of its heading tree:
each section owns its heading blocks and its own content (the blocks before
its first sub-section); the root owns the preamble before the first heading.
Every body block is owned by exactly one section, even for trees built from
headings that overlap or run out of reading order (a block no section claims
goes to the section before it, so no text is ever dropped).

:func:`chunk_document` cuts each section's own text into chunks of at most
``max_tokens`` tokens.  Rules:

* A chunk never leaves its section, and its text is a verbatim slice:
  ``document.text[chunk.start:chunk.end] == chunk.text``.
* **Headings.**  With ``include_heading=True`` (the default) a section's
  heading blocks open its first chunk, so the heading is embedded with the
  text it introduces (the full path is in ``section_path`` as well).  A
  section whose only text is its heading and that has sub-sections gets no
  chunk: its heading would be a useless fragment, and it is on every
  descendant chunk's ``section_path``.  A heading-only leaf section keeps
  its heading as a chunk, so no text is lost.  With ``include_heading=False``
  heading blocks are in no chunk.
* **Cut points**, by preference: between blocks (paragraphs), then at line
  breaks that end a list item or table row, then between sentences, then
  between words, then (only for a single token longer than the budget)
  between characters.  A break between blocks that only wraps a sentence (PDFs
  with one block per line, a paragraph running on to the next page) counts
  as a cut between words.  Cells of one table row (blocks side by side on one
  baseline) stay together unless the row alone is over budget; a heading is
  never left alone in a chunk when its first paragraph can follow it, and a
  one-line label-like block (an undetected sub-heading, a table's sub-header
  row) is kept with what follows it.  Among the cuttings that respect the
  budget the chunker picks the one with the fewest weak cuts, then the
  fewest chunks, then the most even sizes, by dynamic programming over the
  section (no tiny tail chunks).
* **Overlap** (``overlap`` tokens) repeats the end of the previous chunk of
  the *same section* at the start of the next, at a sentence (else word)
  boundary, never reaching into the heading; ``extra["overlap_chars"]`` says
  how many leading characters are repeated.  Chunks, overlap included, stay
  within ``max_tokens``.
* **Ids** are deterministic: a SHA-1 over the document's SHA-1, the section
  path, the occurrence number of that path in the document (two sections can
  share a path), the chunk's ordinal in its section and its character span.

With ``overlap=0`` and headings included, every character of every body
block that is not whitespace lies in exactly one chunk, except the heading
blocks of content-less parent sections (see above).
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence

from .errors import ConfigError
from .model import Block, Chunk, Document
from .text import CJK_WIDE, HAN, HAN_EXT_A
from .tokenizers import RegexTokenizer, Tokenizer, TokenizerSpec, get_tokenizer
from .tree import ROOT, HeadingTree, TreeNode

__all__ = ["Section", "sections", "chunk_document", "DEFAULT_MAX_TOKENS"]

DEFAULT_MAX_TOKENS = 256

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


@dataclass(frozen=True, slots=True)
class Section:
    """A heading and the blocks it owns.

    ``id`` is the tree node's id (``"root"`` for the preamble).  Block ranges
    are half-open index ranges into ``document.blocks``: ``heading_blocks``
    print the heading (empty for an outline heading not found on its page),
    ``content_blocks`` follow it up to the first sub-section, and
    ``span_blocks`` covers the section with all its sub-sections.
    ``start``/``end`` are the character offsets of the own text (heading and
    content), ``span_start``/``span_end`` those of the whole span, into
    ``document.text``.  ``page_start``/``page_end`` are the 0-based pages of
    the span (the heading's page when the span is empty; -1 for an empty
    root).
    """

    id: str
    index: int
    parent_id: str | None
    children_ids: tuple[str, ...]
    path: tuple[str, ...]
    levels: tuple[int, ...]
    heading_blocks: tuple[int, int]
    content_blocks: tuple[int, int]
    span_blocks: tuple[int, int]
    start: int
    end: int
    span_start: int
    span_end: int
    page_start: int
    page_end: int

    @property
    def title(self) -> str:
        return self.path[-1] if self.path else ""

    @property
    def level(self) -> int:
        return self.levels[-1] if self.levels else 0

    @property
    def own_blocks(self) -> tuple[int, int]:
        return (self.heading_blocks[0], self.content_blocks[1])

    @property
    def has_content(self) -> bool:
        return self.content_blocks[1] > self.content_blocks[0]


def _char_range(document: Document, a: int, b: int) -> tuple[int, int]:
    blocks = document.blocks
    if a < b:
        return blocks[a].start, blocks[b - 1].end
    pos = blocks[a].start if a < len(blocks) else len(document.text)
    return pos, pos


def _check_inputs(document: Document, tree: HeadingTree) -> None:
    if not isinstance(document, Document):
        raise ConfigError(f"document must be a structrag Document, not {type(document).__name__}")
    if not isinstance(tree, HeadingTree):
        raise ConfigError(f"tree must be a structrag HeadingTree, not {type(tree).__name__}")
    if tree.n_blocks != len(document.blocks):
        raise ConfigError(
            f"the heading tree covers {tree.n_blocks} blocks but the document has {len(document.blocks)}",
            path=document.path,
            hint="build the tree with HeadingTree.from_headings(headings, len(document.blocks)) "
            "from headings of this very document",
        )


def sections(document: Document, tree: HeadingTree) -> tuple[Section, ...]:
    """The sections of ``document`` under ``tree``, root first, then in reading order.

    The own block ranges (``heading_blocks`` + ``content_blocks``) of all
    sections partition ``range(len(document.blocks))``.
    """
    _check_inputs(document, tree)
    n = len(document.blocks)
    nodes: list[TreeNode] = [tree.root, *tree.nodes]
    own: list[list[int]] = []  # [h0, c0, c1] per node, in the order of `nodes`
    cursor = 0
    for node in nodes:
        if node.index == ROOT:
            h0, c0, c1 = 0, 0, min(node.content[1], n)
        else:
            h0 = max(node.span[0], cursor)
            c0 = max(node.content[0], h0)
            c1 = max(node.content[1], c0)
        if h0 > cursor and own:
            # blocks that no section claims (headings out of reading order) stay
            # with the section they follow in the text
            own[-1][2] = h0
        own.append([h0, c0, c1])
        cursor = max(cursor, c1)
    if cursor < n:
        own[-1][2] = n

    # spans from the partition, bottom-up, so they agree with the own ranges
    span_end = [o[2] for o in own]
    pos = {node.index: k for k, node in enumerate(nodes)}
    for k in range(len(nodes) - 1, 0, -1):
        parent = nodes[k].parent
        pk = pos[ROOT if parent is None else parent]
        span_end[pk] = max(span_end[pk], span_end[k])
    span_end[0] = n

    out: list[Section] = []
    blocks = document.blocks
    for k, node in enumerate(nodes):
        h0, c0, c1 = own[k]
        s0, s1 = h0, span_end[k]
        start, end = _char_range(document, h0, c1)
        span_start, span_end_c = _char_range(document, s0, s1)
        if s0 < s1:
            page_start, page_end = blocks[s0].page, blocks[s1 - 1].page
        elif node.heading is not None:
            page_start = page_end = node.heading.page
        else:
            page_start = page_end = -1
        if node.index == ROOT:
            path: tuple[str, ...] = ()
            levels: tuple[int, ...] = ()
            parent_id = None
        else:
            path = tree.path(node.index)
            levels = tuple(a.level for a in tree.ancestors(node.index)) + (node.level,)
            parent_id = tree.node(node.parent if node.parent is not None else ROOT).id
        out.append(
            Section(
                id=node.id,
                index=node.index,
                parent_id=parent_id,
                children_ids=tuple(tree.node(c).id for c in node.children),
                path=path,
                levels=levels,
                heading_blocks=(h0, c0),
                content_blocks=(c0, c1),
                span_blocks=(s0, s1),
                start=start,
                end=end,
                span_start=span_start,
                span_end=span_end_c,
                page_start=page_start,
                page_end=page_end,
            )
        )
    return tuple(out)


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


_CJK_CHAR = re.compile(rf"[{CJK_WIDE}]")
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
            elif s > prev_end or _CJK_CHAR.match(self.text, s) or _CJK_CHAR.match(self.text, prev_end - 1):
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


def _validate(max_tokens: int, overlap: int, where: str = "") -> None:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ConfigError(f"max_tokens must be a positive integer, not {max_tokens!r}{where}")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or overlap < 0:
        raise ConfigError(f"overlap must be a non-negative integer, not {overlap!r}")
    if overlap >= max_tokens:
        raise ConfigError(
            f"overlap ({overlap}) must be smaller than max_tokens ({max_tokens}){where}",
            hint="an overlap of 10-20% of max_tokens is usual",
        )


def _chunk_id(doc_sha1: str, path: tuple[str, ...], occurrence: int, ordinal: int, start: int, end: int) -> str:
    key = "\x1f".join((doc_sha1, "\x1e".join(path), str(occurrence), str(ordinal), f"{start}:{end}"))
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:32]


def _same_row(p: Block, q: Block) -> bool:
    """Whether ``q`` is the next cell of ``p``'s table row (side by side on one baseline)."""
    if p.page != q.page or p.column != q.column or p.rotated or q.rotated:
        return False
    if q.bbox[0] < p.bbox[2] - 1.0:
        return False
    h = min(p.bbox[3] - p.bbox[1], q.bbox[3] - q.bbox[1])
    ov = min(p.bbox[3], q.bbox[3]) - max(p.bbox[1], q.bbox[1])
    return h > 0 and ov > 0.5 * h


_ENDS_SENTENCE = re.compile(r"[.!?。！？；;:：][\"”’)\]」』）]*$")
_ENDS_PROSE = re.compile(rf"(?:[a-z,\-–]|[{HAN_EXT_A}{HAN}，、])$")


def _soft_wrap(p: Block, q: Block, page_width: float) -> bool:
    """Whether the break between blocks ``p`` and ``q`` is a wrapped line of one sentence.

    Some PDFs put every line in a block of its own (wide line spacing, one
    text object per line), and a paragraph also continues across page
    breaks: a break after a full-width line of the same style that does not
    end a sentence, before a line that starts in lower case or with a CJK
    character, is a line wrap, not a paragraph boundary.
    """
    if p.rotated or q.rotated or abs(p.size - q.size) > 0.6 or p.bold != q.bold or p.italic != q.italic:
        return False
    pt, qt = p.text.rstrip(), q.text.lstrip()
    if not pt or not qt or _ENDS_SENTENCE.search(pt) or not _ENDS_PROSE.search(pt):
        return False
    if _LIST_MARKER.match(qt):
        return False
    cjk_before = bool(_CJK_CHAR.match(pt[-1]))
    if not (qt[0].islower() or _CJK_CHAR.match(qt) or (cjk_before and qt[0].isdigit())):
        return False
    return page_width <= 0 or (p.bbox[2] - p.bbox[0]) >= 0.35 * page_width


def _label_like(p: Block, q: Block) -> bool:
    """Whether ``p`` reads like a label of what follows, so a cut between them orphans it.

    A one-line block of at most 80 characters that ends in a letter (no
    sentence end, no figure), followed by a longer block: an undetected
    sub-heading ("（二）关联交易风险", "Liquidity"), a table's sub-header row.
    """
    pt = p.text.strip()
    if p.line_count != 1 or not pt or len(pt) > 80 or _ENDS_SENTENCE.search(pt):
        return False
    if not (pt[-1].isalpha() or _CJK_CHAR.match(pt[-1]) or pt[-1] in ")）】"):
        return False
    qt = q.text.strip()
    return q.line_count >= 2 or len(qt) > 2 * len(pt)


def chunk_document(
    document: Document,
    tree: HeadingTree,
    *,
    max_tokens: int | Callable[[Section], int] = DEFAULT_MAX_TOKENS,
    overlap: int = 0,
    tokenizer: TokenizerSpec = None,
    include_heading: bool = True,
) -> tuple[Chunk, ...]:
    """Section-aware chunks of ``document`` in reading order (see the module docstring).

    ``tokenizer``: ``None``/``"regex"`` (fast, offline), ``"tiktoken"``
    (``cl100k_base`` from llama-index-core's bundled cache), a
    :class:`~structrag.tokenizers.Tokenizer`, or any callable returning a
    count or a token list.  Each chunk's ``extra`` holds ``tokens`` (its
    count under that tokenizer) and ``overlap_chars``.

    ``max_tokens`` may also be a function of the :class:`Section`, for
    budgets that depend on the section (the LlamaIndex adapter subtracts
    each section's metadata from the chunk size this way).
    """
    budget_of = max_tokens if callable(max_tokens) else None
    if budget_of is None:
        _validate(max_tokens, overlap)  # type: ignore[arg-type]
    elif isinstance(overlap, bool) or not isinstance(overlap, int) or overlap < 0:
        raise ConfigError(f"overlap must be a non-negative integer, not {overlap!r}")
    tok = get_tokenizer(tokenizer)
    secs = sections(document, tree)
    cutter = _Cutter(document, tok)
    blocks = document.blocks
    starts = [b.start for b in blocks]
    out: list[Chunk] = []
    seen: Counter[tuple[str, ...]] = Counter()
    for sec in secs:
        occurrence = seen[sec.path]
        seen[sec.path] += 1
        h0, c0 = sec.heading_blocks
        c1 = sec.content_blocks[1]
        a = h0 if include_heading else c0
        if a >= c1:
            continue
        if not sec.has_content and sec.children_ids:
            continue  # a parent's bare heading: on every descendant's section_path instead
        budget = max_tokens
        if budget_of is not None:
            budget = budget_of(sec)
            _validate(budget, overlap, f" (budget of section {sec.id} {sec.title!r})")
        spans = _section_chunks(cutter, blocks, a, c0 if include_heading else a, c1, budget, overlap, tok)
        count = len(spans)
        for ordinal, (s, e, own_s, ntok) in enumerate(spans):
            lo = bisect.bisect_right(starts, s, a, c1) - 1
            lo = max(lo, a)
            if blocks[lo].end <= s:
                lo += 1
            hi = bisect.bisect_left(starts, e, lo, c1)
            ids = tuple(range(lo, hi))
            out.append(
                Chunk(
                    id=_chunk_id(document.sha1, sec.path, occurrence, ordinal, s, e),
                    doc_name=document.name,
                    doc_sha1=document.sha1,
                    text=document.text[s:e],
                    start=s,
                    end=e,
                    section_id=sec.id,
                    section_path=sec.path,
                    heading_levels=sec.levels,
                    sibling_index=ordinal,
                    sibling_count=count,
                    pages=tuple(sorted({blocks[i].page for i in ids})),
                    bboxes=tuple((blocks[i].page, blocks[i].bbox) for i in ids),
                    block_ids=ids,
                    extra=(("overlap_chars", own_s - s), ("tokens", ntok)),
                )
            )
    return tuple(out)


def _section_chunks(
    cutter: _Cutter,
    blocks: Sequence[Block],
    a: int,
    heading_end: int,
    c1: int,
    max_tokens: int,
    overlap: int,
    tok: Tokenizer,
) -> list[tuple[int, int, int, int]]:
    """``(start, end, own_start, tokens)`` of the chunks of blocks ``a..c1``."""
    pieces: list[_Piece] = []
    first_content = None
    page_widths = [w for w, _ in cutter.doc.page_sizes]
    for k in range(a, c1):
        if k == a:
            cut = 0.0
        elif k == heading_end and heading_end > a:
            cut = _CUT_AFTER_HEADING
        elif _same_row(blocks[k - 1], blocks[k]):
            cut = _CUT_IN_ROW
        elif _soft_wrap(blocks[k - 1], blocks[k], page_widths[blocks[k - 1].page]):
            cut = _CUT_WORD
        elif _label_like(blocks[k - 1], blocks[k]):
            cut = _CUT_AFTER_LABEL
        else:
            cut = _CUT_BLOCK
        ps = cutter.block_pieces(blocks[k], cut)
        if not ps:
            continue
        if k >= heading_end and first_content is None:
            first_content = len(pieces)
        pieces.extend(ps)
    if not pieces:
        return []
    budget = max_tokens - overlap
    head_tokens = sum(p.tokens for p in pieces[: first_content or 0])
    for attempt in range(8):
        fine: list[_Piece] = []
        for idx, p in enumerate(pieces):
            limit = budget
            if idx == first_content and first_content and head_tokens + p.tokens > budget:
                # let the heading's first paragraph be cut so the heading is not left alone
                limit = max(1, budget - head_tokens)
            fine.extend(cutter.refine(p, limit))
        runs = cutter.pack(fine, budget)
        out = []
        prev: tuple[int, int] | None = None  # piece range of the previous chunk
        heading_chars_end = blocks[heading_end].start if heading_end < c1 and heading_end > a else None
        new_budget = budget
        for i, j in runs:
            own_s, e = fine[i].start, fine[j - 1].end
            s = own_s
            if overlap and prev is not None:
                s = _overlap_start(cutter, fine, prev, own_s, overlap, heading_chars_end)
            if tok.additive:
                n = sum(p.tokens for p in fine[i:j])
                if s < own_s:
                    n += cutter.count(s, own_s)
            else:
                n = cutter.count(s, e)
            # over budget: retry smaller, unless the chunk is one unsplittable token
            if n > max_tokens and not (j - i == 1 and s == own_s and fine[i].end - fine[i].start <= 1):
                # a sub-word tokenizer counts joined text higher than its parts: pack again
                # with a budget this run's estimate no longer fits into
                estimate = sum(p.tokens for p in fine[i:j])
                new_budget = min(new_budget, estimate - (n - max_tokens))
            out.append((s, e, own_s, n))
            prev = (i, j)
        if new_budget == budget:
            return out
        budget = max(1, new_budget)
    return out


def _overlap_start(
    cutter: _Cutter,
    fine: Sequence[_Piece],
    prev: tuple[int, int],
    own_start: int,
    overlap: int,
    heading_chars_end: int | None,
) -> int:
    """Where a chunk starts so it repeats at most ``overlap`` tokens of the previous one."""
    i, j = prev
    floor = heading_chars_end if heading_chars_end is not None else fine[i].start
    best = own_start
    # whole pieces (sentences, items) first
    for k in range(j - 1, i - 1, -1):
        s = fine[k].start
        if s < floor:
            break
        if cutter.count(s, fine[j - 1].end) > overlap:
            break
        best = s
    if best != own_start:
        return best
    # else the last words of the previous chunk
    last = fine[j - 1]
    spans = _REGEX_TOK.pieces(cutter.text[last.start : last.end])
    for s, _ in reversed(spans):
        s += last.start
        if s < floor:
            break
        if cutter.count(s, last.end) > overlap:
            break
        best = s
    return best
