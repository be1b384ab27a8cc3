"""Compiled inner loops for the tree metrics (numba when available).

Two kernels: a pairwise normalised edit-distance matrix over label strings,
and the Zhang–Shasha tree edit distance over post-order arrays with a label
cost matrix.  Both are exact; ``tests/test_eval_trees.py`` checks the tree
distance against the ``apted`` package on random trees.  They exist because
pure-Python APTED needs ~90 s on the 1,182-entry TikZ outline, which makes a
17-document, multi-predictor benchmark impractical on shared cores; the
compiled Zhang–Shasha takes well under a second on the same pair.

Without numba the same functions run as plain Python (slow, still exact), and
:mod:`eval.trees` prefers the ``apted`` engine in that case.
"""

from __future__ import annotations

import numpy as np

try:  # numba comes with ranx (the eval / test extras)
    import numba

    _njit = numba.njit(cache=True, nogil=True)
    HAVE_NUMBA = True
except Exception:  # pragma: no cover - exercised only where numba is absent
    numba = None
    HAVE_NUMBA = False

    def _njit(f):
        return f


__all__ = ["HAVE_NUMBA", "encode", "ned_matrix", "zhang_shasha"]


def encode(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated code points and offsets (``offsets[i]:offsets[i+1]`` is string i)."""
    offsets = np.zeros(len(strings) + 1, dtype=np.int64)
    for i, s in enumerate(strings):
        offsets[i + 1] = offsets[i] + len(s)
    codes = np.fromiter((ord(c) for s in strings for c in s), dtype=np.int32, count=int(offsets[-1]))
    return codes, offsets


@_njit
def _lev_dp(codes_a, a0, la, codes_b, b0, lb, prev, cur):  # pragma: no cover - compiled
    for k in range(lb + 1):
        prev[k] = k
    for x in range(1, la + 1):
        cur[0] = x
        ca = codes_a[a0 + x - 1]
        for y in range(1, lb + 1):
            sub = prev[y - 1] + (0 if ca == codes_b[b0 + y - 1] else 1)
            d = prev[y] + 1
            ins = cur[y - 1] + 1
            if ins < d:
                d = ins
            if sub < d:
                d = sub
            cur[y] = d
        for y in range(lb + 1):
            prev[y] = cur[y]
    return prev[lb]


@_njit
def _ned_matrix(codes_a, off_a, codes_b, off_b, alphabet):  # pragma: no cover - compiled
    # Myers / Hyyro bit-parallel Levenshtein with the b string as the
    # pattern when it fits in 64 bits: O(len(a)) per pair instead of
    # O(len(a) * len(b)); plain DP for longer strings.
    na = off_a.shape[0] - 1
    nb = off_b.shape[0] - 1
    out = np.empty((na, nb), dtype=np.float64)
    maxlen = 1
    for j in range(nb):
        if off_b[j + 1] - off_b[j] > maxlen:
            maxlen = off_b[j + 1] - off_b[j]
    for i in range(na):
        if off_a[i + 1] - off_a[i] > maxlen:
            maxlen = off_a[i + 1] - off_a[i]
    prev = np.empty(maxlen + 1, dtype=np.int64)
    cur = np.empty(maxlen + 1, dtype=np.int64)
    peq = np.zeros(alphabet, dtype=np.uint64)
    one = np.uint64(1)
    for j in range(nb):
        b0 = off_b[j]
        lb = off_b[j + 1] - b0
        bits = 0 < lb <= 64
        if bits:
            for y in range(lb):
                peq[codes_b[b0 + y]] |= one << np.uint64(y)
            top = one << np.uint64(lb - 1)
        for i in range(na):
            a0 = off_a[i]
            la = off_a[i + 1] - a0
            if la == 0 and lb == 0:
                out[i, j] = 0.0
                continue
            if la == 0 or lb == 0:
                out[i, j] = 1.0
                continue
            if bits:
                pv = ~np.uint64(0)
                mv = np.uint64(0)
                score = lb
                for x in range(la):
                    eq = peq[codes_a[a0 + x]]
                    xv = eq | mv
                    xh = (((eq & pv) + pv) ^ pv) | eq
                    ph = mv | ~(xh | pv)
                    mh = pv & xh
                    if ph & top:
                        score += 1
                    elif mh & top:
                        score -= 1
                    ph = (ph << one) | one
                    mh = mh << one
                    pv = mh | ~(xv | ph)
                    mv = ph & xv
                d = score
            else:
                d = _lev_dp(codes_a, a0, la, codes_b, b0, lb, prev, cur)
            out[i, j] = d / (la if la > lb else lb)
        if bits:
            for y in range(lb):
                peq[codes_b[b0 + y]] = np.uint64(0)
    return out


def ned_matrix(a: list[str], b: list[str]) -> np.ndarray:
    """``out[i, j]`` = Levenshtein(a[i], b[j]) / max(len); 0 for two empty strings."""
    if not a or not b:
        return np.zeros((len(a), len(b)), dtype=np.float64)
    ca, oa = encode(a)
    cb, ob = encode(b)
    # dense alphabet ids keep the bit-mask table small
    alpha, inv = np.unique(np.concatenate([ca, cb]), return_inverse=True)
    inv = inv.astype(np.int32)
    return _ned_matrix(inv[: len(ca)], oa, inv[len(ca):], ob, max(1, len(alpha)))


@_njit
def _zhang_shasha(lml1, kr1, lab1, lml2, kr2, lab2, cost, del_cost, ins_cost):  # pragma: no cover
    n1 = lml1.shape[0]
    n2 = lml2.shape[0]
    td = np.zeros((n1, n2), dtype=np.float64)
    fd = np.zeros((n1 + 1, n2 + 1), dtype=np.float64)
    for a in range(kr1.shape[0]):
        i = kr1[a]
        li = lml1[i]
        for b in range(kr2.shape[0]):
            j = kr2[b]
            lj = lml2[j]
            fd[0, 0] = 0.0
            for di in range(1, i - li + 2):
                fd[di, 0] = fd[di - 1, 0] + del_cost
            for dj in range(1, j - lj + 2):
                fd[0, dj] = fd[0, dj - 1] + ins_cost
            for di in range(1, i - li + 2):
                x = li + di - 1
                lx = lml1[x]
                for dj in range(1, j - lj + 2):
                    y = lj + dj - 1
                    d = fd[di - 1, dj] + del_cost
                    v = fd[di, dj - 1] + ins_cost
                    if v < d:
                        d = v
                    if lx == li and lml2[y] == lj:
                        v = fd[di - 1, dj - 1] + cost[lab1[x], lab2[y]]
                        if v < d:
                            d = v
                        fd[di, dj] = d
                        td[x, y] = d
                    else:
                        v = fd[lx - li, lml2[y] - lj] + td[x, y]
                        if v < d:
                            d = v
                        fd[di, dj] = d
    return td[n1 - 1, n2 - 1]


def postorder_arrays(parents: list[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(post-order -> node, leftmost-leaf array, keyroots) for a tree given by parent links.

    Node 0 is the root (``parents[0] == -1``); children are in index order.
    Iterative, so depth and width do not hit Python's recursion limit.
    """
    n = len(parents)
    children: list[list[int]] = [[] for _ in range(n)]
    for v in range(1, n):
        children[int(parents[v])].append(v)
    order: list[int] = []
    stack: list[tuple[int, int]] = [(0, 0)]
    while stack:
        v, k = stack.pop()
        if k < len(children[v]):
            stack.append((v, k + 1))
            stack.append((children[v][k], 0))
        else:
            order.append(v)
    post = {v: i for i, v in enumerate(order)}
    lml = np.empty(n, dtype=np.int64)
    for i, v in enumerate(order):
        lml[i] = lml[post[children[v][0]]] if children[v] else i
    seen: dict[int, int] = {}
    for i in range(n):  # keyroot: the highest node of each leftmost-leaf value
        seen[int(lml[i])] = i
    keyroots = np.array(sorted(seen.values()), dtype=np.int64)
    return np.array(order, dtype=np.int64), lml, keyroots


def zhang_shasha(
    parents1, labels1, parents2, labels2, cost: np.ndarray, del_cost: float = 1.0, ins_cost: float = 1.0
) -> float:
    """Tree edit distance; ``labels*`` index the rows / columns of ``cost``."""
    o1, lml1, kr1 = postorder_arrays(parents1)
    o2, lml2, kr2 = postorder_arrays(parents2)
    lab1 = np.asarray(labels1, dtype=np.int64)[o1]
    lab2 = np.asarray(labels2, dtype=np.int64)[o2]
    return float(
        _zhang_shasha(lml1, kr1, lab1, lml2, kr2, lab2, np.ascontiguousarray(cost, dtype=np.float64),
                      float(del_cost), float(ins_cost))
    )
