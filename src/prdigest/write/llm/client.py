"""An OpenAI-compatible chat client for JSON replies: streamed, timed by progress, never re-sent
while the server may still be computing, as many at once as the server has slots.

Built on the ``openai`` SDK (async) with an injected ``httpx.AsyncClient``, so tests and callers
control the transport. The SDK's own retries are switched off (``max_retries=0``): this module
retries itself, so it can honour ``retry-after`` on 429/5xx, log every retry, cap the wait and
take an injected ``sleep`` (tests do not wait for real).

**Time.** Replies are streamed. ``timeout_s`` is the longest silence allowed *between* two pieces
of a reply. Before the first piece a server reads the whole prompt, which on a CPU takes minutes
(a 9,000-token prompt: about 330 s for a 1.5B model on two cores), so the first piece may take
``timeout_s`` plus the prompt's tokens at the slowest prompt speed seen so far in the run
(before any reply: :data:`LOCAL_PROMPT_TPS` for a server on this machine,
:data:`REMOTE_PROMPT_TPS` for a remote one).

**Never twice.** A request that timed out is not sent again: the server may still be computing
it, and a second copy would queue behind the first. The stream is closed, which makes llama.cpp
and vLLM stop the work; the PR falls back and says why. Only failures the server reports before
it starts (connection refused, 429, 5xx) are retried.

**Load.** ``concurrency`` comes from the settings; when it is not set, from the server's slots
(llama.cpp's ``GET /props`` → ``total_slots``), else one request at a time for a server on this
machine and :data:`~.settings.DEFAULT_CONCURRENCY` for a remote API. :meth:`LLMClient.slot`
holds one slot over several requests, so an entry's repair follows its first attempt at once
(the server's prompt cache is still warm) instead of queueing behind every other first attempt.

**JSON.** ``response_format={"type": "json_object"}`` is asked for where the server supports it;
a server that rejects it with a 400 is asked again without it, and the client remembers that for
the run (the same for ``stream_options``). Replies are parsed tolerantly: a bare object, an
object in a code fence, or the first object embedded in prose — after the reasoning is removed
in every common form (:func:`split_reasoning`).
"""

from __future__ import annotations

import asyncio
import contextvars
import email.utils
import ipaddress
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import httpx

from prdigest.core.errors import (
    ConfigError,
    LLMResponseError,
    LLMTimeoutError,
    LLMUnavailableError,
)

try:
    import openai
except ModuleNotFoundError as exc:  # the optional `llm` extra
    raise ConfigError(
        "the LLM writer needs the openai package: pip install 'prdigest[llm]'", key="--writer"
    ) from exc
from prdigest.write.llm.budget import estimate_tokens
from prdigest.write.llm.settings import DEFAULT_CONCURRENCY, LOCAL_CONCURRENCY, LLMSettings

log = logging.getLogger("prdigest.llm")

Sleep = Callable[[float], Awaitable[None]]
Message = dict[str, str]
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)
_REASONING_TAGS = "think|thinking|reasoning|reflection"
_REASONING_BLOCK = re.compile(rf"<({_REASONING_TAGS})>.*?</\1\s*>", re.S | re.I)
_REASONING_OPEN = re.compile(rf"<(?:{_REASONING_TAGS})>", re.I)
_REASONING_CLOSE = re.compile(rf"</(?:{_REASONING_TAGS})\s*>", re.I)
_DURATION = re.compile(r"^\s*(?:(\d+(?:\.\d+)?)m(?!s))?\s*(?:(\d+(?:\.\d+)?)s)?\s*$")
BACKOFF_BASE_S = 1.0
LOCAL_PROMPT_TPS = 8.0  # prompt tokens/s assumed for a local server before its first reply
REMOTE_PROMPT_TPS = 200.0
CONNECT_TIMEOUT_S = 10.0
PROBE_TIMEOUT_S = 10.0
_HOLDING: contextvars.ContextVar[bool] = contextvars.ContextVar("prdigest_llm_slot", default=False)


@dataclass(frozen=True)
class Completion:
    """One successful reply: its answer, the JSON object in it, and what it cost."""

    content: str  # the answer, reasoning removed
    data: dict[str, Any] | None  # None: the answer held no JSON object
    prompt_tokens: int
    completion_tokens: int
    estimated: bool  # the server sent no usage; tokens are estimates
    attempts: int
    latency_s: float
    json_mode: bool  # whether response_format was sent with the successful attempt
    reasoning: str = ""  # what was removed as reasoning (any form)
    truncated: bool = False  # the server stopped at max_tokens
    reasoning_truncated: bool = False  # the output ran out inside the reasoning
    first_piece_s: float = 0.0  # seconds from sending to the first streamed piece


