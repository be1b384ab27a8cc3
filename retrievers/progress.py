"""Progress bars of the long-running steps (indexing, engine sync, training features): shown on a terminal only."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["progress_enabled", "progress_bar"]


def progress_enabled(progress: bool | None) -> bool:
    """``progress`` as asked; None: show when stderr is a terminal (not in logs or pipes)."""
    return sys.stderr.isatty() if progress is None else bool(progress)


def progress_bar(progress: bool | None, **tqdm_options: Any):
    """A tqdm bar on stderr (``total``, ``desc``, ``unit``, ...), disabled unless :func:`progress_enabled`."""
    from tqdm.auto import tqdm

    return tqdm(disable=not progress_enabled(progress), file=sys.stderr, **tqdm_options)
