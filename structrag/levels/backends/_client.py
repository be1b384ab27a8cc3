"""A small, accountable chat-completions client over the ``openai`` package.

The ``openai`` client already retries, but silently; level prediction needs
to *count* every retry and wait (the per-document accounting), so
its own retries are switched off and done here: HTTP 408/409/429/5xx,
time-outs and dropped connections are retried with the server's
``Retry-After`` (capped) or an exponential back-off; authentication, a wrong
model name or a rejected request are not (asking again cannot help).

``openai`` is an optional dependency (``pip install "structrag[llm]"``): it is
imported when a client is built, never at ``import structrag``.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ...errors import BackendError, BackendResponseError, BackendUnreachable, ConfigError

__all__ = ["ChatClient", "ChatResult", "Usage", "require_llm_extra", "DEFAULT_BASE_URL", "CONNECT_TIMEOUT"]

log = logging.getLogger("structrag.levels.backends")

#: vLLM's default (`vllm serve`); Ollama is http://localhost:11434/v1.
DEFAULT_BASE_URL = "http://localhost:8000/v1"

#: seconds to open a connection: a server that is not there should say so in seconds, not after the
#: answer time-out (a blackholed address would otherwise hold each attempt for --timeout)
CONNECT_TIMEOUT = 5.0
#: extra tries of a server that has never answered and refuses the connection (one: a server that is
#: starting up); a server that answered before and drops a connection is retried like any failure
_UNREACHABLE_RETRIES = 1
_UNREACHABLE_HINT = ("start it with `vllm serve MODEL` or `ollama serve`, point --base-url or STRUCTRAG_BASE_URL "
                     "at it, or pass --fallback PREDICTOR to predict the levels offline")

#: a retry waiting this long or longer is logged as a warning
_SAY_WAIT = 2.0

_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
# statuses after which no later request of the document can succeed either
_FATAL_STATUS = frozenset({401, 403, 404})


def require_llm_extra(what: str = "the vlm / llm backends"):
    """Import and return ``openai``; a clear :class:`ConfigError` when it is missing."""
    try:
        import openai  # noqa: F401
    except ImportError:
        raise ConfigError(
            f"{what} need the `openai` package",
            hint='pip install "structrag[llm]"',
        ) from None
    return openai


def require_pillow(what: str = "the vlm backend"):
    try:
        import PIL.Image  # noqa: F401
        import PIL.ImageDraw  # noqa: F401
    except ImportError:
        raise ConfigError(f"{what} needs the `pillow` package", hint='pip install "structrag[llm]"') from None
    return PIL


@dataclass
class Usage:
    """Request accounting, summed over calls (thread-safe through :meth:`add`).

    ``calls`` counts answered requests, ``failed_calls`` requests that never
    got a usable HTTP answer after their retries, ``http_retries`` the extra
    attempts spent on 429/5xx/time-outs/dropped connections, and
    ``wait_s`` the time slept before them.  Token counts are the server's own
    ``usage`` figures (0 when it sends none).
    """

    calls: int = 0
    failed_calls: int = 0
    http_retries: int = 0
    wait_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    request_bytes: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "failed_calls": self.failed_calls,
            "http_retries": self.http_retries,
            "wait_s": round(self.wait_s, 3),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "request_bytes": self.request_bytes,
        }


class ChatResult:
    """One answered request: the text, the server's token counts, what it cost."""

    __slots__ = ("text", "prompt_tokens", "completion_tokens", "http_retries", "wait_s", "request_bytes", "model")

    def __init__(self, text: str, prompt_tokens: int, completion_tokens: int, http_retries: int,
                 wait_s: float, request_bytes: int, model: str) -> None:
        self.text = text
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.http_retries = http_retries
        self.wait_s = wait_s
        self.request_bytes = request_bytes
        self.model = model


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds asked for by ``Retry-After`` / ``retry-after-ms`` (None if absent or unreadable)."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    ra = headers.get("retry-after")
    if ra is None:
        return None
    try:
        return max(0.0, float(ra))
    except ValueError:
        pass
    import email.utils  # here, not at the top: the email package costs every CLI start ~15 ms

    try:  # an HTTP date
        when = email.utils.parsedate_to_datetime(ra)
        return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def _setting(given: str | None, *env: str) -> tuple[str, str]:
    """The value of a setting and where it came from: the argument, the first of the environment variables
    ``env[:-1]`` that is set, or the default ``env[-1]``."""
    if given:
        name = env[0].removeprefix("STRUCTRAG_").lower()
        return given, f"{name} (--{name.replace('_', '-')})"
    for var in env[:-1]:
        if os.environ.get(var):
            return os.environ[var], var
    return env[-1], "the default"


