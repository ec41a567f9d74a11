"""Helpers shared by renderers: counts, area names, escaping of untrusted text."""

from __future__ import annotations

import re

from prdigest.core.locale import locale
from prdigest.core.models import Digest, Level

_WHITESPACE = re.compile(r"\s+")
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
ZERO_WIDTH_SPACE = "\u200b"


def one_line(text: str) -> str:
    """Text of an entry on one line: the text layout has no line breaks inside an entry."""
    return _WHITESPACE.sub(" ", text).strip()


def defuse_mentions(text: str) -> str:
    """``@name`` → ``@\u200bname``: shown the same, but no chat or GitHub notification fires."""
    return _MENTION.sub("@" + ZERO_WIDTH_SPACE, text)


def empty_message(digest: Digest) -> str:
    return locale(digest.lang).empty(digest.window.label, digest.window.tz)


def area_name(digest: Digest, area: str | None) -> str:
    """An area's name in the digest's language; PRs outside every area are "other"."""
    return digest.area_name(area) or locale(digest.lang).say("text", "other_area")


def counts_line(digest: Digest) -> str:
    words = locale(digest.lang)
    parts = [
        f"{words.label(level)} {digest.counts.get(level.value, 0)}"
        for level in Level
        if digest.counts.get(level.value, 0)
    ]
    sep = " · "
    return sep.join(parts)
