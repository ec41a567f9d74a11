"""The summary a chat message or e-mail is made from: counts, top entries, links.

Titles and area names are PR-derived and untrusted; they are kept as plain text here and each
channel escapes them for its own dialect (:mod:`.text`). Links are built by the project:
pull requests on github.com and, when the site's base URL is configured, the digest page and
each entry's anchor on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prdigest.core.locale import locale
from prdigest.core.models import Digest, Level
from prdigest.render.common import area_name, one_line
from prdigest.render.html import pr_url

# Bounds on what one entry may take in a message, so that every channel's payload stays within
# its service's limits at the largest `top` the config accepts (docs/publish.md).
MAX_TITLE = 200
MAX_REASON = 200
MAX_AREA = 60
_SENTENCE_END = re.compile(r"[。！？]|[.!?](?=\s|$)")
_CLAUSE_END = re.compile(r"[，；,;]\s*")


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, at a clause boundary when one is near, with "…"."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    cuts = [m.start() for m in _CLAUSE_END.finditer(head) if m.start() > limit // 2]
    return (head[: cuts[-1]] if cuts else head).rstrip() + "…"


def reason_line(paragraph: str | None) -> str:
    """The entry's first sentence — its verdict and who should read it — as one line."""
    text = one_line(paragraph or "")
    end = _SENTENCE_END.search(text)
    first = text[: end.end()] if end else text
    return clip(first, MAX_REASON)


@dataclass(frozen=True)
class SummaryEntry:
    number: int
    title: str  # untrusted, one line
    reason: str  # the first sentence of the entry: its verdict and readers (names untrusted)
    level: Level
    level_label: str
    area: str  # untrusted (comes from paths), one line
    pr_url: str
    link: str  # the entry on the digest page when the site URL is known, else the PR


@dataclass(frozen=True)
class Summary:
    digest: Digest
    heading: str  # "owner/name · 2026-06-10 PR 阅读摘要" (repo names are validated)
    counts: str
    entries: tuple[SummaryEntry, ...]  # every selected entry, rank order
    page_url: str | None
    read_more: str
    notice: str | None = None  # replaces the empty-window line ("": no line), e.g. a test
    message_key: str | None = None  # the same for every attempt at one delivery (Message-ID)

    @property
    def repo(self) -> str:
        return self.digest.repo

    def top(self, n: int) -> tuple[SummaryEntry, ...]:
        return self.entries[:n]

    def more_line(self, shown: int) -> str | None:
        """ "其余 N 个 PR 见全文" for the PRs a message leaves out, or ``None``."""
        more = self.digest.total - shown
        if more <= 0:
            return None
        key = "more" if self.page_url else "more_no_page"
        return locale(self.digest.lang).say("summary", key, more=more)

    @property
    def empty(self) -> str | None:
        if self.notice is not None:
            return self.notice or None
        if self.digest.total:
            return None
        window = self.digest.window
        return locale(self.digest.lang).empty(window.label, window.tz)


def counts_text(digest: Digest) -> str:
    words = locale(digest.lang)
    parts = [words.say("text", "merged", total=digest.total)]
    parts += [
        f"{words.label(level)} {digest.counts[level.value]}"
        for level in Level
        if digest.counts.get(level.value)
    ]
    return " · ".join(parts)


def hello_summary(digest: Digest, channel: str, repos: list[str], page_url: str | None) -> Summary:
    """A short hello for ``publish --test``: which channel, which repositories will come."""
    words = locale(digest.lang)
    return Summary(
        digest=digest,
        heading=words.say("summary", "test_heading"),
        counts=words.say("summary", "test_body", channel=channel, repos=", ".join(repos)),
        entries=(),
        page_url=page_url,
        read_more=words.say("summary", "read_more"),
        notice="",
    )


def build_summary(digest: Digest, *, page_url: str | None) -> Summary:
    words = locale(digest.lang)
    entries = tuple(
        SummaryEntry(
            number=item.pr.number,
            title=clip(one_line(item.entry.title), MAX_TITLE),
            reason=reason_line(item.entry.paragraph),
            level=item.assessment.level,
            level_label=words.label(item.assessment.level),
            area=clip(one_line(area_name(digest, item.pr.area)), MAX_AREA),
            pr_url=pr_url(item.pr.repo, item.pr.number),
            link=(
                f"{page_url}#pr-{item.pr.number}"
                if page_url
                else pr_url(item.pr.repo, item.pr.number)
            ),
        )
        for item in digest.selected
    )
    return Summary(
        digest=digest,
        heading=f"{digest.repo} · {digest.window.label} {words.say('text', 'digest')}",
        counts=counts_text(digest),
        entries=entries,
        page_url=page_url,
        read_more=words.say("summary", "read_more"),
    )