def _checked_url(url: str, source: str) -> str:
    """``url`` if it is an http(s) URL a client can send to; else a :class:`ConfigError` naming ``source``
    (found here, not as a traceback from the HTTP library at the first request)."""
    from urllib.parse import urlsplit

    why = None
    if any(c.isspace() or not c.isprintable() for c in url):
        why = "contains spaces or control characters"
    else:
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises ValueError for a port that is no number or out of range
        except ValueError as exc:
            why = f"does not parse ({exc})"
        else:
            if parts.scheme not in ("http", "https"):
                why = "does not start with http:// or https://"
            elif not parts.hostname:
                why = "names no host"
    if why is not None:
        raise ConfigError(f"{source} is not a server URL: {url!r} {why}",
                          hint="give the server's base URL, e.g. http://localhost:8000/v1 (vLLM) or "
                          "http://localhost:11434/v1 (Ollama)")
    return url


def _checked_key(key: str, source: str) -> str:
    """``key`` if an HTTP header can carry it (printable ASCII); else a :class:`ConfigError` naming ``source``
    (and not the key: it is a secret)."""
    if not all(" " <= c <= "~" for c in key):
        raise ConfigError(f"{source} holds characters an HTTP header cannot carry (non-ASCII or control "
                          "characters)", hint="set it to the key exactly as the server issued it")
    return key


