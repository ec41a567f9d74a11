"""Chat webhooks: Feishu/Lark, DingTalk, WeCom and Slack, each in its own message format.

Every message is the same summary card: the digest's heading, the counts by verdict, the top
entries (title linked to its place on the digest page, or to the PR), a line for the rest, and a
link to the full page when the site's public URL is configured.

Signatures follow the services' documented algorithms:

* Feishu/Lark: ``timestamp`` (seconds) and ``sign`` in the JSON body, where ``sign`` is
  ``base64(HMAC-SHA256(key=f"{timestamp}\\n{secret}", message=b""))``.
* DingTalk: ``timestamp`` (milliseconds) and ``sign`` as query parameters, where ``sign`` is
  ``base64(HMAC-SHA256(key=secret, message=f"{timestamp}\\n{secret}"))`` (URL-encoded once, by
  the HTTP client).

The webhook URL and the secret arrive as :class:`~prdigest.pipeline.config.Secret` and never appear in a
repr, a log line or an error message. The HTTP client is injected (tests pass one that talks to a
local receiver); every request has a timeout. A request that certainly did not reach the service
(connection refused, or 429/503 with a short ``Retry-After``) is retried a bounded number of
times; anything else fails at once and is retried by the next run, so a message is not posted
twice because a slow answer was mistaken for a failure.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import time
from collections.abc import Callable
from typing import Any, ClassVar, NoReturn

import httpx

from prdigest.core.errors import DeliveryError
from prdigest.pipeline.config import Secret, protect_loggers, redact
from prdigest.publish.summary import Summary
from prdigest.publish.text import chat_markdown, slack_mrkdwn

log = logging.getLogger("prdigest.publish")
protect_loggers("httpx", "httpcore", "prdigest")

MAX_ATTEMPTS = 3
MAX_RETRY_AFTER = 60.0
WECOM_LIMIT = 4096  # bytes of markdown content
DINGTALK_LIMIT = 18000
SLACK_SECTION_LIMIT = 2900


def feishu_sign(timestamp: int, secret: str) -> str:
    key = f"{timestamp}\n{secret}".encode()
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()


def dingtalk_sign(timestamp_ms: int, secret: str) -> str:
    message = f"{timestamp_ms}\n{secret}".encode()
    return base64.b64encode(hmac.new(secret.encode(), message, hashlib.sha256).digest()).decode()


class WebhookChannel:
    """Base of the chat channels: build a payload, sign it, post it, check the answer."""

    kind: ClassVar[str] = "webhook"

    def __init__(
        self,
        name: str,
        url: Secret,
        *,
        client: httpx.Client,
        secret: Secret | None = None,
        top: int = 5,
        timeout: float = 10.0,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.name = name
        self._url = url
        self._secret = secret
        self._client = client
        self.top = top
        self.timeout = timeout
        self._clock = clock
        self._sleep = sleep

    def __repr__(self) -> str:
        signed = ", signed" if self._secret else ""
        return f"{type(self).__name__}(name={self.name!r}, url=[secure]{signed})"

    # -- what subclasses define --------------------------------------------------------------

    def payload(self, summary: Summary) -> dict[str, Any]:
        raise NotImplementedError

    def sign(self, payload: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        """The body and query parameters to send (unsigned by default)."""
        return payload, {}

    def check(self, response: httpx.Response) -> None:
        """Raise :class:`DeliveryError` unless the service says it took the message."""
        self._check_status(response)
        data = self._json(response)
        code = data.get("errcode", 0)
        if code != 0:
            self._fail(f"{self.kind} answered errcode {code}: {data.get('errmsg', '')}")

    # -- shared machinery -----------------------------------------------------------------

    def send(self, summary: Summary) -> None:
        body, params = self.sign(self.payload(summary))
        response = self._post(body, params)
        self.check(response)

    def _post(self, body: dict[str, Any], params: dict[str, str]) -> httpx.Response:
        content = json.dumps(body, ensure_ascii=False).encode("utf-8")
        url = httpx.URL(self._url.reveal())
        if params:  # added to the webhook's own query (DingTalk's access_token stays)
            url = url.copy_merge_params(params)
        headers = {"Content-Type": "application/json; charset=utf-8"}
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                response = self._client.post(
                    url,
                    content=content,
                    headers=headers,
                    timeout=self.timeout,
                )
            except httpx.ConnectError as exc:
                if attempt < MAX_ATTEMPTS:
                    self._wait(attempt, None, "cannot connect")
                    continue
                self._fail(f"cannot connect ({type(exc).__name__})")
            except httpx.TimeoutException:
                self._fail(f"no answer within {self.timeout:g}s (not retried: it may have arrived)")
            except httpx.HTTPError as exc:
                self._fail(f"request failed ({type(exc).__name__})")
            if response.status_code in (429, 503) and attempt < MAX_ATTEMPTS:
                wait = _retry_after(response)
                if wait is not None and wait <= MAX_RETRY_AFTER:
                    self._wait(attempt, wait, f"HTTP {response.status_code}")
                    continue
            return response
        raise AssertionError("unreachable")  # pragma: no cover

    def _wait(self, attempt: int, seconds: float | None, why: str) -> None:
        delay = seconds if seconds is not None else float(2 ** (attempt - 1))
        log.warning("channel %r: %s; retry %d in %.0fs", self.name, why, attempt, delay)
        self._sleep(delay)

    def _check_status(self, response: httpx.Response) -> None:
        if response.status_code >= 300:
            self._fail(f"HTTP {response.status_code}: {self._excerpt(response.text)}", response)

    def _json(self, response: httpx.Response) -> dict[str, Any]:
        try:
            data = response.json()
        except ValueError:
            self._fail(f"answer is not JSON: {self._excerpt(response.text)}", response)
        if not isinstance(data, dict):
            self._fail("answer is not a JSON object", response)
        return data

    def _excerpt(self, text: str) -> str:
        return redact(" ".join(text.split()))[:200] or "(empty)"

    def _fail(self, message: str, response: httpx.Response | None = None) -> NoReturn:
        status = response.status_code if response is not None else None
        raise DeliveryError(self._excerpt(message), channel=self.name, status=status)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return 1.0
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _markdown_lines(summary: Summary, top: int) -> list[str]:
    """Summary lines in the markdown the Chinese chat services share."""
    lines = [chat_markdown(summary.counts), ""]
    if summary.empty:
        lines += [chat_markdown(summary.empty), ""]
    for index, entry in enumerate(summary.top(top), start=1):
        lines.append(
            f"{index}. [{chat_markdown(entry.title)}]({entry.link})  \n"
            f"[#{entry.number}]({entry.pr_url}) · {entry.level_label} · {chat_markdown(entry.area)}"
        )
        lines.append("")
    more = summary.more_line(len(summary.top(top)))
    if more:
        lines += [more, ""]
    if summary.page_url:
        lines.append(f"[{summary.read_more}]({summary.page_url})")
    return lines


class FeishuChannel(WebhookChannel):
    """Feishu / Lark custom bot: an interactive card."""

    kind = "feishu"

    def payload(self, summary: Summary) -> dict[str, Any]:
        elements: list[dict[str, Any]] = [
            {"tag": "div", "text": {"tag": "lark_md", "content": chat_markdown(summary.counts)}}
        ]
        if summary.empty:
            elements.append({"tag": "div", "text": {"tag": "plain_text", "content": summary.empty}})
        shown = summary.top(self.top)
        if shown:
            elements.append({"tag": "hr"})
        for index, entry in enumerate(shown, start=1):
            content = (
                f"**{index}. [{chat_markdown(entry.title)}]({entry.link})**\n"
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


def _fitted_markdown(summary: Summary, heading: str, top: int, limit: int) -> str:
    """Heading and entry lines, with fewer top entries until the UTF-8 text fits ``limit``."""
    while True:
        text = "\n".join([heading, "", *_markdown_lines(summary, top)])
        if len(text.encode("utf-8")) <= limit or top == 0:
            return text
        top -= 1


class DingTalkChannel(WebhookChannel):
    """DingTalk custom robot: a markdown message; nobody is @-mentioned."""

    kind = "dingtalk"

    def payload(self, summary: Summary) -> dict[str, Any]:
        heading = f"#### {chat_markdown(summary.heading)}"
        text = _fitted_markdown(summary, heading, self.top, DINGTALK_LIMIT)
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


class WeComChannel(WebhookChannel):
    """WeCom (企业微信) group robot: a markdown message within its 4096-byte limit."""

    kind = "wecom"

    def payload(self, summary: Summary) -> dict[str, Any]:
        heading = f"**{chat_markdown(summary.heading)}**"
        content = _fitted_markdown(summary, heading, self.top, WECOM_LIMIT)
        return {"msgtype": "markdown", "markdown": {"content": content}}


class SlackChannel(WebhookChannel):
    """Slack incoming webhook: Block Kit blocks with a plain-text fallback."""

    kind = "slack"

    def payload(self, summary: Summary) -> dict[str, Any]:
        shown = summary.top(self.top)
        blocks: list[dict[str, Any]] = [
            {"type": "header", "text": {"type": "plain_text", "text": summary.heading[:150]}},
            {"type": "section", "text": {"type": "mrkdwn", "text": slack_mrkdwn(summary.counts)}},
        ]
        if summary.empty:
            blocks.append(
                {"type": "section", "text": {"type": "mrkdwn", "text": slack_mrkdwn(summary.empty)}}
            )
        for index, entry in enumerate(shown, start=1):
            text = (
                f"*{index}. <{entry.link}|{slack_mrkdwn(entry.title)}>*\n"
                f"<{entry.pr_url}|#{entry.number}> · {entry.level_label} · "
                f"{slack_mrkdwn(entry.area)}"
            )
            blocks.append(
                {"type": "section", "text": {"type": "mrkdwn", "text": text[:SLACK_SECTION_LIMIT]}}
            )
        more = summary.more_line(len(shown))
        if more:
            blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": more}]})
        if summary.page_url:
            button = {
                "type": "button",
                "text": {"type": "plain_text", "text": summary.read_more},
                "url": summary.page_url,
            }
            blocks.append({"type": "actions", "elements": [button]})
        return {
            "text": slack_mrkdwn(f"{summary.heading}: {summary.counts}"),
            "blocks": blocks,
            "unfurl_links": False,
            "unfurl_media": False,
        }

    def check(self, response: httpx.Response) -> None:
        self._check_status(response)
        if response.text.strip() != "ok":
            self._fail(f"slack answered {self._excerpt(response.text)!r}", response)


WEBHOOK_CHANNELS: dict[str, type[WebhookChannel]] = {
    "feishu": FeishuChannel,
    "lark": FeishuChannel,
    "dingtalk": DingTalkChannel,
    "wecom": WeComChannel,
    "slack": SlackChannel,
}
