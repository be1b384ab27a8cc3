"""Speed runner: pages/s and peak memory of each method, one pinned child process per method and PDF."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from structrag.errors import ConfigError, StructragError

from ..provenance import provenance
from ._child import run_worker

__all__ = ["SPEED_METHODS", "SpeedReport", "run_speed"]

SPEED_METHODS = ("get_text", "pymupdf4llm", "pymupdf4llm-legacy", "structrag-parse", "structrag-index")


@dataclass
class SpeedReport:
    methods: list[str]
    runs: list[dict[str, Any]]  # one per (method, pdf): pages, wall_s, cpu_s, peak_rss_mb, ...
    errors: list[str]
    provenance: dict[str, Any]
    options: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, dict[str, float]]:
        out = {}
        for m in self.methods:
            rs = [r for r in self.runs if r["method"] == m]
            if not rs:
                continue
            pages = sum(r["pages"] for r in rs)
            wall = sum(r["wall_s"] for r in rs)
            cpu = sum(r["cpu_s"] for r in rs)
            out[m] = {"pages": pages, "wall_s": wall, "cpu_s": cpu, "pages_per_s": pages / wall if wall else 0.0,
                      "pages_per_cpu_s": pages / cpu if cpu else 0.0,
                      "peak_rss_mb": max(r["peak_rss_mb"] for r in rs),
                      "baseline_rss_mb": max(r.get("baseline_rss_mb", 0.0) for r in rs), "documents": len(rs)}
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "speed", "provenance": self.provenance, "options": self.options, "methods": self.methods,
                "summary": self.summary(), "runs": self.runs, "errors": self.errors}

    def to_markdown(self) -> str:
        p = self.provenance
        s = self.summary()
        lines = [
            "## Speed (one core, one process per method and document)",
            "",
            f"`{p['command']}` at commit `{p['commit']}`{' (dirty tree)' if p.get('dirty') else ''}, {p['time']}, "
            f"{p['machine']}. Load average at start: {self.options.get('loadavg')}.",
            "",
            "| method | documents | pages | wall s | pages/s | pages/CPU-s | peak RSS MB | RSS after imports MB |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for m, d in s.items():
            lines.append(f"| {m} | {d['documents']} | {d['pages']} | {d['wall_s']:.1f} | {d['pages_per_s']:.1f} | "
                         f"{d['pages_per_cpu_s']:.1f} | {d['peak_rss_mb']:.0f} | {d['baseline_rss_mb']:.0f} |")
        ratios = []
        if "structrag-index" in s:
            idx = s["structrag-index"]["pages_per_s"]
            for ref in ("pymupdf4llm", "pymupdf4llm-legacy"):
                if ref in s and s[ref]["pages_per_s"]:
                    ratios.append(f"structrag-index / {ref} = {idx / s[ref]['pages_per_s']:.1f}x (target >= 20x)")
            if "get_text" in s and idx:
                ratios.append(f"get_text / structrag-index = {s['get_text']['pages_per_s'] / idx:.2f}x "
                              "(target <= 4x)")
        if ratios:
            lines += [""] + [f"- {r}" for r in ratios]
        lines += ["", "| method | document | pages | wall s | pages/s | peak RSS MB |", "|---|---|---:|---:|---:|---:|"]
        for r in self.runs:
            lines.append(f"| {r['method']} | {r['document']} | {r['pages']} | {r['wall_s']:.2f} | "
                         f"{r['pages'] / r['wall_s'] if r['wall_s'] else 0:.1f} | {r['peak_rss_mb']:.0f} |")
        if self.errors:
            lines += ["", "Failures:", ""] + [f"- {e}" for e in self.errors]
        return "\n".join(lines) + "\n"

    def write(self, out_dir: str | os.PathLike, *, plots: bool = True) -> list[Path]:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / "speed.json", out / "speed.md"]
        paths[0].write_text(json.dumps(self.to_dict(), indent=1, ensure_ascii=False), encoding="utf-8")
        paths[1].write_text(self.to_markdown(), encoding="utf-8")
        if plots:
            from ..plots import plot_speed

            png = out / "speed_pages_per_s.png"
            plot_speed(self, png)
            paths.append(png)
        return paths


def run_speed(
    pdfs: Sequence[str | os.PathLike],
    *,
    methods: Sequence[str] = ("get_text", "structrag-parse", "structrag-index", "pymupdf4llm-legacy", "pymupdf4llm"),
    max_pages: int | None = None,
    predictor: str = "learned",
    parse_options: Mapping[str, Any] | None = None,
    core: int | None = None,
    timeout: float | None = None,
    progress: bool | None = None,
    command: str | None = None,
) -> SpeedReport:
    """Pages/s and peak memory of each method on each PDF, one child process each, pinned to one core.

    ``structrag-parse`` = extract + detect + levels (outline ignored so the
    level predictor runs); ``structrag-index`` = that + chunks + BM25 index
    (``retrievers.Index.build``, no dense vectors).  ``parse_options``: more
    fields of :class:`structrag.options.ParseOptions` for both.  ``max_pages`` limits every
    method to the first pages (pymupdf4llm is slow).  Timings exclude imports.
    """
    from tqdm.auto import tqdm

    bad = [m for m in methods if m not in SPEED_METHODS]
    if bad:
        raise ConfigError(f"unknown speed method(s) {bad}; known: {list(SPEED_METHODS)}")
    if core is None:
        try:
            core = max(os.sched_getaffinity(0))
        except AttributeError:  # pragma: no cover - not Linux
            core = -1
    loadavg = None
    try:
        loadavg = [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover
        pass
    runs, errors = [], []
    enabled = sys.stderr.isatty() if progress is None else progress
    jobs = [(m, Path(p)) for p in pdfs for m in methods]
    for m, pdf in tqdm(jobs, desc="speed", disable=not enabled, file=sys.stderr):
        args = ["speed", m, str(pdf), "--core", str(core), "--predictor", predictor]
        if parse_options:
            args += ["--parse-options", json.dumps(dict(parse_options))]
        if max_pages is not None:
            args += ["--max-pages", str(max_pages)]
        try:
            r = run_worker(args, timeout=timeout)
        except StructragError as exc:
            errors.append(f"{m} on {pdf.name}: {exc}")
            continue
        r.update(method=m, document=pdf.name)
        runs.append(r)
    return SpeedReport(list(methods), runs, errors, provenance(command),
                       {"max_pages": max_pages, "predictor": predictor, "core": core, "loadavg": loadavg})