class ChatClient:
    """Chat completions against any OpenAI-compatible server (vLLM, Ollama, hosted APIs).

    ``base_url`` defaults to ``$STRUCTRAG_BASE_URL``, ``$OPENAI_BASE_URL``,
    then vLLM's ``http://localhost:8000/v1``; ``api_key`` to
    ``$STRUCTRAG_API_KEY``, ``$OPENAI_API_KEY``, then ``"EMPTY"`` (local
    servers ignore it); ``model`` to ``$STRUCTRAG_MODEL`` (required).
    ``timeout`` is per request in seconds; ``max_retries`` bounds the HTTP
    retries of one request; ``max_wait`` caps a single back-off or
    ``Retry-After`` wait; ``max_concurrency`` bounds requests in flight when
    one client is shared by threads (one per document, say).  ``http_client``
    (an ``httpx``/``httpx2`` client, as the installed ``openai`` accepts) lets
    callers choose the transport, proxies or TLS settings; ``openai_client``
    replaces the whole ``openai.OpenAI`` object.
    """

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 4,
        max_wait: float = 30.0,
        backoff: float = 0.5,
        max_concurrency: int = 4,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        extra_body: Mapping[str, Any] | None = None,
        http_client: Any = None,
        openai_client: Any = None,
        seed: int = 0,
    ) -> None:
        self.base_url = _checked_url(*_setting(base_url, "STRUCTRAG_BASE_URL", "OPENAI_BASE_URL", DEFAULT_BASE_URL))
        self.api_key = _checked_key(*_setting(api_key, "STRUCTRAG_API_KEY", "OPENAI_API_KEY", "EMPTY"))
        self.model = model or os.environ.get("STRUCTRAG_MODEL") or ""
        if not self.model:
            raise ConfigError(
                "no model name for the vlm / llm backend",
                hint="pass model=... (CLI: --backend-model) or set STRUCTRAG_MODEL, e.g. Qwen/Qwen2.5-VL-7B-Instruct",
            )
        if timeout is None or timeout <= 0:
            raise ConfigError(f"timeout must be > 0 seconds, got {timeout!r}")
        if max_retries < 0:
            raise ConfigError(f"max_retries must be >= 0, got {max_retries!r}")
        if max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be >= 1, got {max_concurrency!r}")
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.max_wait = float(max_wait)
        self.backoff = float(backoff)
        self.max_concurrency = int(max_concurrency)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.extra_body = dict(extra_body) if extra_body else None
        self.usage = Usage()
        self._slots = threading.BoundedSemaphore(self.max_concurrency)
        self._rng = random.Random(seed)
        self._openai = require_llm_extra()
        from openai.types.chat import ChatCompletion

        self._completion_type = ChatCompletion
        if openai_client is not None:
            self._client = openai_client
        else:
            # (connect, read, write, pool): a tuple, which either transport openai uses (httpx, httpx2) takes
            t = self.timeout
            kw: dict[str, Any] = {"base_url": self.base_url, "api_key": self.api_key, "max_retries": 0,
                                  "timeout": (min(t, CONNECT_TIMEOUT), t, t, t)}
            if http_client is not None:
                kw["http_client"] = http_client
            self._client = self._openai.OpenAI(**kw)

    def close(self) -> None:
        close = getattr(self._client, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> "ChatClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ChatClient(base_url={self.base_url!r}, model={self.model!r})"

    # ------------------------------------------------------------------
    def _wait(self, attempt: int, headers: Mapping[str, str] | None) -> float:
        ra = _retry_after(headers)
        if ra is None:
            ra = self.backoff * (2 ** attempt) * (0.75 + 0.5 * self._rng.random())
        return min(ra, self.max_wait)

    def complete(self, messages: Sequence[Mapping[str, Any]], *, request_bytes: int = 0,
                 response_format: Mapping[str, Any] | None = None) -> ChatResult:
        """Send one chat request; retries transient failures; raises :class:`BackendError`.

        A request that stays unanswered raises :class:`BackendError` with
        ``.fatal`` True when no later request can succeed either (401, 403,
        404) and ``.http_retries`` / ``.wait_s`` telling what was spent.
        """
        oa = self._openai
        kw: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        if self.temperature is not None:
            kw["temperature"] = self.temperature
        if self.max_tokens is not None:
            kw["max_tokens"] = self.max_tokens
        if response_format is not None:
            kw["response_format"] = dict(response_format)
        if self.extra_body:
            kw.update(self.extra_body)
        retries = 0
        waited = 0.0
        last: str = ""
        fatal = False
        unreachable = False
        status: int | None = None
        resp = None
        with self._slots:
            while True:
                headers = None
                try:
                    # the documented raw `post` skips the typed-params walk of `create`, which costs
                    # more than the HTTP round trip on prompts with many images
                    resp = self._client.post("/chat/completions", body=kw, cast_to=self._completion_type)
                    break
                except oa.APIStatusError as exc:
                    status = int(exc.status_code)
                    headers = dict(exc.response.headers) if getattr(exc, "response", None) is not None else None
                    body = ""
                    try:
                        body = exc.response.text[:200]
                    except Exception:
                        pass
                    last = f"HTTP {status} from {self.base_url}: {body or exc.message}"
                    if status in _FATAL_STATUS:
                        fatal = True
                        break
                    if status not in _RETRY_STATUS:
                        break
                except oa.APIConnectionError as exc:  # APITimeoutError is one too
                    cause = exc.__cause__ or exc
                    if _no_connection(cause):
                        unreachable = True
                        last = f"cannot reach the model server at {self.base_url}: {_reason(cause)}"
                    elif isinstance(exc, oa.APITimeoutError):
                        last = f"no answer from {self.base_url} within {self.timeout:g} s"
                    else:
                        last = f"connection to {self.base_url} failed: {type(cause).__name__}: {cause}"
                # a server that never answered and takes no connection: say so now, not after the retries
                never_answered = unreachable and self.usage.calls == 0
                if retries >= (_UNREACHABLE_RETRIES if never_answered else self.max_retries):
                    fatal = fatal or never_answered
                    break
                w = self._wait(retries, headers)
                if w >= _SAY_WAIT:  # a long wait is said, or a run looks hung (stderr, through logging)
                    log.warning("%s; retrying in %.0f s (retry %d of %d)", last, w, retries + 1, self.max_retries)
                time.sleep(w)
                waited += w
                retries += 1
        if resp is None:
            with self.usage._lock:
                self.usage.failed_calls += 1
                self.usage.http_retries += retries
                self.usage.wait_s += waited
                self.usage.request_bytes += request_bytes * (retries + 1)
            hint = None
            if status in (401, 403):
                hint = "check --api-key / OPENAI_API_KEY"
            elif status == 404:
                hint = f"check --backend-model ({self.model!r}) and --base-url"
            elif unreachable:
                hint = _UNREACHABLE_HINT
            kind = BackendUnreachable if unreachable and fatal else BackendError
            err = kind(last + (f" (after {retries} {'retry' if retries == 1 else 'retries'})" if retries else ""),
                       hint=hint)
            err.fatal = fatal  # type: ignore[attr-defined]
            err.http_retries = retries  # type: ignore[attr-defined]
            err.wait_s = waited  # type: ignore[attr-defined]
            raise err
        try:
            text = resp.choices[0].message.content or ""
        except (AttributeError, IndexError, TypeError):
            with self.usage._lock:
                self.usage.calls += 1
                self.usage.http_retries += retries
                self.usage.wait_s += waited
            raise BackendResponseError(f"{self.base_url} answered without a message") from None
        u = getattr(resp, "usage", None)
        pt = int(getattr(u, "prompt_tokens", 0) or 0) if u is not None else 0
        ct = int(getattr(u, "completion_tokens", 0) or 0) if u is not None else 0
        with self.usage._lock:
            self.usage.calls += 1
            self.usage.http_retries += retries
            self.usage.wait_s += waited
            self.usage.prompt_tokens += pt
            self.usage.completion_tokens += ct
            self.usage.request_bytes += request_bytes * (retries + 1)
        return ChatResult(text, pt, ct, retries, waited, request_bytes, str(getattr(resp, "model", self.model)))


def _no_connection(cause: BaseException) -> bool:
    """Whether a transport error means no connection was made (refused, unknown host, TLS, connect time-out),
    rather than a connection dropped or an answer late (by class name: openai runs on httpx or httpx2)."""
    return any(c.__name__ in ("ConnectError", "ConnectTimeout") for c in type(cause).__mro__)


def _reason(cause: BaseException) -> str:
    """What a user reads of a failed connection: the innermost OS or TLS error, on one line."""
    inner = cause
    while inner.__cause__ is not None or inner.__context__ is not None:
        inner = inner.__cause__ or inner.__context__  # type: ignore[assignment]
    if any(c.__name__ == "ConnectTimeout" for c in type(cause).__mro__):
        return f"no connection within {CONNECT_TIMEOUT:g} s"
    text = " ".join(str(inner).split()) or type(inner).__name__
    return text if len(text) <= 160 else text[:157] + "..."
