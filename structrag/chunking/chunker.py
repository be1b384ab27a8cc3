"""Section-aware chunks: each section's own text cut into verbatim chunks of at most ``max_tokens`` tokens.

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
from typing import Callable, Sequence

from ..errors import ConfigError
from ..model import Block, Chunk, Document
from ..options import DEFAULT_MAX_TOKENS
from ..text import HAN, HAN_EXT_A, WIDE_CHAR
from ..tokenizers import Tokenizer, TokenizerSpec, get_tokenizer
from ..tree import HeadingTree
from .cuts import (
    _CUT_AFTER_HEADING,
    _CUT_AFTER_LABEL,
    _CUT_BLOCK,
    _CUT_IN_ROW,
    _CUT_WORD,
    _LIST_MARKER,
    _REGEX_TOK,
    _Cutter,
    _Piece,
)
from .sections import Section, sections

__all__ = ["chunk_document", "DEFAULT_MAX_TOKENS"]



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
    cjk_before = bool(WIDE_CHAR.match(pt[-1]))
    if not (qt[0].islower() or WIDE_CHAR.match(qt) or (cjk_before and qt[0].isdigit())):
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
    if not (pt[-1].isalpha() or WIDE_CHAR.match(pt[-1]) or pt[-1] in ")）】"):
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
