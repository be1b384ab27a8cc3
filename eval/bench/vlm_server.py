"""A small OpenAI-compatible chat-completions server on 127.0.0.1, for benchmarks and tests.

It serves ``POST /v1/chat/completions`` from a thread (``http.server``),
decodes every request (text parts, images sent as data URLs, the known and
target heading lists of structrag's prompt), records it, runs an optional
``check`` on it (a failed check is kept in :attr:`OpenAIServer.errors` and the
request is still answered, so a test sees every problem at the end), and
answers from a scripted ``policy``: a function of the decoded request that
returns ``{id: level}`` (sent as ``{"T1": "H2", ...}``) or a raw string.

Faults are injected through the same server: :meth:`OpenAIServer.inject`
queues :class:`Fault` objects that replace the answers of the next requests —
invalid JSON, missing ids, out-of-range or skipped levels, an HTTP error with
``Retry-After``, a delay longer than the client's time-out, a dropped
connection.  Request loops are bounded by the tests; the server only answers.

It lives beside the benchmarks (``eval.bench.vlm_context`` measures what the VLM predictor sends
through it); the tests import it from here (``tests/openai_server.py``).
"""

from __future__ import annotations

import base64
import io
import json
import math
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Sequence

KNOWN_MARKER = "Known headings"
TARGETS_MARKER = "Headings to assign"


@dataclass
class DecodedRequest:
    """One chat request as the server understood it."""

    index: int
    model: str
    body: dict
    texts: list[str]
    images: list[Any]  # PIL images (None when decode_images=False)
    image_sizes: list[tuple[int, int]]
    image_bytes: list[int]
    known: list[dict] | None
    targets: list[dict] | None
    request_bytes: int
    answered_with: str = ""  # "policy" or the fault kind

    @property
    def prompt_text(self) -> str:
        return "\n".join(self.texts)

    @property
    def target_ids(self) -> list[str]:
        return [t["id"] for t in self.targets or []]


@dataclass
class Fault:
    """What to do instead of answering one request.

    kinds: ``invalid-json``, ``missing-id``, ``unknown-id``, ``out-of-range``
    (the first target at H12), ``skip-level`` (H3, H5, ...: levels jump by
    two), ``fenced`` (a valid answer inside a code fence with prose around
    it), ``status`` (HTTP ``status`` with ``retry_after`` seconds), ``delay``
    (sleep ``seconds`` then answer), ``drop`` (close the connection unanswered).
    """

    kind: str
    status: int = 500
    retry_after: float | None = None
    seconds: float = 0.0


def _json_after(text: str, marker: str) -> list | None:
    i = text.find(marker)
    if i < 0:
        return None
    j = text.find("[", i)
    if j < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(text, j)
    except ValueError:
        return None
    return value if isinstance(value, list) else None


def estimate_tokens(texts: Sequence[str], image_sizes: Sequence[tuple[int, int]], patch: int = 28) -> int:
    """Prompt tokens as a Qwen2-VL-style server would count them: ~4 chars a token, one per 28x28 patch."""
    n = math.ceil(sum(len(t) for t in texts) / 4)
    for w, h in image_sizes:
        n += math.ceil(w / patch) * math.ceil(h / patch)
    return n


def decode_body(body: dict, index: int, nbytes: int, *, decode_images: bool = True) -> DecodedRequest:
    from PIL import Image

    texts: list[str] = []
    images: list[Any] = []
    sizes: list[tuple[int, int]] = []
    nb: list[int] = []
    for msg in body.get("messages", []):
        content = msg.get("content")
        if isinstance(content, str):
            texts.append(content)
            continue
        for part in content or []:
            if part.get("type") == "text":
                texts.append(part["text"])
            elif part.get("type") == "image_url":
                url = part["image_url"]["url"]
                head, _, data = url.partition(",")
                if not head.startswith("data:image/") or ";base64" not in head:
                    raise ValueError(f"image is not a base64 data URL: {head[:40]!r}")
                raw = base64.b64decode(data)
                nb.append(len(raw))
                img = Image.open(io.BytesIO(raw))
                sizes.append(img.size)
                if decode_images:
                    img.load()
                    images.append(img.convert("RGB"))
                else:
                    images.append(None)
    user_text = "\n".join(texts)
    return DecodedRequest(
        index=index, model=str(body.get("model", "")), body=body, texts=texts, images=images,
        image_sizes=sizes, image_bytes=nb, known=_json_after(user_text, KNOWN_MARKER),
        targets=_json_after(user_text, TARGETS_MARKER), request_bytes=nbytes,
    )


def levels_by_title(levels: dict[str, int]) -> Callable[[DecodedRequest], dict[str, int]]:
    """A policy answering each target with the level of its title in ``levels``."""

    def policy(req: DecodedRequest) -> dict[str, int]:
        return {t["id"]: levels[t["title"]] for t in req.targets or []}

    return policy


def levels_in_order(levels: Sequence[int], titles: Sequence[str] | None = None
                    ) -> Callable[[DecodedRequest], dict[str, int]]:
    """A policy for documents with repeated titles: targets are answered by position.

    It relies on the requests coming in reading order and counts the targets
    answered so far; a retried step re-uses the position of its first try
    (detected by the same first title).  With ``titles`` (the headings' texts, in
    the order of ``levels``) the position is counted per title: a title's n-th
    asking gets the level of its n-th heading, so headings a document rule places
    without asking (a contents page's title) shift nothing.
    """
    state: dict[str, Any] = {"pos": 0, "last": None, "seen": {}}
    where: dict[str, list[int]] = {}
    for k, t in enumerate(titles or ()):
        where.setdefault(t, []).append(k)

    def position(title: str) -> int:
        n = state["seen"].get(title, 0)
        state["seen"][title] = n + 1
        return where[title][min(n, len(where[title]) - 1)]

    def policy(req: DecodedRequest) -> dict[str, int]:
        ts = req.targets or []
        key = tuple(t["title"] for t in ts)
        if state["last"] is not None and state["last"][0] == key:
            at = state["last"][1]
        elif titles is not None:
            at = [position(t["title"]) for t in ts]
        else:
            at = list(range(state["pos"], state["pos"] + len(ts)))
            state["pos"] += len(ts)
        state["last"] = (key, at)
        return {t["id"]: levels[k] for k, t in zip(at, ts)}

    return policy


