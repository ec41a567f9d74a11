"""Deliver stored digests to channels, once each, through the store's delivery log.

:func:`deliver` posts a digest to a channel unless the log says that channel already has it;
the attempt is logged either way. :func:`retry_failed` tries again every delivery that failed
in an earlier run. Outcomes are returned, never printed, so the CLI can report each one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from prdigest.core.errors import DeliveryError
from prdigest.publish.channels.base import Channel
from prdigest.publish.preview import summary_of
from prdigest.store.deliveries import DeliveryRepository
from prdigest.store.digests import DigestRepository, StoredDigest

log = logging.getLogger("prdigest.publish")

# skipped_empty: nothing posted, the window had no merged PRs (``skip_empty``)
OutcomeStatus = Literal["sent", "already_sent", "failed", "skipped_empty"]


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
) -> DeliveryOutcome:
    """Post one stored digest to one channel, unless it already went there."""
    previous = deliveries.get(channel.name, stored.repo, stored.label, stored.lang)
    if previous is not None and previous.status == "sent" and not force:
        return DeliveryOutcome(
            channel.name, stored.repo, stored.label, stored.lang, "already_sent", previous.attempts
        )
    retry = previous is not None and previous.status == "failed"
    summary = summary_of(digests, stored, base_url)
    try:
        channel.send(summary)
    except DeliveryError as exc:
        record = deliveries.record(channel.name, stored, ok=False, error=exc.message)
        log.warning("%s (attempt %d)", exc.message, record.attempts)
        return DeliveryOutcome(
            channel.name,
            stored.repo,
            stored.label,
            stored.lang,
            "failed",
            record.attempts,
            error=exc.message,
            retry=retry,
        )
    record = deliveries.record(channel.name, stored, ok=True)
    return DeliveryOutcome(
        channel.name, stored.repo, stored.label, stored.lang, "sent", record.attempts, retry=retry
    )


def retry_failed(
    digests: DigestRepository,
    deliveries: DeliveryRepository,
    channels: Mapping[str, Channel],
    *,
    base_url: str | None,
    repos: Iterable[str] | None = None,
    skip: Iterable[tuple[str, str, str, str]] = (),
) -> list[DeliveryOutcome]:
    """Try again every failed delivery (of ``repos``) to a channel still configured.

    ``skip`` holds (channel, repo, label, lang) keys already handled in this run.
    """
    wanted = set(repos) if repos is not None else None
    done = set(skip)
    outcomes = []
    for record in deliveries.query(status="failed"):
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
        outcomes.append(deliver(digests, deliveries, channel, found[0], base_url=base_url))
        done.add(key)
    return outcomes
