"""Printed page labels of contents entries mapped to physical pages.

Labels are mapped by the offset between the two numberings, voted over the entries whose titles
are printed on the page their label points to (a best path over entries lets the offset change:
roman front matter, numbering that restarts in an attached document, "F-" pages); printed page
numbers in the page footers count as votes too.  Labels past the end of the document keep
``page=-1``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import replace
from typing import Sequence

from ..extraction.contents_pages import LABEL, label_value
from ..model import Document
from ..text import normalize_title, strip_number_pattern
from .contents_entries import ContentsEntry
from .outline import similarity

__all__ = ["TitleIndex", "footer_labels", "map_pages"]

_FOOTER_LABEL = re.compile(
    rf"^(?:page\s*)?[-–—|]?\s*({LABEL})\s*[-–—|]?(?:\s*(?:of|/)\s*\d{{1,4}})?$|^第\s*(\d+)\s*页", re.I)
_EDGE_NUMBER = re.compile(r"^(\d{1,4})\s*[|/•·–—-]?\s+\S|\S\s+[|/•·–—-]?\s*(\d{1,4})$")


class TitleIndex:
    """Where short body blocks are printed, keyed by their first words (with and without their number)."""

    def __init__(self, document: Document) -> None:
        self.keys: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
        for b in document.blocks:
            if b.role != "body" or b.line_count > 3 or len(b.text) > 200 or b.rotated:
                continue
            norm = normalize_title(b.text)
            if not norm:
                continue
            bare = strip_number_pattern(norm)
            rec = (b.page, norm, bare)
            self.keys[_key(norm)].append(rec)
            if bare != norm and bare:
                self.keys[_key(bare)].append(rec)

    def pages(self, title: str) -> set[int]:
        norm = normalize_title(title)
        bare = strip_number_pattern(norm)
        out: set[int] = set()
        for k in {_key(norm), _key(bare)}:
            for page, n, b in self.keys.get(k, ()):
                if max(similarity(norm, n), similarity(bare, b), similarity(bare, n)) >= 0.8:
                    out.add(page)
        return out


def _key(norm: str) -> str:
    return " ".join(norm.split()[:4])


def footer_labels(document: Document) -> dict[tuple[str, int], set[int]]:
    """Printed page labels found in the page furniture -> the physical pages printing them."""
    out: dict[tuple[str, int], set[int]] = defaultdict(set)
    for f in document.furniture:
        t = " ".join(f.text.split())
        lab = None
        if f.role == "page_number":
            m = _FOOTER_LABEL.match(t)
            if m:
                lab = m.group(1) or m.group(2)
        else:
            m = _EDGE_NUMBER.search(t)  # "45 | Annual Report 2023", "Annual Report | 45"
            if m:
                lab = m.group(1) or m.group(2)
        if lab is not None:
            scheme, v = label_value(lab)
            if v and (scheme or v <= document.page_count + 100):
                out[(scheme, v)].add(f.page)
    return out


def map_pages(
    document: Document,
    entries: Sequence[ContentsEntry],
    *,
    titles: TitleIndex | None = None,
    footers: dict[tuple[str, int], set[int]] | None = None,
    switch_cost: float = 2.5,
) -> list[ContentsEntry]:
    """Physical pages for one run's entries: the best path of offsets over the entries.

    Each labelled entry votes for the offsets (physical - printed) at which
    its title is printed (or a footer prints its label); a path over the
    entries pays 1 per entry whose vote it does not follow and
    ``switch_cost`` per change of offset within one label scheme (a change of
    scheme, roman to arabic or to "F-" pages, is free), 0.8 for a page
    before the contents (except roman front matter) and 1.2 for a page past
    the end of the file (an excerpt).  A run whose best path is supported by
    fewer than two entries, or by less than a fifth of those it maps inside
    the file, stays unmapped.
    """
    n = document.page_count
    titles = titles if titles is not None else TitleIndex(document)
    footers = footers if footers is not None else footer_labels(document)
    lab = [(i, *label_value(e.label)) for i, e in enumerate(entries) if e.label is not None]
    if not lab:
        return list(entries)
    votes: list[dict[int, str]] = []
    pool: Counter = Counter()
    for i, scheme, v in lab:
        cand: dict[int, str] = {}
        for p in footers.get((scheme, v), ()):
            cand[p - v] = "footer"
        for p in titles.pages(entries[i].title):
            if p not in document.toc_pages:
                cand[p - v] = "title"
        votes.append(cand)
        pool.update(cand.keys())
    states = [o for o, _ in pool.most_common(40)]
    if 0 not in states:
        states.append(0)
    inf = float("inf")

    first = min(e.contents_page for e in entries if e.contents_page >= 0) if entries else 0

    def cost(k: int, o: int) -> float:
        _, scheme, v = lab[k]
        p = v + o
        if not 0 <= p < n:
            return 1.2  # past the end (an excerpt, a truncated file) is a reading too, barely worse than a miss
        # a contents page lists what follows it: a page before it is a weaker reading (numbering that
        # restarts in an attached document otherwise sends its entries back to the main document);
        # roman front matter may well come before it
        return (0.0 if o in votes[k] else 1.0) + (0.8 if p < first and scheme != "roman" else 0.0)

    # Viterbi over entries; back pointers per step
    prev = {o: cost(0, o) for o in states}
    back: list[dict[int, int]] = []
    for k in range(1, len(lab)):
        sw = switch_cost if lab[k][1] == lab[k - 1][1] else 0.0  # another label scheme, another offset
        best_o = min(prev, key=prev.get)  # type: ignore[arg-type]
        cur: dict[int, float] = {}
        bp: dict[int, int] = {}
        for o in states:
            stay, jump = prev[o], prev[best_o] + sw
            if stay <= jump:
                cur[o], bp[o] = stay + cost(k, o), o
            else:
                cur[o], bp[o] = jump + cost(k, o), best_o
        back.append(bp)
        prev = cur
    o = min(prev, key=prev.get)  # type: ignore[arg-type]
    path = [o]
    for bp in reversed(back):
        o = bp[o]
        path.append(o)
    path.reverse()
    support = sum(1 for k, o in enumerate(path) if o in votes[k])
    inside = sum(1 for (_, _, v), o in zip(lab, path) if 0 <= v + o < n)
    out = list(entries)
    if support < max(2, 0.2 * inside) or prev[path[-1]] == inf:
        return out
    for k, ((i, _, v), o) in enumerate(zip(lab, path)):
        p = v + o
        if 0 <= p < n:
            out[i] = replace(out[i], page=p, mapped=votes[k].get(o, "offset"))
        else:
            out[i] = replace(out[i], page=-1, mapped="")  # past the end of the file (or before its start)
    # dividers point where the next mapped entry does
    nxt = -1
    for i in range(len(out) - 1, -1, -1):
        if out[i].label is None:
            if nxt >= 0:
                out[i] = replace(out[i], page=nxt, mapped="divider")
        elif out[i].page >= 0:
            nxt = out[i].page
    return out
