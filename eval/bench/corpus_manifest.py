"""Make ``eval/data/corpus/manifest.jsonl`` from the survey rows and the families (corpus step 2).

    python -m eval.bench.corpus_manifest [--work /work/corpus] [--check]

Reads the labelled rows of ``WORK/survey/*.jsonl`` (:mod:`eval.bench.corpus_survey`) and
``eval/data/corpus/sources.json``, which says per repository its licence, its group and how a
document's family (its publisher) is found:

* ``"family": "name"``: one publisher for the whole repository;
* ``"family": "dir:N"``: the path's N-th folder names the publisher (``Cryptorating/whitepapers``:
  ``<project>/<file>.pdf``);
* ``"family": "stem"``: the file name's first word does;
* ``"family": "each:<prefix>"``: every document is its own family (``<prefix>-<file name>``: papers, each
  in its own venue's template);
* ``"family": "documents"``: every document is listed in ``documents``.

``documents`` maps ``owner/name:path`` to a family, to ``{"family", "group"}``, or to
``{"drop": reason}`` (not a report of the repository's publisher, a translation of another
document, ...).  A file met twice (same sha1) is kept once, in the first repository of
``sources.json``; so is a document whose family, page count and first page are those of another
(another copy of the same release).  Each family's name goes through the held-out guard.  ``--check``
only says what would change.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

from eval.bench.common import REPO
from eval.bench.corpus_build import MANIFEST, toc_sha1
from eval.bench.corpus_survey import guard_held

SOURCES = REPO / "eval" / "data" / "corpus" / "sources.json"
_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    return _SLUG.sub("-", text.lower()).strip("-")


def family_of(row: dict, source: dict, documents: dict) -> dict | None:
    """``{"family", "group"}`` of a surveyed row, or None when it is dropped."""
    key = f"{row['repository']}:{row['path']}"
    entry = documents.get(key)
    if isinstance(entry, dict) and "drop" in entry:
        return None
    if isinstance(entry, str):
        entry = {"family": entry}
    out = {"group": source["group"]}
    if entry:
        out.update(entry)
        return out
    rule = source["family"]
    parts = row["path"].split("/")
    if rule == "documents":
        raise SystemExit(f"{key}: no family in sources.json's documents")
    if rule.startswith("dir:"):
        out["family"] = slug(parts[int(rule[4:])])
    elif rule.startswith("each:"):
        out["family"] = f"{rule[5:]}-{slug(Path(parts[-1]).stem)[:40].strip('-')}"
    elif rule == "stem":
        out["family"] = slug(re.split(r"[-_ .]", Path(parts[-1]).stem)[0])
    else:
        out["family"] = rule
    return out


def make_manifest(work: Path, sources: dict) -> tuple[list[dict], Counter]:
    """Manifest rows (doc_id order) and the count of rows left out, by reason."""
    order = list(sources["repositories"])
    rows: list[dict] = []
    for repo in order:
        f = work / "survey" / f"{repo.replace('/', '+')}.jsonl"
        if f.is_file():
            rows += sorted((json.loads(line) for line in f.read_text(encoding="utf-8").splitlines()),
                           key=lambda r: r.get("path", ""))
    left: Counter = Counter()
    out: list[dict] = []
    seen_sha1: set[str] = set()
    seen_release: set[tuple] = set()
    for r in rows:
        if r["status"] != "labelled":
            continue
        fam = family_of(r, sources["repositories"][r["repository"]], sources.get("documents", {}))
        if fam is None:
            left["dropped by sources.json"] += 1
            continue
        release = (fam["family"], r["pages"], r.get("first_page", "")[:200])
        if r["sha1"] in seen_sha1 or (release[2] and release in seen_release):
            left["another copy"] += 1
            continue
        seen_sha1.add(r["sha1"])
        seen_release.add(release)
        toc = json.loads((work / "survey" / "toc" / f"{r['sha1']}.json").read_text(encoding="utf-8"))["toc"]
        stem = slug(Path(r["path"]).stem)[:40].strip("-") or "doc"
        out.append({"doc_id": f"{fam['family']}--{stem}--{r['sha1'][:6]}", "repository": r["repository"],
                    "commit": r["commit"], "path": r["path"], "sha1": r["sha1"],
                    "licence": sources["repositories"][r["repository"]]["licence"], "family": fam["family"],
                    "group": fam["group"], "language": r["language"], "pages": r["pages"], "label": r["label"],
                    "entries": r["entries"], "depth": r["depth"], "printed_share": r["printed_share"],
                    "toc_sha1": toc_sha1(toc)})
    families = sorted({r["family"] for r in out})
    held = dict(zip(families, guard_held(["--issuer", *[f.replace("-", " ") for f in families]])))
    kept = [r for r in out if not held[r["family"]]]
    left["publisher held out"] += len(out) - len(kept)
    return sorted(kept, key=lambda r: r["doc_id"]), left


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.corpus_manifest", description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", default="/work/corpus", help="the survey's folder")
    ap.add_argument("--sources", default=str(SOURCES))
    ap.add_argument("--out", default=str(MANIFEST))
    ap.add_argument("--check", action="store_true", help="write nothing")
    args = ap.parse_args(argv)
    sources = json.loads(Path(args.sources).read_text(encoding="utf-8"))
    rows, left = make_manifest(Path(args.work), sources)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    by = Counter((r["group"], r["label"]) for r in rows)
    print(f"{len(rows)} documents, {len({r['family'] for r in rows})} families, {sum(r['pages'] for r in rows)} pages; "
          f"left out: {dict(left)}; by group and label: {dict(sorted(by.items()))}", file=sys.stderr)
    if not args.check:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
