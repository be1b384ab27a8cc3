"""Model-backed level predictors: ``vlm``, ``llm`` (text only) and ``whole-document``.

All three implement :class:`structrag.levels.base.LevelPredictor`, so the
level driver gives them the level-wise memory, validates their answers,
asks again with feedback (``max_retries`` = 2), projects a single heading that
stays out of range, and falls back to the offline predictor for a step that
raises :class:`~structrag.errors.BackendError`.

The request budget, the retries and the accounting are :mod:`._chat`'s.
"""

from __future__ import annotations

import json
from typing import Any, Literal, Sequence

from ...errors import BackendError, BackendResponseError, ConfigError
from ...model import Heading
from ..base import LevelPrediction, Memory, PredictionContext
from ._prompt import (
    KNOWN_MARKER,
    SYSTEM_PROMPT,
    TARGETS_MARKER,
    AnswerError,
    level_label,
    parse_level_map,
    step_instructions,
)
from ._render import PageRenderer

from ._chat import USAGE_KEYS, _ChatPredictor, _bbox_text, _new_usage, _target_ids

__all__ = ["VLMPredictor", "LLMPredictor", "WholeDocumentPredictor", "USAGE_KEYS"]


class VLMPredictor(_ChatPredictor):
    """The paper's multimodal predictor: page images with boxes, known headings, targets.

    Images are the memory pages (at most the current depth) then the target
    pages not among them, rendered at ``zoom`` × the page size in points
    (1.0: the original size, 72 dpi).  Known headings are outlined in blue and
    labelled with their level, targets in red with their id.  Options besides
    the client's (``base_url``, ``api_key``, ``model``, ``timeout``,
    ``max_concurrency``, ``http_client``, ...): ``zoom``, ``image_format``
    (``png`` | ``jpeg``), ``max_cache_bytes`` of the render cache,
    ``max_encoded`` drawn images kept for reuse (64),
    ``max_retries`` (2), ``max_consecutive_failures`` (5), ``json_mode``
    (ask the server for ``response_format=json_object``; off by default, not
    every server has it).
    """

    name = "vlm"
    source = "vlm"

    def __init__(
        self,
        *,
        zoom: float = 1.0,
        image_format: Literal["png", "jpeg"] = "png",
        max_cache_bytes: int = 512 << 20,
        max_encoded: int = 64,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        if not zoom or zoom <= 0 or zoom > 8:
            raise ConfigError(f"zoom must be in (0, 8], got {zoom!r}")
        if image_format not in ("png", "jpeg"):
            raise ConfigError(f"image_format must be 'png' or 'jpeg', got {image_format!r}")
        self.zoom = float(zoom)
        self.image_format = image_format
        self.max_cache_bytes = int(max_cache_bytes)
        self.max_encoded = int(max_encoded)
        self.renderer: PageRenderer | None = None

    def begin(self, context: PredictionContext) -> None:
        super().begin(context)
        if self.renderer is not None:
            self.renderer.close()
            self.renderer = None
        if context.document is None or not context.document.path:
            raise ConfigError(
                "the vlm backend renders the PDF's pages and needs the document",
                hint="pass the Document (from structrag.extract) or use the text-only `llm` backend",
            )
        self.renderer = PageRenderer(context.document.path, zoom=self.zoom, image_format=self.image_format,
                                     max_cache_bytes=self.max_cache_bytes, max_encoded=self.max_encoded)

    def close(self) -> None:
        if self.renderer is not None:
            self.renderer.close()
            self.renderer = None
        super().close()

    def _content(self, memory: Memory, targets: Sequence[Heading], ids: Sequence[str],
                 usage: dict) -> tuple[list, int]:
        assert self.renderer is not None, "begin() was not called"
        pages: list[int] = list(memory.pages)
        for t in targets:
            if t.page not in pages:
                pages.append(t.page)
        image_id = {p: i + 1 for i, p in enumerate(pages)}
        boxes: dict[int, list] = {p: [] for p in pages}
        for k in memory.known:
            h = k.heading
            if h.bbox is not None and h.page in boxes:
                boxes[h.page].append((h.bbox, level_label(k.level), "known"))
        for i, t in zip(ids, targets):
            if t.bbox is not None:
                boxes[t.page].append((t.bbox, i, "target"))
        r0, h0 = self.renderer.renders, self.renderer.hits
        content: list[dict] = [{"type": "text", "text": f"Page images ({len(pages)}), numbered in order:"}]
        b64 = 0
        for p in pages:
            url, nbytes, w, h = self.renderer.data_url(p, boxes[p])
            usage["image_bytes"] += nbytes
            usage["image_pixels"] += w * h
            b64 += len(url)
            content.append({"type": "text", "text": f"Image {image_id[p]} (page {p + 1}):"})
            content.append({"type": "image_url", "image_url": {"url": url}})
        usage["pages_rendered"] += self.renderer.renders - r0
        usage["render_cache_hits"] += self.renderer.hits - h0
        known = [
            {"title": k.heading.text, "level": level_label(k.level),
             "image_id": image_id.get(k.heading.page)}
            for k in memory.known
        ]
        tlist = [{"id": i, "title": t.text, "image_id": image_id[t.page]} for i, t in zip(ids, targets)]
        prev = (memory.previous.heading.text, memory.previous.level) if memory.previous is not None else None
        text = (
            f"{KNOWN_MARKER} (levels assigned; outlined in blue with their level on the images):\n"
            f"{json.dumps(known, ensure_ascii=False)}\n\n"
            f"{TARGETS_MARKER} (outlined in red with their id on the images):\n"
            f"{json.dumps(tlist, ensure_ascii=False)}\n\n"
            + step_instructions(ids, prev, memory.depth)
        )
        content.append({"type": "text", "text": text})
        return content, b64


class LLMPredictor(_ChatPredictor):
    """Text-only variant: the same memory and prompt, no images, bboxes as text.

    Known headings are ``{"title", "level", "page", "bbox"}`` and targets
    ``{"id", "title", "page", "bbox"}`` (bbox ``[x0, y0, x1, y1]`` in points,
    origin top-left; page sizes listed).  ``include_style`` adds each
    heading's font size and bold flag (not in the paper's text-only variant;
    off by default).
    """

    name = "llm"
    source = "llm"

    def __init__(self, *, include_style: bool = False, **options: Any) -> None:
        super().__init__(**options)
        self.include_style = bool(include_style)

    def _item(self, h: Heading) -> dict:
        d: dict[str, Any] = {"title": h.text, "page": h.page + 1, "bbox": _bbox_text(h.bbox)}
        if self.include_style:
            d["font_size"] = round(h.size, 1)
            d["bold"] = h.bold
        return d

    def _content(self, memory: Memory, targets: Sequence[Heading], ids: Sequence[str],
                 usage: dict) -> tuple[str, int]:
        doc = self._context.document if self._context is not None else None
        pages = sorted({k.heading.page for k in memory.known} | {t.page for t in targets})
        sizes = ""
        if doc is not None:
            sizes = "Page sizes in points (width x height): " + ", ".join(
                f"page {p + 1}: {doc.page_sizes[p][0]:.0f}x{doc.page_sizes[p][1]:.0f}"
                for p in pages if 0 <= p < len(doc.page_sizes)
            ) + ".\n\n"
        known = []
        for k in memory.known:
            d = self._item(k.heading)
            d = {"title": d.pop("title"), "level": level_label(k.level), **d}
            known.append(d)
        tlist = [{"id": i, **self._item(t)} for i, t in zip(ids, targets)]
        prev = (memory.previous.heading.text, memory.previous.level) if memory.previous is not None else None
        return ((
            "Headings of a PDF, with their page (1-based) and bounding box [x0, y0, x1, y1] in points "
            "from the top-left corner of the page.\n" + sizes
            + f"{KNOWN_MARKER} (levels assigned):\n{json.dumps(known, ensure_ascii=False)}\n\n"
            + f"{TARGETS_MARKER}:\n{json.dumps(tlist, ensure_ascii=False)}\n\n"
            + step_instructions(ids, prev, memory.depth)
        ), 0)


class WholeDocumentPredictor(_ChatPredictor):
    """The one-prompt baseline (as MinerU does): every heading in one text request.

    The first :meth:`predict` of a document sends all headings (id, title,
    page, and font size / bold unless ``include_style=False``) and keeps the
    answer; every step then reads its targets' levels from it, without
    another request.  An answer that does not parse, or misses ids, is asked
    again up to ``max_request_retries`` times (the whole prompt each time);
    ids still missing raise :class:`BackendResponseError` at their step, so
    the driver falls back for them.  ``max_retries`` is 0: asking again for a
    step would give the same answer, so out-of-range levels are projected.
    """

    name = "whole-document"
    source = "llm"

    def __init__(self, *, include_style: bool = True, max_request_retries: int = 2, **options: Any) -> None:
        options.setdefault("max_retries", 0)
        super().__init__(**options)
        self.include_style = bool(include_style)
        self.max_request_retries = int(max_request_retries)
        self._answer: dict[int, int] | None = None
        self._failed: BackendError | None = None
        self._index: dict[tuple, list[int]] = {}
        self._pending_usage: dict | None = None

    def begin(self, context: PredictionContext) -> None:
        super().begin(context)
        self._answer = None
        self._failed = None
        self._index = {}
        for i, h in enumerate(context.headings):
            self._index.setdefault((h.page, h.block, h.text), []).append(i)

    def _prompt(self) -> tuple[str, list[str]]:
        assert self._context is not None
        hs = self._context.headings
        ids = _target_ids(len(hs))
        items = []
        for i, h in zip(ids, hs):
            d: dict[str, Any] = {"id": i, "title": h.text, "page": h.page + 1}
            if self.include_style:
                d["font_size"] = round(h.size, 1)
                d["bold"] = h.bold
            items.append(d)
        text = (
            "Below are all the headings of a document in reading order, with their page (1-based)"
            + (" and font size / weight" if self.include_style else "")
            + ". Assign each one a level (H1 = top level; a heading is at most one level deeper than the heading "
            "before it; the first heading is H1).\n\n"
            f"{TARGETS_MARKER}:\n{json.dumps(items, ensure_ascii=False)}\n\n"
            f"Answer with JSON only, mapping every id to its level, like {json.dumps({i: 'H1' for i in ids[:2]})}."
        )
        return text, ids

    def _fetch(self) -> None:
        usage = _new_usage()
        text, ids = self._prompt()
        feedback = None
        got: dict[str, int] = {}
        try:
            for _ in range(1 + self.max_request_retries):
                user = text if not feedback else (
                    text + f"\n\nYour previous answer was rejected: {feedback}. Answer again with JSON only.")
                messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]
                n = len(SYSTEM_PROMPT) + len(user)
                usage["prompt_chars"] += n
                res = self._request(messages, usage, 0, n)
                try:
                    part = parse_level_map(res.text, ids, allow_missing=True)
                except AnswerError as exc:
                    usage["parse_errors"] += 1
                    feedback = str(exc)
                    continue
                got.update(part)
                missing = [i for i in ids if i not in got]
                if not missing:
                    break
                usage["parse_errors"] += 1
                feedback = f"no level for {', '.join(missing[:20])}{' ...' if len(missing) > 20 else ''}"
        except BackendError as err:
            self._failed = err
        self._answer = {int(k[1:]) - 1: v for k, v in got.items()}
        self._commit(usage)
        self._pending_usage = usage

    def predict(self, memory: Memory, targets: Sequence[Heading], *, attempt: int = 0,
                feedback: str | None = None) -> LevelPrediction:
        if not targets:
            return LevelPrediction((), (), usage=_new_usage())
        if self._answer is None:
            self._fetch()
        usage, self._pending_usage = (self._pending_usage or _new_usage()), None
        levels: list[int] = []
        used: dict[tuple, int] = {}
        for t in targets:
            key = (t.page, t.block, t.text)
            cands = self._index.get(key, [])
            k = used.get(key, 0)
            used[key] = k + 1
            idx = cands[min(k, len(cands) - 1)] if cands else None
            lv = self._answer.get(idx) if idx is not None and self._answer else None
            if lv is None:
                why = f"the whole-document request failed: {self._failed}" if self._failed is not None else \
                    f"the whole-document answer has no level for {t.text!r}"
                err: BackendError = BackendError(why, page=t.page + 1) if self._failed is not None \
                    else BackendResponseError(why, page=t.page + 1)
                err.usage = usage  # type: ignore[attr-defined]
                raise err
            levels.append(lv)
        return LevelPrediction(tuple(levels), (1.0,) * len(levels), usage=usage)
