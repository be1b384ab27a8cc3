"""Progress bars that cost nothing when nobody sees them.

A disabled ``tqdm`` still costs ~0.1 s per process on first use: ``tqdm.auto``
imports asyncio, and creating any tqdm instance creates its multiprocessing
lock (importing multiprocessing and pickle).  A command whose output is piped
(``structrag toc x.pdf | ...``) shows no bar, so it gets :class:`NullBar`.

``enabled`` may also be a function of one number: the stage then calls it with each step done (pages
read, say) instead of drawing a bar of its own, so that a caller running several stages, or several
worker processes, can keep one bar over all of them (``structrag index`` counts pages that way).
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Union

__all__ = ["progress_bar", "NullBar", "CallbackBar", "Progress"]

#: what a stage's ``progress`` argument takes: on, off, on a terminal only (None), or a step counter
Progress = Union[bool, None, Callable[[int], None]]


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


class CallbackBar(NullBar):
    """A bar that hands each step to a function (a caller's own bar, a counter shared with a parent process)."""

    def __init__(self, count: Callable[[int], None]) -> None:
        self._count = count

    def update(self, n: float = 1) -> None:
        self._count(int(n))


def progress_bar(total: int, *, desc: str, unit: str, enabled: Progress) -> Any:
    """A ``tqdm.auto`` bar on stderr when ``enabled`` (None: when stderr is a terminal), a :class:`CallbackBar`
    when it is a function, else a :class:`NullBar`."""
    if callable(enabled):
        return CallbackBar(enabled)
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return NullBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, leave=False, file=sys.stderr)
