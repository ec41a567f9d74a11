"""DingTalk custom robot: a markdown message, optionally signed (加签); nobody is @-mentioned.

Signature: ``timestamp`` (milliseconds) and ``sign`` as query parameters, where ``sign`` is
``base64(HMAC-SHA256(key=secret, message=f"{timestamp}\\n{secret}"))`` (URL-encoded once, by
the HTTP client).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any, Literal

from pydantic import field_validator

from prdigest.core.configbase import EnvName, env_name
from prdigest.publish.channels.base import (
    WebhookChannel,
    WebhookConfig,
    fitted_markdown,
    webhook_kind,
)
from prdigest.publish.channels.text import chat_markdown
from prdigest.publish.summary import Summary

DINGTALK_LIMIT = 18000


class DingTalkConfig(WebhookConfig):
    """DingTalk custom robot (markdown; optional 加签 signature secret)."""

    type: Literal["dingtalk"]
    secret_env: EnvName | None = None

    _check_secret = field_validator("secret_env")(env_name)


def dingtalk_sign(timestamp_ms: int, secret: str) -> str:
    message = f"{timestamp_ms}\n{secret}".encode()
    return base64.b64encode(hmac.new(secret.encode(), message, hashlib.sha256).digest()).decode()


class DingTalkChannel(WebhookChannel):
    """DingTalk custom robot: a markdown message; nobody is @-mentioned."""

    kind = "dingtalk"

    def payload(self, summary: Summary) -> dict[str, Any]:
        heading = f"#### {chat_markdown(summary.heading)}"
        text = fitted_markdown(summary, heading, self.top, DINGTALK_LIMIT)
        return {
            "msgtype": "markdown",
            "markdown": {"title": chat_markdown(summary.heading), "text": text},
            "at": {"isAtAll": False, "atMobiles": [], "atUserIds": []},
        }

    def sign(self, payload: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        if self._secret is None:
            return payload, {}
        timestamp = int(self._clock() * 1000)
        return payload, {
            "timestamp": str(timestamp),
            "sign": dingtalk_sign(timestamp, self._secret.reveal()),
        }


KIND = webhook_kind(DingTalkConfig, DingTalkChannel)
