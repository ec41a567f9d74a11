"""The batch LLM engine: the LLM writer's requests as an OpenAI Batch API file, and its replies
read back through the writer itself.

A backfill of a year costs thousands of model calls; a batch endpoint (OpenAI's Batch API, or
``python -m vllm.entrypoints.openai.run_batch`` on a GPU cluster) answers them all at once,
cheaper and without a live server. Both take the same JSON Lines file — one request per line::

    {"custom_id": "…", "method": "POST", "url": "/v1/chat/completions", "body": {…}}

and write one result per line (``{"custom_id": …, "response": {"status_code": 200, "body":
{chat completion}}, "error": null}``).

Nothing of the writer is copied here. **Export** runs the real :class:`LLMWriter` over the
requests with an HTTP transport that records each request body the writer's client sends and
answers it with a refusal, so the file holds exactly the first requests a live run would send.
**Import** runs the real writer again with a transport that answers each request from the
results: every reply is verified, repaired and, failing that, replaced by the template entry
exactly as a live reply would be, and cached under the same keys. A request the results do not
answer (a repair the writer asks for after a failed draft, or a request from a store that
changed since the export) is recorded as a request for the next batch round and answered with a
refusal, which the writer treats as a failed call: nothing is cached for that PR, and the next
import, with the next round's results, completes it.

``custom_id`` is the SHA-256 of the request body (without streaming options, which a batch does
not take): import finds a reply by hashing the request the writer sends.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from prdigest.core.errors import InputError

ENDPOINT = "/v1/chat/completions"
_STREAM_KEYS = ("stream", "stream_options")
_REFUSAL = {"error": {"message": "kept for a batch round", "type": "batch", "code": "batch"}}


def request_id(body: Mapping[str, Any]) -> str:
    """The ``custom_id`` of a request: the hash of its body without streaming options."""
    plain = {k: v for k, v in body.items() if k not in _STREAM_KEYS}
    canonical = json.dumps(plain, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def batch_line(body: Mapping[str, Any]) -> dict[str, Any]:
    """One line of a batch input file for a chat-completion request body."""
    plain = {k: v for k, v in body.items() if k not in _STREAM_KEYS}
    return {"custom_id": request_id(body), "method": "POST", "url": ENDPOINT, "body": plain}


@dataclass
class Recorder:
    """Request bodies seen, by ``custom_id`` (in the order first seen)."""

    bodies: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, body: dict[str, Any]) -> None:
        self.bodies.setdefault(request_id(body), body)

    def lines(self) -> list[dict[str, Any]]:
        return [batch_line(body) for body in self.bodies.values()]


def _body(request: httpx.Request) -> dict[str, Any]:
    data = json.loads(request.content.decode("utf-8") or "{}")
    return data if isinstance(data, dict) else {}


def _chat(request: httpx.Request) -> bool:
    return request.method == "POST" and request.url.path.endswith("/chat/completions")


_NO_SERVER = httpx.Response(404, json={"error": {"message": "no server: a batch"}})


def capture_transport(recorder: Recorder) -> httpx.MockTransport:
    """A transport that records every chat-completion request and refuses it (HTTP 400), so
    the writer moves on without a reply, a repair or a retry. Anything else the client asks (a
    probe of the server's slots) finds no server."""

    def handle(request: httpx.Request) -> httpx.Response:
        if not _chat(request):
            return _NO_SERVER
        recorder.add(_body(request))
        return httpx.Response(400, json=_REFUSAL)

    return httpx.MockTransport(handle)


@dataclass
class Replies:
    """The results of a batch, by ``custom_id``; what was asked and not answered is recorded
    for the next round."""

    responses: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    unanswered: Recorder = field(default_factory=Recorder)

    def add_result(self, line: Mapping[str, Any]) -> None:
        custom_id = line.get("custom_id")
        response = line.get("response") or {}
        if not isinstance(custom_id, str) or not isinstance(response, dict):
            raise ValueError("a result needs custom_id and response")
        status = int(response.get("status_code") or (500 if line.get("error") else 200))
        body = response.get("body")
        self.responses[custom_id] = (status, body if isinstance(body, dict) else {})


def read_results(paths: Iterable[Path]) -> Replies:
    """The results of one or more batch output files; a bad line names its file and line."""
    replies = Replies()
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror}") from exc
        for number, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                replies.add_result(json.loads(raw))
            except (ValueError, TypeError) as exc:
                raise InputError(f"{path}:{number}: not a batch result line ({exc})") from exc
    return replies


def _stream(body: dict[str, Any], usage: bool) -> bytes:
    """A chat completion as the server-sent events a streaming client reads."""
    choice = (body.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    base = {
        "id": body.get("id", "batch"),
        "object": "chat.completion.chunk",
        "created": body.get("created", int(time.time())),
        "model": body.get("model", ""),
    }
    delta = {"role": "assistant", "content": message.get("content") or ""}
    events = [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {
            **base,
            "choices": [
                {"index": 0, "delta": {}, "finish_reason": choice.get("finish_reason", "stop")}
            ],
            **({"usage": body["usage"]} if usage and body.get("usage") else {}),
        },
    ]
    text = "".join(f"data: {json.dumps(e, ensure_ascii=False)}\n\n" for e in events)
    return (text + "data: [DONE]\n\n").encode("utf-8")


def replay_transport(replies: Replies) -> httpx.MockTransport:
    """A transport that answers each request from the batch results (as JSON or as a stream,
    as the request asks) and refuses, recording it for the next round, what they lack."""

    def handle(request: httpx.Request) -> httpx.Response:
        if not _chat(request):
            return _NO_SERVER
        body = _body(request)
        custom_id = request_id(body)
        found = replies.responses.get(custom_id)
        if found is None:
            replies.unanswered.add(body)
            return httpx.Response(400, json=_REFUSAL)
        replies.used.add(custom_id)
        status, payload = found
        if status != 200 or not body.get("stream"):
            return httpx.Response(status, json=payload)
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return httpx.Response(
            200, content=_stream(payload, usage), headers={"content-type": "text/event-stream"}
        )

    return httpx.MockTransport(handle)


def write_lines(path: Path, lines: Iterable[Mapping[str, Any]]) -> int:
    """Write batch input lines; returns how many."""
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
            count += 1
    return count
