"""Benchmark builder: a level-only reference set from any folder of outline-bearing PDFs.

For each PDF the outline is taken from a sidecar ``<stem>.toc.json`` when there
is one (the shared data's cleaned outlines: ``{"toc": [[level, title, page1],
...]}``), else from the PDF's own bookmarks.  Each entry is located on its
page with :func:`structrag.headings.outline.locate_outline` (via
:func:`structrag.levels.training.reference_headings`, so the references are
exactly the ones the learned level model trains on): a located entry becomes
a heading with the printed block's bbox and style; one that cannot be found
keeps its title, level and page but no bbox (the level-only protocol still
has to place it) and is listed in the report.

>>> refs = build_reference_set("shared/data/headings")            # doctest: +SKIP
>>> write_reference_set(refs, "out/refs")                          # doctest: +SKIP

On disk (:func:`write_reference_set`): ``<doc_id>.ref.json`` per document (the
``structrag toc --json`` shape, 1-based pages, plus ``located`` / ``block``
per heading, readable by :func:`eval.trees.load_outline`), ``manifest.jsonl``,
and ``report.md`` / ``report.json`` with the entries that could not be located.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Sequence

from structrag.errors import ConfigError, ReferenceFormatError, StructragError
from structrag.files import cache_folder, read_json, read_json_lines
from structrag.model import SCHEMA_VERSION, Document, Heading, OutlineEntry

from .trees import Outline

__all__ = [
    "ReferenceDocument",
    "ReferenceSet",
    "find_pdfs",
    "read_toc_file",
    "build_reference",
    "build_reference_set",
    "write_reference_set",
    "default_cache_dir",
]


def default_cache_dir() -> Path | None:
    """``$STRUCTRAG_CACHE`` or the repository's git-ignored ``.cache/`` (None: no cache)."""
    env = os.environ.get("STRUCTRAG_CACHE")
    if env is not None:
        return cache_folder() if env else None  # a file there is an error naming the variable
    repo = Path(__file__).resolve().parents[1]
    return repo / ".cache" if (repo / ".git").exists() else None


@dataclass(frozen=True, slots=True)
class ReferenceDocument:
    """One document with its reference headings (outline order, outline levels)."""

    doc_id: str
    pdf: str
    sha1: str
    group: str
    outline_source: str  # "sidecar" (<stem>.toc.json) or "pdf" (bookmarks)
    document: Document
    entries: tuple[OutlineEntry, ...]
    headings: tuple[Heading, ...]  # one per entry; bbox None where not located

    @property
    def located(self) -> int:
        return sum(1 for h in self.headings if h.bbox is not None)

    @property
    def unlocated(self) -> list[tuple[int, OutlineEntry]]:
        return [(i, e) for i, (e, h) in enumerate(zip(self.entries, self.headings)) if h.bbox is None]

    @property
    def depth(self) -> int:
        return max((e.level for e in self.entries), default=0)

    def outline(self) -> Outline:
        """The reference tree as the metrics see it."""
        return Outline.from_items([(h.text, h.level, h.page) for h in self.headings], name=self.doc_id)

    def unlabelled(self) -> tuple[Heading, ...]:
        """The reference headings with their levels removed: the level-only protocol's input."""
        return tuple(replace(h, level=None, level_source=None, confidence=None, source="reference")
                     for h in self.headings)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "document": Path(self.pdf).name,
            "doc_id": self.doc_id,
            "sha1": self.sha1,
            "group": self.group,
            "pages": self.document.page_count,
            "outline_source": self.outline_source,
            "headings": [
                {
                    "text": h.text,
                    "level": h.level,
                    "page": h.page + 1,
                    "bbox": list(h.bbox) if h.bbox is not None else None,
                    "located": h.bbox is not None,
                    "block": h.block,
                    "source": "reference",
                    "score": 1.0,
                }
                for h in self.headings
            ],
        }


