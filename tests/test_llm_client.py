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
from prdigest.write.llm.check import check_endpoint, predict_run
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


def test_a_silent_server_times_out_once_and_is_not_asked_again() -> None:
    # a single-slot server that starts on the request and then says nothing: the client gives
    # up after the allowance and must not queue a second copy behind the first
    slow = Reply('{"a": 1}', stall_after=0)
    with FakeLLM(sequence(slow), slots=1) as fake:  # type: ignore[arg-type]
        result, client = complete(fake.url, Waits(), timeout_s=2, max_retries=3)
        assert len(fake.calls) == 1
    assert isinstance(result, LLMTimeoutError) and "not sent again" in str(result)
    assert client.calls == 1 and client.timeouts == 1


@pytest.mark.slow
def test_a_reply_that_stops_midway_times_out_on_silence_not_total_time() -> None:
    # 40 pieces 0.1 s apart take longer than the 2 s timeout in total, and pass: only silence
    # counts; a reply that stops after 3 pieces fails after one timeout of silence
    long = Reply('{"a": "' + "x" * 900 + '"}', piece_delay=0.05)
    with FakeLLM(sequence(long)) as fake:  # type: ignore[arg-type]
        result, _ = complete(fake.url, Waits(), timeout_s=2)
    assert getattr(result, "data", None) == {"a": "x" * 900}
    with FakeLLM(sequence(Reply('{"a": "' + "y" * 200 + '"}', stall_after=3))) as fake:  # type: ignore[arg-type]
        result, _ = complete(fake.url, Waits(), timeout_s=2)
        assert len(fake.calls) == 1
    assert isinstance(result, LLMTimeoutError) and "after 3 piece(s)" in str(result)


def test_the_first_piece_may_take_the_prompts_reading_time() -> None:
    s = settings("http://127.0.0.1:9/v1", timeout_s=60)
    client = LLMClient(s)
    assert client.first_piece_allowance(8_000) == 60 + 8_000 / 8.0  # local: 8 tokens/s assumed
    client.prompt_tps = 40.0  # learned from a reply
    assert client.first_piece_allowance(8_000) == 60 + 200
    remote = LLMClient(settings("https://api.example.com/v1"))
    assert remote.first_piece_allowance(8_000) == 60 + 40
    asyncio.run(client.aclose())
    asyncio.run(remote.aclose())


def test_concurrency_from_the_servers_slots_else_one_for_a_local_server() -> None:
    async def slots(url: str, **extra: object) -> tuple[int, str]:
        async with LLMClient(settings(url, **extra)) as client:
            return client.concurrency, client.concurrency_source

    with FakeLLM(sequence(Reply('{"a": 1}')), slots=3, props=True) as fake:  # type: ignore[arg-type]
        assert asyncio.run(slots(fake.url)) == (3, "server")
        assert asyncio.run(slots(fake.url, concurrency=5)) == (5, "config")
    with FakeLLM(sequence(Reply('{"a": 1}'))) as fake:  # type: ignore[arg-type]
        assert asyncio.run(slots(fake.url)) == (1, "default")  # loopback, no /props


@pytest.mark.parametrize(
    ("reply", "data", "cut"),
    [
        (Reply('<think>{"title": "草稿"}</think>{"a": 2}'), {"a": 2}, False),
        (Reply('<thinking>先写 {"a": 0}</thinking>\n{"a": 3}'), {"a": 3}, False),
        (Reply('I should write {"a": 0} first.</think>{"a": 4}'), {"a": 4}, False),
        (Reply('{"a": 5}', reasoning='draft {"a": 0}'), {"a": 5}, False),
        (Reply('<think>draft {"a": 0} and more', finish_reason="length"), None, True),
        (Reply("", reasoning='{"a": 0} still thinking', finish_reason="length"), None, True),
    ],
    ids=["think", "thinking", "no-opening-tag", "reasoning_content", "truncated", "cut-field"],
)
def test_reasoning_is_removed_in_every_form(reply: Reply, data: object, cut: bool) -> None:
    with FakeLLM(sequence(reply)) as fake:  # type: ignore[arg-type]
        result, _ = complete(fake.url, Waits())
    assert getattr(result, "data", "error") == data
    assert getattr(result, "reasoning_truncated", None) is cut
    assert getattr(result, "reasoning", "")  # what was removed is kept apart


def test_a_server_that_rejects_stream_options_is_asked_without_them() -> None:
    def picky(call: Call) -> Reply:
        if "stream_options" in call.body:
            return Reply("unknown field stream_options", status=400)
        return Reply('{"ok": true}', usage={})

    with FakeLLM(picky) as fake:
        result, client = complete(fake.url, Waits())
    assert getattr(result, "data", None) == {"ok": True} and not client.stream_usage
    assert getattr(result, "estimated", False)


def test_tokens_are_counted_by_the_server_where_it_can() -> None:
    async def count(url: str) -> int | None:
        async with LLMClient(settings(url)) as client:
            return await client.count_tokens("abcdefghi")

    with FakeLLM(sequence(Reply("{}")), count_tokens=lambda t: len(t) + 1) as fake:  # type: ignore[arg-type]
        assert asyncio.run(count(fake.url)) == 10
    with FakeLLM(sequence(Reply("{}"))) as fake:  # type: ignore[arg-type]
        assert asyncio.run(count(fake.url)) is None


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
        result = asyncio.run(check_endpoint(settings(fake.url), MESSAGES))
    assert result.reply_ok and not result.json_mode
    with FakeLLM(sequence(Reply('{"ok": true}'))) as fake:  # type: ignore[arg-type]
        result = asyncio.run(check_endpoint(settings(fake.url), MESSAGES))
    assert result.reply_ok and result.json_mode


def test_check_measures_a_realistic_probe_and_predicts_a_run() -> None:
    # a slow single-slot server: 2 s before the first piece, then pieces 0.05 s apart
    slow = Reply('{"title": "' + "t" * 200 + '"}', delay=2.0, piece_delay=0.05,
                 usage={"prompt_tokens": 6000, "completion_tokens": 100})  # fmt: skip
    probe = ({"role": "user", "content": "def f(x):\n    return x + 1\n" * 200},)
    with FakeLLM(sequence(slow), slots=1, props=True, count_tokens=lambda t: 1800) as fake:  # type: ignore[arg-type]
        result = asyncio.run(check_endpoint(settings(fake.url), probe))
    assert result.concurrency == 1 and result.concurrency_source == "server"
    assert result.prompt_tps is not None and 1_000 < result.prompt_tps < 3_000  # 6000 / ~2 s
    assert result.server_tokens == 1800 and result.estimated_tokens > 1800
    forecast = predict_run(result, 8, 6000)
    assert forecast is not None and forecast.total_s >= 9 * forecast.request_s * 0.99


def test_reprs_hide_the_key() -> None:
    s = settings("http://127.0.0.1:9/v1")
    client = LLMClient(s)
    for text in (repr(s), str(s), repr(client), s.model_dump_json(), str(s.model_dump())):
        assert KEY not in text
    asyncio.run(client.aclose())
