"""Slack incoming webhook: Block Kit blocks with a plain-text fallback."""

from __future__ import annotations

from typing import Any, Literal

import httpx

from prdigest.publish.channels.base import WebhookChannel, WebhookConfig, webhook_kind
from prdigest.publish.channels.text import slack_mrkdwn
from prdigest.publish.summary import Summary

SLACK_SECTION_LIMIT = 2900


class SlackConfig(WebhookConfig):
    """Slack incoming webhook (Block Kit)."""

    type: Literal["slack"]


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


KIND = webhook_kind(SlackConfig, SlackChannel)
