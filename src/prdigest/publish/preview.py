"""What a channel would be sent, without sending it (``prdigest publish --dry-run``).

A chat channel's preview is the JSON body it posts, as it posts it, except the signature
(``timestamp`` and ``sign``), which depends on the moment of sending; an e-mail channel's is
the MIME message (headers, plain-text and HTML parts) it hands to the SMTP server.
"""

from __future__ import annotations

import json

from prdigest.publish.channels.base import Channel, WebhookChannel
from prdigest.publish.channels.email import EmailChannel
from prdigest.publish.site.layout import page_url
from prdigest.publish.summary import Summary, build_summary
from prdigest.store.digests import DigestRepository, StoredDigest


def summary_of(digests: DigestRepository, stored: StoredDigest, base_url: str | None) -> Summary:
    """The summary a channel is sent for a stored digest."""
    digest = digests.load(stored.repo, stored.label, stored.lang)
    return build_summary(
        digest, page_url=page_url(base_url, stored.repo, stored.label, stored.lang)
    )


def preview(channel: Channel, summary: Summary) -> str:
    """The exact payload ``channel`` would send for ``summary``."""
    if isinstance(channel, WebhookChannel):
        return json.dumps(channel.payload(summary), ensure_ascii=False, indent=2) + "\n"
    if isinstance(channel, EmailChannel):
        return channel.message(summary).as_string()
    raise TypeError(f"no preview for {type(channel).__name__}")  # every registered kind has one
