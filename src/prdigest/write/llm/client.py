"""An OpenAI-compatible chat client for JSON replies: timeouts, bounded retries, concurrency.

Built on the ``openai`` SDK (async) with an injected ``httpx.AsyncClient``, so tests and callers
control the transport. The SDK's own retries are switched off (``max_retries=0``): this module
retries itself, so it can honour ``retry-after`` on 429/5xx, log every retry, cap the wait and
take an injected ``sleep`` (tests do not wait for real).

JSON: ``response_format={"type": "json_object"}`` is asked for where the server supports it.
A server that rejects it with a 400 (many local servers and older gateways do) is asked again
without it, and the client remembers that for the rest of the run. Either way the reply is
parsed tolerantly: a bare object, an object in a code fence, or the first object embedded in
prose, after removing ``<think>…</think>`` blocks that reasoning models put in front.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

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
from prdigest.write.llm.settings import LLMSettings

log = logging.getLogger("prdigest.llm")

Sleep = Callable[[float], Awaitable[None]]
Message = dict[str, str]
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)
_THINK = re.compile(r"<think>.*?</think>", re.S)
_DURATION = re.compile(r"^\s*(?:(\d+(?:\.\d+)?)m(?!s))?\s*(?:(\d+(?:\.\d+)?)s)?\s*$")
BACKOFF_BASE_S = 1.0


@dataclass(frozen=True)
class Completion:
    """One successful reply: its text, the JSON object in it, and what it cost."""

    content: str
    data: dict[str, Any] | None  # None: the reply held no JSON object
    prompt_tokens: int
    completion_tokens: int
    estimated: bool  # the server sent no usage; tokens are estimates
    attempts: int
    latency_s: float
    json_mode: bool  # whether response_format was sent with the successful attempt


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in a model reply: bare, fenced, or the first one embedded in prose."""
    text = _THINK.sub("", text).strip()
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


