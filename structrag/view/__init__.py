"""Self-contained HTML views of a heading tree and of search hits (``structrag view``).

See :mod:`structrag.view.render` for the writers and :mod:`structrag.corrections`
for the corrections file the tree view exports.
"""

from __future__ import annotations

from .render import DEFAULT_DPI, HitView, PageRef, QueryView, ViewStats, write_hits_view, write_tree_view

__all__ = ["DEFAULT_DPI", "HitView", "PageRef", "QueryView", "ViewStats", "write_hits_view", "write_tree_view"]
