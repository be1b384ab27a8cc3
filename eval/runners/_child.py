"""Child processes of the runners: pymupdf4llm conversions and timed runs, one process each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from structrag.errors import ConfigError, StructragError

__all__ = ["MARKDOWN_METHODS", "markdown_pages", "run_worker"]

MARKDOWN_METHODS = ("pymupdf4llm", "pymupdf4llm-legacy")
_WORKER = Path(__file__).resolve().parents[1] / "_worker.py"
_REPO = Path(__file__).resolve().parents[2]


def _worker_env(single_core: bool = True) -> dict[str, str]:
    env = dict(os.environ)
    if single_core:
        for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS",
                  "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "ORT_NUM_THREADS"):
            env[k] = "1"
        env["TOKENIZERS_PARALLELISM"] = "false"
    repo = str(_REPO)
    env["PYTHONPATH"] = repo + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_worker(args: list[str], *, timeout: float | None = None) -> dict[str, Any]:
    """Run ``eval/_worker.py`` with ``args`` in a child; its last JSON line."""
    # the file, not ``-m eval._worker``: importing the eval package would add its imports to every
    # baseline.  Through runpy, not as a script, so that eval/ is not put first on the child's path
    # (its trees.py, report.py, ... would shadow top-level modules).
    cmd = [sys.executable, "-c", f"import runpy; runpy.run_path({str(_WORKER)!r}, run_name='__main__')", *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_worker_env())
    except subprocess.TimeoutExpired:
        raise StructragError(f"timed out after {timeout:.0f} s: {' '.join(args)}") from None
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise StructragError(f"worker failed ({' '.join(args[:2])}): " + " | ".join(tail))
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise StructragError(f"worker printed no result ({' '.join(args[:2])})")
    return json.loads(lines[-1])


def markdown_pages(pdf: str | os.PathLike, method: str, *, sha1: str, cache_dir: Path | None,
                   timeout: float | None = None) -> tuple[list[str], float]:
    """Per-page Markdown of ``pymupdf4llm`` (``method`` in MARKDOWN_METHODS) and the seconds it took."""
    if method not in MARKDOWN_METHODS:
        raise ConfigError(f"unknown Markdown method {method!r}; known: {MARKDOWN_METHODS}")
    from importlib import metadata

    version = metadata.version("pymupdf4llm")
    cache = None
    if cache_dir is not None:
        cache = Path(cache_dir) / "markdown" / f"{sha1}_{method}_{version}.json"
        if cache.is_file():
            d = json.loads(cache.read_text(encoding="utf-8"))
            return d["pages"], float(d["seconds"])
    out = Path(cache) if cache is not None else Path(os.environ.get("TMPDIR", "/tmp")) / f"md_{sha1}_{method}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    res = run_worker(["markdown", method, str(pdf), str(out)], timeout=timeout)
    d = json.loads(out.read_text(encoding="utf-8"))
    if cache is None:
        out.unlink(missing_ok=True)
    return d["pages"], float(res["seconds"])


