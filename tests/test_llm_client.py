"""The LLM client: tolerant JSON parsing, retry-after, bounded retries, errors without secrets."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import httpx
import pytest

from prdigest.core.errors import (
    LLMResponseError,
    LLMTimeoutError,
    LLMUnavailableError,
    PrdigestError,
)
from prdigest.write.llm.check import check_endpoint
from prdigest.write.llm.client import LLMClient, parse_json_object, retry_after_s
from prdigest.write.llm.settings import LLMSettings

from fakellm import Call, FakeLLM, Reply

KEY = "sk-client-test-SECRET-9"
MESSAGES = ({"role": "user", "content": "hi"},)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('Here you go:\n```\n{"a": [1, 2]}\n```\nDone.', {"a": [1, 2]}),
        (
            'Sure! {"title": "标题", "n": {"x": 1}} hope this helps',
            {"title": "标题", "n": {"x": 1}},
        ),
        ('<think>{"draft": 0} let me think</think>{"a": 2}', {"a": 2}),
        ("[1, 2, 3]", None),
        ('{"a": 1', None),
        ("no json here", None),
    ],
)
def test_parse_json_object(text: str, expected: object) -> None:
    assert parse_json_object(text) == expected


def test_retry_after_forms() -> None:
    now = datetime(2026, 6, 10, 12, 0, 0, tzinfo=UTC)
    assert retry_after_s(httpx.Headers({"retry-after": "7"})) == 7.0
    assert retry_after_s(httpx.Headers({"retry-after-ms": "1500"})) == 1.5
    date = "Wed, 10 Jun 2026 12:00:30 GMT"
    assert retry_after_s(httpx.Headers({"retry-after": date}), now) == 30.0
    assert retry_after_s(httpx.Headers({"x-ratelimit-reset-requests": "1m30s"})) == 90.0
    assert retry_after_s(httpx.Headers({})) is None


class Waits(list[float]):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def settings(url: str, **extra: object) -> LLMSettings:
    return LLMSettings(base_url=url, model="m", api_key=KEY, **extra)  # type: ignore[arg-type]


def sequence(*replies: Reply) -> object:
    items = list(replies)

    def respond(call: Call) -> Reply:
        return items.pop(0) if len(items) > 1 else items[0]

    return respond


def complete(url: str, waits: Waits, **extra: object) -> tuple[object, LLMClient]:
    async def go() -> tuple[object, LLMClient]:
        async with LLMClient(settings(url, **extra), sleep=waits) as client:
            try:
                return await client.complete_json(MESSAGES, pr="o/r#1"), client
            except PrdigestError as exc:
                return exc, client

    return asyncio.run(go())


def test_429_honours_retry_after_and_500_backs_off() -> None:
    waits = Waits()
    replies = sequence(
        Reply(status=429, headers={"retry-after": "2"}),
        Reply(status=503),
        Reply('{"ok": true}'),
    )
    with FakeLLM(replies) as fake:  # type: ignore[arg-type]
        result, client = complete(fake.url, waits)
    assert getattr(result, "data", None) == {"ok": True}
    assert waits == [2.0, 2.0]  # retry-after, then exponential backoff (1s × 2¹)
    assert client.calls == 3


def test_retries_are_bounded() -> None:
    waits = Waits()
    with FakeLLM(sequence(Reply(status=500))) as fake:  # type: ignore[arg-type]
        result, client = complete(fake.url, waits, max_retries=2)
    assert isinstance(result, LLMUnavailableError) and result.status == 500
    assert client.calls == 3 and len(waits) == 2
    assert KEY not in str(result)


def test_a_retry_after_beyond_the_cap_gives_up() -> None:
    with FakeLLM(sequence(Reply(status=429, headers={"retry-after": "3600"}))) as fake:  # type: ignore[arg-type]
        result, client = complete(fake.url, Waits())
    assert isinstance(result, LLMUnavailableError) and "3600" in str(result)
    assert client.calls == 1


def test_timeout() -> None:
    with FakeLLM(sequence(Reply('{"a": 1}', delay=0.6))) as fake:  # type: ignore[arg-type]
        result, _ = complete(fake.url, Waits(), timeout_s=0.2, max_retries=1)
    assert isinstance(result, LLMTimeoutError) and "2 attempt" in str(result)


@pytest.mark.parametrize(
    ("reply", "needle"),
    [
        (Reply(empty_choices=True), "no choice"),
        (Reply(status=401, content="bad key"), "rejected the API key"),
        (Reply(status=404), "not found"),
    ],
)
def test_unusable_replies(reply: Reply, needle: str) -> None:
    with FakeLLM(sequence(reply)) as fake:  # type: ignore[arg-type]
        result, client = complete(fake.url, Waits())
    assert isinstance(result, LLMResponseError) and needle in str(result)
    assert client.calls == 1 and KEY not in str(result) and "(m, o/r#1)" in str(result)


def test_usage_is_estimated_when_the_server_sends_none() -> None:
    with FakeLLM(sequence(Reply('{"a": 1}', usage={}))) as fake:  # type: ignore[arg-type]
        result, _ = complete(fake.url, Waits())
    assert getattr(result, "estimated", False) and getattr(result, "prompt_tokens", 0) > 0


def test_check_endpoint_reports_json_mode() -> None:
    def picky(call: Call) -> Reply:
        if call.json_mode:
            return Reply("response_format is not supported", status=400)
        return Reply('Sure: {"ok": true}')

    with FakeLLM(picky) as fake:
        result = asyncio.run(check_endpoint(settings(fake.url)))
    assert result.reply_ok and not result.json_mode
    with FakeLLM(sequence(Reply('{"ok": true}'))) as fake:  # type: ignore[arg-type]
        result = asyncio.run(check_endpoint(settings(fake.url)))
    assert result.reply_ok and result.json_mode


def test_reprs_hide_the_key() -> None:
    s = settings("http://127.0.0.1:9/v1")
    client = LLMClient(s)
    for text in (repr(s), str(s), repr(client), s.model_dump_json(), str(s.model_dump())):
        assert KEY not in text
    asyncio.run(client.aclose())
