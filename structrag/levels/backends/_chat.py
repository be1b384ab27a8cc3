"""The machinery the model-server predictors share: the client, the per-step request budget and the
accounting of what each step spent (:data:`USAGE_KEYS`).

Per step a predictor spends at most ``1 + max_retries`` requests, whoever asks
for them: an answer that does not parse (no JSON, a missing or unknown id) is
asked again at once with the parser's complaint as feedback; one that parses
but breaks the level rule goes back to the driver, which asks again with its
own feedback.  When the budget is spent the last parsed answer is returned
again (the driver then projects it) or, when nothing parsed,
:class:`~structrag.errors.BackendResponseError` is raised (the driver falls
back).  Every request is counted in the step's ``LevelPrediction.usage``; a
step that raises carries what it spent in ``err.usage``.  After
``max_consecutive_failures`` steps in a row that got no HTTP answer (or at
once on 401/403/404) the predictor stops calling the server for the rest of
the document and raises straight away, so a dead server costs seconds, not a
time-out per heading.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from ...errors import BackendError, BackendResponseError, ConfigError
from ...model import Heading
from ..base import LevelPrediction, Memory, PredictionContext
from ._client import ChatClient
from ._prompt import SYSTEM_PROMPT, AnswerError, parse_level_map

__all__ = ["USAGE_KEYS"]

#: Keys of the per-step ``usage`` dicts (all additive, so a driver can sum them).
USAGE_KEYS = (
    "calls",
    "failed_calls",
    "http_retries",
    "wait_s",
    "parse_errors",
    "images",
    "image_bytes",
    "image_pixels",
    "prompt_chars",
    "prompt_tokens",
    "completion_tokens",
    "request_bytes",
    "pages_rendered",
    "render_cache_hits",
    "skipped_calls",
)

_CLIENT_OPTIONS = ("base_url", "api_key", "model", "timeout", "max_concurrency", "http_client",
                   "max_http_retries", "max_wait", "temperature", "max_tokens", "extra_body", "openai_client")


def _new_usage() -> dict[str, float]:
    return {k: 0 for k in USAGE_KEYS}


def _add(into: dict, other: Mapping[str, Any]) -> None:
    for k, v in other.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            into[k] = into.get(k, 0) + v


def _bbox_text(b) -> list[float] | None:
    return [round(v, 1) for v in b] if b is not None else None


def _target_ids(n: int) -> list[str]:
    return [f"T{i + 1}" for i in range(n)]


class _ChatPredictor:
    """Shared machinery: the client, the per-step request budget, the accounting."""

    name = "chat"
    source = "llm"
    max_retries = 2

    def __init__(
        self,
        *,
        client: ChatClient | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str | None = None,
        timeout: float = 120.0,
        max_concurrency: int = 4,
        max_http_retries: int = 4,
        max_wait: float = 30.0,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        extra_body: Mapping[str, Any] | None = None,
        http_client: Any = None,
        openai_client: Any = None,
        max_retries: int = 2,
        max_consecutive_failures: int = 5,
        json_mode: bool = False,
    ) -> None:
        if max_retries < 0:
            raise ConfigError(f"max_retries must be >= 0, got {max_retries!r}")
        if client is None:
            client = ChatClient(
                base_url=base_url, api_key=api_key, model=model, timeout=timeout,
                max_concurrency=max_concurrency, max_retries=max_http_retries, max_wait=max_wait,
                temperature=temperature, max_tokens=max_tokens, extra_body=extra_body,
                http_client=http_client, openai_client=openai_client,
            )
        self.client = client
        self.max_retries = int(max_retries)
        self.max_consecutive_failures = int(max_consecutive_failures)
        self.json_mode = bool(json_mode)
        self.usage: dict[str, float] = _new_usage()
        self.usage["max_images_per_call"] = 0
        self.disabled: str | None = None
        self._context: PredictionContext | None = None
        self._consecutive_failures = 0
        self._step_key: tuple | None = None
        self._step_requests = 0
        self._step_last: tuple[int, ...] | None = None

    # -- protocol ----------------------------------------------------------
    def begin(self, context: PredictionContext) -> None:
        self._context = context
        self.usage = _new_usage()
        self.usage["max_images_per_call"] = 0
        self.disabled = None
        self._consecutive_failures = 0
        self._step_key = None

    def close(self) -> None:
        """Release the HTTP client (and any renderer)."""
        self.client.close()

    def stats(self) -> dict[str, float]:
        """This document's accounting so far (additive keys plus ``max_images_per_call``)."""
        out = dict(self.usage)
        out["wait_s"] = round(out.get("wait_s", 0.0), 3)
        if self.disabled:
            out["disabled"] = self.disabled  # type: ignore[assignment]
        return out

    # -- to be provided by subclasses --------------------------------------
    def _content(self, memory: Memory, targets: Sequence[Heading], ids: Sequence[str],
                 usage: dict) -> tuple[list | str, int]:
        """The user message content and the size of its encoded images (chars)."""
        raise NotImplementedError

    # -- the step ----------------------------------------------------------
    def _request(self, messages: list[dict], usage: dict, n_images: int, request_bytes: int):
        """One request, counted into ``usage``; a :class:`BackendError` passes through."""
        if self.disabled:
            usage["skipped_calls"] += 1
            raise BackendError(f"{self.name} backend disabled for this document: {self.disabled}")
        try:
            res = self.client.complete(messages, request_bytes=request_bytes,
                                       response_format={"type": "json_object"} if self.json_mode else None)
        except BackendError as err:
            retries = getattr(err, "http_retries", 0)
            usage["failed_calls"] += 1
            usage["http_retries"] += retries
            usage["wait_s"] += getattr(err, "wait_s", 0.0)
            usage["request_bytes"] += request_bytes * (retries + 1)
            self._consecutive_failures += 1
            if getattr(err, "fatal", False):
                self.disabled = str(err)
            elif self._consecutive_failures >= self.max_consecutive_failures:
                self.disabled = f"{self._consecutive_failures} requests in a row failed; last: {err}"
            raise
        self._consecutive_failures = 0
        usage["calls"] += 1
        usage["images"] += n_images
        usage["http_retries"] += res.http_retries
        usage["wait_s"] += res.wait_s
        usage["prompt_tokens"] += res.prompt_tokens
        usage["completion_tokens"] += res.completion_tokens
        usage["request_bytes"] += request_bytes * (res.http_retries + 1)
        self.usage["max_images_per_call"] = max(self.usage["max_images_per_call"], n_images)
        return res

    def _commit(self, usage: Mapping[str, Any]) -> None:
        """Add one step's usage to the document's totals (once per step)."""
        _add(self.usage, usage)

    def predict(self, memory: Memory, targets: Sequence[Heading], *, attempt: int = 0,
                feedback: str | None = None) -> LevelPrediction:
        if not targets:
            return LevelPrediction((), (), usage=_new_usage())
        key = tuple((t.page, t.block, t.text) for t in targets)
        if key != self._step_key:
            self._step_key, self._step_requests, self._step_last = key, 0, None
        ids = _target_ids(len(targets))
        step = _new_usage()
        content: list | str | None = None
        b64 = 0
        while self._step_requests < 1 + self.max_retries:
            if content is None:
                content, b64 = self._content(memory, targets, ids, step)
            self._step_requests += 1
            n_images = sum(1 for part in content if isinstance(part, dict) and part.get("type") == "image_url") \
                if isinstance(content, list) else 0
            user = content
            if feedback:
                note = f"Your previous answer was rejected: {feedback}. Answer again with JSON only."
                user = content + [{"type": "text", "text": note}] if isinstance(content, list) \
                    else content + "\n\n" + note
            messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]
            prompt_chars = len(SYSTEM_PROMPT) + (
                sum(len(p.get("text", "")) for p in user) if isinstance(user, list) else len(user))
            step["prompt_chars"] += prompt_chars
            try:
                res = self._request(messages, step, n_images, prompt_chars + b64)
            except BackendError as err:
                self._commit(step)
                err.usage = step  # type: ignore[attr-defined]
                if self._context is not None and self._context.document is not None:
                    err.with_context(path=self._context.document.path, page=targets[0].page + 1)
                raise
            try:
                got = parse_level_map(res.text, ids)
            except AnswerError as exc:
                step["parse_errors"] += 1
                feedback = str(exc)
                continue
            levels = tuple(got[i] for i in ids)
            self._step_last = levels
            self._commit(step)
            conf = 1.0 if self._step_requests == 1 else 0.5
            return LevelPrediction(levels, (conf,) * len(levels), usage=step)
        self._commit(step)
        if self._step_last is not None:
            # the budget is spent: the same answer again, so the driver projects it
            return LevelPrediction(self._step_last, (0.25,) * len(self._step_last), usage=step)
        err = BackendResponseError(
            f"{self.name}: no usable answer after {self._step_requests} request(s): {feedback}",
            page=targets[0].page + 1,
        )
        if self._context is not None and self._context.document is not None:
            err.with_context(path=self._context.document.path)
        err.usage = step  # type: ignore[attr-defined]
        raise err
