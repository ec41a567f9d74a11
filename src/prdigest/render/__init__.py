"""Render: a registry of pure functions ``Digest → bytes`` (DESIGN §4).

Each renderer is registered under its format name with its media type and the module that
implements it (a ``render(digest) -> bytes`` function); the module is imported on first use, so
a plain-text run never loads Jinja2 or feedgen. The CLI takes its ``--format`` choices from here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from prdigest.core.errors import ConfigError
from prdigest.core.models import Digest


@dataclass(frozen=True)
class Renderer:
    name: str
    media_type: str
    module: str  # implements ``render(digest: Digest) -> bytes``

    def render(self, digest: Digest) -> bytes:
        function = cast(Callable[[Digest], bytes], importlib.import_module(self.module).render)
        return function(digest)


RENDERERS: dict[str, Renderer] = {}
ALIASES = {"md": "markdown"}  # short names a user may type for a format


def canonical(fmt: str) -> str:
    """The registered name of a format given by name or alias (``md`` → ``markdown``)."""
    return ALIASES.get(fmt, fmt)


def register(renderer: Renderer) -> None:
    RENDERERS[renderer.name] = renderer


def render(digest: Digest, fmt: str) -> bytes:
    renderer = RENDERERS.get(canonical(fmt))
    if renderer is None:
        known = ", ".join(sorted(RENDERERS))
        raise ConfigError(f"unknown format {fmt!r} (known: {known})", key="--format")
    return renderer.render(digest)


register(Renderer("text", "text/plain; charset=utf-8", "prdigest.render.text"))
register(Renderer("markdown", "text/markdown; charset=utf-8", "prdigest.render.markdown"))
register(Renderer("json", "application/json", "prdigest.render.jsonout"))
register(Renderer("html", "text/html; charset=utf-8", "prdigest.render.html"))
register(Renderer("atom", "application/atom+xml", "prdigest.render.atom"))
