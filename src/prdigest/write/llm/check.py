"""``prdigest llm-check``: one tiny request that shows the endpoint, model and JSON mode work."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from prdigest.write.llm.client import LLMClient
from prdigest.write.llm.settings import LLMSettings

PROBE = (
    {"role": "system", "content": 'Reply with the JSON object {"ok": true} and nothing else.'},
    {"role": "user", "content": "ping"},
)


@dataclass(frozen=True)
class CheckResult:
    latency_s: float
    json_mode: bool  # the server accepted response_format=json_object
    reply_ok: bool  # the reply held the expected JSON object
    reply: str
    prompt_tokens: int
    completion_tokens: int


async def check_endpoint(
    settings: LLMSettings, *, http_client: httpx.AsyncClient | None = None
) -> CheckResult:
    """Send :data:`PROBE` once (with the usual retries); raises ``LLMError`` on failure."""
    async with LLMClient(settings, http_client=http_client) as client:
        reply = await client.complete_json(PROBE, max_tokens=20)
    return CheckResult(
        latency_s=reply.latency_s,
        json_mode=reply.json_mode,
        reply_ok=bool(reply.data and reply.data.get("ok") is True),
        reply=reply.content,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
    )
