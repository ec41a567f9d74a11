"""A fake OpenAI-compatible server on loopback (real HTTP) with scripted replies.

``FakeLLM(responder)`` serves ``POST /v1/chat/completions`` from a ``ThreadingHTTPServer`` in a
background thread. For each request the responder gets a :class:`Call` (the parsed body and
helpers: which PR it is about, whether it is the titles batch or a repair) and returns a
:class:`Reply`: a status, the assistant text, headers, a delay, or a raw body. A streamed
request (``"stream": true``) is answered as server-sent events, piece by piece, with the
reasoning in ``reasoning_content`` when the reply has one, and the usage last.

``slots=1`` plays a single-slot server such as llama.cpp on a CPU: requests are computed one at a
time, the others wait for the slot, and a request whose client went away is still computed to
its end (``abandoned`` counts them; ``overlaps`` counts requests that arrived while another was
being computed). ``props`` serves llama.cpp's ``GET /props`` with ``total_slots``; ``/tokenize``
counts tokens as ``count_tokens`` says. Used by the tests and by ``bench/bench_llm.py``; it never
talks to anything but 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_PR = re.compile(r"PR[：:]\s*#(\d+)")


@functools.cache
def _repair_systems() -> frozenset[str]:
    from prdigest.core.locale import available, locale
    from prdigest.write.llm.prompt import fill

    return frozenset(fill(locale(lang).llm["repair_system"]) for lang in available())


_TITLE_ITEM = re.compile(r"^#(\d+) ", re.M)
_PACK_ITEM = re.compile(r"^### PR #(\d+)$", re.M)


@dataclass(frozen=True)
class Call:
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def messages(self) -> list[dict[str, str]]:
        return list(self.body.get("messages", []))

    @property
    def system(self) -> str:
        return next((m["content"] for m in self.messages if m["role"] == "system"), "")

    @property
    def first_user(self) -> str:
        return next((m["content"] for m in self.messages if m["role"] == "user"), "")

    @property
    def is_titles(self) -> bool:
        return '"titles"' in self.system

    @property
    def is_repair(self) -> bool:
        """A repair request (its system message is a locale's ``repair_system``) or a titles
        repair (it carries drafts)."""
        return self.system.strip() in _repair_systems() or (
            self.is_titles and "draft:" in self.first_user
        )

    @property
    def pr_number(self) -> int | None:
        match = _PR.search(self.first_user)
        return int(match.group(1)) if match else None

    @property
    def pack_numbers(self) -> list[int]:
        """The PRs of a pack request (several entries in one request), in order."""
        return [int(n) for n in _PACK_ITEM.findall(self.first_user)]

    @property
    def title_numbers(self) -> list[int]:
        return [int(n) for n in _TITLE_ITEM.findall(self.first_user)]

    @property
    def json_mode(self) -> bool:
        return self.body.get("response_format", {}).get("type") == "json_object"


@dataclass(frozen=True)
class Reply:
    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    empty_choices: bool = False
    raw: str | None = None  # a body sent as is
    raw_bytes: bytes | None = None  # a binary body (e.g. a PNG), with raw_type as content type
    raw_type: str = "image/png"
    usage: dict[str, int] | None = None
    reasoning: str | None = None  # streamed as ``reasoning_content`` before the answer
    finish_reason: str = "stop"
    piece_delay: float = 0.0  # seconds between streamed pieces
    stall_after: int | None = None  # stream this many pieces, then fall silent
    stall_s: float = 30.0  # how long it stays silent (computing on) before it gives up


def entry_json(title: str, paragraph: str | None = None, cites: list[str] | None = None) -> str:
    data: dict[str, Any] = {"title": title, "cites": cites or []}
    if paragraph is not None:
        data["paragraph"] = paragraph
    return json.dumps(data, ensure_ascii=False)


def pack_json(entries: dict[int, str]) -> str:
    """A pack reply from each PR's entry JSON (as :func:`entry_json` writes it)."""
    items = [{"number": n, **json.loads(e)} for n, e in entries.items()]
    return json.dumps({"entries": items}, ensure_ascii=False)


def titles_json(titles: dict[int, str]) -> str:
    items = [{"number": n, "title": t} for n, t in titles.items()]
    return json.dumps({"titles": items}, ensure_ascii=False)


def completion_body(reply: Reply, model: str) -> dict[str, Any]:
    choices = []
    if not reply.empty_choices:
        message = {"role": "assistant", "content": reply.content}
        choices = [{"index": 0, "message": message, "finish_reason": "stop"}]
    usage = reply.usage
    if usage is None:
        usage = {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200}
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_780_000_000,
        "model": model,
        "choices": choices,
    }
    if usage:  # Reply(usage={}) plays a server that reports no usage
        body["usage"] = usage
    return body


class _Server(ThreadingHTTPServer):
    # The default backlog of 5 overflows when a writer opens 8 connections at once on a busy
    # machine; a dropped handshake then surfaces as a retried request and an extra call.
    request_queue_size = 128
    daemon_threads = True


PIECE_CHARS = 24


