"""The level-reconstruction driver: the level-wise memory walk over the headings without a level.

:func:`assign_levels` walks a document's headings in reading order, one step
at a time (one heading, the headings of one page, or of k pages).  Per step it
builds the memory with the chosen strategy, asks the predictor, validates the
answer with :func:`~structrag.levels.base.check_levels`, asks again with feedback (up to the
predictor's ``max_retries``), falls back to a second predictor when the first
raises a :class:`~structrag.errors.BackendError` or stays invalid on a group,
and projects what is still invalid onto the valid range.  Every heading leaves
with a level, a ``level_source`` and a ``confidence``.

Headings whose level is already known (by default those from the printed table
of contents, ``level_source="contents"``) are *fixed*: they are not predicted,
but recorded in the memory like predicted ones, so the headings around them are
predicted relative to them (the anchors of the level-wise memory).  A predicted
heading after a fixed heading of level k is placed deeper than k (the contents
lists the sections at that level; what it does not list sits below them) unless
it was predicted at the level of fixed headings with the same look, and
a fixed level that would break ``1 <= l_i <= l_{i-1} + 1`` is projected.
Both corrections are counted in the stats.

A checkpoint file (JSON lines: a header, then one line per completed step)
makes long runs resumable: a rerun with the same file continues after the last
completed step, and an interruption (Ctrl-C, a dead server) keeps what was
done.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, Mapping, NamedTuple, Sequence

from ...errors import BackendError, BackendUnreachable, ConfigError, StructragError, StructragWarning
from ...model import Document, Heading
from ..base import LevelPrediction, LevelPredictor, PredictionContext, check_levels, project_levels
from ..memory import MemoryStrategy, make_memory
from ..predictors import make_predictor
from .checkpoint import Checkpoint, headings_digest, merge_usage
from .listed import under_listed
from .policies import Walk

__all__ = ["LevelResult", "assign_levels", "plan_steps", "fallback_summary", "CHECKPOINT_FORMAT"]

CHECKPOINT_FORMAT = "structrag-levels-checkpoint/1"
#: ``unreachable=``: whether a server that cannot be reached at all stops the run (else the fallback answers)
_STOP_UNREACHABLE = {"fallback": False, "stop": True}


class LevelResult(NamedTuple):
    """Headings with ``level``, ``level_source`` and ``confidence`` filled, and run statistics."""

    headings: tuple[Heading, ...]
    stats: dict


def plan_steps(headings: Sequence[Heading], granularity: str | int) -> list[tuple[int, int]]:
    """Half-open index ranges of the targets of each step.

    ``"heading"``: one heading per step; ``"page"`` (= 1): the headings of one
    page; an int k: the headings of k consecutive pages, starting at the page
    of the first heading not yet done.
    """
    n = len(headings)
    if granularity == "heading":
        return [(i, i + 1) for i in range(n)]
    if granularity == "page":
        k = 1
    elif isinstance(granularity, int) and not isinstance(granularity, bool):
        k = granularity
    elif isinstance(granularity, str) and granularity.strip().isdigit():
        k = int(granularity)
    else:
        raise ConfigError(
            f"unknown granularity {granularity!r}", hint='use "heading", "page" or a number of pages (1, 2, 4)'
        )
    if k < 1:
        raise ConfigError(f"granularity must be at least 1 page, got {k}")
    steps = []
    i = 0
    while i < n:
        end_page = headings[i].page + k
        j = i + 1
        # a page that goes backwards (rare reading-order quirks) stays in the step
        while j < n and headings[j].page < end_page:
            j += 1
        steps.append((i, j))
        i = j
    return steps


def _granularity_label(granularity: str | int) -> str:
    return str(granularity)


def _resolve(predictor: str | LevelPredictor, options: dict) -> LevelPredictor:
    if isinstance(predictor, str):
        return make_predictor(predictor, **options)
    if options:
        raise ConfigError(
            "predictor options were given with a predictor instance: " + ", ".join(sorted(options)),
            hint="pass them to make_predictor(name, ...) or to the instance's constructor",
        )
    if not isinstance(predictor, LevelPredictor):
        raise ConfigError(f"predictor must be a name or a LevelPredictor, got {type(predictor).__name__}")
    return predictor


def _progress_bar(total: int, enabled: bool | None, desc: str):
    if enabled is None:
        enabled = sys.stderr.isatty() and total >= 200
    from ..._progress import progress_bar  # no tqdm import for a bar nobody sees

    return progress_bar(total, desc=desc, unit="heading", enabled=enabled)


def assign_levels(
    document: Document | None,
    headings: Sequence[Heading],
    *,
    predictor: str | LevelPredictor = "learned",
    memory: str | MemoryStrategy = "recent",
    granularity: str | int = "heading",
    seed: int = 0,
    progress: bool | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    fallback: str | LevelPredictor | None = None,
    fixed_sources: Sequence[str] = ("contents",),
    floor_after_fixed: bool = True,
    document_logic: bool = True,
    nest_looks: bool = False,
    unreachable: Literal["fallback", "stop"] = "fallback",
    **predictor_options: Any,
) -> LevelResult:
    """Give every heading a level with the level-wise memory method.

    ``headings`` are in reading order.  A heading whose ``level`` is set and
    whose ``level_source`` is in ``fixed_sources`` keeps its level (projected
    only if it breaks the level rule); it is not predicted but joins the
    memory, so the others are predicted relative to it.  With
    ``floor_after_fixed``, a predicted heading after a fixed one of level k
    gets a level of at least k+1, unless it was predicted at the level of
    fixed headings that look the same (an unlisted sibling of theirs); and
    after the walk, predicted headings between two listed ones that came out
    shallower than the second are moved, shape kept, under the first
    (:func:`.listed.under_listed`: else the contents' own nesting would break), unless
    the contents list an entry there that was not located.  With
    ``document_logic``, the placements of :mod:`.logic` (a numbered run under the
    heading that names it, end matter back at the top level, nothing under the
    contents page's title) are fixed as they come up (``level_source="logic"``);
    they override even a contents level.  A run member floors the headings after
    it until the next part or item; an exhibit floors the document filed under
    it; signatures and the like floor nothing.  Fixed contents levels are read relative to the listed
    headings present (entries whose listed parent was not located stay siblings),
    and the entries of a secondary contents run (``level_source=
    "contents-secondary"``, level within the run) follow the run's first entry,
    which is predicted.  Other headings' current levels are ignored.  With
    ``nest_looks`` (off by default: it lifts business reports but lowers papers and manuals), after the
    walk a second look among a parent's children nests under the first
    (:func:`.looks.nest_second_look`; fixed and logic levels stay).  The rules of the walk are the
    tables of :mod:`.policies`.
    ``predictor`` is a registered name (``learned``, ``rules``, ``font-size``,
    ``size-rank``, ``numbering``, ``vlm``, ...) built with ``predictor_options``,
    or a :class:`~structrag.levels.base.LevelPredictor`.  ``memory`` is a strategy name
    (``recent``, ``previous-n``, ``random``, ``branches``) or instance;
    ``granularity`` is ``"heading"``, ``"page"`` or a number of pages.
    ``fallback`` (a name or predictor) answers a step the predictor cannot
    (a :class:`BackendError`, or a group still invalid after the retries);
    without one, a backend error propagates — the checkpoint keeps the work.
    A model server that cannot be reached at all
    (:class:`~structrag.errors.BackendUnreachable`) propagates too with
    ``unreachable="stop"``, fallback or not (the command line's choice unless
    ``--fallback`` is given).  Steps that fell back are counted in the stats
    and said in a :class:`~structrag.errors.StructragWarning`.

    Returns a :class:`LevelResult`; ``stats`` holds counts (steps, retries,
    invalid answers, projected headings, fallback steps, resumed steps, fixed
    headings, fixed levels projected, predicted levels raised below a fixed
    heading), the merged ``usage`` of model-backed predictors, per-source
    counts and timing.
    """
    t0 = time.perf_counter()
    headings = tuple(headings)
    keep = frozenset(fixed_sources)
    fixed = [int(h.level) if h.level is not None and h.level_source in keep else None for h in headings]
    logic = _document_logic(headings, document) if document_logic else None
    if unreachable not in _STOP_UNREACHABLE:
        raise ConfigError(f"unreachable must be 'fallback' or 'stop', not {unreachable!r}")
    stop_unreachable = _STOP_UNREACHABLE[unreachable]
    pred = _resolve(predictor, predictor_options)
    fb = _resolve(fallback, {}) if fallback is not None else None
    strategy = make_memory(memory, seed=seed)
    steps = plan_steps(headings, granularity)
    doc_name = document.path if document is not None else None
    stats = _new_stats(pred.name, strategy.name, granularity, len(headings), len(steps), fixed)
    stats["fallback"] = fb.name if fb is not None else None
    walk = Walk(document, headings, fixed, logic, floor_after_fixed, stats)
    ckpt = None
    if checkpoint is not None:
        ckpt = _open_checkpoint(checkpoint, document, headings, fixed, pred, strategy, granularity)
    pred.begin(PredictionContext(document=document, headings=headings))
    if fb is not None:
        fb.begin(PredictionContext(document=document, headings=headings))
    done_steps = _resume(walk, ckpt, steps) if ckpt is not None and ckpt.done else 0

    bar = _progress_bar(len(headings), progress, document.name if document is not None else "levels")
    bar.update(len(walk.levels))
    walk.recover_anchors()
    if ckpt is not None:
        ckpt.open()
    try:
        for s in range(done_steps, len(steps)):
            a, b = steps[s]
            first = len(walk.levels)

            def ask(i: int, j: int, s: int = s) -> tuple[list[int], list[str], list[float], dict]:
                return _predict_step(pred, fb, strategy.build(walk.tree, s), headings[i:j], stats, doc_name,
                                     stop_unreachable=stop_unreachable)

            usage = walk.step(a, b, ask)
            merge_usage(stats["usage"], usage)
            stats["predicted_steps"] += 1
            if ckpt is not None:
                ckpt.write({"step": s, "start": a, "end": b, "levels": walk.levels[first:],
                            "sources": walk.sources[first:],
                            "confidences": [round(c, 6) for c in walk.confidences[first:]], "usage": usage or {}})
            bar.update(b - a)
    finally:
        bar.close()
        if ckpt is not None:
            ckpt.close()
    if stats["fallback_steps"]:
        warnings.warn(StructragWarning(fallback_summary(stats)), stacklevel=2)
    return _finish(walk, document, nest_looks, t0)


def fallback_summary(stats: Mapping[str, Any]) -> str:
    """What a run's fallback did, in one line: how many steps, to which predictor and why (from
    :func:`assign_levels`' stats)."""
    fallback = stats.get("fallback") or ""
    why = [f"{n} {what}" for n, what in ((stats.get("backend_errors", 0), "server errors"),
                                         (stats.get("invalid_answers", 0), "invalid answers")) if n]
    by = f" to the offline {fallback!r} predictor" if fallback else ""
    return (f"{stats['fallback_steps']} of {stats.get('predicted_steps') or stats.get('steps')} level steps fell back"
            f"{by} ({', '.join(why) or 'no answer'}); their headings' level_source is 'fallback'")


def _document_logic(headings: Sequence[Heading], document: Document | None):
    from .logic import DocumentLogic

    logic = DocumentLogic(headings, document)
    return logic if logic.active else None


def _new_stats(predictor: str, memory: str, granularity: str | int, n_headings: int, n_steps: int,
               fixed: Sequence[int | None]) -> dict[str, Any]:
    return {
        "predictor": predictor,
        "memory": memory,
        "granularity": _granularity_label(granularity),
        "headings": n_headings,
        "steps": n_steps,
        "predicted_steps": 0,
        "resumed_steps": 0,
        "retries": 0,
        "invalid_answers": 0,
        "projected": 0,
        "fallback_steps": 0,
        "backend_errors": 0,
        "fixed": sum(1 for f in fixed if f is not None),
        "fixed_projected": 0,
        "raised_below_fixed": 0,
        "logic": 0,
        "secondary_placed": 0,
        "usage": {},
        "sources": {},
    }


def _open_checkpoint(path: str | os.PathLike[str], document: Document | None, headings: Sequence[Heading],
                     fixed: Sequence[int | None], pred: LevelPredictor, strategy: MemoryStrategy,
                     granularity: str | int) -> Checkpoint:
    header = {
        "format": CHECKPOINT_FORMAT,
        "document": document.sha1 if document is not None else None,
        "headings_sha1": headings_digest(headings, fixed),
        "n_headings": len(headings),
        "predictor": pred.name,
        "memory": repr(strategy),
        "granularity": _granularity_label(granularity),
    }
    ckpt = Checkpoint(Path(path), header)
    ckpt.load()
    return ckpt


def _resume(walk: Walk, ckpt: Checkpoint, steps: Sequence[tuple[int, int]]) -> int:
    """Take the steps a checkpoint holds; returns how many."""
    for rec in ckpt.done:
        walk.resume(rec["levels"], rec["sources"], rec["confidences"])
        merge_usage(walk.stats["usage"], rec.get("usage"))
    done_steps = len(ckpt.done)
    walk.stats["resumed_steps"] = done_steps
    if steps[:done_steps] != [(r["start"], r["end"]) for r in ckpt.done]:
        raise ConfigError("checkpoint steps do not match this run's steps", path=ckpt.path,
                          hint="delete it or pass another checkpoint path")
    return done_steps


def _finish(walk: Walk, document: Document | None, nest_looks: bool, t0: float) -> LevelResult:
    """The rules after the walk (predicted runs under listed headings, second looks nested), then the result."""
    stats, headings, levels = walk.stats, walk.headings, walk.levels
    stats["moved_under_listed"] = 0
    if walk.floor_after_fixed:
        levels, stats["moved_under_listed"] = under_listed(levels, walk.held(), walk.fixed, headings)
    stats["look_nested"] = 0
    if nest_looks and document is not None and levels:
        from ..style import describe
        from .looks import nest_second_look

        frozen = [f is not None or held for f, held in zip(walk.fixed, walk.held())]
        levels, stats["look_nested"] = nest_second_look(levels, describe(document, headings), frozen)
    result = tuple(
        replace(h, level=lv, level_source=src, confidence=float(c))
        for h, lv, src, c in zip(headings, levels, walk.sources, walk.confidences)
    )
    for src in walk.sources:
        stats["sources"][src] = stats["sources"].get(src, 0) + 1
    elapsed = time.perf_counter() - t0
    stats["seconds"] = elapsed
    stats["headings_per_s"] = len(headings) / elapsed if elapsed > 0 else float("inf")
    stats["depth"] = max(levels, default=walk.tree.depth) if stats["look_nested"] else walk.tree.depth
    return LevelResult(result, stats)


def _ask(p: LevelPredictor, mem, targets, attempt: int, feedback: str | None, stats: dict,
         doc_name: str | None) -> LevelPrediction:
    try:
        return p.predict(mem, targets, attempt=attempt, feedback=feedback)
    except StructragError as exc:
        exc.with_context(path=doc_name, page=targets[0].page + 1)
        raise


def _predict_step(
    pred: LevelPredictor,
    fb: LevelPredictor | None,
    mem,
    targets: Sequence[Heading],
    stats: dict,
    doc_name: str | None,
    *,
    stop_unreachable: bool = False,
) -> tuple[list[int], list[str], list[float], dict]:
    prev = mem.previous_level
    n = len(targets)
    usage: dict = {}
    answer: LevelPrediction | None = None
    feedback: str | None = None
    used = pred
    try:
        for attempt in range(int(getattr(pred, "max_retries", 0)) + 1):
            if attempt:
                stats["retries"] += 1
            answer = _ask(pred, mem, targets, attempt, feedback, stats, doc_name)
            merge_usage(usage, answer.usage)
            feedback = check_levels(list(answer.levels), prev, n)
            if feedback is None:
                break
            stats["invalid_answers"] += 1
    except BackendError as exc:
        stats["backend_errors"] += 1
        # the failed requests were spent too: count them before falling back (or re-raising)
        merge_usage(usage, getattr(exc, "usage", None))
        if fb is None or (stop_unreachable and isinstance(exc, BackendUnreachable)):
            raise
        answer, feedback = None, "backend error"
    if feedback is not None and fb is not None and (answer is None or n > 1):
        # the fallback answers the whole step; it is validated like any predictor
        stats["fallback_steps"] += 1
        used = fb
        answer = _ask(fb, mem, targets, 0, None, stats, doc_name)
        merge_usage(usage, answer.usage)
        feedback = check_levels(list(answer.levels), prev, n)
        if feedback is not None:
            stats["invalid_answers"] += 1
    assert answer is not None
    raw = list(answer.levels)
    confs = [float(c) for c in answer.confidences] if answer.confidences is not None else []
    srcs = list(answer.sources) if answer.sources is not None else []
    if len(raw) != n:
        # a wrong count cannot be aligned to the targets: keep what lines up, pad with "stay"
        raw = (raw + [None] * n)[:n]  # type: ignore[list-item]
    confs = (confs + [0.0] * n)[:n]
    srcs = (srcs + [used.source] * n)[:n]
    srcs = [s if s else used.source for s in srcs]
    if used is fb:
        srcs = ["fallback"] * n
    levels = list(project_levels(raw, prev)) if feedback is not None else [int(x) for x in raw]
    if feedback is not None:
        for i, (r, lv) in enumerate(zip(raw, levels)):
            if r != lv:
                stats["projected"] += 1
                srcs[i] = "projected"
                confs[i] = 0.0
    return levels, srcs, confs, usage
