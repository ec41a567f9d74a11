"""Delivery channels: one module per service, each with its config schema, and the registry.

Every channel module defines its config model (validated as ``[channels.NAME]`` of
``prdigest.toml``), its :class:`~prdigest.publish.channels.base.Channel` class and a ``KIND``.
Adding a channel is one new module here and one line in :data:`KINDS`.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Union, get_args

import httpx
from pydantic import Field

from prdigest.core.secrets import Secret
from prdigest.publish.channels import dingtalk, email, feishu, slack, wecom
from prdigest.publish.channels.base import (
    Channel,
    ChannelConfigBase,
    ChannelKind,
    UnconfiguredChannel,
)

# Registry: one line per channel module.
KINDS: tuple[ChannelKind, ...] = (
    feishu.KIND,
    dingtalk.KIND,
    wecom.KIND,
    slack.KIND,
    email.KIND,
)


def _type_names(kind: ChannelKind) -> tuple[str, ...]:
    return tuple(get_args(kind.config.model_fields["type"].annotation))


BY_TYPE: dict[str, ChannelKind] = {name: kind for kind in KINDS for name in _type_names(kind)}
CHANNEL_TYPES: tuple[str, ...] = tuple(BY_TYPE)

if TYPE_CHECKING:
    ChannelConfig = ChannelConfigBase
else:  # a discriminated union of every registered config model
    ChannelConfig = Annotated[
        Union[tuple(kind.config for kind in KINDS)],  # noqa: UP007
        Field(discriminator="type"),
    ]


def secret_fields(config: ChannelConfigBase) -> tuple[str, ...]:
    """The config fields of a channel that name environment variables."""
    return BY_TYPE[str(config.type)].secret_fields


def make_channel(
    name: str,
    config: ChannelConfigBase,
    secrets: Mapping[str, Secret],
    *,
    client: httpx.Client,
    ssl_context: ssl.SSLContext | None = None,
) -> Channel:
    """A ready channel. ``secrets`` maps the config fields that name variables (``webhook_env``,
    ``secret_env``, ``password_env``) to their values; a missing one that the config names gives
    an :class:`UnconfiguredChannel`."""
    fields = secret_fields(config)
    missing = [
        f"{field} ({getattr(config, field)})"
        for field in fields
        if getattr(config, field, None) and field not in secrets
    ]
    if missing:
        return UnconfiguredChannel(name, "environment variable not set: " + ", ".join(missing))
    return BY_TYPE[str(config.type)].make(name, config, secrets, client, ssl_context)


__all__ = [
    "CHANNEL_TYPES",
    "Channel",
    "ChannelConfig",
    "ChannelKind",
    "UnconfiguredChannel",
    "make_channel",
    "secret_fields",
]
