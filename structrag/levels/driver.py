"""The level-reconstruction driver: the level-wise memory walk over the headings without a level.

:func:`assign_levels` walks a document's headings in reading order, one step
at a time (one heading, the headings of one page, or of k pages).  Per step it
builds the memory with the chosen strategy, asks the predictor, validates the
answer with :func:`~.base.check_levels`, asks again with feedback (up to the
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
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple, Sequence

from ..errors import BackendError, ConfigError, StructragError
from ..headings.contents import SECONDARY
from ..model import Document, Heading
from .base import LevelPrediction, LevelPredictor, PredictionContext, check_levels, project_levels
from .memory import MemoryStrategy, TreeState, make_memory
from .checkpoint import Checkpoint, headings_digest, merge_usage
from .listed import relative_fixed, under_listed
from .predictors import make_predictor

__all__ = ["LevelResult", "assign_levels", "plan_steps", "CHECKPOINT_FORMAT"]

CHECKPOINT_FORMAT = "structrag-levels-checkpoint/1"


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
    from .._progress import progress_bar  # no tqdm import for a bar nobody sees

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
    ``nest_looks`` (off by default: ``eval/RESULTS.md`` section 33), after the walk a
    second look among a parent's children nests under the first
    (:func:`.looks.nest_second_look`; fixed and logic levels stay).
    ``predictor`` is a registered name (``learned``, ``rules``, ``font-size``,
    ``size-rank``, ``numbering``, ``vlm``, ...) built with ``predictor_options``,
    or a :class:`~.base.LevelPredictor`.  ``memory`` is a strategy name
    (``recent``, ``previous-n``, ``random``, ``branches``) or instance;
    ``granularity`` is ``"heading"``, ``"page"`` or a number of pages.
    ``fallback`` (a name or predictor) answers a step the predictor cannot
    (a :class:`BackendError`, or a group still invalid after the retries);
    without one, a backend error propagates — the checkpoint keeps the work.

    Returns a :class:`LevelResult`; ``stats`` holds counts (steps, retries,
    invalid answers, projected headings, fallback steps, resumed steps, fixed
    headings, fixed levels projected, predicted levels raised below a fixed
    heading), the merged ``usage`` of model-backed predictors, per-source
    counts and timing.
    """
    t0 = time.perf_counter()
    headings = tuple(headings)
    keep = frozenset(fixed_sources)
    fixed: list[int | None] = [
        int(h.level) if h.level is not None and h.level_source in keep else None for h in headings
    ]
    logic = None
    if document_logic:
        from .logic import DocumentLogic

        logic = DocumentLogic(headings, document)
        if not logic.active:
            logic = None
    # a secondary contents run's levels hold within the run: its first entry is predicted, the rest follow it
    in_run: list[int | None] = [
        int(h.level) if f is None and h.level is not None and h.level_source == SECONDARY else None
        for h, f in zip(headings, fixed)
    ]
    pred = _resolve(predictor, predictor_options)
    fb = _resolve(fallback, {}) if fallback is not None else None
    strategy = make_memory(memory, seed=seed)
    steps = plan_steps(headings, granularity)
    doc_name = document.path if document is not None else None
    stats: dict[str, Any] = {
        "predictor": pred.name,
        "memory": strategy.name,
        "granularity": _granularity_label(granularity),
        "headings": len(headings),
        "steps": len(steps),
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
    state = TreeState(headings)
    out_levels: list[int] = []
    out_sources: list[str] = []
    out_conf: list[float] = []

    ckpt: Checkpoint | None = None
    if checkpoint is not None:
        header = {
            "format": CHECKPOINT_FORMAT,
            "document": document.sha1 if document is not None else None,
            "headings_sha1": headings_digest(headings, fixed),
            "n_headings": len(headings),
            "predictor": pred.name,
            "memory": repr(strategy),
            "granularity": _granularity_label(granularity),
        }
        ckpt = Checkpoint(Path(checkpoint), header)
        ckpt.load()

    pred.begin(PredictionContext(document=document, headings=headings))
    if fb is not None:
        fb.begin(PredictionContext(document=document, headings=headings))

    done_steps = 0
    if ckpt is not None and ckpt.done:
        for rec in ckpt.done:
            for lv in rec["levels"]:
                state.push(int(lv))
            out_levels.extend(int(x) for x in rec["levels"])
            out_sources.extend(rec["sources"])
            out_conf.extend(float(c) for c in rec["confidences"])
            merge_usage(stats["usage"], rec.get("usage"))
        done_steps = len(ckpt.done)
        stats["resumed_steps"] = done_steps
        if steps[:done_steps] != [(r["start"], r["end"]) for r in ckpt.done]:
            raise ConfigError("checkpoint steps do not match this run's steps", path=ckpt.path,
                              hint="delete it or pass another checkpoint path")

    bar = _progress_bar(len(headings), progress, document.name if document is not None else "levels")
    bar.update(len(out_levels))
    # level of the last fixed heading so far (0: none yet); a resumed run recovers it from the done part
    last_fixed = next((out_levels[i] for i in range(len(out_levels) - 1, -1, -1)
                       if fixed[i] is not None or out_sources[i] == "logic"), 0)
    floor_ends_at_body = False  # whether the last floor came from the document's logic
    # the levels given to fixed headings of each look: a predicted heading that looks like the fixed
    # headings of the level it was given is an unlisted sibling of theirs (an entry the contents lost), not a
    # sub-section; one look may be given several levels (a contents that nests a title under its like)
    looks: list[tuple] = []
    fixed_look: dict[tuple, set[int]] = {}
    if floor_after_fixed and (any(f is not None for f in list(fixed) + list(in_run)) or logic is not None):
        from .style import describe, style_key

        # the look includes the numbering scheme: "（一）" set like "一、" is still one level down
        looks = [(style_key(x), x.numbering.scheme if x.numbering is not None else None)
                 for x in describe(document, headings)]
        for i in range(len(out_levels)):
            if fixed[i] is not None or out_sources[i] == "logic":
                fixed_look.setdefault(looks[i], set()).add(out_levels[i])
    # (contents level, level given) of the fixed headings on the current branch of the contents: a fixed
    # level is read relative to the listed headings present, so entries whose listed parent was not
    # located stay siblings of each other instead of stepping down one level each
    listed: list[tuple[int, int]] = []
    for i in range(len(out_levels)):
        if fixed[i] is not None:
            relative_fixed(listed, int(fixed[i]), out_levels[i])  # type: ignore[arg-type]
    run: list[tuple[int, int]] = []  # the same for the secondary run being placed
    for i in range(len(out_levels)):
        if fixed[i] is not None or out_sources[i] == "logic":
            run.clear()
        elif in_run[i] is not None:
            relative_fixed(run, int(in_run[i]), out_levels[i])  # type: ignore[arg-type]
    if ckpt is not None:
        ckpt.open()
    try:
        for s in range(done_steps, len(steps)):
            a, b = steps[s]
            levels, sources, confs = [], [], []
            usage: dict = {}
            i = a
            while i < b:
                # the document's logic places a heading from the levels given before it, so it is asked here
                placed = logic.level(i, out_levels + levels, fixed) if logic is not None and logic.covers(i) else None
                c = in_run[i]
                if placed is None and c is not None and run and run[0][0] <= c:
                    placed = (relative_fixed(run, c), SECONDARY)
                if fixed[i] is not None or placed is not None:
                    want = placed[0] if placed is not None else relative_fixed(listed, int(fixed[i]))  # type: ignore[arg-type]
                    lv = min(max(want, 1), state.previous_level + 1)
                    if logic is not None and i - 1 in logic.leaves:
                        lv = min(lv, state.previous_level)  # nothing nests under the contents page's title
                    if lv != want:
                        stats["fixed_projected"] += 1
                    if c is not None and placed is not None and placed[1] == SECONDARY:
                        relative_fixed(run, c, lv)
                    else:
                        run.clear()  # the main contents or the document's logic speaks: a secondary run ends
                    if placed is None:
                        relative_fixed(listed, int(fixed[i]), lv)  # type: ignore[arg-type]
                    state.push(lv)
                    last_fixed = lv
                    # a logic placement floors what follows only inside its run: a part or item after
                    # the last note is the body going on, not a note's sub-section
                    floor_ends_at_body = placed is not None and placed[1] != SECONDARY
                    if floor_ends_at_body and placed[1] == "end matter":  # type: ignore[index]
                        last_fixed = 0  # the body is over: nothing listed before floors what follows
                    # (an exhibit floors what follows: the document filed under it, its own contents included)
                    if looks and (placed is None or placed[1] not in ("end matter", "beside the other statements")):
                        # signatures head nothing, and a statement's title is set like the notes' sub-headings
                        # in many filings: their look says nothing about the headings around them
                        fixed_look.setdefault(looks[i], set()).add(lv)
                    levels.append(lv)
                    if placed is not None and placed[1] == SECONDARY:
                        stats["secondary_placed"] += 1
                        sources.append(SECONDARY)
                        confs.append(1.0)
                    elif placed is not None:
                        stats["logic"] += 1
                        sources.append("logic")
                        confs.append(1.0)
                    else:
                        sources.append(headings[i].level_source or "fixed")
                        confs.append(1.0 if headings[i].confidence is None else float(headings[i].confidence))
                    i += 1
                    continue
                j = i + 1
                while j < b and fixed[j] is None and in_run[j] is None and not (
                        logic is not None and (logic.covers(j) or j - 1 in logic.leaves)):
                    j += 1
                # the targets between fixed headings: predicted with the memory that holds the fixed ones
                mem = strategy.build(state, s)
                lvs, srcs, cfs, use = _predict_step(pred, fb, mem, headings[i:j], stats, doc_name)
                if floor_after_fixed and last_fixed:
                    raised, prev = [], state.previous_level
                    for k, lv in enumerate(lvs):
                        if floor_ends_at_body and looks[i + k][1] in ("part", "item"):
                            last_fixed = 0  # the run is over: the body goes on
                        if not last_fixed:
                            pass  # no floor any more
                        elif lv in fixed_look.get(looks[i + k], ()):
                            last_fixed = lv  # an unlisted sibling of listed sections: it anchors what follows
                        else:
                            lv = max(lv, min(last_fixed + 1, prev + 1))
                        raised.append(lv)
                        prev = lv
                    stats["raised_below_fixed"] += sum(1 for x, y in zip(lvs, raised) if x != y)
                    lvs = raised
                if logic is not None and i - 1 in logic.leaves and lvs and lvs[0] > state.previous_level:
                    # nothing nests under the contents page's title: the step moves up beside it
                    lvs = list(project_levels([min(lvs[0], state.previous_level)] + list(lvs[1:]),
                                              state.previous_level))
                for k, lv in enumerate(lvs):
                    state.push(lv)
                    if in_run[i + k] is not None:
                        # a secondary run's entry predicted (its first, or one shallower than the run so far)
                        if not run or run[0][0] > in_run[i + k]:  # type: ignore[operator]
                            run.clear()
                        relative_fixed(run, int(in_run[i + k]), lv)  # type: ignore[arg-type]
                levels.extend(lvs)
                sources.extend(srcs)
                confs.extend(cfs)
                merge_usage(usage, use)
                i = j
            out_levels.extend(levels)
            out_sources.extend(sources)
            out_conf.extend(confs)
            merge_usage(stats["usage"], usage)
            stats["predicted_steps"] += 1
            if ckpt is not None:
                ckpt.write({"step": s, "start": a, "end": b, "levels": list(levels), "sources": list(sources),
                            "confidences": [round(c, 6) for c in confs], "usage": usage or {}})
            bar.update(b - a)
    finally:
        bar.close()
        if ckpt is not None:
            ckpt.close()

    stats["moved_under_listed"] = 0
    if floor_after_fixed:
        out_levels, stats["moved_under_listed"] = under_listed(out_levels, out_sources, fixed, headings)
    stats["look_nested"] = 0
    if nest_looks and document is not None and out_levels:
        from .looks import nest_second_look
        from .style import describe

        frozen = [f is not None or src in ("logic", SECONDARY) for f, src in zip(fixed, out_sources)]
        out_levels, stats["look_nested"] = nest_second_look(out_levels, describe(document, headings), frozen)
    result = tuple(
        replace(h, level=lv, level_source=src, confidence=float(c))
        for h, lv, src, c in zip(headings, out_levels, out_sources, out_conf)
    )
    for src in out_sources:
        stats["sources"][src] = stats["sources"].get(src, 0) + 1
    elapsed = time.perf_counter() - t0
    stats["seconds"] = elapsed
    stats["headings_per_s"] = len(headings) / elapsed if elapsed > 0 else float("inf")
    stats["depth"] = max(out_levels, default=state.depth) if stats["look_nested"] else state.depth
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
        if fb is None:
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
