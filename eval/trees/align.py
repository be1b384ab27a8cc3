"""Alignment of predicted to reference headings, heading P/R/F1 and pruning."""

from __future__ import annotations

from typing import Any, Iterable, Iterator, NamedTuple

import numpy as np

from structrag.errors import ConfigError
from structrag.text import normalize_title
from structrag.text import strip_number as _bare

from .. import _kernels
from .outline import Outline, as_outline

__all__ = ["text_similarity", "Alignment", "align", "HeadingPRF", "heading_prf", "prune"]


# --------------------------------------------------------------------------
# Alignment
# --------------------------------------------------------------------------
def _prefix_sim(a: str, b: str) -> float:
    if not a or not b:
        return 0.0
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if len(short) >= 4 and long_.startswith(short) and (len(long_) == len(short) or long_[len(short)] == " "):
        return 0.85 + 0.15 * len(short) / len(long_)
    return 0.0


def _prefix_pairs(xa: list[str], xb: list[str]) -> Iterator[tuple[int, int, float]]:
    """(u, v, prefix similarity) for the pairs where one text is a word-prefix of the other."""
    import bisect

    for short, long_, flip in ((xa, xb, False), (xb, xa, True)):
        order = sorted(range(len(long_)), key=long_.__getitem__)
        keys = [long_[k] for k in order]
        for u, t in enumerate(short):
            if len(t) < 4:
                continue
            lo = bisect.bisect_left(keys, t)
            hi = bisect.bisect_left(keys, t + "\U0010ffff")
            for k in range(lo, hi):
                v = order[k]
                sim = _prefix_sim(t, long_[v])
                if sim > 0:
                    yield (v, u, sim) if flip else (u, v, sim)


def text_similarity(a: str, b: str) -> float:
    """Similarity in [0, 1] of two heading texts as the alignment scores it."""
    na, nb = normalize_title(a), normalize_title(b)
    ba, bb = _bare(na, a), _bare(nb, b)
    variants = {(na, nb), (ba, nb), (na, bb), (ba, bb)}
    best = 0.0
    for x, y in variants:
        if not x or not y:
            continue
        s = 1.0 - float(_kernels.ned_matrix([x], [y])[0, 0])
        s = max(s, _prefix_sim(x, y))
        if (x, y) != (na, nb):
            s -= 0.02  # a match that needed the number stripped ranks below a full match
        best = max(best, s)
    return max(0.0, best)


class Alignment(NamedTuple):
    """A monotone matching: ``pairs[k] = (pred index, ref index)``, increasing in both."""

    pairs: tuple[tuple[int, int], ...]
    similarity: tuple[float, ...]
    n_pred: int
    n_ref: int

    def pred_to_ref(self) -> dict[int, int]:
        return {p: r for p, r in self.pairs}

    def ref_to_pred(self) -> dict[int, int]:
        return {r: p for p, r in self.pairs}

    @classmethod
    def identity(cls, n: int) -> "Alignment":
        return cls(tuple((i, i) for i in range(n)), (1.0,) * n, n, n)


def _sim_block(pa: list[int], pb: list[int], A: tuple, B: tuple) -> np.ndarray:
    """Similarity matrix between predicted ``pa`` and reference ``pb`` headings."""
    na, ba, ra = A
    nb, bb, rb = B
    xa = [na[i] for i in pa]
    xb = [nb[j] for j in pb]
    s = 1.0 - _kernels.ned_matrix(xa, xb)
    sa = [ba[i] for i in pa]
    sb = [bb[j] for j in pb]
    if sa != xa or sb != xb:
        for x, y in ((sa, xb), (xa, sb), (sa, sb)):
            s = np.maximum(s, 1.0 - _kernels.ned_matrix(x, y) - 0.02)
    for xs_a, xs_b, pen in ((xa, xb, 0.0), (sa, sb, 0.02)):
        for u, v, pre in _prefix_pairs(xs_a, xs_b):
            if pre - pen > s[u, v]:
                s[u, v] = pre - pen
    # empty normalised texts never match
    for u, i in enumerate(pa):
        if not na[i]:
            s[u, :] = 0.0
    for v, j in enumerate(pb):
        if not nb[j]:
            s[:, v] = 0.0
    return s


