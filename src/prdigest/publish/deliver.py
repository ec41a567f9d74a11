"""Deliver stored digests to channels, once each, through the store's delivery log.

:func:`deliver` posts a digest to a channel unless the log says that channel already has it.
The log is an outbox: the row says ``sending`` (committed) before the post and ``sent`` or
``failed`` after the answer, so the only moment a kill leaves a delivery in doubt is between
the two. What the next run does with such a delivery is the channel's delivery rule: under
``at-least-once`` (e-mail by default: each attempt carries the same ``Message-ID``, and mail
clients fold messages with equal IDs) it is sent again; under ``at-most-once`` (chat by default:
Feishu, DingTalk, WeCom and Slack webhooks take no idempotency key, so a resend would show twice)
it is reported as ``unknown`` and left. :func:`retry_failed` tries again every delivery that failed
in an earlier run. Outcomes are returned, never printed, so the CLI can report each one.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Literal

from prdigest.core.errors import DeliveryError
from prdigest.publish.channels.base import Channel
from prdigest.publish.preview import summary_of
from prdigest.store.deliveries import DeliveryRepository
from prdigest.store.digests import DigestRepository, StoredDigest

log = logging.getLogger("prdigest.publish")

# skipped_empty: nothing posted, the window had no merged PRs (``skip_empty``)
OutcomeStatus = Literal["sent", "already_sent", "failed", "skipped_empty", "unknown"]
DeliveryMode = Literal["at-most-once", "at-least-once"]
IN_DOUBT = (
    "a run stopped while sending it, so it may or may not have arrived; not sent again "
    "(at-most-once; `prdigest publish --force` sends it)"
)


@dataclass(frozen=True)
class DeliveryOutcome:
    channel: str
    repo: str
    label: str
    lang: str
    status: OutcomeStatus
    attempts: int
    error: str | None = None
    retry: bool = False  # this digest had failed on this channel before

    @property
    def ok(self) -> bool:
        return self.status != "failed"


def deliver(
    digests: DigestRepository,
    deliveries: DeliveryRepository,
    channel: Channel,
    stored: StoredDigest,
    *,
    base_url: str | None,
    force: bool = False,
    mode: DeliveryMode = "at-most-once",
) -> DeliveryOutcome:
    """Post one stored digest to one channel, unless it already went there (module doc)."""
    key = (channel.name, stored.repo, stored.label, stored.lang)
    previous = deliveries.get(*key)
    if previous is not None and previous.status == "sent" and not force:
        return DeliveryOutcome(*key, "already_sent", previous.attempts)
    in_doubt = previous is not None and previous.status in ("sending", "unknown")
    if in_doubt and mode == "at-most-once" and not force:
        assert previous is not None
        if previous.status == "sending":
            deliveries.mark_unknown(channel.name, stored)
        return DeliveryOutcome(*key, "unknown", previous.attempts, error=IN_DOUBT)
    retry = previous is not None and previous.status != "sent"
    summary = summary_of(digests, stored, base_url)
    summary = replace(summary, message_key=message_key(channel.name, stored))
    deliveries.begin(channel.name, stored)  # the outbox row, committed before the post
    try:
        channel.send(summary)
    except DeliveryError as exc:
        record = deliveries.finish(channel.name, stored, ok=False, error=exc.message)
        log.warning("%s (attempt %d)", exc.message, record.attempts)
        return DeliveryOutcome(*key, "failed", record.attempts, error=exc.message, retry=retry)
    record = deliveries.finish(channel.name, stored, ok=True)
    return DeliveryOutcome(*key, "sent", record.attempts, retry=retry)


def message_key(channel: str, stored: StoredDigest) -> str:
    """The same for every attempt at one digest version on one channel (the e-mail's
    Message-ID), so a resend after a kill is a duplicate that clients fold."""
    parts = [channel, stored.repo, stored.label, stored.lang, stored.content_hash]
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:32]


def retry_failed(
    digests: DigestRepository,
    deliveries: DeliveryRepository,
    channels: Mapping[str, Channel],
    *,
    base_url: str | None,
    repos: Iterable[str] | None = None,
    skip: Iterable[tuple[str, str, str, str]] = (),
    modes: Mapping[str, DeliveryMode] | None = None,
) -> list[DeliveryOutcome]:
    """Try again every failed delivery (of ``repos``) to a channel still configured.

    ``skip`` holds (channel, repo, label, lang) keys already handled in this run.
    """
    wanted = set(repos) if repos is not None else None
    done = set(skip)
    outcomes = []
    pending = deliveries.query(status="failed") + deliveries.query(status="sending")
    for record in pending:
        key = (record.channel, record.repo, record.label, record.lang)
        if key in done or (wanted is not None and record.repo not in wanted):
            continue
        channel = channels.get(record.channel)
        if channel is None:
            log.warning(
                "failed delivery of %s %s to %r not retried: channel no longer configured",
                record.repo,
                record.label,
                record.channel,
            )
            continue
        found = digests.query(record.repo, label=record.label, lang=record.lang)
        if not found:
            continue
        mode = (modes or {}).get(record.channel, "at-most-once")
        outcomes.append(
            deliver(digests, deliveries, channel, found[0], base_url=base_url, mode=mode)
        )
        done.add(key)
    return outcomes
