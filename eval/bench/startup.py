"""Start-up benchmark: ``structrag --help`` and ``structrag toc`` on a 40-page filing, in fresh processes.

Each command runs ``--runs`` times (after one warm-up run that fills the OS
file cache), each in a new process, and the median / min / max wall time and
CPU time (user + sys of the child) are reported.  CPU time is the steadier
figure on a shared machine; the load average before and after is printed
with the table so a loaded run can be told from a quiet one.  Then one
``python -X importtime`` run of each command gives the import breakdown
(cumulative ms of the top-level imports, and whether lightgbm / scikit-learn
/ pandas / scipy / pymupdf4llm were imported at all).  ``--evaluator`` adds
the prediction speed of :mod:`structrag.levels.gbdt` against ``lightgbm.Booster.predict``
on the shipped level model and ranker (the few-row calls the level predictor
makes, and the 100-200-row calls of a query).

The filing is the first ``--pages`` pages of a shared 10-K (default
``$STRUCTRAG_SHARED_DATA/retrieval/pdfs/3M_2018_10K.pdf``), written to a
temporary file; its outline is not copied, so ``toc`` detects the headings
from the layout and predicts their levels with the learned model (the path
that imported lightgbm before).

    python -m eval.bench.startup                       # 10 runs each, Markdown on stdout
    python -m eval.bench.startup --runs 20 --json structrag-out/startup/startup.json --evaluator

To time another checkout with the same interpreter (a "before" figure), put
it first on the path: ``PYTHONPATH=/path/to/old/checkout python -m eval.bench.startup``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from eval.bench.common import REPO, commit, data_dir
HEAVY = ("lightgbm", "sklearn", "pandas", "scipy", "pymupdf4llm", "pymupdf.layout", "numpy", "pymupdf",
         "asyncio", "torch")
DEFAULT_FILING = "retrieval/pdfs/3M_2018_10K.pdf"


def make_filing(src: Path, pages: int, out: Path) -> int:
    """The first ``pages`` pages of ``src`` written to ``out`` (no outline); returns the page count."""
    import pymupdf

    with pymupdf.open(src) as doc, pymupdf.open() as part:
        n = min(pages, doc.page_count)
        part.insert_pdf(doc, from_page=0, to_page=n - 1, links=False, annots=False)
        part.set_toc([])
        part.save(out)
    return n


def structrag_command() -> list[str]:
    """The console script next to this interpreter (what a user runs), else ``python -c main()``."""
    script = Path(sys.executable).with_name("structrag")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from structrag.cli import main; sys.exit(main())"]


def _child_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def time_command(argv: list[str], runs: int, cwd: Path) -> dict:
    walls, cpus = [], []
    for i in range(runs + 1):
        c0 = _child_cpu()
        t0 = time.perf_counter()
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd)
        wall = time.perf_counter() - t0
        cpu = _child_cpu() - c0
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
        if i == 0:
            continue  # warm-up: file cache, .pyc files
        walls.append(wall)
        cpus.append(cpu)
    return {
        "runs": runs,
        "wall_median_s": statistics.median(walls),
        "wall_min_s": min(walls),
        "wall_max_s": max(walls),
        "cpu_median_s": statistics.median(cpus),
        "cpu_min_s": min(cpus),
    }


_IMPORT_RE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def import_breakdown(code: str, cwd: Path, runs: int = 3, top: int = 10) -> dict:
    """``python -X importtime`` runs: the one with the median total, cumulative ms per top-level import."""
    results = []
    for _ in range(runs):
        # cwd: not the checkout, whose structrag/ would shadow the one under test (``-c`` puts cwd first)
        proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, cwd=cwd)
        rows = []
        for line in proc.stderr.splitlines():
            m = _IMPORT_RE.match(line)
            if m:
                rows.append((int(m.group(2)) / 1000.0, len(m.group(3)), m.group(4)))
        toplevel = sorted(((ms, name) for ms, depth, name in rows if depth == 1), reverse=True)
        seen = {name: ms for ms, _, name in rows if ms >= 1.0}  # a blocked import (sys.modules[m] = None) takes ~0
        results.append({
            "total_ms": round(sum(ms for ms, _ in toplevel), 1),
            "top": [[name, round(ms, 1)] for ms, name in toplevel[:top]],
            "heavy": {h: (round(seen[h], 1) if h in seen else None) for h in HEAVY},
        })
    results.sort(key=lambda r: r["total_ms"])
    return results[len(results) // 2]


def evaluator_speed(reps: int = 200) -> list[dict]:
    """structrag.levels.gbdt.TreeEnsemble vs lightgbm.Booster.predict (one thread) on the shipped models."""
    import numpy as np
    import lightgbm as lgb

    from structrag.levels.gbdt import TreeEnsemble

    models = [("level model", REPO / "structrag" / "levels" / "models" / "levels.txt", (3, 8)),
              ("ranker (dense)", REPO / "retrievers" / "rank" / "models" / "default-dense.txt", (100, 200))]
    out = []
    rng = np.random.default_rng(0)
    for label, path, sizes in models:
        booster = lgb.Booster(model_file=str(path))
        ens = TreeEnsemble.from_file(path)
        for n in sizes:
            X = rng.normal(size=(n, ens.num_features))
            a, b = booster.predict(X, num_threads=1), ens.predict(X)
            diff = float(np.abs(a - b).max())
            res = {"model": label, "trees": ens.num_trees, "rows": n, "max_abs_diff": diff}
            for name, fn in (("lightgbm_ms", lambda: booster.predict(X, num_threads=1)),
                             ("numpy_ms", lambda: ens.predict(X))):
                fn()
                ts = []
                for _ in range(reps):
                    t0 = time.perf_counter()
                    fn()
                    ts.append(time.perf_counter() - t0)
                res[name] = 1000 * statistics.median(ts)
            out.append(res)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.startup", description=__doc__.split("\n\n")[0])
    ap.add_argument("--pdf", default=None, help=f"the filing (default: shared data {DEFAULT_FILING})")
    ap.add_argument("--pages", type=int, default=40, help="pages of it to keep (default 40)")
    ap.add_argument("--runs", type=int, default=10, help="timed runs per command (default 10, plus one warm-up)")
    ap.add_argument("--evaluator", action="store_true", help="also time structrag.levels.gbdt against lightgbm predict")
    ap.add_argument("--json", default=None, metavar="FILE", help="write the figures as JSON")
    ap.add_argument("--label", default=None, help="what is being timed, e.g. 'before: commit a27f6fc' "
                    "(default: this checkout's commit)")
    args = ap.parse_args(argv)

    if args.pdf:
        src = Path(args.pdf)
    else:
        data = data_dir()
        if not data.is_dir():
            raise SystemExit("no shared data: pass --pdf FILING.pdf or set STRUCTRAG_SHARED_DATA")
        src = data / DEFAULT_FILING
    tmp = Path(tempfile.mkdtemp(prefix="structrag-startup-"))
    try:
        filing = tmp / f"{src.stem}-first{args.pages}.pdf"
        pages = make_filing(src, args.pages, filing)
        cmd = structrag_command()
        load0 = os.getloadavg()
        rows = {
            "python -c pass": time_command([sys.executable, "-c", "pass"], args.runs, tmp),
            "structrag --help": time_command(cmd + ["--help"], args.runs, tmp),
            f"structrag toc ({pages} pages)": time_command(cmd + ["toc", str(filing)], args.runs, tmp),
        }
        load1 = os.getloadavg()
        imports = {
            "structrag --help": import_breakdown(
                "import sys; from structrag.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass",
                tmp),
            f"structrag toc ({pages} pages)": import_breakdown(
                f"from structrag.cli import main; main(['toc', {str(filing)!r}])", tmp),
        }
        evaluator = evaluator_speed() if args.evaluator else None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    import structrag

    report = {
        "command": "python -m eval.bench.startup " + " ".join(sys.argv[1:] if argv is None else argv),
        "commit": args.label or commit(mark_dirty=True),
        "structrag_from": str(Path(structrag.__file__).parent),
        "filing": f"{src.name}, first {pages} pages",
        "cpus": os.cpu_count(),
        "loadavg_before": [round(x, 2) for x in load0],
        "loadavg_after": [round(x, 2) for x in load1],
        "timings": rows,
        "imports": imports,
        "evaluator": evaluator,
    }
    print(to_markdown(report))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


def to_markdown(r: dict) -> str:
    lines = [f"`{r['command']}` at {r['commit']} ({r['structrag_from']}); {r['filing']}; "
             f"{r['cpus']} CPUs, load average {r['loadavg_before'][0]} before, {r['loadavg_after'][0]} after",
             "", "| command | wall median (s) | wall min-max (s) | CPU median (s) |", "|---|---:|---:|---:|"]
    for name, t in r["timings"].items():
        lines.append(f"| `{name}` | {t['wall_median_s']:.2f} | {t['wall_min_s']:.2f}-{t['wall_max_s']:.2f} "
                     f"| {t['cpu_median_s']:.2f} |")
    lines += ["", "| imports of | total (ms) | largest top-level imports (cumulative ms) | heavy packages imported |",
              "|---|---:|---|---|"]
    for name, imp in r["imports"].items():
        top = ", ".join(f"{n} {ms:.0f}" for n, ms in imp["top"][:6])
        heavy = ", ".join(f"{h} {ms:.0f}" for h, ms in imp["heavy"].items() if ms is not None) or "none"
        lines.append(f"| `{name}` | {imp['total_ms']:.0f} | {top} | {heavy} |")
    if r.get("evaluator"):
        lines += ["", "| model | trees | rows | lightgbm predict (ms) | structrag.levels.gbdt (ms) | max abs diff |",
                  "|---|---:|---:|---:|---:|---:|"]
        for e in r["evaluator"]:
            lines.append(f"| {e['model']} | {e['trees']} | {e['rows']} | {e['lightgbm_ms']:.3f} | "
                         f"{e['numpy_ms']:.3f} | {e['max_abs_diff']:.1e} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
