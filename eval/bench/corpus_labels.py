"""Weak heading labels for the many-publisher training corpus, and how its PDFs are read from git snapshots.

A long PDF is labelled by its own outline when that outline is long enough and mostly printed
(:func:`outline_label`), otherwise by its printed table of contents when structrag reads and locates
it (:func:`contents_label`); :func:`label_document` tries both in that order and says why neither
worked.  Labels are ``[level, title, page]`` lists, 1-based levels and pages, the layout of
``<doc_id>.toc.json`` that :func:`structrag.levels.references.load_reference_docs` reads.

The PDFs are never copied into the repository: ``eval/data/corpus/manifest.jsonl`` names each by
repository, commit, path and sha1, and :func:`git_blob` reads it from a snapshot that the
``fetch`` tool brought (``<mirror>/<owner>+<name>/repo``, a bare git directory).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import NamedTuple, Sequence

from structrag.levels.references import printed_share
from structrag.model import Document, OutlineEntry
from structrag.pipeline import read_contents
from structrag.text import normalize_title

__all__ = [
    "MIN_PAGES",
    "MIN_ENTRIES",
    "MIN_PRINTED",
    "Label",
    "git_dir",
    "git_blob",
    "git_head",
    "clean_outline_entries",
    "outline_label",
    "contents_label",
    "label_document",
    "guess_language",
    "toc_rows",
]

#: shorter documents have too few headings to teach a level model much
MIN_PAGES = 30
#: fewer entries than this are a cover-page outline or a stub contents
MIN_ENTRIES = 8
#: an outline whose titles are mostly not printed on their pages is editorial (exhibit lists, file names)
MIN_PRINTED = 0.5


class Label(NamedTuple):
    """A document's weak labels (``kind`` ``outline`` or ``contents``), or why it has none (``kind`` ``""``)."""

    kind: str
    entries: tuple[OutlineEntry, ...]
    printed_share: float
    reason: str


# ----------------------------------------------------------------------------- snapshots


def git_dir(mirror: Path, repository: str) -> Path:
    """The git directory of ``owner/name`` under a ``fetch`` mirror folder (``repo``, or ``repo/.git``)."""
    base = Path(mirror) / repository.replace("/", "+") / "repo"
    return base / ".git" if (base / ".git").is_dir() else base


