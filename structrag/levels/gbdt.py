"""Predict with a LightGBM text model in numpy, without importing lightgbm.

Importing ``lightgbm`` costs about two seconds per process here (it imports
scikit-learn, pandas and scipy when they are installed), which was most of a
``structrag toc`` run.  The shipped level model is a plain LightGBM text file,
so :class:`TreeEnsemble` reads that format and evaluates it with vectorised
numpy, giving what ``lightgbm.Booster.predict`` gives (tested to 1e-9 on the
shipped model and on models trained with NaNs, categorical splits and every
objective below).  Training stays with lightgbm.

What is implemented (LightGBM's ``Tree::Decision`` semantics): numerical
splits ``x <= threshold`` with the node's missing type (none: NaN counts as
0; zero: 0 and NaN take the default side; NaN: NaN takes the default side),
categorical splits (category bitsets; NaN, negative and non-representable
values go right), the ``|x| <= 1e-35 -> 0`` squashing of LightGBM's dense
input path, random-forest averaging, and the objectives' output transforms:
binary / cross_entropy (sigmoid), multiclass (softmax), multiclassova
(per-class sigmoid), poisson / gamma / tweedie (exp), cross_entropy_lambda
(log1p(exp)), regression with ``sqrt`` (sign(x) x^2), identity for the rest
(regression, regression_l1, huber, fair, quantile, mape, lambdarank,
rank_xendcg).  Linear trees and unknown objectives raise
:class:`UnsupportedModel`; :func:`load_model` then falls back to lightgbm.

Speed: every (row, tree) pair walks down one level per step, all pairs at
once, so a call costs a few numpy calls per tree level (12 levels in the
shipped models): ~0.1-0.2 ms for the level model's few rows, but 2-3x
lightgbm's C loop for 100+ rows x 500 trees, so the retrieval ranker keeps
lightgbm (figures: eval/bench_startup.py --evaluator).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import ModelError

__all__ = ["TreeEnsemble", "UnsupportedModel", "load_model"]

# LightGBM's kZeroThreshold: dense input values this close to 0 are read as 0
_ZERO = 1e-35
_CATEGORICAL, _DEFAULT_LEFT = 1, 2
_MISSING_ZERO, _MISSING_NAN = 1, 2
# input copies: NaN as -inf / as NaN; NaN and 0 as -inf / as NaN (nodes with missing type "zero")
_NAN_LOW, _NAN_HIGH, _NAN_ZERO_LOW, _NAN_ZERO_HIGH = 0, 1, 2, 3

_IDENTITY = {"regression", "regression_l1", "huber", "fair", "quantile", "mape", "lambdarank", "rank_xendcg",
             "custom", "none"}
_EXP = {"poisson", "gamma", "tweedie"}


class UnsupportedModel(ModelError):
    """A valid LightGBM model this evaluator does not implement (linear trees, an unknown objective)."""


class TreeEnsemble:
    """A LightGBM text model, evaluated in numpy.

    Build with :meth:`from_file` or :meth:`from_string`; :meth:`predict` takes
    ``(n_rows, n_features)`` and returns what ``Booster.predict`` returns:
    ``(n_rows,)``, or ``(n_rows, num_class)`` for multi-class models.
    """

    def __init__(self, text: str, *, source: str | os.PathLike[str] | None = None) -> None:
        self.source = None if source is None else str(source)
        try:
            self._parse(text)
        except UnsupportedModel:
            raise
        except (ValueError, KeyError, IndexError) as exc:
            raise ModelError(f"not a LightGBM text model ({exc.__class__.__name__}: {exc})",
                             path=self.source) from None

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> "TreeEnsemble":
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ModelError("model file not found", path=p) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ModelError(f"cannot read the model: {exc}", path=p) from None
        return cls(text, source=p)

    @classmethod
    def from_string(cls, text: str) -> "TreeEnsemble":
        return cls(text)

    # --- parsing ------------------------------------------------------------------
    def _parse(self, text: str) -> None:
        head, _, rest = text.partition("\nTree=")
        if not rest:
            if not head.startswith("tree"):
                raise ValueError("no 'tree' header")
            rest = ""
        header = _key_values(head.splitlines())
        if "version" not in header or not head.lstrip().startswith("tree"):
            raise ValueError("no 'tree' / 'version=' header")
        self.num_class = int(header.get("num_class", "1"))
        self.num_tree_per_iteration = int(header.get("num_tree_per_iteration", str(self.num_class)))
        self.num_features = int(header["max_feature_idx"]) + 1
        names = header.get("feature_names", "").split()
        self.feature_names: tuple[str, ...] = tuple(names) if names else tuple(
            f"Column_{i}" for i in range(self.num_features))
        self.average_output = any(line.strip() == "average_output" for line in head.splitlines())
        self.objective = header.get("objective", "none")
        self._transform = _output_transform(self.objective, self.num_class, self.source)

        body = rest.split("\nend of trees", 1)[0]
        blocks = [b for b in ("Tree=" + body).split("\nTree=") if b.strip()] if body.strip() else []
        trees = [_key_values(b.splitlines()[1:]) for b in blocks]
        self._build(trees)

    def _build(self, trees: list[dict[str, str]]) -> None:
        # One flat node table for all trees: each tree's internal nodes, then its leaves as
        # self-loops (left = right = itself), so every (row, tree) pair can take max_depth
        # steps without checking which pairs have arrived.  Built with a few numpy calls over
        # all trees at once (a Python loop per node took ~25 ms of each start).
        for t, tree in enumerate(trees):
            if tree.get("is_linear", "0") not in ("0", ""):
                raise UnsupportedModel("linear trees are not supported by the numpy evaluator", path=self.source)
        T = len(trees)
        self.num_trees = T
        if T % max(self.num_tree_per_iteration, 1):
            raise ValueError(f"{T} trees is not a multiple of {self.num_tree_per_iteration} per iteration")
        n_leaves = np.array([int(tr["num_leaves"]) for tr in trees], dtype=np.intp)
        if (n_leaves < 1).any():
            raise ValueError("a tree without leaves")
        n_int = n_leaves - 1
        size = 2 * n_leaves - 1
        base = np.concatenate([[0], np.cumsum(size)[:-1]]).astype(np.intp)
        n_nodes = int(size.sum())
        split = [tr for tr in trees if int(tr["num_leaves"]) > 1]

        def column(key: str, dtype, among=split) -> np.ndarray:
            return np.array(" ".join(tr[key] for tr in among).split(), dtype=dtype)

        values = column("leaf_value", np.float64, trees)
        sf, th, dt = column("split_feature", np.intp), column("threshold", np.float64), column("decision_type", np.int64)
        lc, rc = column("left_child", np.intp), column("right_child", np.intp)
        m = int(n_int.sum())
        if len(values) != int(n_leaves.sum()) or not len(sf) == len(th) == len(dt) == len(lc) == len(rc) == m:
            raise ValueError("the trees' node and leaf arrays do not match their num_leaves")
        if ((sf < 0) | (sf >= self.num_features)).any():
            raise ValueError(f"a split on a feature outside 0..{self.num_features - 1}")
        # where each internal node and leaf goes in the table
        owner = np.repeat(np.arange(T), n_int)
        j = np.arange(m) - np.repeat(np.cumsum(n_int) - n_int, n_int)
        int_pos = base[owner] + j
        leaf_base_int = base[owner] + n_int[owner]
        leaf_owner = np.repeat(np.arange(T), n_leaves)
        leaf_pos = base[leaf_owner] + n_int[leaf_owner] + (np.arange(len(values)) - np.repeat(
            np.cumsum(n_leaves) - n_leaves, n_leaves))
        if ((lc >= n_int[owner]) | (rc >= n_int[owner]) | (~lc >= n_leaves[owner]) | (~rc >= n_leaves[owner])).any():
            raise ValueError("a child index outside its tree")

        miss = (dt >> 2) & 3
        default_left = (dt & _DEFAULT_LEFT) > 0
        cat = (dt & _CATEGORICAL) > 0
        # NaN (and 0 for missing type zero) go to the default side; missing type none reads NaN as 0
        nan_left = np.where(miss == _MISSING_NAN, default_left, 0.0 <= th)
        copy_int = np.where(miss == _MISSING_ZERO, np.where(default_left, _NAN_ZERO_LOW, _NAN_ZERO_HIGH),
                            np.where(nan_left, _NAN_LOW, _NAN_HIGH))
        copy_int[cat] = _NAN_LOW  # NaN as -inf: out of category range, so right, as in LightGBM

        feat = np.zeros(n_nodes, dtype=np.intp)
        thr = np.full(n_nodes, np.inf)
        left = np.empty(n_nodes, dtype=np.intp)
        right = np.empty(n_nodes, dtype=np.intp)
        copy = np.full(n_nodes, _NAN_LOW, dtype=np.intp)
        leaf_value = np.zeros(n_nodes)
        is_cat = np.zeros(n_nodes, dtype=bool)
        feat[int_pos] = sf
        thr[int_pos] = np.where(cat, np.inf, th)
        left[int_pos] = np.where(lc >= 0, base[owner] + lc, leaf_base_int + ~lc)
        right[int_pos] = np.where(rc >= 0, base[owner] + rc, leaf_base_int + ~rc)
        copy[int_pos] = copy_int
        is_cat[int_pos] = cat
        left[leaf_pos] = leaf_pos
        right[leaf_pos] = leaf_pos
        leaf_value[leaf_pos] = values

        # categories: a bitset per categorical node (rare; a loop over those nodes only)
        cat_lo = np.zeros(n_nodes, dtype=np.intp)
        cat_n = np.zeros(n_nodes, dtype=np.intp)
        cat_bits: list[bool] = []
        for k in np.flatnonzero(cat):
            tree = trees[int(owner[k])]
            bounds = [int(b) for b in tree["cat_boundaries"].split()]
            words = [int(w) for w in tree["cat_threshold"].split()]
            c = int(th[k])
            bits = [(w >> b) & 1 == 1 for w in words[bounds[c]:bounds[c + 1]] for b in range(32)]
            cat_lo[int_pos[k]] = len(cat_bits)
            cat_n[int_pos[k]] = len(bits)
            cat_bits.extend(bits)

        # the deepest internal path: walk down from the roots one level at a time
        internal = np.zeros(n_nodes, dtype=bool)
        internal[int_pos] = True
        roots = base.copy()
        frontier, depth = roots[internal[roots]], 0
        while len(frontier):
            depth += 1
            if depth > n_nodes:
                raise ValueError("a tree with a cycle")
            kids = np.concatenate([left[frontier], right[frontier]])
            frontier = kids[internal[kids]]
        self._depth = depth

        # the input copies the nodes read (see _leaf_values), numbered in the order they are built
        self._copies = sorted(set(copy.tolist()))
        pos = np.zeros(4, dtype=np.intp)
        pos[self._copies] = np.arange(len(self._copies))
        col = pos[copy] * self.num_features + feat
        # the walk's state is 2 * node, so that "2 * node + goes_left" costs one addition a level
        self._roots2 = 2 * roots
        self._col2 = np.repeat(col, 2)
        self._thr2 = np.repeat(thr, 2)
        self._kids2 = 2 * np.stack([right, left], axis=1).ravel()
        self._leaf2 = np.repeat(leaf_value, 2)
        self._is_cat = is_cat
        self._any_cat = bool(is_cat.any())
        self._cat_lo = cat_lo
        self._cat_n = cat_n
        self._cat_bits = np.asarray(cat_bits + [False], dtype=bool)
        self._tree_class = np.arange(T) % max(self.num_tree_per_iteration, 1)

    # --- prediction -------------------------------------------------------------------
    def predict(self, X, *, raw_score: bool = False) -> np.ndarray:
        """Scores of the rows of ``X``; ``raw_score=True`` skips the objective's transform."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X[None, :]
        if X.ndim != 2 or X.shape[1] != self.num_features:
            raise ModelError(f"the model takes {self.num_features} features, got input of shape {X.shape}",
                             path=self.source)
        n = X.shape[0]
        k = self.num_tree_per_iteration
        raw = np.zeros((n, k), dtype=np.float64)
        if n and self.num_trees:
            values = self._leaf_values(X)  # (n, trees)
            if k == 1:
                raw[:, 0] = values.sum(axis=1)
            else:
                for c in range(k):
                    raw[:, c] = values[:, self._tree_class == c].sum(axis=1)
            if self.average_output:
                raw /= self.num_trees // k
        if raw_score:
            return raw[:, 0] if k == 1 else raw
        out = self._transform(raw)
        return out[:, 0] if out.shape[1] == 1 else out

    def _leaf_values(self, X: np.ndarray) -> np.ndarray:
        n = X.shape[0]
        X = np.where(np.abs(X) <= _ZERO, 0.0, X)  # keeps NaN (abs(NaN) <= x is False)
        # Missing values are resolved before the walk: a node whose rule sends NaN (and, for
        # missing type "zero", 0) left reads a copy of the input where those are -inf (-inf <= t
        # for every threshold t, -inf and +inf included), one that sends them right a copy where
        # they are NaN (NaN <= t is false).  "x <= t" then decides every node, and each level of
        # the walk is a handful of numpy calls.
        nan = np.isnan(X)
        zero = X == 0.0
        parts = []
        for c in self._copies:
            Y = X if c == _NAN_HIGH else X.copy()
            if c != _NAN_HIGH:
                Y[nan | zero if c in (_NAN_ZERO_LOW, _NAN_ZERO_HIGH) else nan] = (
                    -np.inf if c in (_NAN_LOW, _NAN_ZERO_LOW) else np.nan)
            parts.append(Y)
        flat = np.concatenate(parts, axis=1).ravel() if len(parts) > 1 else parts[0].ravel()
        row = (np.arange(n, dtype=np.intp) * (len(parts) * self.num_features))[:, None]
        state = np.broadcast_to(self._roots2, (n, self.num_trees)).copy()
        for _ in range(self._depth):
            v = flat.take(row + self._col2.take(state))
            go = v <= self._thr2.take(state)
            if self._any_cat:
                go = self._categorical(state >> 1, v, go)
            state = self._kids2.take(state + go)
        return self._leaf2.take(state)

    def _categorical(self, node: np.ndarray, v: np.ndarray, go: np.ndarray) -> np.ndarray:
        cat = self._is_cat.take(node)
        if not cat.any():
            return go
        # LightGBM casts to int: NaN (here -inf), v <= -1 and values past int32 go right;
        # (-1, 0) is category 0
        ok = cat & (v > -1.0) & (v < 2147483648.0)
        iv = np.where(ok, v, 0.0).astype(np.intp)
        ok &= iv < self._cat_n.take(node)
        idx = np.where(ok, self._cat_lo.take(node) + iv, len(self._cat_bits) - 1)
        return np.where(cat, ok & self._cat_bits.take(idx), go)

    def __repr__(self) -> str:
        return (f"TreeEnsemble(trees={self.num_trees}, features={self.num_features}, "
                f"objective={self.objective!r}, max_depth={self._depth})")