@dataclass(frozen=True, slots=True)
class ReferenceSet:
    documents: tuple[ReferenceDocument, ...]
    skipped: tuple[tuple[str, str], ...]  # (pdf, why)
    folder: str

    def __iter__(self):
        return iter(self.documents)

    def __len__(self) -> int:
        return len(self.documents)

    def report(self) -> dict[str, Any]:
        docs = []
        for d in self.documents:
            docs.append({
                "doc_id": d.doc_id,
                "group": d.group,
                "pages": d.document.page_count,
                "entries": len(d.entries),
                "located": d.located,
                "located_share": round(d.located / len(d.entries), 4) if d.entries else 1.0,
                "depth": d.depth,
                "outline_source": d.outline_source,
                "unlocated": [{"index": i, "level": e.level, "title": e.title, "page": e.page + 1 if e.page >= 0 else None}
                              for i, e in d.unlocated],
            })
        n = sum(len(d.entries) for d in self.documents)
        loc = sum(d.located for d in self.documents)
        return {
            "folder": self.folder,
            "documents": docs,
            "skipped": [{"pdf": p, "why": w} for p, w in self.skipped],
            "entries": n,
            "located": loc,
            "located_share": round(loc / n, 4) if n else 1.0,
        }

    def report_markdown(self, *, max_listed: int = 20) -> str:
        r = self.report()
        lines = [
            f"# Reference set: {r['folder']}",
            "",
            f"{len(self.documents)} documents, {r['entries']} outline entries, {r['located']} located "
            f"({100 * r['located_share']:.1f}%).",
            "",
            "| doc_id | group | pages | entries | located | share | depth | outline |",
            "|---|---|---:|---:|---:|---:|---:|---|",
        ]
        for d in r["documents"]:
            lines.append(f"| {d['doc_id']} | {d['group']} | {d['pages']} | {d['entries']} | {d['located']} | "
                         f"{d['located_share']:.3f} | {d['depth']} | {d['outline_source']} |")
        if r["skipped"]:
            lines += ["", "## Skipped", ""] + [f"- {s['pdf']}: {s['why']}" for s in r["skipped"]]
        lines += ["", "## Entries that could not be located", ""]
        any_listed = False
        for d in r["documents"]:
            if not d["unlocated"]:
                continue
            any_listed = True
            lines.append(f"### {d['doc_id']} ({len(d['unlocated'])})")
            lines.append("")
            for u in d["unlocated"][:max_listed]:
                lines.append(f"- L{u['level']} p.{u['page']}: {u['title']}")
            if len(d["unlocated"]) > max_listed:
                lines.append(f"- ... {len(d['unlocated']) - max_listed} more in report.json")
            lines.append("")
        if not any_listed:
            lines.append("(none)")
        return "\n".join(lines) + "\n"


def find_pdfs(folder: str | os.PathLike) -> list[Path]:
    """PDFs directly in ``folder`` (or ``folder`` itself if it is a PDF), sorted by name."""
    p = Path(folder)
    if p.is_file():
        return [p]
    if not p.is_dir():
        raise ConfigError("not a folder or a PDF", path=p)
    return sorted(x for x in p.iterdir() if x.suffix.lower() == ".pdf" and x.is_file())


def read_toc_file(path: str | os.PathLike) -> list[OutlineEntry]:
    """A ``*.toc.json`` outline as entries (pages made 0-based; -1 where none)."""
    p = Path(path)
    hint = 'expected {"toc": [[level, title, page], ...]}'
    d = read_json(p, what="outline file", hint=hint)
    try:
        toc = d["toc"] if isinstance(d, dict) else d
        out = []
        for k, e in enumerate(toc):
            lv, title = int(e[0]), str(e[1])
            page = int(e[2]) - 1 if len(e) > 2 and e[2] is not None else -1
            if lv < 1:
                raise ValueError(f"entry {k}: level {lv} < 1")
            out.append(OutlineEntry(level=lv, title=title, page=page if page >= 0 else -1))
        return out
    except (ValueError, KeyError, TypeError, IndexError, OverflowError) as exc:
        raise ReferenceFormatError(f"not an outline file ({exc})", path=p, hint=hint) from None


def _manifest(folder: Path) -> dict[str, dict[str, Any]]:
    m = folder / "manifest.jsonl"
    if not m.is_file():
        return {}
    rows = {}
    for n, r in read_json_lines(m, what="manifest"):
        if not isinstance(r, dict) or not isinstance(r.get("doc_id") or r.get("file") or "", str):
            raise ReferenceFormatError(f'line {n}: want a JSON object with "doc_id" (or "file")', path=m)
        key = r.get("doc_id") or Path(r.get("file") or "").stem
        if key:
            rows[key] = r
    return rows


def _sidecar(pdf: Path) -> Path | None:
    for cand in (pdf.with_name(pdf.stem + ".toc.json"), pdf.with_suffix(".toc.json")):
        if cand.is_file():
            return cand
    return None