def stream_events(reply: Reply, model: str, include_usage: bool) -> list[dict[str, Any]]:
    """The server-sent events of a streamed reply: reasoning pieces, answer pieces, the finish
    reason, then the usage when asked for."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 1_780_000_000,
            "model": model,
            "choices": [choice],
        }

    events = [chunk({"role": "assistant", "content": ""})]
    for text, key in (
        (reply.reasoning or "", "reasoning_content"),
        (reply.content or "", "content"),
    ):
        for i in range(0, len(text), PIECE_CHARS):
            events.append(chunk({key: text[i : i + PIECE_CHARS]}))
    events.append(chunk({}, reply.finish_reason))
    usage = completion_body(reply, model).get("usage")
    if include_usage and usage:
        events.append(
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": 1_780_000_000,
                "model": model,
                "choices": [],
                "usage": usage,
            }
        )
    return events


def default_count(text: str) -> int:
    return max(1, len(text) // 3)


class FakeLLM:
    """The server; use as a context manager. ``calls`` records every request received."""

    def __init__(
        self,
        responder: Callable[[Call], Reply],
        *,
        latency: float = 0.0,
        slots: int | None = None,
        props: bool = False,
        count_tokens: Callable[[str], int] | None = None,
    ) -> None:
        self.responder = responder
        self.latency = latency
        self.calls: list[Call] = []
        self.slots = slots
        self.props = props
        self.count_tokens = count_tokens
        self.active = 0
        self.max_active = 0
        self.overlaps = 0  # requests that arrived while the single slot was busy
        self.abandoned = 0  # requests computed to the end after their client went away
        self.finished: list[Call] = []
        self._slot = threading.Semaphore(slots) if slots else None
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _record(self, call: Call) -> Reply:
        with self._lock:
            self.calls.append(call)
        return self.responder(call)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out without delayed-ACK stalls

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def handle(self) -> None:
                # a client that closed a stream it had read to its end
                with contextlib.suppress(ConnectionResetError, BrokenPipeError):
                    super().handle()

            def do_GET(self) -> None:
                if self.path == "/props" and fake.props:
                    self._send(200, json.dumps({"total_slots": fake.slots or 1}), {})
                else:
                    self._send(404, json.dumps({"error": {"message": "not found"}}), {})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                call = Call(body, {k.lower(): v for k, v in self.headers.items()})
                if self.path == "/tokenize" and fake.count_tokens is not None:
                    count = fake.count_tokens(str(body.get("content", "")))
                    self._send(200, json.dumps({"tokens": list(range(count))}), {})
                    return
                if not self.path.endswith("/chat/completions"):
                    self._send(404, json.dumps({"error": {"message": "not found"}}), {})
                    return
                if fake._slot is None:
                    self._serve(call, body)
                    return
                with fake._lock:
                    if fake.active:
                        fake.overlaps += 1
                with fake._slot:
                    with fake._lock:
                        fake.active += 1
                        fake.max_active = max(fake.max_active, fake.active)
                    try:
                        self._serve(call, body)
                    finally:
                        with fake._lock:
                            fake.active -= 1
                            fake.finished.append(call)

            def _serve(self, call: Call, body: dict[str, Any]) -> None:
                reply = fake._record(call)
                time.sleep(fake.latency + reply.delay)
                if reply.raw_bytes is not None:
                    self._send_bytes(reply.status, reply.raw_bytes, reply.raw_type)
                    return
                if body.get("stream") and reply.status == 200 and reply.raw is None:
                    self._stream(reply, body)
                    return
                if reply.raw is not None:
                    self._send(reply.status, reply.raw, reply.headers)
                elif reply.status != 200:
                    error = {"error": {"message": reply.content or "error", "type": "fake"}}
                    self._send(reply.status, json.dumps(error), reply.headers)
                else:
                    payload = completion_body(reply, body.get("model", "fake"))
                    self._send(200, json.dumps(payload, ensure_ascii=False), reply.headers)

            def _stream(self, reply: Reply, body: dict[str, Any]) -> None:
                include = bool((body.get("stream_options") or {}).get("include_usage"))
                events = stream_events(reply, body.get("model", "fake"), include)
                gone = False
                try:
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("transfer-encoding", "chunked")
                    self.end_headers()
                except (BrokenPipeError, ConnectionResetError):
                    gone = True
                for index, event in enumerate(events):
                    if reply.stall_after is not None and index >= reply.stall_after:
                        time.sleep(reply.stall_s)
                        gone = True  # the client has given up by now
                        break
                    if index and reply.piece_delay:
                        time.sleep(reply.piece_delay)
                    if not gone:
                        gone = not self._chunk(f"data: {json.dumps(event, ensure_ascii=False)}\n\n")
                if not gone:
                    gone = not (self._chunk("data: [DONE]\n\n") and self._chunk(""))
                if gone:
                    with fake._lock:
                        fake.abandoned += 1

            def _chunk(self, text: str) -> bool:
                data = text.encode("utf-8")
                try:
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                    return True
                except (BrokenPipeError, ConnectionResetError, OSError):
                    return False

            def _send_bytes(self, status: int, data: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _send(self, status: int, text: str, headers: dict[str, str]) -> None:
                data = text.encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        return Handler


Step = Reply | Callable[[Call], Reply]


class Scripted:
    """Replies per PR in order (the last one repeats); ``default`` for unscripted PRs and the
    titles batch. Thread-safe: the server answers concurrent requests."""

    def __init__(
        self,
        default: Callable[[Call], Reply],
        per_pr: dict[int, list[Step]] | None = None,
        titles: list[Step] | None = None,
    ) -> None:
        self.default = default
        self.per_pr = per_pr or {}
        self.titles = titles or []
        self.seen: dict[object, int] = {}
        self._lock = threading.Lock()

    def __call__(self, call: Call) -> Reply:
        key: object = "titles" if call.is_titles else call.pr_number
        steps = self.titles if call.is_titles else self.per_pr.get(call.pr_number or -1, [])
        with self._lock:
            index = self.seen.get(key, 0)
            self.seen[key] = index + 1
        if not steps:
            return self.default(call)
        step = steps[min(index, len(steps) - 1)]
        return step(call) if callable(step) else step
