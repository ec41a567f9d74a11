"""Feishu / Lark custom bot: an interactive card, optionally signed.

Signature (the service's documented algorithm): ``timestamp`` (seconds) and ``sign`` in the
JSON body, where ``sign`` is ``base64(HMAC-SHA256(key=f"{timestamp}\\n{secret}", message=b""))``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any, Literal

import httpx
from pydantic import field_validator

from prdigest.core.configbase import EnvName, env_name
from prdigest.publish.channels.base import WebhookChannel, WebhookConfig, webhook_kind
from prdigest.publish.channels.text import chat_markdown
from prdigest.publish.summary import Summary

FEISHU_BODY_LIMIT = 20 * 1024  # bytes: the custom bot's documented request-body limit
SIGNATURE_ROOM = 128  # what `timestamp` and `sign` add to the body when the bot is signed


class FeishuConfig(WebhookConfig):
    """Feishu / Lark custom bot (interactive card; optional signature secret)."""

    type: Literal["feishu", "lark"]
    secret_env: EnvName | None = None

    _check_secret = field_validator("secret_env")(env_name)


def feishu_sign(timestamp: int, secret: str) -> str:
    key = f"{timestamp}\n{secret}".encode()
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()


class FeishuChannel(WebhookChannel):
    """Feishu / Lark custom bot: an interactive card."""

    kind = "feishu"

    def payload(self, summary: Summary) -> dict[str, Any]:
        """The card with as many of the top entries as fit the request-body limit."""
        top = self.top
        while True:
            card = self._card(summary, top)
            size = len(json.dumps(card, ensure_ascii=False).encode("utf-8"))
            if size <= FEISHU_BODY_LIMIT - SIGNATURE_ROOM or top == 0:
                return card
            top -= 1

    def _card(self, summary: Summary, top: int) -> dict[str, Any]:
        elements: list[dict[str, Any]] = [
            {"tag": "div", "text": {"tag": "lark_md", "content": chat_markdown(summary.counts)}}
        ]
        if summary.empty:
            elements.append({"tag": "div", "text": {"tag": "plain_text", "content": summary.empty}})
        shown = summary.top(top)
        if shown:
            elements.append({"tag": "hr"})
        for index, entry in enumerate(shown, start=1):
            content = (
                f"**{index}. [{chat_markdown(entry.title)}]({entry.link})**\n"
                f"{chat_markdown(entry.reason)}\n"
                f"[#{entry.number}]({entry.pr_url}) · {entry.level_label} · "
                f"{chat_markdown(entry.area)}"
            )
            elements.append({"tag": "div", "text": {"tag": "lark_md", "content": content}})
        more = summary.more_line(len(shown))
        if more:
            elements.append({"tag": "note", "elements": [{"tag": "plain_text", "content": more}]})
        if summary.page_url:
            button = {
                "tag": "button",
                "text": {"tag": "plain_text", "content": summary.read_more},
                "type": "primary",
                "url": summary.page_url,
            }
            elements.append({"tag": "action", "actions": [button]})
        return {
            "msg_type": "interactive",
            "card": {
                "config": {"wide_screen_mode": True},
                "header": {
                    "template": "blue",
                    "title": {"tag": "plain_text", "content": summary.heading},
                },
                "elements": elements,
            },
        }

    def sign(self, payload: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        if self._secret is None:
            return payload, {}
        timestamp = int(self._clock())
        signed = {
            "timestamp": str(timestamp),
            "sign": feishu_sign(timestamp, self._secret.reveal()),
            **payload,
        }
        return signed, {}

    def check(self, response: httpx.Response) -> None:
        self._check_status(response)
        data = self._json(response)
        code = data.get("code", data.get("StatusCode", 0))
        if code != 0:
            message = data.get("msg", data.get("StatusMessage", ""))
            self._fail(f"feishu answered code {code}: {message}", response)


KIND = webhook_kind(FeishuConfig, FeishuChannel)
