"""Structured text for the synthetic corpus: Markdown read from repository snapshots, parsed into blocks
whose headings keep their ``#`` levels, then combined or cut into document-sized texts.

Used by :mod:`eval.bench.synthetic_build`.  Only Latin-script text is kept, because the built-in
fonts the renderer uses cover Latin only (a missing glyph would print as a box that no reader
can match to its label).
"""

from __future__ import annotations

import html
import re
import subprocess
import unicodedata
from dataclasses import dataclass
from pathlib import Path

# the repositories whose Markdown trees feed the corpus (each checked by the held-out guard first)
DEFAULT_REPOS = ("OWASP/ASVS", "OWASP/Top10", "cncf/tag-security",
                 "OWASP/www-project-top-10-for-large-language-model-applications", "AusDTO/dta-website")

MAX_LEVEL = 4  # deeper source headings become body text: the corpus goes to depth 4


@dataclass(frozen=True, slots=True)
class Block:
    """One block of structured text: a heading (``level`` 1-4), a paragraph, a list, a table or code."""

    kind: str  # "h", "p", "ul", "ol", "table", "pre", "quote"
    text: str = ""
    level: int = 0
    items: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()  # a table's rows, the header first


@dataclass(frozen=True, slots=True)
class Chapter:
    """The blocks of one Markdown file, levels already shifted so its top heading is level 1."""

    source: str  # "owner/name:path"
    language: str
    blocks: tuple[Block, ...]

    @property
    def size(self) -> int:
        return sum(len(b.text) + sum(map(len, b.items)) + sum(len(c) for r in b.rows for c in r)
                   for b in self.blocks)


_LINK = re.compile(r"!\[[^\]]*\]\([^)]*\)|!\[[^\]]*\]\[[^\]]*\]")  # images: dropped
_HREF = re.compile(r"\[([^\]]*)\]\([^)]*\)|\[([^\]]*)\]\[[^\]]*\]")  # links: their text
_TAG = re.compile(r"<[^>]{0,400}>|\{:[^}]{0,400}\}")  # HTML tags, kramdown attribute lists
_MARK = re.compile(r"(\*\*|__|~~|`+|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*]))")
_AUTOLINK = re.compile(r"https?://\S+")
_NUM_LIST = re.compile(r"^\s*\d{1,3}[.)]\s+")
_BULLET = re.compile(r"^\s*[-*+]\s+")
_HEAD = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LANG_DIR = re.compile(r"^(?:[a-z]{2})(?:[-_][A-Za-z]{2,4})?$")
_LATIN_LANGS = {"en", "de", "es", "fr", "it", "pt", "nl", "ro", "id", "tr", "cs", "pl", "sv", "da", "ca"}


def plain(text: str) -> str:
    """Inline Markdown and HTML stripped to plain text: links keep their words, images go."""
    t = _LINK.sub("", text)
    t = _HREF.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), t)
    t = _TAG.sub("", t)
    t = html.unescape(t)
    t = _MARK.sub("", t)
    t = _AUTOLINK.sub("", t)
    t = t.replace("\\", "")
    return " ".join(t.split())


