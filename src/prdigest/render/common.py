"""Helpers shared by renderers: labels, counts, escaping of untrusted text."""

from __future__ import annotations

import re

from prdigest.core.models import Digest, Level

LEVEL_LABEL = {
    "zh": {
        Level.MUST_READ: "值得精读",
        Level.WORTH_READING: "值得选读",
        Level.SKIM: "快速浏览",
        Level.SKIP: "无需精读",
        Level.LIST_ONLY: "仅列出",
    },
    "en": {
        Level.MUST_READ: "must read",
        Level.WORTH_READING: "worth reading",
        Level.SKIM: "skim",
        Level.SKIP: "skip",
        Level.LIST_ONLY: "listed",
    },
}

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
    if digest.lang == "zh":
        return f"{digest.window.label}（{digest.window.tz}）窗口内没有合并的 PR。"
    return f"No merged PRs in {digest.window.label} ({digest.window.tz})."


def counts_line(digest: Digest) -> str:
    labels = LEVEL_LABEL[digest.lang]
    parts = [
        f"{labels[level]} {digest.counts.get(level.value, 0)}"
        for level in Level
        if digest.counts.get(level.value, 0)
    ]
    sep = " · "
    return sep.join(parts)
