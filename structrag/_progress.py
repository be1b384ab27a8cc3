"""Progress bars that cost nothing when nobody sees them.

A disabled ``tqdm`` still costs ~0.1 s per process on first use: ``tqdm.auto``
imports asyncio, and creating any tqdm instance creates its multiprocessing
lock (importing multiprocessing and pickle).  A command whose output is piped
(``structrag toc x.pdf | ...``) shows no bar, so it gets :class:`NullBar`.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["progress_bar", "NullBar"]


class NullBar:
    """What the stages use of a tqdm bar (update, close, context manager), doing nothing."""

    def update(self, n: float = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> "NullBar":
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def progress_bar(total: int, *, desc: str, unit: str, enabled: bool | None) -> Any:
    """A ``tqdm.auto`` bar on stderr when ``enabled`` (None: when stderr is a terminal), else a :class:`NullBar`."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return NullBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, leave=False, file=sys.stderr)
