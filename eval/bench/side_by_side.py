"""Start-up and speed of two checkouts, measured side by side in one run (alternating, same machine load).

    python -m eval.bench.side_by_side BEFORE_DIR AFTER_DIR [--pdf 3M_2018_10K.pdf] [--runs 5] [--json FILE]

For each checkout (a git worktree of the commit to time, e.g. ``git worktree add /tmp/before REV``), in
fresh processes with that checkout first on ``PYTHONPATH``: ``structrag --help``; ``structrag toc`` on the
first 40 pages of a filing; ``structrag index --no-dense`` of the whole filing into a new folder (pages/s).
Runs alternate between the checkouts so that a change of load hits both; medians are reported.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from eval.bench.common import data_dir

_MAIN = "import sys; from structrag.cli import main; sys.exit(main())"


def _timed(checkout: Path, args: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(checkout), "OMP_NUM_THREADS": "1"}
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", _MAIN, *args], capture_output=True, text=True, env=env, cwd=checkout)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{checkout}: structrag {' '.join(args)} failed:\n{r.stderr[-2000:]}")
    return dt


def _first_pages(pdf: Path, pages: int, out: Path) -> Path:
    import pymupdf

    with pymupdf.open(pdf) as doc:
        doc.select(list(range(min(pages, doc.page_count))))
        doc.save(out)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.side_by_side", description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--data", default=None)
    ap.add_argument("--pdf", default="3M_2018_10K.pdf", help="a filing in retrieval/pdfs (default 3M_2018_10K.pdf)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    pdf = data_dir("retrieval", "pdfs", args.pdf, explicit=args.data)
    import pymupdf

    with pymupdf.open(pdf) as doc:
        n_pages = doc.page_count
    sides = {"before": Path(args.before).resolve(), "after": Path(args.after).resolve()}
    times: dict[str, dict[str, list[float]]] = {k: {"help": [], "toc40": [], "index": []} for k in sides}
    with tempfile.TemporaryDirectory() as tmp:
        short = _first_pages(pdf, 40, Path(tmp) / "filing-40.pdf")
        for k in sides.values():  # warm-up: byte-code caches, the page cache
            _timed(k, ["--help"])
            _timed(k, ["toc", str(short)])
        for run in range(args.runs):
            for side, checkout in sides.items():
                times[side]["help"].append(_timed(checkout, ["--help"]))
                times[side]["toc40"].append(_timed(checkout, ["toc", str(short)]))
                out = Path(tmp) / f"ix-{side}-{run}"
                times[side]["index"].append(_timed(checkout, ["index", str(pdf), "--out", str(out), "--no-dense",
                                                              "--quiet", "--no-progress"]))
    med = {s: {m: statistics.median(v) for m, v in d.items()} for s, d in times.items()}
    rows = ["| checkout | `--help` (s) | `toc`, 40 pages (s) | `index --no-dense`, "
            f"{n_pages} pages (s) | index pages/s |", "|---|---:|---:|---:|---:|"]
    for side, m in med.items():
        rows.append(f"| {side} (`{sides[side]}`) | {m['help']:.2f} | {m['toc40']:.2f} | {m['index']:.2f} | "
                    f"{n_pages / m['index']:.1f} |")
    print("\n".join(rows))
    if args.json:
        Path(args.json).write_text(json.dumps({"pdf": args.pdf, "pages": n_pages, "runs": args.runs, "times": times,
                                               "medians": med, "checkouts": {k: str(v) for k, v in sides.items()}},
                                              indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
