"""Where the shared evaluation data lives: one rule for ``structrag eval report`` and every benchmark.

The data (``headings/``, ``retrieval/``, ``longdoc/``, ``prospectus-zh/``) is research-only and never
part of the repository; it sits in a ``shared/data`` folder beside the checkout.
"""

from __future__ import annotations

import os
from pathlib import Path

from structrag.errors import ConfigError

__all__ = ["ENV_VAR", "shared_data_dir"]

#: the environment variable that names the data folder
ENV_VAR = "STRUCTRAG_SHARED_DATA"

_REPO = Path(__file__).resolve().parents[1]


def shared_data_dir(explicit: str | os.PathLike | None = None, *, repo: str | os.PathLike | None = None,
                    required: bool = False) -> Path:
    """The shared data folder: ``explicit`` (a ``--data`` flag), else ``$STRUCTRAG_SHARED_DATA``, else
    ``shared/data`` beside the repository or beside the folder holding it (a ``git worktree``).

    Neither of the first two is checked: a path the user names is the path they mean.  When no folder
    beside the repository exists, ``required`` raises :class:`ConfigError`; otherwise the conventional
    place (``../shared/data``) is returned, so that a caller's "not found" message names it.
    """
    if explicit is not None and str(explicit) != "":
        return Path(explicit)
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    root = Path(repo) if repo is not None else _REPO
    candidates = [root.parent / "shared" / "data", root.parent.parent / "shared" / "data"]
    for c in candidates:
        if c.is_dir():
            return c
    if required:
        raise ConfigError("no shared data folder found",
                          hint=f"pass it (--data DIR) or set {ENV_VAR}; looked in {', '.join(map(str, candidates))}")
    return candidates[0]
