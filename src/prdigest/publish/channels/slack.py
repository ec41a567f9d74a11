"""Slack incoming webhook: Block Kit blocks with a plain-text fallback."""

from __future__ import annotations

from typing import Any, Literal

import httpx

from prdigest.publish.channels.base import WebhookChannel, WebhookConfig, webhook_kind
from prdigest.publish.channels.text import slack_mrkdwn
from prdigest.publish.summary import Summary, SummaryEntry

# Slack's documented Block Kit limits: 50 blocks a message, 3000 characters of text a section,
# 150 characters a header; text is measured in UTF-16 code units here, the stricter count.
MAX_BLOCKS = 50
SECTION_LIMIT = 3000
HEADER_LIMIT = 150


def slack_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class SlackConfig(WebhookConfig):
    """Slack incoming webhook (Block Kit)."""

    type: Literal["slack"]


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def entry_text(index: int, entry: SummaryEntry) -> str:
    return (
        f"*{index}. <{entry.link}|{slack_mrkdwn(entry.title)}>*\n"
        f"{slack_mrkdwn(entry.reason)}\n"
        f"<{entry.pr_url}|#{entry.number}> · {entry.level_label} · {slack_mrkdwn(entry.area)}"
    )


def packed(texts: list[str]) -> list[str]:
    """Entry texts joined into as few sections as the per-section limit allows."""
    sections: list[str] = []
    for text in texts:
        if sections and slack_length(sections[-1] + "\n\n" + text) <= SECTION_LIMIT:
            sections[-1] += "\n\n" + text
        else:
            sections.append(text)
    return sections


class SlackChannel(WebhookChannel):
    """Slack incoming webhook: Block Kit blocks with a plain-text fallback."""

    kind = "slack"

    def payload(self, summary: Summary) -> dict[str, Any]:
        top = self.top
        while True:
            blocks = self._blocks(summary, top)
            if len(blocks) <= MAX_BLOCKS or top == 0:
                break
            top -= 1  # unreachable with entries bounded in size; kept as the guarantee
        return {
            "text": slack_mrkdwn(f"{summary.heading}: {summary.counts}"),
            "blocks": blocks,
            "unfurl_links": False,
            "unfurl_media": False,
        }

    def _blocks(self, summary: Summary, top: int) -> list[dict[str, Any]]:
        shown = summary.top(top)
        heading = summary.heading
        if slack_length(heading) > HEADER_LIMIT:
            heading = heading[: HEADER_LIMIT - 1] + "…"
        blocks: list[dict[str, Any]] = [
            {"type": "header", "text": {"type": "plain_text", "text": heading}},
            _section(slack_mrkdwn(summary.counts)),
        ]
        if summary.empty:
            blocks.append(_section(slack_mrkdwn(summary.empty)))
        texts = [entry_text(index, entry) for index, entry in enumerate(shown, start=1)]
        blocks += [_section(text) for text in packed(texts)]
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
        return blocks

    def check(self, response: httpx.Response) -> None:
        self._check_status(response)
        if response.text.strip() != "ok":
            self._fail(f"slack answered {self._excerpt(response.text)!r}", response)


KIND = webhook_kind(SlackConfig, SlackChannel)
