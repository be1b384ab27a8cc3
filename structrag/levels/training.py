"""Training of the learned level model on reference headings (:mod:`.references`).

Training is teacher-forced: the memory at each step is built, with the chosen
strategy, from the reference levels of the headings before it; every
candidate level of the step is one row, labelled 1 for the reference level.
It is reproducible: fixed seed, single-threaded deterministic LightGBM, and
the sha1 of every input file recorded in the metadata JSON next to the model.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any, Callable, Iterable, Sequence

from ..errors import ConfigError
from ..model import Document
from .base import parents_of
from .features import FEATURE_NAMES, View, candidate_rows
from .memory import TreeState, make_memory
from .references import ReferenceDoc
from .style import DocStyles, describe

__all__ = [
    "training_rows",
    "train_model",
    "DEFAULT_PARAMS",
    "DEFAULT_ROUNDS",
    "DEFAULT_DAGGER_ROUNDS",
    "oracle_level",
    "oracle_rows",
]

DEFAULT_PARAMS: dict[str, Any] = {
    "objective": "binary",
    "learning_rate": 0.05,
    "num_leaves": 15,
    "min_data_in_leaf": 20,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "verbosity": -1,
    "num_threads": 1,
    "deterministic": True,
    "force_row_wise": True,
}
DEFAULT_ROUNDS = 300
DEFAULT_DAGGER_ROUNDS = 1


def training_rows(ref: ReferenceDoc, memory: str = "recent", seed: int = 0):
    """(rows, labels, group sizes) for one document, teacher-forced with ``memory``."""
    return _step_rows(ref, (int(h.level) for h in ref.headings),  # type: ignore[arg-type]
                      lambda state, i, level: level, memory, seed)


def _step_rows(ref: ReferenceDoc, levels: Iterable[int], label: Callable[[TreeState, int, int], int | None],
               memory: str, seed: int):
    """(rows, labels, group sizes) of a walk over ``ref``'s headings that gives them ``levels``.

    Each step after the first whose ``label(state, i, level)`` is not None gives one row per
    candidate level, labelled 1 for that level, from the ``memory`` of the tree so far.
    """
    hs = ref.headings
    infos = describe(ref.document, hs)
    styles = DocStyles(infos, ref.document)
    state = TreeState(hs)
    strategy = make_memory(memory, seed=seed)
    rows: list[list[float]] = []
    labels: list[int] = []
    groups: list[int] = []
    for i, lv in enumerate(levels):
        if i > 0:
            want = label(state, i, lv)
            if want is not None:
                view = View(strategy.build(state, i))
                cand = candidate_rows(infos[i], view, infos, styles)
                rows.extend(cand)
                labels.extend(int(k == want) for k in range(1, len(cand) + 1))
                groups.append(len(cand))
        state.push(int(lv))
    return rows, labels, groups


def oracle_level(branch: Sequence[int], i: int, true_parent: Sequence[int | None],
                 prev_sibling: Sequence[int | None]) -> int | None:
    """The best level for heading ``i`` given a possibly wrong tree so far (HELD-style oracle).

    ``branch`` is the predicted rightmost branch (indices at levels 1..p).  The
    best slot puts ``i`` under its reference parent if that is on the branch;
    else after its reference previous sibling if that is on the branch; else
    under its deepest reference ancestor on the branch (level 1 if none).
    """
    pos = {h: k + 1 for k, h in enumerate(branch)}
    q = true_parent[i]
    if q is None:
        return 1
    if q in pos:
        return pos[q] + 1
    s = prev_sibling[i]
    if s is not None and s in pos:
        return pos[s]
    a = true_parent[q]
    while a is not None:
        if a in pos:
            return pos[a] + 1
        a = true_parent[a]
    return None


def oracle_rows(ref: ReferenceDoc, predicted: Sequence[int], memory: str = "recent", seed: int = 0):
    """(rows, labels, group sizes) on the states a predictor really reached.

    The memory at each step is built from the ``predicted`` levels (what the
    model saw when it ran free); the label is :func:`oracle_level`.  Training
    on these (DAgger) teaches the model to recover after its own mistakes.
    """
    hs = ref.headings
    true = [int(h.level) for h in hs]  # type: ignore[arg-type]
    tp = parents_of(true)
    last_child: dict[int | None, int] = {}
    ps: list[int | None] = []
    for i, q in enumerate(tp):
        ps.append(last_child.get(q))
        last_child[q] = i
    return _step_rows(ref, predicted, lambda state, i, level: oracle_level(state.branch, i, tp, ps), memory, seed)


def _fit(X, y, w, params: dict, rounds: int, seed: int):
    import lightgbm as lgb
    import numpy as np

    p = dict(DEFAULT_PARAMS)
    p.update(params or {})
    p["seed"] = seed
    ds = lgb.Dataset(np.asarray(X, dtype=np.float64), label=np.asarray(y), weight=np.asarray(w),
                     feature_name=list(FEATURE_NAMES), free_raw_data=True)
    return lgb.train(p, ds, num_boost_round=rounds), p


def _doc_weights(n_rows: int, n_steps: int, doc_weighting: str) -> list[float]:
    if doc_weighting == "sqrt":
        return [1.0 / max(n_steps, 1) ** 0.5] * n_rows
    if doc_weighting == "none":
        return [1.0] * n_rows
    raise ConfigError(f"unknown doc_weighting {doc_weighting!r}", hint='use "sqrt" or "none"')


def _parent_agreement(a: Sequence[int], b: Sequence[int]) -> float:
    pa, pb = parents_of(a), parents_of(b)
    return sum(x == y for x, y in zip(pa, pb)) / max(len(pa), 1)


def uniform_style_variant(ref: ReferenceDoc, min_agreement: float = 0.85) -> ReferenceDoc | None:
    """The document with every located heading in one look, if its numbers explain its outline.

    Style dropout: in most training documents style and numbering agree, so a
    model never learns that a number can say "child" where the look says
    "sibling" ("2.1" printed like "2").  Documents whose outline the numbering
    rules alone reproduce (parent agreement >= ``min_agreement``) are added
    once more with the looks made equal, so only the numbers tell the levels.
    """
    from .walk import assign_levels

    true = [int(h.level) for h in ref.headings]  # type: ignore[arg-type]
    if sum(1 for h in ref.headings if h.numbering is not None) < 0.3 * max(len(true), 1):
        return None
    got = assign_levels(ref.document, ref.headings, predictor="numbering", progress=False)
    if _parent_agreement([int(h.level) for h in got.headings], true) < min_agreement:  # type: ignore[misc]
        return None
    hs = tuple(replace(h, font="Uniform", size=11.0, bold=True, italic=False, color=0) if h.bbox is not None
               else h for h in ref.headings)
    return replace(ref, doc_id=ref.doc_id + "#uniform-style", headings=hs)


def _free_run(booster, ref: ReferenceDoc, memory: str, seed: int) -> list[int]:
    from .walk import assign_levels
    from .learned import LearnedPredictor

    out = assign_levels(ref.document, ref.headings, predictor=LearnedPredictor(booster=booster), memory=memory,
                        seed=seed, progress=False)
    return [int(h.level) for h in out.headings]  # type: ignore[arg-type]


def train_model(
    refs: Sequence[ReferenceDoc],
    *,
    seed: int = 0,
    params: dict | None = None,
    rounds: int = DEFAULT_ROUNDS,
    memory: str = "recent",
    doc_weighting: str = "sqrt",
    dagger_rounds: int = DEFAULT_DAGGER_ROUNDS,
    dagger_folds: int = 4,
    rows_cache: dict | None = None,
    augment: bool = True,
):
    """A LightGBM Booster trained on ``refs``; returns (booster, metadata dict).

    Rows are teacher-forced (:func:`training_rows`), plus, for each of
    ``dagger_rounds`` rounds, the states that models trained on the other
    ``dagger_folds``-1 folds of the documents really reach when they run free
    on a document, labelled by :func:`oracle_level` (DAgger with
    cross-fitting: a model never runs on a document it was trained on, so the
    mistakes it learns to recover from are realistic).

    ``doc_weighting``: ``"sqrt"`` weighs each document's rows so a document
    counts with the square root of its number of headings (a 1,200-heading
    manual does not drown ten business reports); ``"none"`` weighs rows equally.
    ``rows_cache`` (a dict) keeps the teacher-forced rows between calls, for
    leave-one-out loops.  ``augment`` adds :func:`uniform_style_variant` rows
    (teacher-forced, half weight) for documents whose numbers explain them.
    """
    import lightgbm as lgb

    if not refs:
        raise ConfigError("no reference documents to train on")
    tf: list[tuple[list, list, list]] = []
    for ref in refs:
        key = (ref.doc_id, ref.pdf_sha1, memory, seed)
        if rows_cache is not None and key in rows_cache:
            rows, labels, groups = rows_cache[key]
        else:
            rows, labels, groups = training_rows(ref, memory=memory, seed=seed)
            if rows_cache is not None:
                rows_cache[key] = (rows, labels, groups)
        tf.append((rows, labels, _doc_weights(len(rows), len(groups), doc_weighting)))
    extra: list[tuple[list, list, list]] = [([], [], []) for _ in refs]

    def assemble(idx: Iterable[int]):
        X: list = []
        y: list = []
        w: list = []
        for i in idx:
            for part in (tf[i], extra[i]):
                X.extend(part[0])
                y.extend(part[1])
                w.extend(part[2])
        return X, y, w

    folds = max(2, min(int(dagger_folds), len(refs))) if dagger_rounds > 0 and len(refs) > 1 else 0
    for r in range(dagger_rounds if folds else 0):
        new_extra = [([], [], []) for _ in refs]
        for f in range(folds):
            held = [i for i in range(len(refs)) if i % folds == f]
            train_idx = [i for i in range(len(refs)) if i % folds != f]
            booster, _ = _fit(*assemble(train_idx), params or {}, rounds, seed + 1 + r)
            for i in held:
                pred = _free_run(booster, refs[i], memory, seed)
                rows, labels, groups = oracle_rows(refs[i], pred, memory=memory, seed=seed)
                new_extra[i] = (extra[i][0] + rows, extra[i][1] + labels,
                                extra[i][2] + _doc_weights(len(rows), len(groups), doc_weighting))
        extra = new_extra
    X, y, w = assemble(range(len(refs)))
    augmented = []
    if augment:
        for ref in refs:
            key = (ref.doc_id + "#uniform-style", ref.pdf_sha1, memory, seed)
            if rows_cache is not None and key in rows_cache:
                got = rows_cache[key]
            else:
                var = uniform_style_variant(ref)
                got = training_rows(var, memory=memory, seed=seed) if var is not None else None
                if rows_cache is not None:
                    rows_cache[key] = got
            if got is None:
                continue
            rows, labels, groups = got
            augmented.append(ref.doc_id)
            X.extend(rows)
            y.extend(labels)
            w.extend(0.5 * v for v in _doc_weights(len(rows), len(groups), doc_weighting))
    booster, p = _fit(X, y, w, params or {}, rounds, seed)
    meta = {
        "format": "structrag-levels-model/1",
        "features": list(FEATURE_NAMES),
        "params": p,
        "rounds": rounds,
        "memory": memory,
        "doc_weighting": doc_weighting,
        "dagger_rounds": dagger_rounds,
        "dagger_folds": folds,
        "augmented_uniform_style": augmented,
        "seed": seed,
        "rows": len(y),
        "positives": int(sum(y)),
        "lightgbm": lgb.__version__,
        "documents": [
            {"doc_id": r.doc_id, "group": r.group, "pdf_sha1": r.pdf_sha1, "toc_sha1": r.toc_sha1,
             "headings": len(r.headings), "located": r.located}
            for r in refs
        ],
    }
    return booster, meta
