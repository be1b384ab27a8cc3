"""Rebuild the collection-scale distractor reports from repository snapshots (no download of its own).

    nice python -m eval.bench.scale_build [--out .cache/scale] [--mirror /work/.mirror]

Issue 48 asks the shared filing questions over one index of hundreds of reports.  These PDFs are the
distractors: other companies' (and other years' of the same issuers') 10-Ks, annual, sustainability and
governance reports.  For every row of ``eval/data/scale/manifest.jsonl`` the PDF is read from the
snapshot the ``fetch`` tool brought (``git cat-file blob <commit>:<path>``), exactly as
:mod:`eval.bench.corpus_build` does, and its sha1 checked.  Writes ``<doc_id>.pdf``, ``docs.jsonl``
(``doc_id``, ``file``, ``sha1``, ``pages``, ``issuer``, ``year``, ``form``) and ``build.json`` (what was
built and what was missing or changed).  No labels: nothing is asked of these documents.  Exits 1 when a
PDF is missing or its sha1 differs.

The PDFs keep their publishers' copyrights: keep the output outside the repository (``.cache/`` is
ignored by git) and use it for evaluation only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from eval.bench.common import CACHE, REPO
from eval.bench.corpus_build import read_manifest, report_problems
from eval.bench.corpus_labels import materialise

MANIFEST = REPO / "eval" / "data" / "scale" / "manifest.jsonl"


def _page_count(pdf: Path) -> int:
    import pymupdf

    with pymupdf.open(pdf) as doc:
        return doc.page_count


def build(rows: list[dict], out: Path, mirror: Path) -> dict:
    """Write the distractor PDFs and ``docs.jsonl`` for ``rows``; the report that ``build.json`` holds."""
    out.mkdir(parents=True, exist_ok=True)
    report: dict = {"missing": [], "sha1_mismatch": [], "pages_changed": []}
    lines = []
    for r in rows:
        failed = materialise(r, out, mirror)
        if failed:
            report[failed].append(r["doc_id"])
            continue
        pdf = out / f"{r['doc_id']}.pdf"
        pages = _page_count(pdf)
        if pages != r["pages"]:
            report["pages_changed"].append(r["doc_id"])
        lines.append({"doc_id": r["doc_id"], "file": pdf.name, "sha1": r["sha1"], "pages": pages,
                      "issuer": r.get("issuer"), "year": r.get("year"), "form": r.get("form")})
    (out / "docs.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines),
                                    encoding="utf-8")
    report.update(documents=len(lines), pages=sum(x["pages"] for x in lines),
                  forms=dict(sorted(Counter(x["form"] for x in lines).items())))
    (out / "build.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.scale_build", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(CACHE / "scale"), help="where the PDFs go (default .cache/scale)")
    ap.add_argument("--mirror", default="/work/.mirror", help="the fetch tool's mirror folder")
    ap.add_argument("--manifest", default=str(MANIFEST))
    args = ap.parse_args(argv)
    report = build(read_manifest(Path(args.manifest)), Path(args.out), Path(args.mirror))
    print(f"{report['documents']} documents, {report['pages']} pages -> {args.out}; forms {report['forms']}",
          file=sys.stderr)
    return report_problems(report, ("pages_changed",))


if __name__ == "__main__":
    raise SystemExit(main())
