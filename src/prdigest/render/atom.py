"""Atom: one digest as a one-entry feed (``feedgen``); the site writes one feed per repository."""

from __future__ import annotations

from ..models import Digest


def render(digest: Digest) -> bytes:
    from ..site.feed import render as atom

    return atom(digest)