def git_head(gdir: Path) -> str:
    """The commit a snapshot's HEAD points at."""
    return subprocess.run(["git", "--git-dir", str(gdir), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


def git_blob(gdir: Path, commit: str, path: str) -> bytes:
    """The bytes of ``path`` at ``commit`` in a bare git directory."""
    return subprocess.run(["git", "--git-dir", str(gdir), "cat-file", "blob", f"{commit}:{path}"],
                          check=True, capture_output=True).stdout


def materialise(row: dict, out: Path, mirror: Path) -> str | None:
    """Write manifest ``row``'s PDF as ``out/<doc_id>.pdf`` from its snapshot, its sha1 checked; None when
    it is there, else why not (``missing``: no snapshot or no such blob, ``sha1_mismatch``).  A file already
    there with the right sha1 is kept, so a rebuild costs no git reads."""
    import hashlib
    import os

    from structrag.files import file_sha1

    pdf = out / f"{row['doc_id']}.pdf"
    if pdf.is_file() and file_sha1(pdf) == row["sha1"]:
        return None
    try:
        data = git_blob(git_dir(mirror, row["repository"]), row["commit"], row["path"])
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "missing"
    if hashlib.sha1(data).hexdigest() != row["sha1"]:
        return "sha1_mismatch"
    tmp = pdf.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, pdf)
    return None


# ----------------------------------------------------------------------------- labels

_FILE_NAME = re.compile(r"\.(pdf|docx?|indd|xlsx?|pptx?|html?)\s*$", re.I)
# Workiva roots: "abc-20221231x10k", "xxx-2022.12.31-10K"
_WORKIVA_ROOT = re.compile(r"^[\w.]+-\d{4}[.\d]*\w*$")


def _wrapper(e: OutlineEntry) -> bool:
    t = e.title.strip()
    return bool(_FILE_NAME.search(t) or _WORKIVA_ROOT.match(t) or t.lower().startswith("blank"))


def _drop(entries: Sequence[OutlineEntry], drop: Sequence[bool]) -> list[OutlineEntry]:
    """``entries`` less the dropped ones; a dropped entry's subtree moves up one level."""
    out: list[OutlineEntry] = []
    open_levels: list[int] = []  # levels of the dropped entries whose subtrees are still open
    for e, d in zip(entries, drop):
        while open_levels and e.level <= open_levels[-1]:
            open_levels.pop()
        if d:
            open_levels.append(e.level)
            continue
        out.append(OutlineEntry(level=e.level - len(open_levels), title=e.title, page=e.page))
    return out


def _normalise_levels(entries: Sequence[OutlineEntry]) -> list[OutlineEntry]:
    """First entry at level 1 and no step down of more than one level (a skipped level is closed up)."""
    out: list[OutlineEntry] = []
    stack: list[tuple[int, int]] = []  # (raw level, new level) of the open ancestors
    for e in entries:
        while stack and stack[-1][0] >= e.level:
            stack.pop()
        level = stack[-1][1] + 1 if stack else 1
        stack.append((e.level, level))
        out.append(OutlineEntry(level=level, title=e.title, page=e.page))
    return out


def _printed_on(pages: Sequence[str], e: OutlineEntry) -> bool:
    t = normalize_title(e.title)
    return bool(t) and any(0 <= q < len(pages) and t in pages[q] for q in (e.page, e.page - 1, e.page + 1))


def clean_outline_entries(document: Document) -> list[OutlineEntry]:
    """The document's outline less its wrapper nodes, their children promoted, levels normalised.

    Wrappers: entries with a blank title or no valid page, titles that are file names (``*.pdf``, Workiva
    roots), "Blank…" placeholders, and a sole top-level root whose title is not printed on its page.
    """
    n = document.page_count
    entries = list(document.outline)
    entries = _drop(entries, [not e.title.strip() or not 0 <= e.page < n or _wrapper(e) for e in entries])
    if entries:
        top = [e for e in entries if e.level == min(x.level for x in entries)]
        if len(top) == 1 and len(entries) > 1 and entries[0] is top[0]:
            offs = document.page_offsets
            pages = [normalize_title(document.text[offs[p]: offs[p + 1]]) for p in range(n)]
            if not _printed_on(pages, top[0]):
                entries = _drop(entries, [e is top[0] for e in entries])
    return _normalise_levels(entries)


def outline_label(document: Document, *, min_entries: int = MIN_ENTRIES,
                  min_printed: float = MIN_PRINTED) -> Label:
    """The cleaned outline as labels, when it has ``min_entries`` entries, ``min_printed`` of them printed."""
    entries = clean_outline_entries(document)
    if not entries:
        return Label("", (), 0.0, "no outline")
    if len(entries) < min_entries:
        return Label("", (), 0.0, "outline too short")
    share = printed_share(document, entries)
    if share < min_printed:
        return Label("", tuple(entries), share, "editorial outline")
    return Label("outline", tuple(entries), share, "")


_CONTENTS_TITLES = {"contents", "table of contents", "content", "index", "indice", "sommario", "inhalt",
                    "inhaltsverzeichnis", "sommaire", "table des matières", "table des matieres", "índice", "目录",
                    "目 录", "目次", "inhoud", "inhoudsopgave"}


def contents_label(document: Document, *, min_entries: int = MIN_ENTRIES) -> Label:
    """The printed contents' main run, located on its pages, as labels (levels from the contents layout).

    Only the main run's headings (``level_source="contents"``) carry a document level; the secondary
    runs (a statements index, an attachment's contents) carry a level within their run, so they are left
    out.
    """
    found = read_contents(document)
    if not found.entries:
        return Label("", (), 0.0, "no contents")
    if not found.usable:
        return Label("", (), 0.0, "contents not located")
    hs = [h for h in found.headings if h.level_source == "contents" and h.level is not None]
    raw = [OutlineEntry(level=int(h.level), title=" ".join(h.text.split()), page=h.page) for h in hs]
    # the contents page's own title read as an entry would parent every real one
    entries = _normalise_levels(_drop(raw, [normalize_title(e.title) in _CONTENTS_TITLES for e in raw]))
    if len(entries) < min_entries:
        return Label("", (), 0.0, "contents too short")
    return Label("contents", tuple(entries), printed_share(document, entries), "")


def label_document(document: Document, *, min_entries: int = MIN_ENTRIES,
                   min_printed: float = MIN_PRINTED) -> Label:
    """Outline labels where the outline qualifies, else contents labels; else why neither."""
    out = outline_label(document, min_entries=min_entries, min_printed=min_printed)
    if out.kind:
        return out
    con = contents_label(document, min_entries=min_entries)
    if con.kind:
        return con
    return Label("", (), out.printed_share, f"{out.reason}; {con.reason}")


def toc_rows(entries: Sequence[OutlineEntry]) -> list[list]:
    """Entries as ``[level, title, page]`` with 1-based pages (``doc.get_toc()``'s shape)."""
    return [[e.level, e.title, e.page + 1] for e in entries]


# ----------------------------------------------------------------------------- language

_STOPWORDS = {
    "en": {"the", "and", "of", "to", "in", "is", "for", "that", "with", "are"},
    "de": {"der", "die", "und", "das", "ist", "mit", "den", "von", "für", "auf"},
    "fr": {"le", "la", "les", "et", "des", "est", "une", "dans", "pour", "du"},
    "it": {"il", "di", "che", "la", "per", "del", "della", "sono", "una", "gli"},
    "es": {"el", "la", "de", "que", "y", "los", "las", "del", "para", "una"},
    "pt": {"o", "de", "que", "os", "para", "uma", "com", "não", "dos", "das"},
    "nl": {"de", "het", "een", "van", "en", "is", "voor", "op", "zijn", "met"},
}
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")
_WORD = re.compile(r"[^\W\d_]+")


def guess_language(text: str) -> str:
    """A two-letter language code from the text's script and commonest short words (``und`` if unsure)."""
    sample = text[:200_000]
    letters = sum(ch.isalpha() for ch in sample) or 1
    if len(_HANGUL.findall(sample)) > 0.2 * letters:
        return "ko"
    cjk = len(_CJK.findall(sample))
    if cjk > 0.2 * letters:
        return "ja" if len(_KANA.findall(sample)) > 0.1 * cjk else "zh"
    words = [w.lower() for w in _WORD.findall(sample)]
    if not words:
        return "und"
    scores = {lang: sum(w in sw for w in words) for lang, sw in _STOPWORDS.items()}
    best = max(scores, key=scores.get)
    return best if scores[best] > 0.05 * len(words) else "und"
