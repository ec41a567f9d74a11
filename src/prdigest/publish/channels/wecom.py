"""WeCom (企业微信) group robot: a markdown message within its 4096-byte limit."""

from __future__ import annotations

from typing import Any, Literal

from prdigest.publish.channels.base import (
    WebhookChannel,
    WebhookConfig,
    fitted_markdown,
    webhook_kind,
)
from prdigest.publish.channels.text import chat_markdown
from prdigest.publish.summary import Summary

WECOM_LIMIT = 4096  # bytes of markdown content


class WeComConfig(WebhookConfig):
    """WeCom (企业微信) group robot (markdown)."""

    type: Literal["wecom"]


class WeComChannel(WebhookChannel):
    """WeCom (企业微信) group robot: a markdown message within its 4096-byte limit."""

    kind = "wecom"

    def payload(self, summary: Summary) -> dict[str, Any]:
        heading = f"**{chat_markdown(summary.heading)}**"
        content = fitted_markdown(summary, heading, self.top, WECOM_LIMIT)
        return {"msgtype": "markdown", "markdown": {"content": content}}


KIND = webhook_kind(WeComConfig, WeComChannel)