def latin(text: str) -> bool:
    """Whether every letter is one the renderer's built-in Latin fonts print (a few stray marks tolerated)."""
    bad = sum(1 for ch in text if ord(ch) > 0x24F and unicodedata.category(ch)[0] in "LS"
              and ch not in "–—‘’“”•…€™")
    return bad <= max(2, len(text) // 500)


def clean(text: str) -> str:
    """Plain text with the characters the fonts lack removed (emoji, symbols, other scripts)."""
    # soft hyphens and control characters print nothing, so a label holding one would not match its line
    return " ".join("".join(ch for ch in text if (ord(ch) <= 0x24F or ch in "–—‘’“”•…€™") and ch != "\xad"
                            and unicodedata.category(ch) != "Cc" or ch in "\t\n").split())


def _front_matter(lines: list[str]) -> tuple[str, list[str]]:
    """A Jekyll/Hugo front matter's ``title`` and the lines after it."""
    if not lines or lines[0].strip() != "---":
        return "", lines
    for k in range(1, min(len(lines), 80)):
        if lines[k].strip() == "---":
            title = ""
            for ln in lines[1:k]:
                if ln.lower().startswith("title:"):
                    title = ln.split(":", 1)[1].strip().strip("'\"")
            return title, lines[k + 1:]
    return "", lines


def _table(rows: list[str]) -> Block | None:
    cells = [[clean(plain(c)) for c in r.strip().strip("|").split("|")] for r in rows]
    cells = [r for r in cells if not all(re.fullmatch(r":?-{2,}:?|", c) for c in r)]
    if len(cells) < 2:
        return None
    width = min(len(cells[0]), 6)  # wider tables do not fit a column
    return Block("table", rows=tuple(tuple((r + [""] * width)[:width]) for r in cells[:40]))


def parse_markdown(text: str) -> list[Block]:
    """Blocks of a Markdown text; headings carry the raw ``#`` count as level."""
    title, lines = _front_matter(text.replace("\r\n", "\n").split("\n"))
    out: list[Block] = []
    if title and not any(_HEAD.match(ln) and ln.startswith("# ") for ln in lines):
        out.append(Block("h", clean(plain(title)), 1))
    para: list[str] = []
    items: list[str] = []
    list_kind = ""

    def flush() -> None:
        nonlocal para, items, list_kind
        if para:
            t = clean(plain(" ".join(para)))
            if t:
                out.append(Block("p", t))
        if items:
            its = tuple(t for t in (clean(plain(i)) for i in items) if t)
            if its:
                out.append(Block(list_kind, items=its[:30]))
        para, items, list_kind = [], [], ""

    i = 0
    while i < len(lines):
        ln = lines[i]
        s = ln.strip()
        if s.startswith("```") or s.startswith("~~~"):
            flush()
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(s[:3]):
                j += 1
            code = [clean(c.rstrip())[:80] for c in lines[i + 1: j]][:25]
            if any(code):
                out.append(Block("pre", "\n".join(code)))
            i = j + 1
            continue
        m = _HEAD.match(ln)
        if m:
            flush()
            t = clean(plain(m.group(2)))
            if t:
                out.append(Block("h", t, len(m.group(1))))
        elif s.startswith("|") and i + 1 < len(lines) and re.match(r"^\s*\|?\s*:?-{2,}", lines[i + 1]):
            flush()
            j = i
            while j < len(lines) and lines[j].strip().startswith("|"):
                j += 1
            tb = _table(lines[i:j])
            if tb is not None:
                out.append(tb)
            i = j
            continue
        elif not s or s.startswith("<") and not plain(s) or set(s) <= set("-=*_ "):
            flush()
        elif _BULLET.match(ln) or _NUM_LIST.match(ln):
            if para:
                flush()
            kind = "ol" if _NUM_LIST.match(ln) else "ul"
            if items and kind != list_kind:
                flush()
            list_kind = kind
            items.append(_NUM_LIST.sub("", _BULLET.sub("", ln)))
        elif items and ln.startswith((" ", "\t")):
            items[-1] += " " + s
        elif s.startswith(">"):
            flush()
            t = clean(plain(s.lstrip("> ")))
            if t:
                out.append(Block("quote", t))
        else:
            if items:
                flush()
            para.append(s)
        i += 1
    flush()
    return out


def close_levels(blocks: list[Block] | tuple[Block, ...]) -> list[Block]:
    """Levels closed up as the real corpus's outlines are: the first heading at level 1, none more than one
    level below the open heading above it (``#`` then ``###`` makes 1 then 2).  Headings past level 4,
    over 120 characters or without a letter become paragraphs (they are body text in the render)."""
    out: list[Block] = []
    stack: list[int] = []  # the levels of the open headings, as given
    for b in blocks:
        if b.kind != "h":
            out.append(b)
            continue
        while stack and stack[-1] >= b.level:
            stack.pop()
        stack.append(b.level)
        level = len(stack)
        if level > MAX_LEVEL or len(b.text) > 120 or not re.search(r"[A-Za-z]", b.text):
            out.append(Block("p", b.text))
        else:
            out.append(Block("h", b.text, level))
    return out


def language_of(path: str) -> str:
    """The language a documentation tree's folder names (``2017/fr``, ``docs/pt-BR``); English otherwise."""
    for part in reversed(path.split("/")[:-1]):
        if _LANG_DIR.match(part) and part[:2].lower() in _LATIN_LANGS | {"ar", "ja", "zh", "ko", "ru", "he",
                                                                          "fa", "hi", "el", "uk", "th"}:
            return part[:2].lower()
    return "en"


def read_repo(mirror: Path, repo: str, *, min_chars: int = 1200) -> list[Chapter]:
    """The Markdown chapters of one snapshot (HEAD), in path order: Latin script, with headings, big enough."""
    gd = mirror / repo.replace("/", "+") / "repo"
    tree = subprocess.run(["git", "--git-dir", str(gd), "ls-tree", "-r", "HEAD"], check=True,
                          capture_output=True, text=True).stdout
    wanted = []
    for row in tree.splitlines():
        meta, path = row.split("\t", 1)
        if path.lower().endswith(".md") and not path.startswith(".") and "/." not in path \
                and Path(path).name.lower() not in {"license.md", "contributing.md", "code_of_conduct.md",
                                                     "changelog.md", "security.md"}:
            wanted.append((path, meta.split()[2]))
    wanted.sort()
    if not wanted:
        return []
    batch = subprocess.run(["git", "--git-dir", str(gd), "cat-file", "--batch"], check=True, capture_output=True,
                           input="".join(sha + "\n" for _, sha in wanted).encode()).stdout
    chapters = []
    pos = 0
    for path, _ in wanted:
        header_end = batch.index(b"\n", pos)
        size = int(batch[pos:header_end].split()[2])
        data = batch[header_end + 1: header_end + 1 + size]
        pos = header_end + 1 + size + 1
        lang = language_of(path)
        if lang not in _LATIN_LANGS:
            continue
        text = data.decode("utf-8", "replace")
        if not latin(text):
            continue
        blocks = close_levels(parse_markdown(text))
        ch = Chapter(f"{repo}:{path}", lang, tuple(blocks))
        if ch.size >= min_chars and sum(b.kind == "h" for b in blocks) >= 2:
            chapters.append(ch)
    return chapters


def pieces(chapter: Chapter, max_chars: int) -> list[Chapter]:
    """A chapter cut at its level-1 and level-2 headings into parts of at most about ``max_chars``
    (each part opens with a heading; the cut-off parts keep their levels, so a part may open at level 2)."""
    if chapter.size <= max_chars:
        return [chapter]
    out: list[list[Block]] = [[]]
    size = 0
    for b in chapter.blocks:
        if b.kind == "h" and b.level <= 2 and size >= max_chars // 2 and out[-1]:
            out.append([])
            size = 0
        out[-1].append(b)
        size += len(b.text) + sum(map(len, b.items)) + sum(len(c) for r in b.rows for c in r)
    return [Chapter(chapter.source, chapter.language, tuple(bs)) for bs in out if bs]
