"""Child-process jobs of the runners (:func:`eval.runners._child.run_worker`); prints one JSON line.

Run in a child so that each measurement has its own peak RSS, is pinned to one
core, and so that pymupdf4llm's import (which switches PyMuPDF's layout hook
on) never touches the parent's extraction.

``markdown METHOD PDF OUT``: per-page Markdown of pymupdf4llm into OUT (JSON).
``speed METHOD PDF [--core N] [--max-pages N] [--predictor NAME]``: one timed run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
import warnings


def _rss_mb() -> float:
    """Peak resident set size of this process in MiB.

    VmHWM belongs to the address space, which exec replaces; ru_maxrss on Linux
    survives exec and would report the parent's peak (the forked copy).
    """
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    # ru_maxrss is in KiB on Linux (bytes on macOS)
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / (1024 * 1024) if sys.platform == "darwin" else r / 1024


def _pymupdf4llm(method: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pymupdf4llm

    pymupdf4llm.use_layout(method == "pymupdf4llm")
    return pymupdf4llm


def _markdown(args: argparse.Namespace) -> dict:
    mod = _pymupdf4llm(args.method)
    t0 = time.perf_counter()
    chunks = mod.to_markdown(args.pdf, page_chunks=True, show_progress=False)
    secs = time.perf_counter() - t0
    pages = [c.get("text", "") for c in chunks]
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"pages": pages, "seconds": secs, "method": args.method}, f, ensure_ascii=False)
    os.replace(tmp, args.out)
    return {"seconds": secs, "pages": len(pages)}


def _speed(args: argparse.Namespace) -> dict:
    if args.core is not None and args.core >= 0 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.core})
    import pymupdf

    with pymupdf.open(args.pdf) as d:
        n = d.page_count if args.max_pages is None else min(d.page_count, args.max_pages)
    m = args.method
    options = json.loads(args.parse_options) if args.parse_options else {}
    # imports (and model loading) happen before the clock starts
    if m == "get_text":
        def job():
            with pymupdf.open(args.pdf) as doc:
                for i in range(n):
                    doc[i].get_text("dict")
    elif m in ("pymupdf4llm", "pymupdf4llm-legacy"):
        mod = _pymupdf4llm(m)

        def job():
            mod.to_markdown(args.pdf, pages=list(range(n)), show_progress=False)
    elif m == "structrag-parse":
        from structrag.pipeline import parse_pdf
        from structrag.levels import make_predictor

        predictor = make_predictor(args.predictor)

        def job():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parse_pdf(args.pdf, {**options, "outline": "ignore", "predictor": predictor,
                                     "max_pages": args.max_pages}, progress=False)
    elif m == "structrag-index":
        from retrievers.index import Index
        from structrag.levels import make_predictor

        make_predictor(args.predictor)  # load the model once before timing (the worker loads its own)
        tmp = tempfile.mkdtemp(prefix="structrag-speed-")
        popts = {**options, "outline": "ignore", "predictor": args.predictor}
        if args.max_pages is not None:
            popts["max_pages"] = args.max_pages

        def job():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                idx = Index.build([args.pdf], tmp, dense=False, workers=1, progress=False, parse_options=popts)
                failed = idx.last_report.failed if idx.last_report else []
                idx.close()
            if failed:
                raise SystemExit(f"indexing failed: {failed}")
    else:
        raise SystemExit(f"unknown method {m}")
    base = _rss_mb()
    c0, t0 = time.process_time(), time.perf_counter()
    job()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"pages": n, "wall_s": wall, "cpu_s": cpu, "peak_rss_mb": _rss_mb(), "baseline_rss_mb": base,
            "core": args.core}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval._worker")
    sub = p.add_subparsers(dest="job", required=True)
    a = sub.add_parser("markdown")
    a.add_argument("method")
    a.add_argument("pdf")
    a.add_argument("out")
    a.set_defaults(fn=_markdown)
    b = sub.add_parser("speed")
    b.add_argument("method")
    b.add_argument("pdf")
    b.add_argument("--core", type=int, default=None)
    b.add_argument("--max-pages", type=int, default=None)
    b.add_argument("--predictor", default="learned")
    b.add_argument("--parse-options", default=None, help="more parse options, a JSON object")
    b.set_defaults(fn=_speed)
    args = p.parse_args(argv)
    res = args.fn(args)
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