def _answer_text(levels: dict[str, int]) -> str:
    return json.dumps({k: f"H{v}" for k, v in levels.items()})


class OpenAIServer:
    """``with OpenAIServer(policy) as srv: ... srv.base_url ... srv.requests``."""

    def __init__(
        self,
        policy: Callable[[DecodedRequest], dict[str, int] | str] | None = None,
        *,
        check: Callable[[DecodedRequest], None] | None = None,
        decode_images: bool = True,
        keep_images: bool = True,
        keep_bodies: bool = True,
        model_name: str | None = None,
    ) -> None:
        self.policy = policy
        self.check = check
        self.decode_images = decode_images
        self.keep_images = keep_images
        self.keep_bodies = keep_bodies
        self.model_name = model_name
        self.requests: list[DecodedRequest] = []
        self.errors: list[str] = []
        self.faults: list[Fault] = []
        self.http_attempts = 0  # every POST, answered or not
        self.in_flight = 0
        self.max_in_flight = 0  # most requests handled at the same time
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._url: str | None = None

    # -- control -----------------------------------------------------------
    def inject(self, *faults: Fault) -> None:
        with self._lock:
            self.faults.extend(faults)

    @property
    def base_url(self) -> str:
        """The API root (still known after :meth:`stop`: a dead server's address)."""
        assert self._url is not None, "the server was never started"
        return self._url

    def start(self) -> "OpenAIServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": server.model_name or "test-model",
                                                                "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(n)
                server._handle(self, raw)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        host, port = self._httpd.server_address[:2]
        self._url = f"http://{host}:{port}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="openai-test-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "OpenAIServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- serving -----------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler, raw: bytes) -> None:
        with self._lock:
            self.http_attempts += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            fault = self.faults.pop(0) if self.faults else None
        try:
            self._serve(h, raw, fault)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _serve(self, h: BaseHTTPRequestHandler, raw: bytes, fault: "Fault | None") -> None:
        if not h.path.rstrip("/").endswith("/chat/completions"):
            h._send(404, {"error": {"message": f"no route {h.path}"}})  # type: ignore[attr-defined]
            return
        if fault is not None and fault.kind == "drop":
            h.close_connection = True
            try:
                h.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if fault is not None and fault.kind == "status":
            headers = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
            h._send(fault.status, {"error": {"message": f"injected {fault.status}", "type": "server_error"}},  # type: ignore[attr-defined]
                    headers)
            return
        if fault is not None and fault.kind == "delay":
            time.sleep(fault.seconds)
        try:
            body = json.loads(raw)
            with self._lock:
                index = len(self.requests)
            req = decode_body(body, index, len(raw), decode_images=self.decode_images)
        except Exception as exc:  # a request the client should never send
            with self._lock:
                self.errors.append(f"undecodable request: {exc}")
            h._send(400, {"error": {"message": str(exc)}})  # type: ignore[attr-defined]
            return
        if self.check is not None:
            try:
                self.check(req)
            except AssertionError as exc:
                with self._lock:
                    self.errors.append(f"request {index}: {exc}")
        content = self._content(req, fault)
        req.answered_with = fault.kind if fault is not None else "policy"
        if not self.keep_images:
            req.images = []
        if not self.keep_bodies:
            req.body = {}
        with self._lock:
            self.requests.append(req)
        usage = {"prompt_tokens": estimate_tokens(req.texts, req.image_sizes),
                 "completion_tokens": math.ceil(len(content) / 4)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        h._send(200, {  # type: ignore[attr-defined]
            "id": f"chatcmpl-{index}", "object": "chat.completion", "created": int(time.time()),
            "model": req.model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": usage,
        })

    def _content(self, req: DecodedRequest, fault: Fault | None) -> str:
        try:
            answer = self.policy(req) if self.policy is not None else {i: 1 for i in req.target_ids}
        except Exception as exc:
            with self._lock:
                self.errors.append(f"request {req.index}: policy failed: {exc!r}")
            answer = {i: 1 for i in req.target_ids}
        if isinstance(answer, str) or fault is None or fault.kind == "delay":
            return answer if isinstance(answer, str) else _answer_text(answer)
        ids = list(answer)
        if fault.kind == "invalid-json":
            return '{"T1": "H1", "T2": '  # cut short
        if fault.kind == "missing-id":
            return _answer_text({k: v for k, v in answer.items() if k != ids[-1]})
        if fault.kind == "unknown-id":
            return _answer_text({**answer, "T99": 1})
        if fault.kind == "out-of-range":
            return _answer_text({**answer, ids[0]: 12})
        if fault.kind == "skip-level":  # H3, H5, H7, ...: always a skipped level
            return _answer_text({k: 3 + 2 * n for n, k in enumerate(ids)})
        if fault.kind == "fenced":
            return "Sure! Here are the levels:\n```json\n" + _answer_text(answer) + "\n```\nHope this helps."
        raise ValueError(f"unknown fault kind {fault.kind!r}")


# ---------------------------------------------------------------------------
# documents with headings at known levels
