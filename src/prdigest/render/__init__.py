"""Render: a registry of pure functions ``Digest → bytes`` (DESIGN §4).

Each renderer is registered under its format name with its media type; the CLI looks formats
up here. ``html`` and ``atom`` load Jinja2 and feedgen only when used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..errors import ConfigError
from ..models import Digest
from . import atom, html, jsonout, markdown, text


@dataclass(frozen=True)
class Renderer:
    name: str
    media_type: str
    render: Callable[[Digest], bytes]


RENDERERS: dict[str, Renderer] = {}


def register(renderer: Renderer) -> None:
    RENDERERS[renderer.name] = renderer


def render(digest: Digest, fmt: str) -> bytes:
    renderer = RENDERERS.get(fmt)
    if renderer is None:
        known = ", ".join(sorted(RENDERERS))
        raise ConfigError(f"unknown format {fmt!r} (known: {known})", key="--format")
    return renderer.render(digest)


register(Renderer("text", "text/plain; charset=utf-8", text.render))
register(Renderer("markdown", "text/markdown; charset=utf-8", markdown.render))
register(Renderer("json", "application/json", jsonout.render))
register(Renderer("html", "text/html; charset=utf-8", html.render))
register(Renderer("atom", "application/atom+xml", atom.render))
