"""Tree edit distance between outlines (exact Zhang-Shasha, compiled; or the apted package)."""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterator, Literal, Sequence

import numpy as np

from structrag.errors import ConfigError
from structrag.text import normalize_title

from .. import _kernels
from .outline import Outline, as_outline, outline_from_markdown

__all__ = ["ted", "teds", "heading_teds", "Rename", "Engine"]

Rename = Literal["edit-distance", "exact"]
Engine = Literal["auto", "apted", "zhang-shasha"]


# --------------------------------------------------------------------------
# Tree edit distance
# --------------------------------------------------------------------------
def _label_ids(texts: Sequence[str]) -> tuple[list[str], list[int]]:
    uniq: dict[str, int] = {}
    ids = [uniq.setdefault(normalize_title(t), len(uniq)) for t in texts]
    return list(uniq), ids


def _cost_matrix(la: list[str], lb: list[str], rename: Rename) -> np.ndarray:
    """Label cost matrix with one extra row / column for the virtual roots."""
    m = np.ones((len(la) + 1, len(lb) + 1), dtype=np.float64)
    if rename == "edit-distance":
        m[: len(la), : len(lb)] = _kernels.ned_matrix(la, lb)
    elif rename == "exact":
        pos = {t: j for j, t in enumerate(lb)}
        for i, t in enumerate(la):
            if t in pos:
                m[i, pos[t]] = 0.0
    else:
        raise ConfigError(f"rename must be 'edit-distance' or 'exact', got {rename!r}")
    m[len(la), len(lb)] = 0.0
    return m


@contextlib.contextmanager
def _recursion_limit(n: int) -> Iterator[None]:
    old = sys.getrecursionlimit()
    if n > old:
        sys.setrecursionlimit(n)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _ted_apted(pa, la, pb, lb, cost: np.ndarray) -> float:
    from apted import APTED, Config

    class _Node:
        __slots__ = ("label", "children")

        def __init__(self, label: int) -> None:
            self.label = label
            self.children: list[_Node] = []

    def build(parents, labels, root_label):
        nodes = [_Node(root_label)] + [_Node(l) for l in labels]
        for i, p in enumerate(parents):
            nodes[p + 1].children.append(nodes[i + 1])
        return nodes[0]

    c = cost.tolist()

    class _Cfg(Config):
        valuecls = float

        def rename(self, a, b):
            return c[a.label][b.label]

        def children(self, node):
            return node.children

    ta = build(pa, la, cost.shape[0] - 1)
    tb = build(pb, lb, cost.shape[1] - 1)
    # APTED's indexer recurses once per tree level and its strategy code per
    # node on a path: generous head-room for 10-deep and 2,000-wide trees.
    with _recursion_limit(max(10_000, 4 * (len(la) + len(lb)) + 1_000)):
        return float(APTED(ta, tb, _Cfg()).compute_edit_distance())


def _ted(a: Outline, b: Outline, rename: Rename = "edit-distance", engine: Engine = "auto") -> float:
    if rename not in ("edit-distance", "exact"):
        raise ConfigError(f"rename must be 'edit-distance' or 'exact', got {rename!r}")
    if engine not in ("auto", "apted", "zhang-shasha"):
        raise ConfigError(f"engine must be 'auto', 'apted' or 'zhang-shasha', got {engine!r}")
    if len(a) == 0 or len(b) == 0:
        return float(len(a) + len(b))
    ua, ia = _label_ids(a.texts)
    ub, ib = _label_ids(b.texts)
    cost = _cost_matrix(ua, ub, rename)
    if engine == "auto":
        engine = "zhang-shasha" if _kernels.HAVE_NUMBA else "apted"
    if engine == "apted":
        return _ted_apted(a.parents, ia, b.parents, ib, cost)
    if engine == "zhang-shasha":
        # node 0 is the virtual root; heading i is node i+1
        pa = [-1] + [p + 1 for p in a.parents]
        pb = [-1] + [p + 1 for p in b.parents]
        return _kernels.zhang_shasha(pa, [len(ua)] + ia, pb, [len(ub)] + ib, cost)
    raise ConfigError(f"engine must be 'auto', 'apted' or 'zhang-shasha', got {engine!r}")


def ted(pred: Any, ref: Any, *, rename: Rename = "edit-distance", engine: Engine = "auto") -> float:
    """Tree edit distance between two heading trees (see the module docstring).

    ``engine="apted"`` uses the ``apted`` package; ``"zhang-shasha"`` the
    compiled exact algorithm (same result, much faster on 1,000+ headings);
    ``"auto"`` the compiled one when numba is installed.
    """
    return _ted(as_outline(pred), as_outline(ref), rename, engine)


def _teds_value(d: float, size: int) -> float:
    return 1.0 if size == 0 else max(0.0, 1.0 - d / size)


def teds(pred: Any, ref: Any, *, rename: Rename = "edit-distance", engine: Engine = "auto") -> float:
    """``1 - TED / max(|T_pred|, |T_ref|)``: 1.0 for identical trees and for two empty ones."""
    a, b = as_outline(pred), as_outline(ref)
    return _teds_value(_ted(a, b, rename, engine), max(len(a), len(b)))


def heading_teds(markdown: str | Sequence[str], reference: Any, *, rename: Rename = "edit-distance") -> float:
    """MPDocBench HeadingTEDS: the tree read off ``markdown``'s ``#`` headings against ``reference``.

    ``reference`` is anything :func:`as_outline` accepts; for parent-link
    references build it with :func:`outline_from_parent_links`.
    """
    return teds(outline_from_markdown(markdown), reference, rename=rename)