def split_reasoning(text: str) -> tuple[str, str, bool]:
    """``(answer, reasoning, truncated)`` of a reply: ``<think>``/``<thinking>``/``<reasoning>``
    blocks removed; text up to a closing tag whose opening tag is missing is reasoning; an
    opening tag that never closes means the output ran out inside the reasoning."""
    removed: list[str] = []

    def take(match: re.Match[str]) -> str:
        removed.append(match.group(0))
        return " "

    rest = _REASONING_BLOCK.sub(take, text)
    closes = list(_REASONING_CLOSE.finditer(rest))
    if closes:
        removed.append(rest[: closes[-1].end()])
        rest = rest[closes[-1].end() :]
    truncated = False
    if opened := _REASONING_OPEN.search(rest):
        removed.append(rest[opened.start() :])
        rest = rest[: opened.start()]
        truncated = True
    return rest.strip(), "\n".join(removed), truncated


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in a model reply: bare, fenced, or the first one embedded in prose
    (reasoning removed first, so a JSON draft inside the reasoning is never the answer)."""
    text = split_reasoning(text)[0]
    candidates = [text] + [m.group(1).strip() for m in _FENCE.finditer(text)]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def retry_after_s(headers: httpx.Headers | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` / ``x-ratelimit-reset-*``."""
    if headers is None:
        return None
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    if (value := headers.get("retry-after")) is not None:
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value) if value else None
            if when is not None:
                moment = now or datetime.now(UTC)
                return max(0.0, (when - moment).total_seconds())
    for name in ("x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"):
        if (value := headers.get(name)) and (match := _DURATION.match(value)):
            minutes, seconds = match.groups()
            if minutes or seconds:
                return float(minutes or 0) * 60 + float(seconds or 0)
    return None


def is_local(base_url: str) -> bool:
    """Whether the endpoint is on this machine (loopback), where one slot is the safe guess."""
    host = (urlsplit(base_url).hostname or "").strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback or host == "0.0.0.0"
    except ValueError:
        return False


