"""Prompts of the level-wise memory method and a lenient parser for the answers.

The prompt lists the numbered page images, then the known headings as a JSON
list of ``{"title", "level": "H1".."Hk", "image_id"}``, then the headings to
predict as ``{"id", "title", "image_id"}``, and asks for JSON only mapping
each id to ``"Hk"``.  The text-only form replaces ``image_id`` with the page
number and the heading's bbox in points.  Answers are parsed leniently (code
fences, ``<think>`` blocks, stray prose, ``"h2"``/``2``/``"Level 2"``) and
validated strictly (every id present, no unknown id, integer levels); the
level *range* is the driver's check (:func:`structrag.levels.base.check_levels`).
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

__all__ = [
    "SYSTEM_PROMPT",
    "KNOWN_MARKER",
    "TARGETS_MARKER",
    "AnswerError",
    "parse_level_map",
    "step_instructions",
    "level_label",
]

KNOWN_MARKER = "Known headings"
TARGETS_MARKER = "Headings to assign"

SYSTEM_PROMPT = (
    "You reconstruct the heading hierarchy of a long document. Level H1 is the top level, H2 a "
    "sub-heading of the H1 before it, and so on. Judge each heading's level from its visual style "
    "(size, weight, colour, indentation, numbering) compared with headings whose levels are already "
    "known, and from the numbering and wording of the titles. A heading can be at most one level deeper "
    "than the heading right before it. Answer with JSON only."
)


def level_label(level: int) -> str:
    return f"H{int(level)}"


class AnswerError(ValueError):
    """The answer cannot be used; ``str(err)`` is the feedback for a retry."""


_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_LEVEL = re.compile(r"^\s*(?:h|level\s*|heading\s*(?:level\s*)?)?(-?\d+)\s*$", re.I)


def _level_value(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        m = _LEVEL.match(v)
        if m:
            return int(m.group(1))
    if isinstance(v, Mapping) and "level" in v:
        return _level_value(v["level"])
    return None


def _json_candidates(text: str):
    """JSON values found in ``text``: fenced blocks first, then every decodable ``{``/``[``."""
    dec = json.JSONDecoder()
    seen: set[int] = set()
    for m in _FENCE.finditer(text):
        body = m.group(1).strip()
        try:
            yield json.loads(body)
        except ValueError:
            pass
    for i, ch in enumerate(text):
        if ch not in "{[" or i in seen:
            continue
        try:
            value, end = dec.raw_decode(text, i)
        except ValueError:
            continue
        seen.update(range(i, end))
        yield value


def _as_mapping(value: Any) -> dict[str, Any] | None:
    """Turn the accepted answer shapes into ``{id: level value}``."""
    if isinstance(value, Mapping):
        # {"levels": {...}} / {"answer": {...}}: a single wrapper object
        if len(value) == 1:
            (inner,) = value.values()
            if isinstance(inner, (Mapping, list)) and not isinstance(inner, str):
                got = _as_mapping(inner)
                if got:
                    return got
        return {str(k): v for k, v in value.items()}
    if isinstance(value, list):
        out: dict[str, Any] = {}
        for item in value:
            if isinstance(item, Mapping) and "id" in item and "level" in item:
                out[str(item["id"])] = item["level"]
            else:
                return None
        return out
    return None


def parse_level_map(text: str, ids: Sequence[str], *, allow_missing: bool = False) -> dict[str, int]:
    """``{id: level}`` for ``ids`` from a model's answer; raises :class:`AnswerError`.

    Ids match case-insensitively.  With ``allow_missing`` an answer that
    covers only some ids is accepted (the whole-document baseline keeps what
    it got); otherwise every id must be present.  Unknown ids are always an
    error: they mean the model answered another question.
    """
    if not text or not text.strip():
        raise AnswerError("the answer was empty; reply with a JSON object mapping each id to a level")
    text = _THINK.sub("", text)
    want = {i.lower(): i for i in ids}
    best: dict[str, Any] | None = None
    for cand in _json_candidates(text):
        m = _as_mapping(cand)
        if not m:
            continue
        hits = sum(1 for k in m if k.strip().lower() in want)
        if hits and (best is None or hits > sum(1 for k in best if k.strip().lower() in want)):
            best = m
            if hits == len(want):
                break
    if best is None:
        raise AnswerError(
            "the answer contained no JSON object mapping the ids to levels; reply with JSON only, e.g. "
            + json.dumps({i: "H1" for i in list(ids)[:2]})
        )
    out: dict[str, int] = {}
    unknown: list[str] = []
    bad: list[str] = []
    for k, v in best.items():
        key = want.get(k.strip().lower())
        if key is None:
            unknown.append(k)
            continue
        lv = _level_value(v)
        if lv is None:
            bad.append(f"{key}: {v!r}")
        else:
            out[key] = lv
    if unknown:
        raise AnswerError(f"unknown ids {', '.join(unknown[:10])}; answer only for {', '.join(ids)}")
    if bad:
        raise AnswerError(f"levels must look like \"H2\": got {'; '.join(bad[:10])}")
    missing = [i for i in ids if i not in out]
    if missing and not allow_missing:
        raise AnswerError(f"no level for {', '.join(missing[:20])}; give a level for every id")
    return out


def step_instructions(target_ids: Sequence[str], previous: tuple[str, int] | None, depth: int) -> str:
    """The closing instructions of a step prompt (range hint and answer shape)."""
    first = target_ids[0]
    lines = []
    if previous is None:
        lines.append(f"{first} is the first heading of the document, so it is H1.")
    else:
        title, lv = previous
        lines.append(
            f"The heading right before {first} is {json.dumps(title, ensure_ascii=False)} at {level_label(lv)}; "
            f"so {first} can be H1..{level_label(lv + 1)}."
        )
    if len(target_ids) > 1:
        lines.append("The ids are in reading order; each can be at most one level deeper than the one before it.")
    if depth:
        lines.append(f"The deepest level so far is {level_label(depth)}.")
    example = json.dumps({i: "H1" for i in target_ids[:2]})
    lines.append(f"Answer with JSON only, mapping every id to its level, like {example}.")
    return "\n".join(lines)
