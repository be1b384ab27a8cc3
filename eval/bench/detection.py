"""Benchmark of the foundation stage: extraction + heading detection.

For every outline-bearing PDF of a folder (default ``../shared/data/headings``),
with the outline ignored:

* **heading recall**: share of outline entries found among the detected
  headings (monotone text alignment, same page +-1, :func:`eval.trees.heading_prf`);
  precision is reported too, as a lower bound (outlines are partial trees);
* **speed** on one core: pages/s of raw ``page.get_text("dict")`` and of
  structrag's extraction + detection, measured in the same run with CPU time
  (``time.process_time``), so other processes on the machine do not count.

Usage::

    python -m eval.bench.detection [--data DIR] [--out structrag-out/detection/extraction.md] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import warnings
from pathlib import Path

from structrag.pipeline import detect_headings
from structrag.extraction import extract

from eval.bench.common import commit, data_dir
from eval.trees import heading_prf, load_outline


def raw_dict_seconds(path: Path) -> tuple[int, float]:
    """CPU seconds of ``get_text("dict")`` over every page (the floor every stage adds to)."""
    import pymupdf

    doc = pymupdf.open(path)
    t0 = time.process_time()
    for page in doc:
        page.get_text("dict")
    dt = time.process_time() - t0
    n = doc.page_count
    doc.close()
    return n, dt


def run(data: Path) -> dict:
    manifest = [json.loads(line) for line in (data / "manifest.jsonl").read_text().splitlines() if line.strip()]
    rows = []
    for m in manifest:
        pdf = data / f"{m['doc_id']}.pdf"
        ref = load_outline(data / f"{m['doc_id']}.toc.json")
        n, raw_s = raw_dict_seconds(pdf)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.process_time()
            doc = extract(pdf)
            t1 = time.process_time()
            heads = detect_headings(doc, outline="ignore")
            t2 = time.process_time()
        prf = heading_prf([(h.text, 1, h.page) for h in heads], ref, page_window=1)
        rows.append({
            "doc_id": m["doc_id"], "group": m["group"], "pages": n, "outline_entries": len(ref),
            "detected": len(heads), "recall": prf.recall, "precision_lb": prf.precision,
            "raw_pages_s": n / raw_s, "extract_pages_s": n / (t1 - t0), "extract_detect_pages_s": n / (t2 - t0),
        })
        print(f"{m['doc_id']:45s} recall {prf.recall:.3f}  {n / (t2 - t0):6.1f} p/s (raw {n / raw_s:6.1f})",
              file=sys.stderr)
    out: dict = {"rows": rows}
    for g in ("business", "manual"):
        rs = [r for r in rows if r["group"] == g]
        if rs:
            out[g] = {
                "macro_recall": sum(r["recall"] for r in rs) / len(rs),
                "macro_precision_lb": sum(r["precision_lb"] for r in rs) / len(rs),
            }
    pages = sum(r["pages"] for r in rows)
    out["all"] = {
        "pages": pages,
        "raw_pages_s": pages / sum(r["pages"] / r["raw_pages_s"] for r in rows),
        "extract_detect_pages_s": pages / sum(r["pages"] / r["extract_detect_pages_s"] for r in rows),
    }
    return out


def to_markdown(res: dict, command: str) -> str:
    lines = [
        "# Extraction and heading detection",
        "",
        f"Command: `{command}` — commit `{commit()}`, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, one process (CPU time).",
        "",
        "Outline ignored. Recall = share of outline entries matched by a detected heading (monotone text",
        "alignment, threshold 0.8, page ±1). Precision is a lower bound: outlines list only part of the",
        "printed headings.",
        "",
        "| document | group | pages | outline | detected | recall | precision (lb) | raw dict p/s | extract+detect p/s |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in res["rows"]:
        lines.append(
            f"| {r['doc_id']} | {r['group']} | {r['pages']} | {r['outline_entries']} | {r['detected']} | "
            f"{r['recall']:.3f} | {r['precision_lb']:.3f} | {r['raw_pages_s']:.0f} | {r['extract_detect_pages_s']:.0f} |"
        )
    lines.append("")
    for g in ("business", "manual"):
        if g in res:
            lines.append(f"- **{g}**: macro recall **{res[g]['macro_recall']:.3f}**, "
                         f"macro precision (lower bound) {res[g]['macro_precision_lb']:.3f}")
    a = res["all"]
    lines.append(f"- **speed**, all {a['pages']} pages: raw `get_text(\"dict\")` {a['raw_pages_s']:.0f} pages/s, "
                 f"structrag extraction + detection **{a['extract_detect_pages_s']:.0f} pages/s** (one core)")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.detection", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=data_dir("headings"), help="the headings folder of the shared data")
    ap.add_argument("--out", type=Path, default=None, help="write the Markdown report here")
    ap.add_argument("--json", type=Path, default=None, help="write the raw figures here")
    args = ap.parse_args(argv)
    if not (args.data / "manifest.jsonl").exists():
        print(f"no manifest.jsonl in {args.data}", file=sys.stderr)
        return 2
    res = run(args.data)
    md = to_markdown(res, "python -m eval.bench.detection" + (f" --out {args.out}" if args.out else ""))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(md)
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))
    sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
