"""Among the detected headings: a section's title printed again at the top of the next page.

Without "(continued)" (a running title, a table's caption or header row repeated over its continuation), the
repeat goes on with the section instead of opening a new one (:func:`running_repeats`).
"""

from __future__ import annotations

from typing import Sequence

from ...model import Heading
from ...text import normalize_title

__all__ = ["running_repeats"]


def running_repeats(headings: Sequence[Heading]) -> set[int]:
    """Indices (into ``headings``, reading order) of the headings that repeat a title of the page before.

    A repeat opens its page (only repeats above it), with the text (normalised) and size of a heading on
    the previous page and its top within half a line of that one's: the place a running title (or a
    section's and its sub-section's, stacked) or a table's repeated header takes on every page it
    covers.  The same title elsewhere on the next page (a second "Conclusion" under another analysis)
    is a heading of its own.
    """
    by_page: dict[int, list[int]] = {}
    for i, h in enumerate(headings):
        by_page.setdefault(h.page, []).append(i)
    out: set[int] = set()
    for page, idx in by_page.items():
        before = [headings[j] for j in by_page.get(page - 1, ()) if headings[j].bbox is not None]
        for i in idx:
            h = headings[i]
            if h.bbox is None or not _repeats(h, before):
                break
            out.add(i)
    return out


def _repeats(h: Heading, before: Sequence[Heading]) -> bool:
    key, tol = normalize_title(h.text), 0.5 * max(h.size, 1.0)
    return any(abs(g.bbox[1] - h.bbox[1]) < tol and abs(g.size - h.size) <= 0.05 * max(h.size, 1.0)
               and normalize_title(g.text) == key for g in before)
