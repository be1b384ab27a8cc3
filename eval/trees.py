"""Heading-tree metrics: TED / TEDS / STEDS, parent and path accuracy, heading P/R/F1.

Everything works on :class:`Outline`, a heading tree in reading order (texts,
levels, pages, parent links).  :func:`as_outline` makes one from what users
have: a :class:`structrag.HeadingTree`, a sequence of ``(text, level, page)``
items (or ``Heading`` / ``OutlineEntry`` objects, or dicts), a structrag JSON
payload, a ``*.toc.json`` payload, or a path (:func:`load_outline`: PDF
outline, ``structrag toc --json``, ``*.toc.json``, ``HeadingTree.to_dict``
JSON, Markdown).

Definitions (DESIGN.md §3)
--------------------------
*TED*: tree edit distance (APTED / Zhang–Shasha, exact) between the two trees,
each under a virtual root that is never edited; insert and delete cost 1;
renaming one heading into another costs the normalised edit distance
(Levenshtein / longer length) between their :func:`normalize_title` texts
(``rename="exact"``: 0 if equal, else 1).

*TEDS* per document: ``1 - TED / max(|T_pred|, |T_ref|)`` where ``|T|`` counts
headings (the virtual root is not counted); 1.0 when both trees are empty;
clipped below at 0 (TED can exceed the larger size only for trees of opposite
shapes, e.g. a chain against a flat list).

*Micro-STEDS* over documents: ``1 - sum TED / sum max-size`` (long documents
weigh more); *Macro-STEDS*: the mean of per-document TEDS.

*Alignment* (end-to-end protocol): a monotone one-to-one matching of predicted
to reference headings (both in reading order) that maximises the summed text
similarity over pairs with similarity >= ``threshold`` and pages at most
``page_window`` apart (pages are ignored where either side has none).
Similarity is ``1 - NED`` of the normalised texts, also tried with the leading
number stripped (``"Item 7."`` vs ``"Item 7. Management's..."``, ``"2.1 Scope"``
vs ``"Scope"``), with a prefix rule for truncated titles.

*Heading precision / recall / F1*: matched / predicted, matched / reference.

*Parent accuracy*: the share of reference headings whose matched prediction
hangs from the prediction matched to the reference parent (or both from the
root).  The prediction is first pruned to the matched headings (unmatched
headings are deleted and their children promoted, as TED's delete does), since
outlines are partial trees.  *Path accuracy* (HELD): the share whose whole
root-to-node path is right, i.e. the parent is right and so is the parent's
path.  *Depth accuracy*: the pruned depth equals the reference depth.
Unmatched reference headings count as wrong; the denominator is the number of
reference headings.  In the *level-only* protocol both sides hold the same
headings, the alignment is the identity and nothing is pruned.

*Pruned TEDS*: TEDS between the pruned prediction and the reference.
*Aligned TEDS*: the same after relabelling each kept prediction with the text
of the reference heading it is aligned to, so that only structure counts
(printed "1.2 Scope" against the outline's "Scope" costs nothing once they
are aligned).  In the level-only protocol both equal TEDS.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal, Mapping, NamedTuple, Sequence

import numpy as np

from structrag.errors import ConfigError, ReferenceFormatError
from structrag.model import Heading, OutlineEntry
from structrag.numbering import parse_numbering
from structrag.text import normalize_title
from structrag.tree import HeadingTree

from . import _kernels

__all__ = [
    "Outline",
    "as_outline",
    "load_outline",
    "outline_from_markdown",
    "outline_from_parent_links",
    "ted",
    "teds",
    "heading_teds",
    "text_similarity",
    "Alignment",
    "align",
    "HeadingPRF",
    "heading_prf",
    "parent_accuracy",
    "path_accuracy",
    "prune",
    "pool",
    "DocumentScores",
    "TreeScores",
    "score_document",
    "score_corpus",
]

Rename = Literal["edit-distance", "exact"]
Engine = Literal["auto", "apted", "zhang-shasha"]
Protocol = Literal["auto", "level-only", "end-to-end"]


# --------------------------------------------------------------------------
# The tree value
# --------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Outline:
    """A heading tree in reading order.

    ``parents[i]`` is the index of heading i's parent (-1: the virtual root)
    and is always < i; children of a node are in index (reading) order.
    ``levels`` are the levels as given (a jump of more than one level is
    kept); :meth:`depths` gives the depth in the tree.  ``pages`` are 0-based
    (None where unknown).
    """

    texts: tuple[str, ...]
    levels: tuple[int, ...]
    pages: tuple[int | None, ...]
    parents: tuple[int, ...]
    name: str = ""

    def __post_init__(self) -> None:
        n = len(self.texts)
        if not (len(self.levels) == len(self.pages) == len(self.parents) == n):
            raise ConfigError("Outline fields must have the same length")
        for i, p in enumerate(self.parents):
            if not -1 <= p < i:
                raise ConfigError(f"Outline {self.name!r}: heading {i} has parent {p}; parents must precede children")

    def __len__(self) -> int:
        return len(self.texts)

    @classmethod
    def from_items(cls, items: Iterable[Any], name: str = "") -> "Outline":
        """From ``(text, level[, page])`` items in reading order (the HeadingTree rule builds the parents)."""
        texts, levels, pages = [], [], []
        for k, it in enumerate(items):
            t, lv, pg = _item(it, k, name)
            texts.append(t)
            levels.append(lv)
            pages.append(pg)
        return cls(tuple(texts), tuple(levels), tuple(pages), _parents_from_levels(levels), name)

    @classmethod
    def empty(cls, name: str = "") -> "Outline":
        return cls((), (), (), (), name)

    def depths(self) -> tuple[int, ...]:
        d: list[int] = []
        for p in self.parents:
            d.append(1 if p < 0 else d[p] + 1)
        return tuple(d)

    def path(self, i: int) -> tuple[int, ...]:
        """Indices from the top-level ancestor down to ``i``."""
        out = []
        while i >= 0:
            out.append(i)
            i = self.parents[i]
        return tuple(reversed(out))

    def items(self) -> list[tuple[str, int, int | None]]:
        """``(text, depth, page)`` per heading (depths, so the items rebuild this exact tree)."""
        return list(zip(self.texts, self.depths(), self.pages))

    def to_markdown(self) -> str:
        return "".join(f"{'#' * d} {t}\n" for t, d in zip(self.texts, self.depths()))


def _parents_from_levels(levels: Sequence[int]) -> tuple[int, ...]:
    parents, stack = [], []
    for i, lv in enumerate(levels):
        while stack and levels[stack[-1]] >= lv:
            stack.pop()
        parents.append(stack[-1] if stack else -1)
        stack.append(i)
    return tuple(parents)


def _item(it: Any, k: int, name: str) -> tuple[str, int, int | None]:
    if isinstance(it, Heading):
        text, level, page = it.text, it.level, it.page
    elif isinstance(it, OutlineEntry):
        text, level, page = it.title, it.level, (it.page if it.page >= 0 else None)
    elif isinstance(it, Mapping):
        text = it.get("text", it.get("title"))
        level, page = it.get("level"), it.get("page")
    elif isinstance(it, (tuple, list)) and len(it) in (2, 3):
        text, level = it[0], it[1]
        page = it[2] if len(it) == 3 else None
    else:
        raise ReferenceFormatError(
            f"heading {k}: expected (text, level, page), a Heading, an OutlineEntry or a dict, got {type(it).__name__}",
            path=name or None,
        )
    if not isinstance(text, str):
        raise ReferenceFormatError(f"heading {k}: text must be a string, got {text!r}", path=name or None)
    if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or level < 1:
        raise ReferenceFormatError(f"heading {k} ({text!r}): level must be an integer >= 1, got {level!r}",
                                   path=name or None)
    if page is not None and (isinstance(page, bool) or not isinstance(page, (int, np.integer))):
        raise ReferenceFormatError(f"heading {k} ({text!r}): page must be an integer or None, got {page!r}",
                                   path=name or None)
    return text, int(level), (int(page) if page is not None else None)


def outline_from_parent_links(
    nodes: Iterable[Any], *, name: str = "", order: Literal["given", "page"] = "given"
) -> Outline:
    """A reference tree from parent links, children sorted by reading order.

    ``nodes``: dicts with ``id``, ``parent`` (an id, or None / -1 / "" for the
    root), ``text`` and optionally ``page`` and ``order`` (a reading-order key;
    default: position in ``nodes``).  ``order="page"`` sorts by (page, key).
    This is MPDocBench's reading of a reference; the result is re-indexed in
    pre-order.
    """
    rows = list(nodes)
    ids: dict[Any, int] = {}
    for k, r in enumerate(rows):
        if not isinstance(r, Mapping) or "id" not in r or "text" not in r:
            raise ReferenceFormatError(f"node {k}: expected a dict with 'id', 'parent' and 'text'", path=name or None)
        if r["id"] in ids:
            raise ReferenceFormatError(f"node {k}: duplicate id {r['id']!r}", path=name or None)
        ids[r["id"]] = k
    children: dict[int, list[int]] = {-1: []}
    for k, r in enumerate(rows):
        par = r.get("parent")
        if par is None or par == -1 or par == "":
            pk = -1
        elif par in ids:
            pk = ids[par]
        else:
            raise ReferenceFormatError(f"node {k} ({r['text']!r}): unknown parent id {par!r}", path=name or None)
        children.setdefault(pk, []).append(k)

    def key(k: int):
        r = rows[k]
        o = r.get("order", k)
        return ((r.get("page") if r.get("page") is not None else -1), o) if order == "page" else (o,)

    texts, pages, parents = [], [], []
    new_index: dict[int, int] = {}
    stack: list[tuple[int, int]] = [(c, -1) for c in sorted(children[-1], key=key, reverse=True)]
    while stack:
        k, par = stack.pop()
        if k in new_index:
            raise ReferenceFormatError(f"node {k}: the parent links contain a cycle", path=name or None)
        new_index[k] = len(texts)
        texts.append(str(rows[k]["text"]))
        pg = rows[k].get("page")
        pages.append(int(pg) if pg is not None else None)
        parents.append(par)
        for c in sorted(children.get(k, []), key=key, reverse=True):
            stack.append((c, new_index[k]))
    if len(texts) != len(rows):
        raise ReferenceFormatError("the parent links contain a cycle (some nodes are not reachable from the root)",
                                   path=name or None)
    depths: list[int] = []
    for p in parents:
        depths.append(1 if p < 0 else depths[p] + 1)
    return Outline(tuple(texts), tuple(depths), tuple(pages), tuple(parents), name)


# --------------------------------------------------------------------------
# Markdown (MPDocBench HeadingTEDS reading)
# --------------------------------------------------------------------------
_ATX = re.compile(r"^ {0,3}(#+)(?:[ \t]+(.*?))?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CLOSING = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_EMPH = re.compile(r"(\*\*|__|\*|_|`|~~)")


def _clean_md_heading(s: str) -> str:
    s = _CLOSING.sub("", s)
    s = _LINK.sub(r"\1", s)
    s = _TAG.sub("", s)
    s = _EMPH.sub("", s)
    return " ".join(s.split())


def outline_from_markdown(markdown: str | Sequence[str], *, name: str = "") -> Outline:
    """Read ATX headings (``#`` counts, any number of them) off Markdown.

    A heading pops the stack until a shallower heading is on top and becomes
    its child (MPDocBench).  Fenced code is skipped; emphasis, links and HTML
    tags are removed from heading texts; empty headings are dropped.  Pass a
    sequence of per-page Markdown strings (e.g. ``pymupdf4llm.to_markdown(...,
    page_chunks=True)`` texts) to get 0-based pages.
    """
    pages_md = [markdown] if isinstance(markdown, str) else list(markdown)
    per_page = not isinstance(markdown, str)
    items: list[tuple[str, int, int | None]] = []
    for p, md in enumerate(pages_md):
        fence: str | None = None
        for line in md.splitlines():
            m = _FENCE.match(line)
            if m:
                mark = m.group(1)
                if fence is None:
                    fence = mark
                elif mark[0] == fence[0] and len(mark) >= len(fence):
                    fence = None
                continue
            if fence is not None:
                continue
            m = _ATX.match(line)
            if not m:
                continue
            text = _clean_md_heading(m.group(2) or "")
            if text:
                items.append((text, len(m.group(1)), p if per_page else None))
    return Outline.from_items(items, name=name)


# --------------------------------------------------------------------------
# Loaders
# --------------------------------------------------------------------------
def _from_toc_list(toc: Any, name: str, one_based: bool = True) -> Outline:
    if not isinstance(toc, list):
        raise ReferenceFormatError("'toc' must be a list of [level, title, page]", path=name or None)
    items = []
    for k, e in enumerate(toc):
        if not isinstance(e, (list, tuple)) or len(e) < 2:
            raise ReferenceFormatError(f"toc entry {k}: expected [level, title, page], got {e!r}", path=name or None)
        lv, title = e[0], e[1]
        page = e[2] if len(e) > 2 else None
        if page is not None:
            if isinstance(page, bool) or not isinstance(page, int):
                raise ReferenceFormatError(f"toc entry {k} ({title!r}): page must be an integer", path=name or None)
            page = page - 1 if one_based else page
            page = page if page >= 0 else None
        items.append((title, lv, page))
    return Outline.from_items(items, name=name)


def _from_payload(d: Any, name: str) -> Outline:
    if isinstance(d, Mapping):
        if "toc" in d:  # shared *.toc.json: [level, title, page (1-based)]
            return _from_toc_list(d["toc"], name)
        if "headings" in d:
            hs = d["headings"]
            if not isinstance(hs, list):
                raise ReferenceFormatError("'headings' must be a list", path=name or None)
            if "n_blocks" in d:  # HeadingTree.to_dict(): 0-based pages
                return as_outline(HeadingTree.from_dict(d), name=name)
            items = []
            for k, h in enumerate(hs):  # `structrag toc --json`: 1-based pages
                if not isinstance(h, Mapping):
                    raise ReferenceFormatError(f"heading {k}: expected an object", path=name or None)
                pg = h.get("page")
                if pg is not None and (isinstance(pg, bool) or not isinstance(pg, int)):
                    raise ReferenceFormatError(f"heading {k}: page must be an integer", path=name or None)
                items.append({"text": h.get("text"), "level": h.get("level"),
                              "page": (pg - 1 if pg is not None and pg >= 1 else None)})
            return Outline.from_items(items, name=name)
    if isinstance(d, list):  # a bare get_toc() list
        return _from_toc_list(d, name)
    raise ReferenceFormatError("unknown JSON shape: expected {'toc': [...]} or {'headings': [...]}",
                               path=name or None)


def load_outline(path: str | os.PathLike, *, name: str | None = None) -> Outline:
    """Load a heading tree from a file, by its kind.

    - ``.pdf``: the PDF's own outline (``get_toc``), pages made 0-based;
    - ``.md`` / ``.markdown``: ATX headings (:func:`outline_from_markdown`);
    - ``.json``: ``{"toc": [[level, title, page1], ...]}`` (the shared
      ``*.toc.json``), ``structrag toc --json`` (``{"headings": [{"text",
      "level", "page" (1-based), ...}]}``) or ``HeadingTree.to_dict()``.
    """
    p = Path(path)
    nm = name if name is not None else _doc_name(p)
    if not p.exists():
        raise ReferenceFormatError("file not found", path=p)
    suffix = p.suffix.lower()
    if suffix == ".pdf":
        import pymupdf

        try:
            with pymupdf.open(p) as doc:
                toc = doc.get_toc(simple=True)
        except Exception as exc:  # PyMuPDF raises its own types for damaged files
            raise ReferenceFormatError(f"cannot read the PDF outline: {exc}", path=p) from exc
        return _from_toc_list([list(e[:3]) for e in toc], nm)
    if suffix in (".md", ".markdown"):
        return outline_from_markdown(p.read_text(encoding="utf-8"), name=nm)
    if suffix == ".json":
        try:
            d = json.loads(p.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ReferenceFormatError(f"not valid JSON: {exc}", path=p) from exc
        try:
            return _from_payload(d, nm)
        except ReferenceFormatError as exc:
            exc.path = str(p)  # the file, not the document name, is what the user can open
            raise
    raise ReferenceFormatError(f"unknown reference file type {suffix!r} (expected .pdf, .json, .md)", path=p)


def _doc_name(p: Path) -> str:
    n = p.name
    for suf in (".toc.json", ".json", ".pdf", ".md", ".markdown"):
        if n.lower().endswith(suf):
            return n[: -len(suf)]
    return p.stem


def as_outline(x: Any, *, name: str | None = None) -> Outline:
    """Coerce a tree-like value to :class:`Outline` (see the module docstring)."""
    if isinstance(x, Outline):
        return x if name is None or name == x.name else Outline(x.texts, x.levels, x.pages, x.parents, name)
    if isinstance(x, HeadingTree):
        nodes = x.nodes
        return Outline(
            tuple(n.text for n in nodes),
            tuple(n.level for n in nodes),
            tuple(n.page for n in nodes),
            tuple(-1 if n.parent is None or n.parent < 0 else n.parent for n in nodes),
            x.document if name is None else name,
        )
    if isinstance(x, (str, bytes)):
        raise ConfigError("as_outline() got a string: use outline_from_markdown(text) or load_outline(path)")
    if isinstance(x, os.PathLike):
        return load_outline(x, name=name)
    if isinstance(x, Mapping):
        return _from_payload(x, name or str(x.get("document", x.get("doc_id", ""))))
    if isinstance(x, Iterable):
        return Outline.from_items(x, name=name or "")
    raise ConfigError(f"cannot read a heading tree from {type(x).__name__}")


# --------------------------------------------------------------------------
# Tree edit distance
# --------------------------------------------------------------------------
def _label_ids(texts: Sequence[str]) -> tuple[list[str], list[int]]:
    uniq: dict[str, int] = {}
    ids = [uniq.setdefault(normalize_title(t), len(uniq)) for t in texts]
    return list(uniq), ids


def _cost_matrix(la: list[str], lb: list[str], rename: Rename) -> np.ndarray:
    """Label cost matrix with one extra row / column for the virtual roots."""
    m = np.ones((len(la) + 1, len(lb) + 1), dtype=np.float64)
    if rename == "edit-distance":
        m[: len(la), : len(lb)] = _kernels.ned_matrix(la, lb)
    elif rename == "exact":
        pos = {t: j for j, t in enumerate(lb)}
        for i, t in enumerate(la):
            if t in pos:
                m[i, pos[t]] = 0.0
    else:
        raise ConfigError(f"rename must be 'edit-distance' or 'exact', got {rename!r}")
    m[len(la), len(lb)] = 0.0
    return m


@contextlib.contextmanager
def _recursion_limit(n: int) -> Iterator[None]:
    old = sys.getrecursionlimit()
    if n > old:
        sys.setrecursionlimit(n)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _ted_apted(pa, la, pb, lb, cost: np.ndarray) -> float:
    from apted import APTED, Config

    class _Node:
        __slots__ = ("label", "children")

        def __init__(self, label: int) -> None:
            self.label = label
            self.children: list[_Node] = []

    def build(parents, labels, root_label):
        nodes = [_Node(root_label)] + [_Node(l) for l in labels]
        for i, p in enumerate(parents):
            nodes[p + 1].children.append(nodes[i + 1])
        return nodes[0]

    c = cost.tolist()

    class _Cfg(Config):
        valuecls = float

        def rename(self, a, b):
            return c[a.label][b.label]

        def children(self, node):
            return node.children

    ta = build(pa, la, cost.shape[0] - 1)
    tb = build(pb, lb, cost.shape[1] - 1)
    # APTED's indexer recurses once per tree level and its strategy code per
    # node on a path: generous head-room for 10-deep and 2,000-wide trees.
    with _recursion_limit(max(10_000, 4 * (len(la) + len(lb)) + 1_000)):
        return float(APTED(ta, tb, _Cfg()).compute_edit_distance())


def _ted(a: Outline, b: Outline, rename: Rename = "edit-distance", engine: Engine = "auto") -> float:
    if rename not in ("edit-distance", "exact"):
        raise ConfigError(f"rename must be 'edit-distance' or 'exact', got {rename!r}")
    if engine not in ("auto", "apted", "zhang-shasha"):
        raise ConfigError(f"engine must be 'auto', 'apted' or 'zhang-shasha', got {engine!r}")
    if len(a) == 0 or len(b) == 0:
        return float(len(a) + len(b))
    ua, ia = _label_ids(a.texts)
    ub, ib = _label_ids(b.texts)
    cost = _cost_matrix(ua, ub, rename)
    if engine == "auto":
        engine = "zhang-shasha" if _kernels.HAVE_NUMBA else "apted"
    if engine == "apted":
        return _ted_apted(a.parents, ia, b.parents, ib, cost)
    if engine == "zhang-shasha":
        # node 0 is the virtual root; heading i is node i+1
        pa = [-1] + [p + 1 for p in a.parents]
        pb = [-1] + [p + 1 for p in b.parents]
        return _kernels.zhang_shasha(pa, [len(ua)] + ia, pb, [len(ub)] + ib, cost)
    raise ConfigError(f"engine must be 'auto', 'apted' or 'zhang-shasha', got {engine!r}")


def ted(pred: Any, ref: Any, *, rename: Rename = "edit-distance", engine: Engine = "auto") -> float:
    """Tree edit distance between two heading trees (see the module docstring).

    ``engine="apted"`` uses the ``apted`` package; ``"zhang-shasha"`` the
    compiled exact algorithm (same result, much faster on 1,000+ headings);
    ``"auto"`` the compiled one when numba is installed.
    """
    return _ted(as_outline(pred), as_outline(ref), rename, engine)


def _teds_value(d: float, size: int) -> float:
    return 1.0 if size == 0 else max(0.0, 1.0 - d / size)


def teds(pred: Any, ref: Any, *, rename: Rename = "edit-distance", engine: Engine = "auto") -> float:
    """``1 - TED / max(|T_pred|, |T_ref|)``: 1.0 for identical trees and for two empty ones."""
    a, b = as_outline(pred), as_outline(ref)
    return _teds_value(_ted(a, b, rename, engine), max(len(a), len(b)))


def heading_teds(markdown: str | Sequence[str], reference: Any, *, rename: Rename = "edit-distance") -> float:
    """MPDocBench HeadingTEDS: the tree read off ``markdown``'s ``#`` headings against ``reference``.

    ``reference`` is anything :func:`as_outline` accepts; for parent-link
    references build it with :func:`outline_from_parent_links`.
    """
    return teds(outline_from_markdown(markdown), reference, rename=rename)


# --------------------------------------------------------------------------
# Alignment
# --------------------------------------------------------------------------
def _bare(norm: str, raw: str) -> str:
    num, rest = parse_numbering(raw)
    return normalize_title(rest) if num is not None else norm


def _prefix_sim(a: str, b: str) -> float:
    if not a or not b:
        return 0.0
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if len(short) >= 4 and long_.startswith(short) and (len(long_) == len(short) or long_[len(short)] == " "):
        return 0.85 + 0.15 * len(short) / len(long_)
    return 0.0


def _prefix_pairs(xa: list[str], xb: list[str]) -> Iterator[tuple[int, int, float]]:
    """(u, v, prefix similarity) for the pairs where one text is a word-prefix of the other."""
    import bisect

    for short, long_, flip in ((xa, xb, False), (xb, xa, True)):
        order = sorted(range(len(long_)), key=long_.__getitem__)
        keys = [long_[k] for k in order]
        for u, t in enumerate(short):
            if len(t) < 4:
                continue
            lo = bisect.bisect_left(keys, t)
            hi = bisect.bisect_left(keys, t + "\U0010ffff")
            for k in range(lo, hi):
                v = order[k]
                sim = _prefix_sim(t, long_[v])
                if sim > 0:
                    yield (v, u, sim) if flip else (u, v, sim)


def text_similarity(a: str, b: str) -> float:
    """Similarity in [0, 1] of two heading texts as the alignment scores it."""
    na, nb = normalize_title(a), normalize_title(b)
    ba, bb = _bare(na, a), _bare(nb, b)
    variants = {(na, nb), (ba, nb), (na, bb), (ba, bb)}
    best = 0.0
    for x, y in variants:
        if not x or not y:
            continue
        s = 1.0 - float(_kernels.ned_matrix([x], [y])[0, 0])
        s = max(s, _prefix_sim(x, y))
        if (x, y) != (na, nb):
            s -= 0.02  # a match that needed the number stripped ranks below a full match
        best = max(best, s)
    return max(0.0, best)


class Alignment(NamedTuple):
    """A monotone matching: ``pairs[k] = (pred index, ref index)``, increasing in both."""

    pairs: tuple[tuple[int, int], ...]
    similarity: tuple[float, ...]
    n_pred: int
    n_ref: int

    def pred_to_ref(self) -> dict[int, int]:
        return {p: r for p, r in self.pairs}

    def ref_to_pred(self) -> dict[int, int]:
        return {r: p for p, r in self.pairs}

    @classmethod
    def identity(cls, n: int) -> "Alignment":
        return cls(tuple((i, i) for i in range(n)), (1.0,) * n, n, n)


def _sim_block(pa: list[int], pb: list[int], A: tuple, B: tuple) -> np.ndarray:
    """Similarity matrix between predicted ``pa`` and reference ``pb`` headings."""
    na, ba, ra = A
    nb, bb, rb = B
    xa = [na[i] for i in pa]
    xb = [nb[j] for j in pb]
    s = 1.0 - _kernels.ned_matrix(xa, xb)
    sa = [ba[i] for i in pa]
    sb = [bb[j] for j in pb]
    if sa != xa or sb != xb:
        for x, y in ((sa, xb), (xa, sb), (sa, sb)):
            s = np.maximum(s, 1.0 - _kernels.ned_matrix(x, y) - 0.02)
    for xs_a, xs_b, pen in ((xa, xb, 0.0), (sa, sb, 0.02)):
        for u, v, pre in _prefix_pairs(xs_a, xs_b):
            if pre - pen > s[u, v]:
                s[u, v] = pre - pen
    # empty normalised texts never match
    for u, i in enumerate(pa):
        if not na[i]:
            s[u, :] = 0.0
    for v, j in enumerate(pb):
        if not nb[j]:
            s[:, v] = 0.0
    return s


def align(pred: Any, ref: Any, *, threshold: float = 0.8, page_window: int | None = 1) -> Alignment:
    """Monotone alignment of predicted to reference headings (module docstring).

    ``page_window=None`` ignores pages.  Ties between equally good alignments
    are broken towards earlier predicted headings.
    """
    a, b = as_outline(pred), as_outline(ref)
    if not 0.0 < threshold <= 1.0:
        raise ConfigError(f"threshold must be in (0, 1], got {threshold}")
    if page_window is not None and page_window < 0:
        raise ConfigError(f"page_window must be >= 0 or None, got {page_window}")
    na = [normalize_title(t) for t in a.texts]
    nb = [normalize_title(t) for t in b.texts]
    A = (na, [_bare(x, t) for x, t in zip(na, a.texts)], a.texts)
    B = (nb, [_bare(x, t) for x, t in zip(nb, b.texts)], b.texts)
    cands: list[tuple[int, int, float]] = []
    if len(a) and len(b):
        free_a = [i for i, p in enumerate(a.pages) if p is None or page_window is None]
        free_b = [j for j, p in enumerate(b.pages) if p is None or page_window is None]
        blocks: list[tuple[list[int], list[int]]] = []
        if page_window is None or len(free_a) == len(a) or len(free_b) == len(b):
            blocks.append((list(range(len(a))), list(range(len(b)))))
        else:
            by_page_a: dict[int, list[int]] = {}
            for i, p in enumerate(a.pages):
                if p is not None:
                    by_page_a.setdefault(p, []).append(i)
            by_page_b: dict[int, list[int]] = {}
            for j, p in enumerate(b.pages):
                if p is not None:
                    by_page_b.setdefault(p, []).append(j)
            for pg, js in by_page_b.items():
                ia = [i for q in range(pg - page_window, pg + page_window + 1) for i in by_page_a.get(q, ())]
                if ia:
                    blocks.append((sorted(ia), js))
            if free_a:
                blocks.append((free_a, [j for j, p in enumerate(b.pages) if p is not None]))
            if free_b:
                blocks.append((list(range(len(a))), free_b))
        seen: set[tuple[int, int]] = set()
        for pa, pb in blocks:
            s = _sim_block(pa, pb, A, B)
            us, vs = np.nonzero(s >= threshold - 1e-12)
            for u, v in zip(us.tolist(), vs.tolist()):
                key = (pa[u], pb[v])
                if key not in seen:
                    seen.add(key)
                    cands.append((pa[u], pb[v], float(s[u, v])))
    pairs, sims = _max_weight_monotone(cands, len(b))
    return Alignment(tuple(pairs), tuple(sims), len(a), len(b))


def _max_weight_monotone(cands: list[tuple[int, int, float]], n_ref: int) -> tuple[list[tuple[int, int]], list[float]]:
    """Maximum-weight chain of pairs strictly increasing in both indices (Fenwick tree over ref index)."""
    if not cands:
        return [], []
    cands.sort(key=lambda c: (c[0], c[1]))
    size = n_ref + 1
    tree_val = [0.0] * (size + 1)
    tree_arg = [-1] * (size + 1)

    def query(j: int) -> tuple[float, int]:  # best chain ending at ref index < j
        best, arg = 0.0, -1
        k = j
        while k > 0:
            if tree_val[k] > best + 1e-12:
                best, arg = tree_val[k], tree_arg[k]
            k -= k & -k
        return best, arg

    def update(j: int, val: float, arg: int) -> None:
        k = j + 1
        while k <= size:
            if val > tree_val[k] + 1e-12:
                tree_val[k], tree_arg[k] = val, arg
            k += k & -k

    score = [0.0] * len(cands)
    back = [-1] * len(cands)
    k = 0
    while k < len(cands):
        i = cands[k][0]
        group = []
        while k < len(cands) and cands[k][0] == i:
            group.append(k)
            k += 1
        for c in group:  # query before updating: one predicted heading matches once
            best, arg = query(cands[c][1])
            score[c], back[c] = best + cands[c][2], arg
        for c in group:
            update(cands[c][1], score[c], c)
    end = max(range(len(cands)), key=lambda c: (score[c], -c))
    chain = []
    while end >= 0:
        chain.append(end)
        end = back[end]
    chain.reverse()
    return [(cands[c][0], cands[c][1]) for c in chain], [cands[c][2] for c in chain]


# --------------------------------------------------------------------------
# Scores built on an alignment
# --------------------------------------------------------------------------
class HeadingPRF(NamedTuple):
    precision: float
    recall: float
    f1: float
    matched: int
    n_pred: int
    n_ref: int


def _prf(matched: int, n_pred: int, n_ref: int) -> HeadingPRF:
    # empty conventions: nothing predicted and nothing to find is perfect
    p = matched / n_pred if n_pred else (1.0 if n_ref == 0 else 0.0)
    r = matched / n_ref if n_ref else (1.0 if n_pred == 0 else 0.0)
    f = 2 * p * r / (p + r) if p + r else 0.0
    return HeadingPRF(p, r, f, matched, n_pred, n_ref)


def heading_prf(pred: Any, ref: Any, *, threshold: float = 0.8, page_window: int | None = 1) -> HeadingPRF:
    """Heading precision, recall and F1 under :func:`align`."""
    al = align(pred, ref, threshold=threshold, page_window=page_window)
    return _prf(len(al.pairs), al.n_pred, al.n_ref)


def prune(outline: Any, keep: Iterable[int]) -> Outline:
    """Keep only the headings in ``keep``; a dropped heading's children go to its nearest kept ancestor."""
    o = as_outline(outline)
    ks = sorted(set(int(i) for i in keep))
    new = {old: k for k, old in enumerate(ks)}
    parents = []
    for old in ks:
        p = o.parents[old]
        while p >= 0 and p not in new:
            p = o.parents[p]
        parents.append(new[p] if p >= 0 else -1)
    depths: list[int] = []
    for p in parents:
        depths.append(1 if p < 0 else depths[p] + 1)
    return Outline(tuple(o.texts[i] for i in ks), tuple(depths), tuple(o.pages[i] for i in ks), tuple(parents),
                   o.name)


def _structure_counts(pred: Outline, ref: Outline, al: Alignment) -> tuple[int, int, int, Outline]:
    """(parent correct, path correct, depth correct, pruned prediction) over the reference headings."""
    matched_pred = [p for p, _ in al.pairs]
    pruned = prune(pred, matched_pred)
    # pruned index k corresponds to matched_pred[k] (sorted, and pairs are increasing)
    ref_of_pruned = [r for _, r in al.pairs]
    pruned_of_ref = {r: k for k, r in enumerate(ref_of_pruned)}
    pdepth = pruned.depths()
    rdepth = ref.depths()
    parent_ok = [False] * len(ref)
    path_ok = [False] * len(ref)
    depth_ok = 0
    for r in range(len(ref)):  # ref parents precede children, so path_ok of the parent is known
        k = pruned_of_ref.get(r)
        if k is None:
            continue
        pk = pruned.parents[k]
        pr = ref.parents[r]
        parent_ok[r] = (pk < 0 and pr < 0) or (pk >= 0 and ref_of_pruned[pk] == pr)
        path_ok[r] = parent_ok[r] and (pr < 0 or path_ok[pr])
        depth_ok += pdepth[k] == rdepth[r]
    return sum(parent_ok), sum(path_ok), depth_ok, pruned


def _same_headings(a: Outline, b: Outline) -> bool:
    return len(a) == len(b) and all(normalize_title(x) == normalize_title(y) for x, y in zip(a.texts, b.texts))


def _alignment_for(a: Outline, b: Outline, protocol: Protocol, threshold: float,
                   page_window: int | None) -> tuple[Alignment, str]:
    if protocol == "level-only" or (protocol == "auto" and _same_headings(a, b)):
        if len(a) != len(b):
            raise ConfigError(
                f"level-only protocol needs the same headings on both sides: {len(a)} predicted, {len(b)} reference",
                path=a.name or b.name or None,
            )
        for i, (x, y) in enumerate(zip(a.texts, b.texts)):
            if normalize_title(x) != normalize_title(y):
                raise ConfigError(
                    f"level-only protocol: heading {i} differs ({x!r} predicted vs {y!r} reference)",
                    path=a.name or b.name or None, hint="use protocol='end-to-end' to align them",
                )
        return Alignment.identity(len(a)), "level-only"
    if protocol not in ("auto", "end-to-end"):
        raise ConfigError(f"protocol must be 'auto', 'level-only' or 'end-to-end', got {protocol!r}")
    return align(a, b, threshold=threshold, page_window=page_window), "end-to-end"


def parent_accuracy(pred: Any, ref: Any, *, protocol: Protocol = "auto", threshold: float = 0.8,
                    page_window: int | None = 1) -> float:
    """Share of reference headings attached to the right parent (1.0 when the reference is empty)."""
    a, b = as_outline(pred), as_outline(ref)
    al, _ = _alignment_for(a, b, protocol, threshold, page_window)
    pc, _, _, _ = _structure_counts(a, b, al)
    return pc / len(b) if len(b) else 1.0


def path_accuracy(pred: Any, ref: Any, *, protocol: Protocol = "auto", threshold: float = 0.8,
                  page_window: int | None = 1) -> float:
    """Share of reference headings whose whole root-to-node path is right (HELD)."""
    a, b = as_outline(pred), as_outline(ref)
    al, _ = _alignment_for(a, b, protocol, threshold, page_window)
    _, pc, _, _ = _structure_counts(a, b, al)
    return pc / len(b) if len(b) else 1.0


class DocumentScores(NamedTuple):
    """Per-document scores; the counts let :class:`TreeScores` pool over documents."""

    name: str
    protocol: str
    n_pred: int
    n_ref: int
    ted: float
    size: int  # max(|T_pred|, |T_ref|)
    teds: float
    pruned_ted: float
    pruned_size: int
    pruned_teds: float
    aligned_ted: float
    aligned_teds: float
    matched: int
    precision: float
    recall: float
    f1: float
    parent_correct: int
    path_correct: int
    depth_correct: int
    parent_accuracy: float
    path_accuracy: float
    depth_accuracy: float

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


def score_document(
    pred: Any,
    ref: Any,
    *,
    protocol: Protocol = "auto",
    rename: Rename = "edit-distance",
    threshold: float = 0.8,
    page_window: int | None = 1,
    engine: Engine = "auto",
    name: str | None = None,
) -> DocumentScores:
    """All tree scores for one document.

    ``protocol="auto"`` is level-only when both sides hold the same heading
    texts in the same order, end-to-end otherwise.  ``level-only`` checks that
    they do and raises :class:`ConfigError` naming the first difference.
    """
    a, b = as_outline(pred), as_outline(ref)
    al, proto = _alignment_for(a, b, protocol, threshold, page_window)
    pc, pathc, dc, pruned = _structure_counts(a, b, al)
    d = _ted(a, b, rename, engine)
    size = max(len(a), len(b))
    if proto == "level-only":
        pd_, psize, ad = d, size, d
    else:
        pd_ = _ted(pruned, b, rename, engine)
        psize = max(len(pruned), len(b))
        relabelled = Outline(tuple(b.texts[r] for _, r in al.pairs), pruned.levels, pruned.pages, pruned.parents,
                             pruned.name)
        ad = _ted(relabelled, b, rename, engine)
    prf = _prf(len(al.pairs), len(a), len(b))
    nr = len(b)
    return DocumentScores(
        name=name if name is not None else (b.name or a.name),
        protocol=proto,
        n_pred=len(a),
        n_ref=nr,
        ted=d,
        size=size,
        teds=_teds_value(d, size),
        pruned_ted=pd_,
        pruned_size=psize,
        pruned_teds=_teds_value(pd_, psize),
        aligned_ted=ad,
        aligned_teds=_teds_value(ad, psize),
        matched=prf.matched,
        precision=prf.precision,
        recall=prf.recall,
        f1=prf.f1,
        parent_correct=pc,
        path_correct=pathc,
        depth_correct=dc,
        parent_accuracy=pc / nr if nr else 1.0,
        path_accuracy=pathc / nr if nr else 1.0,
        depth_accuracy=dc / nr if nr else 1.0,
    )


class TreeScores(NamedTuple):
    """Scores pooled over documents.

    ``micro_steds`` = 1 - sum TED / sum size; ``macro_steds`` = mean TEDS
    (NaN over no documents).  Parent / path /
    depth accuracy and precision / recall / F1 are pooled over headings
    (micro); the ``macro_*`` fields average them per document.
    """

    n_documents: int
    micro_steds: float
    macro_steds: float
    pruned_micro_steds: float
    pruned_macro_steds: float
    aligned_micro_steds: float
    aligned_macro_steds: float
    precision: float
    recall: float
    f1: float
    parent_accuracy: float
    path_accuracy: float
    depth_accuracy: float
    macro_parent_accuracy: float
    macro_path_accuracy: float
    macro_f1: float
    documents: tuple[DocumentScores, ...]

    def to_dict(self, *, documents: bool = True) -> dict[str, Any]:
        d = self._asdict()
        d["documents"] = [x.to_dict() for x in self.documents] if documents else None
        if not documents:
            del d["documents"]
        return d


def _mean(xs: Sequence[float]) -> float:
    return float(sum(xs) / len(xs)) if xs else float("nan")


def pool(docs: Sequence[DocumentScores]) -> TreeScores:
    """Pool per-document scores into :class:`TreeScores` (NaN fields for no documents)."""
    docs = tuple(docs)
    nan = float("nan")
    size = sum(d.size for d in docs)
    psize = sum(d.pruned_size for d in docs)
    n_ref = sum(d.n_ref for d in docs)
    prf = _prf(sum(d.matched for d in docs), sum(d.n_pred for d in docs), n_ref) if docs else None
    return TreeScores(
        n_documents=len(docs),
        micro_steds=(_teds_value(sum(d.ted for d in docs), size) if docs else nan),
        macro_steds=_mean([d.teds for d in docs]),
        pruned_micro_steds=(_teds_value(sum(d.pruned_ted for d in docs), psize) if docs else nan),
        pruned_macro_steds=_mean([d.pruned_teds for d in docs]),
        aligned_micro_steds=(_teds_value(sum(d.aligned_ted for d in docs), psize) if docs else nan),
        aligned_macro_steds=_mean([d.aligned_teds for d in docs]),
        precision=prf.precision if prf else nan,
        recall=prf.recall if prf else nan,
        f1=prf.f1 if prf else nan,
        parent_accuracy=(sum(d.parent_correct for d in docs) / n_ref if n_ref else (1.0 if docs else nan)),
        path_accuracy=(sum(d.path_correct for d in docs) / n_ref if n_ref else (1.0 if docs else nan)),
        depth_accuracy=(sum(d.depth_correct for d in docs) / n_ref if n_ref else (1.0 if docs else nan)),
        macro_parent_accuracy=_mean([d.parent_accuracy for d in docs]),
        macro_path_accuracy=_mean([d.path_accuracy for d in docs]),
        macro_f1=_mean([d.f1 for d in docs]),
        documents=docs,
    )


def score_corpus(
    pairs: Mapping[str, tuple[Any, Any]] | Iterable[tuple[Any, Any]],
    **options: Any,
) -> TreeScores:
    """Score many documents: ``{name: (pred, ref)}`` or an iterable of ``(pred, ref)``.

    ``options`` are those of :func:`score_document` (unknown ones are rejected).
    Over no documents every score is NaN.
    """
    allowed = {"protocol", "rename", "threshold", "page_window", "engine"}
    bad = set(options) - allowed
    if bad:
        raise ConfigError(f"unknown option(s) for score_corpus: {sorted(bad)}; allowed: {sorted(allowed)}")
    if isinstance(pairs, Mapping):
        items = [(str(k), v) for k, v in pairs.items()]
    else:
        items = [(None, v) for v in pairs]
    docs = []
    for nm, pr in items:
        if not isinstance(pr, (tuple, list)) or len(pr) != 2:
            raise ConfigError("score_corpus expects (pred, ref) pairs")
        docs.append(score_document(pr[0], pr[1], name=nm, **options))
    return pool(docs)
