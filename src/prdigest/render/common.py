"""Helpers shared by renderers: counts, area names, escaping of untrusted text."""

from __future__ import annotations

import re

from prdigest.core.locale import locale
from prdigest.core.models import Digest, Level

_WHITESPACE = re.compile(r"\s+")
# Characters that change how text around them displays without showing themselves: the bidi
# embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069, and the marks U+200E,
# U+200F, U+061C) and the zero-width ones (U+200B–U+200D, U+2060, U+FEFF). In PR text they
# can make ``‮txt.exe`` read as ``exe.txt``; every output shows them as ``<U+202E>`` instead.
INVISIBLE = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
ZERO_WIDTH_SPACE = "\u200b"


def visible(text: str) -> str:
    """Untrusted text with every invisible control shown as ``<U+XXXX>`` (see INVISIBLE)."""
    return INVISIBLE.sub(lambda m: f"<U+{ord(m.group(0)):04X}>", text)


def one_line(text: str) -> str:
    """Text of an entry on one line (the text layout has no line breaks inside an entry), its
    invisible controls made visible."""
    return visible(_WHITESPACE.sub(" ", text).strip())


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
