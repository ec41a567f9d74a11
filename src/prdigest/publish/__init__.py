"""Delivery of digests: chat webhooks (:mod:`.webhooks`), e-mail (:mod:`.email`), the summary
they share (:mod:`.summary`) and the delivery log logic (:mod:`.deliver`).

:func:`make_channel` turns a channel's config and its secrets (read from the environment by the
CLI, never here) into a :class:`~prdigest.publish.deliver.Channel`.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping

import httpx

from prdigest.pipeline.config import ChannelConfig, EmailConfig, Secret
from prdigest.publish.deliver import Channel, UnconfiguredChannel
from prdigest.publish.email import EmailChannel
from prdigest.publish.webhooks import WEBHOOK_CHANNELS


def make_channel(
    name: str,
    config: ChannelConfig,
    secrets: Mapping[str, Secret],
    *,
    client: httpx.Client,
    ssl_context: ssl.SSLContext | None = None,
) -> Channel:
    """A ready channel. ``secrets`` maps ``webhook_env``/``secret_env``/``password_env`` (the
    config fields) to values; a missing required one gives an :class:`UnconfiguredChannel`."""
    missing = [
        f"{field} ({getattr(config, field)})"
        for field in ("webhook_env", "secret_env", "password_env")
        if getattr(config, field, None) and field not in secrets
    ]
    if missing:
        return UnconfiguredChannel(name, "environment variable not set: " + ", ".join(missing))
    if isinstance(config, EmailConfig):
        return EmailChannel(
            name, config, password=secrets.get("password_env"), ssl_context=ssl_context
        )
    cls = WEBHOOK_CHANNELS[config.type]
    return cls(
        name,
        secrets["webhook_env"],
        client=client,
        secret=secrets.get("secret_env"),
        top=config.top,
        timeout=config.timeout,
    )