def load_model(path: str | os.PathLike[str]):
    """A :class:`TreeEnsemble` for ``path``; a ``lightgbm.Booster`` when the model needs what it lacks."""
    try:
        return TreeEnsemble.from_file(path)
    except UnsupportedModel:
        import lightgbm as lgb

        return lgb.Booster(model_file=str(path))


# --- helpers ------------------------------------------------------------------------------
def _key_values(lines: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in lines:
        key, eq, value = line.partition("=")
        if eq and key not in out:
            out[key] = value
    return out






def _sigmoid(x: np.ndarray, scale: float = 1.0) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-scale * x))


def _output_transform(objective: str, num_class: int, source):
    parts = objective.split()
    name = parts[0] if parts else "none"
    opts = dict(p.split(":", 1) for p in parts[1:] if ":" in p)
    if name == "binary":
        scale = float(opts.get("sigmoid", "1"))
        return lambda raw: _sigmoid(raw, scale)
    if name in ("cross_entropy", "xentropy"):
        return _sigmoid
    if name in ("cross_entropy_lambda", "xentlambda"):
        return lambda raw: np.log1p(np.exp(raw))
    if name == "multiclass":
        def softmax(raw):
            e = np.exp(raw - raw.max(axis=1, keepdims=True))
            return e / e.sum(axis=1, keepdims=True)
        return softmax
    if name == "multiclassova":
        scale = float(opts.get("sigmoid", "1"))
        return lambda raw: _sigmoid(raw, scale)
    if name in _EXP:
        return np.exp
    if name == "regression" and "sqrt" in parts[1:]:
        return lambda raw: np.sign(raw) * raw * raw
    if name in _IDENTITY:
        return lambda raw: raw
    raise UnsupportedModel(f"objective {objective!r} is not supported by the numpy evaluator", path=source)
