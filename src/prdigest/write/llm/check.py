"""``prdigest llm-check``: one realistic request, measured, and what a run would take.

The probe is a real entry prompt (the caller builds it, e.g. from the bundled sample at the
configured budget), streamed like a run's requests. From it: the prompt reading speed (prompt
tokens over the time to the first streamed piece), the generation speed (completion tokens over
the rest), whether JSON mode works, the server's slots and, where the server tokenizes, how far
prdigest's token estimate is from the server's count. :func:`predict_run` turns the speeds into
the time of a digest with a given number of paragraphs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import httpx

from prdigest.write.llm.budget import estimate_tokens
from prdigest.write.llm.client import LLMClient, Message
from prdigest.write.llm.settings import LLMSettings

PROBE_OUTPUT_TOKENS = 160
TYPICAL_OUTPUT_TOKENS = 500  # a paragraph and its JSON
TITLES_PROMPT_TOKENS = 1_500  # a day's titles batch
TITLES_OUTPUT_TOKENS = 800


@dataclass(frozen=True)
class CheckResult:
    latency_s: float
    json_mode: bool  # the server accepted response_format=json_object
    reply_ok: bool  # the reply held a JSON object (or began one when cut at the probe's end)
    reply: str
    truncated: bool  # the reply was cut at the probe's output allowance
    prompt_tokens: int
    completion_tokens: int
    first_piece_s: float
    prompt_tps: float | None  # prompt tokens read per second
    generation_tps: float | None  # completion tokens per second
    concurrency: int
    concurrency_source: str  # "server" | "config" | "default"
    estimated_tokens: int  # prdigest's estimate of the probe's prompt
    server_tokens: int | None  # the server's own count of the probe's text, where it has one
    usage_estimated: bool  # the server reported no usage


async def check_endpoint(
    settings: LLMSettings,
    probe: Sequence[Message],
    *,
    http_client: httpx.AsyncClient | None = None,
) -> CheckResult:
    """Send ``probe`` once (streamed, with the usual retries); raises ``LLMError`` on failure."""
    text = "\n".join(m["content"] for m in probe)
    async with LLMClient(settings, http_client=http_client) as client:
        counted = await client.count_tokens(text)
        reply = await client.complete_json(probe, max_tokens=PROBE_OUTPUT_TOKENS)
    generating = reply.latency_s - reply.first_piece_s
    return CheckResult(
        latency_s=reply.latency_s,
        json_mode=reply.json_mode,
        reply_ok=reply.data is not None or (reply.truncated and reply.content.lstrip()[:1] == "{"),
        reply=reply.content,
        truncated=reply.truncated,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        first_piece_s=reply.first_piece_s,
        prompt_tps=reply.prompt_tokens / reply.first_piece_s if reply.first_piece_s > 0 else None,
        generation_tps=reply.completion_tokens / generating if generating > 0 else None,
        concurrency=client.concurrency,
        concurrency_source=client.concurrency_source,
        estimated_tokens=sum(estimate_tokens(m["content"]) for m in probe),
        server_tokens=counted,
        usage_estimated=reply.estimated,
    )


@dataclass(frozen=True)
class RunForecast:
    paragraphs: int
    request_s: float  # one paragraph request at the configured budget
    total_s: float


def predict_run(result: CheckResult, paragraphs: int, prompt_tokens: int) -> RunForecast | None:
    """The time of a digest with ``paragraphs`` paragraph requests of ``prompt_tokens`` each
    and one titles batch, at the measured speeds and the run's concurrency (no repairs)."""
    if not result.prompt_tps or not result.generation_tps:
        return None
    one = prompt_tokens / result.prompt_tps + TYPICAL_OUTPUT_TOKENS / result.generation_tps
    titles = TITLES_PROMPT_TOKENS / result.prompt_tps + TITLES_OUTPUT_TOKENS / result.generation_tps
    rounds = math.ceil((paragraphs + 1) / max(1, result.concurrency))
    longest = max(one, titles)
    return RunForecast(paragraphs, one, rounds * longest)