def build_reference(
    pdf: str | os.PathLike,
    *,
    toc: str | os.PathLike | Sequence[OutlineEntry] | None = None,
    outline: str = "auto",
    cache_dir: str | os.PathLike | None = None,
    expected_sha1: str | None = None,
    doc_id: str | None = None,
    group: str = "",
) -> ReferenceDocument:
    """The reference for one PDF.

    ``outline``: ``"auto"`` (a sidecar ``<stem>.toc.json`` if present, else the
    PDF's bookmarks), ``"sidecar"`` or ``"pdf"``; ``toc`` overrides both with a
    file or a list of 0-based :class:`OutlineEntry`.  Raises
    :class:`ReferenceFormatError` if there is no outline or the sha1 differs
    from ``expected_sha1``.
    """
    from structrag.files import file_sha1
    from structrag.levels.references import cached_extract, reference_headings

    path = Path(pdf)
    if outline not in ("auto", "sidecar", "pdf"):
        raise ConfigError(f"outline must be 'auto', 'sidecar' or 'pdf', got {outline!r}")
    sha1 = file_sha1(path)
    if expected_sha1 and expected_sha1 != sha1:
        raise ReferenceFormatError(f"sha1 {sha1} does not match the manifest's {expected_sha1}", path=path,
                                   hint="this is not the file the outline was made for")
    cache = Path(cache_dir) if cache_dir is not None else None
    document = cached_extract(path, sha1=sha1, cache_dir=cache)
    if toc is not None:
        entries = read_toc_file(toc) if isinstance(toc, (str, os.PathLike)) else list(toc)
        source = "given"
    else:
        side = _sidecar(path) if outline in ("auto", "sidecar") else None
        if outline == "sidecar" and side is None:
            raise ReferenceFormatError("no <name>.toc.json next to the PDF", path=path)
        if side is not None:
            entries, source = read_toc_file(side), "sidecar"
        else:
            entries, source = list(document.outline), "pdf"
    if not entries:
        raise ReferenceFormatError("the PDF has no outline (bookmarks) and no .toc.json sidecar", path=path)
    entries = [e for e in entries if e.title.strip()]
    headings = reference_headings(document, entries)
    return ReferenceDocument(
        doc_id=doc_id or path.stem,
        pdf=str(path),
        sha1=sha1,
        group=group,
        outline_source=source,
        document=document,
        entries=tuple(entries),
        headings=tuple(headings),
    )


def build_reference_set(
    folder: str | os.PathLike,
    *,
    doc_ids: Iterable[str] | None = None,
    outline: str = "auto",
    cache_dir: str | os.PathLike | None = "default",
    progress: bool | None = None,
) -> ReferenceSet:
    """References for every outline-bearing PDF in ``folder`` (name order).

    PDFs without an outline, or that fail to open, are skipped and reported.
    A ``manifest.jsonl`` in the folder (``doc_id``, ``group``, ``sha1``) adds
    groups and sha1 checks.  ``doc_ids`` restricts to those PDF stems.
    ``cache_dir="default"``: :func:`default_cache_dir`.
    """
    from tqdm.auto import tqdm

    root = Path(folder)
    cache = default_cache_dir() if cache_dir == "default" else cache_dir
    pdfs = find_pdfs(root)
    manifest = _manifest(root if root.is_dir() else root.parent)
    if doc_ids is not None:
        wanted = list(doc_ids)
        have = {p.stem for p in pdfs}
        missing = [d for d in wanted if d not in have]
        if missing:
            raise ConfigError("no PDF for doc_id(s): " + ", ".join(missing), path=root)
        pdfs = [p for p in pdfs if p.stem in set(wanted)]
    enabled = sys.stderr.isatty() if progress is None else progress
    docs, skipped = [], []
    for pdf in tqdm(pdfs, desc="references", disable=not enabled, leave=False, file=sys.stderr):
        row = manifest.get(pdf.stem, {})
        try:
            docs.append(build_reference(pdf, outline=outline, cache_dir=cache, expected_sha1=row.get("sha1"),
                                        doc_id=pdf.stem, group=str(row.get("group", ""))))
        except StructragError as exc:
            if isinstance(exc, ReferenceFormatError) and "sha1" in exc.message:
                raise
            skipped.append((pdf.name, exc.message))
    return ReferenceSet(tuple(docs), tuple(skipped), str(root))


def write_reference_set(refs: ReferenceSet, out_dir: str | os.PathLike) -> Path:
    """Write the per-document JSON, ``manifest.jsonl`` and the report; returns ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    manifest = []
    for d in refs.documents:
        (out / f"{d.doc_id}.ref.json").write_text(json.dumps(d.to_json(), ensure_ascii=False, indent=1),
                                                  encoding="utf-8")
        manifest.append(json.dumps({"doc_id": d.doc_id, "file": Path(d.pdf).name, "group": d.group,
                                    "sha1": d.sha1, "pages": d.document.page_count, "entries": len(d.entries),
                                    "located": d.located, "depth": d.depth}, ensure_ascii=False))
    (out / "manifest.jsonl").write_text("\n".join(manifest) + ("\n" if manifest else ""), encoding="utf-8")
    (out / "report.json").write_text(json.dumps(refs.report(), ensure_ascii=False, indent=1), encoding="utf-8")
    (out / "report.md").write_text(refs.report_markdown(), encoding="utf-8")
    return out
