"""Where a number came from: the command, the git commit, the machine, the versions."""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any, Sequence

__all__ = ["git_state", "provenance", "command_line"]

_REPO = Path(__file__).resolve().parents[1]


def git_state(repo: str | os.PathLike | None = None) -> dict[str, Any]:
    """``{"commit": sha or None, "dirty": bool or None}`` (dirty: tracked files changed)."""
    root = str(repo or _REPO)
    try:
        sha = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10, check=True).stdout.strip()
        st = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                            capture_output=True, text=True, timeout=10, check=True).stdout
        return {"commit": sha, "dirty": bool(st.strip())}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command as typed (``structrag eval ...`` when run through the CLI)."""
    args = list(sys.argv if argv is None else argv)
    if args and Path(args[0]).name == "structrag":
        args[0] = "structrag"
    return " ".join(shlex.quote(a) for a in args)


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def provenance(command: str | None = None) -> dict[str, Any]:
    """Everything needed to reproduce a figure: command, commit, time, machine, library versions."""
    return {
        "command": command if command is not None else command_line(),
        **git_state(),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "python": platform.python_version(),
        "machine": f"{platform.machine()} {platform.system()}, {os.cpu_count()} CPUs",
        "versions": {d: _version(d) for d in ("structrag", "pymupdf", "pymupdf4llm", "lightgbm", "numba", "apted",
                                               "ranx", "bm25s", "sentence-transformers", "faiss-cpu")},
    }
