"""Deliver stored digests to channels, once each, through the store's delivery log.

:func:`deliver` posts a digest to a channel unless the log says that channel already has it;
the attempt is logged either way. :func:`retry_failed` tries again every delivery that failed
in an earlier run. Outcomes are returned, never printed, so the CLI can report each one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from prdigest.core.errors import DeliveryError
from prdigest.publish.site.builder import page_url
from prdigest.publish.summary import Summary, build_summary
from prdigest.store import Store
from prdigest.store.publish import StoredDigest

log = logging.getLogger("prdigest.publish")

OutcomeStatus = Literal["sent", "already_sent", "failed"]


class Channel(Protocol):
    """Anything that can take a summary: the webhooks and e-mail implement it."""

    name: str

    @property
    def kind(self) -> str:
        """The channel type (``feishu``, ``email`` …), for reports."""
        ...

    def send(self, summary: Summary) -> None:
        """Deliver, or raise :class:`~prdigest.core.errors.DeliveryError`."""
        ...


class UnconfiguredChannel:
    """A channel whose secret is missing from the environment: every send fails (and is logged
    as failed, so it is retried once the variable is set)."""

    kind = "unconfigured"

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason

    def send(self, summary: Summary) -> None:
        raise DeliveryError(self.reason, channel=self.name)


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
    store: Store,
    channel: Channel,
    stored: StoredDigest,
    *,
    base_url: str | None,
    force: bool = False,
) -> DeliveryOutcome:
    """Post one stored digest to one channel, unless it already went there."""
    previous = store.get_delivery(channel.name, stored.repo, stored.label, stored.lang)
    if previous is not None and previous.status == "sent" and not force:
        return DeliveryOutcome(
            channel.name, stored.repo, stored.label, stored.lang, "already_sent", previous.attempts
        )
    retry = previous is not None and previous.status == "failed"
    digest = store.load_digest(stored.repo, stored.label, stored.lang)
    summary = build_summary(
        digest, page_url=page_url(base_url, stored.repo, stored.label, stored.lang)
    )
    try:
        channel.send(summary)
    except DeliveryError as exc:
        record = store.record_delivery(channel.name, stored, ok=False, error=exc.message)
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
    record = store.record_delivery(channel.name, stored, ok=True)
    return DeliveryOutcome(
        channel.name, stored.repo, stored.label, stored.lang, "sent", record.attempts, retry=retry
    )


def retry_failed(
    store: Store,
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
    for record in store.list_deliveries(status="failed"):
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
        found = store.list_digests(record.repo, label=record.label, lang=record.lang)
        if not found:
            continue
        outcomes.append(deliver(store, channel, found[0], base_url=base_url))
        done.add(key)
    return outcomes