class _Retry(Exception):
    """Internal: this attempt failed in a way worth retrying."""

    def __init__(self, reason: str, wait: float | None, kind: str, status: int | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait
        self.kind = kind  # "timeout" | "unavailable"
        self.status = status


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
            timeout=httpx.Timeout(settings.timeout_s, connect=min(10.0, settings.timeout_s)),
            limits=httpx.Limits(max_connections=settings.concurrency * 2),
        )
        self._api = openai.AsyncOpenAI(
            api_key=settings.api_key.get_secret_value() or "EMPTY",  # local servers need none
            base_url=settings.base_url,
            http_client=self._http,
            max_retries=0,
            timeout=settings.timeout_s,
        )
        self._slots = asyncio.Semaphore(settings.concurrency)
        self.json_mode = settings.json_mode != "off"
        self.calls = 0  # HTTP attempts made, for tests and reports

    def __repr__(self) -> str:
        return f"LLMClient({self.settings!r})"

    async def __aenter__(self) -> LLMClient:
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

    async def complete_json(
        self, messages: Sequence[Message], *, max_tokens: int | None = None, pr: str | None = None
    ) -> Completion:
        """One reply to ``messages``, retried on timeouts, connection faults, 429 and 5xx.

        Raises :class:`LLMTimeoutError` / :class:`LLMUnavailableError` when the retries are
        spent and :class:`LLMResponseError` for a reply that cannot be used (4xx, no choice).
        A reply without a JSON object is returned with ``data=None``: the caller may repair it.
        """
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            try:
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
    ) -> LLMTimeoutError | LLMUnavailableError:
        message = f"{retry.reason} after {attempts} attempt(s)" + (f", {extra}" if extra else "")
        if retry.kind == "timeout":
            return LLMTimeoutError(message, model=self.settings.model, pr=pr)
        return LLMUnavailableError(message, model=self.settings.model, pr=pr, status=retry.status)

    async def _attempt(
        self,
        messages: Sequence[Message],
        max_tokens: int | None,
        pr: str | None,
        attempt: int,
        started: float,
    ) -> Completion:
        async with self._slots:
            self.calls += 1
            try:
                reply, json_mode = await self._create_json(messages, max_tokens)
            except openai.APITimeoutError:
                reason = f"timed out after {self.settings.timeout_s:g}s"
                raise _Retry(reason, None, "timeout", None) from None
            except openai.APIConnectionError as exc:
                reason = f"connection failed ({type(exc.__cause__).__name__})"
                raise _Retry(reason, None, "unavailable", None) from None
            except openai.APIStatusError as exc:
                if exc.status_code == 429 or exc.status_code >= 500:
                    wait = retry_after_s(exc.response.headers)
                    raise _Retry(
                        f"HTTP {exc.status_code}", wait, "unavailable", exc.status_code
                    ) from None
                message = _status_message(exc.status_code)
                raise LLMResponseError(
                    message, model=self.settings.model, pr=pr, status=exc.status_code
                ) from None
            except openai.APIError as exc:
                message = f"unusable reply ({type(exc).__name__})"
                raise LLMResponseError(message, model=self.settings.model, pr=pr) from None
        return self._completion(reply, messages, attempt, started, json_mode, pr)

    async def _create_json(
        self, messages: Sequence[Message], max_tokens: int | None
    ) -> tuple[Any, bool]:
        """The reply, asking for JSON mode unless the server has rejected it (then ask again)."""
        json_mode = self.json_mode
        try:
            return await self._create(messages, max_tokens, json_mode), json_mode
        except openai.APIStatusError as exc:
            if not self._json_mode_rejected(exc, json_mode):
                raise
        log.warning("the server rejected response_format; continuing without JSON mode")
        self.json_mode = False
        self.calls += 1
        return await self._create(messages, max_tokens, False), False

    async def _create(
        self, messages: Sequence[Message], max_tokens: int | None, json_mode: bool
    ) -> Any:
        extra: dict[str, Any] = {}
        if json_mode:
            extra["response_format"] = {"type": "json_object"}
        return await self._api.chat.completions.create(
            model=self.settings.model,
            messages=list(messages),  # type: ignore[arg-type]
            temperature=self.settings.temperature,
            max_tokens=max_tokens or self.settings.max_output_tokens,
            **extra,
        )

    def _json_mode_rejected(self, exc: openai.APIStatusError, json_mode: bool) -> bool:
        if not json_mode or self.settings.json_mode != "auto" or exc.status_code not in (400, 422):
            return False
        text = f"{exc.message} {exc.body}".lower()
        return "response_format" in text or "json" in text

    def _completion(
        self,
        reply: Any,
        messages: Sequence[Message],
        attempt: int,
        started: float,
        json_mode: bool,
        pr: str | None,
    ) -> Completion:
        choices = getattr(reply, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        content = getattr(message, "content", None)
        if not isinstance(content, str) or not content.strip():
            raise LLMResponseError(
                "reply has no choice or no text", model=self.settings.model, pr=pr
            )
        usage = getattr(reply, "usage", None)
        prompt = getattr(usage, "prompt_tokens", None)
        completion = getattr(usage, "completion_tokens", None)
        estimated = not isinstance(prompt, int) or not isinstance(completion, int)
        if estimated:
            prompt = sum(estimate_tokens(m["content"]) for m in messages)
            completion = estimate_tokens(content)
        return Completion(
            content=content,
            data=parse_json_object(content),
            prompt_tokens=int(prompt or 0),
            completion_tokens=int(completion or 0),
            estimated=estimated,
            attempts=attempt,
            latency_s=time.monotonic() - started,
            json_mode=json_mode,
        )


def _status_message(status: int) -> str:
    if status in (401, 403):
        return f"the endpoint rejected the API key (HTTP {status})"
    if status == 404:
        return "the endpoint or model was not found (HTTP 404); check the base URL and model"
    return f"the endpoint refused the request (HTTP {status})"
