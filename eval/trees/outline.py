"""The heading-tree value every metric works on (:class:`Outline`) and the ways to make one."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping, Sequence

import numpy as np

from structrag.errors import ConfigError, ReferenceFormatError
from structrag.model import Heading, OutlineEntry
from structrag.tree import HeadingTree

__all__ = ["Outline", "as_outline", "load_outline", "outline_from_markdown", "outline_from_parent_links"]


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