def align(pred: Any, ref: Any, *, threshold: float = 0.8, page_window: int | None = 1) -> Alignment:
    """Monotone alignment of predicted to reference headings (module docstring).

    ``page_window=None`` ignores pages.  Ties between equally good alignments
    are broken towards earlier predicted headings.
    """
    a, b = as_outline(pred), as_outline(ref)
    if not 0.0 < threshold <= 1.0:
        raise ConfigError(f"threshold must be in (0, 1], got {threshold}")
    if page_window is not None and page_window < 0:
        raise ConfigError(f"page_window must be >= 0 or None, got {page_window}")
    na = [normalize_title(t) for t in a.texts]
    nb = [normalize_title(t) for t in b.texts]
    A = (na, [_bare(x, t) for x, t in zip(na, a.texts)], a.texts)
    B = (nb, [_bare(x, t) for x, t in zip(nb, b.texts)], b.texts)
    cands: list[tuple[int, int, float]] = []
    if len(a) and len(b):
        free_a = [i for i, p in enumerate(a.pages) if p is None or page_window is None]
        free_b = [j for j, p in enumerate(b.pages) if p is None or page_window is None]
        blocks: list[tuple[list[int], list[int]]] = []
        if page_window is None or len(free_a) == len(a) or len(free_b) == len(b):
            blocks.append((list(range(len(a))), list(range(len(b)))))
        else:
            by_page_a: dict[int, list[int]] = {}
            for i, p in enumerate(a.pages):
                if p is not None:
                    by_page_a.setdefault(p, []).append(i)
            by_page_b: dict[int, list[int]] = {}
            for j, p in enumerate(b.pages):
                if p is not None:
                    by_page_b.setdefault(p, []).append(j)
            for pg, js in by_page_b.items():
                ia = [i for q in range(pg - page_window, pg + page_window + 1) for i in by_page_a.get(q, ())]
                if ia:
                    blocks.append((sorted(ia), js))
            if free_a:
                blocks.append((free_a, [j for j, p in enumerate(b.pages) if p is not None]))
            if free_b:
                blocks.append((list(range(len(a))), free_b))
        seen: set[tuple[int, int]] = set()
        for pa, pb in blocks:
            s = _sim_block(pa, pb, A, B)
            us, vs = np.nonzero(s >= threshold - 1e-12)
            for u, v in zip(us.tolist(), vs.tolist()):
                key = (pa[u], pb[v])
                if key not in seen:
                    seen.add(key)
                    cands.append((pa[u], pb[v], float(s[u, v])))
    pairs, sims = _max_weight_monotone(cands, len(b))
    return Alignment(tuple(pairs), tuple(sims), len(a), len(b))


def _max_weight_monotone(cands: list[tuple[int, int, float]], n_ref: int) -> tuple[list[tuple[int, int]], list[float]]:
    """Maximum-weight chain of pairs strictly increasing in both indices (Fenwick tree over ref index)."""
    if not cands:
        return [], []
    cands.sort(key=lambda c: (c[0], c[1]))
    size = n_ref + 1
    tree_val = [0.0] * (size + 1)
    tree_arg = [-1] * (size + 1)

    def query(j: int) -> tuple[float, int]:  # best chain ending at ref index < j
        best, arg = 0.0, -1
        k = j
        while k > 0:
            if tree_val[k] > best + 1e-12:
                best, arg = tree_val[k], tree_arg[k]
            k -= k & -k
        return best, arg

    def update(j: int, val: float, arg: int) -> None:
        k = j + 1
        while k <= size:
            if val > tree_val[k] + 1e-12:
                tree_val[k], tree_arg[k] = val, arg
            k += k & -k

    score = [0.0] * len(cands)
    back = [-1] * len(cands)
    k = 0
    while k < len(cands):
        i = cands[k][0]
        group = []
        while k < len(cands) and cands[k][0] == i:
            group.append(k)
            k += 1
        for c in group:  # query before updating: one predicted heading matches once
            best, arg = query(cands[c][1])
            score[c], back[c] = best + cands[c][2], arg
        for c in group:
            update(cands[c][1], score[c], c)
    end = max(range(len(cands)), key=lambda c: (score[c], -c))
    chain = []
    while end >= 0:
        chain.append(end)
        end = back[end]
    chain.reverse()
    return [(cands[c][0], cands[c][1]) for c in chain], [cands[c][2] for c in chain]


# --------------------------------------------------------------------------
# Scores built on an alignment
# --------------------------------------------------------------------------
class HeadingPRF(NamedTuple):
    precision: float
    recall: float
    f1: float
    matched: int
    n_pred: int
    n_ref: int


def _prf(matched: int, n_pred: int, n_ref: int) -> HeadingPRF:
    # empty conventions: nothing predicted and nothing to find is perfect
    p = matched / n_pred if n_pred else (1.0 if n_ref == 0 else 0.0)
    r = matched / n_ref if n_ref else (1.0 if n_pred == 0 else 0.0)
    f = 2 * p * r / (p + r) if p + r else 0.0
    return HeadingPRF(p, r, f, matched, n_pred, n_ref)


def heading_prf(pred: Any, ref: Any, *, threshold: float = 0.8, page_window: int | None = 1) -> HeadingPRF:
    """Heading precision, recall and F1 under :func:`align`."""
    al = align(pred, ref, threshold=threshold, page_window=page_window)
    return _prf(len(al.pairs), al.n_pred, al.n_ref)


def prune(outline: Any, keep: Iterable[int]) -> Outline:
    """Keep only the headings in ``keep``; a dropped heading's children go to its nearest kept ancestor."""
    o = as_outline(outline)
    ks = sorted(set(int(i) for i in keep))
    new = {old: k for k, old in enumerate(ks)}
    parents = []
    for old in ks:
        p = o.parents[old]
        while p >= 0 and p not in new:
            p = o.parents[p]
        parents.append(new[p] if p >= 0 else -1)
    depths: list[int] = []
    for p in parents:
        depths.append(1 if p < 0 else depths[p] + 1)
    return Outline(tuple(o.texts[i] for i in ks), tuple(depths), tuple(o.pages[i] for i in ks), tuple(parents),
                   o.name)
