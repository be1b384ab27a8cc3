"""Rebuild the many-publisher training corpus from repository snapshots (no download of its own).

    nice python -m eval.bench.corpus_build [--out .cache/corpus] [--mirror /work/.mirror] \
        [--max-per-family N] [--groups business,government] [--labels outline] [--jobs 2]

For every row of ``eval/data/corpus/manifest.jsonl`` the PDF is read from the snapshot that the
``fetch`` tool brought (``git cat-file blob <commit>:<path>`` in ``<mirror>/<owner>+<name>/repo``), its
sha1 checked against the manifest, and its labels made again with
:mod:`eval.bench.corpus_labels` (the outline, or the printed contents, as the manifest says).  Writes the
layout :func:`structrag.levels.references.load_reference_docs` reads: ``<doc_id>.pdf``,
``<doc_id>.toc.json`` (``{"doc_id", "source", "license", "family", "label", "pages", "toc":
[[level, title, page], ...]}``, 1-based) and ``manifest.jsonl`` (``doc_id``, ``group``, ``family``,
``label``, ``language``, ``pages``, ``entries``, ``depth``, ``sha1``).  ``build.json`` says what was
built, what was missing and which labels came out different from the manifest's (the labelling code
changed since the survey).  Exits 1 when a PDF is missing or its sha1 differs.

The PDFs keep their publishers' copyrights: keep the output outside the repository (``.cache/`` is
ignored by git) and use it for training and evaluation only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import warnings
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from eval.bench.common import CACHE, REPO
from eval.bench.corpus_labels import contents_label, materialise, outline_label, toc_rows

MANIFEST = REPO / "eval" / "data" / "corpus" / "manifest.jsonl"


def toc_sha1(toc: list[list]) -> str:
    """sha1 of a label list as canonical JSON: the manifest's fingerprint of the labels."""
    return hashlib.sha1(json.dumps(toc, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()


def read_manifest(path: Path = MANIFEST) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def select(rows: list[dict], *, groups: set[str] | None = None, labels: set[str] | None = None,
           max_per_family: int | None = None) -> list[dict]:
    """Rows of the wanted groups and label kinds; at most ``max_per_family`` per family (the first by doc_id)."""
    kept = [r for r in rows if (groups is None or r["group"] in groups) and (labels is None or r["label"] in labels)]
    if max_per_family is None:
        return kept
    seen: Counter[str] = Counter()
    out = []
    for r in sorted(kept, key=lambda r: r["doc_id"]):
        if seen[r["family"]] < max_per_family:
            seen[r["family"]] += 1
            out.append(r)
    return out


def _label_one(pdf: str, kind: str, cache_dir: str) -> tuple[list[list], int]:
    """The labels of one PDF (``kind``: ``outline`` or ``contents``) and its page count."""
    from structrag.levels.references import cached_extract

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = cached_extract(Path(pdf), cache_dir=Path(cache_dir))
    label = outline_label(doc) if kind == "outline" else contents_label(doc)
    return toc_rows(label.entries), doc.page_count


def build(rows: list[dict], out: Path, mirror: Path, cache_dir: Path, jobs: int) -> dict:
    """Write the corpus for ``rows``; the report that ``build.json`` holds."""
    out.mkdir(parents=True, exist_ok=True)
    report: dict = {"missing": [], "sha1_mismatch": [], "labels_changed": [], "no_labels": []}
    ready = []
    for r in rows:
        failed = materialise(r, out, mirror)
        if failed:
            report[failed].append(r["doc_id"])
        else:
            ready.append(r)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        labelled = list(pool.map(_label_one, [str(out / f"{r['doc_id']}.pdf") for r in ready],
                                 [r["label"] for r in ready], [str(cache_dir)] * len(ready)))
    lines = []
    for r, (toc, pages) in zip(ready, labelled):
        if not toc:
            report["no_labels"].append(r["doc_id"])
            continue
        if toc_sha1(toc) != r.get("toc_sha1"):
            report["labels_changed"].append(r["doc_id"])
        doc = {"doc_id": r["doc_id"], "source": f"github.com/{r['repository']} @ {r['commit'][:12]}: {r['path']}",
               "license": r["licence"], "family": r["family"], "label": r["label"], "pages": pages, "toc": toc}
        body = json.dumps({k: v for k, v in doc.items() if k != "toc"}, ensure_ascii=False)[:-1]
        toc_lines = ",\n  ".join(json.dumps(t, ensure_ascii=False) for t in toc)
        (out / f"{r['doc_id']}.toc.json").write_text(f'{body}, "toc": [\n  {toc_lines}\n]}}\n', encoding="utf-8")
        lines.append({"doc_id": r["doc_id"], "group": r["group"], "family": r["family"], "label": r["label"],
                      "language": r["language"], "pages": pages, "entries": len(toc),
                      "depth": max(t[0] for t in toc), "sha1": r["sha1"]})
    (out / "manifest.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines),
                                        encoding="utf-8")
    report.update(documents=len(lines), families=len({x["family"] for x in lines}),
                  pages=sum(x["pages"] for x in lines))
    (out / "build.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.corpus_build", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(CACHE / "corpus"), help="where the corpus goes (default .cache/corpus)")
    ap.add_argument("--mirror", default="/work/.mirror", help="the fetch tool's mirror folder")
    ap.add_argument("--manifest", default=str(MANIFEST))
    ap.add_argument("--cache", default=str(CACHE / "corpus-extract"), help="extracted documents, kept between runs")
    ap.add_argument("--groups", default=None, help="comma-separated groups to keep (default: all)")
    ap.add_argument("--labels", default=None, help="outline, contents or both (default: both)")
    ap.add_argument("--max-per-family", type=int, default=None, help="cap on documents per family")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    rows = select(read_manifest(Path(args.manifest)),
                  groups=set(args.groups.split(",")) if args.groups else None,
                  labels=set(args.labels.split(",")) if args.labels else None,
                  max_per_family=args.max_per_family)
    report = build(rows, Path(args.out), Path(args.mirror), Path(args.cache), args.jobs)
    print(f"{report['documents']} documents, {report['families']} families, {report['pages']} pages -> {args.out}",
          file=sys.stderr)
    return report_problems(report, ("no_labels", "labels_changed"))


def report_problems(report: dict, also: tuple[str, ...] = ()) -> int:
    """Say on stderr which documents a build could not write or found changed; the exit status (1 when a
    PDF is missing or its sha1 differs)."""
    for key in ("missing", "sha1_mismatch", *also):
        if report[key]:
            print(f"{key}: {len(report[key])} ({', '.join(report[key][:5])}{', ...' if len(report[key]) > 5 else ''})",
                  file=sys.stderr)
    if report["missing"]:
        print("fetch the missing repositories' snapshots first (the fetch tool), or pass --mirror", file=sys.stderr)
    return 1 if report["missing"] or report["sha1_mismatch"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
