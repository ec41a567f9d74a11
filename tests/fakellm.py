"""A fake OpenAI-compatible server on loopback (real HTTP) with scripted replies.

``FakeLLM(responder)`` serves ``POST /v1/chat/completions`` from a ``ThreadingHTTPServer`` in a
background thread. For each request the responder gets a :class:`Call` (the parsed body and
helpers: which PR it is about, whether it is the titles batch or a repair) and returns a
:class:`Reply`: a status, the assistant text, headers, a delay, or a raw body. Used by the tests
and by ``bench/bench_llm.py``; it never talks to anything but 127.0.0.1.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_PR = re.compile(r"PR[：:]\s*#(\d+)")
_TITLE_ITEM = re.compile(r"^#(\d+) ", re.M)


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
        return any(m["role"] == "assistant" for m in self.messages)

    @property
    def pr_number(self) -> int | None:
        match = _PR.search(self.first_user)
        return int(match.group(1)) if match else None

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
    usage: dict[str, int] | None = None


def entry_json(title: str, paragraph: str | None = None, cites: list[str] | None = None) -> str:
    data: dict[str, Any] = {"title": title, "cites": cites or []}
    if paragraph is not None:
        data["paragraph"] = paragraph
    return json.dumps(data, ensure_ascii=False)


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


class FakeLLM:
    """The server; use as a context manager. ``calls`` records every request received."""

    def __init__(self, responder: Callable[[Call], Reply], *, latency: float = 0.0) -> None:
        self.responder = responder
        self.latency = latency
        self.calls: list[Call] = []
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

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                call = Call(body, {k.lower(): v for k, v in self.headers.items()})
                if not self.path.endswith("/chat/completions"):
                    self._send(404, json.dumps({"error": {"message": "not found"}}), {})
                    return
                reply = fake._record(call)
                time.sleep(fake.latency + reply.delay)
                if reply.raw is not None:
                    self._send(reply.status, reply.raw, reply.headers)
                elif reply.status != 200:
                    error = {"error": {"message": reply.content or "error", "type": "fake"}}
                    self._send(reply.status, json.dumps(error), reply.headers)
                else:
                    payload = completion_body(reply, body.get("model", "fake"))
                    self._send(200, json.dumps(payload, ensure_ascii=False), reply.headers)

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