def server_root(base_url: str) -> str:
    """The server's root (llama.cpp's ``/props``, ``/tokenize``): the base URL without ``/v1``."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


class _Retry(Exception):
    """Internal: this attempt failed before the server started on it; worth retrying."""

    def __init__(self, reason: str, wait: float | None, status: int | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait
        self.status = status


@dataclass
class _Streamed:
    content: str
    reasoning: str
    finish: str | None
    usage: Any
    first_piece_s: float


class LLMClient:
    """Chat completions returning JSON. Use as ``async with LLMClient(settings) as client``.

    ``http_client`` is injected (tests, proxies); when omitted one is built from the settings
    and closed on exit. ``sleep`` is injected so retries cost no real time in tests.
    """

    def __init__(
        self,
        settings: LLMSettings,
        *,
        http_client: httpx.AsyncClient | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.settings = settings
        self._sleep = sleep
        self._own_http = http_client is None
        self._http = http_client or httpx.AsyncClient(
            # no read timeout here: silence is timed per streamed piece (see the module doc)
            timeout=httpx.Timeout(None, connect=CONNECT_TIMEOUT_S),
            limits=httpx.Limits(max_connections=(settings.concurrency or DEFAULT_CONCURRENCY) * 2),
        )
        self._api = openai.AsyncOpenAI(
            api_key=settings.api_key.get_secret_value() or "EMPTY",  # local servers need none
            base_url=settings.base_url,
            http_client=self._http,
            max_retries=0,
            timeout=httpx.Timeout(None, connect=CONNECT_TIMEOUT_S),
        )
        self.local = is_local(settings.base_url)
        self.concurrency = settings.concurrency or (
            LOCAL_CONCURRENCY if self.local else DEFAULT_CONCURRENCY
        )
        self.concurrency_source = "config" if settings.concurrency else "default"
        self._slots = asyncio.Semaphore(self.concurrency)
        self.json_mode = settings.json_mode != "off"
        self.stream_usage = True  # ask for usage in the stream until the server rejects it
        self.server_counts: bool | None = None  # whether the server tokenizes (None: not asked)
        self.prompt_tps: float | None = None  # slowest prompt speed seen in this run
        self.backlog_s = 0.0  # work a server may still do for requests the client gave up
        self.calls = 0  # HTTP attempts made, for tests and reports
        self.timeouts = 0

    def __repr__(self) -> str:
        return f"LLMClient({self.settings!r})"

    async def __aenter__(self) -> LLMClient:
        if self.settings.concurrency is None:
            slots = await self.server_slots()
            if slots:
                self.concurrency, self.concurrency_source = slots, "server"
                self._slots = asyncio.Semaphore(slots)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._own_http:
            await self._http.aclose()

    async def server_slots(self) -> int | None:
        """The server's parallel slots, where it says (llama.cpp ``/props``); else ``None``."""
        try:
            response = await self._http.get(
                server_root(self.settings.base_url) + "/props", timeout=PROBE_TIMEOUT_S
            )
            value = response.json().get("total_slots") if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError, AttributeError):
            return None
        return value if isinstance(value, int) and value > 0 else None

    async def count_tokens(self, text: str) -> int | None:
        """Tokens of ``text`` by the server's own tokenizer, where it offers one (llama.cpp
        ``/tokenize``, llama-cpp-python ``/extras/tokenize/count``, vLLM ``/tokenize``)."""
        root = server_root(self.settings.base_url)
        probes: list[tuple[str, dict[str, Any]]] = [
            ("/tokenize", {"content": text}),
            ("/extras/tokenize/count", {"input": text, "model": self.settings.model}),
            ("/tokenize", {"model": self.settings.model, "prompt": text}),
        ]
        for path, body in probes:
            try:
                response = await self._http.post(root + path, json=body, timeout=PROBE_TIMEOUT_S)
                data = response.json() if response.status_code == 200 else None
            except (httpx.HTTPError, ValueError):
                continue
            if isinstance(data, dict):
                if isinstance(data.get("count"), int):
                    return int(data["count"])
                if isinstance(data.get("tokens"), list):
                    return len(data["tokens"])
        return None

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the server's slots for several requests (an entry and its repair)."""
        if _HOLDING.get():
            yield
            return
        async with self._slots:
            token = _HOLDING.set(True)
            try:
                yield
            finally:
                _HOLDING.reset(token)

    def first_piece_allowance(self, prompt_tokens: int) -> float:
        """Seconds the first streamed piece may take: the silence timeout plus the prompt's
        reading time at the slowest prompt speed seen (or assumed, before any reply)."""
        speed = self.prompt_tps or (LOCAL_PROMPT_TPS if self.local else REMOTE_PROMPT_TPS)
        return self.settings.timeout_s + prompt_tokens / speed + self.backlog_s

    async def complete_json(
        self, messages: Sequence[Message], *, max_tokens: int | None = None, pr: str | None = None
    ) -> Completion:
        """One reply to ``messages``, retried on connection faults, 429 and 5xx.

        Raises :class:`LLMTimeoutError` when the server fell silent (never retried),
        :class:`LLMUnavailableError` when the retries are spent and :class:`LLMResponseError`
        for a reply that cannot be used (4xx, no choice). A reply without a JSON object is
        returned with ``data=None``: the caller may repair it.
        """
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            try:
                async with self.slot():
                    return await self._attempt(messages, max_tokens, pr, attempt, started)
            except _Retry as retry:
                if attempt > self.settings.max_retries:
                    raise self._give_up(retry, attempt, pr) from None
                wait = retry.wait if retry.wait is not None else BACKOFF_BASE_S * 2 ** (attempt - 1)
                if wait > self.settings.max_retry_after_s:
                    raise self._give_up(retry, attempt, pr, f"asked to wait {wait:.0f}s") from None
                log.warning(
                    "LLM request%s: %s; retry %d/%d in %.1fs",
                    f" for {pr}" if pr else "",
                    retry.reason,
                    attempt,
                    self.settings.max_retries,
                    wait,
                )
                await self._sleep(wait)

    def _give_up(
        self, retry: _Retry, attempts: int, pr: str | None, extra: str = ""
    ) -> LLMUnavailableError:
        message = f"{retry.reason} after {attempts} attempt(s)" + (f", {extra}" if extra else "")
        return LLMUnavailableError(message, model=self.settings.model, pr=pr, status=retry.status)

    async def _attempt(
        self,
        messages: Sequence[Message],
        max_tokens: int | None,
        pr: str | None,
        attempt: int,
        started: float,
    ) -> Completion:
        prompt_estimate = sum(estimate_tokens(m["content"]) for m in messages)
        allowance = self.first_piece_allowance(prompt_estimate)
        self.calls += 1
        try:
            reply, json_mode = await self._create_json(messages, max_tokens, allowance)
        except TimeoutError:
            self.timeouts += 1
            # the server may read this prompt to its end before it notices: the next request
            # waits for that too (llama.cpp checks for a closed connection between batches)
            self.backlog_s += allowance
            raise LLMTimeoutError(
                f"no reply within {allowance:.1f}s (prompt of about {prompt_estimate:,} tokens, "
                f"timeout {self.settings.timeout_s:g}s); not sent again: the server may still "
                "be computing it",
                model=self.settings.model,
                pr=pr,
            ) from None
        except _Stalled as stalled:
            self.timeouts += 1
            self.backlog_s += self.settings.timeout_s
            raise LLMTimeoutError(
                f"the reply stopped for {self.settings.timeout_s:g}s after {stalled.pieces} "
                "piece(s); not sent again",
                model=self.settings.model,
                pr=pr,
            ) from None
        except openai.APITimeoutError:
            raise _Retry("could not connect in time", None, None) from None
        except openai.APIConnectionError as exc:
            reason = f"connection failed ({type(exc.__cause__).__name__})"
            raise _Retry(reason, None, None) from None
        except openai.APIStatusError as exc:
            if exc.status_code == 429 or exc.status_code >= 500:
                wait = retry_after_s(exc.response.headers)
                raise _Retry(f"HTTP {exc.status_code}", wait, exc.status_code) from None
            raise LLMResponseError(
                _status_message(exc.status_code),
                model=self.settings.model,
                pr=pr,
                status=exc.status_code,
            ) from None
        except openai.APIError as exc:
            message = f"unusable reply ({type(exc).__name__})"
            raise LLMResponseError(message, model=self.settings.model, pr=pr) from None
        except ValueError as exc:  # a body that is not JSON text (a PNG, bad UTF-8 …)
            message = f"unusable reply: not JSON text ({type(exc).__name__})"
            raise LLMResponseError(message, model=self.settings.model, pr=pr) from None
        completion = self._completion(reply, messages, attempt, started, json_mode, pr)
        if completion.estimated and self.server_counts is not False:
            completion = await self._counted(completion, messages, reply)
        return completion

    async def _counted(
        self, completion: Completion, messages: Sequence[Message], reply: _Streamed
    ) -> Completion:
        """Usage from the server's own tokenizer when its reply carried none (llama-cpp-python
        does not stream usage); the chat template's few tokens per message are not in it."""
        prompt = await self.count_tokens("\n".join(m["content"] for m in messages))
        output = await self.count_tokens(reply.content + reply.reasoning) if prompt else None
        self.server_counts = prompt is not None
        if prompt is None or output is None:
            return completion
        return replace(completion, prompt_tokens=prompt, completion_tokens=output)

    async def _create_json(
        self, messages: Sequence[Message], max_tokens: int | None, allowance: float
    ) -> tuple[_Streamed, bool]:
        """The reply, dropping ``response_format`` or ``stream_options`` when the server
        rejects them (then asking again: a 400 means nothing was computed)."""
        for _ in range(3):
            json_mode = self.json_mode
            try:
                return await self._stream(messages, max_tokens, json_mode, allowance), json_mode
            except openai.APIStatusError as exc:
                if not self._drop_rejected_option(exc, json_mode):
                    raise
            self.calls += 1
        return await self._stream(messages, max_tokens, self.json_mode, allowance), self.json_mode

    async def _stream(
        self, messages: Sequence[Message], max_tokens: int | None, json_mode: bool, first: float
    ) -> _Streamed:
        extra: dict[str, Any] = {}
        if json_mode:
            extra["response_format"] = {"type": "json_object"}
        if self.stream_usage:
            extra["stream_options"] = {"include_usage": True}
        sent = time.monotonic()
        stream: Any = await asyncio.wait_for(
            self._api.chat.completions.create(
                model=self.settings.model,
                messages=list(messages),  # type: ignore[arg-type]
                temperature=self.settings.temperature,
                max_tokens=max_tokens or self.settings.max_output_tokens,
                stream=True,
                **extra,
            ),
            first,
        )
        content: list[str] = []
        reasoning: list[str] = []
        finish: str | None = None
        usage: Any = None
        first_at: float | None = None
        pieces = iter_with_silence(stream, first - (time.monotonic() - sent), self.settings)
        try:
            async for chunk in pieces:
                if first_at is None:
                    first_at = time.monotonic()
                usage = getattr(chunk, "usage", None) or usage
                for choice in getattr(chunk, "choices", None) or ():
                    delta = getattr(choice, "delta", None)
                    if (text := getattr(delta, "content", None)) and isinstance(text, str):
                        content.append(text)
                    for name in ("reasoning_content", "reasoning"):
                        if (thought := getattr(delta, name, None)) and isinstance(thought, str):
                            reasoning.append(thought)
                    finish = getattr(choice, "finish_reason", None) or finish
        finally:
            await stream.close()  # a closed stream tells the server to stop computing
        first_piece = (first_at or time.monotonic()) - sent
        return _Streamed("".join(content), "".join(reasoning), finish, usage, first_piece)

    def _drop_rejected_option(self, exc: openai.APIStatusError, json_mode: bool) -> bool:
        if exc.status_code not in (400, 422):
            return False
        text = f"{exc.message} {exc.body}".lower()
        if self.stream_usage and "stream_options" in text:
            log.warning("the server rejected stream_options; usage is estimated when missing")
            self.stream_usage = False
            return True
        if (
            json_mode
            and self.settings.json_mode == "auto"
            and ("response_format" in text or "json" in text)
        ):
            log.warning("the server rejected response_format; continuing without JSON mode")
            self.json_mode = False
            return True
        return False

    def _completion(
        self,
        reply: _Streamed,
        messages: Sequence[Message],
        attempt: int,
        started: float,
        json_mode: bool,
        pr: str | None,
    ) -> Completion:
        answer, tagged, reasoning_cut = split_reasoning(reply.content)
        reasoning = "\n".join(x for x in (reply.reasoning, tagged) if x)
        if not answer and not reasoning:
            raise LLMResponseError(
                "reply has no choice or no text", model=self.settings.model, pr=pr
            )
        usage = reply.usage
        prompt = getattr(usage, "prompt_tokens", None)
        completion = getattr(usage, "completion_tokens", None)
        estimated = not isinstance(prompt, int) or not isinstance(completion, int)
        if estimated:
            prompt = sum(estimate_tokens(m["content"]) for m in messages)
            completion = estimate_tokens(reply.content) + estimate_tokens(reply.reasoning)
        self.backlog_s = 0.0  # the server answered: it is free again
        if reply.first_piece_s > 0 and prompt:
            speed = int(prompt) / reply.first_piece_s
            self.prompt_tps = speed if self.prompt_tps is None else min(self.prompt_tps, speed)
        truncated = reply.finish == "length"
        return Completion(
            content=answer,
            data=parse_json_object(answer),
            prompt_tokens=int(prompt or 0),
            completion_tokens=int(completion or 0),
            estimated=estimated,
            attempts=attempt,
            latency_s=time.monotonic() - started,
            json_mode=json_mode,
            reasoning=reasoning,
            truncated=truncated,
            reasoning_truncated=reasoning_cut or (truncated and not answer),
            first_piece_s=reply.first_piece_s,
        )


class _Stalled(Exception):
    def __init__(self, pieces: int) -> None:
        super().__init__(f"stalled after {pieces} piece(s)")
        self.pieces = pieces


async def iter_with_silence(stream: Any, first: float, settings: LLMSettings) -> AsyncIterator[Any]:
    """The stream's pieces; the first must come within ``first`` seconds (else
    ``TimeoutError``), each next one within ``settings.timeout_s`` (else :class:`_Stalled`)."""
    iterator = stream.__aiter__()
    pieces = 0
    while True:
        wait = max(0.001, first) if pieces == 0 else settings.timeout_s
        try:
            chunk = await asyncio.wait_for(iterator.__anext__(), wait)
        except StopAsyncIteration:
            return
        except TimeoutError:
            if pieces == 0:
                raise
            raise _Stalled(pieces) from None
        pieces += 1
        yield chunk


def _status_message(status: int) -> str:
    if status in (401, 403):
        return f"the endpoint rejected the API key (HTTP {status})"
    if status == 404:
        return "the endpoint or model was not found (HTTP 404); check the base URL and model"
    return f"the endpoint refused the request (HTTP {status})"
