"""Survey fetched repository snapshots for long PDFs that carry weak heading labels (corpus step 1).

    nice python -m eval.bench.corpus_survey [--mirror /work/.mirror] [--work /work/corpus] \
        [--jobs 2] owner/name [owner/name ...]

For every PDF at the snapshot's HEAD (``git ls-tree``): the held-out guard
(``../shared/tools/heldout_guard.py``) on the file and on its metadata's title and author, the page
count and text layer, then :func:`eval.bench.corpus_labels.label_document` on the extracted document
(extractions cached under ``WORK/extract-cache``).  Writes ``WORK/survey/<owner>+<name>.jsonl``, one
row per PDF: ``status`` (``labelled``, ``skipped`` or ``held-out``), ``reason``, and for the others the
repository, commit, path, sha1, pages, label kind, entries, depth, printed share, language, metadata and
the first page's opening text (for assigning families).  A held-out row names nothing: no path, no sha1.
The labels themselves go to ``WORK/survey/toc/<sha1>.json``.  Nothing here is committed: the
manifest (``eval/data/corpus/manifest.jsonl``) is made from these rows by
``python -m eval.bench.corpus_manifest``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from eval.bench.common import REPO
from eval.bench.corpus_labels import MIN_PAGES, git_blob, git_dir, git_head, guess_language, label_document, toc_rows

GUARD = REPO.parent / "shared" / "tools" / "heldout_guard.py"
#: longer files are reference books whose extraction would take most of the survey's time
MAX_PAGES = 2500
#: smaller blobs are Git LFS pointers, placeholders or one-page leaflets
MIN_BYTES = 20_000


def guard_held(args: list[str]) -> list[bool]:
    """The guard's verdict per argument (``--issuer`` / ``--repo`` switch the mode, as on its command line)."""
    if not GUARD.is_file():
        raise SystemExit(f"no held-out guard at {GUARD}: the survey must not run without it")
    out = subprocess.run([sys.executable, str(GUARD), *args], capture_output=True, text=True).stdout
    return [line.startswith("held out") for line in out.splitlines() if line.strip()]


def shared_sha1s() -> set[str]:
    """sha1 of every PDF of the shared data (already a reference or an evaluation document)."""
    root = REPO.parent / "shared" / "data"
    found: set[str] = set()
    for f in root.rglob("*.jsonl"):
        for line in f.read_text(encoding="utf-8").splitlines():
            try:
                sha1 = json.loads(line).get("sha1")
            except (ValueError, AttributeError):
                continue
            if isinstance(sha1, str):
                found.add(sha1)
    return found


def _pdf_entries(gdir: Path) -> list[tuple[str, int, str]]:
    """(blob id, size, path) of every PDF at HEAD."""
    out = subprocess.run(["git", "--git-dir", str(gdir), "ls-tree", "-r", "-l", "-z", "HEAD"], check=True,
                         capture_output=True).stdout.decode("utf-8", "surrogateescape")
    rows = []
    for rec in out.split("\0"):
        if not rec:
            continue
        meta, path = rec.split("\t", 1)
        _mode, kind, blob, size = meta.split()
        if kind == "blob" and path.lower().endswith(".pdf"):
            rows.append((blob, int(size) if size.isdigit() else -1, path))  # -1: the blob is not in the snapshot
    return rows


def _quick(pdf: Path) -> dict:
    """Page count, encryption, and characters of text on a sample of pages (cheap: no layout)."""
    import pymupdf

    with pymupdf.open(pdf) as d:
        n = d.page_count
        if d.needs_pass:
            return {"pages": n, "encrypted": True}
        sample = sorted({int(i * n / 12) for i in range(12)}) if n else []
        chars = sum(len(d[i].get_text("text").strip()) for i in sample)
        meta = {k: v for k, v in (d.metadata or {}).items() if v and k in ("title", "author", "creator", "producer")}
        return {"pages": n, "encrypted": False, "chars_per_page": chars / max(len(sample), 1), "metadata": meta}


def survey_pdf(pdf: str, cache_dir: str, toc_dir: str) -> dict:
    """One PDF's row (without repository fields); its labels written to ``toc_dir/<sha1>.json``."""
    from structrag.files import file_sha1
    from structrag.levels.references import cached_extract

    p = Path(pdf)
    try:
        q = _quick(p)
    except Exception as exc:  # a damaged file is a skip, not a failed survey
        return {"status": "skipped", "reason": f"cannot be opened ({type(exc).__name__})"}
    row = {"pages": q["pages"], "metadata": q.get("metadata", {})}
    if q["encrypted"]:
        return {**row, "status": "skipped", "reason": "encrypted"}
    if q["pages"] < MIN_PAGES:
        return {**row, "status": "skipped", "reason": "short"}
    if q["pages"] > MAX_PAGES:
        return {**row, "status": "skipped", "reason": "too long"}
    if q["chars_per_page"] < 80:
        return {**row, "status": "skipped", "reason": "scan (no text layer)"}
    sha1 = file_sha1(p)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            doc = cached_extract(p, sha1=sha1, cache_dir=Path(cache_dir))
    except Exception as exc:
        return {**row, "status": "skipped", "reason": f"extraction failed ({type(exc).__name__})"}
    label = label_document(doc)
    row.update(sha1=sha1, language=guess_language(doc.text), outline_entries=len(doc.outline),
               first_page=" ".join(doc.text[doc.page_offsets[0]: doc.page_offsets[1]].split())[:300])
    if not label.kind:
        return {**row, "status": "skipped", "reason": label.reason, "printed_share": round(label.printed_share, 3)}
    Path(toc_dir, f"{sha1}.json").write_text(json.dumps({"toc": toc_rows(label.entries)}, ensure_ascii=False),
                                             encoding="utf-8")
    return {**row, "status": "labelled", "label": label.kind, "entries": len(label.entries),
            "depth": max(e.level for e in label.entries), "printed_share": round(label.printed_share, 3)}


def survey_repo(repository: str, mirror: Path, work: Path, jobs: int, known: set[str],
                limit: int | None = None) -> list[dict]:
    """Rows for every PDF of one snapshot (see the module docstring); with ``limit``, only the first
    ``limit`` PDFs in path order are opened (one publisher's archive would otherwise dominate)."""
    from structrag.files import file_sha1

    gdir = git_dir(mirror, repository)
    commit = git_head(gdir)
    blobs, toc_dir, cache_dir = work / "blobs", work / "survey" / "toc", work / "extract-cache"
    for d in (blobs, toc_dir, cache_dir):
        d.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    todo: list[tuple[dict, Path]] = []
    for blob, size, path in sorted(_pdf_entries(gdir), key=lambda r: r[2]):
        base = {"repository": repository, "commit": commit, "path": path, "bytes": size}
        if limit is not None and len(todo) >= limit:
            rows.append({**base, "status": "skipped", "reason": "over the per-repository limit"})
            continue
        if size < 0:
            rows.append({**base, "status": "skipped", "reason": "absent from the snapshot (4 MiB or more)"})
            continue
        if size < MIN_BYTES:
            rows.append({**base, "status": "skipped", "reason": "tiny or LFS pointer"})
            continue
        f = blobs / f"{blob}.pdf"
        if not f.is_file():
            f.write_bytes(git_blob(gdir, commit, path))
        todo.append((base, f))
    verdicts = guard_held([str(f) for _, f in todo]) if todo else []
    kept = []
    for (base, f), held in zip(todo, verdicts, strict=True):
        if held:
            f.unlink()
            rows.append({"status": "held-out", "reason": "file"})
        elif file_sha1(f) in known:
            rows.append({**base, "status": "skipped", "reason": "a shared-data document"})
        else:
            kept.append((base, f))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(survey_pdf, str(f), str(cache_dir), str(toc_dir)) for _, f in kept]
        results = [fut.result() for fut in futures]
    names = []
    for (base, _f), res in zip(kept, results):
        meta = res.get("metadata", {})
        names.append([meta.get("title", ""), meta.get("author", "")])
    flat = [n for pair in names for n in pair if n.strip()]
    held_names = dict(zip(flat, guard_held(["--issuer", *flat]))) if flat else {}
    for (base, _f), res in zip(kept, results):
        meta = res.get("metadata", {})
        if any(held_names.get(meta.get(k, ""), False) for k in ("title", "author")):
            toc = toc_dir / f"{res.get('sha1')}.json"
            if toc.is_file():
                toc.unlink()
            rows.append({"status": "held-out", "reason": "issuer in metadata"})
            continue
        rows.append({**base, **res})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.corpus_survey", description=__doc__.split("\n\n")[0])
    ap.add_argument("repos", nargs="+", help="owner/name of fetched snapshots")
    ap.add_argument("--mirror", default="/work/.mirror", help="the fetch tool's mirror folder")
    ap.add_argument("--work", default="/work/corpus", help="where blobs, extractions and survey rows go")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--force", action="store_true", help="survey a repository again")
    ap.add_argument("--limit", type=int, default=None, help="open at most this many PDFs per repository")
    args = ap.parse_args(argv)
    work = Path(args.work)
    (work / "survey").mkdir(parents=True, exist_ok=True)
    known = shared_sha1s()
    for repo in args.repos:
        out = work / "survey" / f"{repo.replace('/', '+')}.jsonl"
        if out.is_file() and not args.force:
            continue
        if any(guard_held(["--repo", repo])):
            print(f"{repo}: held out, not surveyed", file=sys.stderr)
            continue
        rows = survey_repo(repo, Path(args.mirror), work, args.jobs, known, args.limit)
        tmp = out.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        os.replace(tmp, out)
        n = sum(r["status"] == "labelled" for r in rows)
        print(f"{repo}: {len(rows)} PDFs, {n} labelled", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
